//! An empty private directory for one run of a CLI agent did not write, removed when
//! dropped: the relay's `claude -p` and a self-check in a folder its CLI does not trust run
//! there, so no folder's settings, hooks or MCP servers come with them.

use std::os::unix::fs::DirBuilderExt as _;
use std::path::{Path, PathBuf};

pub struct Scratch(PathBuf);

impl Scratch {
    /// A new directory `<parent>/<prefix>-<pid>-<random>`, 0700. Made with `mkdir`, never
    /// reused: a name someone else made first (or a symlink planted there) fails.
    pub fn new_in(parent: &Path, prefix: &str) -> std::io::Result<Scratch> {
        let dir = parent.join(format!(
            "{prefix}-{}-{:x}",
            std::process::id(),
            fastrand::u64(..)
        ));
        std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
        Ok(Scratch(dir))
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
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
}
