//! What a CLI's own login store holds, read with `login::` for the probe planner (which,
//! on the calls floor beside `login`, cannot read it itself): a subscription login with
//! its plan and expiry, a key the CLI keeps there, or nothing. Never a login's token.

use std::path::Path;

use crate::adapter::{Env, Family};
use crate::backend::{AuthScheme, Credential};
use crate::bounded_read;
use crate::login::{self, Login};
use crate::probe::login::{LoginRung, Store};

/// The store of `own`'s CLI, as the CLI itself would find it in its launch environment
/// `child` (a backend's `env` may move its home): the login is keyed by the CLI's adapter
/// from the same environment, as parking and the statusline key it.
pub fn read(own: Family, child: &Env) -> Store {
    read_login(own, child).unwrap_or(Store::Empty)
}

/// The subscription login a CLI of `family` finds in `env` (a `login` account's directory
/// in its home variable): presence, plan and expiry, keyed by its adapter — never a token.
/// `None` when there is none there, or agent knows no login store of that CLI.
pub fn login_in(family: Family, env: &Env) -> Option<LoginRung> {
    if matches!(family, Family::Agy | Family::Opencode | Family::Other) {
        return None;
    }
    match read_login(family, env)? {
        Store::Login(login) => Some(login),
        Store::Key(_) | Store::Empty => None,
    }
}

fn read_login(own: Family, env: &Env) -> Option<Store> {
    match own {
        Family::Claude => {
            let dir = Family::Claude.home(env)?;
            // agent's own store is read as Claude Code reads it (the Keychain first on
            // macOS); a directory moved by the backend's `env` or a `login` account as
            // Claude Code reads it there (its own Keychain item on macOS, else its file).
            let login = if Some(&dir) == Family::Claude.home(&Env::process()).as_ref() {
                login::claude::read_login()?
            } else {
                login::claude::read_login_in(&dir)?
            };
            found(Family::Claude, env, login)
        }
        Family::Codex => {
            let home = Family::Codex.home(env)?;
            let auth = if Some(&home) == Family::Codex.home(&Env::process()).as_ref() {
                login::codex::read_login()?
            } else {
                login::codex::read_auth_file(&home.join("auth.json"))?
            };
            match auth {
                login::codex::Auth::ChatGpt(login) => found(Family::Codex, env, login),
                login::codex::Auth::ApiKey => codex_key(&home).map(Store::Key),
                login::codex::Auth::Other(_) => None,
            }
        }
        Family::Gemini => {
            let dir = Family::Gemini.home(env)?;
            // Another auth type (an API key, Vertex AI) is not the Google login.
            let selected = login::gemini::read_auth_type(&dir);
            if selected
                .as_deref()
                .is_some_and(|t| t != login::gemini::LOGIN_WITH_GOOGLE)
            {
                return None;
            }
            found(Family::Gemini, env, login::gemini::read_login(&dir)?)
        }
        // Where agy keeps its login is not confirmed (research §4.1): an installed agy is
        // taken as logged in; its windows come from its own `/usage`.
        Family::Agy => Some(Store::Login(LoginRung {
            cli: Family::Agy.name(),
            key: Family::Agy.login_key(env, None)?,
            origin: "store".to_string(),
            plan: None,
            expires_at: None,
        })),
        // agent knows no login store of theirs.
        Family::Opencode | Family::Other => None,
    }
}

/// A login with a token, keyed by its adapter.
fn found(family: Family, env: &Env, login: Login) -> Option<Store> {
    if !login.token_present {
        return None;
    }
    Some(Store::Login(LoginRung {
        cli: family.name(),
        key: family.login_key(env, None)?,
        origin: "store".to_string(),
        plan: login.plan,
        expires_at: login.expires_at,
    }))
}

/// The key `codex login --api-key` keeps in `auth.json`: a key, not a login.
fn codex_key(home: &Path) -> Option<Credential> {
    let store = bounded_read::json(&home.join("auth.json"), bounded_read::LOGIN)?;
    let value = store.get("OPENAI_API_KEY")?.as_str()?.trim().to_string();
    crate::redact::register(&value);
    (!value.is_empty()).then(|| Credential {
        value,
        source: "codex-auth:apikey".into(),
        auth: AuthScheme::Bearer,
    })
}
