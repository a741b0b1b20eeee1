//! Briefs built the whole way from each CLI's record as it writes it (Claude Code 2.1.332's
//! transcript, Codex 0.171's rollout): the reader turns the tool calls into the session's
//! work and the brief tells it, section by section, in order.

use std::path::Path;

use jiff::Timestamp;
use serde_json::{Value, json};

use super::brief::{self, Source};
use super::brief_shape::{SECTIONS, headings};
use crate::login::session::Session;

/// The section of the brief under `heading`, up to the next heading.
fn section<'t>(text: &'t str, heading: &str) -> &'t str {
    let start = text
        .find(&format!("\n{heading}\n"))
        .unwrap_or_else(|| panic!("{heading} missing from:\n{text}"));
    let body = &text[start + heading.len() + 1..];
    body.find("\n## ").map_or(body, |end| &body[..end])
}

fn at(offset_secs: i64) -> String {
    (Timestamp::now() + jiff::SignedDuration::from_secs(offset_secs)).to_string()
}

fn write_rows(path: &Path, rows: &[Value]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let text: Vec<String> = rows.iter().map(Value::to_string).collect();
    std::fs::write(path, text.join("\n") + "\n").unwrap();
    // Written now by the test's clock (the file system stamps the machine's).
    std::fs::File::options()
        .append(true)
        .open(path)
        .and_then(|file| file.set_modified(std::time::SystemTime::now()))
        .unwrap();
}

fn brief_of(session: &Session, cli: &str) -> String {
    let state = tempfile::tempdir().unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let source = Source {
        label: cli,
        cli,
        model: None,
        session: None,
        limit: "5-hour limit, resets 15:00",
        returning_to: None,
    };
    let now = "2026-12-02T05:30:07Z".parse().unwrap();
    let path = brief::write(state.path(), cwd.path(), &source, session, now).unwrap();
    std::fs::read_to_string(path).unwrap()
}

const CLAUDE_ID: &str = "0b9f3c52-7d1e-4c7a-9a55-2f0e6a1d8c41";

/// A row as Claude Code 2.1.332 writes it.
fn claude_row(kind: &str, t: i64, message: &Value) -> Value {
    json!({"parentUuid": null, "isSidechain": false, "userType": "external",
        "cwd": "/home/u/proj", "sessionId": CLAUDE_ID, "version": "2.1.332",
        "gitBranch": "main", "type": kind, "message": message, "uuid": format!("u{t}"),
        "timestamp": at(t)})
}

fn claude_calls(t: i64, id: &str, content: &Value) -> Value {
    claude_row(
        "assistant",
        t,
        &json!({"id": id, "type": "message", "role": "assistant", "model": "claude-opus-5",
            "content": content, "stop_reason": "tool_use",
            "usage": {"input_tokens": 3, "output_tokens": 12}}),
    )
}

fn claude_result(t: i64, call: &str, content: &str, error: bool, data: &Value) -> Value {
    let mut block = json!({"tool_use_id": call, "type": "tool_result", "content": content});
    if error {
        block["is_error"] = true.into();
    }
    let mut row = claude_row("user", t, &json!({"role": "user", "content": [block]}));
    row["toolUseResult"] = data.clone();
    row
}

