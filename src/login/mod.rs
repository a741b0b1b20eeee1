//! Subscription logins (DESIGN §12): what agent may know about each CLI's own login —
//! Claude Code, Codex, Gemini CLI, Antigravity — and the usage windows the CLIs report; and
//! the CLIs' own records of their calls, which `--usage` counts (`calls`).
//! The facts, with their sources and versions, are in `research/subscription-logins.md`;
//! every fact it marks UNCONFIRMED is marked so here where it is used.
//!
//! The rules every file here keeps:
//!
//! - **Read only.** Nothing here writes, refreshes or rotates a CLI's login store, and
//!   nothing sends a prompt. A refresh from outside can log the CLI out (Claude Code clears
//!   its tokens on `invalid_grant`, Codex's refresh tokens are single-use), and the vendors
//!   reserve these logins for their own apps.
//! - **Never a prompt for a password.** Files are read as they are; the macOS Keychain is
//!   read with `security find-generic-password … -w` only, which never writes.
//! - **Never a refresh.** An expired access token is reported as such ("the CLI refreshes
//!   it when it runs"); it is never renewed.
//! - **Tokens are never kept.** A token value read on the way is registered with
//!   [`crate::redact::register`] at once and dropped; the types here hold only whether a
//!   token is there, the plan and the expiry, so no `Debug`, `Display` or serde output of
//!   them can carry one.
//! - **Unknown is not dead.** Every reader answers "don't know" (`None`, an empty list)
//!   for anything missing or unreadable, never an error that would stop a launch.
//!
//! These are building blocks: pure parsers of the CLIs' formats, and readers of the CLIs'
//! files that take their directories as arguments. Choosing rungs by them is done elsewhere.

pub mod agy;
pub mod asking;
pub mod calls;
pub mod claude;
pub mod claude_calls;
pub mod claude_oauth_usage;
pub mod claude_session;
pub mod claude_statusline;
pub mod claude_transcript;
pub mod claude_work;
pub mod codex;
pub mod codex_app_server;
pub mod codex_calls;
pub mod codex_rollout;
pub mod codex_session;
pub mod codex_work;
pub mod gemini;
pub mod gemini_calls;
pub mod gemini_chat;
pub mod gemini_session;
pub mod gemini_work;
pub mod jwt;
#[cfg(target_os = "macos")]
pub mod keychain;
pub mod opencode;
pub mod opencode_calls;
pub mod opencode_session;
pub mod opencode_work;
pub mod readers;
pub mod records;
pub mod reset_text;
pub mod run_actions;
pub mod said_limit;
pub mod session;
pub mod session_work;
#[cfg(test)]
pub mod stand_in;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

pub use crate::state::window::{self, Scope, Source, Window};

use std::path::Path;

use crate::adapter::{Cli, Env};
use crate::backend::Credential;
use calls::{SourceStats, Transcripts};
use run_actions::Actions;
use session::Session;

/// What agent knows about one CLI's login: never its tokens.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
/// Which CLI's it is is known by the reader that read it (`readers`).
pub struct Login {
    /// The plan as the CLI's store names it (`max`, `pro`, `plus`…), when it says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<String>,
    /// A finer grade of the plan when the store has one (Claude's `rateLimitTier`,
    /// `default_claude_max_20x`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tier: Option<String>,
    /// When the stored access token expires; `None` when the store does not say.
    #[serde(
        default,
        with = "window::rfc3339::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub expires_at: Option<Timestamp>,
    /// Whether the store holds an access token at all (a logged-out CLI keeps an empty one).
    pub token_present: bool,
}

impl Login {
    /// Whether the access token has expired by `now`. The CLI refreshes it itself when it
    /// runs; agent never does, and never calls anything with an expired one.
    pub fn is_expired(&self, now: Timestamp) -> bool {
        self.expires_at.is_some_and(|at| now >= at)
    }
}

/// What a CLI's own login store holds: a subscription login (never its token), or a key the
/// CLI keeps there (`codex login --api-key`), which is used like any key.
#[derive(Debug, Clone)]
pub enum OwnStore {
    Login(Login),
    Key(Credential),
}

