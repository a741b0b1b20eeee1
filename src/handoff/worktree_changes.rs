//! The files of the folder a session worked in that differ from its repository's index,
//! for its brief — read by agent itself, so that nothing of the repository runs.
//!
//! A repository is the session's, not agent's, and the session can write its `.git/config`:
//! a plain `git status` may start an fsmonitor hook, a clean filter (whose name may hold
//! `=`, so no `-c filter.NAME.clean=` switches it off), an ssh command fetching a missing
//! blob of a partial clone, and the same again through includes of any size and in every
//! submodule. Switching those off one by one lost to each of them. Here no program is
//! started at all: the index file is parsed (versions 2, 3 and 4), and each entry is
//! compared with the work tree by `lstat` — a missing file is deleted (` D`), another size,
//! kind or executable bit is modified (` M`), a conflict is listed once (`UU`), and a file
//! whose times alone changed is hashed as git hashes a blob (`blob LEN\0` and its raw bytes,
//! SHA-1 or SHA-256 by the repository's object format) and compared with the entry's id. No
//! conversion a filter or an eol setting would apply is made, and `core.fileMode` is not read,
//! so such a file may be listed though git would call it unchanged: the list errs toward
//! naming a file. Untracked files are not listed (the session's own edit calls name those it
//! created). A split index (its entries are in another file, whatever the cap on those
//! examined), a malformed one, or one past its cap gives nothing.
//!
//! Everything is bounded: the index's size, the entries examined (a last line counts those
//! left), each path and all the paths held (version 4's prefix compression lets a small
//! index name gigabytes of them), the bytes hashed (each file and all together), and the
//! lines kept; only regular
//! files are opened, never through a link and without waiting, and no entry is followed
//! through a directory that is a link or out of the work tree. The walk up from the folder
//! stops at the first `.git` of any kind, so a repository whose `.git` is a link is read as
//! git reads it, never taken for an outer one.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::fmt::Write as _;
use std::fs;
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};

use crate::bounded_read::{self, Cap};

/// The largest index read (a tree of a few hundred thousand files).
const INDEX: Cap = Cap {
    what: "a git index",
    file: 64 << 20,
    line: 0,
};

/// The largest file hashed; a larger one whose times changed is listed as modified.
const HASHED_FILE: Cap = Cap {
    what: "a file of the work tree",
    file: 1 << 20,
    line: 0,
};

/// The most bytes hashed in all: past it, a file whose times changed is listed as modified.
const HASHED_IN_ALL: u64 = 64 << 20;

/// The most entries examined.
const ENTRIES: usize = 200_000;

/// The longest path an entry may have (Linux's `PATH_MAX`).
const PATH_MAX: usize = 4096;

/// The most bytes of paths held for the entries examined. Version 4 compresses each path
/// against the one before, so a hostile index of a few MiB can name paths of gigabytes in
/// all; a real one of 200,000 files holds some tens of MiB.
const PATH_BYTES: usize = 64 << 20;

/// The most of the list kept: a brief names the changes, it does not list a tree.
const KEPT_BYTES: usize = 8 * 1024;

/// The repository `cwd` is in and the files of its work tree that differ from its index, as
/// `git status --porcelain` would write them (` M path`, ` D path`), at most [`KEPT_BYTES`],
/// whole lines and a last line saying how many more there were; `None` outside a repository
/// or when its index cannot be read as it is.
pub fn changes(cwd: &Path) -> Option<String> {
    let repo = Repository::find(cwd)?;
    let bytes = bounded_read::read(&repo.git_dir.join("index"), INDEX).ok()?;
    let index = parse(&bytes, repo.id_len, ENTRIES)?;
    let mut compare = Compare::new(&repo);
    let lines: Vec<String> = index
        .entries
        .iter()
        .filter_map(|entry| compare.entry(entry))
        .collect();
    let mut text = kept(&lines);
    let left = index.count - index.entries.len();
    if left > 0 {
        let _ = writeln!(text, "… and {left} more files of the index not compared");
    }
    Some(text)
}

