//! The one way agent waits on a program of its own (a probe's CLI, a secret command, an
//! alert command, a `--version`, the statusline's previous command, the relay's `claude
//! -p`, `codex app-server`, launchctl/systemctl/crontab): bounded in time and in bytes.
//!
//! The pipes are read here with `poll`, never by a blocking read: the deadline holds
//! whatever keeps them open (a helper started with `setsid` that keeps the program's
//! stdout is out of reach of any kill, so agent stops listening instead). When the
//! program itself has ended, what it left behind gets [`LEFTOVER_GRACE`] to finish
//! writing; then its group is killed (when it has one of its own) and the pipes are
//! abandoned. Past the deadline or past the byte cap, the program and, with
//! [`Group::Own`], everything it started are killed with SIGKILL.

use std::fmt;
use std::fs::File;
use std::io::{self, Write as _};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::process::CommandExt as _;
use std::process::{Child, ChildStdin, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

use nix::fcntl::{FcntlArg, OFlag, fcntl};
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;

/// What a program may print on stdout, and again on stderr, unless told otherwise.
pub const CAP: usize = 1 << 20;

/// How long what a program left behind may keep its pipes open once it has ended.
pub const LEFTOVER_GRACE: Duration = Duration::from_millis(200);

/// How often a program with open pipes is looked at to see whether it has ended.
const TICK: Duration = Duration::from_millis(20);

/// What an overrun kills.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    /// The program runs in agent's process group (it may ask the terminal, as macOS's
    /// `security` or an alert command may); an overrun kills the program alone.
    Shared,
    /// The program leads a process group of its own (a CLI that starts helpers); an
    /// overrun kills it and everything it started.
    Own,
}

/// How one program is run by [`run`].
#[derive(Debug, Clone, Copy)]
pub struct Job<'a> {
    /// The longest it may take, from its start until its pipes are done with.
    pub timeout: Duration,
    pub group: Group,
    /// Written to its stdin, which is then closed; `None`: stdin is `/dev/null`.
    pub stdin: Option<&'a [u8]>,
    /// The most it may print on stdout, and again on stderr: one byte more ends it.
    pub cap: usize,
    /// Its stdout is a pseudo-terminal of agent's own, for a CLI that prints nothing off a
    /// terminal (`crate::pty`); what it prints comes back as plain text.
    pub terminal: bool,
}

impl Job<'static> {
    /// Within `timeout`, stdin closed, at most [`CAP`] bytes on each pipe.
    pub fn new(timeout: Duration, group: Group) -> Self {
        Job {
            timeout,
            group,
            stdin: None,
            cap: CAP,
            terminal: false,
        }
    }
}

impl<'a> Job<'a> {
    /// The same job with `bytes` written to its stdin.
    #[must_use]
    pub fn stdin(self, bytes: &[u8]) -> Job<'_> {
        Job {
            stdin: Some(bytes),
            timeout: self.timeout,
            group: self.group,
            cap: self.cap,
            terminal: self.terminal,
        }
    }

    /// The same job with `cap` bytes allowed on each pipe.
    #[must_use]
    pub fn cap(self, cap: usize) -> Job<'a> {
        Job { cap, ..self }
    }

    /// The same job with its stdout a pseudo-terminal when `terminal`.
    #[must_use]
    pub fn terminal(self, terminal: bool) -> Job<'a> {
        Job { terminal, ..self }
    }
}

/// Why a program gave no whole output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    /// It was still running at its deadline: killed.
    Late(Duration),
    /// It printed more than this many bytes on one pipe: killed.
    Flooded(usize),
}

impl fmt::Display for Stopped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Stopped::Late(timeout) => {
                write!(f, "did not finish within {:.1}s", timeout.as_secs_f64())
            }
            Stopped::Flooded(cap) => write!(f, "printed more than {cap} bytes"),
        }
    }
}

impl std::error::Error for Stopped {}

