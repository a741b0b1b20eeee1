//! Finding the CLIs' JSONL records by when they were last written, and reading their lines
//! through [`crate::bounded_read`] (a small JSON store is read with
//! [`crate::bounded_read::json`]). Every reader here answers "nothing" for a file that is
//! missing, unreadable or too large, never an error: a login or a record agent cannot read
//! is an unknown, and unknown is not dead.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use jiff::Timestamp;
use serde_json::Value;

use crate::bounded_read;

/// How much earlier than a run's start a file's modification time may be and still hold
/// that run's lines: file times and the CLIs' clocks are not the same clock.
pub const CLOCK_SLACK_SECONDS: i64 = 5;

/// Each line of a JSONL record file, in order, without its line end; lines that are not
/// UTF-8 or longer than [`bounded_read::RECORDS`] allows are skipped.
pub fn lines(path: &Path) -> impl Iterator<Item = String> + use<> {
    bounded_read::lines(path, bounded_read::RECORDS)
        .into_iter()
        .flat_map(bounded_read::Lines::texts)
}

/// When a file was last written, as an instant.
pub fn modified(path: &Path) -> Option<Timestamp> {
    let time = fs::metadata(path).ok()?.modified().ok()?;
    let since_epoch = time.duration_since(SystemTime::UNIX_EPOCH).ok()?;
    Timestamp::from_second(i64::try_from(since_epoch.as_secs()).ok()?).ok()
}

/// The files directly in `dir` whose name passes `wanted`, newest first, with their
/// modification times; only those written at or after `since` (less the clock slack)
/// when it is given.
pub fn files_newest_first(
    dir: &Path,
    since: Option<Timestamp>,
    wanted: impl Fn(&str) -> bool,
) -> Vec<(PathBuf, Timestamp)> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let cutoff = since.map(slack);
    let mut files: Vec<(PathBuf, Timestamp)> = entries
        .flatten()
        .filter(|entry| entry.file_type().is_ok_and(|t| t.is_file()))
        .filter(|entry| entry.file_name().to_str().is_some_and(&wanted))
        .filter_map(|entry| {
            let path = entry.path();
            let at = modified(&path)?;
            Some((path, at))
        })
        .filter(|(_, at)| cutoff.is_none_or(|cutoff| *at >= cutoff))
        .collect();
    files.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| b.0.cmp(&a.0)));
    files
}

/// `at` less the clock slack.
pub fn slack(at: Timestamp) -> Timestamp {
    at.checked_sub(jiff::SignedDuration::from_secs(CLOCK_SLACK_SECONDS))
        .unwrap_or(at)
}

/// Whether a file name ends in `.EXT` (any case).
pub fn has_extension(name: &str, ext: &str) -> bool {
    Path::new(name)
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case(ext))
}

/// An RFC 3339 timestamp field of a record.
pub fn timestamp(value: &Value) -> Option<Timestamp> {
    value.as_str()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_skip_over_long_and_broken_lines_and_keep_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.jsonl");
        let mut text = b"first\r\n".to_vec();
        text.extend(std::iter::repeat_n(b'x', bounded_read::RECORDS.line + 10));
        text.extend(b"\n\xff\xfe\nlast");
        fs::write(&path, text).unwrap();
        assert_eq!(lines(&path).collect::<Vec<_>>(), ["first", "last"]);
        assert_eq!(lines(&dir.path().join("missing")).count(), 0);
    }
}
