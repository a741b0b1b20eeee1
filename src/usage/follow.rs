//! The ledger's sums kept between reports, for a process that reports again and again
//! (the dashboard draws `--usage` on every load). The ledger is only ever appended to, so
//! each report reads only the bytes added since the last one and adds them to what is
//! kept. A ledger that shrank, was replaced (another inode) or no longer ends as it did
//! where the last read stopped is read again from the start.
//!
//! What is kept is the same fold `--usage` does ([`scan`](super::scan)), per window and
//! grouping, and once for all of them the relay lines' ids ([`Linking::Later`]): the CLIs'
//! records are read fresh at every report and tied to the relay lines then. The ids are
//! kept only from the first report that finds CLI records to tie them to (a million
//! relayed calls' ids take memory and time); that report reads the ledger once more for
//! them.

use std::io::{self, Read as _, Seek as _, SeekFrom};
use std::os::unix::fs::MetadataExt as _;
use std::path::Path;

use anyhow::Context as _;

use super::clock::Day;
use super::relay_index::RelayIndex;
use super::scan::{self, Context, Linking, Scan};
use super::tally::{By, PerRun};
use crate::login::calls::Transcripts;

/// How many bytes before the end of what was read are compared at the next read.
const SEAM: u64 = 64;
/// Reports with different windows or groupings kept at once.
const KEPT: usize = 4;

/// The sums of the ledger's lines read so far, per window and grouping, and the relay
/// lines' ids.
#[derive(Debug, Default)]
pub struct Follower {
    kept: Vec<Kept>,
    ids: Option<Read<RelayIndex>>,
}

/// What the sums depend on besides the lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Key {
    by: By,
    since: Option<Day>,
    until: Option<Day>,
}

/// Which file was read: a ledger replaced by another is read anew.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileId {
    dev: u64,
    ino: u64,
}

/// What was gathered from the ledger's whole lines up to `through`.
#[derive(Debug)]
struct Read<T> {
    file: FileId,
    through: u64,
    /// The bytes just before `through`, as read.
    seam: Vec<u8>,
    value: T,
}

impl<T: Default> Read<T> {
    fn new(file: FileId) -> Read<T> {
        Read {
            file,
            through: 0,
            seam: Vec::new(),
            value: T::default(),
        }
    }
}

impl<T> Read<T> {
    /// Whether the ledger at `path` (`file`, `len` bytes) still starts with what was read.
    fn still_holds(&self, path: &Path, file: FileId, len: u64) -> io::Result<bool> {
        Ok(self.file == file && self.through <= len && seam(path, self.through)? == self.seam)
    }
}

#[derive(Debug)]
struct Kept {
    key: Key,
    read: Read<Scan>,
}

impl Follower {
    /// What [`scan::scan`] gives for `path` with `context` and these transcripts linked,
    /// reading only what was appended since the last call with the same window and
    /// grouping. `context.linking` is ignored (linking is done here) and `--reconcile`'s
    /// per-run sums are not kept.
    pub fn scan(
        &mut self,
        path: &Path,
        context: &Context,
        transcripts: &Transcripts,
    ) -> anyhow::Result<Scan> {
        let key = Key {
            by: context.rules.by,
            since: context.rules.since,
            until: context.rules.until,
        };
        let previous = self
            .kept
            .iter()
            .position(|kept| kept.key == key)
            .map(|at| self.kept.remove(at));
        let meta = match std::fs::metadata(path) {
            Ok(meta) => meta,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Scan::default()),
            Err(err) => return Err(err).with_context(|| format!("reading {}", path.display())),
        };
        let file = FileId {
            dev: meta.dev(),
            ino: meta.ino(),
        };
        let len = meta.len();
        let reading = || format!("reading {}", path.display());
        let mut sums = match previous {
            Some(kept)
                if kept
                    .read
                    .still_holds(path, file, len)
                    .with_context(reading)? =>
            {
                kept.read
            }
            _ => Read::new(file),
        };
        let mut ids = match self.ids.take() {
            Some(ids) if ids.still_holds(path, file, len).with_context(reading)? => Some(ids),
            _ if !transcripts.is_empty() => Some(Read::new(file)),
            _ => None,
        };

