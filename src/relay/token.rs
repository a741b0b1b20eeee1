//! The relay token: what clients hold instead of the real keys. From `AGENT_RELAY_TOKEN`,
//! else the 0600 file `agent --relay init` writes. Clients send it in `x-api-key` or
//! `Authorization: Bearer`; it is compared in constant time.

use std::path::PathBuf;

use anyhow::bail;

pub use crate::access::{RELAY_TOKEN_ENV as ENV, Token};
use crate::state::file::{self as state_file, Durability};

/// Where `agent --relay init` keeps the token: beside the configuration, 0600.
pub fn path() -> anyhow::Result<PathBuf> {
    crate::access::relay_token_path()
}

/// `agent --relay init`: a new random token in the 0600 file. An existing one is kept
/// unless `force` (clients holding it would be locked out).
pub fn init(force: bool) -> anyhow::Result<PathBuf> {
    let path = path()?;
    if path.exists() && !force {
        bail!(
            "{} already holds a relay token; `agent --relay init --force` replaces it (clients using the old one will get 401)",
            path.display()
        );
    }
    let token = crate::access::generate("agr-")?;
    let _lock = state_file::lock(&path)?;
    state_file::write_atomic(&path, format!("{token}\n").as_bytes(), Durability::Synced)?;
    Ok(path)
}
