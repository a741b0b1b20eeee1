//! `agent --relay serve` as a child process, and a raw HTTP/1.1 client to talk to it (raw
//! so tests can send absolute-form targets, wrong framing and stalls on purpose).
//!
//! ```ignore
//! let relay = RelayProc::start(&sb, &[]);           // listens on 127.0.0.1:<free port>
//! let answer = relay.post("/anthropic/v1/messages", Some(TOKEN), body, &[]);
//! assert_eq!(answer.status, 200);
//! relay.stop();                                     // SIGTERM: the books are written
//! ```

use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::os::fd::{AsRawFd as _, FromRawFd as _, OwnedFd};
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::thread;
use std::time::{Duration, Instant};

use super::sandbox::{Sandbox, kill_group, spawn};
use std::os::unix::process::CommandExt;

/// A running relay. Dropping it kills it.
pub struct RelayProc {
    child: Option<Child>,
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    /// `127.0.0.1:PORT`.
    pub addr: String,
    stderr: Arc<Mutex<String>>,
}

/// One answer, as received.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    /// Header names lower-cased.
    pub headers: Vec<(String, String)>,
    /// The body, de-chunked.
    pub body: String,
}

impl Answer {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
}

impl RelayProc {
    /// `agent --relay serve --listen 127.0.0.1:0 ARGS…` in the sandbox; waits until it
    /// says where it listens.
    pub fn start(sb: &Sandbox, args: &[&str]) -> RelayProc {
        RelayProc::start_with(sb, args, |_| {})
    }

