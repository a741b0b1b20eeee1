//! What this home's processes reserved on the shared store and have not written to the
//! ledger yet, on this machine's disk — so a rebuild after the store forgot counts every
//! call that may have reached an upstream: the ones in `usage.jsonl`, and the ones still in
//! flight, a `kill -9`ed process's too.
//!
//! Each process keeps a file of its own, `reserved/PID-RANDOM.jsonl` (relay replicas that
//! share one home each have theirs): a line per reservation, on the disk before its call is
//! sent, and a line when its ledger line is written. A ledger line names its reservation,
//! so a call whose two lines are both on disk (a crash between them) is counted once. The
//! file is compacted to its open reservations as it grows; a file left by a process that is
//! gone is removed once nothing in it is open for the last two days.
//!
//! The home's lock keeps reservations and rebuilds apart: a reservation holds it shared
//! from asking the store until its line is written, a rebuild holds it alone while it reads
//! these files and the ledger and sends the count — so no call is reserved on the server
//! and missing from the disk while a rebuild counts. A turnstile in front lets a waiting
//! rebuild in ahead of the reservations that come after it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use serde::{Deserialize, Serialize};

use crate::state::file::{self as state_file, Durability, Locked, Mode};

/// Lines a file may hold before it is compacted, beyond a few per open reservation.
const COMPACT_AT: usize = 256;

/// A call reserved on the shared store whose ledger line is not written yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Open {
    pub id: String,
    /// The day it counts on.
    pub day: String,
    /// The named client it counts for too.
    pub client: Option<String>,
}

/// One line of a process's file: a reservation, or reservations whose ledger lines are
/// written.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Line {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    day: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    client: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    done: Vec<String>,
}

impl Line {
    fn of(open: &Open) -> Line {
        Line {
            id: Some(open.id.clone()),
            day: Some(open.day.clone()),
            client: open.client.clone(),
            done: Vec::new(),
        }
    }
}

/// This process's file.
pub struct Journal {
    path: PathBuf,
    book: Mutex<Book>,
}

#[derive(Default)]
struct Book {
    open: BTreeMap<String, Open>,
    /// Lines in the file since it was last compacted.
    lines: usize,
}

fn dir(state_dir: &Path) -> PathBuf {
    state_dir.join("reserved")
}

/// This process's journal in `state_dir` (the first state directory it is asked for: a
/// process has one).
pub fn journal(state_dir: &Path) -> &'static Journal {
    static JOURNAL: OnceLock<Journal> = OnceLock::new();
    JOURNAL.get_or_init(|| Journal {
        path: dir(state_dir).join(format!(
            "{}-{:012x}.jsonl",
            std::process::id(),
            fastrand::u64(..) & 0xffff_ffff_ffff
        )),
        book: Mutex::new(Book::default()),
    })
}

/// A new reservation's id: what its ledger line names.
pub fn new_id() -> String {
    format!("{:016x}", fastrand::u64(..))
}

impl Journal {
    fn book(&self) -> std::sync::MutexGuard<'_, Book> {
        self.book
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Writes a reservation the store granted, synced: the call may be sent once this
    /// returns. Call it while holding [`Asking`].
    pub fn record(&self, open: Open) -> anyhow::Result<()> {
        let mut book = self.book();
        let line = serde_json::to_string(&Line::of(&open))?;
        state_file::append_line_synced(&self.path, &line)?;
        book.lines += 1;
        book.open.insert(open.id.clone(), open);
        Ok(())
    }

    /// The reservations `ids` have their ledger lines now. Not synced: a settlement lost
    /// in a crash leaves a reservation the ledger line's id still counts once.
    pub fn settle<'a>(&self, ids: impl IntoIterator<Item = &'a str>) {
        let mut book = self.book();
        let done: Vec<String> = ids
            .into_iter()
            .filter(|id| book.open.remove(*id).is_some())
            .map(str::to_string)
            .collect();
        if done.is_empty() {
            return;
        }
        let written = if book.lines >= COMPACT_AT.max(4 * book.open.len()) {
            self.compact(&mut book)
        } else {
            let line = Line {
                done,
                ..Line::default()
            };
            serde_json::to_string(&line)
                .map_err(anyhow::Error::from)
                .and_then(|line| state_file::append_line(&self.path, &line))
                .map(|()| book.lines += 1)
        };
        if let Err(err) = written {
            crate::term::debug(&format!("writing {}: {err:#}", self.path.display()));
        }
    }

    /// Rewrites the file with the open reservations only, dropping those of days before
    /// yesterday (no rebuild counts them any more).
    fn compact(&self, book: &mut Book) -> anyhow::Result<()> {
        let oldest = yesterday(&crate::state::budget::day::today());
        book.open.retain(|_, open| open.day >= oldest);
        let mut text = String::new();
        for open in book.open.values() {
            text.push_str(&serde_json::to_string(&Line::of(open))?);
            text.push('\n');
        }
        state_file::ensure_state_dir(&dir_of(&self.path))?;
        state_file::write_atomic(&self.path, text.as_bytes(), Durability::Synced)?;
        book.lines = book.open.len();
        Ok(())
    }
}

