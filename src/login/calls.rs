//! The CLIs' own records of their calls (Claude Code transcripts, Codex session files…),
//! each call once: a message written twice — one line per content block, or copied into a
//! resumed session's file — is one call, found by its id. Each CLI's reader is its
//! `Readers::calls` (`login::readers`); `--usage` adds them up.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::fs;
use std::path::{Path, PathBuf};

use crate::state::ledger::Tokens;

/// One call as a CLI recorded it.
#[derive(Debug, Clone)]
pub struct Call {
    /// The CLI's name (its adapter's `name`, `claude`): the source it is counted under, and
    /// the "backend" it is grouped under.
    pub cli: &'static str,
    /// RFC 3339.
    pub time: String,
    pub model: String,
    /// The CLI's session id.
    pub session: String,
    /// The provider's request id (Claude Code's `requestId`).
    pub request_id: Option<String>,
    /// The provider's id of the answer (`msg_…`, `resp_…`).
    pub message_id: Option<String>,
    pub tokens: Tokens,
}

/// What one source contributed, for the report's footer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SourceStats {
    pub files: u64,
    /// Usage records read, duplicates included.
    pub records: u64,
    /// Records that repeated a call already seen (same id).
    pub duplicates: u64,
    /// Lines that looked like usage but did not parse.
    pub unreadable: u64,
}

/// Every call from the transcripts, each once, with indexes to find them by id and session.
#[derive(Debug, Default)]
pub struct Transcripts {
    pub calls: Vec<Call>,
    by_key: HashMap<String, usize>,
    by_id: HashMap<String, usize>,
    by_session: HashMap<String, Vec<usize>>,
}

impl Transcripts {
    /// Adds a call unless one with the same `key` (its id) is there already; a repeat
    /// keeps the larger count of each kind (a streamed message's early lines may carry a
    /// partial output count). Returns false for a repeat.
    pub fn add(&mut self, key: String, call: Call) -> bool {
        match self.by_key.entry(key) {
            Entry::Occupied(seen) => {
                let kept = &mut self.calls[*seen.get()].tokens;
                let new = call.tokens;
                kept.input = kept.input.max(new.input);
                kept.output = kept.output.max(new.output);
                kept.reasoning = kept.reasoning.max(new.reasoning);
                kept.cache_read = kept.cache_read.max(new.cache_read);
                kept.cache_write = kept.cache_write.max(new.cache_write);
                false
            }
            Entry::Vacant(slot) => {
                let index = self.calls.len();
                slot.insert(index);
                for id in [&call.request_id, &call.message_id].into_iter().flatten() {
                    self.by_id.insert(id.clone(), index);
                }
                if !call.session.is_empty() {
                    self.by_session
                        .entry(call.session.clone())
                        .or_default()
                        .push(index);
                }
                self.calls.push(call);
                true
            }
        }
    }

    /// The call with this request or message id.
    pub fn by_id(&self, id: &str) -> Option<usize> {
        self.by_id.get(id).copied()
    }

    /// The calls of a CLI session.
    pub fn in_session(&self, session: &str) -> &[usize] {
        self.by_session.get(session).map_or(&[], Vec::as_slice)
    }

    pub fn is_empty(&self) -> bool {
        self.calls.is_empty()
    }

    /// Every request or message id, with its call.
    pub fn ids(&self) -> impl Iterator<Item = (&str, usize)> {
        self.by_id.iter().map(|(id, &call)| (id.as_str(), call))
    }

    /// Every CLI session with a call.
    pub fn sessions(&self) -> impl Iterator<Item = &str> {
        self.by_session.keys().map(String::as_str)
    }
}

/// Every `*.jsonl` file under `root` (depth-first, sorted, symlinked directories not
/// followed), for reading a CLI's records.
pub fn jsonl_files(root: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
        entries.sort_by_key(fs::DirEntry::file_name);
        for entry in entries {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            if kind.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|ext| ext == "jsonl") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// Whether `haystack` holds `needle` (a cheap test before parsing a long line).
pub fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    let Some((&first, rest)) = needle.split_first() else {
        return true;
    };
    let mut at = 0;
    while let Some(found) = haystack[at..].iter().position(|&b| b == first) {
        let start = at + found;
        if haystack[start + 1..].starts_with(rest) {
            return true;
        }
        at = start + 1;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: &str, output: u64) -> Call {
        Call {
            cli: "claude",
            time: "2026-11-30T10:00:00Z".into(),
            model: "m".into(),
            session: "s".into(),
            request_id: Some(format!("req_{id}")),
            message_id: Some(format!("msg_{id}")),
            tokens: Tokens {
                input: 100,
                output,
                ..Tokens::default()
            },
        }
    }

    #[test]
    fn a_call_seen_twice_is_kept_once_with_its_final_counts() {
        let mut t = Transcripts::default();
        assert!(t.add("msg_a".into(), call("a", 1)));
        assert!(!t.add("msg_a".into(), call("a", 50)));
        assert!(t.add("msg_b".into(), call("b", 5)));
        assert_eq!(t.calls.len(), 2);
        assert_eq!(t.calls[0].tokens.output, 50);
        assert_eq!(t.by_id("req_b"), Some(1));
        assert_eq!(t.in_session("s"), &[0, 1]);
    }

    #[test]
    fn contains_finds_a_needle_anywhere() {
        assert!(contains(b"{\"usage\":1}", b"\"usage\""));
        assert!(contains(b"aab", b"ab"));
        assert!(!contains(b"{\"usag\":1}", b"\"usage\""));
        assert!(!contains(b"", b"x"));
    }
}
