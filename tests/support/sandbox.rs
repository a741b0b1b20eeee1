//! A throw-away world to run the `agent` binary in: temp `HOME`, config and state
//! directories, and fake CLIs (shell scripts on a private `PATH`) that record every run.
//!
//! ```ignore
//! let sb = Sandbox::new();
//! sb.env("AGENT_PROXY_URL", api.url());
//! sb.fake_cli("claude").stdout("hello\n").install();
//! let run = sb.run(&["-p", "hi"]);
//! assert_eq!(run.code, Some(0), "{run:?}");
//! assert_eq!(sb.calls("claude")[0].argv, ["-p", "hi"]);
//! ```
//!
//! Layout under the temp root: `home/` (also the working directory), `home/.config/agent/`,
//! `state/` (`AGENT_STATE_DIR`), `bin/` (first on `PATH`), `calls/` (what fakes recorded),
//! `tmp/` (`TMPDIR`).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::io::{self, Read};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use tempfile::TempDir;

/// How long [`Sandbox::run`] lets `agent` run before killing it.
pub const RUN_TIMEOUT: Duration = Duration::from_secs(60);

pub struct Sandbox {
    root: TempDir,
    home: PathBuf,
    state: PathBuf,
    bin: PathBuf,
    calls: PathBuf,
    tmp: PathBuf,
    env: RefCell<Vec<(String, String)>>,
    cwd: RefCell<Option<PathBuf>>,
}

/// The outcome of one run.
#[derive(Debug)]
pub struct Run {
    /// The exit code, `None` when killed by a signal.
    pub code: Option<i32>,
    /// The signal that killed it, if any.
    pub signal: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
    /// True when the safety timeout killed it.
    pub timed_out: bool,
}

impl Run {
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }
}

/// One run of a fake CLI, as it recorded itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invocation {
    /// Arguments, without argv[0].
    pub argv: Vec<String>,
    pub env: BTreeMap<String, String>,
    /// Got SIGTERM (only recorded by fakes installed with `record_term`).
    pub term_received: bool,
    /// The signal name it got, `TERM`, `HUP` or `INT` (only with `record_term`).
    pub signal: Option<String>,
}

impl Default for Sandbox {
    fn default() -> Self {
        Self::new()
    }
}