/// Where a repository's files are.
struct Repository {
    /// The work tree's top.
    top: PathBuf,
    /// Its git directory (`.git`, or where a `.git` file's `gitdir:` points).
    git_dir: PathBuf,
    /// How long an object id is: 20 bytes (SHA-1) or 32 (SHA-256).
    id_len: usize,
}

impl Repository {
    /// The repository whose work tree holds `cwd`: the nearest `.git` above it, of any kind
    /// (one that is neither a directory nor a `gitdir:` file, even through a link, gives
    /// nothing rather than the repository around it).
    fn find(cwd: &Path) -> Option<Repository> {
        let top = cwd
            .ancestors()
            .find(|dir| fs::symlink_metadata(dir.join(".git")).is_ok())?;
        let dot_git = top.join(".git");
        let git_dir = if fs::metadata(&dot_git).ok()?.is_dir() {
            dot_git
        } else {
            // A linked work tree or a submodule: `gitdir: PATH`, relative to the file's folder.
            let text = bounded_read::text(&dot_git, bounded_read::SETTINGS)?;
            let named = text.lines().find_map(|l| l.strip_prefix("gitdir:"))?.trim();
            top.join(named)
        };
        let id_len = if object_format_is_sha256(&git_dir) {
            32
        } else {
            20
        };
        Some(Repository {
            top: top.to_path_buf(),
            git_dir,
            id_len,
        })
    }
}

/// Whether the repository's `config` says `objectFormat = sha256` (read as text: a linked
/// work tree's is in the common directory, `commondir`, which the default SHA-1 covers
/// when it cannot be read).
fn object_format_is_sha256(git_dir: &Path) -> bool {
    let common = bounded_read::text(&git_dir.join("commondir"), bounded_read::SETTINGS)
        .map_or_else(|| git_dir.to_path_buf(), |dir| git_dir.join(dir.trim()));
    bounded_read::text(&common.join("config"), bounded_read::SETTINGS).is_some_and(|config| {
        config.lines().any(|line| {
            let line = line.trim().to_ascii_lowercase();
            line.starts_with("objectformat") && line.ends_with("sha256")
        })
    })
}

/// One entry of the index: what git recorded of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    path: Vec<u8>,
    mode: u32,
    size: u32,
    mtime: (u32, u32),
    id: Vec<u8>,
    /// Unmerged (a conflict's stage 1–3).
    conflicted: bool,
    /// Marked skip-worktree or assume-unchanged: git does not look at it either.
    not_looked_at: bool,
}

/// What an index holds: its first entries, and how many it has in all.
struct Index {
    entries: Vec<Entry>,
    count: usize,
}

/// The first `most` entries of an index in `bytes` with ids of `id_len` bytes; `None` for
/// anything but a whole index of version 2, 3 or 4 without a split (a `link` extension).
/// Every entry is walked, kept or not: the extensions, and with them a split, come after
/// the last.
fn parse(bytes: &[u8], id_len: usize, most: usize) -> Option<Index> {
    let mut at = Reader { bytes, at: 0 };
    if at.take(4)? != b"DIRC" {
        return None;
    }
    let version = at.u32()?;
    if !(2..=4).contains(&version) {
        return None;
    }
    // Not capped: a count past the file's end fails the walk below at that end.
    let count = usize::try_from(at.u32()?).ok()?;
    let mut entries = Vec::with_capacity(count.min(most).min(1 << 16));
    let mut previous: Vec<u8> = Vec::new();
    let mut kept_bytes = 0;
    for _ in 0..count {
        let start = at.at;
        at.take(16)?; // ctime (s, ns), mtime below
        let mtime = (
            u32::from_be_bytes(bytes.get(start + 8..start + 12)?.try_into().ok()?),
            u32::from_be_bytes(bytes.get(start + 12..start + 16)?.try_into().ok()?),
        );
        at.take(8)?; // dev, ino
        let mode = at.u32()?;
        at.take(8)?; // uid, gid
        let size = at.u32()?;
        let id = at.take(id_len)?.to_vec();
        let flags = at.u16()?;
        let extended = if version >= 3 && flags & 0x4000 != 0 {
            at.u16()?
        } else {
            0
        };
        // The path is built in place: a prefix-compressed one costs only what it adds.
        if version == 4 {
            let strip = at.varint()?;
            previous.truncate(previous.len().checked_sub(strip)?);
            previous.extend_from_slice(at.until_nul()?);
        } else {
            previous.clear();
            previous.extend_from_slice(at.until_nul()?);
            // Padded with NULs to a multiple of eight bytes, the terminating one included.
            let len = at.at - start;
            at.take((8 - len % 8) % 8)?;
        }
        // Longer than any path the system can name: no index git wrote for this tree.
        if previous.len() > PATH_MAX {
            return None;
        }
        if entries.len() == most {
            continue;
        }
        kept_bytes += previous.len();
        if kept_bytes > PATH_BYTES {
            return None;
        }
        entries.push(Entry {
            path: previous.clone(),
            mode,
            size,
            mtime,
            id,
            conflicted: flags & 0x3000 != 0,
            not_looked_at: flags & 0x8000 != 0 || extended & 0x4000 != 0,
        });
    }
    // A split index keeps most entries in another file: this one alone would mislead.
    if extension_names(&bytes[at.at..], id_len).contains(b"link") {
        return None;
    }
    Some(Index { entries, count })
}

