//! A tmux server of a test's own, for what only a terminal shows: a program that asks a
//! question, draws a screen, or behaves otherwise when its stdin and stderr are a terminal.

use std::fs;
use std::path::{Path, PathBuf};

use super::Sandbox;

/// A tmux server of the test's own (its own socket), running one program in a 160×40
/// window with the sandbox's environment; killed on drop.
pub struct Tmux {
    socket: PathBuf,
    /// The server's pid: killed on drop even when `kill-server` cannot reach it.
    server: Option<u32>,
}

impl Tmux {
    pub fn start(sb: &Sandbox, cwd: &Path, argv: &[&str]) -> Tmux {
        let socket = sb.tmp_dir().join("tmux.sock");
        let template = sb.command(&[]);
        let mut cmd = std::process::Command::new("tmux");
        cmd.env_clear();
        for (key, value) in template.get_envs() {
            if let Some(value) = value {
                cmd.env(key, value);
            }
        }
        cmd.env("TERM", "xterm-256color")
            .arg("-S")
            .arg(&socket)
            .args([
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                "-x",
                "160",
                "-y",
                "40",
                "-c",
            ])
            .arg(cwd)
            .args(argv);
        // The server outlives this command: it must hold none of the test harness's pipes, or
        // whatever waits for their end (faketime in scripts/test-at-dates.sh) waits for ever
        // when a server survives its test.
        let status = cmd
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .expect("tmux runs (apt-get install tmux)");
        assert!(status.success(), "tmux new-session failed");
        let mut session = Tmux {
            socket,
            server: None,
        };
        session.server = session
            .tmux(&["display-message", "-p", "#{pid}"])
            .trim()
            .parse()
            .ok();
        session
    }

    /// As [`Tmux::start`], with everything the pane shows kept in `log` from its first
    /// byte (a program's first lines may be drawn over): the program waits for a key
    /// until the pane's output is piped there.
    pub fn start_recorded(sb: &Sandbox, cwd: &Path, argv: &[&str], log: &Path) -> Tmux {
        let mut gated = vec!["/bin/sh", "-c", "read -r _ && exec \"$@\"", "sh"];
        gated.extend(argv);
        let session = Tmux::start(sb, cwd, &gated);
        let log = log.to_str().expect("a UTF-8 path");
        session.tmux(&["pipe-pane", "-o", "-t", "0", &format!("cat >> '{log}'")]);
        session.tmux(&["send-keys", "-t", "0", "Enter"]);
        session
    }

    /// The pane's program and every process under it, each with its argv and
    /// environment, read from `/proc`.
    pub fn processes(&self) -> Vec<Process> {
        let pane = self.tmux(&["list-panes", "-t", "0", "-F", "#{pane_pid}"]);
        let pane: u32 = pane.trim().parse().expect("the pane's pid");
        let parent_of = |pid: u32| -> Option<u32> {
            let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            // `pid (comm) state ppid …`: comm may hold spaces and parentheses.
            let rest = &stat[stat.rfind(')')? + 2..];
            rest.split(' ').nth(1)?.parse().ok()
        };
        let nul_split = |bytes: Vec<u8>| -> Vec<String> {
            bytes
                .split(|b| *b == 0)
                .filter(|part| !part.is_empty())
                .map(|part| String::from_utf8_lossy(part).into_owned())
                .collect()
        };
        let mut found = Vec::new();
        for entry in fs::read_dir("/proc").expect("/proc").flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            let mut at = Some(pid);
            let under_pane = loop {
                match at {
                    Some(p) if p == pane => break true,
                    Some(p) if p > 1 => at = parent_of(p),
                    _ => break false,
                }
            };
            if !under_pane {
                continue;
            }
            let argv = nul_split(fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default());
            let env = nul_split(fs::read(format!("/proc/{pid}/environ")).unwrap_or_default())
                .into_iter()
                .filter_map(|pair| {
                    pair.split_once('=')
                        .map(|(k, v)| (k.to_string(), v.to_string()))
                })
                .collect();
            found.push(Process { argv, env });
        }
        found
    }

    pub fn tmux(&self, args: &[&str]) -> String {
        let output = std::process::Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("tmux runs");
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    pub fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-t", "0"])
    }

    pub fn send_line(&self, text: &str) {
        self.tmux(&["send-keys", "-t", "0", "-l", text]);
        std::thread::sleep(std::time::Duration::from_millis(300));
        self.tmux(&["send-keys", "-t", "0", "Enter"]);
    }

    /// The screen with the lines the terminal wrapped joined again: a line longer than
    /// the window reads whole.
    pub fn joined_screen(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-J", "-t", "0"])
    }

    /// The screen once `ready` holds; panics with the last screen after `seconds`.
    pub fn wait_for(&self, ready: impl Fn(&str) -> bool, seconds: u64) -> String {
        self.wait_on(Self::screen, ready, seconds)
    }

    /// [`Tmux::joined_screen`] once `ready` holds; panics with it after `seconds`.
    pub fn wait_for_joined(&self, ready: impl Fn(&str) -> bool, seconds: u64) -> String {
        self.wait_on(Self::joined_screen, ready, seconds)
    }

    fn wait_on(
        &self,
        capture: fn(&Self) -> String,
        ready: impl Fn(&str) -> bool,
        seconds: u64,
    ) -> String {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(seconds);
        loop {
            let screen = capture(self);
            if ready(&screen) {
                return screen;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the screen never showed what was awaited:\n{screen}"
            );
            std::thread::sleep(std::time::Duration::from_millis(250));
        }
    }
}

/// A process as `/proc` shows it.
#[derive(Debug)]
pub struct Process {
    pub argv: Vec<String>,
    pub env: std::collections::BTreeMap<String, String>,
}

impl Drop for Tmux {
    fn drop(&mut self) {
        self.tmux(&["kill-server"]);
        if let Some(pid) = self.server {
            // Gone already after kill-server; if not (seen under libfaketime), now.
            let _ = std::process::Command::new("kill")
                .args(["-9", &pid.to_string()])
                .stderr(std::process::Stdio::null())
                .status();
        }
    }
}
