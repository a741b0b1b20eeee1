//! Asking a login for its usage windows now, with no prompt and no model call (DESIGN §12):
//! Codex answers `codex app-server`'s `account/rateLimits/read` from its own login,
//! Antigravity its `agy --print /usage`, and a Claude login is asked at Anthropic's opt-in
//! usage endpoint. A CLI that can be asked says how in its `Readers::ask_windows`; the
//! launch floor asks through one door (`launch::ask_windows`), which keeps the throttle,
//! and records what was said.

use std::path::Path;
use std::time::Duration;

use jiff::Timestamp;

use crate::backend::Endpoint;
use crate::state::window::Window;

/// The rung as it will run, as far as asking its login needs it.
#[derive(Debug, Clone, Copy)]
pub struct Asking<'a> {
    /// The CLI's binary.
    pub binary: &'a Path,
    /// The environment a launch of it gets: `env` over agent's own, less `env_remove`.
    pub env: &'a [(String, String)],
    pub env_remove: &'a [String],
    /// Where its login's records are (Claude Code's configuration directory), when known.
    pub records: Option<&'a Path>,
    /// The API, base URL and credential the rung was resolved with: never resolved again.
    pub endpoint: Option<&'a Endpoint>,
    /// The longest the answer may take (each CLI may bound it tighter).
    pub timeout: Duration,
    pub now: Timestamp,
}

/// What asking came to.
#[derive(Debug, Clone, PartialEq)]
pub enum Asked {
    /// The windows named.
    Windows(Vec<Window>),
    /// No windows, and why (said in the debug line, or as the rung's state).
    Nothing(String),
    /// Asked not to ask again before then (an endpoint's 429 and its `retry-after`).
    NotBefore(Timestamp),
}

/// Who answers for a login's windows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answerer {
    /// The CLI itself, run to answer from its own login (`codex app-server`).
    Cli,
    /// The vendor's undocumented endpoint, called by agent with the login's token; no CLI
    /// runs. Only where the backend allows it (`login_usage = true`).
    Vendor,
}

/// How one CLI's login is asked for its windows.
#[derive(Debug, Clone, Copy)]
pub struct AskWindows {
    /// What is asked, as notices name it (`codex app-server`).
    pub what: &'static str,
    pub answerer: Answerer,
    pub ask: fn(&Asking) -> Asked,
}