/// The four-byte names of the extensions after the entries.
fn extension_names(mut rest: &[u8], id_len: usize) -> Vec<[u8; 4]> {
    let mut names = Vec::new();
    while rest.len() > id_len + 8 {
        let Ok(name) = <[u8; 4]>::try_from(&rest[..4]) else {
            break;
        };
        let Ok(len) = rest[4..8].try_into().map(u32::from_be_bytes) else {
            break;
        };
        names.push(name);
        let Some(next) = usize::try_from(len)
            .ok()
            .and_then(|len| rest.get(8 + len..))
        else {
            break;
        };
        rest = next;
    }
    names
}

/// A cursor over the index's bytes; every read is checked against its end.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.at.checked_add(n)?;
        let taken = self.bytes.get(self.at..end)?;
        self.at = end;
        Some(taken)
    }

    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_be_bytes(self.take(4)?.try_into().ok()?))
    }

    fn u16(&mut self) -> Option<u16> {
        Some(u16::from_be_bytes(self.take(2)?.try_into().ok()?))
    }

    fn until_nul(&mut self) -> Option<&'a [u8]> {
        let rest = self.bytes.get(self.at..)?;
        let len = rest.iter().position(|&b| b == 0)?;
        let path = &rest[..len];
        self.at += len + 1;
        Some(path)
    }

    /// Git's offset varint (index version 4): seven bits a byte, each continuation adding one.
    fn varint(&mut self) -> Option<usize> {
        let mut byte = self.take(1)?[0];
        let mut value = usize::from(byte & 0x7f);
        while byte & 0x80 != 0 {
            byte = self.take(1)?[0];
            value = value
                .checked_add(1)?
                .checked_mul(128)?
                .checked_add(usize::from(byte & 0x7f))?;
        }
        Some(value)
    }
}

/// Where an entry's file is.
enum Place {
    /// An index path that would leave the work tree (absolute, `..`, `.git`): not looked at.
    Outside,
    /// Below a directory that is gone or is a link.
    Gone,
    At(PathBuf),
}

/// Compares entries with the work tree, within the hashing budget.
struct Compare<'r> {
    repo: &'r Repository,
    hashed: u64,
    /// Directories of the work tree already looked at: whether each is a real directory
    /// (not a link) inside the tree.
    dirs: HashMap<PathBuf, bool>,
    /// The path of the last conflicted entry: a conflict has up to three (stages 1–3), side
    /// by side in the index, and is one line.
    last_conflict: Option<Vec<u8>>,
}

const S_IFMT: u32 = 0o170_000;
const S_IFREG: u32 = 0o100_000;
const S_IFLNK: u32 = 0o120_000;

