//! One Codex session from its rollout (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`,
//! see [`super::codex_rollout`]), for a hand-off (DESIGN §21).
//!
//! The session's id is its `session_meta` line's `payload.id`, its model the last
//! `turn_context`'s. What was said are `response_item` lines whose payload is a `message`:
//! role `user` with `input_text` blocks, role `assistant` with `output_text` blocks
//! (`developer` messages are Codex's own instructions). Some user messages are Codex's own
//! context, not the person's words, and Codex itself leaves them out of what it calls the
//! user's messages (codex-rs `is_session_prefix`, `UserInstructions`, `SkillInstructions`):
//! those beginning `<environment_context>`, `<turn_aborted>`, `<user_instructions>`,
//! `# AGENTS.md instructions for …`, `<skill>`, `<user_shell_command>` and the like.
//! Edits and commands are [`super::run_actions`]'s, and the plan, the edits and the commands
//! with their endings [`super::codex_work`]'s, from the same lines.

use std::path::Path;

use jiff::Timestamp;
use serde_json::Value;

use super::codex_rollout;
use super::codex_work;
use super::records;
use super::run_actions;
use super::session::{Collector, Session};

/// How a user message begins when Codex put it there (case as Codex compares: the tags in
/// any case, the AGENTS.md heading as written).
const CONTEXT_TAGS: &[&str] = &[
    "<environment_context>",
    "<turn_aborted>",
    "<tool_context>",
    "<reasoning_context>",
    "<pinned_notes>",
    "<subagent_notification>",
    "<context_update>",
    "<user_instructions>",
    "<user_shell_command>",
    "<skill>",
];
const AGENTS_MD_HEADING: &str = "# AGENTS.md instructions for ";

/// How a turn refused for its login's usage limit is marked in its `task_complete` event
/// (0.171: `"error": {"message": "You've hit your usage limit…", "codex_error_info":
/// "usage_limit_exceeded"}`, measured against the mock's `usage_limit_reached` 429).
const USAGE_LIMIT: &str = "usage_limit_exceeded";

/// The session `id` under `sessions` (`$CODEX_HOME/sessions`), all of its rollout, when it
/// was written since `start`; with no id, the rollout of the run that started at `start` in
/// `cwd` ([`codex_rollout::find_run`]) and of it only the lines written since then. `None`
/// when there is no such rollout.
pub fn read(sessions: &Path, cwd: &Path, start: Timestamp, id: Option<&str>) -> Option<Session> {
    let (path, since) = match id {
        Some(id) => (codex_rollout::find_session(sessions, id, start)?, None),
        None => (
            codex_rollout::find_run(sessions, cwd, start, None)?.path,
            Some(start),
        ),
    };
    let mut collector = Collector::default();
    for line in records::lines(&path) {
        let Ok(row) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let payload = row.get("payload");
        let field = |name: &str| payload.and_then(|p| p.get(name)).and_then(Value::as_str);
        let kind = row.get("type").and_then(Value::as_str);
        // The session's id is the rollout's, whenever its first line was written.
        if kind == Some("session_meta") {
            if let Some(id) = field("id") {
                collector.id(id);
            }
            continue;
        }
        let written = row.get("timestamp").and_then(records::timestamp);
        if since.is_some_and(|since| written.is_none_or(|at| at < since)) {
            continue;
        }
        collector.saw_row();
        match kind {
            Some("turn_context") => {
                if let Some(model) = field("model") {
                    collector.model(model);
                }
            }
            Some("response_item") => {
                let Some(payload) = payload else { continue };
                match (field("type"), field("role")) {
                    (Some("message"), Some("user")) => {
                        let text = text_of(payload, "input_text");
                        if !is_context(&text) {
                            collector.prompt(&text);
                        }
                    }
                    (Some("message"), Some("assistant")) => {
                        collector.reply(&text_of(payload, "output_text"), None);
                    }
                    _ => {
                        run_actions::codex_item(payload, &mut collector.actions);
                        codex_work::item(payload, &mut collector.work);
                    }
                }
            }
            Some("event_msg") => {
                if let Some(payload) = payload {
                    codex_work::event(payload, &mut collector.work);
                }
                if field("type") == Some("task_complete") {
                    // Codex's own verdict on the turn (0.171): `error.codex_error_info` is
                    // data, never the model's words; a turn that completed without one
                    // answered.
                    let info = payload
                        .and_then(|p| p.pointer("/error/codex_error_info"))
                        .and_then(Value::as_str);
                    match info {
                        Some(USAGE_LIMIT) => collector.ran_out(),
                        _ => collector.answered(),
                    }
                }
            }
            _ => {}
        }
    }
    collector.finish()
}

