//! The relay's connections against one local client opening as many as it can: the
//! open-file limit is raised, idle connections make room and time out, and a real call
//! still gets through.

use std::io::{ErrorKind, Read as _, Write as _};
use std::net::TcpStream;
use std::os::unix::process::CommandExt as _;
use std::process::Command;
use std::thread;
use std::time::Duration;

use nix::sys::resource::{Resource, getrlimit, setrlimit};

use crate::relay::{MODEL, TOKEN, messages_body, relay_world};
use crate::support::relay::{RelayProc, parse};
use crate::support::{Reply, Rule, wait};

/// What an attacker on this host opened in the issue: more than a default open-file limit.
const FLOOD: usize = 1100;

/// The relay's open-file limit set to `soft`/`hard` before it starts, as a shell's
/// `ulimit -n` would.
fn open_files(soft: u64, hard: u64) -> impl FnOnce(&mut Command) {
    move |command| {
        // SAFETY: setrlimit is async-signal-safe and touches nothing of the parent's.
        unsafe {
            command.pre_exec(move || {
                setrlimit(Resource::RLIMIT_NOFILE, soft, hard).map_err(std::io::Error::from)
            });
        }
    }
}

/// The relay's "Max open files" soft and hard limits, as the kernel shows them.
fn limits_of(pid: u32) -> (String, String) {
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap();
    let line = limits
        .lines()
        .find(|line| line.starts_with("Max open files"))
        .unwrap_or_else(|| panic!("no open-file line: {limits}"));
    let fields: Vec<&str> = line.split_whitespace().collect();
    (fields[3].to_string(), fields[4].to_string())
}

/// Whether the relay closed this connection (it reads the end), without waiting.
fn closed_by_relay(mut stream: &TcpStream) -> bool {
    stream.set_nonblocking(true).unwrap();
    let mut byte = [0u8; 1];
    match stream.read(&mut byte) {
        Ok(0) => true,
        Ok(_) => false,
        Err(err) => err.kind() != ErrorKind::WouldBlock,
    }
}

#[test]
fn the_soft_open_file_limit_is_raised_to_the_hard_one_at_start() {
    let (sb, _api) = relay_world();
    let relay = RelayProc::start_with(&sb, &[], open_files(1024, 4096));
    assert_eq!(
        limits_of(relay.pid()),
        ("4096".to_string(), "4096".to_string()),
        "{}",
        relay.stderr()
    );
}

#[test]
fn eleven_hundred_idle_connections_do_not_keep_a_real_call_out() {
    let (sb, api) = relay_world();
    // Headers may take five minutes: the old relay closed idle connections only then, so
    // without room made for it the real call below would wait as long.
    sb.write_config("[relay]\nclient_timeout_seconds = 300\n");
    // The default environment: 1024 descriptors, and no hard limit above to raise it to.
    let relay = RelayProc::start_with(&sb, &[], open_files(1024, 1024));
    // This test process needs the flood's descriptors itself.
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).unwrap();
    if soft < 2 * FLOOD as u64 {
        setrlimit(Resource::RLIMIT_NOFILE, hard, hard).unwrap();
    }

    let flood: Vec<TcpStream> = (0..FLOOD)
        .map(|n| {
            TcpStream::connect_timeout(&relay.addr.parse().unwrap(), Duration::from_secs(30))
                .unwrap_or_else(|e| panic!("connection {n}: {e}"))
        })
        .collect();

    let answer = relay.post(
        "/anthropic/v1/messages",
        Some(TOKEN),
        &messages_body(MODEL),
        &[],
    );
    assert_eq!(answer.status, 200, "{answer:?}\n{}", relay.stderr());
    assert_eq!(api.posts(), 1);

    // At most 256 connections from one address (its default cap, under 480 the limit
    // backs): the rest of the flood was closed to make room.
    let enough_closed =
        wait::eventually(|| flood.iter().filter(|s| closed_by_relay(s)).count() >= FLOOD - 256);
    let closed = flood.iter().filter(|s| closed_by_relay(s)).count();
    assert!(enough_closed, "only {closed} closed");
    let stderr = relay.stderr();
    assert!(
        stderr.contains("480 connections at once"),
        "the lowered cap is said: {stderr}"
    );
    let lines = stderr.matches("at its connection cap").count();
    assert!(
        (1..5).contains(&lines),
        "hundreds closed, a line a minute: {stderr}"
    );
}

#[test]
fn an_idle_connection_is_closed_after_the_idle_timeout() {
    let (sb, _api) = relay_world();
    // Headers may take five minutes: only the idle timeout closes these in time.
    sb.write_config("[relay]\nidle_timeout_seconds = 0.5\nclient_timeout_seconds = 300\n");
    let relay = RelayProc::start(&sb, &[]);

    // Nothing sent: closed.
    let mut silent = TcpStream::connect(&relay.addr).unwrap();
    silent
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut bytes = Vec::new();
    silent.read_to_end(&mut bytes).unwrap();
    assert!(bytes.is_empty(), "{bytes:?}");

    // Kept alive after an answer: closed once idle for as long.
    let mut kept = TcpStream::connect(&relay.addr).unwrap();
    kept.set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    write!(
        kept,
        "GET /healthz HTTP/1.1\r\nhost: {}\r\n\r\n",
        relay.addr
    )
    .unwrap();
    let mut bytes = Vec::new();
    kept.read_to_end(&mut bytes).unwrap();
    let answer = parse(&String::from_utf8_lossy(&bytes));
    assert_eq!(answer.status, 200, "{answer:?}");
}

#[test]
fn over_the_per_address_cap_with_every_call_busy_a_connection_is_refused_with_503() {
    let (sb, api) = relay_world();
    api.on(Rule::any().reply(Reply::hang()));
    sb.write_config("[relay]\nmax_connections = 10\nmax_connections_per_address = 2\n");
    let relay = RelayProc::start(&sb, &[]);

    let calls: Vec<_> = (0..2)
        .map(|_| {
            let addr = relay.addr.clone();
            thread::spawn(move || {
                let mut stream = TcpStream::connect(&addr).unwrap();
                let body = messages_body(MODEL);
                write!(
                    stream,
                    "POST /anthropic/v1/messages HTTP/1.1\r\nhost: {addr}\r\nx-api-key: {TOKEN}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                    body.len()
                )
                .unwrap();
                let mut rest = Vec::new();
                let _ = stream.read_to_end(&mut rest);
            })
        })
        .collect();
    // Both calls are in flight.
    api.wait_for_posts(2);

    // A third from the same address: answered at once and closed.
    let mut third = TcpStream::connect(&relay.addr).unwrap();
    third
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut bytes = Vec::new();
    let _ = third.read_to_end(&mut bytes);
    let refused = parse(&String::from_utf8_lossy(&bytes));
    assert_eq!(refused.status, 503, "{refused:?}");
    assert_eq!(refused.json()["error"]["type"], "overloaded_error");
    wait::until("the relay saying it refused one", || {
        relay.stderr().contains("refused 1")
    });
    assert!(
        relay
            .stderr()
            .contains("closed 0 idle connection(s) to make room and refused 1"),
        "{}",
        relay.stderr()
    );

    relay.kill9();
    for call in calls {
        call.join().unwrap();
    }
}