impl<'r> Compare<'r> {
    fn new(repo: &'r Repository) -> Self {
        Compare {
            repo,
            hashed: 0,
            dirs: HashMap::new(),
            last_conflict: None,
        }
    }

    /// The status line of `entry`, when its file differs.
    fn entry(&mut self, entry: &Entry) -> Option<String> {
        let kind = entry.mode & S_IFMT;
        // A submodule's commit, a sparse directory, a file git does not look at: skipped.
        if entry.not_looked_at || (kind != S_IFREG && kind != S_IFLNK) {
            return None;
        }
        let shown = String::from_utf8_lossy(&entry.path);
        if entry.conflicted {
            if self.last_conflict.as_ref() == Some(&entry.path) {
                return None;
            }
            self.last_conflict = Some(entry.path.clone());
            return Some(format!("UU {shown}"));
        }
        let path = match self.place_of(&entry.path) {
            Place::Outside => return None,
            Place::Gone => return Some(format!(" D {shown}")),
            Place::At(path) => path,
        };
        let Ok(meta) = fs::symlink_metadata(&path) else {
            return Some(format!(" D {shown}"));
        };
        let same_kind = if kind == S_IFLNK {
            meta.file_type().is_symlink()
        } else {
            // Git keeps 100644 or 100755: the owner's executable bit is all it compares.
            meta.file_type().is_file() && (meta.mode() ^ entry.mode) & 0o100 == 0
        };
        // The index keeps the size's low 32 bits.
        #[allow(clippy::cast_possible_truncation)]
        let same_size = meta.size() as u32 == entry.size;
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let same_time = (meta.mtime() as u32, meta.mtime_nsec() as u32) == entry.mtime;
        let unchanged = same_kind && same_size && (same_time || self.same_content(&path, entry));
        (!unchanged).then(|| format!(" M {shown}"))
    }

    /// Where an index path's file is in the work tree.
    fn place_of(&mut self, index_path: &[u8]) -> Place {
        let relative = Path::new(OsStr::from_bytes(index_path));
        let plain = relative.components().all(|c| match c {
            std::path::Component::Normal(name) => name != ".git",
            _ => false,
        });
        let Some(parent) = relative.parent().filter(|_| plain) else {
            return Place::Outside;
        };
        let mut dir = self.repo.top.clone();
        for part in parent.components() {
            dir.push(part);
            let real = *self.dirs.entry(dir.clone()).or_insert_with(|| {
                fs::symlink_metadata(&dir).is_ok_and(|m| m.file_type().is_dir())
            });
            if !real {
                // Gone, or a link: its files are gone from where the index has them (as
                // git says too), and nothing is read through it.
                return Place::Gone;
            }
        }
        Place::At(self.repo.top.join(relative))
    }

    /// Whether the file at `path` holds what the entry's id names, hashed as git hashes a
    /// blob; false past the hashing caps (the file is then listed).
    fn same_content(&mut self, path: &Path, entry: &Entry) -> bool {
        let content = if entry.mode & S_IFMT == S_IFLNK {
            match fs::read_link(path) {
                Ok(target) => target.as_os_str().as_bytes().to_vec(),
                Err(_) => return false,
            }
        } else {
            if self.hashed >= HASHED_IN_ALL {
                return false;
            }
            match bounded_read::read_no_follow(path, HASHED_FILE) {
                Ok(bytes) => bytes,
                Err(_) => return false,
            }
        };
        self.hashed += content.len() as u64;
        blob_id(&content, self.repo.id_len) == entry.id
    }
}

/// A blob's object id, as git computes it.
fn blob_id(content: &[u8], id_len: usize) -> Vec<u8> {
    let algorithm = if id_len == 32 {
        &ring::digest::SHA256
    } else {
        &ring::digest::SHA1_FOR_LEGACY_USE_ONLY
    };
    let mut context = ring::digest::Context::new(algorithm);
    context.update(format!("blob {}\0", content.len()).as_bytes());
    context.update(content);
    context.finish().as_ref().to_vec()
}

