//! A Codex run's record is the session agent started, never another in the same folder
//! (issue 39, item 5). The user's own Codex session in the folder — begun before the launch,
//! still writing — is newer on disk than the run agent started; the newest rollout was
//! taken for the run's, so its task reached the brief, its windows were the run's, and the
//! real limit of agent's own session was missed.

use serde_json::json;

use crate::support::Sandbox;
use crate::world::world;

/// The session agent's launch of Codex starts.
const OURS: &str = "019a0000-aaaa-7000-8000-00000000000a";
/// The user's own Codex session in the same folder.
const THEIRS: &str = "019a0000-bbbb-7000-8000-00000000000b";
const THEIR_TASK: &str = "private notes of a colleague";
const OUR_REPLY: &str = "Refactored the parser; the tests are next.";

/// A Codex logged in with ChatGPT, then Gemini CLI, with a one-second fast-failure threshold.
fn codex_then_gemini(sb: &Sandbox) {
    sb.write_file(".codex/config.toml", "model = \"gpt-test-codex\"\n");
    sb.write_file(
        ".codex/auth.json",
        r#"{"auth_mode": "chatgpt", "tokens": {"id_token": "x", "access_token": "y", "refresh_token": "z", "account_id": "a"}}"#,
    );
    sb.write_config(
        "fastfail_seconds = 1\n\n[backends.codex]\nprobe = { kind = \"none\" }\n\n[[rungs]]\nbackend = \"codex\"\n\n[[rungs]]\nbackend = \"gemini\"\n",
    );
}

/// A 5-hour window `percent` full, as Codex's `token_count` line says it.
fn token_count(percent: f64) -> String {
    let reset = jiff::Timestamp::now().as_second() + 4 * 3600;
    json!({"timestamp": "@NOW@", "type": "event_msg", "payload": {"type": "token_count",
        "info": null, "rate_limits": {"limit_id": "codex",
        "primary": {"used_percent": percent, "window_minutes": 300, "resets_at": reset},
        "secondary": {"used_percent": 10.0, "window_minutes": 10080, "resets_at": reset + 86_400}}}})
    .to_string()
}

fn message(role: &str, kind: &str, text: &str) -> String {
    json!({"timestamp": "@NOW@", "type": "response_item", "payload": {"type": "message",
        "role": role, "content": [{"type": kind, "text": text}]}})
    .to_string()
}

fn session_meta(id: &str, at: &str) -> String {
    json!({"timestamp": at, "type": "session_meta", "payload": {"id": id, "timestamp": at,
        "cwd": "@CWD@", "originator": "codex_exec", "cli_version": "0.171.0"}})
    .to_string()
}

/// A fake Codex whose run is a session of its own (`ours_at`: its 5-hour window's percent)
/// while the user's session in the same folder (`theirs_at`), begun an hour before, writes
/// on after it; with `header`, it prints its session id as `codex exec` does. It works past
/// the threshold and exits 1.
fn two_sessions_in_one_folder(sb: &Sandbox, ours_at: f64, theirs_at: f64, header: bool) {
    let day = jiff::Timestamp::now().strftime("%Y/%m/%d").to_string();
    let dir = sb.home().join(".codex/sessions").join(day);
    let ours = [
        session_meta(OURS, "@NOW@"),
        message("user", "input_text", "Fix the parser"),
        message("assistant", "output_text", OUR_REPLY),
        token_count(ours_at),
    ]
    .join("\n");
    let theirs = [
        message("user", "input_text", THEIR_TASK),
        message("assistant", "output_text", "Noted, privately."),
        token_count(theirs_at),
    ]
    .join("\n");
    let old = session_meta(THEIRS, "@OLD@");
    let header = if header {
        format!(
            "printf 'OpenAI Codex v0.171.0\\n--------\\nworkdir: %s\\nsession id: {OURS}\\n--------\\n' \"$cwd\" >&2"
        )
    } else {
        String::new()
    };
    sb.fake_cli("codex")
        .script(&format!(
            r#"[ "$1" = app-server ] && exit 0
mkdir -p '{dir}'
cwd=$(pwd -P)
stamp() {{ sed "s|@NOW@|$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)|g; s|@OLD@|$(date -u -d '-1 hour' +%Y-%m-%dT%H:%M:%S.%3NZ)|g; s|@CWD@|$cwd|g"; }}
{header}
theirs='{dir}/rollout-2026-01-01T00-00-00-{THEIRS}.jsonl'
[ -f "$theirs" ] || printf '%s\n' '{old}' | stamp > "$theirs"
touch -d '-1 hour' "$theirs"
ours='{dir}/rollout-2026-01-01T01-00-00-{OURS}.jsonl'
printf '%s\n' '{ours}' | stamp >> "$ours"
# Stamped by the clock it runs on (a test's clock may not be the file system's).
touch -d "$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)" "$ours"
sleep 1.3
printf '%s\n' '{theirs_lines}' | stamp >> "$theirs"
touch -d "$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)" "$theirs"
exit 1"#,
            dir = dir.display(),
            theirs_lines = theirs,
        ))
        .install();
}

#[test]
fn the_brief_of_a_codex_session_that_ran_out_is_its_own_not_the_users_other_one() {
    let w = world();
    codex_then_gemini(&w.sb);
    two_sessions_in_one_folder(&w.sb, 100.0, 20.0, true);

    let run =
        w.sb.run(&["--on-limit", "continue", "-p", "Fix the parser"]);

    let words = "with a brief of the session: ";
    let at = run
        .stderr
        .find(words)
        .unwrap_or_else(|| panic!("no hand-off: {run:?}"));
    let path = run.stderr[at + words.len()..]
        .lines()
        .next()
        .unwrap()
        .trim();
    let brief = std::fs::read_to_string(path).unwrap();
    assert!(brief.contains(OURS), "{brief}");
    assert!(brief.contains(OUR_REPLY), "{brief}");
    assert!(!brief.contains(THEIRS), "{brief}");
    assert!(!brief.contains(THEIR_TASK), "{brief}");
    assert_eq!(w.sb.calls("gemini").len(), 1, "{run:?}");
}

#[test]
fn another_sessions_limit_in_the_folder_is_never_taken_for_the_runs_own() {
    let w = world();
    codex_then_gemini(&w.sb);
    // No header this time: the run's session is the one begun since the launch.
    two_sessions_in_one_folder(&w.sb, 20.0, 100.0, false);

    let run =
        w.sb.run(&["--on-limit", "continue", "-p", "Fix the parser"]);

    assert_eq!(
        run.code,
        Some(1),
        "its own code, nothing handed on: {run:?}"
    );
    assert!(!run.stderr.contains("ran out of its window"), "{run:?}");
    assert!(w.sb.calls("gemini").is_empty(), "{run:?}");
    let windows =
        std::fs::read_to_string(w.sb.state_dir().join("windows.json")).unwrap_or_default();
    assert!(!windows.contains("\"used_percent\":100"), "{windows}");
}