fn claude_transcript() -> Vec<Value> {
    let todos = |second: &str| {
        json!({"todos": [
            {"content": "Read the failing test", "status": "completed", "activeForm": "Reading"},
            {"content": "Fix the parser", "status": second, "activeForm": "Fixing the parser"},
            {"content": "Update the changelog", "status": "pending", "activeForm": "Updating"}]})
    };
    let mut limit = claude_calls(
        -1,
        "m-limit",
        &json!([{"type": "text", "text": "You've hit your 5-hour limit · resets 3pm (UTC)"}]),
    );
    limit["message"]["model"] = "<synthetic>".into();
    limit["isApiErrorMessage"] = true.into();
    limit["apiError"] = "usage_limit_reached".into();
    vec![
        claude_row(
            "user",
            -60,
            &json!({"role": "user", "content": "fix the parser; Edit whatever you need"}),
        ),
        claude_calls(
            -59,
            "msg_1",
            &json!([{"type": "tool_use", "id": "toolu_todo1", "name": "TodoWrite", "input": todos("pending")}]),
        ),
        claude_result(
            -58,
            "toolu_todo1",
            "Todos have been modified successfully.",
            false,
            &json!({}),
        ),
        claude_calls(
            -57,
            "msg_2",
            &json!([{"type": "tool_use", "id": "toolu_edit", "name": "Edit", "input": {
                "file_path": "/home/u/proj/src/parse.rs", "old_string": "let a = 1;\nlet b = 2;",
                "new_string": "let a = split(line);\nlet b = a.len();\nlet c = b + 1;",
                "replace_all": false}}]),
        ),
        claude_result(
            -56,
            "toolu_edit",
            "The file /home/u/proj/src/parse.rs has been updated.",
            false,
            &json!({"filePath": "/home/u/proj/src/parse.rs"}),
        ),
        claude_calls(
            -55,
            "msg_3",
            &json!([{"type": "tool_use", "id": "toolu_write", "name": "Write", "input": {
                "file_path": "/home/u/proj/tests/quoted.rs", "content": "#[test]\nfn quoted() {}\n"}}]),
        ),
        claude_result(
            -54,
            "toolu_write",
            "File created successfully at: /home/u/proj/tests/quoted.rs",
            false,
            &json!({"type": "create", "filePath": "/home/u/proj/tests/quoted.rs"}),
        ),
        claude_calls(
            -53,
            "msg_4",
            &json!([{"type": "tool_use", "id": "toolu_ok", "name": "Bash",
                "input": {"command": "cargo build", "description": "Build the crate"}}]),
        ),
        claude_result(
            -52,
            "toolu_ok",
            "Finished dev",
            false,
            &json!({"stdout": "Finished dev", "stderr": "", "interrupted": false, "isImage": false}),
        ),
        claude_calls(
            -51,
            "msg_5",
            &json!([{"type": "tool_use", "id": "toolu_todo2", "name": "TodoWrite", "input": todos("in_progress")},
                {"type": "tool_use", "id": "toolu_fail", "name": "Bash",
                    "input": {"command": "cargo test quoted", "description": "Run the new test"}}]),
        ),
        claude_result(
            -50,
            "toolu_todo2",
            "Todos have been modified successfully.",
            false,
            &json!({}),
        ),
        claude_result(
            -49,
            "toolu_fail",
            "Exit code 101\nrunning 1 test\ntest quoted ... FAILED\nassertion failed: quoted field split",
            true,
            &json!(
                "Error: Exit code 101\nrunning 1 test\ntest quoted ... FAILED\nassertion failed: quoted field split"
            ),
        ),
        claude_calls(
            -48,
            "msg_6",
            &json!([{"type": "text", "text": "The quoted test fails; fixing split next."}]),
        ),
        limit,
    ]
}