/// A reader of the record one run left: given the CLI's home, the run's folder and when it
/// started.
pub type RunReader<T> = fn(home: &Path, cwd: &Path, start: Timestamp, id: Option<&str>) -> T;

/// A reader of what one session was (DESIGN §21): given the CLI's home, the run's folder,
/// when it started and the session's id when agent knows it (the one it gave the CLI, or
/// the CLI's own it learned).
pub type SessionReader =
    fn(home: &Path, cwd: &Path, start: Timestamp, id: Option<&str>) -> Option<Session>;

/// A reader of the calls a CLI's own records on this machine hold (`--usage`): each call
/// once into `into`, and what was read; `None` when this machine has none of its records.
pub type CallsReader = fn(into: &mut Transcripts) -> Option<SourceStats>;

/// The readers of one CLI's files.
pub struct Readers {
    /// The CLI they read: its adapter's description (`login::readers` finds them by it).
    pub cli: &'static Cli,
    /// What its login store holds where the CLI would find it in `env`.
    pub own_store: fn(&Env) -> Option<OwnStore>,
    /// Why the CLI no longer serves the login its store holds in `env`, when it refuses
    /// that kind of login outright (Gemini CLI's personal Google logins): nothing proves
    /// such a rung and a launch passes over it.
    pub refused_login: fn(&Env) -> Option<&'static str>,
    /// The model it last ran, from its newest record where it keeps them in `env`.
    pub last_model: fn(&Env) -> Option<String>,
    /// What its run that started at `start` in `cwd` did, by that run's record under its
    /// home `home`: edits and commands (nothing when it keeps no record agent reads).
    pub run_actions: RunReader<Actions>,
    /// The usage windows that run's record names (the wall it ran into), for a CLI whose
    /// run records name them; a login of such a CLI is parked by them.
    pub run_windows: Option<RunReader<Vec<Window>>>,
    /// What its session was — the task, where it stopped, the files it changed — for a
    /// CLI whose records agent reads that from.
    pub run_session: Option<SessionReader>,
    /// Whether reading its session starts the CLI itself (opencode's `opencode db`, about a
    /// second of CPU): read then only for a run that ended in failure, never after every run.
    pub session_costs_a_run: bool,
    /// The id of the session a run was, from what the CLI printed on stderr, for a CLI that
    /// names its own sessions (Codex's `session id: …` header): how agent tells its run's
    /// record from another session's in the same folder.
    pub session_in_output: Option<fn(&str) -> Option<String>>,
    /// The usage limit its final error names (what it printed on stderr as it ended), for a
    /// CLI whose run records name no window: a session cut short by its quota all the same.
    pub limit_in_output: Option<fn(&str) -> Option<said_limit::SaidLimit>>,
    /// How its login is asked for its windows now, with no prompt, for a CLI that can be
    /// (`launch::ask_windows` is the one door that asks).
    pub ask_windows: Option<asking::AskWindows>,
    /// The calls its own records hold (`--usage`), for a CLI whose records agent counts.
    pub calls: Option<CallsReader>,
}

/// For a CLI that serves every login its store can hold.
pub fn serves_every_login(_env: &Env) -> Option<&'static str> {
    None
}

/// For a CLI that keeps no record of a run agent reads.
pub fn no_run_actions(_home: &Path, _cwd: &Path, _start: Timestamp, _id: Option<&str>) -> Actions {
    Actions::default()
}

/// Registers a token read from a login store for redaction, so that no later message,
/// state file or error can show it. Every reader calls this before it drops the value.
fn forget_token(token: Option<&str>) {
    if let Some(token) = token.filter(|t| !t.trim().is_empty()) {
        crate::redact::register(token);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_login_is_expired_from_its_expiry_on_and_unknown_expiry_is_not_expired() {
        let login = Login {
            plan: Some("max".into()),
            tier: None,
            expires_at: Some("2026-09-14T12:00:00Z".parse().unwrap()),
            token_present: true,
        };
        assert!(!login.is_expired("2026-09-14T11:59:59Z".parse().unwrap()));
        assert!(login.is_expired("2026-09-14T12:00:00Z".parse().unwrap()));
        let unknown = Login {
            expires_at: None,
            ..login
        };
        assert!(!unknown.is_expired("2030-01-01T00:00:00Z".parse().unwrap()));
    }
}
