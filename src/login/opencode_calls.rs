//! opencode's records: the assistant messages in its SQLite database (`opencode.db` in its
//! data directory; [`crate::adapter::opencode`] has the layout). agent reads no SQLite
//! itself: it asks the CLI's own `opencode db QUERY --format json`, a bounded child
//! (DESIGN §19), which also sees the rows still in the write-ahead log. Each assistant
//! message carries its provider, model and `tokens: {input, output, reasoning, cache:
//! {read, write}}`; a message is counted once by its id.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;

use super::calls::{Call, SourceStats, Transcripts};
use crate::adapter::opencode as adapter;
use crate::child::{self, Group, Job};
use crate::state::ledger::Tokens;

/// How long `opencode db` may take (it answers in about a second).
const TIMEOUT: Duration = Duration::from_secs(30);
/// The most it may print: a year of heavy use is a few megabytes.
const CAP: usize = 64 << 20;

/// Where opencode's records are, when it has any and is installed to read them: its
/// binary and its database.
pub struct Records {
    pub binary: PathBuf,
    pub database: PathBuf,
}

/// opencode's records on this machine, if there are any.
pub fn find() -> Option<Records> {
    let database = adapter::database(&adapter::data_dir()?);
    if !database.is_file() {
        return None;
    }
    let binary = crate::backend::discover::find(adapter::COMMAND)?;
    Some(Records { binary, database })
}

/// Reads every assistant message opencode recorded into `into`.
pub fn read(records: &Records, into: &mut Transcripts) -> SourceStats {
    let mut stats = SourceStats {
        files: 1,
        ..SourceStats::default()
    };
    match query(&records.binary, &records.database, adapter::USAGE_QUERY) {
        Some(rows) => add_rows(&rows, into, &mut stats),
        None => stats.unreadable += 1,
    }
    stats
}

/// The rows `sql` selects, from the CLI itself; `None` when it did not answer with JSON
/// in time.
pub fn query(binary: &Path, database: &Path, sql: &str) -> Option<Value> {
    let mut command = crate::child_env::command(binary);
    command
        .args(["db", sql, "--format", "json", "--pure"])
        .env("OPENCODE_DB", database)
        .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
        .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null());
    let ran = child::run(&mut command, &Job::new(TIMEOUT, Group::Own).cap(CAP)).ok()?;
    let output = ran.output().ok()?;
    if !output.status.success() {
        return None;
    }
    serde_json::from_slice(&output.stdout).ok()
}

/// Adds the calls in `rows` (a JSON array of `{id, session_id, time_created, data}`).
pub fn add_rows(rows: &Value, into: &mut Transcripts, stats: &mut SourceStats) {
    let Some(rows) = rows.as_array() else {
        stats.unreadable += 1;
        return;
    };
    for row in rows {
        let Some(data) = data_of(row) else {
            stats.unreadable += 1;
            continue;
        };
        // The query asks for assistants only; anything else is no call.
        if data.get("role").and_then(Value::as_str) != Some("assistant") {
            continue;
        }
        let Some(call) = call_of(row, &data) else {
            stats.unreadable += 1;
            continue;
        };
        stats.records += 1;
        if !call.tokens.is_plausible() {
            stats.unreadable += 1;
            continue;
        }
        let id = row.get("id").and_then(Value::as_str).unwrap_or_default();
        if !into.add(format!("opencode:{}:{id}", call.session), call) {
            stats.duplicates += 1;
        }
    }
}

/// A row's `data`, the message as a JSON document.
fn data_of(row: &Value) -> Option<Value> {
    match row.get("data")? {
        Value::String(text) => serde_json::from_str(text).ok(),
        data @ Value::Object(_) => Some(data.clone()),
        _ => None,
    }
}

/// One answer of a model, with the tokens its provider reported.
fn call_of(row: &Value, data: &Value) -> Option<Call> {
    let tokens = data.get("tokens").filter(|t| t.is_object())?;
    let count = |pointer: &str| tokens.pointer(pointer).and_then(Value::as_u64).unwrap_or(0);
    let created = data
        .pointer("/time/created")
        .and_then(Value::as_i64)
        .or_else(|| row.get("time_created").and_then(Value::as_i64))?;
    let time = jiff::Timestamp::from_millisecond(created).ok()?;
    Some(Call {
        cli: adapter::CLI.name,
        time: time.to_string(),
        model: crate::text::printable(
            data.get("modelID")
                .and_then(Value::as_str)
                .unwrap_or_default(),
        ),
        session: row
            .get("session_id")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        request_id: None,
        message_id: None,
        tokens: Tokens {
            input: count("/input"),
            output: count("/output"),
            reasoning: count("/reasoning"),
            cache_read: count("/cache/read"),
            cache_write: count("/cache/write"),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `opencode db … --format json` printed for a real 1.18.33 run against the mock.
    fn rows() -> Value {
        serde_json::json!([
            {"id": "msg_2311cfd72001X3v8gME6h4vJkL", "session_id": "ses_dcee30562ffeIXEkJDrc9EwaGq",
             "time_created": 1_796_120_313_202_i64,
             "data": r#"{"parentID":"msg_2311cfae5001FjlzqZ7wzNC74k","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/tmp/cc/ow","root":"/"},"cost":0,"tokens":{"total":16,"input":11,"output":5,"reasoning":0,"cache":{"write":0,"read":0}},"modelID":"gpt-x","providerID":"mock","time":{"created":1796120313202,"completed":1796120313910},"finish":"stop"}"#},
            {"id": "msg_b", "session_id": "ses_2", "time_created": 1_796_120_400_000_i64,
             "data": r#"{"role":"assistant","tokens":{"input":1000,"output":50,"reasoning":30,"cache":{"write":7,"read":400}},"modelID":"claude-sonnet-5","providerID":"anthropic","time":{"created":1796120400000}}"#},
            {"id": "msg_user", "session_id": "ses_2", "time_created": 1_796_120_300_000_i64,
             "data": r#"{"role":"user","time":{"created":1796120300000}}"#},
            {"id": "msg_bad", "session_id": "ses_2", "time_created": 1, "data": "{"},
        ])
    }

    #[test]
    fn each_assistant_message_counts_once_with_its_tokens() {
        let mut t = Transcripts::default();
        let mut stats = SourceStats::default();
        add_rows(&rows(), &mut t, &mut stats);
        add_rows(&rows(), &mut t, &mut stats);

        assert_eq!(t.calls.len(), 2, "{:?}", t.calls);
        let first = &t.calls[0];
        assert_eq!(first.cli, "opencode");
        assert_eq!(first.model, "gpt-x");
        assert_eq!(first.session, "ses_dcee30562ffeIXEkJDrc9EwaGq");
        assert_eq!(first.time, "2026-12-01T10:18:33.202Z");
        assert_eq!(first.tokens.input, 11);
        assert_eq!(first.tokens.output, 5);
        assert_eq!(
            t.calls[1].tokens,
            Tokens {
                input: 1000,
                output: 50,
                reasoning: 30,
                cache_read: 400,
                cache_write: 7
            }
        );
        assert_eq!(stats.records, 4);
        assert_eq!(stats.duplicates, 2);
        // The user's message is no call; a row that is not JSON is unreadable.
        assert_eq!(stats.unreadable, 2);
        let mut bad = SourceStats::default();
        add_rows(&serde_json::json!({"not": "rows"}), &mut t, &mut bad);
        assert_eq!(bad.unreadable, 1);
    }
}