#[test]
fn a_claude_code_sessions_brief_holds_its_plan_edits_commands_and_next_step() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("projects/-home-u-proj");
    write_rows(
        &dir.join(format!("{CLAUDE_ID}.jsonl")),
        &claude_transcript(),
    );
    let session =
        crate::login::claude_session::read(&dir, Timestamp::now(), Some(CLAUDE_ID)).unwrap();
    let text = brief_of(&session, "Claude Code");
    assert_eq!(headings(&text)[1..], SECTIONS, "{text}");
    assert!(section(&text, "## The task").contains("fix the parser; Edit whatever you need"));
    assert!(
        section(&text, "## The plan").contains(
            "- [x] Read the failing test\n- [ ] Fix the parser ← in progress\n- [ ] Update the changelog\n"
        ),
        "{text}"
    );
    let done = section(&text, "## What is done");
    assert!(
        done.contains("- /home/u/proj/src/parse.rs: +3 −2 (1 edit)"),
        "{done}"
    );
    assert!(
        done.contains("```text\nlet a = split(line);\nlet b = a.len();\nlet c = b + 1;\n```"),
        "{done}"
    );
    assert!(
        done.contains("- /home/u/proj/tests/quoted.rs: +2 −0 (1 edit)"),
        "{done}"
    );
    // A prompt that says "Edit" is not an edit.
    assert!(!done.contains("whatever"), "{done}");
    let commands = section(&text, "## The commands it ran");
    assert!(
        commands.contains("- ✓: `cargo build`\n- exit 101: `cargo test quoted`\n"),
        "{commands}"
    );
    assert!(
        commands.contains("The last command that failed (exit 101): `cargo test quoted`"),
        "{commands}"
    );
    assert!(
        commands.contains("assertion failed: quoted field split\n```"),
        "{commands}"
    );
    assert!(
        section(&text, "## Where it stopped").contains("The quoted test fails; fixing split next.")
    );
    assert!(
        section(&text, "## What to do next")
            .contains("Carry on with the step the session was on: Fix the parser"),
        "{text}"
    );
}

const CODEX_ID: &str = "01a23fb3-9e49-71d1-8cc2-09d06abd14b8";

fn codex_item(t: i64, payload: &Value) -> Value {
    json!({"timestamp": at(t), "type": "response_item", "payload": payload})
}

fn codex_event(t: i64, payload: &Value) -> Value {
    json!({"timestamp": at(t), "type": "event_msg", "payload": payload})
}

/// The rows Codex 0.171 wrote for one exec_command call: the call, the structured ending
/// (`item_completed` / `CommandExecution`) and the model's plain-text output.
fn codex_exec(t: i64, call: &str, cmd: &str, code: i64, output: &str) -> [Value; 3] {
    let status = if code == 0 { "completed" } else { "failed" };
    [
        codex_item(
            t,
            &json!({"type": "function_call", "name": "exec_command",
            "arguments": json!({"cmd": cmd}).to_string(), "call_id": call}),
        ),
        codex_event(
            t + 1,
            &json!({"type": "item_completed", "thread_id": CODEX_ID,
            "item": {"type": "CommandExecution", "id": call, "process_id": "75265",
                "command": ["/bin/bash", "-lc", cmd], "cwd": "file:///work/p",
                "source": "unified_exec_startup", "status": status,
                "aggregated_output": output, "exit_code": code,
                "duration": {"secs": 0, "nanos": 5358}}}),
        ),
        codex_item(
            t + 1,
            &json!({"type": "function_call_output", "call_id": call,
            "output": format!("Chunk ID: 4620df\nWall time: 0.0000 seconds\nProcess exited with code {code}\nOriginal token count: 16\nOutput:\n{output}")}),
        ),
    ]
}

