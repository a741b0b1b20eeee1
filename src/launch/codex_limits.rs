//! Asking Codex itself for its login's windows: `codex app-server`, JSON-RPC
//! `account/rateLimits/read` (research §2.2a). No prompt and no token leave agent: Codex
//! answers from its own login. The server starts Codex and calls Codex's own backend
//! (0.171.0 answered in under a second against a local mock; 10–20 s has been seen), so
//! it is asked with a bound, and only where a probe would otherwise be due (see
//! `parking::Parking::ask_codex`).

use std::path::Path;
use std::time::Duration;

use jiff::Timestamp;

use crate::child::{Group, Talk};
use crate::login::codex_app_server::{Reply, parse_reply, request_lines};

/// The longest line of the server's looked at: its answer is a few kilobytes.
const LINE_CAP: usize = 1 << 20;
/// The most lines read before giving up on an answer (the handshake's, notifications').
const LINES: usize = 1_000;
/// The most bytes read from the server in all.
const CAP: usize = 4 << 20;

/// Runs `binary app-server` with the CLI's environment, sends the read and waits for its
/// answer at most `timeout`, reading at most [`LINES`] lines and [`CAP`] bytes; then the
/// server and everything it started are ended (`child::converse`). `None`: no answer within
/// those bounds (or it could not be started).
pub fn ask(
    binary: &Path,
    env: &[(String, String)],
    env_remove: &[String],
    timeout: Duration,
) -> Option<Reply> {
    let mut command = crate::child_env::command(binary);
    command
        .arg("app-server")
        .envs(env.iter().map(|(k, v)| (k, v)));
    for name in env_remove {
        command.env_remove(name);
    }
    let mut say = String::new();
    for line in request_lines(env!("CARGO_PKG_VERSION")) {
        say.push_str(&line);
        say.push('\n');
    }
    let talk = Talk {
        timeout,
        group: Group::Own,
        say: say.as_bytes(),
        line_cap: LINE_CAP,
        lines: LINES,
        cap: CAP,
    };
    crate::child::converse(&mut command, &talk, |line| {
        parse_reply(line, Timestamp::now())
    })
    .ok()?
    .answer
}
