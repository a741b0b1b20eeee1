//! Credential pools (DESIGN.md §7, seed 004): several accounts per backend, treated as a
//! managed fleet. Subscription tokens and API keys, each with its own health, taken in the
//! backend's rotation order; within a rung the next healthy account for the same model is
//! tried before the cascade descends. The rung table is expanded to one row per account
//! ([`expand`]), so every part of agent that walks the table walks the accounts too.

pub mod check;
pub mod rotation;
pub mod store;

use std::path::Path;

pub use crate::config::accounts::{AccountDef, Invalid, Kind, Rotation, name_problem};

use crate::backend::cli_settings::Family;
use crate::config::{Backend, Config, RungDef};

/// The variable the launched CLI reads this account's secret from.
pub fn secret_var(account: &AccountDef, backend: &Backend) -> String {
    if let Some(var) = &account.secret_var {
        return var.clone();
    }
    match (
        Family::of_backend(&backend.name, &backend.command),
        account.kind,
    ) {
        (Family::Claude, Kind::Oauth) => "CLAUDE_CODE_OAUTH_TOKEN".into(),
        (Family::Claude, Kind::ApiKey) => "ANTHROPIC_API_KEY".into(),
        (Family::Gemini, _) => "GEMINI_API_KEY".into(),
        (Family::Codex, _) => crate::backend::cli_settings::codex_config()
            .and_then(|c| c.custom_provider().and_then(|(_, p)| p.env_key.clone()))
            .unwrap_or_else(|| "OPENAI_API_KEY".into()),
        (Family::Agy | Family::Opencode | Family::Other, _) => "OPENAI_API_KEY".into(),
    }
}

/// Environment variables that carry a credential for this CLI family: removed from the
/// launched CLI's environment so it uses the chosen account and no other.
pub fn credential_vars(backend: &Backend, accounts: &[AccountDef]) -> Vec<String> {
    let mut vars: Vec<String> = Family::of_backend(&backend.name, &backend.command)
        .credential_vars()
        .iter()
        .map(|var| (*var).to_string())
        .collect();
    for account in accounts.iter().filter(|a| a.backend == backend.name) {
        for var in [
            account.secret_env.clone(),
            Some(secret_var(account, backend)),
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

/// Expands the rung table: a rung whose backend has accounts becomes one row per usable
/// account, in the backend's rotation order. `advance` moves round-robin on by one (a
/// launch); reports leave it where it is.
pub fn expand(config: &mut Config, state_dir: &Path, advance: bool) {
    if config.accounts.is_empty() {
        return;
    }
    let mut orders: std::collections::BTreeMap<String, Vec<String>> =
        std::collections::BTreeMap::new();
    for backend in config.backends.values() {
        let accounts: Vec<&AccountDef> = config
            .accounts
            .iter()
            .filter(|a| a.backend == backend.name)
            .collect();
        if accounts.is_empty() {
            continue;
        }
        let in_rungs = config.rungs.iter().any(|r| r.backend == backend.name);
        let order = rotation::order(
            backend,
            &accounts,
            &config.pricing,
            state_dir,
            advance && in_rungs,
        );
        orders.insert(backend.name.clone(), order);
    }
    let mut rows = Vec::with_capacity(config.rungs.len());
    for def in config.rungs.drain(..) {
        match orders.get(&def.backend) {
            Some(order) => {
                for name in order {
                    rows.push(RungDef {
                        account: Some(name.clone()),
                        ..def.clone()
                    });
                }
            }
            None => rows.push(def),
        }
    }
    config.rungs = rows;
}
