//! One Claude Code session from its transcript (`<config dir>/projects/<project>/<id>.jsonl`,
//! see [`super::claude_transcript`]), for a hand-off (DESIGN §21).
//!
//! Measured with 2.1.332: a prompt is a row `{"type": "user", "message": {"role": "user",
//! "content": "…"}, "sessionId": …, "timestamp": …}` (or `content` an array of `text`
//! blocks, with images beside them). Other user rows are not prompts: a tool's result (an
//! array of `tool_result` blocks, with `toolUseResult` beside it), the CLI's own context
//! (`isMeta: true`, the `<local-command-caveat>` row), a slash command and its output
//! (`<command-name>…`, `<local-command-stdout>…`), a `!` shell line (`<bash-input>`,
//! `<bash-stdout>`), the summary a compaction writes (`isCompactSummary: true`), the
//! interruption marker (`[Request interrupted by user…]`) and a subagent's rows
//! (`isSidechain: true`, its prompt is the Task tool's). An answer is one assistant row per
//! content block, the blocks of one answer sharing `message.id`; the CLI's own rows (a
//! limit, an API error) are its `<synthetic>` model's and no answer.

use std::path::Path;

use jiff::Timestamp;
use serde_json::Value;

use super::claude_transcript::message_text;
use super::claude_work;
use super::records;
use super::run_actions;
use super::session::{Collector, Session};

/// The CLI's model name on the rows it writes itself.
const SYNTHETIC_MODEL: &str = "<synthetic>";

/// How a user row's text begins when the CLI wrote it, not the person.
const NOT_PROMPTS: &[&str] = &[
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
    "<system-reminder>",
    "[Request interrupted by user",
];

/// The session `id` in the project directory `project_dir` (all of its transcript); with no
/// id, the newest transcript written since `start`, and of it only the rows written since
/// then. `None` when there is no such transcript.
pub fn read(project_dir: &Path, start: Timestamp, id: Option<&str>) -> Option<Session> {
    let (path, since) = match id {
        // An id is a file name here, never a path: it may come from the user's words.
        Some(id) if is_plain_name(id) => (project_dir.join(format!("{id}.jsonl")), None),
        Some(_) => return None,
        None => {
            // A subagent's own transcript (`agent-<id>.jsonl`, which some 2.0.x builds kept
            // beside the session's) is never the session.
            let newest = records::files_newest_first(project_dir, Some(start), |name| {
                records::has_extension(name, "jsonl") && !name.starts_with("agent-")
            })
            .into_iter()
            .next()?;
            (newest.0, Some(start))
        }
    };
    if !path.is_file() {
        return None;
    }
    let mut collector = Collector::default();
    if let Some(id) = id {
        collector.id(id);
    }
    for line in records::lines(&path) {
        let Ok(row) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let written = row.get("timestamp").and_then(records::timestamp);
        if since.is_some_and(|since| written.is_none_or(|at| at < since)) {
            continue;
        }
        collector.saw_row();
        if id.is_none()
            && let Some(session) = row.get("sessionId").and_then(Value::as_str)
        {
            collector.id(session);
        }
        if flag(&row, "isSidechain") {
            continue;
        }
        match row.get("type").and_then(Value::as_str) {
            Some("user") => {
                if let Some(prompt) = prompt(&row) {
                    collector.prompt(&prompt);
                }
                claude_work::tool_results(&row, &mut collector.work);
            }
            Some("assistant") if super::claude_transcript::parse_row(&line).is_some() => {
                collector.ran_out();
            }
            Some("assistant") => answer(&row, &mut collector),
            _ => {}
        }
    }
    collector.finish()
}