/// `lines`' first whole lines within [`KEPT_BYTES`], and how many were left out.
fn kept(lines: &[String]) -> String {
    let mut out = String::new();
    let mut left_out = 0;
    for line in lines {
        if left_out > 0 || out.len() + line.len() + 1 > KEPT_BYTES {
            left_out += 1;
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    if left_out > 0 {
        let _ = writeln!(out, "… and {left_out} more lines");
    }
    out
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;
    use std::process::Command;
    use std::time::Duration;

    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        let out = Command::new("git")
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
    }

    /// A repository with `a.txt`, `b.txt`, `keep.txt` and `dir/c.txt` committed.
    fn repository() -> tempfile::TempDir {
        let repo = tempfile::tempdir().unwrap();
        git(repo.path(), &["init", "-q"]);
        for (name, text) in [
            ("a.txt", "one\n"),
            ("b.txt", "two\n"),
            ("keep.txt", "same\n"),
            ("dir/c.txt", "three\n"),
        ] {
            let path = repo.path().join(name);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, text).unwrap();
        }
        git(repo.path(), &["add", "."]);
        git(repo.path(), &["commit", "-qm", "one"]);
        repo
    }

    /// Rewrites `path` with `text` and moves its time, so only a read of it can tell.
    fn touch_with(path: &Path, text: &str) {
        fs::write(path, text).unwrap();
        let later = std::time::SystemTime::now() + Duration::from_secs(5);
        fs::File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_modified(later)
            .unwrap();
    }

    #[test]
    fn changed_and_deleted_files_are_listed_and_a_touched_one_is_not() {
        let repo = repository();
        touch_with(&repo.path().join("a.txt"), "ONE\n"); // same size, new content
        touch_with(&repo.path().join("keep.txt"), "same\n"); // new time, same content
        fs::remove_file(repo.path().join("b.txt")).unwrap();
        fs::write(repo.path().join("dir/c.txt"), "three and more\n").unwrap();
        fs::write(repo.path().join("new.md"), "untracked\n").unwrap();

        let listed = changes(&repo.path().join("dir")).unwrap();

        assert_eq!(listed, " M a.txt\n D b.txt\n M dir/c.txt\n");
        assert_eq!(changes(tempfile::tempdir().unwrap().path()), None);
    }

    #[test]
    fn an_index_of_version_4_and_a_sha256_repository_read_the_same() {
        let repo = repository();
        git(repo.path(), &["update-index", "--index-version", "4"]);
        touch_with(&repo.path().join("dir/c.txt"), "THREE\n");
        touch_with(&repo.path().join("keep.txt"), "same\n");
        assert_eq!(changes(repo.path()).unwrap(), " M dir/c.txt\n");

        let sha256 = tempfile::tempdir().unwrap();
        git(sha256.path(), &["init", "-q", "--object-format=sha256"]);
        fs::write(sha256.path().join("x.txt"), "x\n").unwrap();
        fs::write(sha256.path().join("y.txt"), "y\n").unwrap();
        git(sha256.path(), &["add", "."]);
        touch_with(&sha256.path().join("x.txt"), "x\n");
        touch_with(&sha256.path().join("y.txt"), "Y\n");
        assert_eq!(changes(sha256.path()).unwrap(), " M y.txt\n");
    }

    #[test]
    fn a_linked_work_tree_reads_its_own_index_through_its_gitdir_file() {
        let repo = repository();
        let linked = tempfile::tempdir().unwrap();
        let tree = linked.path().join("wt");
        git(
            repo.path(),
            &["worktree", "add", "-q", &tree.display().to_string()],
        );
        touch_with(&tree.join("b.txt"), "TWO\n");
        assert!(fs::symlink_metadata(tree.join(".git")).unwrap().is_file());
        assert_eq!(changes(&tree.join("dir")).unwrap(), " M b.txt\n");
        assert_eq!(changes(repo.path()).unwrap(), "");
    }

    /// A script that leaves `marker` behind when anything runs it.
    fn trap(dir: &Path, marker: &Path) -> String {
        let script = dir.join("trap.sh");
        fs::write(
            &script,
            // A filter passes its input through; run as ssh (with arguments), it fails at
            // once rather than wait on git's side of the pipe.
            format!(
                "#!/bin/sh\ntouch '{}'\n[ \"$#\" -eq 0 ] || exit 1\ncat\n",
                marker.display()
            ),
        )
        .unwrap();
        fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
        script.display().to_string()
    }

    /// Runs `git args` in `repo` as a user's shell would, to prove a trap is real.
    fn spring(repo: &Path, args: &[&str]) {
        let _ = Command::new("git")
            .current_dir(repo)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_TERMINAL_PROMPT", "0")
            .args(args)
            .output();
    }

    /// Reads the changes of `repo` (armed by `arm`), asserting the trap never ran there,
    /// then that the same repository springs it under a plain `git` run of `proof`.
    fn never_runs(arm: impl FnOnce(&Path, &str), proof: &[&str], expected: &str) {
        let outside = tempfile::tempdir().unwrap();
        let marker = outside.path().join("ran");
        let script = trap(outside.path(), &marker);
        let repo = repository();
        arm(repo.path(), &script);
        touch_with(&repo.path().join("a.txt"), "ONE\n");

        let listed = changes(repo.path());

        assert!(!marker.exists(), "the repository's configuration ran");
        assert_eq!(listed.as_deref(), Some(expected));
        spring(repo.path(), proof);
        assert!(
            marker.exists(),
            "the trap never ran: the test proves nothing"
        );
    }

    fn config(repo: &Path, key: &str, value: &str) {
        git(repo, &["config", key, value]);
    }

    #[test]
    fn a_filter_whose_name_holds_an_equals_sign_never_runs() {
        never_runs(
            |repo, script| {
                fs::write(repo.join(".gitattributes"), "*.txt filter=a=b\n").unwrap();
                config(repo, "filter.a=b.clean", script);
            },
            &["status", "--porcelain"],
            " M a.txt\n",
        );
    }

    #[test]
    fn a_filter_behind_a_huge_included_configuration_never_runs() {
        never_runs(
            |repo, script| {
                let include = repo.join(".git/big.inc");
                let mut text = String::from("[filter \"noise\"]\n");
                for _ in 0..80_000 {
                    text.push_str("\tclean = x\n");
                }
                let _ = write!(text, "[filter \"evil\"]\n\tclean = {script}\n");
                fs::write(&include, text).unwrap();
                config(repo, "include.path", "big.inc");
                fs::write(repo.join(".gitattributes"), "*.txt filter=evil\n").unwrap();
            },
            &["status", "--porcelain"],
            " M a.txt\n",
        );
    }

    #[test]
    fn a_partial_clones_ssh_command_never_runs() {
        never_runs(
            |repo, script| {
                config(repo, "core.repositoryformatversion", "1");
                config(repo, "extensions.partialClone", "origin");
                config(repo, "remote.origin.url", "ssh://example.invalid/x");
                config(repo, "remote.origin.promisor", "true");
                config(repo, "core.sshCommand", script);
                // The blob of b.txt is gone: anything that reads it must fetch it.
                let id = String::from_utf8(
                    Command::new("git")
                        .current_dir(repo)
                        .args(["rev-parse", "HEAD:b.txt"])
                        .output()
                        .unwrap()
                        .stdout,
                )
                .unwrap();
                let id = id.trim();
                fs::remove_file(repo.join(format!(".git/objects/{}/{}", &id[..2], &id[2..])))
                    .unwrap();
            },
            &["show", "HEAD:b.txt"],
            " M a.txt\n",
        );
    }

    #[test]
    fn hooks_fsmonitor_pager_and_external_diff_never_run() {
        never_runs(
            |repo, script| {
                config(repo, "core.fsmonitor", script);
                config(repo, "core.pager", script);
                config(repo, "diff.external", script);
                fs::copy(script, repo.join(".git/hooks/post-index-change")).unwrap();
            },
            &["status", "--porcelain"],
            " M a.txt\n",
        );
    }

    #[test]
    fn an_entry_through_a_linked_directory_or_out_of_the_tree_is_never_read() {
        let repo = repository();
        let elsewhere = tempfile::tempdir().unwrap();
        fs::write(elsewhere.path().join("c.txt"), "three\n").unwrap();
        fs::remove_dir_all(repo.path().join("dir")).unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), repo.path().join("dir")).unwrap();
        assert_eq!(changes(repo.path()).unwrap(), " D dir/c.txt\n");
    }

    #[test]
    fn a_fifo_in_place_of_a_file_is_listed_without_being_opened() {
        let repo = repository();
        fs::remove_file(repo.path().join("a.txt")).unwrap();
        nix::unistd::mkfifo(
            &repo.path().join("a.txt"),
            nix::sys::stat::Mode::from_bits_truncate(0o600),
        )
        .unwrap();
        assert_eq!(changes(repo.path()).unwrap(), " M a.txt\n");
    }

    #[test]
    fn an_index_that_is_a_fifo_a_device_or_past_its_cap_gives_nothing() {
        let repo = repository();
        let index = repo.path().join(".git/index");
        fs::remove_file(&index).unwrap();
        nix::unistd::mkfifo(&index, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        assert_eq!(changes(repo.path()), None);
        fs::remove_file(&index).unwrap();
        std::os::unix::fs::symlink("/dev/zero", &index).unwrap();
        assert_eq!(changes(repo.path()), None);
        fs::remove_file(&index).unwrap();
        fs::File::create(&index)
            .unwrap()
            .set_len(INDEX.file + 1)
            .unwrap();
        assert_eq!(changes(repo.path()), None);
        // A worktree's `gitdir:` naming a device is no repository either.
        let linked = tempfile::tempdir().unwrap();
        fs::write(linked.path().join(".git"), "gitdir: /dev/zero\n").unwrap();
        assert_eq!(changes(linked.path()), None);
    }

    #[test]
    fn a_malformed_or_truncated_index_gives_nothing() {
        let parsed = |bytes: &[u8]| parse(bytes, 20, ENTRIES).map(|index| index.entries);
        assert_eq!(parsed(b"DIRC\0\0\0\x02\0\0\0\x05"), None);
        assert_eq!(parsed(b"DIRC\0\0\0\x02\xff\xff\xff\xff"), None);
        assert_eq!(parsed(b"NOPE"), None);
        assert_eq!(parsed(b""), None);
        let repo = repository();
        let index = fs::read(repo.path().join(".git/index")).unwrap();
        for cut in [13, 40, index.len() / 2] {
            assert_eq!(parsed(&index[..cut]), None, "cut at {cut}");
        }
        assert_eq!(parsed(&index).unwrap().len(), 4);
    }

    /// An index of version 4 whose entries each strip `strip` bytes of the path before and
    /// add `add` bytes: its paths grow, or stay as long, at no cost in the file.
    fn compressed_index(count: u32, strip: u8, add: &[u8], first: &[u8]) -> Vec<u8> {
        let mut bytes = b"DIRC".to_vec();
        bytes.extend(4u32.to_be_bytes());
        bytes.extend(count.to_be_bytes());
        for n in 0..count {
            bytes.extend([0; 24]); // ctime, mtime, dev, ino
            bytes.extend(0o100_644u32.to_be_bytes());
            bytes.extend([0; 12]); // uid, gid, size
            bytes.extend([0; 20]); // id
            bytes.extend(0x0fffu16.to_be_bytes());
            if n == 0 {
                bytes.push(0);
                bytes.extend(first);
            } else {
                bytes.push(strip);
                bytes.extend(add);
            }
            bytes.push(0);
        }
        bytes.extend([0; 20]); // the checksum
        bytes
    }

    #[test]
    fn a_compressed_index_naming_paths_past_the_caps_gives_nothing_at_once() {
        // 20,000 entries of about 40 bytes: paths of one to 20,000 bytes, 200 MB in all.
        let growing = compressed_index(20_000, 0, b"a", b"a");
        assert!(growing.len() < 2 << 20);
        assert!(parse(&growing, 20, ENTRIES).is_none());
        // Every path 4,000 bytes: 20,000 of them are 80 MB to hold.
        let long = vec![b'a'; 4000];
        let wide = compressed_index(20_000, 1, b"b", &long);
        assert!(parse(&wide, 20, ENTRIES).is_none());
        // Past the entries examined, nothing is held: the walk only reaches the end.
        assert_eq!(parse(&wide, 20, 10).unwrap().count, 20_000);
    }

    #[test]
    fn a_split_index_gives_nothing_however_few_entries_are_examined() {
        let repo = repository();
        git(repo.path(), &["update-index", "--split-index"]);
        touch_with(&repo.path().join("a.txt"), "ONE\n");
        assert_eq!(changes(repo.path()), None);
        let index = fs::read(repo.path().join(".git/index")).unwrap();
        for most in [0, 1, ENTRIES] {
            assert!(parse(&index, 20, most).is_none(), "{most} examined");
        }
    }

    #[test]
    fn entries_past_the_cap_are_counted_not_compared() {
        let repo = repository();
        git(repo.path(), &["update-index", "--index-version", "4"]);
        let index = fs::read(repo.path().join(".git/index")).unwrap();
        let first_two = parse(&index, 20, 2).unwrap();
        assert_eq!(first_two.count, 4);
        let paths: Vec<&[u8]> = first_two.entries.iter().map(|e| &e.path[..]).collect();
        assert_eq!(paths, [&b"a.txt"[..], b"b.txt"]);
        // The prefix-compressed paths after the cap are still walked to the extensions.
        let all = parse(&index, 20, ENTRIES).unwrap();
        assert_eq!(all.entries.last().unwrap().path, b"keep.txt");
    }

    #[test]
    fn a_conflict_is_one_line_and_an_executable_bit_is_a_change() {
        let repo = repository();
        git(repo.path(), &["checkout", "-qb", "other"]);
        fs::write(repo.path().join("a.txt"), "theirs\n").unwrap();
        git(repo.path(), &["commit", "-qam", "theirs"]);
        git(repo.path(), &["checkout", "-q", "-"]);
        fs::write(repo.path().join("a.txt"), "ours\n").unwrap();
        git(repo.path(), &["commit", "-qam", "ours"]);
        let _ = Command::new("git")
            .current_dir(repo.path())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(["merge", "-q", "other"])
            .output();
        // The merge stopped on the conflict: its three stages are in the index.
        assert!(repo.path().join(".git/MERGE_HEAD").exists());
        let script = repo.path().join("b.txt");
        fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(changes(repo.path()).unwrap(), "UU a.txt\n M b.txt\n");
    }

    #[test]
    fn a_dot_git_link_is_the_repository_not_the_one_around_it() {
        let outer = repository();
        let inner = outer.path().join("inner");
        fs::create_dir(&inner).unwrap();
        let elsewhere = repository();
        std::os::unix::fs::symlink(elsewhere.path().join(".git"), inner.join(".git")).unwrap();
        fs::write(inner.join("a.txt"), "another\n").unwrap();
        // Only a.txt of the linked repository's four files is here.
        assert_eq!(
            changes(&inner).unwrap(),
            " M a.txt\n D b.txt\n D dir/c.txt\n D keep.txt\n"
        );
        fs::remove_file(inner.join(".git")).unwrap();
        std::os::unix::fs::symlink("/dev/null", inner.join(".git")).unwrap();
        assert_eq!(changes(&inner), None);
    }

    #[test]
    fn a_long_list_keeps_its_first_lines_and_counts_the_rest() {
        let lines: Vec<String> = (0..2000).map(|n| format!(" M file-{n:04}.txt")).collect();
        let out = kept(&lines);
        assert!(out.len() <= KEPT_BYTES + 64, "{}", out.len());
        assert!(out.starts_with(" M file-0000.txt\n"));
        let shown = out.lines().count() - 1;
        assert!(
            out.ends_with(&format!("… and {} more lines\n", 2000 - shown)),
            "{out}"
        );
    }
}
