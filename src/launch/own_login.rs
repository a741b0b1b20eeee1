//! What a CLI's own login store holds, read with `login::` for the probe planner (which,
//! on the calls floor beside `login`, cannot read it itself): a subscription login with
//! its plan and expiry, a key the CLI keeps there, or nothing. Never a login's token.

use crate::adapter::{Env, Family};
use crate::login::OwnStore;
use crate::login::readers;
use crate::probe::login::{LoginRung, Store};

/// The store of `family`'s CLI, as the CLI itself would find it in its launch environment
/// `child` (a backend's `env` may move its home): the login is keyed by the CLI's adapter
/// from the same environment, as parking and the statusline key it.
pub fn read(family: Family, child: &Env) -> Store {
    read_store(family, child)
}

/// The subscription login a CLI of `family` finds in `env` (a `login` account's directory
/// in its home variable): presence, plan and expiry, keyed by its adapter — never a token.
/// `None` when there is none there, agent knows no login store of that CLI, or agent
/// cannot move its home to an account's directory.
pub fn login_in(family: Family, env: &Env) -> Option<LoginRung> {
    if family.home_vars().is_empty() {
        return None;
    }
    match read_store(family, env) {
        Store::Login(login) => Some(*login),
        Store::Key(_) | Store::Empty => None,
    }
}

fn read_store(family: Family, env: &Env) -> Store {
    match readers::own_store(family, env) {
        Some(OwnStore::Login(login)) if login.token_present => {
            let Some(key) = family.login_key(env, None) else {
                return Store::Empty;
            };
            Store::Login(Box::new(LoginRung {
                family,
                key,
                origin: "store".to_string(),
                plan: login.plan,
                expires_at: login.expires_at,
                records: None,
                refused: readers::refused_login(family, env),
            }))
        }
        Some(OwnStore::Key(credential)) => Store::Key(credential),
        Some(OwnStore::Login(_)) | None => Store::Empty,
    }
}