/// What [`run`] saw: how the program ended and what it printed (all of it when it exited;
/// what came before the end otherwise, never more than the cap).
#[derive(Debug)]
pub struct Ran {
    /// Its exit status, or why it was stopped.
    pub end: Result<ExitStatus, Stopped>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

impl Ran {
    /// The whole output of a program that ended by itself within its bounds.
    pub fn output(self) -> Result<Output, Stopped> {
        let status = self.end?;
        Ok(Output {
            status,
            stdout: self.stdout,
            stderr: self.stderr,
        })
    }
}

/// Runs `command` to its end within `job`'s bounds. `Err` only when it cannot be started.
pub fn run(command: &mut Command, job: &Job<'_>) -> io::Result<Ran> {
    let deadline = Instant::now() + job.timeout;
    command
        .stdin(if job.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let pty = if job.terminal {
        let pty = crate::pty::open()?;
        command.stdout(Stdio::from(pty.far));
        Some(pty.near)
    } else {
        None
    };
    let started = start(command, job.group);
    // The far end is the child's alone now: dropped here (with the command's hold on it),
    // the terminal reads as ended once the child and what it started have closed it.
    command.stdout(Stdio::null());
    let mut child = started?;
    let out_pipe = match pty {
        Some(near) => Some(near),
        None => child
            .stdout
            .take()
            .map(|pipe| File::from(OwnedFd::from(pipe))),
    };
    let feed = Feed {
        pipe: child.stdin.take(),
        unsent: job.stdin.unwrap_or_default(),
        keep_open: false,
    };
    let mut stdout = Vec::new();
    let mut stderr = Vec::new();
    let cap = job.cap;
    let keep = |kept: &mut Vec<u8>, bytes: &[u8]| {
        let room = cap.saturating_sub(kept.len());
        kept.extend_from_slice(&bytes[..bytes.len().min(room)]);
        if bytes.len() > room {
            Flow::Full
        } else {
            Flow::More
        }
    };
    let end = pump(
        &mut child,
        job.group,
        feed,
        out_pipe,
        deadline,
        &mut |bytes| keep(&mut stdout, bytes),
        &mut |bytes| keep(&mut stderr, bytes),
    );
    let end = match end {
        End::Exited(status) => Ok(status),
        End::Late => Err(Stopped::Late(job.timeout)),
        End::Full | End::Done => Err(Stopped::Flooded(cap)),
    };
    if job.terminal {
        stdout = crate::pty::plain(&stdout);
    }
    Ok(Ran {
        end,
        stdout,
        stderr,
    })
}

/// How a conversation over stdin and stdout is run by [`converse`].
#[derive(Debug, Clone, Copy)]
pub struct Talk<'a> {
    pub timeout: Duration,
    pub group: Group,
    /// Written to its stdin, which stays open until the answer (a server may stop at the
    /// end of its input before answering).
    pub say: &'a [u8],
    /// The longest line looked at; a longer one is skipped (its bytes still count).
    pub line_cap: usize,
    /// The most lines read.
    pub lines: usize,
    /// The most bytes read from stdout in all.
    pub cap: usize,
}

/// What [`converse`] heard.
#[derive(Debug)]
pub struct Heard<T> {
    /// The answer `each` found, if any did.
    pub answer: Option<T>,
    /// Why there was none: `None` when the program ended without one.
    pub stopped: Option<Stopped>,
    /// The bytes read from its stdout.
    pub read: usize,
}

/// Runs `command` (stderr discarded), writes `talk.say` to it, and hands each line of its
/// stdout to `each` until `each` finds the answer, the program ends, or a bound is reached;
/// unless it ended by itself with its pipes closed, the program and (with [`Group::Own`])
/// everything it started are then killed.
pub fn converse<T>(
    command: &mut Command,
    talk: &Talk<'_>,
    mut each: impl FnMut(&str) -> Option<T>,
) -> io::Result<Heard<T>> {
    let deadline = Instant::now() + talk.timeout;
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = start(command, talk.group)?;
    let feed = Feed {
        pipe: child.stdin.take(),
        unsent: talk.say,
        keep_open: true,
    };
    let mut answer = None;
    let mut read = 0usize;
    let mut lines = 0usize;
    let mut line = Vec::new();
    let mut skipping = false;
    let mut hear = |bytes: &[u8]| {
        let mut rest = bytes;
        read += bytes.len();
        while !rest.is_empty() {
            let (part, ended) = match memchr::memchr(b'\n', rest) {
                Some(at) => (&rest[..at], Some(at + 1)),
                None => (rest, None),
            };
            if !skipping {
                if line.len() + part.len() > talk.line_cap {
                    line.clear();
                    skipping = true;
                } else {
                    line.extend_from_slice(part);
                }
            }
            let Some(next) = ended else { break };
            rest = &rest[next..];
            if !std::mem::take(&mut skipping) {
                lines += 1;
                if let Some(found) = std::str::from_utf8(&line).ok().and_then(&mut each) {
                    answer = Some(found);
                    return Flow::Done;
                }
            }
            line.clear();
            if lines >= talk.lines {
                return Flow::Full;
            }
        }
        if read > talk.cap {
            Flow::Full
        } else {
            Flow::More
        }
    };
    let out_pipe = child
        .stdout
        .take()
        .map(|pipe| File::from(OwnedFd::from(pipe)));
    let end = pump(
        &mut child,
        talk.group,
        feed,
        out_pipe,
        deadline,
        &mut hear,
        &mut |_| Flow::More,
    );
    let stopped = match end {
        End::Exited(_) | End::Done => None,
        End::Late => Some(Stopped::Late(talk.timeout)),
        End::Full => Some(Stopped::Flooded(talk.cap)),
    };
    Ok(Heard {
        answer,
        stopped,
        read,
    })
}

fn start(command: &mut Command, group: Group) -> io::Result<Child> {
    if group == Group::Own {
        command.process_group(0);
    }
    command.spawn()
}

/// What a reader says after a chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flow {
    More,
    /// Past its cap.
    Full,
    /// It has what it wanted.
    Done,
}