        // Whole lines are kept; a last line without its newline yet (being written, or
        // torn) is counted in this answer, as `--usage` would, and read again next time.
        let from = ids.as_ref().map_or(sums.through, |ids| ids.through);
        let whole = last_line_end(path, from.min(sums.through), len).with_context(reading)?;
        let tally_only = Context {
            linking: Linking::Never,
            reconcile: false,
            ..*context
        };
        let with_ids = Context {
            linking: Linking::Later,
            ..tally_only
        };
        let seam_then = if whole > sums.through || ids.as_ref().is_some_and(|i| whole > i.through) {
            seam(path, whole).with_context(reading)?
        } else {
            Vec::new()
        };
        match &mut ids {
            // Both where they were left: one read gives both.
            Some(ids) if ids.through == sums.through && whole > sums.through => {
                let mut added = scan::scan_range(path, sums.through, whole, &with_ids)?;
                ids.value.merge(std::mem::take(&mut added.index));
                ids.through = whole;
                ids.seam.clone_from(&seam_then);
                add(&mut sums, added, whole, &seam_then);
            }
            _ => {
                if whole > sums.through {
                    let added = scan::scan_range(path, sums.through, whole, &tally_only)?;
                    add(&mut sums, added, whole, &seam_then);
                }
                if let Some(ids) = &mut ids
                    && whole > ids.through
                {
                    let added = scan::scan_range(path, ids.through, whole, &with_ids)?;
                    ids.value.merge(added.index);
                    ids.through = whole;
                    ids.seam.clone_from(&seam_then);
                }
            }
        }
        let partial = if len > whole {
            Some(scan::scan_range(path, whole, len, &with_ids)?)
        } else {
            None
        };
        let answer = answer(
            &sums.value,
            ids.as_ref().map(|i| &i.value),
            partial,
            transcripts,
        );
        self.ids = ids;
        self.kept.push(Kept { key, read: sums });
        if self.kept.len() > KEPT {
            self.kept.remove(0);
        }
        Ok(answer)
    }
}

/// Adds the lines read up to `through` (which ends with `seam`).
fn add(sums: &mut Read<Scan>, added: Scan, through: u64, seam: &[u8]) {
    if sums.through == 0 {
        sums.value = added;
    } else {
        sums.value.merge(added);
    }
    sums.through = through;
    sums.seam = seam.to_vec();
}

/// The kept sums, with the unfinished last line's added and the transcripts linked.
fn answer(
    kept: &Scan,
    ids: Option<&RelayIndex>,
    partial: Option<Scan>,
    transcripts: &Transcripts,
) -> Scan {
    let mut indexes: Vec<&RelayIndex> = ids.into_iter().collect();
    if let Some(partial) = &partial {
        indexes.push(&partial.index);
    }
    let links = RelayIndex::links(&indexes, transcripts);
    let mut answer = Scan {
        tally: kept.tally.clone(),
        relay: PerRun::default(),
        links,
        index: RelayIndex::default(),
        lines: kept.lines,
        unreadable: kept.unreadable,
    };
    if let Some(mut partial) = partial {
        partial.index = RelayIndex::default();
        answer.merge(partial);
    }
    answer
}

