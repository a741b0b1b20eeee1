//! A session of any CLI can outlive its window (DESIGN §21, issue 42), not only Claude
//! Code's: a Codex session that works past `fastfail_seconds` and runs out — its rollout
//! marks the turn `usage_limit_exceeded` and names the full window — is handed to the next
//! rung with a brief, or resumed after the reset in Codex's own words
//! (`codex exec resume ID … -- PROMPT`), the session found by the id its record holds.

use std::path::PathBuf;

use jiff::Timestamp;
use serde_json::json;

use crate::support::{Invocation, Sandbox, codex_runs};
use crate::world::world;

/// The task, more than one line, so "verbatim" means something.
const TASK: &str = "Port the parser to nom 8.\n\nKeep `parse()` public.";

/// The session id Codex gave the session (a UUIDv7, as 0.171 names them).
const SESSION: &str = "019a7c2e-5e1b-7d30-9f4e-3c2b1a0f9e8d";

/// What the session said before its window ran out.
const DID: &str = "Ported the lexer; the grammar is next.";

/// The file the session's patch changed.
const EDITED: &str = "src/lexer.rs";

/// What its last command printed as it failed.
const FAILED_OUTPUT: &str = "error: test failed, to rerun pass `--lib`\n2 tests failed\n";

/// What every brief here must carry of the session's work, whichever CLI it ran in: its
/// plan with the step it was on, the file it changed and how, the command that failed and
/// its output, and what to do next.
fn assert_the_brief_carries_the_work(text: &str) {
    let section = |heading: &str| {
        let at = text
            .find(&format!("\n{heading}\n"))
            .unwrap_or_else(|| panic!("no {heading} in:\n{text}"));
        let rest = &text[at + heading.len() + 2..];
        rest[..rest.find("\n## ").unwrap_or(rest.len())].to_string()
    };
    let plan = section("## The plan");
    assert!(plan.contains("- [x] Port the lexer"), "{plan}");
    assert!(
        plan.contains("- [ ] Port the grammar ← in progress"),
        "{plan}"
    );
    let done = section("## What is done");
    assert!(
        done.contains(&format!("- {EDITED}: +1 −1 (1 edit)")),
        "{done}"
    );
    let commands = section("## The commands it ran");
    assert!(commands.contains("`cargo test`"), "{commands}");
    assert!(
        commands.contains("The last command that failed"),
        "{commands}"
    );
    assert!(commands.contains("2 tests failed"), "{commands}");
    let next = section("## What to do next");
    assert!(next.contains("Port the grammar"), "{next}");
}

/// Codex (a ChatGPT login, run unprobed) with a one-second fast-failure threshold, then
/// Claude Code.
fn codex_then_claude(sb: &Sandbox) {
    sb.write_file(".codex/config.toml", "model = \"gpt-test-codex\"\n");
    sb.write_file(
        ".codex/auth.json",
        r#"{"auth_mode": "chatgpt", "tokens": {"id_token": "x", "access_token": "y", "refresh_token": "z", "account_id": "a"}}"#,
    );
    sb.write_config(
        "fastfail_seconds = 1\n\n[backends.codex]\nprobe = { kind = \"none\" }\n\n[[rungs]]\nbackend = \"codex\"\n\n[[rungs]]\nbackend = \"claude\"\nprobe_model = \"opus\"\n",
    );
}

