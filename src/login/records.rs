//! Reading the CLIs' own files: small JSON stores, and JSONL records found by when they
//! were last written. Every reader here answers "nothing" for a file that is missing,
//! unreadable or too large, never an error: a login or a record agent cannot read is an
//! unknown, and unknown is not dead.

use std::fs::{self, File};
use std::io::{BufRead as _, BufReader, Read as _};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use jiff::Timestamp;
use serde_json::Value;

/// A login store or settings file larger than this is not one (they are a few KiB).
const MAX_STORE_BYTES: u64 = 1 << 20;
/// A record line longer than this is skipped, not read into memory (a transcript line
/// holding a huge tool output carries no limit text worth reading).
const MAX_LINE_BYTES: usize = 4 << 20;
/// How much earlier than a run's start a file's modification time may be and still hold
/// that run's lines: file times and the CLIs' clocks are not the same clock.
pub const CLOCK_SLACK_SECONDS: i64 = 5;

/// A small JSON file (a login store, a settings file), parsed.
pub fn read_json(path: &Path) -> Option<Value> {
    let file = File::open(path).ok()?;
    let mut text = Vec::new();
    file.take(MAX_STORE_BYTES + 1).read_to_end(&mut text).ok()?;
    if text.len() as u64 > MAX_STORE_BYTES {
        return None;
    }
    serde_json::from_slice(&text).ok()
}

/// Each line of a JSONL file, in order; lines that are not UTF-8 or too long are skipped.
pub fn lines(path: &Path) -> impl Iterator<Item = String> + use<> {
    let reader = File::open(path).ok().map(BufReader::new);
    reader.into_iter().flat_map(|mut reader| {
        std::iter::from_fn(move || {
            loop {
                let mut line = Vec::new();
                match (&mut reader)
                    .take(MAX_LINE_BYTES as u64 + 1)
                    .read_until(b'\n', &mut line)
                {
                    Ok(0) | Err(_) => return None,
                    Ok(_) => {}
                }
                if line.len() > MAX_LINE_BYTES && line.last() != Some(&b'\n') {
                    // Skip the rest of an over-long line.
                    let mut rest = Vec::new();
                    if reader.read_until(b'\n', &mut rest).is_err() {
                        return None;
                    }
                    continue;
                }
                if let Ok(text) = String::from_utf8(line) {
                    return Some(text.trim_end_matches(['\n', '\r']).to_string());
                }
            }
        })
    })
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
        let mut text = b"first\n".to_vec();
        text.extend(std::iter::repeat_n(b'x', MAX_LINE_BYTES + 10));
        text.extend(b"\n\xff\xfe\nlast");
        fs::write(&path, text).unwrap();
        assert_eq!(lines(&path).collect::<Vec<_>>(), ["first", "last"]);
        assert_eq!(lines(&dir.path().join("missing")).count(), 0);
    }

    #[test]
    fn a_store_too_large_or_not_json_is_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.json");
        fs::write(&path, r#"{"a":1}"#).unwrap();
        assert_eq!(read_json(&path).unwrap()["a"], 1);
        fs::write(&path, "{").unwrap();
        assert!(read_json(&path).is_none());
        let huge = format!(r#"{{"a":"{}"}}"#, "x".repeat(2 << 20));
        fs::write(&path, huge).unwrap();
        assert!(read_json(&path).is_none());
    }
}
