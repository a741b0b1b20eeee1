//! A fake Codex 0.171 that carries a task handed to it: its `exec` session patches a file
//! for real, records its rollout as Codex does (its session id in its `session_meta`, the
//! patch, its answer, the turn complete) and names its session in its header on stderr, as
//! `codex exec` does; `exec resume ID` goes on in it.

use jiff::Timestamp;
use serde_json::json;

use super::Sandbox;

/// The file the session patches, relative to the sandbox's home.
pub const CODEX_EDITED: &str = "src/grammar.rs";

/// The id Codex gives its session (a UUIDv7, as 0.171 names them).
pub const CODEX_SESSION: &str = "019a7c2e-5e1b-7d30-9f4e-3c2b1a0f9e8d";

/// What it says as it stops.
pub const CODEX_DID: &str = "Ported the grammar; the error type is next.";

/// What a resumed run of it says.
pub const CODEX_WENT_ON: &str = "Added the error type; cargo test passes.";

/// A fake Codex 0.171: a new `exec` session patches [`CODEX_EDITED`] (really), records its
/// rollout as Codex does, names its session in its header on stderr and exits 0; a resumed
/// one (`exec resume ID`) says so and exits 0.
pub fn carrying_a_task(sb: &Sandbox) {
    carrying_a_task_then(sb, &format!("echo '{CODEX_WENT_ON}'; exit 0"));
}

/// [`carrying_a_task`] whose resumed session runs out of its window in turn: it
/// works past the threshold, its rollout marks the turn `usage_limit_exceeded` with its
/// 5-hour window full (resetting in two hours), and it exits 1.
pub fn carrying_a_task_then_running_out(sb: &Sandbox) {
    let lines = [
        json!({"timestamp": "@NOW@", "type": "event_msg", "payload": {"type": "token_count",
            "info": null, "rate_limits": {"limit_id": "codex",
            "primary": {"used_percent": 100.0, "window_minutes": 300, "resets_at": "@RESET@"}}}}),
        json!({"timestamp": "@NOW@", "type": "event_msg", "payload": {"type": "task_complete",
            "turn_id": "t2", "last_agent_message": null,
            "error": {"message": "You’ve hit your usage limit. Try again later.",
                      "codex_error_info": "usage_limit_exceeded"}}}),
    ];
    let template = sb.tmp_dir().join("codex-ran-out.jsonl");
    let text: Vec<String> = lines.iter().map(ToString::to_string).collect();
    std::fs::write(
        &template,
        (text.join("\n") + "\n").replace("\"@RESET@\"", "@RESET@"),
    )
    .unwrap();
    carrying_a_task_then(
        sb,
        &format!(
            r#"sleep 1.3
now=$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)
reset=$(( $(date +%s) + 7200 ))
f=$(ls "$HOME"/.codex/sessions/*/*/*/rollout-*-{CODEX_SESSION}.jsonl)
sed "s|@NOW@|$now|g; s|@RESET@|$reset|g" '{}' >> "$f"
touch -d "$now" "$f"
echo "You've hit your usage limit." >&2
exit 1"#,
            template.display()
        ),
    );
}

/// The fake Codex of [`carrying_a_task`], its resumed runs doing `resumed` (shell).
fn carrying_a_task_then(sb: &Sandbox, resumed: &str) {
    let patch = format!(
        "*** Begin Patch\n*** Update File: {CODEX_EDITED}\n@@\n-fn grammar() {{}}\n+fn grammar() {{ todo!() }}\n*** End Patch\n"
    );
    let lines = [
        json!({"timestamp": "@NOW@", "type": "session_meta", "payload": {"id": CODEX_SESSION,
            "timestamp": "@NOW@", "cwd": "@CWD@", "originator": "codex_exec",
            "cli_version": "0.171.0", "source": "exec"}}),
        json!({"timestamp": "@NOW@", "type": "turn_context", "payload": {"cwd": "@CWD@",
            "model": "gpt-test-codex"}}),
        json!({"timestamp": "@NOW@", "type": "response_item", "payload": {"type": "message",
            "role": "user", "content": [{"type": "input_text", "text": "(the hand-off prompt)"}]}}),
        json!({"timestamp": "@NOW@", "type": "response_item", "payload": {
            "type": "custom_tool_call", "call_id": "c1", "name": "apply_patch", "input": patch}}),
        json!({"timestamp": "@NOW@", "type": "response_item", "payload": {"type": "message",
            "role": "assistant", "content": [{"type": "output_text", "text": CODEX_DID}]}}),
        json!({"timestamp": "@NOW@", "type": "event_msg", "payload": {"type": "task_complete",
            "turn_id": "t1", "last_agent_message": CODEX_DID}}),
    ];
    let template = sb.tmp_dir().join("codex-rollout.jsonl");
    let text: Vec<String> = lines.iter().map(ToString::to_string).collect();
    std::fs::write(&template, text.join("\n") + "\n").unwrap();
    let grammar = sb.write_file(CODEX_EDITED, "fn grammar() {}\n");
    let day = Timestamp::now().strftime("%Y/%m/%d").to_string();
    let dir = sb.home().join(".codex/sessions").join(day);
    sb.fake_cli("codex")
        .script(&format!(
            r#"[ "$1" = app-server ] && exit 0
if [ "$2" = resume ]; then
{resumed}
fi
printf 'fn grammar() {{ todo!() }}\n' > '{grammar}'
mkdir -p '{dir}'
now=$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)
cwd=$(pwd -P)
f='{dir}/rollout-2026-01-01T00-00-00-{CODEX_SESSION}.jsonl'
sed "s|@NOW@|$now|g; s|@CWD@|$cwd|g" '{template}' >> "$f"
touch -d "$now" "$f"
printf -- '--------\nsession id: {CODEX_SESSION}\n--------\n' >&2
echo '{CODEX_DID}'
exit 0"#,
            grammar = grammar.display(),
            dir = dir.display(),
            template = template.display(),
        ))
        .install();
}