/// The rollout lines of a session that took the task, patched [`EDITED`], said [`DID`] and
/// was refused for its usage limit — as Codex 0.171 writes them (`@NOW@`, `@CWD@` and
/// `@RESET@` stand for the time, the directory and the reset when it runs).
fn rollout_out_of_its_window() -> Vec<serde_json::Value> {
    let patch = format!(
        "*** Begin Patch\n*** Update File: {EDITED}\n@@\n-fn lex() {{}}\n+fn lex() {{ todo!() }}\n*** End Patch\n"
    );
    vec![
        json!({"timestamp": "@NOW@", "type": "session_meta", "payload": {"id": SESSION,
            "timestamp": "@NOW@", "cwd": "@CWD@", "originator": "codex_exec",
            "cli_version": "0.171.0", "source": "exec"}}),
        json!({"timestamp": "@NOW@", "type": "turn_context", "payload": {"cwd": "@CWD@",
            "model": "gpt-test-codex"}}),
        json!({"timestamp": "@NOW@", "type": "response_item", "payload": {"type": "message",
            "role": "user", "content": [{"type": "input_text", "text": TASK}]}}),
        json!({"timestamp": "@NOW@", "type": "response_item", "payload": {
            "type": "custom_tool_call", "call_id": "c1", "name": "apply_patch", "input": patch}}),
        json!({"timestamp": "@NOW@", "type": "response_item", "payload": {
            "type": "function_call", "name": "update_plan", "call_id": "c0",
            "arguments": json!({"plan": [
                {"step": "Port the lexer", "status": "completed"},
                {"step": "Port the grammar", "status": "in_progress"}]}).to_string()}}),
        json!({"timestamp": "@NOW@", "type": "response_item", "payload": {
            "type": "function_call", "name": "exec_command", "call_id": "c2",
            "arguments": json!({"cmd": "cargo test"}).to_string()}}),
        json!({"timestamp": "@NOW@", "type": "event_msg", "payload": {"type": "item_completed",
            "item": {"type": "CommandExecution", "id": "c2", "command": ["/bin/bash", "-lc", "cargo test"],
                     "status": "failed", "aggregated_output": FAILED_OUTPUT, "exit_code": 101}}}),
        json!({"timestamp": "@NOW@", "type": "response_item", "payload": {"type": "message",
            "role": "assistant", "content": [{"type": "output_text", "text": DID}]}}),
        json!({"timestamp": "@NOW@", "type": "event_msg", "payload": {"type": "token_count",
            "info": null, "rate_limits": {"limit_id": "codex",
            "primary": {"used_percent": 100.0, "window_minutes": 300, "resets_at": "@RESET@"},
            "secondary": {"used_percent": 40.0, "window_minutes": 10080, "resets_at": "@RESET@"}}}}),
        json!({"timestamp": "@NOW@", "type": "event_msg", "payload": {"type": "task_complete",
            "turn_id": "t1", "last_agent_message": null,
            "error": {"message": "You’ve hit your usage limit. Try again later.",
                      "codex_error_info": "usage_limit_exceeded"}}}),
    ]
}

/// A fake Codex whose first run works past the threshold, writes [`rollout_out_of_its_window`]
/// (the reset `reset_in` seconds after it ends) and exits 1; a resumed run (`exec resume`,
/// `resume`) says so and exits 0.
fn codex_out_of_its_window(sb: &Sandbox, reset_in: i64) {
    let template = sb.tmp_dir().join("rollout-lines.jsonl");
    let text: Vec<String> = rollout_out_of_its_window()
        .iter()
        .map(ToString::to_string)
        .collect();
    std::fs::write(
        &template,
        format!("{}\n", text.join("\n")).replace("\"@RESET@\"", "@RESET@"),
    )
    .unwrap();
    let day = Timestamp::now().strftime("%Y/%m/%d").to_string();
    let dir = sb.home().join(".codex/sessions").join(day);
    sb.fake_cli("codex")
        .script(&format!(
            r#"[ "$1" = app-server ] && exit 0
if [ "$2" = resume ] || [ "$1" = resume ]; then echo "codex went on"; exit 0; fi
sleep 1.3
mkdir -p '{dir}'
now=$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)
reset=$(( $(date +%s) + {reset_in} ))
cwd=$(pwd -P)
f='{dir}/rollout-2026-01-01T00-00-00-{SESSION}.jsonl'
sed "s|@NOW@|$now|g; s|@CWD@|$cwd|g; s|@RESET@|$reset|g" '{template}' >> "$f"
touch -d "$now" "$f"
echo "You've hit your usage limit." >&2
exit 1"#,
            dir = dir.display(),
            template = template.display(),
        ))
        .install();
}

/// The brief the hand-off notice names.
fn brief_named_in(stderr: &str) -> PathBuf {
    let words = "with a brief of the session: ";
    let at = stderr
        .find(words)
        .unwrap_or_else(|| panic!("no hand-off notice: {stderr}"));
    let rest = &stderr[at + words.len()..];
    PathBuf::from(rest.lines().next().unwrap_or_default().trim())
}

