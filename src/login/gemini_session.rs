//! One Gemini CLI session from its chat record ([`super::gemini_chat`]), for a hand-off
//! (DESIGN §21), and the usage limit its final error names.
//!
//! agent starts each session under an id of its own (`--session-id UUID`), and Gemini CLI
//! 0.61 names the record after it: `<home>/tmp/<project>/chats/session-<time>-<id[..8]>.jsonl`
//! (its project directory is a name of its own choosing, `projects.json`), with the full id
//! as the first line's `sessionId` — so the session is found by id, never mistaken for
//! another in the same folder. What was asked are `user` messages; what it answered,
//! `gemini` messages with their `model` and `toolCalls` (edits and commands, as
//! [`super::run_actions::gemini_tool_call`] reads them).
//!
//! A limit is read from what Gemini CLI itself wrote, never from a message of the model's:
//! an interactive session records the error it showed as an `error` message (its quota
//! words: "Usage limit reached for all Pro models…"); a headless run records nothing of it
//! and ends on its final error on stderr — the stack of its `TerminalQuotaError` or
//! `RetryableQuotaError` (the class names are its code's), or with `-o json` the document
//! `{"session_id", "error": {"message", "code": 429}}` — whose dump names `retryDelayMs`
//! when the API said how long.

use std::path::{Path, PathBuf};
use std::time::Duration;

use jiff::Timestamp;
use serde_json::Value;

use super::gemini_chat::{self, Chat};
use super::run_actions::{self, Actions};
use super::said_limit::SaidLimit;
use super::session::{Collector, Session};
use crate::adapter::Meaning;

/// How many of an id's characters Gemini CLI puts in a record's file name.
const NAME_ID_CHARS: usize = 8;

/// How many project directories are looked through for one session: a home with more is
/// not searched whole.
const MOST_PROJECTS: usize = 4096;

/// The session `id` under `tmp` (Gemini CLI's `<home>/tmp`); `None` with no id (agent
/// finds a Gemini CLI record only by the id it gave), or no such record.
pub fn read(tmp: &Path, _cwd: &Path, _start: Timestamp, id: Option<&str>) -> Option<Session> {
    collect(tmp, id?).and_then(Collector::finish)
}

/// What the session `id` under `tmp` did: its edits and commands.
pub fn actions(tmp: &Path, id: Option<&str>) -> Actions {
    id.and_then(|id| collect(tmp, id))
        .map(|collector| collector.actions)
        .unwrap_or_default()
}

fn collect(tmp: &Path, id: &str) -> Option<Collector> {
    let chat = find(tmp, id)?;
    let mut collector = Collector::default();
    collector.id(id);
    for message in &chat.messages {
        collector.saw_row();
        match gemini_chat::kind_of(message) {
            Some("user") => collector.prompt(&gemini_chat::text_of(message)),
            Some("gemini") => answer(message, &mut collector),
            Some("error") if is_limit(&gemini_chat::text_of(message)) => collector.ran_out(),
            _ => {}
        }
    }
    Some(collector)
}

/// One answer of the model: its text, its model, its tool calls.
fn answer(message: &Value, collector: &mut Collector) {
    if let Some(model) = message.get("model").and_then(Value::as_str) {
        collector.model(model);
    }
    let text = gemini_chat::text_of(message);
    let calls = message
        .get("toolCalls")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    for call in calls {
        run_actions::gemini_tool_call(call, &mut collector.actions);
        super::gemini_work::tool_call(call, &mut collector.work);
    }
    if !text.trim().is_empty() {
        collector.reply(&text, None);
    }
    if !text.trim().is_empty() || !calls.is_empty() {
        collector.answered();
    }
}

/// Whether an error Gemini CLI showed is its quota's, in its own words.
fn is_limit(text: &str) -> bool {
    matches!(
        crate::adapter::gemini::SELF_CHECK.meaning(text),
        Some((Meaning::Limit, _))
    )
}