/// How [`pump`] ended.
#[derive(Debug)]
enum End {
    /// The program exited (and its pipes closed, or what held them had its grace).
    Exited(ExitStatus),
    Late,
    Full,
    Done,
}

/// What is written to a program's stdin: `unsent`, then the pipe is closed unless
/// `keep_open` (a server may stop at the end of its input before answering).
struct Feed<'a> {
    pipe: Option<ChildStdin>,
    unsent: &'a [u8],
    keep_open: bool,
}

impl Feed<'_> {
    /// The pipe, while there is something to write to it.
    fn wanting(&self) -> Option<&ChildStdin> {
        self.pipe.as_ref().filter(|_| !self.unsent.is_empty())
    }

    /// Writes what the pipe takes now; done, it is closed unless kept open. A program that
    /// stopped reading (EPIPE) does not want the rest.
    fn write(&mut self) {
        let Some(pipe) = self.pipe.as_mut() else {
            return;
        };
        match pipe.write(self.unsent) {
            Ok(n) => self.unsent = &self.unsent[n..],
            Err(e) if is_transient(&e) => {}
            Err(_) => self.unsent = &[],
        }
        if self.unsent.is_empty() && !self.keep_open {
            self.pipe = None;
        }
    }
}

/// One of the pipes polled.
#[derive(Debug, Clone, Copy)]
enum Pipe {
    In,
    Out,
    Err,
}