/// The text of a message's `kind` blocks, joined by line ends.
fn text_of(payload: &Value, kind: &str) -> String {
    let Some(blocks) = payload.get("content").and_then(Value::as_array) else {
        return String::new();
    };
    blocks
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some(kind))
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether a user message is Codex's own context rather than the person's words.
fn is_context(text: &str) -> bool {
    let begins = text.trim_start();
    begins.starts_with(AGENTS_MD_HEADING)
        || CONTEXT_TAGS.iter().any(|tag| {
            begins
                .get(..tag.len())
                .is_some_and(|head| head.eq_ignore_ascii_case(tag))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::login::session_work::FileChange;
    use serde_json::json;

    const ID: &str = "019a4c1e-7f0b-7c12-9d3e-5b8a2f6c0d11";

    fn at(offset_secs: i64) -> String {
        (Timestamp::now() + jiff::SignedDuration::from_secs(offset_secs)).to_string()
    }

    fn item(timestamp: &str, payload: &Value) -> Value {
        json!({"timestamp": timestamp, "type": "response_item", "payload": payload})
    }

    fn message(timestamp: &str, role: &str, kind: &str, text: &str) -> Value {
        item(
            timestamp,
            &json!({"type": "message", "role": role, "content": [{"type": kind, "text": text}]}),
        )
    }

    /// A 0.171.0-shaped `codex exec` rollout that began `t0` seconds from now, in `cwd`.
    fn rollout(id: &str, t0: i64, cwd: &str) -> Vec<Value> {
        let patch = "*** Begin Patch\n*** Update File: src/lib.rs\n@@\n-a\n+b\n*** End Patch";
        vec![
            json!({"timestamp": at(t0), "type": "session_meta", "payload": {"id": id,
                "timestamp": at(t0), "cwd": cwd, "originator": "codex_exec",
                "cli_version": "0.171.0", "source": "exec", "model_provider": "openai"}}),
            message(
                &at(t0),
                "developer",
                "input_text",
                "<permissions instructions>…",
            ),
            message(
                &at(t0),
                "user",
                "input_text",
                "# AGENTS.md instructions for /work/p\n\n<INSTRUCTIONS>\nbe brief\n</INSTRUCTIONS>",
            ),
            message(
                &at(t0),
                "user",
                "input_text",
                "<environment_context>\n  <cwd>/work/p</cwd>\n  <shell>bash</shell>\n</environment_context>",
            ),
            json!({"timestamp": at(t0), "type": "turn_context", "payload": {"cwd": cwd,
                "model": "gpt-6.2-sol", "approval_policy": "never"}}),
            message(&at(t0 + 1), "user", "input_text", "make the build green"),
            json!({"timestamp": at(t0 + 1), "type": "event_msg", "payload": {"type": "user_message",
                "message": "make the build green"}}),
            item(
                &at(t0 + 2),
                &json!({"type": "reasoning", "summary": [], "encrypted_content": "x"}),
            ),
            message(
                &at(t0 + 2),
                "assistant",
                "output_text",
                "Patching src/lib.rs.",
            ),
            item(
                &at(t0 + 3),
                &json!({"type": "custom_tool_call", "name": "apply_patch",
                "call_id": "c1", "input": patch}),
            ),
            item(
                &at(t0 + 3),
                &json!({"type": "function_call_output", "call_id": "c1",
                "output": "*** Add File: fake.rs"}),
            ),
            message(
                &at(t0 + 4),
                "user",
                "input_text",
                "<turn_aborted>\n</turn_aborted>",
            ),
            message(
                &at(t0 + 5),
                "user",
                "input_text",
                "also update the changelog",
            ),
            message(
                &at(t0 + 6),
                "assistant",
                "output_text",
                "Done with the patch; the changelog next.",
            ),
        ]
    }

    fn write(sessions: &Path, day: &str, name: &str, rows: &[Value]) {
        let dir = sessions.join(day);
        std::fs::create_dir_all(&dir).unwrap();
        let text: Vec<String> = rows.iter().map(Value::to_string).collect();
        let path = dir.join(name);
        std::fs::write(&path, text.join("\n") + "\n").unwrap();
        // Written now by the test's clock (the file system stamps the machine's).
        std::fs::File::options()
            .append(true)
            .open(&path)
            .and_then(|file| file.set_modified(std::time::SystemTime::now()))
            .unwrap();
    }

    fn today() -> String {
        let day = Timestamp::now()
            .to_zoned_datetime(jiff::tz::TimeZone::UTC)
            .date();
        format!("{:04}/{:02}/{:02}", day.year(), day.month(), day.day())
    }

    #[test]
    fn this_runs_rollout_gives_the_session_without_codexs_own_context() {
        let home = tempfile::tempdir().unwrap();
        let sessions = home.path().join("sessions");
        let start = Timestamp::now();
        write(
            &sessions,
            &today(),
            &format!("rollout-x-{ID}.jsonl"),
            &rollout(ID, 1, "/work/p"),
        );
        let session = read(&sessions, Path::new("/work/p"), start, None).unwrap();
        assert_eq!(
            session,
            Session {
                id: Some(ID.into()),
                model: Some("gpt-6.2-sol".into()),
                first_prompt: Some("make the build green".into()),
                last_prompt: Some("also update the changelog".into()),
                last_replies: vec![
                    "Patching src/lib.rs.".into(),
                    "Done with the patch; the changelog next.".into()
                ],
                files: vec!["src/lib.rs".into()],
                changes: vec![FileChange {
                    path: "src/lib.rs".into(),
                    added: 1,
                    removed: 1,
                    edits: 1,
                    last_new_text: "b".into(),
                    deleted: false,
                }],
                ended_on_its_limit: false,
                ..Session::default()
            }
        );
        assert_eq!(read(&sessions, Path::new("/work/other"), start, None), None);
    }

    #[test]
    fn a_resumed_session_named_by_its_id_is_read_whole_and_an_older_run_never() {
        let home = tempfile::tempdir().unwrap();
        let sessions = home.path().join("sessions");
        let start = Timestamp::now();
        // The session began long ago (its own day's directory); it was resumed since the
        // start, so its rollout was written since then.
        let mut rows = rollout(ID, -86_400 * 3, "/work/p");
        rows.push(message(&at(2), "user", "input_text", "continue"));
        write(
            &sessions,
            "2020/01/01",
            &format!("rollout-old-{ID}.jsonl"),
            &rows,
        );
        // Another session in the same directory, since the start: not this one.
        let other = "019a4c1e-0000-7c12-9d3e-5b8a2f6c0d11";
        write(
            &sessions,
            &today(),
            &format!("rollout-y-{other}.jsonl"),
            &rollout(other, 1, "/work/p"),
        );
        let session = read(&sessions, Path::new("/work/p"), start, Some(ID)).unwrap();
        assert_eq!(session.id.as_deref(), Some(ID));
        assert_eq!(
            session.first_prompt.as_deref(),
            Some("make the build green")
        );
        assert_eq!(session.last_prompt.as_deref(), Some("continue"));
        assert_eq!(
            read(&sessions, Path::new("/work/p"), start, Some("nope")),
            None
        );
    }

    /// Codex 0.171's `task_complete` of a turn its usage limit refused, as it wrote it
    /// against the mock's `usage_limit_reached` 429.
    fn refused_turn(at: &str) -> Value {
        json!({"timestamp": at, "type": "event_msg", "payload": {"type": "task_complete",
            "turn_id": "t2", "last_agent_message": null,
            "error": {"message": "You’ve hit your usage limit. Upgrade to Pro or try again at 7:17 AM.",
                      "codex_error_info": "usage_limit_exceeded"},
            "started_at": 1, "completed_at": 1, "duration_ms": 63}})
    }

    #[test]
    fn a_turn_codex_marked_usage_limit_exceeded_ends_the_session_on_its_limit_until_one_answers() {
        let home = tempfile::tempdir().unwrap();
        let sessions = home.path().join("sessions");
        let start = Timestamp::now();
        let mut rows = rollout(ID, 1, "/work/p");
        rows.push(refused_turn(&at(5)));
        write(&sessions, &today(), &format!("rollout-x-{ID}.jsonl"), &rows);
        let session = read(&sessions, Path::new("/work/p"), start, Some(ID)).unwrap();
        assert!(session.ended_on_its_limit, "{session:?}");

        // Resumed after the reset, the next turn completed: the limit is behind it.
        rows.push(json!({"timestamp": at(7), "type": "event_msg", "payload": {
            "type": "task_complete", "turn_id": "t3", "last_agent_message": "done"}}));
        write(&sessions, &today(), &format!("rollout-x-{ID}.jsonl"), &rows);
        let session = read(&sessions, Path::new("/work/p"), start, Some(ID)).unwrap();
        assert!(!session.ended_on_its_limit, "{session:?}");

        // The same words as a message of the model's are not Codex's verdict.
        let mut rows = rollout(ID, 1, "/work/p");
        rows.push(message(
            &at(5),
            "assistant",
            "output_text",
            "{\"codex_error_info\": \"usage_limit_exceeded\"}",
        ));
        write(&sessions, &today(), &format!("rollout-x-{ID}.jsonl"), &rows);
        let session = read(&sessions, Path::new("/work/p"), start, Some(ID)).unwrap();
        assert!(!session.ended_on_its_limit, "{session:?}");
    }
}
