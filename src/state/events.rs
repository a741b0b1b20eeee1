//! `events.jsonl`: one line per change of state (DESIGN.md §6), for people and the watchdog
//! to read later. Writing an event never fails a launch.

use std::path::Path;

use serde::Serialize;

use crate::state::file as state_file;

#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Fallback,
    Restore,
    Health,
    Fastfail,
    Alert,
    CorruptState,
}

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
    if let Err(err) = state_file::append_line(&state_dir.join("events.jsonl"), &json) {
        crate::term::debug(&format!("could not record an event: {err:#}"));
    }
}
