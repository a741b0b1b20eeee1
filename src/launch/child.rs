//! Running the chosen CLI (DESIGN.md §5.4): spawn it with the user's arguments, pass its
//! exit status through, and judge by the second net whether it ever really started.

use std::ffi::OsString;
use std::io::{IsTerminal as _, Read as _, Write as _};
use std::os::unix::process::{CommandExt as _, ExitStatusExt as _};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, PoisonError, mpsc};
use std::time::{Duration, Instant};

use anyhow::Context as _;

use crate::adapter::{self, Family};
use crate::signals;

/// How the child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    Code(i32),
    Signal(i32),
}

/// The variable that tells the launched CLI which rung agent chose ("Claude Code
/// (claude-opus-5)"): `agent --statusline`, run by Claude Code, shows it.
pub const RUNG_VAR: &str = "AGENT_RUNG";

/// The variable that tells `agent --statusline` which login a token-run Claude Code uses
/// (`account:NAME`, `token:FINGERPRINT`): Claude Code removes the token itself from its
/// statusLine command's environment (2.1.197), so the command cannot name it itself.
pub const CLAUDE_LOGIN_VAR: &str = "AGENT_CLAUDE_LOGIN";

/// Tells the launched CLI its rung and, for Claude Code run on a token, the token's login
/// — `login_key`, the adapter's key the launch resolved for the rung; its name, never
/// its value — for `agent --statusline`. A login named by its directory is not told: the
/// statusline finds the same directory in Claude Code's environment.
pub fn tell_the_statusline(
    command: &mut Command,
    family: Family,
    rung_label: &str,
    login_key: Option<&str>,
) {
    command.env(RUNG_VAR, rung_label);
    if !family.runs_agents_statusline() {
        return;
    }
    let told = login_key
        .and_then(|key| key.strip_prefix("claude:"))
        .filter(|identity| {
            identity.starts_with("account:") || adapter::claude::is_token_identity(identity)
        });
    match told {
        Some(identity) => command.env(CLAUDE_LOGIN_VAR, identity),
        None => command.env_remove(CLAUDE_LOGIN_VAR),
    };
}

/// The command to run: the rung's argv prefix, then the user's arguments untouched; a CLI
/// of `family` that sends extra headers from a variable tags its calls with agent's run.
pub fn command(
    family: Family,
    argv: &[String],
    user_args: &[OsString],
    env: &[(String, String)],
    env_remove: &[String],
) -> Command {
    let mut command = crate::child_env::command(&argv[0]);
    command.args(&argv[1..]).args(user_args);
    for name in env_remove {
        command.env_remove(name);
    }
    command.envs(env.iter().map(|(k, v)| (k, v)));
    if let Some(var) = family.headers_var() {
        // Whatever headers the child would have had (the backend's, else inherited).
        let current = adapter::Env::child(env, env_remove).raw(var);
        let headers = with_run_header(current.as_deref(), crate::state::ledger::run_id());
        command.env(var, headers);
    }
    command
}

/// `current` headers (its CLI's [`Family::headers_var`]: `X-Agent-Run` tags the calls of the
/// CLI agent launched with agent's run, and the relay writes it in its ledger lines, `agent
/// --usage --reconcile`)  (one per line) with an `X-Agent-Run` line for `run` in place of
/// any earlier one (an agent launched by an agent tags its own run).
fn with_run_header(current: Option<&str>, run: &str) -> String {
    let mut lines: Vec<&str> = current
        .unwrap_or("")
        .lines()
        .filter(|line| {
            let name = line.split(':').next().unwrap_or("").trim();
            !line.trim().is_empty() && !name.eq_ignore_ascii_case("x-agent-run")
        })
        .collect();
    let header = format!("X-Agent-Run: {run}");
    lines.push(&header);
    lines.join("\n")
}

/// How the child ran: how it ended, how long it took, and the start of what it wrote to
/// stderr when agent's own stderr is not a terminal (empty on a terminal).
#[derive(Debug)]
pub struct Outcome {
    pub ended: Ended,
    pub elapsed: Duration,
    pub stderr_head: String,
}

/// How much of a child's stderr is kept for the fast-fail judgement (a usage error says
/// what it refused in its first lines).
const STDERR_HEAD: usize = 16 * 1024;
/// How long the stderr copy may go on after the child ended (a helper it left behind may
/// hold the pipe; the copy then goes on alone).
const STDERR_GRACE: Duration = Duration::from_millis(250);

/// Spawns and waits, forwarding TERM/HUP and noting INT/QUIT meanwhile (see `signals`).
/// On a terminal the child has agent's stderr itself (an interactive CLI needs the tty);
/// otherwise (scripts, cron, CI) its stderr is copied through as it comes, and its first
/// [`STDERR_HEAD`] bytes are kept, so a CLI's usage error can be told by its words.
pub fn run(mut command: Command) -> anyhow::Result<Outcome> {
    signals::forward_to_children();
    let started = Instant::now();
    let program = command.get_program().to_string_lossy().into_owned();
    let copy = !std::io::stderr().is_terminal();
    if copy {
        command.stderr(Stdio::piped());
    }
    let mut child = command
        .spawn()
        .with_context(|| format!("starting {program}"))?;
    signals::child_started(child.id());
    let head = Arc::new(Mutex::new(Vec::new()));
    let copied = child.stderr.take().map(|pipe| copy_stderr(pipe, &head));
    let status = child.wait();
    let elapsed = started.elapsed();
    signals::child_ended();
    if let Some(done) = copied {
        let _ = done.recv_timeout(STDERR_GRACE);
    }
    let status = status.with_context(|| format!("waiting for {program}"))?;
    let ended = match (status.code(), status.signal()) {
        (Some(code), _) => Ended::Code(code),
        (None, Some(signal)) => Ended::Signal(signal),
        (None, None) => Ended::Code(1),
    };
    let stderr_head =
        String::from_utf8_lossy(&head.lock().unwrap_or_else(PoisonError::into_inner)).into_owned();
    Ok(Outcome {
        ended,
        elapsed,
        stderr_head,
    })
}

/// Copies `pipe` to agent's stderr as it comes, keeping its first [`STDERR_HEAD`] bytes in
/// `head`; the receiver hears when the pipe has closed.
fn copy_stderr(
    mut pipe: std::process::ChildStderr,
    head: &Arc<Mutex<Vec<u8>>>,
) -> mpsc::Receiver<()> {
    let (done, heard) = mpsc::channel();
    let head = Arc::clone(head);
    std::thread::spawn(move || {
        let mut buffer = [0u8; 8192];
        loop {
            let n = match pipe.read(&mut buffer) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            let _ = std::io::stderr().write_all(&buffer[..n]);
            let mut head = head.lock().unwrap_or_else(PoisonError::into_inner);
            let room = STDERR_HEAD.saturating_sub(head.len());
            head.extend_from_slice(&buffer[..n.min(room)]);
        }
        let _ = done.send(());
    });
    heard
}

/// Replaces agent with the command (`--use`): no probe, no fallback, nothing to come back to.
pub fn exec(mut command: Command) -> anyhow::Error {
    let program = command.get_program().to_string_lossy().into_owned();
    let err = command.exec();
    anyhow::Error::new(err).context(format!("running {program}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_run_header_is_added_to_the_users_headers_once() {
        assert_eq!(with_run_header(None, "r1"), "X-Agent-Run: r1");
        assert_eq!(
            with_run_header(Some("X-Team: a\nx-agent-run: old\n"), "r1"),
            "X-Team: a\nX-Agent-Run: r1"
        );
    }
}
