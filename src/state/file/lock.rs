//! The cross-process lock of one state file: `std::fs::File` locking on a sidecar
//! `NAME.lock` (never on the file that is replaced by rename), waited for a bounded time.

use std::collections::HashSet;
use std::fs::{File, OpenOptions, TryLockError};
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, mpsc};
use std::time::Duration;

use anyhow::Context as _;

/// How long a lock is waited for. A holder keeps it for one read and one small rewrite —
/// milliseconds; even a budget rebuilt from a large ledger under it takes well under a
/// second — so two seconds is hundreds of times a healthy hold. A holder stopped with
/// Ctrl-Z or hung never lets go, and then a launch goes on without the state (unprobed,
/// with a notice) after a pause a person barely notices, instead of hanging.
pub const LOCK_WAIT: Duration = Duration::from_secs(2);

/// Holds the lock of one state file until dropped.
pub struct Locked {
    _file: File,
}

/// Whether others may hold the lock beside this holder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Many holders at once, none of them [`Mode::Exclusive`].
    Shared,
    Exclusive,
}

fn lock_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".lock");
    path.with_file_name(name)
}

/// Lock files this process waited for in vain: tried once more, never waited for again,
/// so one stuck holder costs a run one wait rather than one per state change.
fn stuck() -> &'static Mutex<HashSet<PathBuf>> {
    static STUCK: std::sync::OnceLock<Mutex<HashSet<PathBuf>>> = std::sync::OnceLock::new();
    STUCK.get_or_init(Mutex::default)
}

/// Takes the exclusive cross-process lock that guards `path`, waiting at most
/// [`LOCK_WAIT`]; after that the error names the lock file and its holder's likely state.
pub fn lock(path: &Path) -> anyhow::Result<Locked> {
    lock_within(path, LOCK_WAIT)
}

/// [`lock`] in `mode`, for a lock taken on every call by design (many holders, each for
/// a moment): waited for [`LOCK_WAIT`] each time, never given up on for good.
pub fn lock_as(path: &Path, mode: Mode) -> anyhow::Result<Locked> {
    take(path, mode, LOCK_WAIT, false)
}

fn lock_within(path: &Path, wait: Duration) -> anyhow::Result<Locked> {
    take(path, Mode::Exclusive, wait, true)
}

fn take(path: &Path, mode: Mode, wait: Duration, give_up: bool) -> anyhow::Result<Locked> {
    if let Some(dir) = path.parent() {
        super::dir::ensure_dir(dir)?;
    }
    let lock = lock_path(path);
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .custom_flags(super::open::no_follow())
        .open(&lock)
        .map_err(|err| super::open::explain_link(&lock, err))
        .with_context(|| format!("opening the lock file {}", lock.display()))?;
    let tried = match mode {
        Mode::Shared => file.try_lock_shared(),
        Mode::Exclusive => file.try_lock(),
    };
    match tried {
        Ok(()) => return Ok(Locked { _file: file }),
        Err(TryLockError::WouldBlock) => {}
        Err(TryLockError::Error(err)) => {
            return Err(err).with_context(|| format!("locking {}", lock.display()));
        }
    }
    let gave_up_before = give_up
        && stuck()
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .contains(&lock);
    if !gave_up_before {
        // Queued in the kernel like any blocking lock (fair to the other waiters), but on a
        // thread, so the wait can end. The thread's handle shares this file's open
        // description, so a lock it takes is this file's. Abandoned, it takes the lock
        // when the holder lets go, finds nobody waiting, and closes — letting go at once.
        let waiter = file
            .try_clone()
            .with_context(|| format!("locking {}", lock.display()))?;
        let (sender, receiver) = mpsc::channel();
        std::thread::spawn(move || {
            let taken = match mode {
                Mode::Shared => waiter.lock_shared(),
                Mode::Exclusive => waiter.lock(),
            };
            let _ = sender.send(taken);
        });
        match receiver.recv_timeout(wait) {
            Ok(Ok(())) => return Ok(Locked { _file: file }),
            Ok(Err(err)) => {
                return Err(err).with_context(|| format!("locking {}", lock.display()));
            }
            Err(_) => {}
        }
    }
    if give_up {
        stuck()
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(lock.clone());
    }
    anyhow::bail!(
        "{} is held by another process that has not let go for {}s (one stopped with Ctrl-Z, or hung?); going on without it",
        lock.display(),
        wait.as_secs()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_held_elsewhere_is_given_up_after_the_wait_naming_the_lock_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("budget.json");
        // Another open file description: to the lock, as good as another process.
        let holder = File::create(lock_path(&path)).unwrap();
        holder.lock().unwrap();

        let err = lock_within(&path, Duration::from_millis(50))
            .err()
            .expect("not taken while held");
        assert!(
            format!("{err:#}").contains("budget.json.lock is held by another process"),
            "{err:#}"
        );

        drop(holder);
        // Once given up on, a lock is tried once and not waited for again.
        assert!(stuck().lock().unwrap().remove(&lock_path(&path)));
        lock_within(&path, Duration::from_secs(60)).expect("taken once let go");
    }
}