#[test]
fn a_codex_session_out_of_its_window_is_handed_to_the_next_rung_with_a_brief() {
    let w = world();
    codex_then_claude(&w.sb);
    codex_out_of_its_window(&w.sb, 2 * 3600);

    let run = w.sb.run(&[
        "--on-limit",
        "continue",
        "-p",
        "--dangerously-skip-permissions",
        "--",
        TASK,
    ]);

    assert_eq!(run.code, Some(0), "Claude Code's code is agent's: {run:?}");
    assert_eq!(codex_runs(&w.sb).len(), 1, "{}", run.stderr);
    let claude = w.sb.calls("claude");
    assert_eq!(claude.len(), 1, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "[agent] Codex (its default model) ran out of its window (5-hour limit, resets "
        ),
        "{}",
        run.stderr
    );
    let brief = brief_named_in(&run.stderr);
    let prompt = claude[0]
        .argv
        .iter()
        .find(|word| word.contains(TASK))
        .unwrap_or_else(|| panic!("the task is not verbatim in {:?}", claude[0].argv));
    assert!(prompt.contains(&*brief.to_string_lossy()), "{prompt}");
    assert!(
        prompt.contains("[agent] This task began in Codex"),
        "{prompt}"
    );
    let text = std::fs::read_to_string(&brief).unwrap();
    assert!(text.starts_with("# Hand-off from Codex"), "{text}");
    assert!(text.contains(TASK), "the task is not verbatim: {text}");
    assert!(text.contains(DID), "what it did is missing: {text}");
    assert!(text.contains(EDITED), "the changed file is missing: {text}");
    assert!(text.contains(SESSION), "the session id is missing: {text}");
    assert_the_brief_carries_the_work(&text);
}

#[test]
fn a_codex_session_out_of_its_window_is_resumed_in_codexs_own_words_after_the_reset() {
    let w = world();
    codex_then_claude(&w.sb);
    codex_out_of_its_window(&w.sb, 3);

    let run = w.sb.run(&[
        "--on-limit",
        "resume",
        "-p",
        "--dangerously-skip-permissions",
        "--",
        TASK,
    ]);

    assert_eq!(run.code, Some(0), "the resumed run's code: {run:?}");
    assert_eq!(run.stdout, "codex went on\n", "{run:?}");
    assert!(w.sb.calls("claude").is_empty(), "{}", run.stderr);
    let codex = codex_runs(&w.sb);
    assert_eq!(codex.len(), 2, "{}", run.stderr);
    let resumed = &codex[1].argv;
    assert_eq!(
        &resumed[..3],
        ["exec", "resume", SESSION],
        "not resumed by id: {resumed:?}"
    );
    assert!(
        resumed
            .iter()
            .any(|word| word == "--dangerously-bypass-approvals-and-sandbox"),
        "the user's flags were dropped: {resumed:?}"
    );
    let marker = resumed.iter().position(|word| word == "--").unwrap();
    assert_eq!(resumed.len(), marker + 2, "{resumed:?}");
    assert!(
        resumed[marker + 1].starts_with("[agent] Your usage window ran out"),
        "{resumed:?}"
    );
    assert!(
        run.stderr.contains(&format!(
            "— waiting for the reset to resume session {SESSION}"
        )),
        "{}",
        run.stderr
    );
}

/// Gemini CLI (on the world's API key, run unprobed) with a one-second fast-failure
/// threshold, then Claude Code.
fn gemini_then_claude(sb: &Sandbox) {
    sb.write_config(
        "fastfail_seconds = 1\n\n[backends.gemini]\nprobe = { kind = \"none\" }\n\n[[rungs]]\nbackend = \"gemini\"\n\n[[rungs]]\nbackend = \"claude\"\nprobe_model = \"opus\"\n",
    );
}

