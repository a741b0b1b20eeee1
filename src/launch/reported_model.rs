//! What a CLI that is passed no model will run, as far as the CLI itself has said: the
//! model its own settings name, else the model it last recorded (its newest transcript,
//! rollout or chat). A rung that passes no model runs the CLI's own default, so the labels
//! name that default by these facts — never by the model agent would probe with.

use crate::adapter::{Env, Family};
use crate::config::Backend;

use super::rung::DEFAULT_MODEL_WORDS;

/// Where the CLI said it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Said {
    /// Its settings (or its model variable) name the model.
    Settings,
    /// Its newest record names the model it last ran.
    LastRan,
}

/// A model the CLI itself reported, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reported {
    pub model: String,
    pub said: Said,
}

impl Reported {
    /// `its settings: claude-opus-4-8` / `last ran claude-opus-4-8`.
    pub fn text(&self) -> String {
        match self.said {
            Said::Settings => format!("its settings: {}", self.model),
            Said::LastRan => format!("last ran {}", self.model),
        }
    }

    pub fn source(&self) -> &'static str {
        match self.said {
            Said::Settings => "settings",
            Said::LastRan => "last_ran",
        }
    }
}

/// The model `backend`'s CLI reports, read where the launched CLI would find its settings
/// and records (the backend's `env` may move its home). `None` when it has said none.
pub fn of(backend: &Backend) -> Option<Reported> {
    let vars = super::resolve::launch_env(backend).unwrap_or_default();
    in_env(backend.family, &Env::child(&vars, &backend.env_remove))
}

/// The model a CLI of `family` reports where it runs in `env` (a rung's own launch
/// environment: a login of a pool has its own home). `None` when it has said none.
pub fn in_env(family: Family, env: &Env) -> Option<Reported> {
    if let Some(model) = family.configured_model(env) {
        return Some(Reported {
            model,
            said: Said::Settings,
        });
    }
    crate::login::readers::last_model(family, env).map(|model| Reported {
        model,
        said: Said::LastRan,
    })
}

/// `its default model (last ran claude-opus-4-8)`: what a rung that passes no model runs.
pub fn default_text(backend: &Backend) -> String {
    let words = DEFAULT_MODEL_WORDS;
    match of(backend) {
        Some(reported) => format!("{words} ({})", crate::text::printable(&reported.text())),
        None => words.to_string(),
    }
}
