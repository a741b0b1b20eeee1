//! Codex (`@openai/codex`, pinned 0.171.0; research §2).
//!
//! - **Home**: `$CODEX_HOME`, else `~/.codex`.
//! - **Credential variables**: `OPENAI_API_KEY` (a custom provider's `env_key` is the
//!   backend's question).
//! - **Login identity**: its home (one ChatGPT login per home), when no account and no
//!   custom provider is in the way; whether `auth.json` holds a ChatGPT login is read by
//!   `login::codex`.
//! - **Records**: rollouts under `<home>/sessions/` and `<home>/archived_sessions/`.
//! - **Model**: `model` in `<home>/config.toml`, which also names its provider.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;

use super::{Account, Env};

pub const HOME_VAR: &str = "CODEX_HOME";
pub const HOME_VARS: &[&str] = &[HOME_VAR];
pub const CREDENTIAL_VARS: &[&str] = &["OPENAI_API_KEY"];
/// What it writes to stderr when it refuses its command line (clap: `error: unexpected argument '--bogus' found`, exit 2 (0.171)).
pub const USAGE_WORDS: &[&str] = &["error: unexpected argument", "error: invalid value"];

pub const MODEL_VAR: Option<&str> = None;

pub fn home(env: &Env) -> Option<PathBuf> {
    match env.get(HOME_VAR) {
        Some(dir) => Some(PathBuf::from(dir)),
        None => env.home().map(|home| home.join(".codex")),
    }
}

pub fn login_identity(env: &Env, account: Option<Account>) -> Option<String> {
    if account.is_some() || config(env).is_some_and(|c| c.custom_provider().is_some()) {
        return None;
    }
    home(env).map(|dir| dir.to_string_lossy().into_owned())
}

pub fn records(env: &Env) -> Vec<PathBuf> {
    home(env)
        .map(|home| vec![home.join("sessions"), home.join("archived_sessions")])
        .unwrap_or_default()
}

pub fn model_settings(env: &Env) -> Option<PathBuf> {
    home(env).map(|home| home.join("config.toml"))
}

/// The parts of `<home>/config.toml` that decide where codex sends its calls.
#[derive(Debug, Default, Deserialize)]
pub struct CodexConfig {
    pub model: Option<String>,
    pub model_provider: Option<String>,
    #[serde(default)]
    pub model_providers: BTreeMap<String, CodexProvider>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct CodexProvider {
    pub base_url: Option<String>,
    pub env_key: Option<String>,
    pub wire_api: Option<String>,
}

/// Codex's config in `env`, when it exists and parses (other keys are ignored).
pub fn config(env: &Env) -> Option<CodexConfig> {
    let text = crate::bounded_read::text(&model_settings(env)?, crate::bounded_read::SETTINGS)?;
    toml::from_str(&text).ok()
}

impl CodexConfig {
    /// The provider codex talks to, when it is a custom one with its own base URL.
    pub fn custom_provider(&self) -> Option<(&str, &CodexProvider)> {
        let name = self.model_provider.as_deref()?;
        if name == "openai" {
            return None;
        }
        self.model_providers
            .get(name)
            .filter(|p| p.base_url.is_some())
            .map(|p| (name, p))
    }
}

/// The command that logs Codex in in `dir` (which must exist).
pub fn login_command(dir: &str) -> String {
    format!("mkdir -p {dir} && {HOME_VAR}={dir} codex login")
}
