//! `credentials.toml` (0600, beside the configuration): the accounts added with
//! `agent --accounts add`, secrets included. Rewritten whole, atomically, under its lock.

use std::path::PathBuf;

use anyhow::Context as _;
use serde::{Deserialize, Serialize};

use super::AccountDef;
use crate::state::file::{self as state_file, Durability};

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct CredentialsFile {
    #[serde(default)]
    accounts: Vec<AccountDef>,
}

pub fn path() -> Option<PathBuf> {
    crate::paths::config_dir().map(|dir| dir.join("credentials.toml"))
}

pub fn read() -> anyhow::Result<Vec<AccountDef>> {
    let Some(path) = path() else {
        return Ok(Vec::new());
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(err) => return Err(err).with_context(|| format!("reading {}", path.display())),
    };
    let file: CredentialsFile = toml::from_str(&text).map_err(|err| {
        // Never echo the file: it holds secrets. Say where, not what.
        let line = err
            .span()
            .map_or(0, |s| text[..s.start].matches('\n').count() + 1);
        crate::exit_codes::usage(format!("{}:{line}: {}", path.display(), err.message()))
    })?;
    for (index, account) in file.accounts.iter().enumerate() {
        if let Some(secret) = &account.secret {
            crate::redact::register(secret);
        }
        account.check().map_err(|bad| {
            crate::exit_codes::usage(format!(
                "{}: accounts[{}].{}: {} (fix or remove it there)",
                path.display(),
                index + 1,
                bad.key,
                bad.message
            ))
        })?;
    }
    Ok(file.accounts)
}

/// Changes the stored accounts under the lock and rewrites the file (fsynced: it cannot be
/// rebuilt).
pub fn update<T>(
    change: impl FnOnce(&mut Vec<AccountDef>) -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    let path = path().context("no configuration directory (HOME is not set)")?;
    let _lock = state_file::lock(&path)?;
    let mut accounts = read()?;
    let result = change(&mut accounts)?;
    let text = toml::to_string(&CredentialsFile { accounts })?;
    let header = "# agent's stored credentials: written by `agent --accounts add`. Keep it 0600.\n";
    state_file::write_atomic(
        &path,
        format!("{header}{text}").as_bytes(),
        Durability::Synced,
    )?;
    Ok(result)
}
