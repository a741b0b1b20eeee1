//! Gemini CLI's chat records: `~/.gemini/tmp/<project>/chats/session-*.jsonl` (research
//! §3.4; `login::gemini` has the layout). Each `gemini` message carries the model and
//! `tokens: {input, output, cached, thoughts, tool, total}` as the API reported them; each
//! file is replayed to its final conversation ([`gemini_chat`]), and a call is counted once
//! per session and message id.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::calls::{Call, SourceStats, Transcripts};
use super::{gemini_chat, records};
use crate::state::ledger::Tokens;

/// Gemini CLI's temp directory under its home (its adapter's answer), where its chats are.
pub fn roots() -> Vec<PathBuf> {
    crate::adapter::gemini::home(&crate::adapter::Env::process())
        .map(|dir| vec![dir.join("tmp")])
        .unwrap_or_default()
}

/// Reads every chat under `roots` into `into`.
pub fn read(roots: &[PathBuf], into: &mut Transcripts) -> SourceStats {
    let mut stats = SourceStats::default();
    for root in roots {
        let Ok(projects) = std::fs::read_dir(root) else {
            continue;
        };
        for project in projects.flatten() {
            let Ok(chats) = std::fs::read_dir(project.path().join("chats")) else {
                continue;
            };
            let mut files: Vec<PathBuf> = chats
                .flatten()
                .map(|entry| entry.path())
                .filter(|path| is_chat(path))
                .collect();
            files.sort();
            for path in files {
                read_file(&path, into, &mut stats);
            }
        }
    }
    stats
}

fn is_chat(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    name.starts_with("session-")
        && (records::has_extension(name, "jsonl") || records::has_extension(name, "json"))
}

fn read_file(path: &Path, into: &mut Transcripts, stats: &mut SourceStats) {
    stats.files += 1;
    let file_session = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let Some(chat) = gemini_chat::replay(path) else {
        stats.unreadable += 1;
        return;
    };
    stats.unreadable += chat.unreadable;
    stats.duplicates += chat.rewritten;
    let session = chat.session.unwrap_or(file_session);
    for message in &chat.messages {
        let Some(call) = call_of(message, &session) else {
            continue;
        };
        stats.records += 1;
        let key = format!(
            "gemini:{session}:{}",
            gemini_chat::id_of(message).unwrap_or_default()
        );
        if !call.tokens.is_plausible() {
            stats.unreadable += 1;
            continue;
        }
        if !into.add(key, call) {
            stats.duplicates += 1;
        }
    }
}

/// One answer of the model, with the tokens the API reported for it.
fn call_of(message: &Value, session: &str) -> Option<Call> {
    if gemini_chat::kind_of(message) != Some("gemini") {
        return None;
    }
    let tokens = message.get("tokens").filter(|t| t.is_object())?;
    let count = |name: &str| tokens.get(name).and_then(Value::as_u64).unwrap_or(0);
    let cached = count("cached");
    Some(Call {
        cli: crate::adapter::gemini::CLI.name,
        time: message
            .get("timestamp")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        model: message
            .get("model")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        session: session.to_string(),
        request_id: None,
        message_id: None,
        // The prompt count includes the cached part (and tool-use prompts are prompt
        // tokens too); the answer's count excludes the thoughts.
        tokens: Tokens {
            input: (count("input") + count("tool")).saturating_sub(cached),
            output: count("output"),
            reasoning: count("thoughts"),
            cache_read: cached,
            cache_write: 0,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_answer_counts_once_with_its_tokens_after_rewrites_and_rewinds() {
        let dir = tempfile::tempdir().unwrap();
        let chats = dir.path().join("tmp/abc123/chats");
        std::fs::create_dir_all(&chats).unwrap();
        let lines = [
            r#"{"sessionId":"s-1","projectHash":"h","startTime":"2026-09-14T10:00:00Z","kind":"main"}"#,
            r#"{"id":"1","timestamp":"2026-09-14T10:00:01Z","type":"user","content":[{"text":"hi"}]}"#,
            r#"{"id":"2","timestamp":"2026-09-14T10:00:02Z","type":"gemini","content":"","model":"gemini-3-pro-preview"}"#,
            r#"{"id":"2","timestamp":"2026-09-14T10:00:02Z","type":"gemini","content":"hello","model":"gemini-3-pro-preview","tokens":{"input":1000,"output":50,"cached":400,"thoughts":30,"tool":0,"total":1080}}"#,
            r#"{"id":"3","timestamp":"2026-09-14T10:00:03Z","type":"gemini","content":"gone","model":"gemini-3-pro-preview","tokens":{"input":9,"output":9,"cached":0,"thoughts":0,"tool":0,"total":18}}"#,
            r#"{"$rewindTo":"3"}"#,
            r#"{"$set":{"lastUpdated":"2026-09-14T10:00:04Z"}}"#,
        ]
        .join("\n");
        std::fs::write(chats.join("session-2026-09-14T10-00-5f0c1a2b.jsonl"), lines).unwrap();

        let mut t = Transcripts::default();
        let stats = read(&[dir.path().join("tmp")], &mut t);

        assert_eq!(t.calls.len(), 1, "{:?}", t.calls);
        let call = &t.calls[0];
        assert_eq!(call.cli, "gemini");
        assert_eq!(call.model, "gemini-3-pro-preview");
        assert_eq!(call.session, "s-1");
        assert_eq!(
            call.tokens,
            Tokens {
                input: 600,
                output: 50,
                reasoning: 30,
                cache_read: 400,
                cache_write: 0
            }
        );
        assert_eq!(stats.files, 1);
        assert_eq!(stats.records, 1);
    }
}
