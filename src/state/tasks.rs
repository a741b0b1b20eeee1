//! `tasks.json` (DESIGN §25): a task that crossed CLIs, as a chain of links — each the
//! session one rung carried it in, and the link it came from. A launch that hands a session
//! off starts a chain (or adds to the one it carries); `agent -c` in the chain's folder
//! continues the task where it lives, or takes it back up to a rung whose window reset;
//! `agent --tasks` and the dashboard show the chains.
//!
//! No prompt or message text is kept here (DESIGN §6): what the task was is in the briefs
//! the links name, which are redacted.

use std::path::{Path, PathBuf};

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::json_file::JsonFile;
use super::window::rfc3339;

/// The chains kept, newest last: older ones are dropped.
const KEPT_TASKS: usize = 50;
/// The links a chain keeps: past this, the oldest but the first go (the first names the task).
const KEPT_LINKS: usize = 24;

#[derive(Debug, Default, Serialize, Deserialize)]
struct TasksFile {
    #[serde(default)]
    tasks: Vec<Task>,
}

/// One task's chain of sessions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Task {
    /// `t-` and eight hex digits, chosen when the first hand-off made the chain.
    pub id: String,
    /// The directory the task runs in (as agent ran in it, links resolved).
    pub folder: PathBuf,
    /// A launch in the folder began a new session after this chain's last run: `agent -c`
    /// continues that one, not this chain. Written right after `folder`, so every launch can
    /// tell from the file's bytes that a folder has no open chain ([`may_hold_open_chain`]).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "rfc3339::option"
    )]
    pub closed: Option<Timestamp>,
    #[serde(with = "rfc3339")]
    pub started: Timestamp,
    pub links: Vec<Link>,
}

/// A session that carried the task: which rung ran it, in which session, and how it ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Link {
    /// The rung's position in the table (1-based) when it ran.
    pub rung: usize,
    /// Its label then (`Claude Code (claude-opus-5)`): a table that changed since is found
    /// out by it.
    pub label: String,
    /// Its CLI (`claude`, `codex`…).
    pub cli: String,
    /// The login it ran on (`CLI:identity`), when it ran on one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub login: Option<String>,
    /// The CLI's id of the session; `None` when agent could not learn it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// When its first run in this chain began (its record is read from then on).
    #[serde(with = "rfc3339")]
    pub at: Timestamp,
    /// When its last run in this chain ended.
    #[serde(with = "rfc3339")]
    pub last: Timestamp,
    /// Its window ran out, and when that window resets.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "rfc3339::option"
    )]
    pub resets_at: Option<Timestamp>,
    /// The window that ran out, in words (`5-hour limit, resets 15:00`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spent: Option<String>,
    /// The brief it was started with (the session before it, as a file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub brief: Option<PathBuf>,
    /// The link it came from (its index in the chain); `None` for the first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<usize>,
}

impl Link {
    /// The same session of the same rung and login: a run that went on in it adds no link.
    pub fn is_the_same_session(&self, other: &Link) -> bool {
        self.rung == other.rung
            && self.cli == other.cli
            && self.login == other.login
            && self.session.is_some()
            && self.session == other.session
    }

    /// Its window ran out and has not reset by `now`.
    pub fn still_out(&self, now: Timestamp) -> bool {
        self.resets_at.is_some_and(|at| at > now)
    }
}

impl Task {
    /// The link the task lives in now: the last one.
    pub fn current(&self) -> Option<&Link> {
        self.links.last()
    }

    /// The brief that names the task (the first hand-off's), when there is one.
    pub fn first_brief(&self) -> Option<&Path> {
        self.links.iter().find_map(|link| link.brief.as_deref())
    }
}

/// Where a launch stands in a chain: the task, and the link its next run comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    pub task: String,
    pub link: usize,
}

fn file(state_dir: &Path) -> JsonFile<TasksFile> {
    JsonFile::new(state_dir, "tasks.json")
        .rebuilt_by("started afresh: `agent -c` continues each CLI's own last session")
}

/// Every chain kept, oldest first.
pub fn all(state_dir: &Path) -> Vec<Task> {
    file(state_dir).load().tasks
}

/// The chains of `folder`, newest first.
pub fn of_folder(state_dir: &Path, folder: &Path) -> Vec<Task> {
    let mut tasks: Vec<Task> = all(state_dir)
        .into_iter()
        .filter(|task| task.folder == folder)
        .collect();
    tasks.reverse();
    tasks
}

/// The chain `agent -c` in `folder` continues: the folder's newest, unless a new session
/// began there after it.
pub fn open_in(state_dir: &Path, folder: &Path) -> Option<Task> {
    of_folder(state_dir, folder)
        .into_iter()
        .next()
        .filter(|task| task.closed.is_none() && !task.links.is_empty())
}

