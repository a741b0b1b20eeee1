//! Whether another user can change a path agent trusts (DESIGN §15, §23): the state
//! directory, a login pool's home (whose hooks and settings the CLI runs as the user), the
//! watchdog's directory (where every CLI is run), the configuration file (which names the
//! commands agent runs). One rule for all of them, so none is laxer than another:
//!
//! - the path itself is owned by the user or by root, and writable by nobody else — not by
//!   others, and by its group only when that group is the user's own (a user-private group,
//!   as `USERGROUPS_ENAB` makes them, has no other member); a sticky bit does not help here,
//!   `/tmp` itself is anyone's to fill;
//! - every directory above it is the same or sticky (where nobody may rename or delete
//!   another user's entry), or the path could be swapped for another user's between the
//!   check and the use. Both the path as named and the path it resolves to are walked, so a
//!   link in the user's home pointing into a shared directory is judged by where it leads.

use std::fs;
use std::io;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};

/// What lets another user change a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exposure {
    /// It belongs to another user (neither the user nor root).
    Owner { uid: u32 },
    /// Others (or a group with other members) can write it.
    Writable { mode: u32, by: &'static str },
    /// A directory above it, not sticky, belongs to another user or others can write it, so
    /// the path itself can be replaced.
    Parent { parent: PathBuf, why: Box<Exposure> },
}

impl Exposure {
    /// `is writable by others (mode 0777)`, said of the path.
    pub fn describe(&self) -> String {
        match self {
            Exposure::Owner { uid } => format!(
                "belongs to uid {uid}, not to you (uid {})",
                nix::unistd::geteuid().as_raw()
            ),
            Exposure::Writable { mode, by } => format!("is writable by {by} (mode {mode:04o})"),
            Exposure::Parent { parent, why } => format!(
                "can be replaced by another user: {} above it {}{}",
                parent.display(),
                why.describe(),
                if matches!(**why, Exposure::Writable { .. }) {
                    " and is not sticky"
                } else {
                    ""
                }
            ),
        }
    }

    /// What the user can do about it, for `path`.
    pub fn fix(&self, path: &Path) -> String {
        match self {
            Exposure::Owner { .. } => "choose one of your own".to_string(),
            // A sticky directory others can write is shared on purpose (`/tmp`).
            Exposure::Writable { mode, .. } if mode & STICKY != 0 => {
                "choose a directory of your own: a shared one is anyone's to fill".to_string()
            }
            Exposure::Writable { .. } => format!("chmod go-w {} or choose another", path.display()),
            Exposure::Parent { parent, why } => match **why {
                Exposure::Owner { .. } => "choose one outside it".to_string(),
                _ => format!("chmod go-w {} or choose another", parent.display()),
            },
        }
    }
}

/// What lets another user change `path` (see the module's rule), if anything. A path that
/// does not exist is judged by the directories above it that do. Errors are the file
/// system's (a directory agent may not read).
pub fn exposure(path: &Path) -> io::Result<Option<Exposure>> {
    let me = nix::unistd::geteuid().as_raw();
    match fs::metadata(path) {
        Ok(meta) => {
            if let Some(exposed) = own_exposure(&meta, me) {
                return Ok(Some(exposed));
            }
        }
        Err(err) if err.kind() == io::ErrorKind::NotFound => {}
        Err(err) => return Err(err),
    }
    let resolved = fs::canonicalize(path).ok();
    for chain in [Some(path), resolved.as_deref()].into_iter().flatten() {
        for parent in chain.ancestors().skip(1) {
            if parent.as_os_str().is_empty() {
                continue;
            }
            let meta = match fs::metadata(parent) {
                Ok(meta) => meta,
                Err(err) if err.kind() == io::ErrorKind::NotFound => continue,
                Err(err) => return Err(err),
            };
            if meta.mode() & STICKY != 0 && is_mine_or_roots(&meta, me) {
                continue;
            }
            if let Some(why) = own_exposure(&meta, me) {
                return Ok(Some(Exposure::Parent {
                    parent: parent.to_path_buf(),
                    why: Box::new(why),
                }));
            }
        }
    }
    Ok(None)
}

/// [`exposure`] as a refusal: a usage error (exit 2) naming `what` and `path`, why, and the
/// fix — `login directory /tmp/pool is writable by others (mode 0777): chmod go-w
/// /tmp/pool or choose another`. A path that cannot be examined is refused too.
pub fn refuse_exposed(path: &Path, what: &str) -> anyhow::Result<()> {
    match exposure(path) {
        Ok(None) => Ok(()),
        Ok(Some(exposed)) => Err(crate::exit_codes::usage(refusal(path, what, &exposed))),
        Err(err) => Err(crate::exit_codes::usage(format!(
            "{what} {}: {err}: agent cannot tell who else may change it",
            path.display()
        ))),
    }
}