/// The chat whose metadata names session `id`, from the records named after it.
fn find(tmp: &Path, id: &str) -> Option<Chat> {
    let short: String = id.chars().take(NAME_ID_CHARS).collect();
    if short.is_empty() {
        return None;
    }
    let projects = std::fs::read_dir(tmp).ok()?;
    projects
        .flatten()
        .take(MOST_PROJECTS)
        .flat_map(|project| named_after(&project.path().join("chats"), &short))
        .filter(|path| gemini_chat::names_session(path, id))
        .filter_map(|path| gemini_chat::replay(&path))
        .find(|chat| chat.session.as_deref() == Some(id))
}

/// The records in `chats` whose names end with `short` (`session-…-<short>.jsonl`).
fn named_after(chats: &Path, short: &str) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(chats) else {
        return Vec::new();
    };
    entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            name.starts_with("session-")
                && [".jsonl", ".json"]
                    .iter()
                    .any(|ext| name.ends_with(&format!("-{short}{ext}")))
        })
        .collect()
}

/// The usage limit Gemini CLI's final error on stderr (`stderr`) names, and how long until
/// it resets when the API said; `None` when it ended on no quota of its own.
pub fn limit_in_output(stderr: &str) -> Option<SaidLimit> {
    let lines: Vec<&str> = stderr.lines().collect();
    // Only its own reporter's line names the class: a tool's or a hook's words on stderr
    // do not begin so.
    let report = lines.iter().position(|line| {
        line.starts_with(REPORTER)
            && ["TerminalQuotaError: ", "RetryableQuotaError: "]
                .iter()
                .any(|class| line.contains(class))
    });
    if report.is_none() && final_error_code(stderr) != Some(429) {
        return None;
    }
    // The delay is the one in the dump that follows the report, never a line elsewhere.
    let dump = report.map_or(&[][..], |at| {
        &lines[at + 1..lines.len().min(at + 1 + DUMP_LINES)]
    });
    Some(SaidLimit {
        resets_in: retry_delay(dump),
    })
}

/// How Gemini CLI's reporter begins the line naming the error it ended on (0.61).
const REPORTER: &str = "Error when talking to Gemini API";

/// How many lines of the error's dump (its stack, then its fields) follow the report.
const DUMP_LINES: usize = 40;

/// The `code` of the JSON document stderr ends with (`-o json`'s error), if it does.
fn final_error_code(stderr: &str) -> Option<u64> {
    let at = stderr.rfind("\n{")?;
    let doc: Value = serde_json::from_str(stderr[at..].trim()).ok()?;
    doc.pointer("/error/code").and_then(Value::as_u64)
}

