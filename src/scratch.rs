//! A private directory for a run of a CLI agent did not write: the relay's `claude -p` and a
//! self-check in a folder its CLI does not trust run there, so no folder's settings, hooks or
//! MCP servers come with them. Most are new for one run and removed when dropped; a CLI that
//! sets up each new folder it starts in (opencode) is checked in one kept directory instead,
//! so its checks start warm ([`Scratch::kept_in`]).

use std::io;
use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _};
use std::path::{Path, PathBuf};

pub struct Scratch {
    dir: PathBuf,
    /// Kept when dropped, for the next run.
    kept: bool,
}

impl Scratch {
    /// A new directory `<parent>/<prefix>-<pid>-<random>`, 0700, removed when dropped. Made
    /// with `mkdir`, never reused: a name someone else made first (or a symlink planted
    /// there) fails.
    pub fn new_in(parent: &Path, prefix: &str) -> io::Result<Scratch> {
        let dir = parent.join(format!(
            "{prefix}-{}-{:x}",
            std::process::id(),
            fastrand::u64(..)
        ));
        std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
        Ok(Scratch { dir, kept: false })
    }

    /// The directory `<parent>/<name>`, kept between runs: made 0700 the first time, and
    /// used again only while it is still a directory of this user's that nobody else may
    /// enter — never a link, a file, or a directory another user or mode opened up.
    pub fn kept_in(parent: &Path, name: &str) -> io::Result<Scratch> {
        let dir = parent.join(name);
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => {}
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {
                let meta = std::fs::symlink_metadata(&dir)?;
                let mine = meta.uid() == nix::unistd::geteuid().as_raw();
                if !meta.file_type().is_dir() || !mine || meta.mode() & 0o077 != 0 {
                    return Err(io::Error::other(format!(
                        "{} is not a private directory of agent's (move it away)",
                        dir.display()
                    )));
                }
            }
            Err(err) => return Err(err),
        }
        Ok(Scratch { dir, kept: true })
    }

    pub fn path(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !self.kept {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    #[test]
    fn a_scratch_directory_is_private_new_and_gone_after() {
        let parent = tempfile::tempdir().unwrap();
        let scratch = Scratch::new_in(parent.path(), "check").unwrap();
        let dir = scratch.path().to_path_buf();
        assert!(dir.starts_with(parent.path()));
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
        std::fs::write(dir.join("left"), "x").unwrap();
        drop(scratch);
        assert!(!dir.exists());
    }

    #[test]
    fn a_kept_directory_is_made_private_once_and_used_again_while_it_stays_so() {
        let parent = tempfile::tempdir().unwrap();
        let first = Scratch::kept_in(parent.path(), "check-x").unwrap();
        let dir = first.path().to_path_buf();
        std::fs::write(dir.join("warm"), "x").unwrap();
        drop(first);
        assert!(dir.join("warm").exists(), "kept after the run");
        let again = Scratch::kept_in(parent.path(), "check-x").unwrap();
        assert_eq!(again.path(), dir);
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);

        // Opened up to others: not used.
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(Scratch::kept_in(parent.path(), "check-x").is_err());
        // A link or a file in its place: not used, and not followed.
        let elsewhere = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), parent.path().join("check-link")).unwrap();
        assert!(Scratch::kept_in(parent.path(), "check-link").is_err());
        std::fs::write(parent.path().join("check-file"), "").unwrap();
        assert!(Scratch::kept_in(parent.path(), "check-file").is_err());
    }
}