/// Feeds `feed` and hands what comes on `stdout` (the child's stdout pipe, or the near end
/// of its terminal) and stderr to `out` and `err` until the
/// program has exited and its pipes are done with, or `deadline`, or a reader says stop.
/// The program is reaped before this returns; unless it exited with its pipes closed, it
/// is killed (with [`Group::Own`], its whole group, also after it exited: what it left
/// behind there and that still holds the pipes).
fn pump(
    child: &mut Child,
    group: Group,
    mut feed: Feed<'_>,
    stdout: Option<File>,
    deadline: Instant,
    out: &mut dyn FnMut(&[u8]) -> Flow,
    err: &mut dyn FnMut(&[u8]) -> Flow,
) -> End {
    let pid = Pid::from_raw(child.id().cast_signed());
    feed.pipe = feed.pipe.filter(|p| nonblocking(p.as_fd()).is_ok());
    if feed.unsent.is_empty() && !feed.keep_open {
        feed.pipe = None;
    }
    // A terminal's near end reads EIO once its far end is closed: that ends it as EOF does.
    let mut stdout = stdout.filter(|p| nonblocking(p.as_fd()).is_ok());
    let mut stderr = child
        .stderr
        .take()
        .filter(|p| nonblocking(p.as_fd()).is_ok());
    // When the program itself exited: what holds its pipes then has until `at + grace`.
    let mut exited: Option<(ExitStatus, Instant)> = None;
    let mut idle = Duration::from_millis(1);
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        if exited.is_none() {
            match child.try_wait() {
                Ok(Some(status)) => exited = Some((status, Instant::now())),
                Ok(None) => {}
                // Reaped by someone else: nothing to wait for any more.
                Err(_) => return end(child, group, pid, false, End::Late),
            }
        }
        let now = Instant::now();
        let wake = match exited {
            Some((status, at)) => {
                let until = (at + LEFTOVER_GRACE).min(deadline);
                let open = stdout.is_some() || stderr.is_some();
                if !open {
                    return End::Exited(status);
                }
                if now >= until {
                    return end(child, group, pid, true, End::Exited(status));
                }
                until
            }
            None if now >= deadline => return end(child, group, pid, false, End::Late),
            None => deadline,
        };
        let mut wait = wake.saturating_duration_since(now).min(TICK);
        let mut fds = Vec::with_capacity(3);
        let mut which = Vec::with_capacity(3);
        let reading = [
            (stdout.as_ref().map(AsFd::as_fd), Pipe::Out),
            (stderr.as_ref().map(AsFd::as_fd), Pipe::Err),
        ];
        for (fd, name) in reading {
            if let Some(fd) = fd {
                fds.push(PollFd::new(fd, PollFlags::POLLIN));
                which.push(name);
            }
        }
        if let Some(pipe) = feed.wanting() {
            fds.push(PollFd::new(pipe.as_fd(), PollFlags::POLLOUT));
            which.push(Pipe::In);
        }
        if fds.is_empty() {
            // Nothing left to read: the program is about to exit, or closed its pipes and
            // goes on; look again soon, then less and less often.
            wait = wait.min(idle);
            idle = (idle * 2).min(TICK);
        }
        let timeout = PollTimeout::try_from(wait).unwrap_or(PollTimeout::MAX);
        match poll(&mut fds, timeout) {
            Ok(_) | Err(nix::errno::Errno::EINTR) => {}
            Err(_) => return end(child, group, pid, exited.is_some(), End::Late),
        }
        let ready: Vec<Pipe> = fds
            .iter()
            .zip(which)
            .filter(|(fd, _)| fd.revents().is_some_and(|r| !r.is_empty()))
            .map(|(_, pipe)| pipe)
            .collect();
        drop(fds);
        for pipe in ready {
            let flow = match pipe {
                Pipe::Out => drain(&mut stdout, &mut chunk, out),
                Pipe::Err => drain(&mut stderr, &mut chunk, err),
                Pipe::In => {
                    feed.write();
                    Flow::More
                }
            };
            let stop = match flow {
                Flow::More => continue,
                Flow::Full => End::Full,
                Flow::Done => End::Done,
            };
            return end(child, group, pid, exited.is_some(), stop);
        }
    }
}

fn is_transient(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
    )
}

/// Reads what `pipe` has now into `chunk` and hands it on; an ended pipe is dropped.
fn drain<R: io::Read>(
    pipe: &mut Option<R>,
    chunk: &mut [u8],
    reader: &mut dyn FnMut(&[u8]) -> Flow,
) -> Flow {
    let Some(open) = pipe.as_mut() else {
        return Flow::More;
    };
    match open.read(chunk) {
        Ok(0) => {
            *pipe = None;
            Flow::More
        }
        Ok(n) => reader(&chunk[..n]),
        Err(e) if is_transient(&e) => Flow::More,
        Err(_) => {
            *pipe = None;
            Flow::More
        }
    }
}

/// Kills the program (with [`Group::Own`], its group) and reaps it, then says `how` it
/// ended. One already reaped is not signalled alone (its pid may be another's by now); its
/// group still is, for what it left there.
fn end(child: &mut Child, group: Group, pid: Pid, reaped: bool, how: End) -> End {
    let _ = match (group, reaped) {
        (Group::Own, _) => killpg(pid, Signal::SIGKILL),
        (Group::Shared, false) => kill(pid, Signal::SIGKILL),
        (Group::Shared, true) => Ok(()),
    };
    if !reaped {
        let _ = child.wait();
    }
    how
}

fn nonblocking(fd: BorrowedFd<'_>) -> nix::Result<()> {
    let flags = OFlag::from_bits_truncate(fcntl(fd, FcntlArg::F_GETFL)?);
    fcntl(fd, FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK)).map(drop)
}

/// What tests of children wait for: an event, with a patience that only keeps a broken
/// test from hanging, and a helper that outlives its parent until released.
#[cfg(test)]
pub(crate) mod test_events {
    use std::path::Path;
    use std::time::{Duration, Instant};

    /// How long a test waits for an event before it fails: for a broken test, not a slow
    /// machine. No test here asserts that something took less than so long.
    pub const PATIENCE: Duration = Duration::from_secs(60);