impl Sandbox {
    pub fn new() -> Self {
        let root = tempfile::Builder::new()
            .prefix("agent-test-")
            .tempdir()
            .expect("create sandbox temp dir");
        let base = root.path().to_path_buf();
        let sb = Sandbox {
            home: base.join("home"),
            state: base.join("state"),
            bin: base.join("bin"),
            calls: base.join("calls"),
            tmp: base.join("tmp"),
            root,
            env: RefCell::new(Vec::new()),
            cwd: RefCell::new(None),
        };
        for dir in [
            sb.home.join(".config/agent"),
            sb.state.clone(),
            sb.bin.clone(),
            sb.calls.clone(),
            sb.tmp.clone(),
        ] {
            fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("create {}: {e}", dir.display()));
        }
        sb
    }

    pub fn root(&self) -> &Path {
        self.root.path()
    }

    pub fn home(&self) -> &Path {
        &self.home
    }

    /// `AGENT_STATE_DIR`.
    pub fn state_dir(&self) -> &Path {
        &self.state
    }

    /// First on `PATH`; fakes are installed here.
    pub fn bin_dir(&self) -> &Path {
        &self.bin
    }

    pub fn calls_dir(&self) -> &Path {
        &self.calls
    }

    pub fn tmp_dir(&self) -> &Path {
        &self.tmp
    }

    /// `home/.config/agent/config.toml`.
    pub fn config_path(&self) -> PathBuf {
        self.home.join(".config/agent/config.toml")
    }

    pub fn write_config(&self, toml: &str) {
        write(&self.config_path(), toml);
    }

    /// Write a file under `home/`, creating its directories; returns its path.
    pub fn write_file(&self, rel_path: &str, contents: &str) -> PathBuf {
        let path = self.home.join(rel_path);
        write(&path, contents);
        path
    }

    /// Set an environment variable for every later `command`/`run` (replaces an earlier value).
    pub fn env(&self, key: &str, value: impl Into<String>) {
        let mut env = self.env.borrow_mut();
        env.retain(|(k, _)| k != key);
        env.push((key.to_owned(), value.into()));
    }

    /// Forget a variable set with [`Sandbox::env`].
    pub fn env_remove(&self, key: &str) {
        self.env.borrow_mut().retain(|(k, _)| k != key);
    }

    /// Run later commands in this directory (relative to `home/`, created if missing)
    /// instead of `home/` itself.
    pub fn set_cwd(&self, rel_path: &str) -> PathBuf {
        let dir = self.home.join(rel_path);
        fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("create {}: {e}", dir.display()));
        *self.cwd.borrow_mut() = Some(dir.clone());
        dir
    }

    /// Start describing a fake CLI called `name`; `.install()` writes it to `bin/`.
    pub fn fake_cli(&self, name: &str) -> FakeCli<'_> {
        FakeCli {
            sandbox: self,
            name: name.to_owned(),
            exit: 0,
            sleep_ms: 0,
            stdout: String::new(),
            stderr: String::new(),
            record_term: false,
            script: None,
        }
    }

    /// The `agent` binary with a clean environment: `HOME`, `PATH` (`bin/` first),
    /// `TMPDIR`, `XDG_CONFIG_HOME`, `XDG_STATE_HOME`, `AGENT_STATE_DIR`, the test's clock
    /// ([`super::clock::env`]), `PWD` naming the working directory as a shell would, then
    /// every [`Sandbox::env`] pair; stdin is null and the working directory is `home/`.
    pub fn command(&self, args: &[&str]) -> Command {
        self.command_of(Path::new(&agent_binary()), args)
    }

    /// `program` with the environment, standard input and directory [`Sandbox::command`]
    /// gives agent: as a user at that shell would start it.
    pub fn command_of(&self, program: &Path, args: &[&str]) -> Command {
        let mut cmd = Command::new(program);
        let cwd = self
            .cwd
            .borrow()
            .clone()
            .unwrap_or_else(|| self.home.clone());
        cmd.args(args)
            .env_clear()
            .env("PWD", &cwd)
            .env("HOME", &self.home)
            .env("PATH", format!("{}:/usr/bin:/bin", self.bin.display()))
            .env("TMPDIR", &self.tmp)
            .env("XDG_CONFIG_HOME", self.home.join(".config"))
            .env("XDG_STATE_HOME", self.home.join(".local/state"))
            .env("AGENT_STATE_DIR", &self.state)
            .envs(super::clock::env())
            .envs(self.env.borrow().iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .current_dir(&cwd);
        as_a_foreground_job(&mut cmd);
        cmd
    }

    /// Run `agent` to completion (killed after [`RUN_TIMEOUT`]).
    pub fn run(&self, args: &[&str]) -> Run {
        run_command(self.command(args), RUN_TIMEOUT)
    }

    /// Every recorded run of the fake `name`, oldest first (a run still writing its
    /// record is left out).
    pub fn calls(&self, name: &str) -> Vec<Invocation> {
        let dir = self.calls.join(name);
        let Ok(entries) = fs::read_dir(&dir) else {
            return Vec::new();
        };
        let mut runs: Vec<(u64, PathBuf)> = entries
            .filter_map(Result::ok)
            .filter_map(|e| {
                let seq = e.file_name().to_str()?.parse::<u64>().ok()?;
                Some((seq, e.path()))
            })
            .filter(|(_, path)| path.join("env").exists())
            .collect();
        runs.sort();
        runs.into_iter()
            .map(|(_, path)| {
                let argv = split_nul(&read_lossy(&path.join("argv")));
                let env = split_nul(&read_lossy(&path.join("env")))
                    .into_iter()
                    .filter_map(|pair| {
                        let (k, v) = pair.split_once('=')?;
                        Some((k.to_owned(), v.to_owned()))
                    })
                    .collect();
                let signal = fs::read_to_string(path.join("signal"))
                    .ok()
                    .map(|s| s.trim().to_owned());
                Invocation {
                    argv,
                    env,
                    term_received: signal.as_deref() == Some("TERM"),
                    signal,
                }
            })
            .collect()
    }

    /// Every file under the state directory, path relative to it, with its content
    /// (lossy UTF-8), sorted by path.
    pub fn state_files(&self) -> Vec<(PathBuf, String)> {
        files_under(&self.state)
    }
}

