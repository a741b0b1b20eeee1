//! Reading agent's own ledger, `usage.jsonl`, fast: a million lines in well under the two
//! seconds a person waits for. The file is cut at line boundaries into one part per core
//! (up to four); each part is read in 1 MiB blocks and each line deserialized where it lies,
//! straight into borrowed fields (no `serde_json::Value`, no copy of a string without
//! escapes), and added to a per-thread tally; the tallies are merged at the end.

use std::borrow::Cow;
use std::io::{self, BufRead as _, BufReader, Read as _, Seek as _, SeekFrom};
use std::path::Path;

use anyhow::Context as _;
use serde::Deserialize;

use super::clock::Clock;
use super::links::Links;
use super::relay_index::RelayIndex;
use super::tally::{PerRun, Rules, Tally, View};
use crate::login::calls::Transcripts;
use crate::state::ledger::Tokens;

/// Below this size one thread is quicker than starting more.
const PARALLEL_FROM_BYTES: u64 = 4 << 20;
const MAX_THREADS: usize = 4;

/// The fields of a ledger line `--usage` reads (see [`crate::state::ledger::CallRecord`]).
#[derive(Deserialize)]
struct Line<'a> {
    #[serde(borrow)]
    time: Text<'a>,
    #[serde(borrow, default)]
    run: Text<'a>,
    #[serde(borrow, default)]
    backend: Option<Text<'a>>,
    #[serde(borrow, default)]
    model: Option<Text<'a>>,
    #[serde(borrow, default)]
    account: Option<Text<'a>>,
    #[serde(borrow, default)]
    client: Option<Text<'a>>,
    #[serde(borrow, default)]
    role: Text<'a>,
    #[serde(borrow, default)]
    error_kind: Text<'a>,
    #[serde(default)]
    tokens: Tokens,
    #[serde(default)]
    estimated: bool,
    /// Refused by the relay before it went upstream: on record, not a call.
    #[serde(default)]
    refused: bool,
    #[serde(borrow, default)]
    request_id: Option<Text<'a>>,
    #[serde(borrow, default)]
    message_id: Option<Text<'a>>,
    #[serde(borrow, default)]
    session: Option<Text<'a>>,
}

/// A JSON string borrowed from the line when it has no escapes (serde borrows a bare
/// `Cow<str>` but copies one inside an `Option`).
#[derive(Default)]
pub struct Text<'a>(pub Cow<'a, str>);

impl std::ops::Deref for Text<'_> {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Cow<'de, str>;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string")
            }

            fn visit_borrowed_str<E>(self, text: &'de str) -> Result<Self::Value, E> {
                Ok(Cow::Borrowed(text))
            }

            fn visit_str<E>(self, text: &str) -> Result<Self::Value, E> {
                Ok(Cow::Owned(text.to_string()))
            }

            fn visit_string<E>(self, text: String) -> Result<Self::Value, E> {
                Ok(Cow::Owned(text))
            }
        }
        deserializer.deserialize_str(Visitor).map(Text)
    }
}

/// The ledger, added up.
#[derive(Debug, Default)]
pub struct Scan {
    pub tally: Tally,
    /// Relay lines per run and model (only with `--reconcile`).
    pub relay: PerRun,
    pub links: Links,
    /// What linking needs, kept for later (only with [`Linking::Later`]).
    pub index: RelayIndex,
    pub lines: u64,
    pub unreadable: u64,
}

impl Scan {
    pub fn merge(&mut self, other: Scan) {
        self.tally.merge(other.tally);
        self.relay.merge(other.relay);
        self.links.merge(other.links);
        self.index.merge(other.index);
        self.lines += other.lines;
        self.unreadable += other.unreadable;
    }
}

/// What every thread shares.
pub struct Context<'a> {
    pub rules: Rules<'a>,
    pub clock: &'a Clock,
    pub linking: Linking<'a>,
    pub reconcile: bool,
    /// The logins agent sees: a self-check ran its CLI on one.
    pub logins: &'a super::logins::Logins,
}

/// When relay lines are tied to the CLIs' records of the same calls.
#[derive(Clone, Copy)]
pub enum Linking<'a> {
    /// As they are read, to these transcripts.
    Now(&'a Transcripts),
    /// Later, to transcripts not read yet: [`Scan::index`] keeps what that needs.
    Later,
    /// Never: there are no transcripts to tie them to.
    Never,
}