/// The sentence [`refuse_exposed`] says.
pub fn refusal(path: &Path, what: &str, exposed: &Exposure) -> String {
    format!(
        "{what} {} {}: {}",
        path.display(),
        exposed.describe(),
        exposed.fix(path)
    )
}

/// The sticky bit: only an entry's owner (or the directory's) may rename or remove it.
const STICKY: u32 = 0o1000;

fn is_mine_or_roots(meta: &fs::Metadata, me: u32) -> bool {
    meta.uid() == me || meta.uid() == 0
}

/// What is wrong with one path's own owner and mode, if anything.
fn own_exposure(meta: &fs::Metadata, me: u32) -> Option<Exposure> {
    if !is_mine_or_roots(meta, me) {
        return Some(Exposure::Owner { uid: meta.uid() });
    }
    let mode = meta.mode() & 0o7777;
    if mode & 0o002 != 0 {
        return Some(Exposure::Writable { mode, by: "others" });
    }
    if mode & 0o020 != 0 && !group_is_only(meta.gid(), meta.uid()) {
        return Some(Exposure::Writable {
            mode,
            by: "its group",
        });
    }
    None
}

/// Whether group `gid` is `owner`'s own: their primary group, named as they are, with no
/// member listed but them — the user-private group a group-writable home is made in where
/// the umask is 002.
fn group_is_only(gid: u32, owner: u32) -> bool {
    use nix::unistd::{Gid, Group, Uid, User};
    let (Ok(Some(user)), Ok(Some(group))) = (
        User::from_uid(Uid::from_raw(owner)),
        Group::from_gid(Gid::from_raw(gid)),
    ) else {
        return false;
    };
    user.gid.as_raw() == gid
        && group.name == user.name
        && group.mem.iter().all(|member| *member == user.name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

    fn chmod(path: &Path, mode: u32) {
        fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn a_private_directory_is_trusted_and_a_world_writable_one_is_not() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("pool");
        fs::create_dir(&dir).unwrap();
        chmod(&dir, 0o700);
        assert_eq!(exposure(&dir).unwrap(), None);
        chmod(&dir, 0o777);
        assert_eq!(
            exposure(&dir).unwrap(),
            Some(Exposure::Writable {
                mode: 0o777,
                by: "others"
            })
        );
    }

    #[test]
    fn sticky_tmp_is_refused_itself_but_not_as_a_parent() {
        let tmp = Path::new("/tmp");
        if fs::metadata(tmp).map(|m| m.mode() & 0o1777).ok() != Some(0o1777) {
            return;
        }
        assert!(matches!(
            exposure(tmp).unwrap(),
            Some(Exposure::Writable { by: "others", .. })
        ));
        let root = tempfile::tempdir_in(tmp).unwrap();
        assert_eq!(exposure(root.path()).unwrap(), None);
    }

    #[test]
    fn a_directory_in_a_world_writable_parent_without_the_sticky_bit_can_be_replaced() {
        let root = tempfile::tempdir().unwrap();
        let shared = root.path().join("shared");
        let dir = shared.join("pool");
        fs::create_dir_all(&dir).unwrap();
        chmod(&dir, 0o700);
        chmod(&shared, 0o777);
        let exposed = exposure(&dir).unwrap().expect("exposed");
        assert!(
            matches!(&exposed, Exposure::Parent { parent, .. } if *parent == shared),
            "{exposed:?}"
        );
        let text = refusal(&dir, "login directory", &exposed);
        assert!(text.contains("is not sticky"), "{text}");
        assert!(
            text.contains(&format!("chmod go-w {}", shared.display())),
            "{text}"
        );
        // A link from a private place into it is judged by where it leads.
        let link = root.path().join("link");
        std::os::unix::fs::symlink(&dir, &link).unwrap();
        assert!(exposure(&link).unwrap().is_some());
    }

    #[test]
    fn a_missing_path_is_judged_by_the_directories_above_it() {
        let root = tempfile::tempdir().unwrap();
        assert_eq!(exposure(&root.path().join("not-yet")).unwrap(), None);
        chmod(root.path(), 0o777);
        assert!(exposure(&root.path().join("not-yet")).unwrap().is_some());
    }
}
