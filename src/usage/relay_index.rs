//! The relay's lines, remembered by the ids and sessions that tie them to a CLI's own
//! records, for a process that keeps the ledger's sums between reports (the dashboard):
//! the transcripts change between two reports, and a call a CLI records after the relay
//! line that carried it must still be counted once. [`scan`](super::scan) links the
//! transcripts of the moment directly; this keeps what linking needs, so the same links
//! are found later against any transcripts.
//!
//! Ids are kept as 64-bit hashes (a million relayed calls: a collision is about one in
//! 10⁸), each with the run and the place of the last line that carried it; a session with
//! its first line's.

use std::collections::HashMap;
use std::hash::{BuildHasher as _, BuildHasherDefault, DefaultHasher};

use super::links::Links;
use crate::login::calls::Transcripts;

/// Where a relay line is in the ledger (its byte offset), and its run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Seen {
    at: u64,
    run: u32,
}

#[derive(Debug, Default)]
pub struct RelayIndex {
    runs: Vec<Box<str>>,
    run_numbers: HashMap<Box<str>, u32>,
    /// Hash of a request or message id → the last line that carried it.
    ids: HashMap<u64, Seen>,
    /// CLI session → the first line that carried it.
    sessions: HashMap<Box<str>, Seen>,
}

fn hash(id: &str) -> u64 {
    // Fixed keys: the same id hashes alike in every part and every read.
    BuildHasherDefault::<DefaultHasher>::default().hash_one(id)
}

impl RelayIndex {
    fn run_number(&mut self, run: &str) -> u32 {
        if let Some(&number) = self.run_numbers.get(run) {
            return number;
        }
        let number = u32::try_from(self.runs.len()).unwrap_or(u32::MAX);
        self.runs.push(run.into());
        self.run_numbers.insert(run.into(), number);
        number
    }

    /// Notes a relay line at byte `at` of the ledger.
    pub fn add(&mut self, at: u64, run: &str, ids: [Option<&str>; 2], session: Option<&str>) {
        let run = self.run_number(run);
        let seen = Seen { at, run };
        for id in ids.into_iter().flatten() {
            keep_last(&mut self.ids, hash(id), seen);
        }
        if let Some(session) = session {
            keep_first(&mut self.sessions, session.into(), seen);
        }
    }

    pub fn merge(&mut self, other: RelayIndex) {
        if self.runs.is_empty() {
            // Nothing here yet: take it whole rather than insert it line by line.
            *self = other;
            return;
        }
        let numbers: Vec<u32> = other.runs.iter().map(|r| self.run_number(r)).collect();
        let renumber = |seen: Seen| Seen {
            at: seen.at,
            run: numbers[seen.run as usize],
        };
        for (id, seen) in other.ids {
            keep_last(&mut self.ids, id, renumber(seen));
        }
        for (session, seen) in other.sessions {
            keep_first(&mut self.sessions, session, renumber(seen));
        }
    }

    /// The links [`scan`](super::scan) would have found reading the same lines with these
    /// transcripts: a transcript call takes the run of the last relay line that carried
    /// one of its ids; a session, the run of its first relay line. `indexes` are the
    /// ledger's parts, in any order.
    pub fn links(indexes: &[&RelayIndex], transcripts: &Transcripts) -> Links {
        let mut links = Links::default();
        if transcripts.is_empty() {
            return links;
        }
        let mut by_call: HashMap<usize, (u64, &str)> = HashMap::new();
        for (id, call) in transcripts.ids() {
            let hashed = hash(id);
            for index in indexes {
                let Some(seen) = index.ids.get(&hashed) else {
                    continue;
                };
                let run = &*index.runs[seen.run as usize];
                match by_call.get(&call) {
                    Some(&(at, _)) if at > seen.at => {}
                    _ => {
                        by_call.insert(call, (seen.at, run));
                    }
                }
            }
        }
        links.by_id = by_call
            .into_iter()
            .map(|(call, (_, run))| (call, run.into()))
            .collect();
        for session in transcripts.sessions() {
            let first = indexes
                .iter()
                .filter_map(|index| {
                    let seen = index.sessions.get(session)?;
                    Some((seen.at, &*index.runs[seen.run as usize]))
                })
                .min_by_key(|&(at, _)| at);
            if let Some((_, run)) = first {
                links.by_session.insert(session.into(), run.into());
            }
        }
        links
    }
}
/// An id keeps the last relay line that carried it (as `scan::link` does).
fn keep_last<K: Eq + std::hash::Hash>(map: &mut HashMap<K, Seen>, key: K, seen: Seen) {
    let kept = map.entry(key).or_insert(seen);
    if kept.at <= seen.at {
        *kept = seen;
    }
}

/// A session keeps the first relay line that carried it (as `scan::link` does).
fn keep_first<K: Eq + std::hash::Hash>(map: &mut HashMap<K, Seen>, key: K, seen: Seen) {
    let kept = map.entry(key).or_insert(seen);
    if seen.at < kept.at {
        *kept = seen;
    }
}