    /// As [`RelayProc::start`], with the command adjusted first (its limits, say).
    pub fn start_with(
        sb: &Sandbox,
        args: &[&str],
        adjust: impl FnOnce(&mut std::process::Command),
    ) -> RelayProc {
        let mut argv = vec!["--relay", "serve", "--listen", "127.0.0.1:0"];
        argv.extend_from_slice(args);
        let mut cmd = sb.command(&argv);
        adjust(&mut cmd);
        cmd.stdout(Stdio::null())
            .stderr(Stdio::piped())
            .process_group(0);
        let mut child = spawn(&mut cmd).expect("spawn agent --relay serve");
        let stderr = Arc::new(Mutex::new(String::new()));
        let (sender, receiver) = mpsc::channel();
        let pipe = child.stderr.take().expect("stderr");
        let sink = Arc::clone(&stderr);
        thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                if let Some(rest) = line.split("relay listening on ").nth(1) {
                    let url = rest.split_whitespace().next().unwrap_or("").to_string();
                    let _ = sender.send(url);
                }
                let mut text = sink.lock().unwrap();
                text.push_str(&line);
                text.push('\n');
            }
        });
        let Ok(url) = receiver.recv_timeout(super::wait::PATIENCE) else {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "the relay did not start: {}",
                stderr.lock().unwrap().as_str()
            );
        };
        let addr = url.trim_start_matches("http://").to_string();
        RelayProc {
            child: Some(child),
            url,
            addr,
            stderr,
        }
    }

    /// The relay's process id.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }

    /// The relay's connected TCP sockets, each as a descriptor of this process: a copy of
    /// the relay's own (`pidfd_getfd`), the same socket, so its options and both of its
    /// addresses read as the relay's do.
    pub fn tcp_sockets(&self) -> Vec<TcpStream> {
        let pid = self.pid();
        // SAFETY: pidfd_open(pid, 0) reads no memory; it returns a new descriptor or -1.
        let pidfd = unsafe { nix::libc::syscall(nix::libc::SYS_pidfd_open, pid, 0) };
        assert!(
            pidfd >= 0,
            "pidfd_open: {}",
            std::io::Error::last_os_error()
        );
        // SAFETY: the descriptor was just opened for this process alone.
        let pidfd = unsafe { OwnedFd::from_raw_fd(i32::try_from(pidfd).unwrap()) };
        let mut sockets = Vec::new();
        for entry in std::fs::read_dir(format!("/proc/{pid}/fd")).unwrap() {
            let entry = entry.unwrap();
            let is_socket = std::fs::read_link(entry.path())
                .is_ok_and(|target| target.to_string_lossy().starts_with("socket:"));
            let Some(fd) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<i32>().ok())
            else {
                continue;
            };
            if !is_socket {
                continue;
            }
            // SAFETY: pidfd_getfd(pidfd, fd, 0) reads no memory; it returns a new
            // descriptor or -1 (the relay may have closed `fd` since it was listed).
            let copy =
                unsafe { nix::libc::syscall(nix::libc::SYS_pidfd_getfd, pidfd.as_raw_fd(), fd, 0) };
            if copy < 0 {
                continue;
            }
            // SAFETY: the copy was just made for this process alone.
            let copy = unsafe { OwnedFd::from_raw_fd(i32::try_from(copy).unwrap()) };
            let stream = TcpStream::from(copy);
            if stream.peer_addr().is_ok() {
                sockets.push(stream);
            }
        }
        sockets
    }

    /// What the relay printed so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// SIGTERM, then wait for it to finish its calls and write its books (failing past
    /// [`super::wait::PATIENCE`]).
    pub fn stop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        let pid = child.id();
        let _ = std::process::Command::new("kill")
            .args(["-s", "TERM", &pid.to_string()])
            .status();
        let deadline = Instant::now() + super::wait::PATIENCE;
        loop {
            if let Ok(Some(_)) = child.try_wait() {
                break;
            }
            if Instant::now() > deadline {
                kill_group(pid);
                let _ = child.wait();
                panic!("the relay did not stop on SIGTERM: {}", self.stderr());
            }
            thread::sleep(Duration::from_millis(10));
        }
        kill_group(pid);
    }

    /// SIGKILL, as a crash or the OOM killer would: no call finished, no books written.
    /// The process is reaped when this is dropped.
    pub fn kill9(&self) {
        if let Some(child) = &self.child {
            kill_group(child.id());
        }
    }

    /// A request as raw text (`\r\n` line ends are added to bare `\n`s of the head).
    pub fn raw(&self, head: &str, body: &str) -> Answer {
        raw(&self.addr, head, body)
    }

    /// `POST path` with a JSON body, the token as `x-api-key` when given, extra headers.
    pub fn post(
        &self,
        path: &str,
        token: Option<&str>,
        body: &str,
        headers: &[(&str, &str)],
    ) -> Answer {
        let mut head = format!(
            "POST {path} HTTP/1.1\nhost: {}\ncontent-type: application/json\ncontent-length: {}\nconnection: close\n",
            self.addr,
            body.len()
        );
        if let Some(token) = token {
            let _ = writeln!(head, "x-api-key: {token}");
        }
        for (name, value) in headers {
            let _ = writeln!(head, "{name}: {value}");
        }
        self.raw(&head, body)
    }

    /// `GET path`, with the token as a bearer when given.
    pub fn get(&self, path: &str, token: Option<&str>) -> Answer {
        let mut head = format!(
            "GET {path} HTTP/1.1\nhost: {}\nconnection: close\n",
            self.addr
        );
        if let Some(token) = token {
            let _ = writeln!(head, "authorization: Bearer {token}");
        }
        self.raw(&head, "")
    }
}

impl Drop for RelayProc {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            kill_group(child.id());
            let _ = child.wait();
        }
    }
}

/// Sends `head` (bare `\n` become `\r\n`; the blank line is added) and `body`, reads the
/// whole answer (the request should say `connection: close`).
pub fn raw(addr: &str, head: &str, body: &str) -> Answer {
    let mut stream = TcpStream::connect(addr).unwrap_or_else(|e| panic!("connect {addr}: {e}"));
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut text = head.trim_end().replace("\r\n", "\n").replace('\n', "\r\n");
    text.push_str("\r\n\r\n");
    text.push_str(body);
    stream.write_all(text.as_bytes()).expect("send the request");
    let mut bytes = Vec::new();
    let _ = stream.read_to_end(&mut bytes);
    parse(&String::from_utf8_lossy(&bytes))
}

/// Parses a whole HTTP/1.1 answer.
pub fn parse(text: &str) -> Answer {
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((text, ""));
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|line| line.split_whitespace().nth(1))
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {text:?}"));
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let chunked = headers
        .iter()
        .any(|(k, v)| k == "transfer-encoding" && v.contains("chunked"));
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_string()
    };
    Answer {
        status,
        headers,
        body,
    }
}

fn dechunk(mut text: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = text.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if size == 0 || rest.len() < size {
            break;
        }
        out.push_str(&rest[..size]);
        text = rest[size..].trim_start_matches("\r\n");
    }
    out
}
