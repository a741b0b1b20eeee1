//! Running the chosen CLI (DESIGN.md §5.4): spawn it with the user's arguments, pass its
//! exit status through, and judge by the second net whether it ever really started.

use std::ffi::OsString;
use std::io::{IsTerminal as _, Read as _, Write as _};
use std::os::unix::process::{CommandExt as _, ExitStatusExt as _};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, PoisonError, mpsc};
use std::time::{Duration, Instant};

use anyhow::Context as _;

use super::held;
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
    /// Whether it printed anything but white space on stdout, when agent copied its stdout
    /// from a pseudo-terminal; `None` when its stdout was agent's own.
    pub printed: Option<bool>,
    /// What it printed on stdout that agent still holds (`held::Plan`): the caller writes it
    /// to stdout, or shows it on stderr for a run that failed fast.
    pub held: Option<held::Spool>,
}

/// How much of a child's stderr is kept for the fast-fail judgement (a usage error says
/// what it refused in its first lines).
const STDERR_HEAD: usize = 16 * 1024;
/// How long the stderr copy may go on after the child ended (a helper it left behind may
/// hold the pipe; the copy then goes on alone).
const STDERR_GRACE: Duration = Duration::from_millis(250);
/// How long the copy of a child's stdout may go on after the child ended, however much keeps
/// coming: something it left behind (`( while :; do echo tick; done ) &`) may print forever,
/// and agent's run ends with its CLI's. What the CLI itself wrote before it exited is in the
/// pipe by then (its writes had to complete) and is read well within this.
const EXIT_GRACE: Duration = Duration::from_secs(1);

/// Spawns and waits, forwarding TERM/HUP and noting INT/QUIT meanwhile (see `signals`).
/// On a terminal the child has agent's stderr itself (an interactive CLI needs the tty);
/// otherwise (scripts, cron, CI) its stderr is copied through as it comes, and its first
/// [`STDERR_HEAD`] bytes are kept, so a CLI's usage error can be told by its words.
///
/// Its stdout is agent's own with [`held::Plan::Own`]; otherwise agent copies it through
/// and holds it as `stdout` says (a headless run's, until it has counted). A CLI that
/// `needs_terminal` (it prints nothing off one, `Cli::needs_terminal`) then gets a
/// pseudo-terminal of agent's own as its stdout: what it prints there is copied as plain
/// text (`crate::pty`), the window's size follows agent's terminal's, if it has one. Its
/// stdin stays agent's, and its exit code and signals are as any child's.
pub fn run(
    mut command: Command,
    needs_terminal: bool,
    stdout: held::Plan,
) -> anyhow::Result<Outcome> {
    signals::forward_to_children();
    let started = Instant::now();
    let program = command.get_program().to_string_lossy().into_owned();
    let copy = !std::io::stderr().is_terminal();
    if copy {
        command.stderr(Stdio::piped());
    }
    let pty = if stdout != held::Plan::Own && needs_terminal {
        let pty = crate::pty::open().with_context(|| format!("a terminal for {program}"))?;
        command.stdout(Stdio::from(pty.far));
        Some(pty.near)
    } else {
        if stdout != held::Plan::Own {
            command.stdout(Stdio::piped());
        }
        None
    };
    let spawned = command.spawn();
    // The command's hold on the terminal's far end goes: the child's is the only one left,
    // so the copy hears the end when the child (and what it started) closes it.
    drop(command);
    let mut child = spawned.with_context(|| format!("starting {program}"))?;
    signals::child_started(child.id());
    let head = Arc::new(Mutex::new(Vec::new()));
    let copied = child.stderr.take().map(|pipe| copy_stderr(pipe, &head));
    let ended_at = Arc::new(Mutex::new(None));
    let hold = held::Hold::new(stdout, started);
    let source = match (pty, child.stdout.take()) {
        (Some(near), _) => Some((near, true)),
        (None, Some(pipe)) => Some((std::fs::File::from(std::os::fd::OwnedFd::from(pipe)), false)),
        (None, None) => None,
    };
    let stdout_copy =
        source.map(|(source, terminal)| copy_stdout(source, terminal, hold, &ended_at));
    let status = child.wait();
    // Under the lock the copy decides by: a hold it released for time is one whose run is
    // judged to have run that long.
    let elapsed = {
        let mut ended = ended_at.lock().unwrap_or_else(PoisonError::into_inner);
        *ended = Some(Instant::now());
        started.elapsed()
    };
    signals::child_ended();
    // All of what it printed is copied before agent goes on (the copy itself stops once
    // the child is gone and what it left behind has been quiet for a moment).
    let (printed, held) = match stdout_copy.map(std::thread::JoinHandle::join) {
        Some(Ok(copied)) => (copied.printed, copied.hold.into_held()),
        Some(Err(_)) => (Some(true), None),
        None => (None, None),
    };
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
        printed,
        held,
    })
}

