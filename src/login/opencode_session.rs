//! One opencode session from its database, for a hand-off (DESIGN §21), read as the CLI's
//! own `opencode db QUERY --format json` answers it (agent reads no SQLite itself:
//! [`super::opencode_calls::query`]). Measured with 1.18.33 against a local mock:
//!
//! - `session(id, directory, time_created, …)`: `directory` is the absolute folder it ran
//!   in; `message(id, session_id, time_created, data)`, the role and the outcome in `data`;
//!   `part(id, message_id, data)`, what was said and done: `{"type": "text", "text": …}`,
//!   `{"type": "tool", "tool": "edit" | "write" | "bash" | …, "state": {"status", "input"}}`.
//! - `opencode run` prints its session's id nowhere: the run's session is the one of this
//!   folder with a message written since the run began (a continued session is older).
//! - A turn its provider refused at its quota — after opencode's five retries, honouring
//!   any `retry-after` — is an assistant message with no parts and
//!   `"error": {"name": "APIError", "data": {"statusCode": 429, "responseHeaders": {…}, …}}`:
//!   the record's own verdict, never the model's words, its reset the provider's
//!   `retry-after-ms` / `retry-after` when it sent one.
//!
//! Asking the CLI costs it a start (about a second of CPU), so a session is read only when
//! a run ended in failure (`Readers::session_costs_a_run`).

use std::path::Path;
use std::time::Duration;

use jiff::Timestamp;
use serde_json::Value;

use super::run_actions::Actions;
use super::session::{Collector, Session};
use crate::adapter::opencode as adapter;

/// The most rows one session's query reads: its newest, where it stopped and ran out.
const MOST_ROWS: usize = 5_000;

/// The longest delay a provider's `retry-after` is taken for: a week, the longest window.
const LONGEST_DELAY: Duration = Duration::from_secs(7 * 24 * 3600);

/// The session of the run that started at `start` in `cwd` (or the session `id`), by
/// opencode's database in its data directory `home`; `None` when opencode or its database
/// is not there, it did not answer, or no such session was written since `start`.
pub fn read(home: &Path, cwd: &Path, start: Timestamp, id: Option<&str>) -> Option<Session> {
    let rows = rows(home, cwd, start, id)?;
    let mut collector = Collector::default();
    let mut message: Option<String> = None;
    for row in rows.iter().take(MOST_ROWS) {
        collector.saw_row();
        if let Some(session) = row.get("session_id").and_then(Value::as_str) {
            collector.id(session);
        }
        let Some(info) = json_of(row.get("message")) else {
            continue;
        };
        let this = row
            .get("message_id")
            .and_then(Value::as_str)
            .map(String::from);
        let first_row_of_message = this != message;
        message = this;
        let part = json_of(row.get("part"));
        match info.get("role").and_then(Value::as_str) {
            Some("user") => {
                if let Some(text) = part.as_ref().and_then(text_of) {
                    collector.prompt(&text);
                }
            }
            Some("assistant") => {
                if first_row_of_message {
                    assistant(&info, &mut collector);
                }
                if let Some(part) = &part {
                    assistant_part(part, message.as_deref(), &mut collector);
                }
            }
            _ => {}
        }
    }
    collector.finish()
}

/// What the session's assistant message says of itself: its model, and whether its
/// provider refused it at its quota (the limit, with the reset the provider gave) or it
/// finished.
fn assistant(info: &Value, collector: &mut Collector) {
    if let Some(model) = info.get("modelID").and_then(Value::as_str) {
        collector.model(model);
    }
    let error = info.get("error");
    let refused = error.is_some_and(|e| {
        e.get("name").and_then(Value::as_str) == Some("APIError")
            && e.pointer("/data/statusCode").and_then(Value::as_u64) == Some(429)
    });
    if refused {
        collector.ran_out();
        collector.resets_in(error.and_then(retry_after));
    } else if info.get("finish").is_some() {
        collector.answered();
    }
}

/// A part of an assistant's message: its text, or a tool it ran.
fn assistant_part(part: &Value, message: Option<&str>, collector: &mut Collector) {
    match part.get("type").and_then(Value::as_str) {
        Some("text") => {
            if let Some(text) = text_of(part) {
                collector.reply(&text, message);
            }
        }
        Some("tool") => {
            tool(part, &mut collector.actions);
            super::opencode_work::tool_part(part, &mut collector.work);
        }
        _ => {}
    }
}

/// What a tool part did, when it ran: an edit changes its `filePath`, `bash` runs a command.
fn tool(part: &Value, actions: &mut Actions) {
    let ran = matches!(
        part.pointer("/state/status").and_then(Value::as_str),
        Some("completed" | "error")
    );
    if !ran {
        return;
    }
    match part.get("tool").and_then(Value::as_str) {
        Some("edit" | "write" | "multiedit" | "patch") => {
            if let Some(file) = part
                .pointer("/state/input/filePath")
                .and_then(Value::as_str)
            {
                actions.changed(file);
            }
        }
        Some("bash") => actions.commands += 1,
        _ => {}
    }
}

