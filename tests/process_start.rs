//! agent starts without Rust's runtime start (`src/main.rs`, for a faster launch): what
//! that start did which a user would see is still done — a closed pipe ends agent quietly
//! instead of killing it, and the CLI starts with SIGPIPE as every program expects it.

use std::os::unix::process::ExitStatusExt as _;
use std::process::Stdio;

use crate::support::Sandbox;
use crate::world::{CLAUDE_THEN_CODEX, world};

#[test]
fn a_reader_that_went_away_ends_agent_quietly_not_by_sigpipe() {
    let sb = Sandbox::new();
    // A pipe whose reader is gone before agent writes a byte: every write is EPIPE.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = sb
        .command(&["--help"])
        .stdout(Stdio::from(writer))
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(out.status.signal(), None, "killed by a signal: {out:?}");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_cli_starts_with_sigpipe_as_every_program_expects() {
    let w = world();
    w.sb.write_config(CLAUDE_THEN_CODEX);
    let sb = &w.sb;
    let seen = sb.root().join("sigign");
    // The CLI's own view of its ignored signals (bit 13 is SIGPIPE).
    sb.fake_cli("claude")
        .script(&format!(
            "grep SigIgn /proc/self/status > '{}'\necho answered",
            seen.display()
        ))
        .install();
    let run = sb.run(&["-p", "hi"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let line = std::fs::read_to_string(&seen).unwrap();
    let mask = u64::from_str_radix(line.split_whitespace().nth(1).unwrap(), 16).unwrap();
    assert_eq!(
        mask & (1 << (13 - 1)),
        0,
        "SIGPIPE is ignored in the CLI: {line}"
    );
}