/// What the copy of a child's stdout leaves: whether it printed anything but white space
/// (asked only of a pseudo-terminal), and what it still holds.
struct Copied {
    printed: Option<bool>,
    hold: held::Hold,
}

/// Copies the child's stdout (`source`: a pipe, or the near end of its pseudo-terminal,
/// read as plain text) through `hold` to agent's stdout until it reads as ended, or the
/// child has ended (`ended_at`) and nothing came for [`STDERR_GRACE`] (a helper it left
/// behind may hold it), or [`EXIT_GRACE`] has passed since it ended whatever still comes;
/// a timed hold is released once its time has come while the child still runs. Meanwhile a terminal's size follows agent's own terminal's.
fn copy_stdout(
    source: std::fs::File,
    terminal: bool,
    hold: held::Hold,
    ended_at: &Arc<Mutex<Option<Instant>>>,
) -> std::thread::JoinHandle<Copied> {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    use std::os::fd::AsFd as _;
    let ended_at = Arc::clone(ended_at);
    std::thread::spawn(move || {
        let mut source = source;
        let mut hold = hold;
        let mut plain = crate::pty::Plain::default();
        let mut printed = false;
        let mut size = terminal.then(crate::pty::own_size).flatten();
        let mut last_heard = Instant::now();
        let mut buffer = [0u8; 8192];
        let mut stdout = std::io::stdout();
        loop {
            let ended = *ended_at.lock().unwrap_or_else(PoisonError::into_inner);
            if ended.is_some_and(|at| {
                at.max(last_heard).elapsed() >= STDERR_GRACE || at.elapsed() >= EXIT_GRACE
            }) {
                break;
            }
            if terminal {
                let now = crate::pty::own_size();
                if let Some(new) =
                    now.filter(|n| size.is_none_or(|old| !crate::pty::same_size(&old, n)))
                {
                    crate::pty::resize(&source, &new);
                    size = Some(new);
                }
            }
            let due = {
                let ended = ended_at.lock().unwrap_or_else(PoisonError::into_inner);
                ended.is_none() && hold.due(Instant::now())
            };
            if due {
                hold.release(&mut stdout);
            }
            let mut fds = [PollFd::new(source.as_fd(), PollFlags::POLLIN)];
            let ready = poll(&mut fds, PollTimeout::from(100u8)).unwrap_or(0);
            let heard = fds[0].revents().is_some_and(|r| !r.is_empty());
            if ready > 0 && heard {
                let n = match source.read(&mut buffer) {
                    // EIO: a terminal's far end is closed by all, the child and its helpers.
                    Ok(0) | Err(_) => break,
                    Ok(n) => n,
                };
                last_heard = Instant::now();
                if terminal {
                    let text = plain.feed(&buffer[..n]);
                    printed |= text.iter().any(|b| !b.is_ascii_whitespace());
                    hold.take(&text, &mut stdout);
                } else {
                    hold.take(&buffer[..n], &mut stdout);
                }
            }
        }
        Copied {
            printed: terminal.then_some(printed),
            hold,
        }
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
