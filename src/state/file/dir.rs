//! The state directory: made 0700 when missing, and trusted only when it is the user's own
//! and writable by nobody else (the one rule of [`crate::ownership`], said for agent's
//! state). The rest of `file` makes or checks a directory here before it opens a file in it.

use std::fs;
use std::os::unix::fs::{DirBuilderExt as _, PermissionsExt as _};
use std::path::Path;

use anyhow::Context as _;

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

/// A directory of agent's own inside the state directory (`handoffs/`), made 0700 when
/// missing. Anything else at that name — a symbolic link above all, which would send what
/// agent writes there (a brief of a session) wherever it points — is refused, never
/// followed: the state directory is checked, its contents are agent's alone.
pub fn ensure_subdir(dir: &Path) -> anyhow::Result<()> {
    match fs::symlink_metadata(dir) {
        Ok(meta) if meta.file_type().is_dir() => check_dir(dir),
        Ok(meta) if meta.file_type().is_symlink() => Err(anyhow::anyhow!(
            "{} is a symbolic link: agent never writes through a link in its state directory; \
             remove it",
            dir.display()
        )),
        Ok(_) => Err(anyhow::anyhow!(
            "{} is not a directory: remove it so agent can make its own",
            dir.display()
        )),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            fs::DirBuilder::new()
                .mode(0o700)
                .create(dir)
                .with_context(|| format!("creating {}", dir.display()))?;
            check_dir(dir)
        }
        Err(err) => Err(err).with_context(|| format!("looking at {}", dir.display())),
    }
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
    let seen = fs::metadata(dir).ok().map(|meta| Seen::of(dir, &meta));
    if seen.as_ref().is_some_and(passed_lately) {
        return Ok(());
    }
    match distrust(dir)? {
        Some(Distrust { why, fix }) => Err(crate::exit_codes::usage(format!("{why}; fix: {fix}"))),
        None => {
            if let Some(seen) = seen {
                remember_passed(seen);
            }
            Ok(())
        }
    }
}

/// A directory as [`check_dir`] last saw it pass: a launch checks its state directory before
/// each file it opens there (four times), and the walk up its parents is a dozen system calls
/// each time (measured: about a tenth of a warm launch's own instructions). The same
/// directory — same device, inode, owner, mode and change time — is taken as passed again
/// for [`PASSED_FOR`]; a change to it, or a directory replaced under the same name, is
/// checked in full at once, and a change to a parent within that time waits for the next
/// full check.
#[derive(Clone, PartialEq)]
struct Seen {
    path: std::path::PathBuf,
    dev: u64,
    ino: u64,
    uid: u32,
    mode: u32,
    /// Its change time: a directory made anew under the same name (even on a reused inode)
    /// or chmod-ed has another.
    ctime: (i64, i64),
}

impl Seen {
    fn of(dir: &Path, meta: &fs::Metadata) -> Seen {
        use std::os::unix::fs::MetadataExt as _;
        Seen {
            path: dir.to_path_buf(),
            dev: meta.dev(),
            ino: meta.ino(),
            uid: meta.uid(),
            mode: meta.mode(),
            ctime: (meta.ctime(), meta.ctime_nsec()),
        }
    }
}

/// How long a passed directory is trusted without a full check: longer than any launch's
/// checks take, short enough that a relay or a dashboard running for days re-checks often.
const PASSED_FOR: std::time::Duration = std::time::Duration::from_secs(2);

static PASSED: std::sync::Mutex<Vec<(Seen, std::time::Instant)>> =
    std::sync::Mutex::new(Vec::new());

fn passed_lately(seen: &Seen) -> bool {
    let passed = PASSED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    passed
        .iter()
        .any(|(was, at)| was == seen && at.elapsed() < PASSED_FOR)
}

fn remember_passed(seen: Seen) {
    let mut passed = PASSED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    passed.retain(|(was, _)| was.path != seen.path);
    passed.push((seen, std::time::Instant::now()));
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

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn a_directory_that_passed_is_checked_again_once_its_mode_changes() {
        let dir = tempfile::tempdir().unwrap();
        fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o700)).unwrap();
        check_dir(dir.path()).unwrap();
        check_dir(dir.path()).unwrap();
        // Opened to others right after it passed: refused at once, not trusted from before.
        fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o777)).unwrap();
        let err = format!("{:#}", check_dir(dir.path()).unwrap_err());
        assert!(err.contains("chmod 700"), "{err}");
    }

    #[test]
    fn a_directory_replaced_under_the_same_name_is_checked_in_full() {
        let parent = tempfile::tempdir().unwrap();
        let dir = parent.path().join("state");
        fs::DirBuilder::new().mode(0o700).create(&dir).unwrap();
        check_dir(&dir).unwrap();
        // The same name, another directory (another inode) whose parent is now open to all:
        // the parent walk runs again and refuses it.
        fs::remove_dir(&dir).unwrap();
        fs::set_permissions(parent.path(), fs::Permissions::from_mode(0o777)).unwrap();
        fs::DirBuilder::new().mode(0o700).create(&dir).unwrap();
        let err = format!("{:#}", check_dir(&dir).unwrap_err());
        assert!(err.contains("can be replaced by another user"), "{err}");
    }
}