/// A new session began in `folder` at `now`: the folder's open chain (if any) is closed, so
/// `agent -c` there continues the new session. Reads only, unless there is one to close.
pub fn new_session_in(state_dir: &Path, folder: &Path, now: Timestamp) {
    // Every launch asks: the file's bytes answer "none here" without parsing it (a full
    // file parses in most of a millisecond, more than agent's own share of a launch).
    let path = file(state_dir).path().to_path_buf();
    let mut bytes = Vec::new();
    let read = super::file::open_read(&path).and_then(|f| {
        std::io::Read::read_to_end(&mut std::io::Read::take(f, MAX_SCANNED), &mut bytes)
    });
    if read.is_err() || !may_hold_open_chain(&bytes, folder) {
        return;
    }
    if open_in(state_dir, folder).is_none() {
        return;
    }
    let _ = file(state_dir).update(|tasks| {
        for task in tasks.tasks.iter_mut().filter(|task| task.folder == folder) {
            task.closed.get_or_insert(now);
        }
    });
}

/// The most of `tasks.json` a launch scans for its folder; a larger file is parsed.
const MAX_SCANNED: u64 = 16 * 1024 * 1024;

/// Whether `bytes` (`tasks.json` as written) may hold an open chain of `folder`: some chain
/// of it without `closed` right after its folder. Anything unexpected (a file written
/// otherwise, one cut at the scan's cap) says "may", and the file is parsed.
fn may_hold_open_chain(bytes: &[u8], folder: &Path) -> bool {
    // Only the compact form agent writes is read this way.
    if bytes.is_empty() {
        return false;
    }
    if bytes.len() as u64 >= MAX_SCANNED || !bytes.starts_with(b"{\"tasks\":[") {
        return true;
    }
    let Ok(value) = serde_json::to_string(folder) else {
        return true;
    };
    let key = format!("\"folder\":{value}");
    let closed = b",\"closed\":";
    memchr::memmem::find_iter(bytes, key.as_bytes())
        .any(|at| !bytes[at + key.len()..].starts_with(closed))
}

/// Records that the session in `link` carried the task at `place` (its run came from
/// `place.link`) — or, with no place yet, starts a chain in `folder` with it as the first
/// link. A run that went on in the session the chain already lives in updates that link.
/// Returns where the chain stands now; `None` when it could not be written (said on stderr
/// as a debug line: the launch goes on without it).
pub fn carried(
    state_dir: &Path,
    folder: &Path,
    place: Option<&Place>,
    link: Link,
) -> Option<Place> {
    let written = file(state_dir).update(|tasks| {
        let index = place.and_then(|place| tasks.tasks.iter().position(|t| t.id == place.task));
        let task = match index {
            Some(index) => &mut tasks.tasks[index],
            None => {
                tasks.tasks.push(Task {
                    id: new_id(),
                    folder: folder.to_path_buf(),
                    started: link.at,
                    closed: None,
                    links: Vec::new(),
                });
                if tasks.tasks.len() > KEPT_TASKS {
                    let over = tasks.tasks.len() - KEPT_TASKS;
                    tasks.tasks.drain(..over);
                }
                tasks.tasks.last_mut().expect("pushed above")
            }
        };
        task.closed = None;
        let at = match task.links.last_mut() {
            Some(last) if last.is_the_same_session(&link) => {
                last.last = link.last;
                last.resets_at = link.resets_at;
                last.spent = link.spent;
                if link.brief.is_some() {
                    last.brief = link.brief;
                }
                task.links.len() - 1
            }
            _ => {
                let parent = place
                    .filter(|place| place.task == task.id)
                    .map(|place| place.link)
                    .filter(|&at| at < task.links.len());
                task.links.push(Link { parent, ..link });
                keep_links(task);
                task.links.len() - 1
            }
        };
        Place {
            task: task.id.clone(),
            link: at,
        }
    });
    match written {
        Ok(place) => Some(place),
        Err(err) => {
            crate::term::debug(&format!("the task's chain was not recorded: {err:#}"));
            None
        }
    }
}

/// Past [`KEPT_LINKS`], the oldest links after the first go; the parents that named them
/// name the first instead.
fn keep_links(task: &mut Task) {
    if task.links.len() <= KEPT_LINKS {
        return;
    }
    let over = task.links.len() - KEPT_LINKS;
    task.links.drain(1..=over);
    for link in task.links.iter_mut().skip(1) {
        link.parent = link.parent.map(|parent| parent.saturating_sub(over));
    }
}

