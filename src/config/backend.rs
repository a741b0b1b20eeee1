//! A backend: one way to run a CLI, as the built-in table and a user's file define it, with
//! how it is probed ([`ProbeDef`]). The types every floor reads a backend through; loading
//! and merging them is [`super`]'s.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::accounts::Rotation;
use crate::adapter::Family;

/// One way to run a CLI.
#[derive(Debug, Clone, PartialEq)]
pub struct Backend {
    pub name: String,
    /// What a person calls it in notices: "Claude Code".
    pub label: String,
    pub command: String,
    /// Which CLI `command` is (its file name, else the backend's name), judged once when the
    /// configuration is read: every floor asks this, none derives it again.
    pub family: Family,
    pub vendor: String,
    pub model_flag: Option<String>,
    /// The model to probe when neither the rung nor the CLI's own settings name one.
    pub default_model: Option<String>,
    /// Aliases (`opus`) to full ids; values may hold `${VAR}` references.
    pub models: BTreeMap<String, String>,
    /// Extra environment for the launched CLI; values may hold `${VAR}` references.
    pub env: BTreeMap<String, String>,
    /// Variables removed from the launched CLI's environment.
    pub env_remove: Vec<String>,
    pub probe: ProbeDef,
    /// How its accounts take turns, as configured; `None`: the pool's default
    /// (`soonest-reset` for logins, else `priority`; see `accounts::rotation_of`).
    pub rotation: Option<Rotation>,
    /// `park_at_percent` for this backend's logins; `None`: the top-level one.
    pub park_at_percent: Option<f64>,
    /// Paid overage ("extra usage", credits) counts as available: a full subscription
    /// window does not park the login while its credits last.
    pub extra_usage: bool,
    /// Ask Anthropic's undocumented `/api/oauth/usage` for this backend's Claude login's
    /// windows (opt-in: the vendor reserves the login for Claude Code).
    pub login_usage: bool,
    /// Translate Claude Code's command line into this backend's CLI's words (its dialect);
    /// `false` passes the user's words unchanged.
    pub translate: bool,
    /// Whether `--status` and `--check-fallback` may run the CLI itself to prove a login
    /// rung (its own check). Off: the rung is reported as not proved, never OK.
    pub self_check: bool,
    /// `on_limit` for this backend's sessions; `None`: the top-level one.
    pub on_limit: Option<super::on_limit::OnLimit>,
    /// Its own arguments (`args`, `headless_args`, `interactive_args`): for its CLI only,
    /// after the translation of Claude Code's words.
    pub own_args: super::backend_args::BackendArgs,
    /// Defined by the built-in table (a missing binary is then `SKIP`, not `FAIL`).
    pub builtin: bool,
    /// `enabled = false` turns the backend off: its rungs are never run, probed or checked,
    /// and every face shows them as off.
    pub enabled: bool,
}

impl Backend {
    /// Runs `command`, whose CLI is judged here — the one place a backend's family is
    /// derived: its command's file name, else the backend's name.
    pub fn set_command(&mut self, command: String) {
        self.family = Family::of_backend(&self.name, &command);
        self.command = command;
    }

    /// A backend with the defaults every row of the table starts from: the CLI's own model
    /// flag, nothing added to its environment, probed the default way, translated.
    pub fn new(name: &str, label: &str, command: &str, vendor: &str, builtin: bool) -> Backend {
        let mut backend = Backend {
            name: name.into(),
            label: label.into(),
            command: String::new(),
            family: Family::Other,
            vendor: vendor.into(),
            model_flag: Some("--model".into()),
            default_model: None,
            models: BTreeMap::new(),
            env: BTreeMap::new(),
            env_remove: Vec::new(),
            probe: ProbeDef::default(),
            rotation: None,
            park_at_percent: None,
            extra_usage: false,
            login_usage: false,
            translate: true,
            self_check: true,
            on_limit: None,
            own_args: super::backend_args::BackendArgs::default(),
            builtin,
            enabled: true,
        };
        backend.set_command(command.to_string());
        backend
    }
}

/// How a backend is probed. Unset `url`/`key` mean "whatever the CLI itself uses".
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProbeDef {
    pub kind: ProbeKind,
    pub url: Option<String>,
    pub key: Option<String>,
    pub auth: Option<Auth>,
    pub api: OpenAiApi,
    /// For `command` probes: the argv to run instead of `<command> [--model M] -p hi`.
    pub argv: Option<Vec<String>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProbeKind {
    Anthropic,
    Openai,
    Gemini,
    Command,
    #[default]
    None,
}

impl ProbeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ProbeKind::Anthropic => "anthropic",
            ProbeKind::Openai => "openai",
            ProbeKind::Gemini => "gemini",
            ProbeKind::Command => "command",
            ProbeKind::None => "none",
        }
    }
}

/// How an Anthropic key is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Auth {
    /// `x-api-key: KEY`
    XApiKey,
    /// `Authorization: Bearer KEY`
    Bearer,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OpenAiApi {
    #[default]
    Chat,
    Responses,
}