    /// Polls `done` until it holds (true) or [`PATIENCE`] has passed (false).
    pub fn eventually(mut done: impl FnMut() -> bool) -> bool {
        let deadline = Instant::now() + PATIENCE;
        while !done() {
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        true
    }

    /// Whether the process whose pid `pid_file` holds runs (a zombie runs nothing).
    pub fn runs(pid_file: &Path) -> bool {
        let pid = std::fs::read_to_string(pid_file).unwrap();
        std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())).is_ok_and(|stat| {
            stat.rsplit_once(") ")
                .is_some_and(|(_, rest)| !rest.starts_with('Z'))
        })
    }

    /// A helper a program leaves behind holding its stdout and stderr, out of reach of its
    /// group's kill (`setsid`), until the test lets it go (or a cap of some 70 s): a wait is
    /// proved not to hold for it by ending while it still runs, not by ending soon.
    pub struct Helper {
        dir: tempfile::TempDir,
    }

    impl Helper {
        pub fn new() -> Helper {
            Helper {
                dir: tempfile::tempdir().unwrap(),
            }
        }

        /// Shell words that leave the helper behind and go on at once.
        pub fn start(&self) -> String {
            let dir = self.dir.path().display();
            format!(
                "setsid sh -c 'echo $$ > {dir}/pid.new && mv {dir}/pid.new {dir}/pid; i=0; while [ ! -e {dir}/release ] && [ $i -lt 1400 ]; do sleep 0.05; i=$((i + 1)); done' &\n"
            )
        }

        /// Whether it still runs, once it has said its pid (it holds the pipes from its
        /// fork on).
        pub fn still_running(&self) -> bool {
            let pid_file = self.dir.path().join("pid");
            assert!(eventually(|| pid_file.exists()), "the helper never started");
            runs(&pid_file)
        }
    }

    impl Drop for Helper {
        fn drop(&mut self) {
            let _ = std::fs::write(self.dir.path().join("release"), "");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::test_events::{Helper, eventually, runs};
    use super::*;

    fn sh(script: &str) -> Command {
        let mut command = Command::new("/bin/sh");
        command.args(["-c", script]);
        command
    }

    #[test]
    fn a_program_that_ends_gives_its_output() {
        let output = run(
            &mut sh("echo out; echo err >&2; exit 3"),
            &Job::new(Duration::from_secs(10), Group::Shared),
        )
        .unwrap()
        .output()
        .expect("it ended");
        assert_eq!(output.status.code(), Some(3));
        assert_eq!(output.stdout, b"out\n");
        assert_eq!(output.stderr, b"err\n");
    }

    #[test]
    fn its_stdin_is_what_it_is_given() {
        let input = vec![b'x'; 300_000];
        let output = run(
            &mut sh("wc -c"),
            &Job::new(Duration::from_secs(10), Group::Own).stdin(&input),
        )
        .unwrap()
        .output()
        .unwrap();
        assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), "300000");
    }

    #[test]
    fn an_overrun_ends_the_program_and_what_it_started() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("grandchild");
        // A grandchild that says its pid, then would outlive its parent's deadline.
        let script = format!(
            "sh -c 'echo $$ > {p}.new && mv {p}.new {p} && exec sleep 30' &\nwhile [ ! -e {p} ]; do sleep 0.01; done\nsleep 30",
            p = pid_file.display()
        );
        let ran = run(
            &mut sh(&script),
            &Job::new(Duration::from_millis(200), Group::Own),
        )
        .unwrap();
        assert_eq!(
            ran.end.unwrap_err(),
            Stopped::Late(Duration::from_millis(200))
        );
        // Killed with its group: gone once the kernel has delivered the kill. One that had
        // not said its pid yet was killed before it could.
        if pid_file.exists() {
            assert!(
                eventually(|| !runs(&pid_file)),
                "the grandchild outlived its group's kill"
            );
        }
    }

    #[test]
    fn a_helper_out_of_reach_holding_stdout_does_not_hold_the_wait() {
        // `setsid` puts the helper beyond the group's kill; it keeps stdout until released.
        // A wait that held for it would end at the 20 s deadline, not with the output.
        for group in [Group::Own, Group::Shared] {
            let helper = Helper::new();
            let output = run(
                &mut sh(&format!("{}echo hi", helper.start())),
                &Job::new(Duration::from_secs(20), group),
            )
            .unwrap()
            .output()
            .expect("it exited");
            assert_eq!(output.stdout, b"hi\n");
            assert!(helper.still_running(), "{group:?}: the helper ended first");
        }
    }

    #[test]
    fn a_program_that_goes_on_without_its_pipes_is_still_bounded() {
        // Its pipes close at once: a wait that went by them alone would see it end after
        // its 30 s, not late.
        let ran = run(
            &mut sh("exec >/dev/null 2>&1; setsid sleep 30 & sleep 30"),
            &Job::new(Duration::from_millis(500), Group::Own),
        )
        .unwrap();
        assert!(matches!(ran.end, Err(Stopped::Late(_))), "{ran:?}");
    }

    #[test]
    fn a_flood_is_cut_at_the_cap_and_ended() {
        // Finite, so that a door without its cap fails this test rather than the machine.
        let ran = run(
            &mut sh("head -c 50000000 /dev/zero"),
            &Job::new(Duration::from_secs(20), Group::Own).cap(10_000),
        )
        .unwrap();
        assert_eq!(ran.end.unwrap_err(), Stopped::Flooded(10_000));
        assert_eq!(ran.stdout.len(), 10_000);
    }

    #[test]
    fn a_program_that_prints_only_on_a_terminal_is_heard_through_one() {
        let script = "[ -t 1 ] && printf '\\033[1mhi\\033[0m\\n'; [ -t 2 ] || echo err >&2; exit 4";
        let job = Job::new(Duration::from_secs(10), Group::Own);
        let piped = run(&mut sh(script), &job).unwrap().output().unwrap();
        assert_eq!(piped.stdout, b"");
        let seen = run(&mut sh(script), &job.terminal(true))
            .unwrap()
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&seen.stdout), "hi\n");
        assert_eq!(seen.stderr, b"err\n", "stderr stays a pipe");
        assert_eq!(seen.status.code(), Some(4));
    }

    #[test]
    fn a_program_on_a_terminal_is_bounded_as_any() {
        let helper = Helper::new();
        let ran = run(
            &mut sh(&format!("{}sleep 30", helper.start())),
            &Job::new(Duration::from_millis(300), Group::Own).terminal(true),
        )
        .unwrap();
        assert!(matches!(ran.end, Err(Stopped::Late(_))), "{ran:?}");
        assert!(helper.still_running(), "the wait held for the helper");
        let flood = run(
            &mut sh("yes"),
            &Job::new(Duration::from_secs(20), Group::Own)
                .cap(10_000)
                .terminal(true),
        )
        .unwrap();
        assert_eq!(flood.end.unwrap_err(), Stopped::Flooded(10_000));
    }

    fn talk(say: &[u8]) -> Talk<'_> {
        Talk {
            timeout: Duration::from_secs(20),
            group: Group::Own,
            say,
            line_cap: 100,
            lines: 1000,
            cap: 1 << 20,
        }
    }

    #[test]
    fn a_conversation_ends_at_its_answer_with_stdin_still_open() {
        // It answers only after reading its input; `cat` would end at stdin's end.
        let heard = converse(
            &mut sh("read a; echo noise; echo \"got $a\"; sleep 30"),
            &talk(b"ping\n"),
            |line| line.strip_prefix("got ").map(str::to_string),
        )
        .unwrap();
        assert_eq!(heard.answer.as_deref(), Some("ping"));
        assert_eq!(heard.stopped, None);
    }

    #[test]
    fn a_flooding_conversation_stops_at_its_line_cap() {
        let heard = converse(&mut sh("yes"), &talk(b""), |_| None::<()>).unwrap();
        assert!(heard.answer.is_none());
        assert_eq!(heard.stopped, Some(Stopped::Flooded(1 << 20)));
        // A thousand lines of "y\n", read a pipe's worth at a time.
        assert!(heard.read < 200_000, "{}", heard.read);
    }

    #[test]
    fn a_flood_of_one_endless_line_stops_at_the_byte_cap() {
        let heard = converse(
            &mut sh("tr '\\0' x < /dev/zero"),
            &Talk {
                cap: 100_000,
                ..talk(b"")
            },
            |_| Some(()),
        )
        .unwrap();
        assert!(
            heard.answer.is_none(),
            "a line past the line cap is skipped"
        );
        assert_eq!(heard.stopped, Some(Stopped::Flooded(100_000)));
        assert!(heard.read < 100_000 + 64 * 1024 + 1, "{}", heard.read);
    }

    #[test]
    fn a_silent_conversation_ends_at_its_deadline() {
        let helper = Helper::new();
        let heard = converse(
            &mut sh(&format!("{}sleep 30", helper.start())),
            &Talk {
                timeout: Duration::from_millis(300),
                ..talk(b"")
            },
            |_| Some(()),
        )
        .unwrap();
        assert_eq!(
            heard.stopped,
            Some(Stopped::Late(Duration::from_millis(300)))
        );
        assert!(
            helper.still_running(),
            "the conversation held for the helper"
        );
    }
}
