//! Claude Code's transcripts: `~/.claude/projects/<project>/<session>.jsonl` (and the
//! subagents' files below them). Each assistant line carries the API's `message.usage`;
//! one answer is written as one line per content block, all with the same `message.id`
//! and `requestId`, so a call is counted once per id.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::calls::{Call, SourceStats, Transcripts, contains, jsonl_files};
use crate::bounded_read;
use crate::state::ledger::Tokens;

/// Where Claude Code keeps its projects: its adapter's answer — under its one
/// configuration directory (a comma in it is part of the name, as Claude Code reads it),
/// and with none set also the older `~/.config/claude`.
pub fn roots() -> Vec<PathBuf> {
    crate::adapter::claude::transcript_history(&crate::adapter::Env::process())
}

#[derive(Deserialize)]
struct Line<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Cow<'a, str>,
    #[serde(borrow, default)]
    timestamp: Cow<'a, str>,
    #[serde(rename = "sessionId", borrow, default)]
    session_id: Option<Cow<'a, str>>,
    #[serde(rename = "requestId", borrow, default)]
    request_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    message: Option<Message<'a>>,
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    model: Option<Cow<'a, str>>,
    #[serde(default)]
    usage: Option<Usage>,
}

#[derive(Deserialize)]
#[allow(clippy::struct_field_names)] // the API's names
struct Usage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
    #[serde(default)]
    cache_creation_input_tokens: Option<u64>,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
}

/// Reads every transcript under `roots` into `into`.
pub fn read(roots: &[PathBuf], into: &mut Transcripts) -> SourceStats {
    let mut stats = SourceStats::default();
    let mut seen_files = std::collections::HashSet::new();
    for root in roots {
        for path in jsonl_files(root) {
            // Two roots may be one directory (a symlink): read each file once.
            let real = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
            if seen_files.insert(real) {
                read_file(&path, into, &mut stats);
            }
        }
    }
    stats
}

fn read_file(path: &Path, into: &mut Transcripts, stats: &mut SourceStats) {
    let Some(mut lines) = bounded_read::lines(path, bounded_read::RECORDS) else {
        return;
    };
    stats.files += 1;
    // The session a file belongs to is its name, when a line does not say.
    let file_session = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    while let Some(buf) = lines.next_line() {
        if !contains(buf, b"\"usage\"") || !contains(buf, b"assistant") {
            continue;
        }
        let Ok(line) = serde_json::from_slice::<Line>(buf) else {
            stats.unreadable += 1;
            continue;
        };
        if line.kind != "assistant" {
            continue;
        }
        let Some(message) = line.message else {
            continue;
        };
        let Some(usage) = message.usage else {
            continue;
        };
        let model = message.model.unwrap_or_default();
        // Claude Code's own notices (API errors shown as messages) are no calls.
        if model == "<synthetic>" {
            continue;
        }
        stats.records += 1;
        let request_id = line.request_id.map(Cow::into_owned);
        let message_id = message.id.map(Cow::into_owned);
        let Some(key) = message_id.clone().or_else(|| request_id.clone()) else {
            stats.unreadable += 1;
            continue;
        };
        let call = Call {
            cli: crate::adapter::claude::CLI.name,
            time: line.timestamp.into_owned(),
            model: model.into_owned(),
            session: line
                .session_id
                .map_or_else(|| file_session.clone(), Cow::into_owned),
            request_id,
            message_id,
            tokens: Tokens {
                input: usage.input_tokens.unwrap_or(0),
                output: usage.output_tokens.unwrap_or(0),
                reasoning: 0,
                cache_read: usage.cache_read_input_tokens.unwrap_or(0),
                cache_write: usage.cache_creation_input_tokens.unwrap_or(0),
            },
        };
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

    /// Two lines of one answer, as Claude Code 2.1.197 writes them (trimmed).
    const ANSWER: &str = r#"{"parentUuid":"a","isSidechain":false,"message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-5","content":[{"type":"thinking","thinking":"hmm","signature":"sig"}],"stop_reason":"end_turn","usage":{"input_tokens":100,"cache_creation_input_tokens":200,"cache_read_input_tokens":1000,"output_tokens":50,"service_tier":"standard","cache_creation":{"ephemeral_1h_input_tokens":0,"ephemeral_5m_input_tokens":0}}},"requestId":"req_1","type":"assistant","uuid":"u1","timestamp":"2026-11-30T05:25:25.977Z","sessionId":"s-1","version":"2.1.197"}
{"parentUuid":"u1","isSidechain":false,"message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-5","content":[{"type":"text","text":"hello \"usage\""}],"stop_reason":"end_turn","usage":{"input_tokens":100,"cache_creation_input_tokens":200,"cache_read_input_tokens":1000,"output_tokens":50}},"requestId":"req_1","type":"assistant","uuid":"u2","timestamp":"2026-11-30T05:25:25.979Z","sessionId":"s-1","version":"2.1.197"}
{"type":"user","message":{"role":"user","content":"what is \"usage\" for the assistant?"},"uuid":"u3","timestamp":"2026-11-30T05:25:26Z","sessionId":"s-1"}
{"type":"assistant","message":{"id":"msg_2","model":"<synthetic>","role":"assistant","usage":{"input_tokens":0,"output_tokens":0}},"timestamp":"2026-11-30T05:25:27Z","sessionId":"s-1"}
"#;

    #[test]
    fn one_answer_written_per_content_block_is_one_call() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("projects/-work");
        std::fs::create_dir_all(&project).unwrap();
        std::fs::write(project.join("s-1.jsonl"), ANSWER).unwrap();

        let mut t = Transcripts::default();
        let stats = read(&[dir.path().join("projects")], &mut t);

        assert_eq!(t.calls.len(), 1);
        let call = &t.calls[0];
        assert_eq!(call.model, "claude-opus-5");
        assert_eq!(call.session, "s-1");
        assert_eq!(call.request_id.as_deref(), Some("req_1"));
        assert_eq!(
            call.tokens,
            Tokens {
                input: 100,
                output: 50,
                reasoning: 0,
                cache_read: 1000,
                cache_write: 200
            }
        );
        assert_eq!(
            stats,
            SourceStats {
                files: 1,
                records: 2,
                duplicates: 1,
                unreadable: 0
            }
        );
    }
}
