//! The only way agent writes state: directories 0700, files 0600, replaced atomically
//! (temp file, optional fsync, rename) under an exclusive lock on a sidecar `*.lock` file,
//! so a process killed at any instant never leaves an unreadable file.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write as _};
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

use anyhow::Context as _;

/// Creates the state directory (0700) if needed.
pub fn ensure_dir(dir: &Path) -> anyhow::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .with_context(|| format!("creating the state directory {}", dir.display()))?;
    fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
        .with_context(|| format!("setting permissions on {}", dir.display()))
}

fn lock_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".lock");
    path.with_file_name(name)
}

/// Holds the exclusive lock of one state file until dropped.
pub struct Locked {
    _file: File,
}

/// Takes the exclusive cross-process lock that guards `path`.
pub fn lock(path: &Path) -> anyhow::Result<Locked> {
    if let Some(dir) = path.parent() {
        ensure_dir(dir)?;
    }
    let lock = lock_path(path);
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .open(&lock)
        .with_context(|| format!("opening the lock file {}", lock.display()))?;
    file.lock()
        .with_context(|| format!("locking {}", lock.display()))?;
    Ok(Locked { _file: file })
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

/// Replaces `path` with `bytes` atomically. Call it while holding [`lock`].
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

/// Appends one line (a JSON record) to `path`, created 0600. One `write` call with
/// `O_APPEND`, so lines from concurrent processes never interleave.
pub fn append_line(path: &Path, line: &str) -> anyhow::Result<()> {
    if let Some(dir) = path.parent() {
        ensure_dir(dir)?;
    }
    let mut record = String::with_capacity(line.len() + 1);
    record.push_str(line);
    record.push('\n');
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("opening {}", path.display()))?;
    file.write_all(record.as_bytes())
        .with_context(|| format!("appending to {}", path.display()))
}

/// Moves an unreadable state file aside as `NAME.corrupt-<timestamp>`; returns the new path.
pub fn quarantine(path: &Path) -> anyhow::Result<PathBuf> {
    let stamp = jiff::Timestamp::now().as_second();
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".corrupt-{stamp}"));
    let aside = path.with_file_name(name);
    fs::rename(path, &aside).with_context(|| format!("moving {} aside", path.display()))?;
    Ok(aside)
}
