//! Codex's session files: `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl` (and
//! `archived_sessions/`). Codex 0.171 writes one `token_usage_record` per model response,
//! with its `response_id`; older versions only write `event_msg`/`token_count` events with
//! running totals, which are turned into calls by their increase (a repeated event adds
//! nothing). The model is the one of the turn (`turn_context`). OpenAI counts cached
//! input inside `input_tokens` and reasoning inside `output_tokens`; agent keeps them apart.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::calls::{Call, SourceStats, Transcripts, contains, jsonl_files};
use crate::bounded_read;
use crate::state::ledger::Tokens;

/// Codex's home (its adapter's answer): `sessions/` and `archived_sessions/`.
pub fn roots() -> Vec<PathBuf> {
    crate::adapter::codex::records(&crate::adapter::Env::process())
}

/// Reads every session file under `roots` into `into`.
pub fn read(roots: &[PathBuf], into: &mut Transcripts) -> SourceStats {
    let mut stats = SourceStats::default();
    for root in roots {
        for path in jsonl_files(root) {
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
            if name.is_some_and(|n| n.starts_with("rollout-")) {
                read_file(&path, into, &mut stats);
            }
        }
    }
    stats
}

fn count(usage: &Value, key: &str) -> u64 {
    usage.get(key).and_then(Value::as_u64).unwrap_or(0)
}

/// Codex's usage block, in agent's disjoint figures.
fn tokens(usage: &Value) -> Tokens {
    let cached = count(usage, "cached_input_tokens");
    let reasoning = count(usage, "reasoning_output_tokens");
    Tokens {
        input: count(usage, "input_tokens").saturating_sub(cached),
        output: count(usage, "output_tokens").saturating_sub(reasoning),
        reasoning,
        cache_read: cached,
        cache_write: count(usage, "cache_write_input_tokens"),
    }
}

fn minus(now: Tokens, before: Tokens) -> Tokens {
    Tokens {
        input: now.input.saturating_sub(before.input),
        output: now.output.saturating_sub(before.output),
        reasoning: now.reasoning.saturating_sub(before.reasoning),
        cache_read: now.cache_read.saturating_sub(before.cache_read),
        cache_write: now.cache_write.saturating_sub(before.cache_write),
    }
}

fn text(value: &Value, key: &str) -> Option<String> {
    value.get(key).and_then(Value::as_str).map(str::to_string)
}

