//! The JSONL files (`usage.jsonl`, `events.jsonl`): appended all or nothing, read line by
//! line, a bad line skipped rather than ending the read.

use std::fs::{File, OpenOptions};
use std::io::{self, BufRead as _, BufReader};
use std::os::unix::fs::{FileExt as _, OpenOptionsExt as _};
use std::path::Path;

use anyhow::Context as _;
use serde::de::DeserializeOwned;

/// Appends `text` — one JSON line, or several joined by `\n`, without the last newline —
/// to `path` (created 0600), all or nothing: one `O_APPEND` write of the whole record, so
/// lines from concurrent processes never interleave; a newline first when the file does not
/// end in one (a torn line left by a failed append stays a line of its own, which readers
/// skip); and on a write error the file is cut back to where it was.
pub fn append_line(path: &Path, text: &str) -> anyhow::Result<()> {
    append(path, text, false)
}

/// [`append_line`], on the disk before it returns (`fdatasync`): for a record that must
/// survive a crash of the machine, not only of the process.
pub fn append_line_synced(path: &Path, text: &str) -> anyhow::Result<()> {
    append(path, text, true)
}

fn append(path: &Path, text: &str, synced: bool) -> anyhow::Result<()> {
    if let Some(dir) = path.parent() {
        super::dir::ensure_state_dir(dir)?;
    }
    let mut file = OpenOptions::new()
        .create(true)
        .read(true)
        .append(true)
        .mode(0o600)
        .custom_flags(super::open::no_follow())
        .open(path)
        .map_err(|err| super::open::explain_link(path, err))
        .with_context(|| format!("opening {}", path.display()))?;
    append_whole(&mut file, text.as_bytes(), |file, bytes| {
        io::Write::write(file, bytes)
    })
    .and_then(|()| if synced { file.sync_data() } else { Ok(()) })
    .with_context(|| format!("appending to {}", path.display()))
}

/// The append itself, its `write` passed in so a test can make it fail halfway.
fn append_whole(
    file: &mut File,
    line: &[u8],
    mut write: impl FnMut(&mut File, &[u8]) -> io::Result<usize>,
) -> io::Result<()> {
    let start = file.metadata()?.len();
    let mut last = [b'\n'];
    if start > 0 {
        file.read_exact_at(&mut last, start - 1)?;
    }
    let mut record = Vec::with_capacity(line.len() + 2);
    if last[0] != b'\n' {
        record.push(b'\n');
    }
    record.extend_from_slice(line);
    record.push(b'\n');
    let mut written = 0;
    while written < record.len() {
        let err = match write(file, &record[written..]) {
            Ok(0) => io::Error::from(io::ErrorKind::WriteZero),
            Ok(n) => {
                written += n;
                continue;
            }
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => err,
        };
        cut_back(file, start, written);
        return Err(err);
    }
    Ok(())
}

/// Removes the `written` bytes of a failed append — only if they are still the file's
/// tail: when another process appended meanwhile, cutting would take its line too, so the
/// torn piece stays and the next append's leading newline closes it off.
fn cut_back(file: &File, start: u64, written: usize) {
    if written == 0 {
        return;
    }
    if file
        .metadata()
        .is_ok_and(|m| m.len() == start + written as u64)
    {
        let _ = file.set_len(start);
    }
}

/// Every line of `path` that parses as a `T`, oldest first. Lines are read as bytes: one
/// that is not UTF-8, not JSON or not a `T` is skipped and the read goes on. A missing or
/// unreadable file has no lines.
pub fn read_jsonl<T: DeserializeOwned>(path: &Path) -> Vec<T> {
    let file = match super::open::open_read(path) {
        Ok(file) => file,
        Err(err) => {
            if err.kind() != io::ErrorKind::NotFound {
                crate::term::debug(&format!("reading {}: {err}", path.display()));
            }
            return Vec::new();
        }
    };
    BufReader::new(file)
        .split(b'\n')
        .map_while(Result::ok)
        .filter_map(|line| serde_json::from_slice(&line).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open(path: &Path) -> File {
        OpenOptions::new()
            .create(true)
            .read(true)
            .append(true)
            .open(path)
            .unwrap()
    }

    #[test]
    fn a_write_that_fails_halfway_leaves_the_file_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("usage.jsonl");
        std::fs::write(&path, "{\"n\":1}\n").unwrap();
        let mut file = open(&path);

        // The disk fills after ten bytes.
        let mut room = 10;
        let result = append_whole(&mut file, br#"{"n":2,"model":"a long one"}"#, |f, b| {
            if room == 0 {
                return Err(io::Error::other("no space left on device"));
            }
            let n = b.len().min(room);
            room -= n;
            io::Write::write(f, &b[..n])
        });

        assert!(result.is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"n\":1}\n");
    }

    #[test]
    fn a_torn_tail_gets_its_own_line_and_the_next_record_parses() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("usage.jsonl");
        std::fs::write(&path, "{\"n\":1}\n{\"n\":2,\"mod").unwrap();

        append_line(&path, "{\"n\":3}").unwrap();

        let numbers: Vec<serde_json::Value> = read_jsonl(&path);
        assert_eq!(
            numbers,
            [serde_json::json!({"n":1}), serde_json::json!({"n":3})]
        );
        assert!(
            std::fs::read_to_string(&path)
                .unwrap()
                .ends_with("\n{\"n\":3}\n")
        );
    }

    #[test]
    fn a_line_that_is_not_utf8_is_skipped_and_the_read_goes_on() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        std::fs::write(&path, b"{\"n\":1}\n{\"n\":\xff\xfe}\n\xc3\n{\"n\":4}\n").unwrap();
        let numbers: Vec<serde_json::Value> = read_jsonl(&path);
        assert_eq!(
            numbers,
            [serde_json::json!({"n":1}), serde_json::json!({"n":4})]
        );
    }
}
