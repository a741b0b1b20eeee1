//! `events.jsonl`: one line per change of state (DESIGN.md §6), for people and the watchdog
//! to read later, and to the shared store's stream when one is configured. Writing an
//! event never fails a launch.

use std::path::Path;

use serde::Serialize;

use crate::state::file as state_file;
use crate::state::store::{self, stream, stream::Stream};

#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Fallback,
    Restore,
    Health,
    Fastfail,
    Alert,
    CorruptState,
    /// A session that ran out of its window was continued on another rung (DESIGN §21):
    /// `from` and `to` are the two rungs' labels, `reason` the brief's path.
    Handoff,
    /// The rung a session was handed off to did not take it up (it refused the folder or
    /// the arguments, or failed before it really started): `from` is that rung's label,
    /// `reason` why.
    HandoffRefused,
    /// The user released a parked login or rung by hand (`agent --unpark`): `from` names
    /// it, `reason` what was forgotten.
    Unparked,
}

/// How many of the newest events [`newest`] looks through.
const NEWEST_SCAN: usize = 1000;

#[derive(Serialize)]
struct Line<'a> {
    time: String,
    event: Kind,
    from: &'a str,
    to: &'a str,
    reason: &'a str,
}

/// Appends an event; the reason is redacted like every other output, and every field is
/// capped ([`state_file::capped`]): part of it may come from a relay client.
pub fn record(state_dir: &Path, event: Kind, from: &str, to: &str, reason: &str) {
    let reason = crate::redact::redact(reason);
    let line = Line {
        time: jiff::Timestamp::now().to_string(),
        event,
        from: &state_file::capped(from),
        to: &state_file::capped(to),
        reason: &state_file::capped(&reason),
    };
    let Ok(json) = serde_json::to_string(&line) else {
        return;
    };
    store::answered(|shared| stream::append(shared, Stream::Events, std::slice::from_ref(&json)));
    if let Err(err) = state_file::append_line(&state_dir.join("events.jsonl"), &json) {
        crate::term::debug(&format!("could not record an event: {err:#}"));
    }
}

/// The last `count` events of `events.jsonl`, oldest first (lines that are not JSON are
/// left out). Reads only the file's tail, however long the file has grown.
pub fn recent(state_dir: &Path, count: usize) -> Vec<serde_json::Value> {
    if let Some(documents) = store::answered(|shared| stream::recent(shared, Stream::Events, count))
    {
        return documents
            .iter()
            .filter_map(|document| serde_json::from_slice(document).ok())
            .collect();
    }
    recent_in_file(state_dir, count)
}

/// The newest event of `kind` among the last [`NEWEST_SCAN`] events, as [`recent`] reads
/// them.
pub fn newest(state_dir: &Path, kind: Kind) -> Option<serde_json::Value> {
    let name = serde_json::to_value(kind).ok()?;
    recent(state_dir, NEWEST_SCAN)
        .into_iter()
        .rev()
        .find(|event| event.get("event") == Some(&name))
}

/// [`recent`] from this machine's `events.jsonl`.
fn recent_in_file(state_dir: &Path, count: usize) -> Vec<serde_json::Value> {
    use std::io::{Read as _, Seek as _, SeekFrom};
    const TAIL: u64 = 256 * 1024;
    let Ok(mut file) = std::fs::File::open(state_dir.join("events.jsonl")) else {
        return Vec::new();
    };
    let length = file.metadata().map_or(0, |m| m.len());
    let start = length.saturating_sub(TAIL);
    let mut bytes = Vec::new();
    if file.seek(SeekFrom::Start(start)).is_err()
        || file.take(TAIL).read_to_end(&mut bytes).is_err()
    {
        return Vec::new();
    }
    let text = String::from_utf8_lossy(&bytes);
    let mut lines: Vec<&str> = text.lines().collect();
    if start > 0 && !lines.is_empty() {
        // The first line was cut by the seek.
        lines.remove(0);
    }
    let mut events: Vec<serde_json::Value> = lines
        .iter()
        .rev()
        .filter_map(|line| serde_json::from_str(line).ok())
        .take(count)
        .collect();
    events.reverse();
    events
}