/// The bytes of `path` just before `end`.
fn seam(path: &Path, end: u64) -> io::Result<Vec<u8>> {
    let start = end.saturating_sub(SEAM);
    let mut file = crate::state::file::open_read(path)?;
    file.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::new();
    file.take(end - start).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// The offset just past the last newline in `from..len`, or `from` when there is none.
fn last_line_end(path: &Path, from: u64, len: u64) -> io::Result<u64> {
    let mut file = crate::state::file::open_read(path)?;
    let mut end = len;
    let mut block = vec![0u8; 64 * 1024];
    while end > from {
        let start = end.saturating_sub(block.len() as u64).max(from);
        let part = &mut block[..usize::try_from(end - start).unwrap_or(0)];
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(part)?;
        if let Some(newline) = part.iter().rposition(|&b| b == b'\n') {
            return Ok(start + newline as u64 + 1);
        }
        end = start;
    }
    Ok(from)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::fmt::Write as _;
    use std::io::Write as _;

    use super::*;
    use crate::config::pricing::Pricing;
    use crate::login::calls::Call;
    use crate::state::ledger::Tokens;
    use crate::usage::clock::Clock;
    use crate::usage::tally::Rules;

    /// What a report shows of a scan: per group, calls, tokens, errors and cost; lines;
    /// which transcript call is tied to which run, and each session's run.
    type Shown = (
        BTreeMap<String, (u64, u64, u64, u64, bool)>,
        (u64, u64),
        BTreeMap<usize, String>,
        BTreeMap<String, String>,
    );

    fn shown(scan: &Scan) -> Shown {
        let groups = scan
            .tally
            .groups
            .iter()
            .map(|(key, sums)| {
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                let micro = (sums.known_usd * 1e6).round() as u64;
                let c = &sums.counts;
                (
                    key.to_string(),
                    (c.calls, c.tokens.total(), c.errors, micro, sums.incomplete),
                )
            })
            .collect();
        let mut by_id = BTreeMap::new();
        for (call, run) in &scan.links.by_id {
            // The last link of a call wins, as `--usage` reads them.
            by_id.insert(*call, run.to_string());
        }
        let by_session = scan
            .links
            .by_session
            .iter()
            .map(|(s, r)| (s.to_string(), r.to_string()))
            .collect();
        (groups, (scan.lines, scan.unreadable), by_id, by_session)
    }

    fn random_line(rng: &mut fastrand::Rng, seq: &mut u64) -> String {
        *seq += 1;
        if rng.u8(0..12) == 0 {
            return format!("not json {seq}\n");
        }
        let relayed = rng.bool();
        let mut line = format!(
            "{{\"seq\":{seq},\"time\":\"2026-11-{:02}T1{}:00:00Z\",\"run\":\"run{}\",\"backend\":\"{}\",\"model\":\"{}\",\"role\":\"{}\",\"error_kind\":\"{}\",\"tokens\":{{\"input\":{},\"output\":{}}}",
            rng.u8(27..31),
            rng.u8(0..10),
            rng.u8(0..4),
            if relayed { "relay:anthropic" } else { "claude" },
            ["claude-opus-4-1", "gpt-5", "no-price"][rng.usize(0..3)],
            if relayed { "relay" } else { "probe" },
            if rng.u8(0..5) == 0 {
                "rate_limit"
            } else {
                "ok"
            },
            rng.u64(0..5000),
            rng.u64(0..500),
        );
        if rng.bool() {
            let _ = write!(line, ",\"request_id\":\"req{}\"", rng.u8(0..8));
        }
        if rng.bool() {
            let _ = write!(line, ",\"message_id\":\"msg{}\"", rng.u8(0..8));
        }
        if rng.bool() {
            let _ = write!(line, ",\"session\":\"s{}\"", rng.u8(0..4));
        }
        line.push_str("}\n");
        line
    }

    fn add_transcript_call(rng: &mut fastrand::Rng, transcripts: &mut Transcripts) {
        let n = transcripts.calls.len();
        let call = Call {
            cli: "claude",
            time: format!("2026-11-{:02}T10:00:00Z", rng.u8(27..31)),
            model: "claude-opus-4-1".into(),
            session: format!("s{}", rng.u8(0..6)),
            request_id: rng.bool().then(|| format!("req{}", rng.u8(0..10))),
            message_id: rng.bool().then(|| format!("msg{}", rng.u8(0..10))),
            tokens: Tokens {
                input: 10,
                ..Tokens::default()
            },
        };
        transcripts.add(format!("key{n}"), call);
    }

    /// Appends, lines cut in two across reads, rewrites in place and replacements by
    /// rename, transcripts growing between reads, two reports asked in any order: after
    /// every step each answer is the one a fresh `--usage` scan gives.
    #[test]
    fn a_followed_ledger_adds_up_as_a_fresh_read_of_it_whatever_happens_between_reads() {
        let pricing = Pricing::default();
        let clock = Clock::new(Some(0.0)).unwrap();
        for case in 0..300u64 {
            let mut rng = fastrand::Rng::with_seed(case);
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("usage.jsonl");
            // Two reports on one follower, asked in turn or not: they share the relay ids.
            let report = |rng: &mut fastrand::Rng| Rules {
                by: [By::Day, By::Model, By::Backend][rng.usize(0..3)],
                since: Day::parse(["2026-11-27", "2026-11-29"][rng.usize(0..2)]),
                until: None,
                pricing: &pricing,
            };
            let reports = [report(&mut rng), report(&mut rng)];
            let mut transcripts = Transcripts::default();
            let mut follower = Follower::default();
            let mut seq = 0;
            let mut log = Vec::new();
            for _ in 0..8 {
                let mut text = String::new();
                for _ in 0..rng.usize(0..30) {
                    text.push_str(&random_line(&mut rng, &mut seq));
                }
                match rng.u8(0..10) {
                    0 => {
                        log.push("rewrite in place");
                        std::fs::write(&path, &text).unwrap();
                    }
                    1 => {
                        log.push("replace by rename");
                        let other = dir.path().join("new.jsonl");
                        std::fs::write(&other, &text).unwrap();
                        std::fs::rename(&other, &path).unwrap();
                    }
                    _ => {
                        // Sometimes the last line is cut: its end comes at the next step.
                        let cut = if rng.u8(0..3) == 0 {
                            rng.usize(0..=text.len())
                        } else {
                            text.len()
                        };
                        log.push("append");
                        let mut file = std::fs::OpenOptions::new()
                            .create(true)
                            .append(true)
                            .open(&path)
                            .unwrap();
                        file.write_all(&text.as_bytes()[..cut]).unwrap();
                        file.flush().unwrap();
                        drop(file);
                        if cut < text.len() {
                            log.push("cut");
                        }
                        let rest = text.as_bytes()[cut..].to_vec();
                        if !rest.is_empty() && rng.bool() {
                            let mut file = std::fs::OpenOptions::new()
                                .append(true)
                                .open(&path)
                                .unwrap();
                            file.write_all(&rest).unwrap();
                        }
                    }
                }
                for _ in 0..rng.usize(0..3) {
                    add_transcript_call(&mut rng, &mut transcripts);
                }
                for rules in reports {
                    if rng.u8(0..3) == 0 {
                        continue;
                    }
                    let context = Context {
                        rules,
                        clock: &clock,
                        linking: Linking::Now(&transcripts),
                        logins: &crate::usage::logins::Logins::default(),
                        reconcile: false,
                    };
                    let fresh = scan::scan(&path, &context).unwrap();
                    let followed = follower.scan(&path, &context, &transcripts).unwrap();
                    assert_eq!(
                        shown(&followed),
                        shown(&fresh),
                        "case {case}, {:?} since {:?}, after {log:?}:\n{}",
                        rules.by,
                        rules.since.map(|d| d.as_str().to_string()),
                        std::fs::read_to_string(&path).unwrap_or_default()
                    );
                }
            }
        }
    }
}