/// A fake Gemini CLI whose first run, started under agent's `--session-id`, works past the
/// threshold, records the session as 0.61 does (its chat under `~/.gemini/tmp/<project>/chats`,
/// named after the id: the task, a `replace` of [`EDITED`], [`DID`], a failed shell command),
/// then ends on its quota as 0.61 does headless — nothing of it in the record, its
/// `TerminalQuotaError` on stderr with the API's delay, exit 1. A resumed run says so and
/// exits 0.
fn gemini_out_of_its_quota(sb: &Sandbox, reset_in_ms: u64) {
    let chats = sb.home().join(".gemini/tmp/project/chats");
    let rows = [
        json!({"sessionId": "@ID@", "projectHash": "h", "startTime": "@NOW@", "kind": "main"}),
        json!({"id": "m1", "timestamp": "@NOW@", "type": "user", "content": [{"text": TASK}]}),
        json!({"id": "m2", "timestamp": "@NOW@", "type": "gemini", "content": DID,
               "model": "gemini-test-pro", "toolCalls": [
                   {"id": "t0", "name": "write_todos", "status": "success",
                    "args": {"todos": [
                        {"description": "Port the lexer", "status": "completed"},
                        {"description": "Port the grammar", "status": "in_progress"}]}},
                   {"id": "t1", "name": "replace", "status": "success",
                    "args": {"file_path": EDITED, "old_string": "fn lex() {}", "new_string": "fn lex() { todo!() }"}},
                   {"id": "t2", "name": "run_shell_command", "status": "error",
                    "args": {"command": "cargo test"},
                    "result": [{"functionResponse": {"id": "t2", "name": "run_shell_command",
                                "response": {"output": FAILED_OUTPUT}}}]}]}),
    ];
    let template = sb.tmp_dir().join("gemini-chat.jsonl");
    let text: Vec<String> = rows.iter().map(ToString::to_string).collect();
    std::fs::write(&template, text.join("\n") + "\n").unwrap();
    sb.fake_cli("gemini")
        .script(&format!(
            r#"for word in "$@"; do case "$word" in --resume) echo "gemini went on"; exit 0;; esac; done
id=
while [ "$#" -gt 0 ]; do [ "$1" = --session-id ] && id=$2; shift; done
[ -n "$id" ] || {{ echo "no session id given" >&2; exit 2; }}
sleep 1.3
mkdir -p '{chats}'
now=$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)
short=$(printf %s "$id" | cut -c1-8)
sed "s|@ID@|$id|g; s|@NOW@|$now|g" '{template}' > '{chats}'/session-2026-12-04T10-00-$short.jsonl
cat >&2 <<'ERR'
Error when talking to Gemini API Full report available at: /tmp/gemini-client-error.json TerminalQuotaError: You have exhausted your daily quota on this model.
    at classifyGoogleError (file:///gemini/bundle/chunk.js:307333:14) {{
  retryDelayMs: {reset_in_ms},
  status: 429
}}
ERR
exit 1"#,
            chats = chats.display(),
            template = template.display(),
        ))
        .install();
}

#[test]
fn a_gemini_session_that_ends_on_its_quota_is_handed_on_with_a_brief_of_its_record() {
    let w = world();
    gemini_then_claude(&w.sb);
    gemini_out_of_its_quota(&w.sb, 3_600_000);

    let run = w.sb.run(&["--on-limit", "continue", "-p", "--", TASK]);

    assert_eq!(run.code, Some(0), "Claude Code's code is agent's: {run:?}");
    assert_eq!(w.sb.calls("gemini").len(), 1, "{}", run.stderr);
    let claude = w.sb.calls("claude");
    assert_eq!(claude.len(), 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("ran out of its window (usage limit, resets "),
        "{}",
        run.stderr
    );
    let brief = brief_named_in(&run.stderr);
    let text = std::fs::read_to_string(&brief).unwrap();
    assert!(text.starts_with("# Hand-off from Gemini CLI"), "{text}");
    assert!(text.contains(TASK), "the task is not verbatim: {text}");
    assert!(text.contains(DID), "what it did is missing: {text}");
    assert_the_brief_carries_the_work(&text);

    // The next launch passes Gemini CLI over until the reset its error named.
    let again = w.sb.run(&["-p", "hi"]);
    assert_eq!(again.code, Some(0), "{again:?}");
    assert_eq!(w.sb.calls("gemini").len(), 1, "{}", again.stderr);
}