/// `retryDelayMs: N` in the error's dump: how long the API said to wait.
fn retry_delay(dump: &[&str]) -> Option<Duration> {
    dump.iter().find_map(|line| {
        let ms = line.trim().strip_prefix("retryDelayMs: ")?;
        ms.trim_end_matches(',')
            .parse::<u64>()
            .ok()
            .map(Duration::from_millis)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const ID: &str = "5f0c1e9a-2b3d-4e5f-8a7b-9c0d1e2f3a4b";

    fn write_chat(tmp: &Path, project: &str, name: &str, lines: &[Value]) {
        let chats = tmp.join(project).join("chats");
        std::fs::create_dir_all(&chats).unwrap();
        let text: Vec<String> = lines.iter().map(ToString::to_string).collect();
        std::fs::write(chats.join(name), text.join("\n") + "\n").unwrap();
    }

    fn meta(id: &str) -> Value {
        json!({"sessionId": id, "projectHash": "h", "startTime": "2026-12-04T10:00:00Z", "kind": "main"})
    }

    #[test]
    fn the_session_is_found_by_agents_id_and_read_as_gemini_cli_wrote_it() {
        let dir = tempfile::tempdir().unwrap();
        let tmp = dir.path();
        // Another session whose id begins with the same eight characters, elsewhere.
        write_chat(
            tmp,
            "other",
            "session-2026-12-04T09-00-5f0c1e9a.jsonl",
            &[
                meta("5f0c1e9a-0000-4000-8000-000000000000"),
                json!({"id": "1", "type": "user", "content": [{"text": "not this one"}]}),
            ],
        );
        write_chat(
            tmp,
            "project",
            "session-2026-12-04T10-00-5f0c1e9a.jsonl",
            &[
                meta(ID),
                json!({"id": "1", "type": "user", "content": [{"text": "port the parser"}]}),
                json!({"id": "2", "type": "gemini", "content": "", "model": "gemini-3-pro"}),
                json!({"id": "2", "type": "gemini", "content": "Ported the lexer.", "model": "gemini-3-pro",
                "toolCalls": [
                    {"id": "t1", "name": "replace", "status": "success",
                     "args": {"file_path": "src/lexer.rs", "old_string": "a", "new_string": "b"}},
                    {"id": "t2", "name": "run_shell_command", "status": "error",
                     "args": {"command": "cargo test"}},
                    {"id": "t3", "name": "write_file", "status": "cancelled",
                     "args": {"file_path": "src/never.rs", "content": "x"}},
                ]}),
                json!({"id": "3", "type": "user", "content": "go on"}),
                json!({"id": "4", "type": "error",
                   "content": "Usage limit reached for all Pro models. Access resets at 3:04 PM PST."}),
            ],
        );

        let session = read(tmp, Path::new("/work/p"), Timestamp::now(), Some(ID)).unwrap();
        assert_eq!(session.id.as_deref(), Some(ID));
        assert_eq!(session.model.as_deref(), Some("gemini-3-pro"));
        assert_eq!(session.first_prompt.as_deref(), Some("port the parser"));
        assert_eq!(session.last_prompt.as_deref(), Some("go on"));
        assert_eq!(session.last_replies, ["Ported the lexer."]);
        assert_eq!(session.files, ["src/lexer.rs"]);
        assert!(session.ended_on_its_limit, "{session:?}");
        assert_eq!(actions(tmp, Some(ID)).commands, 1);
        assert_eq!(
            read(tmp, Path::new("/work/p"), Timestamp::now(), None),
            None
        );
    }

    #[test]
    fn a_limit_is_gemini_clis_own_error_never_the_models_words() {
        let dir = tempfile::tempdir().unwrap();
        write_chat(
            dir.path(),
            "p",
            "session-2026-12-04T10-00-5f0c1e9a.jsonl",
            &[
                meta(ID),
                json!({"id": "1", "type": "user", "content": "say it"}),
                json!({"id": "2", "type": "gemini", "content": "Usage limit reached for all Pro models."}),
            ],
        );
        let session = read(dir.path(), Path::new("/p"), Timestamp::now(), Some(ID)).unwrap();
        assert!(!session.ended_on_its_limit, "{session:?}");
    }

    #[test]
    fn its_final_quota_error_on_stderr_is_a_limit_with_the_delay_the_api_gave() {
        let fixture = include_str!("../../tests/fixtures/self_check/gemini-limit.stderr");
        let said = limit_in_output(fixture).expect("the real 0.61 quota error");
        assert_eq!(said.resets_in, None, "the mock said no delay");

        let terminal = "Error when talking to Gemini API TerminalQuotaError: You have exhausted your daily quota on this model.\n    at classifyGoogleError (file:///x.js:1:1) {\n  retryDelayMs: 3600000,\n  status: 429\n}\n";
        let said = limit_in_output(terminal).unwrap();
        assert_eq!(said.resets_in, Some(Duration::from_secs(3600)));

        let json_only = "warning\n{\n  \"session_id\": \"s\",\n  \"error\": {\n    \"type\": \"Error\",\n    \"message\": \"Quota exceeded\",\n    \"code\": 429\n  }\n}\n";
        assert!(limit_in_output(json_only).is_some());

        for other in [
            "{\n  \"session_id\": \"s\",\n  \"error\": {\"type\": \"Error\", \"message\": \"API key not valid\", \"code\": 400}\n}",
            "An unexpected critical error occurred: Error: fetch failed",
            "the model said: TerminalQuotaError",
            // A hook's or a tool's words on stderr are not its reporter's.
            "hook: TerminalQuotaError: You have exhausted your daily quota\n  retryDelayMs: 604800000,\n",
        ] {
            assert!(limit_in_output(other).is_none(), "{other}");
        }
    }
}