/// Every file under `dir` (recursively), path relative to `dir`, content as lossy
/// UTF-8, sorted by path.
pub fn files_under(dir: &Path) -> Vec<(PathBuf, String)> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<(PathBuf, String)>) {
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            match entry.file_type() {
                Ok(t) if t.is_dir() => walk(base, &path, out),
                Ok(t) if t.is_file() => {
                    let rel = path.strip_prefix(base).unwrap_or(&path).to_path_buf();
                    out.push((rel, read_lossy(&path)));
                }
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// Run a command to completion with piped stdout/stderr, in its own process group.
/// After `timeout` the whole group is killed; when the command exits, whatever it left
/// behind in its group is killed too, so the pipes close.
pub fn run_command(mut cmd: Command, timeout: Duration) -> Run {
    cmd.stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let start = Instant::now();
    let mut child = spawn(&mut cmd).unwrap_or_else(|e| panic!("spawn {cmd:?}: {e}"));
    let pid = child.id();
    let stdout = reader_thread(child.stdout.take());
    let stderr = reader_thread(child.stderr.take());
    let mut timed_out = false;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for child") {
            break status;
        }
        if start.elapsed() >= timeout {
            timed_out = true;
            kill_group(pid);
            break child.wait().expect("wait for killed child");
        }
        thread::sleep(Duration::from_millis(5));
    };
    let elapsed = start.elapsed();
    kill_group(pid);
    Run {
        code: status.code(),
        signal: status.signal(),
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
        elapsed,
        timed_out,
    }
}

/// Spawn, retrying briefly on ETXTBSY: a script just written by this test process can
/// be "busy" while another test thread's fork still holds its write descriptor.
pub fn spawn(cmd: &mut Command) -> io::Result<Child> {
    const ETXTBSY: i32 = 26;
    let mut tries = 0;
    loop {
        match cmd.spawn() {
            Err(e) if e.raw_os_error() == Some(ETXTBSY) && tries < 50 => {
                tries += 1;
                thread::sleep(Duration::from_millis(10));
            }
            other => return other,
        }
    }
}

/// SIGKILL every process in group `pgid` (quietly; the group may be gone).
pub fn kill_group(pgid: u32) {
    let _ = Command::new("kill")
        .args(["-s", "KILL", "--", &format!("-{pgid}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

fn reader_thread(pipe: Option<impl Read + Send + 'static>) -> thread::JoinHandle<String> {
    thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut bytes);
        }
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

fn write(path: &Path, contents: &str) {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).unwrap_or_else(|e| panic!("create {}: {e}", parent.display()));
    }
    fs::write(path, contents).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
}

fn read_lossy(path: &Path) -> String {
    fs::read(path)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default()
}

/// `a\0b\0` → `["a", "b"]`; `\0` → `[""]`; empty → `[]`.
fn split_nul(text: &str) -> Vec<String> {
    if text.is_empty() {
        return Vec::new();
    }
    text.strip_suffix('\0')
        .unwrap_or(text)
        .split('\0')
        .map(str::to_owned)
        .collect()
}

/// `it's` → `'it'\''s'`.
fn sh_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// A fake CLI being described; see [`Sandbox::fake_cli`].
///
/// Each run records `calls/<name>/<n>/argv` (NUL-separated) and `env` (`env -0`),
/// `n` counting 1, 2, 3… (an atomic `mkdir`, so parallel runs stay distinct), then
/// prints its stdout and stderr, sleeps, and exits with its code. A signal (TERM, HUP,
/// INT) during the sleep kills it by that signal, or — with `record_term` — is written
/// to `signal` and it exits 128+N.
#[must_use = "call .install() to write the fake"]
pub struct FakeCli<'a> {
    sandbox: &'a Sandbox,
    name: String,
    exit: i32,
    sleep_ms: u64,
    stdout: String,
    stderr: String,
    record_term: bool,
    script: Option<String>,
}

