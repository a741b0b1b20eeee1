//! A real `redis-server` (Debian's package; `.ci/run` installs it where missing) on a free
//! loopback port, with nothing saved to disk, and a minimal RESP client to look inside it.
//!
//! ```ignore
//! let redis = RedisServer::start();
//! sb.write_config(&format!("[store]\nkind = \"redis\"\nurl = \"{}\"\n", redis.url()));
//! redis.stop();     // an outage
//! redis.restart();  // the same port again, empty
//! redis.flushall(); // the server up, its data gone
//! redis.pause();    // SIGSTOP: connections open, nothing answered until
//! redis.resume();   // SIGCONT
//! ```

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

pub struct RedisServer {
    port: u16,
    dir: tempfile::TempDir,
    child: Option<Child>,
}

/// One RESP answer, as far as tests need it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resp {
    Simple(String),
    Error(String),
    Int(i64),
    Bulk(Option<Vec<u8>>),
    Array(Vec<Resp>),
}

impl Resp {
    pub fn int(&self) -> i64 {
        match self {
            Resp::Int(n) => *n,
            other => panic!("not an integer: {other:?}"),
        }
    }

    pub fn text(&self) -> Option<String> {
        match self {
            Resp::Bulk(Some(bytes)) => Some(String::from_utf8_lossy(bytes).into_owned()),
            Resp::Simple(text) => Some(text.clone()),
            _ => None,
        }
    }
}

fn binary() -> String {
    for candidate in ["/usr/bin/redis-server", "/usr/local/bin/redis-server"] {
        if std::path::Path::new(candidate).exists() {
            return candidate.to_string();
        }
    }
    "redis-server".to_string()
}

impl RedisServer {
    pub fn start() -> RedisServer {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let dir = tempfile::tempdir().expect("redis dir");
        let mut server = RedisServer {
            port,
            dir,
            child: None,
        };
        server.restart();
        server
    }

    /// `redis://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// Starts the server (again) on its port and waits until it answers PING.
    pub fn restart(&mut self) {
        self.stop();
        let mut command = Command::new(binary());
        // redis-server cannot start under libfaketime; it keeps the machine's clock.
        super::clock::without_faked_clock(&mut command);
        let child = command
            .args([
                "--port",
                &self.port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
            ])
            .arg(self.dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server from Debian's package (apt-get install redis-server)");
        self.child = Some(child);
        super::wait::until(
            "redis-server answering PING",
            || matches!(self.try_command(&["PING"]), Ok(Resp::Simple(pong)) if pong == "PONG"),
        );
    }

    /// Kills the server (an outage); the port stays this server's for [`RedisServer::restart`].
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// `FLUSHALL`: the server forgets everything (as a restart without persistence or a
    /// failover to an empty replica would), while it keeps answering.
    pub fn flushall(&self) {
        assert_eq!(self.command(&["FLUSHALL"]), Resp::Simple("OK".into()));
    }

    /// SIGSTOP: the server holds every connection and answers nothing until
    /// [`RedisServer::resume`] (a stall: a fork to save, a slow script, a VM paused).
    pub fn pause(&self) {
        self.signal("STOP");
    }

    /// SIGCONT after [`RedisServer::pause`].
    pub fn resume(&self) {
        self.signal("CONT");
    }

    fn signal(&self, name: &str) {
        let child = self.child.as_ref().expect("redis-server is running");
        let status = Command::new("kill")
            .args(["-s", name, &child.id().to_string()])
            .status()
            .expect("kill");
        assert!(status.success(), "kill -s {name} redis-server");
    }

    pub fn command(&self, args: &[&str]) -> Resp {
        self.try_command(args)
            .unwrap_or_else(|e| panic!("redis {args:?}: {e}"))
    }

    fn try_command(&self, args: &[&str]) -> std::io::Result<Resp> {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port))?;
        stream.set_read_timeout(Some(super::wait::PATIENCE))?;
        let mut request = format!("*{}\r\n", args.len()).into_bytes();
        for arg in args {
            request.extend_from_slice(format!("${}\r\n{arg}\r\n", arg.len()).as_bytes());
        }
        stream.write_all(&request)?;
        read(&mut BufReader::new(stream))
    }

    /// How many entries the stream `key` holds.
    pub fn stream_len(&self, key: &str) -> i64 {
        self.command(&["XLEN", key]).int()
    }

    /// The `j` documents of the stream `key`, oldest first.
    pub fn stream(&self, key: &str) -> Vec<serde_json::Value> {
        let Resp::Array(entries) = self.command(&["XRANGE", key, "-", "+"]) else {
            panic!("XRANGE answered no array")
        };
        entries
            .iter()
            .filter_map(|entry| match entry {
                Resp::Array(parts) => match parts.get(1) {
                    Some(Resp::Array(fields)) => fields.get(1).and_then(Resp::text),
                    _ => None,
                },
                _ => None,
            })
            .map(|text| serde_json::from_str(&text).expect("a stream entry is JSON"))
            .collect()
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
    }
}

fn read(reader: &mut impl BufRead) -> std::io::Result<Resp> {
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let line = line.trim_end();
    let (kind, rest) = line.split_at(1.min(line.len()));
    let bad = || std::io::Error::other(format!("bad RESP line {line:?}"));
    Ok(match kind {
        "+" => Resp::Simple(rest.to_string()),
        "-" => Resp::Error(rest.to_string()),
        ":" => Resp::Int(rest.parse().map_err(|_| bad())?),
        "$" => {
            let len: i64 = rest.parse().map_err(|_| bad())?;
            if len < 0 {
                Resp::Bulk(None)
            } else {
                let mut bytes = vec![0; usize::try_from(len).unwrap_or(0) + 2];
                reader.read_exact(&mut bytes)?;
                bytes.truncate(bytes.len() - 2);
                Resp::Bulk(Some(bytes))
            }
        }
        "*" => {
            let len: i64 = rest.parse().map_err(|_| bad())?;
            let mut items = Vec::new();
            for _ in 0..len.max(0) {
                items.push(read(reader)?);
            }
            Resp::Array(items)
        }
        _ => return Err(bad()),
    })
}
