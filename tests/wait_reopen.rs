//! `--wait` re-judges every rung by the one rule the launch chooses by (DESIGN §18): any
//! reopening ends the wait — a statusline feed that reopens Claude Code runs it at once, not
//! at the reset first computed — and a reopening while the lower rungs are tried is taken.

use std::io::Write as _;
use std::process::Stdio;

use jiff::Timestamp;
use serde_json::json;

use crate::parking::{
    claude_login, codex_login, codex_on_chatgpt, five_hour, in_hours, write_logins, write_windows,
};
use crate::support::watched::{finish, start_until};
use crate::support::{Sandbox, launched_words};
use crate::world::world;

/// Claude Code's statusline JSON as it sends it after its 5-hour window reopened: a new
/// window, barely used, resetting five hours from now.
fn reopened_feed() -> String {
    let now = Timestamp::now().as_second();
    json!({
        "session_id": "abc123",
        "model": {"id": "claude-opus-4-8", "display_name": "Opus 4.8"},
        "version": "2.1.332",
        "rate_limits": {
            "five_hour": {"used_percentage": 3.0, "resets_at": now + 5 * 3600},
            "seven_day": {"used_percentage": 40.0, "resets_at": now + 3 * 86_400},
        },
    })
    .to_string()
}

/// Feeds `agent --statusline` as Claude Code does: the JSON on stdin.
fn feed_the_statusline(sb: &Sandbox) {
    let mut child = sb
        .command(&["--statusline"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("agent --statusline starts");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(reopened_feed().as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Claude Code on its own login, then Codex on its ChatGPT login (unprobed).
const CLAUDE_THEN_CODEX_ON_CHATGPT: &str = r#"
[backends.codex]
probe = { kind = "none" }

[[rungs]]
backend = "claude"
probe_model = "opus"

[[rungs]]
backend = "codex"
"#;

#[test]
fn a_statusline_feed_that_reopens_claude_ends_the_wait_though_codex_reopens_later() {
    let w = world();
    codex_on_chatgpt(&w.sb);
    w.sb.write_config(CLAUDE_THEN_CODEX_ON_CHATGPT);
    // Claude's window resets in an hour, Codex's in two: the wait counts down to Claude's.
    write_logins(
        &w.sb,
        &[
            (&claude_login(&w.sb), &[(five_hour(), 100.0, in_hours(1))]),
            (&codex_login(&w.sb), &[(five_hour(), 100.0, in_hours(2))]),
        ],
    );
    let (child, _, rx) = start_until(&w.sb, &["--wait", "-p", "hi"], |line| {
        line.contains("[agent] waiting for ")
    });

    // Claude Code, used by hand, feeds its statusline: the login's window reopened.
    feed_the_statusline(&w.sb);
    // Killed after 20 s: no reset is anywhere near.
    let (code, stderr) = finish(child, &rx);

    assert_eq!(code, Some(0), "{stderr}");
    let calls = w.sb.calls("claude");
    assert_eq!(calls.len(), 1, "{stderr}");
    assert_eq!(launched_words(&calls[0].argv), ["-p", "hi"]);
    assert!(
        w.sb.calls("codex")
            .iter()
            .all(|call| call.argv.first().map(String::as_str) == Some("app-server")),
        "{stderr}"
    );
}

#[test]
fn a_reopening_while_the_lower_rung_runs_is_taken_when_it_fails() {
    let w = world();
    w.sb.write_config(crate::world::CLAUDE_THEN_CODEX);
    write_windows(
        &w.sb,
        &claude_login(&w.sb),
        &[(five_hour(), 100.0, in_hours(1))],
    );
    // Codex runs until the test says so, then fails fast (well inside fastfail_seconds).
    let go = w.sb.tmp_dir().join("go");
    nix::unistd::mkfifo(&go, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    w.sb.fake_cli("codex")
        .script("read _ < \"$TMPDIR/go\"\necho 'codex: upstream error' >&2\nexit 1")
        .install();
    let (child, _, rx) = start_until(&w.sb, &["--wait", "-p", "hi"], |line| {
        line.contains("[agent] using Codex")
    });

    // While Codex runs, Claude Code's statusline reports the login reopened.
    feed_the_statusline(&w.sb);
    std::fs::OpenOptions::new()
        .write(true)
        .open(&go)
        .and_then(|mut fifo| fifo.write_all(b"fail now\n"))
        .unwrap();
    let (code, stderr) = finish(child, &rx);

    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(w.sb.calls("codex").len(), 1, "{stderr}");
    let calls = w.sb.calls("claude");
    assert_eq!(calls.len(), 1, "{stderr}");
    assert_eq!(launched_words(&calls[0].argv), ["-p", "hi"]);
    assert!(
        stderr.contains("[agent] Claude Code (its default model) reopened while the rungs below it were tried — running it"),
        "{stderr}"
    );
}