/// `t-` and eight random hex digits.
fn new_id() -> String {
    format!("t-{:08x}", fastrand::u32(..))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(rung: usize, session: &str, at: i64) -> Link {
        let at = Timestamp::from_second(at).unwrap();
        Link {
            rung,
            label: format!("rung {rung}"),
            cli: "claude".into(),
            login: None,
            session: Some(session.into()),
            at,
            last: at,
            resets_at: None,
            spent: None,
            brief: None,
            parent: None,
        }
    }

    #[test]
    fn a_chain_names_each_links_parent_and_a_session_that_goes_on_adds_none() {
        let dir = tempfile::tempdir().unwrap();
        let folder = Path::new("/work/repo");
        let first = carried(dir.path(), folder, None, link(1, "s1", 100)).unwrap();
        assert_eq!(first.link, 0);
        let second = carried(dir.path(), folder, Some(&first), link(2, "s2", 200)).unwrap();
        assert_eq!(
            (second.task.as_str(), second.link),
            (first.task.as_str(), 1)
        );
        // `agent -c` went on in Codex's session: the same link.
        let again = carried(dir.path(), folder, Some(&second), link(2, "s2", 300)).unwrap();
        assert_eq!(again.link, 1);
        // Back up to the first rung's session: a new link, from the second.
        let back = carried(dir.path(), folder, Some(&again), link(1, "s1", 400)).unwrap();
        assert_eq!(back.link, 2);
        let task = open_in(dir.path(), folder).unwrap();
        let parents: Vec<Option<usize>> = task.links.iter().map(|l| l.parent).collect();
        assert_eq!(parents, [None, Some(0), Some(1)]);
        assert_eq!(task.links[1].last.as_second(), 300);
        assert_eq!(task.links[1].at.as_second(), 200);
    }

    #[test]
    fn a_new_session_in_the_folder_closes_its_chain_and_no_other() {
        let dir = tempfile::tempdir().unwrap();
        let here = Path::new("/work/here");
        let there = Path::new("/work/there");
        carried(dir.path(), here, None, link(1, "a", 1)).unwrap();
        carried(dir.path(), there, None, link(1, "b", 2)).unwrap();
        new_session_in(dir.path(), here, Timestamp::from_second(3).unwrap());
        assert_eq!(open_in(dir.path(), here), None);
        assert!(open_in(dir.path(), there).is_some());
        assert_eq!(of_folder(dir.path(), here).len(), 1);
    }

    #[test]
    fn old_chains_and_old_links_are_dropped_and_parents_still_point_inside() {
        let dir = tempfile::tempdir().unwrap();
        for n in 0..(KEPT_TASKS + 3) {
            carried(
                dir.path(),
                Path::new("/f"),
                None,
                link(1, "s", i64::try_from(n).unwrap()),
            )
            .unwrap();
        }
        assert_eq!(all(dir.path()).len(), KEPT_TASKS);
        let mut place = carried(dir.path(), Path::new("/g"), None, link(1, "s0", 0)).unwrap();
        for n in 1..(KEPT_LINKS + 5) {
            let rung = 1 + n % 2;
            place = carried(
                dir.path(),
                Path::new("/g"),
                Some(&place),
                link(rung, &format!("s{n}"), i64::try_from(n).unwrap()),
            )
            .unwrap();
        }
        let task = open_in(dir.path(), Path::new("/g")).unwrap();
        assert_eq!(task.links.len(), KEPT_LINKS);
        assert_eq!(task.links[0].session.as_deref(), Some("s0"));
        for (at, link) in task.links.iter().enumerate().skip(1) {
            assert!(link.parent.is_some_and(|parent| parent < at), "{link:?}");
        }
        assert_eq!(place.link, KEPT_LINKS - 1);
    }

    #[test]
    fn a_launch_tells_a_folder_with_no_open_chain_from_the_bytes_alone() {
        let dir = tempfile::tempdir().unwrap();
        let here = Path::new("/work/\"odd\" here");
        let other = Path::new("/work/other");
        let bytes = |dir: &Path| std::fs::read(dir.join("tasks.json")).unwrap_or_default();
        assert!(!may_hold_open_chain(&bytes(dir.path()), here));
        carried(dir.path(), here, None, link(1, "a", 1)).unwrap();
        carried(dir.path(), other, None, link(1, "b", 2)).unwrap();
        assert!(may_hold_open_chain(&bytes(dir.path()), here));
        new_session_in(dir.path(), here, Timestamp::from_second(3).unwrap());
        assert!(!may_hold_open_chain(&bytes(dir.path()), here));
        assert!(may_hold_open_chain(&bytes(dir.path()), other));
        assert!(!may_hold_open_chain(&bytes(dir.path()), Path::new("/work")));
        // A file written otherwise (indented) is parsed, never misread as "none".
        let value: serde_json::Value = serde_json::from_slice(&bytes(dir.path())).unwrap();
        let pretty = serde_json::to_vec_pretty(&value).unwrap();
        assert!(may_hold_open_chain(&pretty, other));
    }

    #[test]
    fn the_file_is_private() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        carried(dir.path(), Path::new("/f"), None, link(1, "s", 1)).unwrap();
        let mode = std::fs::metadata(dir.path().join("tasks.json"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