fn read_file(path: &Path, into: &mut Transcripts, stats: &mut SourceStats) {
    let Some(mut lines) = bounded_read::lines(path, bounded_read::RECORDS) else {
        return;
    };
    stats.files += 1;
    let mut session = String::new();
    let mut model = String::new();
    // Per-response records (Codex 0.171+), and the running-total events (older Codex).
    let mut records: Vec<(String, Call)> = Vec::new();
    let mut from_totals: Vec<(String, Call)> = Vec::new();
    let mut total_before = Tokens::default();
    while let Some(buf) = lines.next_line() {
        let wanted = [
            &b"token_usage_record"[..],
            b"token_count",
            b"turn_context",
            b"session_meta",
        ];
        if !wanted.iter().any(|w| contains(buf, w)) {
            continue;
        }
        let Ok(line) = serde_json::from_slice::<Value>(buf) else {
            stats.unreadable += 1;
            continue;
        };
        let time = text(&line, "timestamp").unwrap_or_default();
        let payload = line.get("payload").unwrap_or(&Value::Null);
        match line.get("type").and_then(Value::as_str) {
            Some("session_meta") => {
                session = text(payload, "id").unwrap_or_default();
                if let Some(m) = text(payload, "model") {
                    model = m;
                }
            }
            Some("turn_context") => {
                if let Some(m) = text(payload, "model") {
                    model = m;
                }
            }
            Some("token_usage_record") => {
                let Some(usage) = payload.get("usage") else {
                    stats.unreadable += 1;
                    continue;
                };
                stats.records += 1;
                let response_id = text(payload, "response_id");
                let session = text(payload, "session_id").unwrap_or_else(|| session.clone());
                let key = response_id
                    .clone()
                    .unwrap_or_else(|| format!("codex:{session}:{time}"));
                records.push((
                    key,
                    Call {
                        cli: crate::adapter::codex::CLI.name,
                        time,
                        model: model.clone(),
                        session,
                        request_id: None,
                        message_id: response_id,
                        tokens: tokens(usage),
                    },
                ));
            }
            Some("event_msg")
                if payload.get("type").and_then(Value::as_str) == Some("token_count") =>
            {
                let Some(info) = payload.get("info").filter(|i| !i.is_null()) else {
                    continue;
                };
                let spent = match info.get("total_token_usage") {
                    Some(total) => {
                        let total = tokens(total);
                        let spent = minus(total, total_before);
                        total_before = total;
                        spent
                    }
                    None => info.get("last_token_usage").map(tokens).unwrap_or_default(),
                };
                if spent.total() == 0 {
                    // The same running total again: no new call.
                    continue;
                }
                let key = format!("codex:{session}:{}", total_before.total());
                from_totals.push((
                    key,
                    Call {
                        cli: crate::adapter::codex::CLI.name,
                        time,
                        model: model.clone(),
                        session: session.clone(),
                        request_id: None,
                        message_id: None,
                        tokens: spent,
                    },
                ));
            }
            _ => {}
        }
    }
    let calls = if records.is_empty() {
        stats.records += from_totals.len() as u64;
        from_totals
    } else {
        records
    };
    for (key, call) in calls {
        if !call.tokens.is_plausible() {
            stats.unreadable += 1;
            continue;
        }
        if !into.add(key, call) {
            stats.duplicates += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lines that matter of a rollout written by Codex 0.171.0 (trimmed).
    const NEW: &str = r#"{"timestamp":"2026-11-30T05:25:49.317Z","type":"session_meta","payload":{"session_id":"01a2","id":"01a2","cwd":"/w","cli_version":"0.171.0","model_provider":"mock"}}
{"timestamp":"2026-11-30T05:25:49.400Z","type":"turn_context","payload":{"turn_id":"t1","cwd":"/w","model":"gpt-5.1-codex"}}
{"timestamp":"2026-11-30T05:25:49.476Z","ordinal":11,"type":"token_usage_record","payload":{"thread_id":"01a2","turn_id":"t1","session_id":"01a2","response_id":"resp_4d1b","usage":{"input_tokens":1100,"cached_input_tokens":1000,"cache_write_input_tokens":0,"output_tokens":70,"reasoning_output_tokens":20,"total_tokens":1170}}}
{"timestamp":"2026-11-30T05:25:49.477Z","ordinal":12,"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":1100,"cached_input_tokens":1000,"output_tokens":70,"reasoning_output_tokens":20,"total_tokens":1170},"last_token_usage":{"input_tokens":1100,"cached_input_tokens":1000,"output_tokens":70,"reasoning_output_tokens":20,"total_tokens":1170}}}}
"#;

    /// An older Codex: running totals only, one event repeated.
    const OLD: &str = r#"{"timestamp":"2025-09-01T10:00:00Z","type":"session_meta","payload":{"id":"old-1","cwd":"/w"}}
{"timestamp":"2025-09-01T10:00:01Z","type":"turn_context","payload":{"cwd":"/w","model":"gpt-5-codex"}}
{"timestamp":"2025-09-01T10:00:02Z","type":"event_msg","payload":{"type":"token_count","info":null}}
{"timestamp":"2025-09-01T10:00:03Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":1000,"cached_input_tokens":200,"output_tokens":50,"reasoning_output_tokens":10,"total_tokens":1050}}}}
{"timestamp":"2025-09-01T10:00:04Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":1000,"cached_input_tokens":200,"output_tokens":50,"reasoning_output_tokens":10,"total_tokens":1050}}}}
{"timestamp":"2025-09-01T10:00:09Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":2500,"cached_input_tokens":1200,"output_tokens":80,"reasoning_output_tokens":10,"total_tokens":2580}}}}
"#;

    fn read_text(text: &str) -> (Transcripts, SourceStats) {
        let dir = tempfile::tempdir().unwrap();
        let day = dir.path().join("sessions/2026/11/30");
        std::fs::create_dir_all(&day).unwrap();
        std::fs::write(day.join("rollout-2026-11-30T05-25-49-01a2.jsonl"), text).unwrap();
        let mut t = Transcripts::default();
        let stats = read(&[dir.path().join("sessions")], &mut t);
        (t, stats)
    }

    #[test]
    fn a_usage_record_is_one_call_with_reasoning_and_cache_kept_apart() {
        let (t, stats) = read_text(NEW);
        assert_eq!(t.calls.len(), 1, "the token_count event repeats the record");
        let call = &t.calls[0];
        assert_eq!(call.model, "gpt-5.1-codex");
        assert_eq!(call.session, "01a2");
        assert_eq!(call.message_id.as_deref(), Some("resp_4d1b"));
        assert_eq!(
            call.tokens,
            Tokens {
                input: 100,
                output: 50,
                reasoning: 20,
                cache_read: 1000,
                cache_write: 0
            }
        );
        assert_eq!(stats.records, 1);
    }

    #[test]
    fn running_totals_become_calls_by_their_increase() {
        let (t, _) = read_text(OLD);
        assert_eq!(t.calls.len(), 2);
        assert_eq!(t.calls[0].model, "gpt-5-codex");
        assert_eq!(
            t.calls[0].tokens,
            Tokens {
                input: 800,
                output: 40,
                reasoning: 10,
                cache_read: 200,
                cache_write: 0
            }
        );
        assert_eq!(
            t.calls[1].tokens,
            Tokens {
                input: 500,
                output: 30,
                reasoning: 0,
                cache_read: 1000,
                cache_write: 0
            }
        );
    }
}