/// Adds up `path` (a missing ledger is an empty one).
pub fn scan(path: &Path, context: &Context) -> anyhow::Result<Scan> {
    let len = match std::fs::metadata(path) {
        Ok(meta) => meta.len(),
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Scan::default()),
        Err(err) => return Err(err).with_context(|| format!("reading {}", path.display())),
    };
    scan_range(path, 0, len, context)
}

/// Adds up the lines of `path` from byte `start` (the start of a line) to `end`.
pub fn scan_range(path: &Path, start: u64, end: u64, context: &Context) -> anyhow::Result<Scan> {
    let threads = if end - start < PARALLEL_FROM_BYTES {
        1
    } else {
        std::thread::available_parallelism()
            .map_or(1, usize::from)
            .clamp(1, MAX_THREADS)
    };
    let bounds = part_bounds(path, start, end, threads)
        .with_context(|| format!("reading {}", path.display()))?;
    let parts: Vec<(u64, u64)> = bounds.windows(2).map(|w| (w[0], w[1])).collect();
    let results: Vec<io::Result<Scan>> = if parts.len() == 1 {
        vec![scan_part(path, parts[0], context)]
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> = parts
                .iter()
                .map(|&part| scope.spawn(move || scan_part(path, part, context)))
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(io::Error::other("a reader panicked")))
                })
                .collect()
        })
    };
    let mut total = Scan::default();
    for result in results {
        total.merge(result.with_context(|| format!("reading {}", path.display()))?);
    }
    Ok(total)
}

/// Adds up ledger documents read from the shared store's stream, one record each.
pub fn scan_documents(documents: &[Vec<u8>], context: &Context) -> Scan {
    let mut clock = context.clock.clone();
    let mut scan = Scan::default();
    // Each document stands where it would in a file of them, one per line.
    let mut at = 0u64;
    for document in documents {
        line(document, at, &mut clock, &mut scan, context);
        at += document.len() as u64 + 1;
    }
    scan
}

/// `threads + 1` offsets from `start` to `len`, each the start of a line (or `len`).
fn part_bounds(path: &Path, start: u64, len: u64, threads: usize) -> io::Result<Vec<u64>> {
    if threads <= 1 {
        // One part: nothing to find, no need to open the file for it.
        return Ok(vec![start, len]);
    }
    let mut bounds = vec![start];
    let mut reader = BufReader::with_capacity(1 << 16, crate::state::file::open_read(path)?);
    let mut skipped = Vec::new();
    for k in 1..threads as u64 {
        let nominal = start + (len - start) * k / threads as u64;
        let last = *bounds.last().unwrap_or(&0);
        if nominal <= last {
            continue;
        }
        reader.seek(SeekFrom::Start(nominal - 1))?;
        skipped.clear();
        let read = reader.read_until(b'\n', &mut skipped)? as u64;
        let bound = (nominal - 1 + read).min(len);
        if bound > last && bound < len {
            bounds.push(bound);
        }
    }
    bounds.push(len);
    Ok(bounds)
}

fn scan_part(path: &Path, (start, end): (u64, u64), context: &Context) -> io::Result<Scan> {
    let mut file = crate::state::file::open_read(path)?;
    file.seek(SeekFrom::Start(start))?;
    let mut part = file.take(end - start);
    let mut clock = context.clock.clone();
    let mut scan = Scan::default();
    // Whole blocks are read, and lines parsed where they lie; a line cut by the end of a
    // block is moved to the front before the next read.
    let mut block = vec![0u8; BLOCK];
    let mut filled = 0;
    // The ledger offset of `block[0]`.
    let mut base = start;
    loop {
        if filled == block.len() {
            // A line longer than a block: make room.
            block.resize(block.len() * 2, 0);
        }
        let read = part.read(&mut block[filled..])?;
        let at_end = read == 0;
        filled += read;
        let mut consumed = 0;
        while let Some(newline) = find_newline(&block[consumed..filled]) {
            line(
                &block[consumed..consumed + newline],
                base + consumed as u64,
                &mut clock,
                &mut scan,
                context,
            );
            consumed += newline + 1;
        }
        if at_end {
            line(
                &block[consumed..filled],
                base + consumed as u64,
                &mut clock,
                &mut scan,
                context,
            );
            return Ok(scan);
        }
        block.copy_within(consumed..filled, 0);
        filled -= consumed;
        base += consumed as u64;
    }
}