/// The provider's `retry-after-ms` (milliseconds) or `retry-after` (seconds) the refusal
/// carried; an HTTP date or anything else is no delay agent reads.
fn retry_after(error: &Value) -> Option<Duration> {
    let headers = error.pointer("/data/responseHeaders")?;
    // A provider's number, however absurd (`1e23`), is at most a week: no window is
    // longer, and a Duration would not hold it.
    let seconds = |name: &str, per_second: f64| {
        let value = headers
            .get(name)
            .and_then(Value::as_str)
            .and_then(|v| v.trim().parse::<f64>().ok())?;
        let seconds = value / per_second;
        (seconds.is_finite() && seconds >= 0.0)
            .then(|| Duration::from_secs_f64(seconds.min(LONGEST_DELAY.as_secs_f64())))
    };
    seconds("retry-after-ms", 1000.0).or_else(|| seconds("retry-after", 1.0))
}

/// A text part's text.
fn text_of(part: &Value) -> Option<String> {
    (part.get("type").and_then(Value::as_str) == Some("text"))
        .then(|| part.get("text").and_then(Value::as_str))
        .flatten()
        .map(str::to_string)
}

/// A column holding a JSON document (`opencode db` gives it as text).
fn json_of(column: Option<&Value>) -> Option<Value> {
    match column? {
        Value::String(text) => serde_json::from_str(text).ok(),
        doc @ Value::Object(_) => Some(doc.clone()),
        _ => None,
    }
}

/// The rows of the session, each a message with one of its parts, oldest first.
fn rows(home: &Path, cwd: &Path, start: Timestamp, id: Option<&str>) -> Option<Vec<Value>> {
    let binary = crate::backend::discover::find(adapter::COMMAND)?;
    let database = adapter::database(home);
    if !database.is_file() {
        return None;
    }
    let sql = session_query(cwd, start, id)?;
    match super::opencode_calls::query(&binary, &database, &sql)? {
        Value::Array(rows) => Some(rows),
        _ => None,
    }
}

/// The query for the session `id`, else the latest of `cwd` written since `start`. Its
/// words are data agent quotes itself: an id must be a plain name, a folder is quoted as
/// SQL quotes text.
fn session_query(cwd: &Path, start: Timestamp, id: Option<&str>) -> Option<String> {
    let session = match id {
        Some(id) => format!("'{}'", crate::adapter::dialect::plain_session_id(id)?),
        None => format!(
            "(SELECT m2.session_id FROM message m2 JOIN session s ON s.id = m2.session_id \
             WHERE s.directory = '{}' AND s.parent_id IS NULL AND m2.time_created >= {} \
             ORDER BY m2.time_created DESC LIMIT 1)",
            cwd.to_str()?.replace('\'', "''"),
            start.as_millisecond()
        ),
    };
    // The newest rows (where it stopped and ran out), oldest first; a tool's output only
    // for a command (its error is the brief's), never a file a tool read.
    Some(format!(
        "SELECT * FROM (SELECT m.session_id AS session_id, m.id AS message_id, \
         m.time_created AS at, p.id AS part_id, m.data AS message, \
         CASE WHEN json_extract(p.data, '$.tool') = 'bash' THEN p.data \
         ELSE json_remove(p.data, '$.state.output', '$.state.metadata') END AS part \
         FROM message m LEFT JOIN part p ON p.message_id = m.id \
         WHERE m.session_id = {session} ORDER BY m.time_created DESC, m.id DESC, p.id DESC \
         LIMIT {MOST_ROWS}) ORDER BY at, message_id, part_id"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_or_an_id_never_escapes_its_quotes() {
        let start = Timestamp::from_millisecond(1_796_366_549_601).unwrap();
        let sql = session_query(
            Path::new("/work/it's'; DROP TABLE session; --"),
            start,
            None,
        )
        .unwrap();
        assert!(
            sql.contains("s.directory = '/work/it''s''; DROP TABLE session; --'"),
            "{sql}"
        );
        assert!(sql.contains(">= 1796366549601"), "{sql}");
        assert!(session_query(Path::new("/w"), start, Some("ses_1' OR '1'='1")).is_none());
        assert!(
            session_query(
                Path::new("/w"),
                start,
                Some("ses_dc036c7d3ffeqqtE0Xlj6qbRGB")
            )
            .unwrap()
            .contains("WHERE m.session_id = 'ses_dc036c7d3ffeqqtE0Xlj6qbRGB'")
        );
    }

    #[test]
    fn the_providers_delay_is_read_from_the_refusals_headers() {
        let error = |headers: Value| serde_json::json!({"name": "APIError", "data": {"statusCode": 429, "responseHeaders": headers}});
        assert_eq!(
            retry_after(&error(serde_json::json!({"retry-after-ms": "1500"}))),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(
            retry_after(&error(serde_json::json!({"retry-after": "2"}))),
            Some(Duration::from_secs(2))
        );
        assert_eq!(
            retry_after(&error(
                serde_json::json!({"retry-after": "Fri, 04 Dec 2026 06:43:42 GMT"})
            )),
            None
        );
        assert_eq!(
            retry_after(&error(serde_json::json!({"retry-after": "-1"}))),
            None
        );
        // A number no Duration holds is a week, not a crash.
        assert_eq!(
            retry_after(&error(serde_json::json!({"retry-after": "1e23"}))),
            Some(LONGEST_DELAY)
        );
        assert_eq!(
            retry_after(&error(serde_json::json!({"retry-after-ms": "inf"}))),
            None
        );
    }
}
