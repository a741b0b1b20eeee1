//! The only way agent writes state: directories 0700 and its own, files 0600 and never
//! reached through a symbolic link, replaced atomically (temp file, optional fsync, rename)
//! under an exclusive lock on a sidecar `*.lock` file, so a process killed at any instant
//! never leaves an unreadable file.

mod append;
mod lock;

use std::borrow::Cow;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write as _};
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use anyhow::Context as _;

pub use append::{append_line, append_line_synced, read_jsonl};
pub use lock::{LOCK_WAIT, Locked, Mode, lock, lock_as};

/// Creates a directory agent writes in (0700) if needed.
pub fn ensure_dir(dir: &Path) -> anyhow::Result<()> {
    if dir.as_os_str().is_empty() {
        return Err(no_state_dir());
    }
    if dir.is_dir() {
        return Ok(());
    }
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .with_context(|| format!("creating {}", dir.display()))?;
    fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
        .with_context(|| format!("setting permissions on {}", dir.display()))
}

/// [`ensure_dir`] for the state directory, which must also pass [`check_dir`]. (The
/// configuration directory is the user's to arrange: a group-writable one is common where
/// every user has a group of their own.)
pub fn ensure_state_dir(dir: &Path) -> anyhow::Result<()> {
    ensure_dir(dir)?;
    check_dir(dir)
}

fn no_state_dir() -> anyhow::Error {
    crate::exit_codes::usage("no state directory: set HOME, XDG_STATE_HOME or AGENT_STATE_DIR")
}

/// Whether `dir` may hold agent's state: it must be the user's own and writable by nobody
/// else, or another user could plant a file or a link there, or swap one agent wrote.
/// Refused with the fix (a usage error: exit 2 where it ends a command).
pub fn check_dir(dir: &Path) -> anyhow::Result<()> {
    match distrust(dir)? {
        Some(Distrust { why, fix }) => Err(crate::exit_codes::usage(format!("{why}; fix: {fix}"))),
        None => Ok(()),
    }
}

/// Why a directory is not fit for agent's state, and the fix.
pub struct Distrust {
    pub why: String,
    pub fix: String,
}

/// What is wrong with `dir` as a state directory, if anything ([`check_dir`]): the one rule
/// of [`crate::ownership`], said for agent's state.
pub fn distrust(dir: &Path) -> anyhow::Result<Option<Distrust>> {
    if dir.as_os_str().is_empty() {
        return Err(no_state_dir());
    }
    fs::metadata(dir).with_context(|| format!("reading {}", dir.display()))?;
    let exposed =
        crate::ownership::exposure(dir).with_context(|| format!("reading {}", dir.display()))?;
    let me = nix::unistd::geteuid().as_raw();
    let shown = dir.display();
    Ok(exposed.map(|exposed| match exposed {
        crate::ownership::Exposure::Owner { uid } => Distrust {
            why: format!(
                "{shown} belongs to uid {uid}, not to you (uid {me}): agent keeps no state in a directory another user controls"
            ),
            fix: format!("set AGENT_STATE_DIR to a directory of your own, or `chown {me} {shown}`"),
        },
        crate::ownership::Exposure::Writable { mode, .. } => Distrust {
            why: format!(
                "{shown} is {mode:o}: other users can write there and plant or replace agent's state"
            ),
            fix: format!("chmod 700 {shown}"),
        },
        parent @ crate::ownership::Exposure::Parent { .. } => Distrust {
            why: format!(
                "{shown} {}: agent keeps no state where another user can swap it",
                parent.describe()
            ),
            fix: format!(
                "{}, or set AGENT_STATE_DIR to a directory of your own",
                parent.fix(dir)
            ),
        },
    }))
}

/// Opens a state file for reading, without following a symbolic link and only from a
/// directory [`check_dir`] accepts. A missing file (or directory) is `NotFound`.
pub fn open_read(path: &Path) -> io::Result<File> {
    let dir = path.parent().unwrap_or(Path::new(""));
    match fs::metadata(dir) {
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Err(err),
        _ => check_dir(dir)
            .map_err(|err| io::Error::new(io::ErrorKind::PermissionDenied, format!("{err:#}")))?,
    }
    OpenOptions::new()
        .read(true)
        .custom_flags(no_follow())
        .open(path)
        .map_err(|err| explain_link(path, err))
}

/// `O_NOFOLLOW`: a link planted where a state file belongs fails the open instead of
/// sending agent's write (or read) to wherever it points.
fn no_follow() -> i32 {
    nix::fcntl::OFlag::O_NOFOLLOW.bits()
}

/// The error `O_NOFOLLOW` gives for a link (`ELOOP`), said plainly.
fn explain_link(path: &Path, err: io::Error) -> io::Error {
    if err.raw_os_error() == Some(nix::errno::Errno::ELOOP as i32) {
        io::Error::other(format!(
            "{} is a symbolic link: agent never reads or writes state through a link; remove it",
            path.display()
        ))
    } else {
        err
    }
}

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
            .custom_flags(no_follow())
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

    #[test]
    fn a_directory_others_can_write_is_refused_with_the_fix() {
        let dir = tempfile::tempdir().unwrap();
        fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o777)).unwrap();
        let err = format!("{:#}", ensure_state_dir(dir.path()).unwrap_err());
        assert!(
            err.contains(&format!("chmod 700 {}", dir.path().display())),
            "{err}"
        );
        fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
        ensure_state_dir(dir.path()).unwrap();
    }
}
