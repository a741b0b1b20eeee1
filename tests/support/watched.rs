//! `agent` run in the background with its stderr read line by line, for a test that must act
//! while it runs (send Ctrl-C during a wait, change a file it watches): started in its own
//! process group (the terminal's foreground group, as a user's shell makes it), handed back
//! once a line of its stderr says it has reached the point the test waits for.

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::Sandbox;
use super::sandbox::spawn;

/// Starts `agent ARGS` and returns it once a line of its stderr satisfies `reached` (with
/// the lines read so far, that one last, and the rest to come); panics with what it said
/// when no line does within 20 s of the one before.
pub fn start_until(
    sb: &Sandbox,
    args: &[&str],
    reached: impl Fn(&str) -> bool,
) -> (Child, Vec<String>, mpsc::Receiver<String>) {
    use std::os::unix::process::CommandExt as _;
    let mut command = sb.command(args);
    command
        .process_group(0)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = spawn(&mut command).expect("agent starts");
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut seen = Vec::new();
    loop {
        let Ok(line) = rx.recv_timeout(super::wait::PATIENCE) else {
            let _ = child.kill();
            let _ = child.wait();
            panic!("agent never reached what the test waits for: {seen:?}");
        };
        let done = reached(&line);
        seen.push(line);
        if done {
            return (child, seen, rx);
        }
    }
}

/// What the terminal does on Ctrl-C: INT to the whole foreground group.
pub fn ctrl_c(child: &Child) {
    nix::sys::signal::killpg(
        nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap()),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
}

/// Waits for `child` (killed after [`super::wait::PATIENCE`]) and returns its exit code
/// with the rest of its stderr.
pub fn finish(mut child: Child, rx: &mpsc::Receiver<String>) -> (Option<i32>, String) {
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > super::wait::PATIENCE {
            let _ = child.kill();
            break child.wait().unwrap();
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // The reader thread may not have read the last lines yet when the child is gone: read
    // until the pipe closes (the thread ends and the channel disconnects), bounded.
    let mut rest = Vec::new();
    let deadline = Instant::now() + super::wait::PATIENCE;
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        match rx.recv_timeout(left) {
            Ok(line) => rest.push(line),
            Err(_) => break,
        }
    }
    (status.code(), rest.join("\n"))
}
