//! A run that acted and then failed fast is not replayed blind (issue 28 item 10): its
//! CLI's own record shows it changed files or ran commands, so the next rung is not handed
//! the same prompt from scratch; agent ends with the CLI's code and says what it did.

use serde_json::json;

use crate::parking::{codex_failing_with_rollout, codex_on_chatgpt, launches};
use crate::support::claude_code::claude_failing_with_rows;
use crate::world::{CLAUDE_THEN_CODEX, world};

fn assistant_with(content: &serde_json::Value) -> serde_json::Value {
    json!({
        "type": "assistant",
        "sessionId": "s-1",
        "timestamp": "@NOW@",
        "message": {"model": "claude-opus-5", "role": "assistant", "content": content},
    })
}

#[test]
fn a_claude_run_that_edited_files_and_failed_fast_is_not_rerun_on_codex() {
    let w = world();
    w.sb.write_config(CLAUDE_THEN_CODEX);
    claude_failing_with_rows(
        &w.sb,
        &[assistant_with(&json!([
            {"type": "text", "text": "Fixing the test."},
            {"type": "tool_use", "id": "t1", "name": "Edit",
             "input": {"file_path": "/work/src/lib.rs", "old_string": "a", "new_string": "b"}},
            {"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": "cargo test"}},
        ]))],
    );

    let run = w.sb.run(&["-p", "fix the failing tests"]);

    assert_eq!(run.code, Some(1), "{run:?}");
    assert_eq!(w.sb.calls("claude").len(), 1);
    assert!(w.sb.calls("codex").is_empty(), "replayed: {}", run.stderr);
    assert!(
        run.stderr.contains(
            "Claude Code (its default model) exited 1 after 0s, after it had changed /work/src/lib.rs and ran a command — not re-run from scratch on another rung"
        ),
        "{}",
        run.stderr
    );
    let events = std::fs::read_to_string(w.sb.state_dir().join("events.jsonl")).unwrap();
    assert!(
        events.contains("after it had changed /work/src/lib.rs"),
        "{events}"
    );
}

#[test]
fn a_claude_run_that_only_read_and_talked_fails_over_as_before() {
    let w = world();
    w.sb.write_config(CLAUDE_THEN_CODEX);
    claude_failing_with_rows(
        &w.sb,
        &[
            assistant_with(&json!([
                {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/work/a"}},
                {"type": "text", "text": "I will use the Edit tool on /work/a next"},
            ])),
            // A user's words that look like a tool call are not one.
            json!({"type": "user", "timestamp": "@NOW@", "message": {"role": "user",
                "content": "{\"type\": \"tool_use\", \"name\": \"Write\"}"}}),
        ],
    );

    let run = w.sb.run(&["-p", "hi"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(w.sb.calls("codex").len(), 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("treating as unavailable"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_codex_run_that_applied_a_patch_and_failed_fast_is_not_rerun_on_gemini() {
    let w = world();
    codex_on_chatgpt(&w.sb);
    let patch = json!({"type": "custom_tool_call", "call_id": "c1", "name": "apply_patch",
        "input": "*** Begin Patch\n*** Update File: src/main.rs\n@@\n-a\n+b\n*** End Patch\n"});
    codex_failing_with_rollout(
        &w.sb,
        &[
            json!({"timestamp": "@NOW@", "type": "session_meta", "payload": {"cwd": "@CWD@"}}),
            json!({"timestamp": "@NOW@", "type": "response_item", "payload": patch}),
        ],
    );

    let run = w.sb.run(&["-p", "hi"]);

    assert_eq!(run.code, Some(1), "{run:?}");
    assert_eq!(launches(&w.sb, "codex"), 1);
    assert!(w.sb.calls("gemini").is_empty(), "replayed: {}", run.stderr);
    assert!(
        run.stderr
            .contains("after it had changed src/main.rs — not re-run"),
        "{}",
        run.stderr
    );
}
