//! Credential pools (DESIGN.md §7, seed 004): several accounts per backend, treated as a
//! managed fleet. Subscription tokens and API keys, each with its own health, taken in the
//! backend's rotation order; within a rung the next healthy account for the same model is
//! tried before the cascade descends. The rung table is expanded to one row per account
//! ([`expand`]), so every part of agent that walks the table walks the accounts too.

pub mod check;
pub mod login_home;
pub mod rotation;
mod rows;
pub mod store;

pub use crate::config::accounts::{AccountDef, Invalid, Kind, Rotation, name_problem};
pub use login_home::LoginHome;
pub use rows::expand;

use crate::adapter::Env;
use crate::config::{Backend, Config};

/// The variable the launched CLI reads this account's secret from in `child`, its
/// environment (the backend's `env` over agent's: Codex's provider names it in the
/// `config.toml` the CLI finds there): as the account says, else its CLI's adapter's answer.
pub fn secret_var(account: &AccountDef, backend: &Backend, child: &Env) -> String {
    if let Some(var) = &account.secret_var {
        return var.clone();
    }
    match account.kind {
        // A login carries no secret: nothing is passed in a variable. Named for
        // completeness (its CLI's home variable is what moves).
        Kind::Login => backend
            .family
            .home_vars()
            .first()
            .map_or_else(String::new, |var| (*var).to_string()),
        Kind::Oauth => backend.family.secret_var(child, true),
        Kind::ApiKey => backend.family.secret_var(child, false),
    }
}

/// Environment variables that carry a credential for this CLI family: removed from the
/// launched CLI's environment so it uses the chosen account and no other — each account's
/// variable as the CLI's environment the backend gives it names it.
pub fn credential_vars(backend: &Backend, accounts: &[AccountDef]) -> Vec<String> {
    let mut vars: Vec<String> = backend
        .family
        .credential_vars()
        .iter()
        .map(|var| (*var).to_string())
        .collect();
    let keyed: Vec<&AccountDef> = accounts
        .iter()
        .filter(|a| a.backend == backend.name && !a.is_login())
        .collect();
    if keyed.is_empty() {
        return vars;
    }
    // A backend whose `env` cannot be expanded is refused by the launch before this
    // matters; its variables are then read as agent's own.
    let set = crate::backend::endpoint::backend_env(backend).unwrap_or_default();
    let child = Env::child(&set, &backend.env_remove);
    for account in keyed {
        for var in [
            account.secret_env.clone(),
            Some(secret_var(account, backend, &child)),
        ]
        .into_iter()
        .flatten()
        {
            if !vars.contains(&var) {
                vars.push(var);
            }
        }
    }
    vars
}

/// The rotation a backend's pool follows: as configured, else `soonest-reset` for a pool
/// with logins in it and `priority` for keys and tokens.
pub fn rotation_of(backend: &Backend, pool: &[&AccountDef]) -> Rotation {
    backend
        .rotation
        .unwrap_or(if pool.iter().any(|a| a.is_login()) {
            Rotation::SoonestReset
        } else {
            Rotation::Priority
        })
}

/// Where a `login` account runs its CLI ([`login_home::LoginHome`]): its home variable
/// set to its directory (`CLAUDE_CONFIG_DIR`, `CODEX_HOME`, `GEMINI_CLI_HOME`, from the
/// adapter), or none set for the CLI's default home. `None` for another kind, or a CLI
/// whose home agent cannot move.
pub fn login_home(backend: &Backend, account: &AccountDef) -> Option<LoginHome> {
    login_home::of(backend, account)
}

/// The key a `login` account's windows are filed under: its CLI's adapter's
/// `login_key` in the environment a launch gives it ([`login_home`]), the key its
/// statusline, transcripts and rollouts file under too.
pub fn login_key(backend: &Backend, account: &AccountDef) -> Option<String> {
    let home = login_home(backend, account)?;
    let family = backend.family;
    let set = home.set();
    let mut removed = credential_vars(backend, &[]);
    removed.extend(home.unset());
    family.login_key(&crate::adapter::Env::child(&set, &removed), None)
}

/// Adds the accounts stored in `credentials.toml` to the configured ones.
pub fn load_stored(config: &mut Config) -> anyhow::Result<()> {
    for account in store::read()? {
        if config.accounts.iter().any(|a| a.name == account.name) {
            crate::term::warn(&format!(
                "account {} is both in the configuration and in credentials.toml: the configuration wins",
                account.name
            ));
            continue;
        }
        if config.backends.contains_key(&account.backend) {
            config.accounts.push(account);
        }
    }
    Ok(())
}