/// The prompt a user row is, if it is one the person typed.
fn prompt(row: &Value) -> Option<String> {
    if flag(row, "isMeta") || flag(row, "isCompactSummary") || row.get("toolUseResult").is_some() {
        return None;
    }
    let content = row.pointer("/message/content")?;
    let is_tool_result =
        |block: &Value| block.get("type").and_then(Value::as_str) == Some("tool_result");
    if content
        .as_array()
        .is_some_and(|blocks| blocks.iter().any(is_tool_result))
    {
        return None;
    }
    let text = message_text(row)?;
    let begins = text.trim_start();
    (!NOT_PROMPTS.iter().any(|marker| begins.starts_with(marker))).then_some(text)
}

/// What an assistant row adds: its model, its text, its edits.
fn answer(row: &Value, collector: &mut Collector) {
    let model = row.pointer("/message/model").and_then(Value::as_str);
    if model == Some(SYNTHETIC_MODEL) || flag(row, "isApiErrorMessage") {
        return;
    }
    collector.answered();
    if let Some(model) = model {
        collector.model(model);
    }
    if let Some(text) = message_text(row) {
        let message = row.pointer("/message/id").and_then(Value::as_str);
        collector.reply(&text, message);
    }
    run_actions::claude_row(row, &mut collector.actions);
    claude_work::tool_uses(row, &mut collector.work);
}

fn flag(row: &Value, name: &str) -> bool {
    row.get(name).and_then(Value::as_bool) == Some(true)
}