fn codex_rollout() -> Vec<Value> {
    let plan = |second: &str| {
        json!({"explanation": "why", "plan": [
            {"step": "Patch the parser", "status": "completed"},
            {"step": "Run the tests", "status": second},
            {"step": "Write the changelog", "status": "pending"}]})
        .to_string()
    };
    let patch = "*** Begin Patch\n*** Update File: src/parse.rs\n@@ fn split\n-    line.split(',')\n\
                 +    csv_split(line)\n+        .collect()\n*** Add File: CHANGES.md\n+- quoted fields\n*** End Patch";
    let mut rows = vec![
        json!({"timestamp": at(-60), "type": "session_meta", "payload": {"id": CODEX_ID,
            "session_id": CODEX_ID, "cwd": "/work/p", "originator": "codex_exec",
            "cli_version": "0.171.0", "source": "exec", "model_provider": "openai"}}),
        json!({"timestamp": at(-60), "type": "turn_context", "payload": {"cwd": "/work/p",
            "model": "gpt-5.5", "approval_policy": "never"}}),
        codex_item(
            -59,
            &json!({"type": "message", "role": "user",
            "content": [{"type": "input_text", "text": "make quoted fields parse"}]}),
        ),
        codex_item(
            -58,
            &json!({"type": "function_call", "name": "update_plan",
            "arguments": plan("pending"), "call_id": "call_plan1"}),
        ),
        codex_item(
            -58,
            &json!({"type": "function_call_output", "call_id": "call_plan1", "output": "Plan updated"}),
        ),
        codex_item(
            -57,
            &json!({"type": "custom_tool_call", "name": "apply_patch", "call_id": "call_patch",
            "input": patch}),
        ),
        codex_item(
            -56,
            &json!({"type": "custom_tool_call_output", "call_id": "call_patch",
            "output": "{\"output\":\"Success. Updated the following files:\\nM src/parse.rs\\nA CHANGES.md\\n\",\"metadata\":{\"exit_code\":0,\"duration_seconds\":0.0}}"}),
        ),
        codex_item(
            -55,
            &json!({"type": "function_call", "name": "update_plan",
            "arguments": plan("in_progress"), "call_id": "call_plan2"}),
        ),
    ];
    rows.extend(codex_exec(
        -54,
        "call_ok",
        "cargo build",
        0,
        "Finished dev\n",
    ));
    rows.extend(codex_exec(
        -50,
        "call_fail",
        "cargo test",
        101,
        "test quoted ... FAILED\nerror: test failed, to rerun pass `--lib`\n",
    ));
    rows.push(codex_item(
        -45,
        &json!({"type": "message", "role": "assistant",
        "content": [{"type": "output_text", "text": "One test still fails."}]}),
    ));
    rows.push(codex_event(-44, &json!({"type": "task_complete", "last_agent_message": null,
        "error": {"message": "You’ve hit your usage limit.", "codex_error_info": "usage_limit_exceeded"}})));
    rows
}

#[test]
fn a_codex_sessions_brief_holds_its_plan_patches_commands_and_next_step() {
    let home = tempfile::tempdir().unwrap();
    let sessions = home.path().join("sessions");
    let day = Timestamp::now()
        .to_zoned_datetime(jiff::tz::TimeZone::UTC)
        .date();
    let dir = sessions.join(format!(
        "{:04}/{:02}/{:02}",
        day.year(),
        day.month(),
        day.day()
    ));
    write_rows(
        &dir.join(format!("rollout-2026-12-04T06-17-45-{CODEX_ID}.jsonl")),
        &codex_rollout(),
    );
    let start = Timestamp::now() - jiff::SignedDuration::from_secs(120);
    let session =
        crate::login::codex_session::read(&sessions, Path::new("/work/p"), start, Some(CODEX_ID))
            .unwrap();
    let text = brief_of(&session, "Codex");
    assert_eq!(headings(&text)[1..], SECTIONS, "{text}");
    assert!(section(&text, "## The task").contains("make quoted fields parse"));
    assert!(
        section(&text, "## The plan").contains(
            "- [x] Patch the parser\n- [ ] Run the tests ← in progress\n- [ ] Write the changelog\n"
        ),
        "{text}"
    );
    let done = section(&text, "## What is done");
    assert!(done.contains("- src/parse.rs: +2 −1 (1 edit)"), "{done}");
    assert!(
        done.contains("```text\n    csv_split(line)\n        .collect()\n```"),
        "{done}"
    );
    assert!(done.contains("- CHANGES.md: +1 −0 (1 edit)"), "{done}");
    let commands = section(&text, "## The commands it ran");
    assert!(
        commands.contains("- ✓: `cargo build`\n- exit 101: `cargo test`\n"),
        "{commands}"
    );
    assert!(
        commands.contains("The last command that failed (exit 101): `cargo test`"),
        "{commands}"
    );
    assert!(
        commands.contains("error: test failed, to rerun pass `--lib`\n```"),
        "{commands}"
    );
    assert!(section(&text, "## Where it stopped").contains("One test still fails."));
    assert!(
        section(&text, "## What to do next")
            .contains("Carry on with the step the session was on: Run the tests"),
        "{text}"
    );
}