#[test]
fn a_gemini_session_that_ends_on_its_quota_is_resumed_by_its_id_after_the_delay_it_named() {
    let w = world();
    gemini_then_claude(&w.sb);
    gemini_out_of_its_quota(&w.sb, 3_000);

    let run = w.sb.run(&["--on-limit", "resume", "-p", "--", TASK]);

    assert_eq!(run.code, Some(0), "the resumed run's code: {run:?}");
    assert_eq!(run.stdout, "gemini went on\n", "{run:?}");
    assert!(w.sb.calls("claude").is_empty(), "{}", run.stderr);
    let gemini = w.sb.calls("gemini");
    assert_eq!(gemini.len(), 2, "{}", run.stderr);
    let first = &gemini[0].argv;
    let id = &first[first.iter().position(|w| w == "--session-id").unwrap() + 1];
    let resumed = &gemini[1].argv;
    assert_eq!(&resumed[..2], ["--resume", id.as_str()], "{resumed:?}");
    assert!(
        !resumed.iter().any(|w| w == "--session-id"),
        "a resume starts no new session: {resumed:?}"
    );
    assert!(
        resumed
            .last()
            .is_some_and(|w| w.starts_with("--prompt=[agent] Your usage window ran out")),
        "{resumed:?}"
    );
    assert!(
        run.stderr
            .contains(&format!("— waiting for the reset to resume session {id}")),
        "{}",
        run.stderr
    );
}

/// The id opencode gave the session (`ses_` and 26 more, as 1.18.33 names them).
const OPENCODE_SESSION: &str = "ses_dc036c7d3ffeqqtE0Xlj6qbRGB";

/// opencode (run unprobed) with a one-second fast-failure threshold, then Claude Code.
fn opencode_then_claude(sb: &Sandbox) {
    sb.write_config(
        "fastfail_seconds = 1\n\n[backends.opencode]\nprobe = { kind = \"none\" }\n\n[[rungs]]\nbackend = \"opencode\"\n\n[[rungs]]\nbackend = \"claude\"\nprobe_model = \"opus\"\n",
    );
}

/// The rows `opencode db` gives for the session's query, as 1.18.33 holds them: the task,
/// an answer that edited [`EDITED`] and ran a command, then a turn its provider refused at
/// its quota (no parts; `retry-after-ms` as the provider sent it).
fn opencode_session_rows(retry_after_ms: u64) -> serde_json::Value {
    let row = |message: &str, info: serde_json::Value, part: Option<serde_json::Value>| {
        json!({"session_id": OPENCODE_SESSION, "message_id": message,
               "message": info.to_string(), "part": part.map(|p| p.to_string())})
    };
    let answer = json!({"role": "assistant", "modelID": "gpt-x", "providerID": "mock",
                        "finish": "stop", "path": {"cwd": "/", "root": "/"}});
    json!([
        row(
            "msg_1",
            json!({"role": "user"}),
            Some(json!({"type": "text", "text": TASK}))
        ),
        row(
            "msg_2",
            answer.clone(),
            Some(json!({"type": "text", "text": DID}))
        ),
        row(
            "msg_2",
            answer.clone(),
            Some(json!({"type": "tool", "tool": "todowrite", "callID": "k0",
            "state": {"status": "completed", "input": {"todos": [
                {"content": "Port the lexer", "status": "completed", "priority": "high", "id": "1"},
                {"content": "Port the grammar", "status": "in_progress", "priority": "high", "id": "2"}]}}}))
        ),
        row(
            "msg_2",
            answer.clone(),
            Some(json!({"type": "tool", "tool": "edit", "callID": "k1",
            "state": {"status": "completed", "input": {"filePath": EDITED, "oldString": "a", "newString": "b"}}}))
        ),
        row(
            "msg_2",
            answer,
            Some(json!({"type": "tool", "tool": "bash", "callID": "k2",
            "state": {"status": "completed", "input": {"command": "cargo test"},
                      "output": FAILED_OUTPUT, "metadata": {"exit": 101}}}))
        ),
        row(
            "msg_3",
            json!({"role": "user"}),
            Some(json!({"type": "text", "text": "go on"}))
        ),
        row(
            "msg_4",
            json!({"role": "assistant", "modelID": "gpt-x", "providerID": "mock",
            "error": {"name": "APIError", "data": {
                "message": "Usage limit reached for this plan. Try again later.",
                "statusCode": 429, "isRetryable": true,
                "responseHeaders": {"retry-after-ms": retry_after_ms.to_string()},
                "responseBody": "{\"error\": {\"type\": \"usage_limit_reached\"}}"}}}),
            None
        ),
    ])
}