const BLOCK: usize = 1 << 20;

/// The first `\n`, eight bytes at a time (a byte loop was a seventh of the run).
fn find_newline(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = u64::from_ne_bytes([1; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    const NEWLINES: u64 = u64::from_ne_bytes([b'\n'; 8]);
    let mut chunks = bytes.chunks_exact(8);
    let mut at = 0;
    for chunk in chunks.by_ref() {
        let word = u64::from_ne_bytes(chunk.try_into().unwrap_or([0; 8])) ^ NEWLINES;
        // A zero byte in `word` is a newline in `chunk`.
        if word.wrapping_sub(ONES) & !word & HIGHS != 0 {
            return chunk.iter().position(|&b| b == b'\n').map(|i| at + i);
        }
        at += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(|&b| b == b'\n')
        .map(|i| at + i)
}

/// Adds one ledger line, which starts at byte `at`.
fn line(bytes: &[u8], at: u64, clock: &mut Clock, scan: &mut Scan, context: &Context) {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return;
    }
    scan.lines += 1;
    // Checked once here, so the parser does not check each string again.
    let parsed = std::str::from_utf8(bytes)
        .ok()
        .and_then(|text| serde_json::from_str::<Line>(text).ok());
    let Some(line) = parsed else {
        scan.unreadable += 1;
        return;
    };
    if line.refused {
        // Turned away by the relay (its budget, the store, a cooling upstream): nothing
        // was sent, so it is no call.
        return;
    }
    let Some(day) = clock.day(&line.time) else {
        scan.unreadable += 1;
        return;
    };
    let model = line.model.as_deref().unwrap_or("");
    let error = !line.error_kind.is_empty() && &*line.error_kind != "ok";
    let backend = line.backend.as_deref().unwrap_or("");
    // A self-check ran the CLI itself, which kept its own record of the call too: linked
    // like a relayed call (by its session and ids), it counts once, on the ledger's side.
    // It ran on the CLI's own login, so the plan pays for it.
    let self_check = &*line.role == crate::launch::self_check::ROLE;
    let login = self_check.then(|| context.logins.of_backend(backend).unwrap_or("login"));
    scan.tally.add(
        &context.rules,
        &View {
            day,
            run: &line.run,
            backend,
            model,
            account: line.account.as_deref().unwrap_or(""),
            client: line.client.as_deref().unwrap_or(""),
            tokens: &line.tokens,
            estimated: line.estimated,
            error,
            login,
        },
    );
    // The relay writes `backend: "relay:<kind>"`, and `role` from the client's
    // X-Agent-Role header (`relay` without one).
    let relayed = &*line.role == "relay"
        || line
            .backend
            .as_deref()
            .is_some_and(|b| b.starts_with("relay:"));
    if relayed || self_check {
        match context.linking {
            Linking::Now(transcripts) => link(&mut scan.links, &line, transcripts),
            Linking::Later => scan.index.add(
                at,
                &line.run,
                [line.request_id.as_deref(), line.message_id.as_deref()],
                line.session.as_deref(),
            ),
            Linking::Never => {}
        }
        if relayed && context.reconcile && context.rules.in_window(day) {
            scan.relay.add(&line.run, model, &line.tokens, error);
        }
    }
}

/// Notes which transcript calls this relay line carried.
fn link(links: &mut Links, line: &Line, transcripts: &Transcripts) {
    if transcripts.is_empty() {
        return;
    }
    for id in [&line.request_id, &line.message_id].into_iter().flatten() {
        if let Some(index) = transcripts.by_id(id) {
            links.by_id.push((index, (*line.run).into()));
        }
    }
    if let Some(session) = &line.session
        && !transcripts.in_session(session).is_empty()
        && !links.by_session.contains_key(&**session)
    {
        links
            .by_session
            .insert((**session).into(), (*line.run).into());
    }
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use super::*;

    #[test]
    fn find_newline_finds_the_first_wherever_it_is() {
        for len in 0..40 {
            for at in 0..len {
                let mut bytes = vec![b'x'; len];
                bytes[at] = b'\n';
                if at + 3 < len {
                    bytes[at + 3] = b'\n';
                }
                assert_eq!(find_newline(&bytes), Some(at), "{len} {at}");
            }
            assert_eq!(find_newline(&vec![0x8a; len]), None);
        }
    }

    #[test]
    fn every_line_is_read_once_whatever_the_parts() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("usage.jsonl");
        let mut text = String::new();
        for n in 0..3000 {
            let _ = writeln!(
                text,
                "{{\"time\":\"2026-11-30T10:{:02}:00Z\",\"run\":\"r\",\"model\":\"m{}\",\"tokens\":{{\"input\":1}}}}",
                n % 60,
                n % 3
            );
        }
        text.push_str("not json\n\n{\"time\":\"2026-11-30T10:00:00Z\",\"model\":\"m\\u0030\"}");
        std::fs::write(&path, &text).unwrap();
        let pricing = crate::config::pricing::Pricing::default();
        let clock = Clock::new(Some(0.0)).unwrap();
        let transcripts = Transcripts::default();
        let context = Context {
            rules: Rules {
                by: crate::usage::tally::By::Model,
                since: None,
                until: None,
                pricing: &pricing,
            },
            clock: &clock,
            linking: Linking::Now(&transcripts),
            logins: &crate::usage::logins::Logins::default(),
            reconcile: false,
        };
        let len = text.len() as u64;
        for threads in [1, 2, 3, 7] {
            let bounds = part_bounds(&path, 0, len, threads).unwrap();
            let mut total = Scan::default();
            for part in bounds.windows(2) {
                total.merge(scan_part(&path, (part[0], part[1]), &context).unwrap());
            }
            assert_eq!(total.lines, 3002, "{threads} parts");
            assert_eq!(total.unreadable, 1);
            let calls = |m: &str| total.tally.groups[m].counts.calls;
            assert_eq!((calls("m0"), calls("m1"), calls("m2")), (1001, 1000, 1000));
        }
    }

    #[test]
    fn a_self_checks_ledger_line_is_linked_to_the_clis_transcript_of_that_run() {
        // The transcript the real Claude Code 2.1.332 wrote of a self-check's run, and the
        // ledger line the self-check wrote of the same run (its `session_id`).
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("projects/-work-project");
        std::fs::create_dir_all(&project).unwrap();
        std::fs::write(
            project.join("34261d69-c293-4154-b8f4-cc03381b4de8.jsonl"),
            include_str!("../../tests/fixtures/self_check/claude-answered.transcript.jsonl"),
        )
        .unwrap();
        let mut transcripts = Transcripts::default();
        crate::login::claude_calls::read(&[dir.path().join("projects")], &mut transcripts);
        assert_eq!(transcripts.calls.len(), 1, "{:?}", transcripts.calls);
        let ledger = dir.path().join("usage.jsonl");
        let line = |role: &str, session: &str| {
            format!(
                "{{\"time\":\"2026-12-01T12:34:13Z\",\"run\":\"r1\",\"backend\":\"claude\",\"model\":\"claude-opus-e2e\",\"role\":\"{role}\",\"error_kind\":\"ok\",\"tokens\":{{\"input\":8,\"output\":1}},\"session\":\"{session}\"}}\n"
            )
        };
        std::fs::write(
            &ledger,
            line(
                crate::launch::self_check::ROLE,
                "34261d69-c293-4154-b8f4-cc03381b4de8",
            ) + &line("probe", "another-session"),
        )
        .unwrap();
        let pricing = crate::config::pricing::Pricing::default();
        let clock = Clock::new(Some(0.0)).unwrap();
        let logins = crate::usage::logins::Logins::default();
        let context = |linking| Context {
            rules: Rules {
                by: crate::usage::tally::By::Model,
                since: None,
                until: None,
                pricing: &pricing,
            },
            clock: &clock,
            linking,
            reconcile: true,
            logins: &logins,
        };

        let now = scan(&ledger, &context(Linking::Now(&transcripts))).unwrap();
        assert_eq!(now.tally.groups["claude-opus-e2e"].counts.calls, 2);
        assert_eq!(
            now.links
                .by_session
                .get("34261d69-c293-4154-b8f4-cc03381b4de8")
                .map(|run| &**run),
            Some("r1"),
            "the transcript's call is the ledger's: counted once, there"
        );
        assert!(!now.links.by_session.contains_key("another-session"));
        assert!(
            now.relay.cells.is_empty(),
            "a self-check is no relayed call to reconcile"
        );

        // The dashboard links later, from what it kept: the same link.
        let later = scan(&ledger, &context(Linking::Later)).unwrap();
        let links = RelayIndex::links(&[&later.index], &transcripts);
        assert_eq!(links.by_session.len(), 1);
    }
}
