//! Asking Codex itself for its login's windows: `codex app-server`, JSON-RPC
//! `account/rateLimits/read` (research §2.2a). No prompt and no token leave agent: Codex
//! answers from its own login. The server starts Codex and calls Codex's own backend
//! (0.171.0 answered in under a second against a local mock; 10–20 s has been seen), so
//! it is asked with a bound, and only where a probe would otherwise be due (see
//! `parking::Parking::ask_codex`).

use std::io::Write as _;
use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use jiff::Timestamp;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

use crate::bounded_read;
use crate::login::codex_app_server::{Reply, parse_reply, request_lines};

/// Runs `binary app-server` with the CLI's environment, sends the read and waits for its
/// answer at most `timeout`; the server and everything it started are ended either way.
/// `None`: no answer in time (or it could not be started).
pub fn ask(
    binary: &Path,
    env: &[(String, String)],
    env_remove: &[String],
    timeout: Duration,
) -> Option<Reply> {
    let mut command = Command::new(binary);
    command
        .arg("app-server")
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0);
    for name in env_remove {
        command.env_remove(name);
    }
    let mut child = command.spawn().ok()?;
    let pid = Pid::from_raw(child.id().cast_signed());
    let mut stdin = child.stdin.take()?;
    let stdout = child.stdout.take()?;
    // Stdin stays open until the answer: a server may stop at its end before answering.
    for line in request_lines(env!("CARGO_PKG_VERSION")) {
        if writeln!(stdin, "{line}").is_err() {
            break;
        }
    }
    // A few lines queued at most, each within its cap, however much the server writes.
    let (tx, rx) = mpsc::sync_channel(8);
    std::thread::spawn(move || {
        for line in bounded_read::lines_of(stdout, bounded_read::ANSWERS).texts() {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + timeout;
    let reply = loop {
        let Ok(line) = rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) else {
            break None;
        };
        if let Some(reply) = parse_reply(&line, Timestamp::now()) {
            break Some(reply);
        }
    };
    drop(stdin);
    let _ = killpg(pid, Signal::SIGKILL);
    let _ = child.wait();
    reply
}