/// A fake opencode whose run works past the threshold and ends as 1.18.33 does when its
/// provider refuses at its quota (after its retries: `Error: <the provider's words>`, exit
/// 1), its database holding [`opencode_session_rows`], which its `opencode db` gives for a
/// session's query; a run that continues a session (`--session`) says so and exits 0.
fn opencode_out_of_its_quota(sb: &Sandbox, retry_after_ms: u64) {
    let rows = sb.tmp_dir().join("opencode-rows.json");
    std::fs::write(&rows, opencode_session_rows(retry_after_ms).to_string()).unwrap();
    sb.write_file(".local/share/opencode/opencode.db", "");
    sb.fake_cli("opencode")
        .script(&format!(
            r#"if [ "$1" = db ]; then
  case "$2" in *"LEFT JOIN part"*) cat '{rows}';; *) echo '[]';; esac
  exit 0
fi
for word in "$@"; do [ "$word" = --session ] && {{ echo "opencode went on"; exit 0; }}; done
sleep 1.3
printf '\033[91m\033[1mError: \033[0mUsage limit reached for this plan. Try again later.\n' >&2
exit 1"#,
            rows = rows.display(),
        ))
        .install();
}

/// The runs of the fake opencode that were launches (not `opencode db`).
fn opencode_runs(sb: &Sandbox) -> Vec<Invocation> {
    sb.calls("opencode")
        .into_iter()
        .filter(|call| call.argv.first().map(String::as_str) != Some("db"))
        .collect()
}

#[test]
fn an_opencode_session_its_provider_refused_at_its_quota_is_handed_on_with_a_brief() {
    let w = world();
    opencode_then_claude(&w.sb);
    opencode_out_of_its_quota(&w.sb, 3_600_000);

    let run = w.sb.run(&["--on-limit", "continue", "-p", "--", TASK]);

    assert_eq!(run.code, Some(0), "Claude Code's code is agent's: {run:?}");
    assert_eq!(opencode_runs(&w.sb).len(), 1, "{}", run.stderr);
    assert_eq!(w.sb.calls("claude").len(), 1, "{}", run.stderr);
    let brief = brief_named_in(&run.stderr);
    let text = std::fs::read_to_string(&brief).unwrap();
    assert!(text.starts_with("# Hand-off from opencode"), "{text}");
    assert!(text.contains(TASK), "the task is not verbatim: {text}");
    assert!(text.contains(DID), "what it did is missing: {text}");
    assert_the_brief_carries_the_work(&text);
    assert!(
        text.contains(OPENCODE_SESSION),
        "the session is missing: {text}"
    );
}

#[test]
fn an_opencode_session_is_resumed_with_run_session_after_the_providers_delay() {
    let w = world();
    opencode_then_claude(&w.sb);
    opencode_out_of_its_quota(&w.sb, 3_000);

    let run = w.sb.run(&["--on-limit", "resume", "-p", "--", TASK]);

    assert_eq!(run.code, Some(0), "the resumed run's code: {run:?}");
    assert_eq!(run.stdout, "opencode went on\n", "{run:?}");
    assert!(w.sb.calls("claude").is_empty(), "{}", run.stderr);
    let runs = opencode_runs(&w.sb);
    assert_eq!(runs.len(), 2, "{}", run.stderr);
    assert_eq!(
        &runs[1].argv[..3],
        ["run", "--session", OPENCODE_SESSION],
        "{:?}",
        runs[1].argv
    );
    assert!(
        run.stderr.contains(&format!(
            "— waiting for the reset to resume session {OPENCODE_SESSION}"
        )),
        "{}",
        run.stderr
    );
}

#[test]
fn a_successful_opencode_run_never_asks_its_database() {
    let w = world();
    opencode_then_claude(&w.sb);
    opencode_out_of_its_quota(&w.sb, 3_000);
    w.sb.fake_cli("opencode")
        .script("[ \"$1\" = db ] && { echo '[]'; exit 0; }\necho opencode answered")
        .install();

    let run = w.sb.run(&["-p", "--", TASK]);

    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        w.sb.calls("opencode")
            .iter()
            .all(|call| call.argv.first().map(String::as_str) != Some("db")),
        "a session read after a run that answered costs an opencode start: {:?}",
        w.sb.calls("opencode")
    );
}