/// Whether `id` names a file in the project directory and nothing else.
fn is_plain_name(id: &str) -> bool {
    !id.is_empty()
        && id != "."
        && id != ".."
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::login::session_work::{CommandRun, Ended, FileChange};
    use serde_json::json;

    const SESSION: &str = "0b9f3c52-7d1e-4c7a-9a55-2f0e6a1d8c41";
    const OLD_SESSION: &str = "5e2d7a10-1111-4c7a-9a55-2f0e6a1d8c41";

    fn at(offset_secs: i64) -> String {
        (Timestamp::now() + jiff::SignedDuration::from_secs(offset_secs)).to_string()
    }

    /// The envelope 2.1.332 puts around every row.
    fn envelope(kind: &str, session: &str, timestamp: &str, message: &Value) -> Value {
        json!({"parentUuid": null, "isSidechain": false, "userType": "external",
            "cwd": "/home/u/proj", "sessionId": session, "version": "2.1.332",
            "gitBranch": "main", "type": kind, "message": message,
            "uuid": "9a1c", "timestamp": timestamp})
    }

    fn user(session: &str, timestamp: &str, content: &Value) -> Value {
        envelope(
            "user",
            session,
            timestamp,
            &json!({"role": "user", "content": content}),
        )
    }

    fn assistant(session: &str, timestamp: &str, id: &str, content: &Value) -> Value {
        envelope(
            "assistant",
            session,
            timestamp,
            &json!({"id": id, "type": "message", "role": "assistant",
                "model": "claude-opus-5", "content": content, "stop_reason": null,
                "usage": {"input_tokens": 3, "output_tokens": 12}}),
        )
    }

    /// One session's rows since `t0`, with every kind of user row that is no prompt.
    fn this_session(t0: i64) -> Vec<Value> {
        let mut meta = user(
            SESSION,
            &at(t0),
            &json!(
                "<local-command-caveat>Caveat: the messages below were generated by the user while running local commands.</local-command-caveat>"
            ),
        );
        meta["isMeta"] = true.into();
        let mut tool_result = user(
            SESSION,
            &at(t0 + 4),
            &json!([{"tool_use_id": "toolu_01", "type": "tool_result",
                "content": "The file /home/u/proj/src/lib.rs has been updated."}]),
        );
        tool_result["toolUseResult"] = json!({"filePath": "/home/u/proj/src/lib.rs"});
        let mut compact = user(
            SESSION,
            &at(t0 + 5),
            &json!("This session is being continued from a previous conversation…"),
        );
        compact["isCompactSummary"] = true.into();
        let mut sidechain = user(
            SESSION,
            &at(t0 + 6),
            &json!("Search the tests for flaky ones"),
        );
        sidechain["isSidechain"] = true.into();
        let mut limit = assistant(
            SESSION,
            &at(t0 + 9),
            "m-limit",
            &json!([{"type": "text", "text": "You've hit your 5-hour limit · resets 3pm (UTC)"}]),
        );
        limit["message"]["model"] = "<synthetic>".into();
        limit["isApiErrorMessage"] = true.into();
        limit["error"] = "rate_limit".into();
        // 2.1.332's limit as data beside its text.
        limit["apiError"] = "usage_limit_reached".into();
        limit["apiErrorParams"] = json!({"rate_limit_info": {"status": "rejected",
            "resetsAt": Timestamp::now().as_second() + 3600, "rateLimitType": "five_hour"}});
        vec![
            meta,
            user(
                SESSION,
                &at(t0 + 1),
                &json!("fix the failing tests in `src/lib.rs`"),
            ),
            assistant(
                SESSION,
                &at(t0 + 2),
                "msg_01",
                &json!([{"type": "text", "text": "I'll look at the tests."}]),
            ),
            assistant(
                SESSION,
                &at(t0 + 3),
                "msg_01",
                &json!([{"type": "tool_use", "id": "toolu_01", "name": "Edit",
                    "input": {"file_path": "/home/u/proj/src/lib.rs",
                        "old_string": "a", "new_string": "b"}}]),
            ),
            tool_result,
            compact,
            sidechain,
            user(
                SESSION,
                &at(t0 + 7),
                &json!(
                    "<command-name>/cost</command-name>\n<command-message>cost</command-message>\n<command-args></command-args>"
                ),
            ),
            user(
                SESSION,
                &at(t0 + 7),
                &json!("<local-command-stdout>Total cost: $0.12</local-command-stdout>"),
            ),
            user(
                SESSION,
                &at(t0 + 7),
                &json!([{"type": "text", "text": "[Request interrupted by user]"}]),
            ),
            user(
                SESSION,
                &at(t0 + 8),
                &json!([{"type": "text", "text": "now run them again"}]),
            ),
            assistant(
                SESSION,
                &at(t0 + 8),
                "msg_02",
                &json!([{"type": "text", "text": "Running `cargo test`."},
                    {"type": "tool_use", "id": "toolu_02", "name": "Bash",
                        "input": {"command": "cargo test"}}]),
            ),
            limit,
        ]
    }

    fn write(dir: &Path, name: &str, rows: &[Value]) -> std::path::PathBuf {
        std::fs::create_dir_all(dir).unwrap();
        let path = dir.join(name);
        let text: Vec<String> = rows.iter().map(Value::to_string).collect();
        std::fs::write(&path, text.join("\n") + "\n").unwrap();
        path
    }

    #[test]
    fn a_session_named_by_its_id_is_read_whole_from_its_own_transcript() {
        let home = tempfile::tempdir().unwrap();
        let dir = home.path().join("projects/-home-u-proj");
        // An older session's transcript beside it, newer on disk: never read.
        write(
            &dir,
            &format!("{OLD_SESSION}.jsonl"),
            &[user(OLD_SESSION, &at(-7200), &json!("an old task"))],
        );
        write(&dir, &format!("{SESSION}.jsonl"), &this_session(-600));
        // The start is after the session began (a resumed session): its id still names
        // all of it.
        let session = read(&dir, Timestamp::now(), Some(SESSION)).unwrap();
        assert_eq!(
            session,
            Session {
                id: Some(SESSION.into()),
                model: Some("claude-opus-5".into()),
                first_prompt: Some("fix the failing tests in `src/lib.rs`".into()),
                last_prompt: Some("now run them again".into()),
                last_replies: vec![
                    "I'll look at the tests.".into(),
                    "Running `cargo test`.".into()
                ],
                files: vec!["/home/u/proj/src/lib.rs".into()],
                changes: vec![FileChange {
                    path: "/home/u/proj/src/lib.rs".into(),
                    added: 1,
                    removed: 1,
                    edits: 1,
                    last_new_text: "b".into(),
                    deleted: false,
                }],
                // The session ran out while `cargo test` ran: no result of it.
                commands: vec![CommandRun {
                    command: "cargo test".into(),
                    ended: Ended::Unknown,
                    output_tail: None,
                }],
                ended_on_its_limit: true,
                ..Session::default()
            }
        );
        assert_eq!(read(&dir, Timestamp::now(), Some("missing-id")), None);
        assert_eq!(read(&dir, Timestamp::now(), Some("../projects/x")), None);
    }

    #[test]
    fn a_session_that_answered_after_its_limit_did_not_end_on_it() {
        let home = tempfile::tempdir().unwrap();
        let dir = home.path().join("projects/-home-u-proj");
        // Claude Code waited for the reset and went on: its answer comes after the limit row.
        let mut rows = this_session(-600);
        rows.push(assistant(
            SESSION,
            &at(-10),
            "msg_03",
            &json!([{"type": "text", "text": "The tests pass now."}]),
        ));
        write(&dir, &format!("{SESSION}.jsonl"), &rows);
        let session = read(&dir, Timestamp::now(), Some(SESSION)).unwrap();
        assert!(!session.ended_on_its_limit, "{session:?}");
        // A prompt typed after the limit that is refused again ends on it once more.
        let mut refused_again = this_session(-600);
        let limit = refused_again.last().unwrap().clone();
        refused_again.push(user(SESSION, &at(-5), &json!("are you there?")));
        refused_again.push(limit);
        write(&dir, &format!("{SESSION}.jsonl"), &refused_again);
        let session = read(&dir, Timestamp::now(), Some(SESSION)).unwrap();
        assert!(session.ended_on_its_limit, "{session:?}");
    }

    #[test]
    fn without_an_id_only_rows_since_the_start_are_read() {
        let home = tempfile::tempdir().unwrap();
        let dir = home.path().join("projects/-home-u-proj");
        let start = Timestamp::now();
        // One transcript holding an older session's rows, then this run's.
        let mut rows = vec![
            user(OLD_SESSION, &at(-3600), &json!("an old task")),
            assistant(
                OLD_SESSION,
                &at(-3590),
                "msg_old",
                &json!([{"type": "text", "text": "old answer"},
                    {"type": "tool_use", "id": "t", "name": "Write",
                        "input": {"file_path": "/home/u/proj/old.rs", "content": ""}}]),
            ),
        ];
        rows.extend(this_session(1));
        let path = write(&dir, "transcript.jsonl", &rows);
        // A subagent's transcript beside it, written last.
        let mut task = user(SESSION, &at(2), &json!("Search the tests for flaky ones"));
        task["isSidechain"] = true.into();
        let agent = write(&dir, "agent-3f2a.jsonl", &[task]);
        // Stamped by the test's clock, as Claude Code's own writes are by its clock.
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(std::time::SystemTime::now())
            .unwrap();
        std::fs::File::options()
            .write(true)
            .open(&agent)
            .unwrap()
            .set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(1))
            .unwrap();
        let session = read(&dir, start, None).unwrap();
        assert_eq!(session.id.as_deref(), Some(SESSION));
        assert_eq!(
            session.first_prompt.as_deref(),
            Some("fix the failing tests in `src/lib.rs`")
        );
        assert_eq!(session.last_prompt.as_deref(), Some("now run them again"));
        assert!(
            !session.last_replies.iter().any(|r| r.contains("old")),
            "{session:?}"
        );
        assert_eq!(session.files, ["/home/u/proj/src/lib.rs"]);
        // Nothing written since a later start: no session.
        let later = Timestamp::now() + jiff::SignedDuration::from_secs(60);
        assert_eq!(read(&dir, later, None), None);
        assert_eq!(read(&home.path().join("none"), start, None), None);
    }
}
