//! The one way agent runs a short-lived program of its own (a probe's CLI, a secret
//! command, an alert command, a `--version`): stdin closed, output collected, and ended
//! with everything it started when it overruns its time.

use std::io;
use std::os::unix::process::CommandExt as _;
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;

/// What an overrun kills.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    /// The program runs in agent's process group (it may ask the terminal, as a password
    /// manager's pinentry does); an overrun kills the program alone.
    Shared,
    /// The program leads a process group of its own (a CLI that starts helpers); an
    /// overrun kills it and everything it started.
    Own,
}

/// Runs `command` to its end, or kills it after `timeout`: `Ok(None)` then. Its stdout
/// and stderr are read whole meanwhile, so a chatty program can never stall on a full pipe.
pub fn output_within(
    command: &mut Command,
    timeout: Duration,
    group: Group,
) -> io::Result<Option<Output>> {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if group == Group::Own {
        command.process_group(0);
    }
    let child = command.spawn()?;
    let pid = Pid::from_raw(child.id().cast_signed());
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(timeout) {
        Ok(output) => output.map(Some),
        Err(_) => {
            let _ = match group {
                Group::Own => killpg(pid, Signal::SIGKILL),
                Group::Shared => kill(pid, Signal::SIGKILL),
            };
            // The waiting thread reaps it now that it is dead.
            let _ = rx.recv();
            Ok(None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_that_ends_gives_its_output() {
        let output = output_within(
            Command::new("/bin/sh").args(["-c", "echo out; echo err >&2; exit 3"]),
            Duration::from_secs(10),
            Group::Shared,
        )
        .unwrap()
        .expect("it ended");
        assert_eq!(output.status.code(), Some(3));
        assert_eq!(output.stdout, b"out\n");
        assert_eq!(output.stderr, b"err\n");
    }

    #[test]
    fn an_overrun_ends_the_program_and_what_it_started() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("grandchild-ran");
        let script = format!("(sleep 1; touch {}) & sleep 30", marker.display());
        let output = output_within(
            Command::new("/bin/sh").args(["-c", &script]),
            Duration::from_millis(200),
            Group::Own,
        )
        .unwrap();
        assert!(output.is_none(), "it overran");
        std::thread::sleep(Duration::from_millis(1500));
        assert!(!marker.exists(), "the grandchild was killed with its group");
    }
}
