//! What each CLI itself is configured with — its model and, for codex, its provider — so that
//! a probe goes the same path as the launch ("probe what runs", DESIGN.md §3). The facts
//! (where each CLI keeps its settings) are its adapter's (`crate::adapter`); these are the
//! shorthands the backend floor asks with agent's own environment.

pub use crate::adapter::Family;
pub use crate::adapter::codex::{CodexConfig, CodexProvider};

use crate::adapter::Env;

/// Codex's config as agent's own environment finds it (other keys are ignored).
pub fn codex_config() -> Option<CodexConfig> {
    crate::adapter::codex::config(&Env::process())
}

/// Strips Claude Code's context suffix (`opus[1m]` → `opus`): the API knows the bare model.
pub fn bare_model(model: &str) -> &str {
    model.split_once('[').map_or(model, |(bare, _)| bare)
}
