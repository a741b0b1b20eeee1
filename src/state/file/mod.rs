//! The only way agent writes state: directories 0700 and its own, files 0600 and never
//! reached through a symbolic link, replaced atomically (temp file, optional fsync, rename)
//! under an exclusive lock on a sidecar `*.lock` file, so a process killed at any instant
//! never leaves an unreadable file.

mod append;
mod dir;
mod given;
mod lock;
mod open;

use std::borrow::Cow;
use std::fs::{self, OpenOptions};
use std::io::{self, Write as _};
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use anyhow::Context as _;

pub use append::{append_line, append_line_synced, read_jsonl};
pub use dir::{Distrust, check_dir, distrust, ensure_dir, ensure_state_dir, ensure_subdir};
pub use given::{check_given, write_given};
pub use lock::{LOCK_WAIT, Locked, Mode, lock, lock_as};
pub use open::open_read;

/// Whether a replacement waits for the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// `fsync` before the rename: for what cannot be rebuilt (settings, credentials).
    Synced,
    /// Rename only. Still atomic for every process — a reader sees the old file or the new
    /// one, a killed writer leaves the old one — but a power cut may lose the last updates.
    /// For counters and caches that are rebuilt when unreadable (budget from the ledger,
    /// health by the next probe), written on every call: an `fsync` costs several
    /// milliseconds here, more than the call it counts.
    Unsynced,
}

/// Replaces `path` with `bytes` atomically. Call it while holding [`lock`]. The rename
/// replaces a link planted at `path` itself, never the file it points to.
pub fn write_atomic(path: &Path, bytes: &[u8], durability: Durability) -> anyhow::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    ensure_dir(dir)?;
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let temp = dir.join(format!(
        ".{name}.{}.{:x}.tmp",
        std::process::id(),
        fastrand::u64(..)
    ));
    let result = (|| -> io::Result<()> {
        let mut file = OpenOptions::new()
            .create_new(true)
            .write(true)
            .mode(0o600)
            .custom_flags(open::no_follow())
            .open(&temp)?;
        file.write_all(bytes)?;
        if durability == Durability::Synced {
            file.sync_all()?;
        }
        fs::rename(&temp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result.with_context(|| format!("writing {}", path.display()))
}

/// Moves an unreadable state file aside as `NAME.corrupt-<timestamp>-<pid>-<n>`; returns
/// the new path. The name is this process's own, so two copies kept aside in the same
/// second (by one process or two) never replace each other.
pub fn quarantine(path: &Path) -> anyhow::Result<PathBuf> {
    quarantine_at(path, jiff::Timestamp::now().as_second())
}

fn quarantine_at(path: &Path, stamp: i64) -> anyhow::Result<PathBuf> {
    static KEPT: AtomicU32 = AtomicU32::new(0);
    let aside = loop {
        let n = KEPT.fetch_add(1, Ordering::Relaxed);
        let mut name = path.file_name().unwrap_or_default().to_os_string();
        name.push(format!(".corrupt-{stamp}-{}-{n}", std::process::id()));
        let aside = path.with_file_name(name);
        // A name left by an earlier process with the same pid is passed over.
        if fs::symlink_metadata(&aside).is_err() {
            break aside;
        }
    };
    fs::rename(path, &aside).with_context(|| format!("moving {} aside", path.display()))?;
    Ok(aside)
}

/// How much of one string from outside (a model name, a reason, a target) a state file
/// keeps: plenty for any real one, while a client's 8 MB "model" cannot grow health.json
/// and events.jsonl by megabytes a call.
pub const TEXT_KEPT: usize = 1024;

/// `text` cut to at most [`TEXT_KEPT`] bytes, keeping its head and its tail (where a
/// target key names its account) around a `…`.
pub fn capped(text: &str) -> Cow<'_, str> {
    if text.len() <= TEXT_KEPT {
        return Cow::Borrowed(text);
    }
    let mut head = TEXT_KEPT / 2;
    while !text.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = text.len() - (TEXT_KEPT / 2 - '…'.len_utf8());
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    Cow::Owned(format!("{}…{}", &text[..head], &text[tail..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_copies_kept_aside_in_the_same_second_are_both_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("health.json");
        fs::write(&path, "first {").unwrap();
        let one = quarantine_at(&path, 1_800_000_000).unwrap();
        fs::write(&path, "second {").unwrap();
        let two = quarantine_at(&path, 1_800_000_000).unwrap();

        assert_ne!(one, two);
        assert_eq!(fs::read_to_string(&one).unwrap(), "first {");
        assert_eq!(fs::read_to_string(&two).unwrap(), "second {");
        assert!(
            one.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("health.json.corrupt-1800000000")
        );
    }

    #[test]
    fn capped_text_keeps_head_and_tail_within_the_limit() {
        assert_eq!(capped("short"), "short");
        let long = format!("{}é @account:work", "é".repeat(5000));
        let cut = capped(&long);
        assert!(cut.len() <= TEXT_KEPT, "{}", cut.len());
        assert!(cut.starts_with("éé"));
        assert!(cut.ends_with(" @account:work"));
        assert!(cut.contains('…'));
    }
}
