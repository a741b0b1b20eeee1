//! Gemini CLI (`@google/gemini-cli`, pinned 0.61.0; research §3).
//!
//! - **Home**: `$GEMINI_CLI_HOME/.gemini`, else `~/.gemini` (the variable replaces the home
//!   directory, `homedir()` in the bundle): login, settings and chats all live there.
//! - **Credential variables**: `GEMINI_API_KEY`, `GOOGLE_API_KEY`.
//! - **Login identity**: its home (one Google login per home).
//! - **Records**: chats under `<home>/tmp/<project>/chats/`.
//! - **Model**: `$GEMINI_MODEL`, else `model.name` (older: `model`) in
//!   `<home>/settings.json`.

use std::path::PathBuf;

use super::{Account, Env};

pub const HOME_VAR: &str = "GEMINI_CLI_HOME";
pub const HOME_VARS: &[&str] = &[HOME_VAR];
pub const CREDENTIAL_VARS: &[&str] = &["GEMINI_API_KEY", "GOOGLE_API_KEY"];
/// What it writes to stderr when it refuses its command line (yargs: `Unknown arguments:
/// bogus`, `Invalid values:` for a value it does not take; exit 1 (0.61)).
pub const USAGE_WORDS: &[&str] = &[
    "Unknown argument",
    "Invalid values:",
    "Not enough arguments following",
];

pub const MODEL_VAR: Option<&str> = Some("GEMINI_MODEL");

pub fn home(env: &Env) -> Option<PathBuf> {
    let home = match env.get(HOME_VAR) {
        Some(home) => PathBuf::from(home),
        None => env.home()?,
    };
    Some(home.join(".gemini"))
}

pub fn login_identity(env: &Env, account: Option<Account>) -> Option<String> {
    if account.is_some() || CREDENTIAL_VARS.iter().any(|var| env.get(var).is_some()) {
        return None;
    }
    home(env).map(|dir| dir.to_string_lossy().into_owned())
}

pub fn records(env: &Env) -> Vec<PathBuf> {
    home(env).map(|dir| dir.join("tmp")).into_iter().collect()
}

pub fn model_settings(env: &Env) -> Option<PathBuf> {
    home(env).map(|dir| dir.join("settings.json"))
}

pub fn settings_model(env: &Env) -> Option<String> {
    let settings = super::read_json(&model_settings(env)?)?;
    // Current releases nest it as model.name; older ones kept a plain string.
    match settings.get("model")? {
        serde_json::Value::String(name) => super::non_empty(name),
        value => super::non_empty(value.get("name")?.as_str()?),
    }
}

/// The command that logs Gemini CLI in with a Google login kept under `dir`.
pub fn login_command(dir: &str) -> String {
    format!("{HOME_VAR}={dir} gemini, then choose Login with Google")
}
