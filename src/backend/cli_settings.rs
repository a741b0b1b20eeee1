//! What each CLI itself is configured with — its model and, for codex, its provider — so that
//! a probe goes the same path as the launch ("probe what runs", DESIGN.md §3).

use std::fs;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::paths;

/// Which real program a backend's command is, judged by its file name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    Claude,
    Codex,
    Gemini,
    /// opencode (`opencode-ai`): its model is `provider/model`, its records a SQLite file.
    Opencode,
    Other,
}

impl Family {
    /// The family of a backend: its command's file name, else the backend's own name (a
    /// wrapper script configured as `[backends.codex] command = "…"` is still codex).
    pub fn of_backend(name: &str, command: &str) -> Family {
        match Family::of(command) {
            Family::Other => Family::of(name),
            family => family,
        }
    }

    pub fn of(command: &str) -> Family {
        let name = Path::new(command)
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or(command);
        match name {
            "claude" => Family::Claude,
            "codex" => Family::Codex,
            "gemini" => Family::Gemini,
            "opencode" => Family::Opencode,
            _ => Family::Other,
        }
    }

    /// The model the CLI runs when given no `--model`, from its own settings.
    pub fn configured_model(self) -> Option<String> {
        match self {
            Family::Claude => non_empty_env("ANTHROPIC_MODEL").or_else(claude_settings_model),
            Family::Gemini => non_empty_env("GEMINI_MODEL").or_else(gemini_settings_model),
            Family::Codex => codex_config().and_then(|c| c.model),
            Family::Opencode | Family::Other => None,
        }
    }
}

fn non_empty_env(var: &str) -> Option<String> {
    std::env::var(var).ok().filter(|v| !v.trim().is_empty())
}

fn read_json(path: &Path) -> Option<serde_json::Value> {
    let text = fs::read_to_string(path).ok()?;
    serde_json::from_str(&text).ok()
}

fn claude_dir() -> Option<PathBuf> {
    non_empty_env("CLAUDE_CONFIG_DIR")
        .map(PathBuf::from)
        .or_else(|| paths::home().map(|h| h.join(".claude")))
}

fn claude_settings_model() -> Option<String> {
    let settings = read_json(&claude_dir()?.join("settings.json"))?;
    let model = settings.get("model")?.as_str()?.trim();
    (!model.is_empty()).then(|| model.to_string())
}

fn gemini_settings_model() -> Option<String> {
    let settings = read_json(&paths::home()?.join(".gemini/settings.json"))?;
    // Current releases nest it as model.name; older ones kept a plain string.
    let model = match settings.get("model")? {
        serde_json::Value::String(name) => name.clone(),
        value => value.get("name")?.as_str()?.to_string(),
    };
    let model = model.trim();
    (!model.is_empty()).then(|| model.to_string())
}

/// The parts of `$CODEX_HOME/config.toml` that decide where codex sends its calls.
#[derive(Debug, Default, Deserialize)]
pub struct CodexConfig {
    pub model: Option<String>,
    pub model_provider: Option<String>,
    #[serde(default)]
    pub model_providers: std::collections::BTreeMap<String, CodexProvider>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct CodexProvider {
    pub base_url: Option<String>,
    pub env_key: Option<String>,
    pub wire_api: Option<String>,
}

pub fn codex_home() -> Option<PathBuf> {
    non_empty_env("CODEX_HOME")
        .map(PathBuf::from)
        .or_else(|| paths::home().map(|h| h.join(".codex")))
}

/// Codex's config, when it exists and parses (other keys are ignored).
pub fn codex_config() -> Option<CodexConfig> {
    let text = fs::read_to_string(codex_home()?.join("config.toml")).ok()?;
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

/// Strips Claude Code's context suffix (`opus[1m]` → `opus`): the API knows the bare model.
pub fn bare_model(model: &str) -> &str {
    model.split_once('[').map_or(model, |(bare, _)| bare)
}