impl FakeCli<'_> {
    pub fn exit(mut self, code: i32) -> Self {
        self.exit = code;
        self
    }

    pub fn sleep_ms(mut self, ms: u64) -> Self {
        self.sleep_ms = ms;
        self
    }

    /// Printed exactly (no newline added).
    pub fn stdout(mut self, text: &str) -> Self {
        text.clone_into(&mut self.stdout);
        self
    }

    /// Printed exactly (no newline added).
    pub fn stderr(mut self, text: &str) -> Self {
        text.clone_into(&mut self.stderr);
        self
    }

    /// Record SIGTERM (and HUP, INT) and exit 128+N instead of dying by the signal.
    pub fn record_term(mut self) -> Self {
        self.record_term = true;
        self
    }

    /// Replace the print/sleep/exit part with this `sh` body (recording and signal
    /// traps still come first; `"$@"` are the arguments).
    pub fn script(mut self, body: &str) -> Self {
        self.script = Some(body.to_owned());
        self
    }

    /// The script text `install` writes.
    pub fn render(&self) -> String {
        let calls = self.sandbox.calls.join(&self.name);
        // On a signal: stop the sleep, then either record it and exit 128+N, or die by
        // it as a real program would.
        let on_signal = if self.record_term {
            "printf '%s' \"$1\" > \"$calls/$n/signal\"; exit \"$2\""
        } else {
            "trap - \"$1\"; kill -\"$1\" $$"
        };
        let mut s = format!(
            r#"#!/bin/sh
# Fake `{name}` written by tests/support/sandbox.rs: it records each run, then plays its part.
calls={calls}
mkdir -p "$calls"
n=1
while ! mkdir "$calls/$n" 2>/dev/null; do n=$((n + 1)); done
sleeper=
on_signal() {{
  [ -n "$sleeper" ] && kill "$sleeper" 2>/dev/null
  {on_signal}
}}
trap 'on_signal TERM 143' TERM
trap 'on_signal HUP 129' HUP
trap 'on_signal INT 130' INT
if [ "$#" -gt 0 ]; then printf '%s\0' "$@"; fi > "$calls/$n/argv"
env -0 > "$calls/$n/env.tmp" && mv "$calls/$n/env.tmp" "$calls/$n/env"
"#,
            name = self.name,
            calls = sh_quote(&calls.to_string_lossy()),
        );
        if let Some(body) = &self.script {
            s.push_str(body);
            s.push('\n');
            return s;
        }
        if !self.stdout.is_empty() {
            let _ = writeln!(s, "printf '%s' {}", sh_quote(&self.stdout));
        }
        if !self.stderr.is_empty() {
            let _ = writeln!(s, "printf '%s' {} >&2", sh_quote(&self.stderr));
        }
        if self.sleep_ms > 0 {
            // In the background so a trapped signal interrupts `wait` at once; its
            // output goes nowhere so a left-behind sleep holds no pipe open.
            let _ = writeln!(
                s,
                "sleep {}.{:03} >/dev/null 2>&1 </dev/null &\nsleeper=$!\nwait \"$sleeper\"\nsleeper=",
                self.sleep_ms / 1000,
                self.sleep_ms % 1000
            );
        }
        let _ = writeln!(s, "exit {}", self.exit);
        s
    }

    /// Write `bin/<name>` (mode 0755); returns its path.
    pub fn install(self) -> PathBuf {
        let path = self.sandbox.bin.join(&self.name);
        write(&path, &self.render());
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755))
            .unwrap_or_else(|e| panic!("chmod {}: {e}", path.display()));
        path
    }
}

/// The `agent` binary the sandbox runs: this build's, or `AGENT_TEST_BIN` when set, so a
/// new test can be shown to fail against an earlier build (`AGENT_TEST_BIN=/old/agent
/// cargo test --test lib NAME`).
pub fn agent_binary() -> std::ffi::OsString {
    std::env::var_os("AGENT_TEST_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_agent").into())
}

/// Starts `command` with Ctrl-C and Ctrl-\ at their defaults, as a terminal's foreground job
/// has them, whatever the process running the tests has: a script's background job (`cmd &`
/// in a shell without job control) ignores both, agent keeps an ignored signal ignored for
/// its CLI (as `nohup` asks), and a fake CLI in `sh` cannot then trap the Ctrl-C a test sends.
fn as_a_foreground_job(command: &mut Command) {
    use std::os::unix::process::CommandExt as _;
    // SAFETY: signal(2) is async-signal-safe, as pre_exec requires.
    unsafe {
        command.pre_exec(|| {
            use nix::sys::signal::{SigHandler, Signal, signal};
            for stop in [Signal::SIGINT, Signal::SIGQUIT] {
                signal(stop, SigHandler::SigDfl).map_err(std::io::Error::from)?;
            }
            Ok(())
        });
    }
}