fn dir_of(path: &Path) -> PathBuf {
    path.parent().map(Path::to_path_buf).unwrap_or_default()
}

/// The day before `day` (`YYYY-MM-DD`); `day` itself if it is not a date.
fn yesterday(day: &str) -> String {
    day.parse::<jiff::civil::Date>()
        .ok()
        .and_then(|date| date.yesterday().ok())
        .map_or_else(|| day.to_string(), |date| date.to_string())
}

/// Held by a reservation from asking the store until its line is written.
pub struct Asking {
    _lock: Locked,
}

/// Held by a rebuild while it counts this home's calls and sends the count.
pub struct Tallying {
    _turn: Locked,
    _lock: Locked,
}

fn lock_path(state_dir: &Path) -> PathBuf {
    state_dir.join("reserved")
}

fn turn_path(state_dir: &Path) -> PathBuf {
    state_dir.join("reserved.turn")
}

/// See [`Asking`]. The turnstile is passed, not kept: reservations do not wait for each
/// other, only for a rebuild.
pub fn asking(state_dir: &Path) -> anyhow::Result<Asking> {
    let turn = state_file::lock_as(&turn_path(state_dir), Mode::Exclusive)?;
    let lock = state_file::lock_as(&lock_path(state_dir), Mode::Shared)?;
    drop(turn);
    Ok(Asking { _lock: lock })
}

/// See [`Tallying`].
pub fn tallying(state_dir: &Path) -> anyhow::Result<Tallying> {
    let turn = state_file::lock_as(&turn_path(state_dir), Mode::Exclusive)?;
    let lock = state_file::lock_as(&lock_path(state_dir), Mode::Exclusive)?;
    Ok(Tallying {
        _turn: turn,
        _lock: lock,
    })
}

/// The reservations of every process of this home still open on `day`. Files left with
/// nothing open since yesterday are removed on the way (their processes are gone, or will
/// write a new one). Call it while holding [`Tallying`], before reading the ledger: a call
/// that settles between the two reads is then found in one or both, never in neither.
pub fn open_on(_held: &Tallying, state_dir: &Path, day: &str) -> Vec<Open> {
    let oldest = yesterday(day);
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir(state_dir)) else {
        return found;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        // Another process's file being compacted is a temporary name starting with a dot.
        let temporary = entry.file_name().to_string_lossy().starts_with('.');
        if temporary || path.extension().is_none_or(|ext| ext != "jsonl") {
            continue;
        }
        let mut open: BTreeMap<String, Open> = BTreeMap::new();
        for line in state_file::read_jsonl::<Line>(&path) {
            if let (Some(id), Some(day)) = (line.id, line.day) {
                open.insert(
                    id.clone(),
                    Open {
                        id,
                        day,
                        client: line.client,
                    },
                );
            }
            for id in &line.done {
                open.remove(id);
            }
        }
        if open.values().all(|o| o.day < oldest) {
            if let Err(err) = std::fs::remove_file(&path) {
                crate::term::debug(&format!("removing {}: {err}", path.display()));
            }
            continue;
        }
        found.extend(open.into_values().filter(|o| o.day == day));
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open(id: &str, day: &str) -> Open {
        Open {
            id: id.into(),
            day: day.into(),
            client: None,
        }
    }

    #[test]
    fn open_reservations_of_every_file_are_found_until_settled_and_a_stale_file_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        let day = crate::state::budget::day::today();
        let mine = Journal {
            path: super::dir(dir.path()).join("1-a.jsonl"),
            book: Mutex::default(),
        };
        let gone = Journal {
            path: super::dir(dir.path()).join("2-b.jsonl"),
            book: Mutex::default(),
        };
        mine.record(open("m1", &day)).unwrap();
        mine.record(open("m2", &day)).unwrap();
        gone.record(open("g1", &day)).unwrap();
        mine.settle(["m1"]);
        let stale = super::dir(dir.path()).join("3-c.jsonl");
        std::fs::write(&stale, "{\"id\":\"s\",\"day\":\"2020-01-01\"}\n").unwrap();

        let held = tallying(dir.path()).unwrap();
        let mut ids: Vec<String> = open_on(&held, dir.path(), &day)
            .into_iter()
            .map(|o| o.id)
            .collect();
        ids.sort();
        assert_eq!(ids, ["g1", "m2"]);
        assert!(!stale.exists(), "nothing open since yesterday: removed");
    }

    #[test]
    fn a_file_is_compacted_to_its_open_reservations() {
        let dir = tempfile::tempdir().unwrap();
        let day = crate::state::budget::day::today();
        let mine = Journal {
            path: super::dir(dir.path()).join("1-a.jsonl"),
            book: Mutex::default(),
        };
        mine.record(open("kept", &day)).unwrap();
        for n in 0..COMPACT_AT {
            let id = format!("c{n}");
            mine.record(open(&id, &day)).unwrap();
            mine.settle([id.as_str()]);
        }
        let text = std::fs::read_to_string(&mine.path).unwrap();
        assert!(text.lines().count() < COMPACT_AT, "{text}");
        let held = tallying(dir.path()).unwrap();
        let found = open_on(&held, dir.path(), &day);
        assert_eq!(found, [open("kept", &day)]);
    }
}
