//! A headless run's stdout, held back (issue 32): when agent's stdout is a file or a pipe
//! (`agent -p "summarize" > out.txt`, cron, `$(agent -p …)`), what the CLI prints goes
//! there only once the run has counted — it ended, or it ran past `fastfail_seconds` — so
//! a rung that failed fast (Claude Code prints its limit on stdout: `You've hit your
//! 5-hour limit · resets 7:59pm (UTC)`) leaves nothing above the next rung's answer; its
//! words are shown on stderr instead. Claude Code's `-p` prints at the end anyway, so the
//! hold costs a script nothing.
//!
//! What is held stays in memory up to [`IN_MEMORY`], then goes on in an unnamed file of
//! agent's own (created 0600 in the temporary directory and unlinked at once: nothing is
//! left behind, nobody else reads it), at most [`ON_DISK`] of it. Past that a timed hold
//! lets go — what was held is written out and the rest flows as it comes, said on stderr —
//! and a hold kept whole for the result document keeps only the last [`TAIL`] bytes of the
//! rest (where a CLI's final answer is), said too: a CLI printing gigabytes in its first
//! seconds never fills the disk unseen, nor memory when it is read back.

use std::fs::File;
use std::io::{self, Read as _, Seek as _, Write};
use std::time::{Duration, Instant};

use crate::adapter::dialect::Mode;

/// How much of a held stdout is kept in memory before the rest goes to a file.
pub const IN_MEMORY: usize = 4 << 20;
/// The most of a held stdout kept in its file.
pub const ON_DISK: u64 = 64 << 20;
/// The most of what comes past [`ON_DISK`] a hold kept whole still keeps: its end.
pub const TAIL: usize = 4 << 20;

/// What becomes of a launched CLI's stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plan {
    /// It is agent's own (a terminal, an interactive launch): nothing is held.
    Own,
    /// Copied through agent as it comes (a CLI that needs a terminal, agent's not one).
    Stream,
    /// Held until the run ends or has run this long, then copied through as it comes.
    HoldFor(Duration),
    /// Kept whole until the run ends: agent writes Claude Code's result document from it.
    Whole,
}

impl Plan {
    /// The plan for a launch: how it runs (`-p`: headless), whether it asks for Claude Code's result
    /// document from a CLI that does not print one (`json_result`), whether the CLI
    /// `needs_terminal` (`Cli::needs_terminal`), and whether agent's stdout is a terminal.
    pub fn for_launch(
        mode: Mode,
        json_result: bool,
        needs_terminal: bool,
        stdout_is_terminal: bool,
        fastfail: Duration,
    ) -> Plan {
        match (mode, json_result, stdout_is_terminal) {
            (Mode::Headless, true, _) => Plan::Whole,
            (Mode::Headless, false, false) => Plan::HoldFor(fastfail),
            _ if needs_terminal && !stdout_is_terminal => Plan::Stream,
            _ => Plan::Own,
        }
    }
}

/// A stdout being copied through agent: held (until `until`, or to the end), or flowing.
#[derive(Debug)]
pub struct Hold {
    /// `None` once released: what comes is written as it comes.
    held: Option<Spool>,
    /// When a timed hold is released; `None`: held to the end (or never held).
    until: Option<Instant>,
    /// After a timed hold's release, the last line (and any part line after it) is kept
    /// back until the next one comes or the run ends: a CLI's last line may be its limit
    /// ("You've hit your 5-hour limit"), which belongs on stderr above the next rung's
    /// answer, not in a night job's output file. At most [`LAST_LINE`] bytes.
    last_line: Vec<u8>,
}

/// The most of a last line a released hold keeps back: a longer one is written through.
const LAST_LINE: usize = 64 * 1024;

impl Hold {
    /// A hold for `plan`, for a run that started at `started`.
    pub fn new(plan: Plan, started: Instant) -> Hold {
        match plan {
            Plan::Own | Plan::Stream => Hold {
                held: None,
                until: None,
                last_line: Vec::new(),
            },
            Plan::HoldFor(limit) => Hold {
                held: Some(Spool::default()),
                until: Some(started + limit),
                last_line: Vec::new(),
            },
            Plan::Whole => Hold {
                held: Some(Spool::default()),
                until: None,
                last_line: Vec::new(),
            },
        }
    }

    /// Takes what the CLI printed: held, or written to `out` when the hold is over.
    pub fn take(&mut self, bytes: &[u8], out: &mut dyn Write) {
        if self.until.is_some()
            && let Some(spool) = &self.held
            && spool.would_overflow(bytes.len())
        {
            crate::term::notice(&format!(
                "the CLI printed more than {} MiB before its run had counted: written through as it comes",
                (IN_MEMORY as u64 + ON_DISK) >> 20
            ));
            self.release(out);
        }
        match &mut self.held {
            Some(spool) => spool.push(bytes),
            None if self.until.is_some() => self.flow_but_the_last_line(bytes, out),
            // Agent's stdout gone (a closed pipe): the CLI's output is still read on, so
            // it does not block on a full one.
            None => {
                let _ = out.write_all(bytes).and_then(|()| out.flush());
            }
        }
    }

    /// Writes what came, all but its last line (kept back in `last_line`).
    fn flow_but_the_last_line(&mut self, bytes: &[u8], out: &mut dyn Write) {
        self.last_line.extend_from_slice(bytes);
        let body = self
            .last_line
            .strip_suffix(b"\n")
            .unwrap_or(&self.last_line);
        let cut = match body.iter().rposition(|byte| *byte == b'\n') {
            Some(newline) => newline + 1,
            None if self.last_line.len() > LAST_LINE => self.last_line.len(),
            None => return,
        };
        let rest = self.last_line.split_off(cut);
        let _ = out.write_all(&self.last_line).and_then(|()| out.flush());
        self.last_line = rest;
    }

    /// Whether a timed hold has run its time at `now`.
    pub fn due(&self, now: Instant) -> bool {
        self.held.is_some() && self.until.is_some_and(|until| now >= until)
    }

    /// Writes what was held to `out`, in order; what comes after flows through.
    pub fn release(&mut self, out: &mut dyn Write) {
        if let Some(spool) = self.held.take() {
            let _ = spool.write_to(out);
        }
    }

    /// What is still held when the run has ended: `None` when it all went through. A
    /// released hold's last line is still held: the ending says where it goes.
    pub fn into_held(self) -> Option<Spool> {
        match self.held {
            Some(spool) => Some(spool),
            None if !self.last_line.is_empty() => {
                let mut spool = Spool::default();
                spool.push(&self.last_line);
                Some(spool)
            }
            None => None,
        }
    }
}

/// Held bytes: in memory, then in an unnamed file of agent's own, then only the end.
#[derive(Debug, Default)]
pub struct Spool {
    memory: Vec<u8>,
    file: Option<File>,
    /// How much the file holds.
    on_disk: u64,
    /// A write to the file failed: what came after was not kept.
    lost: bool,
    /// The last bytes of what came past the file's cap.
    tail: Vec<u8>,
    /// How many bytes past the caps were not kept.
    left_out: u64,
}

impl Spool {
    /// Whether `more` bytes would take it past what memory and its file keep — exactly
    /// when [`Spool::push`] would keep only their end. (The sum of both caps was asked
    /// before: with memory not quite full when the file began, the file reached its cap
    /// first, and a timed hold dropped the middle of a flood it should have written
    /// through — on a loaded machine, where reads come in other sizes.)
    fn would_overflow(&self, more: usize) -> bool {
        if self.file.is_none() && self.memory.len() + more <= IN_MEMORY {
            return false;
        }
        self.left_out > 0 || self.on_disk + more as u64 > ON_DISK
    }

    fn push(&mut self, bytes: &[u8]) {
        if self.file.is_none() && self.memory.len() + bytes.len() <= IN_MEMORY {
            self.memory.extend_from_slice(bytes);
            return;
        }
        if self.left_out > 0 || self.on_disk + bytes.len() as u64 > ON_DISK {
            self.keep_the_end(bytes);
            return;
        }
        if self.file.is_none() && !self.lost {
            match unnamed_file() {
                Ok(file) => self.file = Some(file),
                Err(_) => self.lost = true,
            }
        }
        if let Some(file) = &mut self.file {
            if file.write_all(bytes).is_err() {
                self.file = None;
                self.lost = true;
            } else {
                self.on_disk += bytes.len() as u64;
            }
        }
    }

    /// Past the caps: only the last [`TAIL`] bytes are kept (said once).
    fn keep_the_end(&mut self, bytes: &[u8]) {
        if self.left_out == 0 && self.tail.is_empty() {
            crate::term::notice(&format!(
                "the CLI printed more than {} MiB: only its first {} MiB and its last {} MiB are kept for its result",
                (IN_MEMORY as u64 + ON_DISK) >> 20,
                (IN_MEMORY as u64 + ON_DISK) >> 20,
                TAIL >> 20
            ));
        }
        self.tail.extend_from_slice(bytes);
        if self.tail.len() > TAIL {
            let over = self.tail.len() - TAIL;
            self.tail.drain(..over);
            self.left_out += over as u64;
        }
    }

    /// Writes all it kept to `out`, in order.
    pub fn write_to(self, out: &mut dyn Write) -> io::Result<()> {
        out.write_all(&self.memory)?;
        if let Some(mut file) = self.file {
            file.rewind()?;
            io::copy(&mut file.take(ON_DISK), out)?;
        }
        out.write_all(&self.tail)?;
        out.flush()
    }

    /// All it kept as text, for reading: at most its caps, whatever the CLI printed. Where
    /// bytes were left out, a line ends before the end that was kept.
    pub fn text(self) -> String {
        let mut bytes = self.memory;
        if let Some(mut file) = self.file
            && file.rewind().is_ok()
        {
            let _ = file.take(ON_DISK).read_to_end(&mut bytes);
        }
        if self.left_out > 0 {
            bytes.push(b'\n');
        }
        bytes.extend_from_slice(&self.tail);
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

/// A file only agent can reach: created 0600 under a fresh name and unlinked at once.
fn unnamed_file() -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let path = std::env::temp_dir().join(format!(
        "agent-stdout-{}-{:016x}",
        std::process::id(),
        fastrand::u64(..)
    ));
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)?;
    std::fs::remove_file(&path)?;
    Ok(file)
}

/// The words a fast-failed run printed on stdout, as one line for a notice on stderr
/// (terminal sequences and controls gone, `crate::text::snippet`); `None` for nothing.
pub fn words(text: &str) -> Option<String> {
    let words = crate::text::snippet(text);
    (!words.is_empty()).then_some(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_headless_run_is_held_and_only_off_a_terminal_unless_turned_into_json() {
        let fastfail = Duration::from_secs(25);
        let plan = |mode, json, needs, tty| Plan::for_launch(mode, json, needs, tty, fastfail);
        let (headless, interactive) = (Mode::Headless, Mode::Interactive);
        assert_eq!(plan(headless, false, false, false), Plan::HoldFor(fastfail));
        assert_eq!(plan(headless, false, false, true), Plan::Own);
        assert_eq!(plan(headless, true, false, true), Plan::Whole);
        assert_eq!(plan(interactive, false, false, false), Plan::Own);
        assert_eq!(plan(interactive, false, true, false), Plan::Stream);
        assert_eq!(plan(interactive, false, true, true), Plan::Own);
    }

    #[test]
    fn a_timed_hold_keeps_everything_until_released_then_flows() {
        let started = Instant::now();
        let mut hold = Hold::new(Plan::HoldFor(Duration::from_secs(60)), started);
        let mut out = Vec::new();
        hold.take(b"one ", &mut out);
        assert!(out.is_empty());
        assert!(!hold.due(started));
        assert!(hold.due(started + Duration::from_secs(60)));
        hold.release(&mut out);
        hold.take(b"two\nthree", &mut out);
        assert_eq!(out, b"one two\n");
        hold.take(b" four\n", &mut out);
        assert_eq!(out, b"one two\n", "the last line is kept back");
        hold.take(b"You've hit your 5-hour limit\n", &mut out);
        assert_eq!(out, b"one two\nthree four\n");
        // The last line is still held when the run ends: its ending says where it goes.
        let mut last = Vec::new();
        hold.into_held()
            .expect("the last line")
            .write_to(&mut last)
            .unwrap();
        assert_eq!(last, b"You've hit your 5-hour limit\n");
        // A line longer than what is kept back goes through.
        let mut hold = Hold::new(Plan::HoldFor(Duration::ZERO), started);
        let mut out = Vec::new();
        hold.release(&mut out);
        hold.take(&vec![b'x'; LAST_LINE + 1], &mut out);
        assert_eq!(out.len(), LAST_LINE + 1);
        assert!(hold.into_held().is_none());
    }

    #[test]
    fn a_timed_hold_flooded_past_its_file_is_written_through_whole_whatever_the_read_sizes() {
        // Memory far from full when the file begins (a read larger than what memory had
        // left): every byte still comes out, in order.
        let mut hold = Hold::new(Plan::HoldFor(Duration::from_secs(60)), Instant::now());
        let mut out = Vec::new();
        let mut sent = 0usize;
        let mut chunk = |n: usize, byte: u8, hold: &mut Hold, out: &mut Vec<u8>| {
            hold.take(&vec![byte; n], out);
            sent += n;
        };
        chunk(1 << 20, b'a', &mut hold, &mut out);
        chunk(IN_MEMORY, b'b', &mut hold, &mut out);
        for round in 0..70u8 {
            chunk(1 << 20, b'c' + round % 20, &mut hold, &mut out);
        }
        if let Some(spool) = hold.into_held() {
            spool.write_to(&mut out).unwrap();
        }
        assert_eq!(out.len(), sent, "bytes were dropped");
        assert!(out[..1 << 20].iter().all(|b| *b == b'a'));
        assert!(
            out[1 << 20..(1 << 20) + IN_MEMORY]
                .iter()
                .all(|b| *b == b'b')
        );
    }

    #[test]
    fn a_large_hold_goes_on_in_a_file_and_comes_back_in_order() {
        let mut hold = Hold::new(Plan::Whole, Instant::now());
        let mut out = Vec::new();
        let chunk = vec![b'x'; IN_MEMORY / 2 + 1];
        hold.take(&chunk, &mut out);
        hold.take(&chunk, &mut out);
        hold.take(b"end", &mut out);
        assert!(out.is_empty(), "held to the end");
        let spool = hold.into_held().expect("held");
        assert!(spool.file.is_some(), "past the memory bound");
        spool.write_to(&mut out).unwrap();
        assert_eq!(out.len(), chunk.len() * 2 + 3);
        assert!(out.ends_with(b"xend"));
    }

    #[test]
    fn a_hold_kept_whole_keeps_its_caps_and_the_end_of_a_flood() {
        let mut hold = Hold::new(Plan::Whole, Instant::now());
        let mut out = Vec::new();
        let chunk = vec![b'x'; 1 << 20];
        for _ in 0..100 {
            hold.take(&chunk, &mut out);
        }
        hold.take(b"\n{\"the\":\"end\"}\n", &mut out);
        assert!(out.is_empty(), "held to the end");
        let spool = hold.into_held().expect("held");
        assert!(spool.memory.len() <= IN_MEMORY);
        let on_disk = spool.file.as_ref().unwrap().metadata().unwrap().len();
        assert!(on_disk <= ON_DISK, "{on_disk}");
        assert!(spool.tail.len() <= TAIL);
        assert!(spool.left_out > 0);
        let text = spool.text();
        assert!(text.len() as u64 <= (IN_MEMORY + TAIL + 1) as u64 + ON_DISK);
        assert!(text.ends_with("{\"the\":\"end\"}\n"));
    }

    #[test]
    fn a_timed_hold_past_its_caps_lets_go_and_every_byte_flows_in_order() {
        let mut hold = Hold::new(Plan::HoldFor(Duration::from_secs(60)), Instant::now());
        let mut out = Vec::new();
        let mut sent = 0u64;
        for n in 0..80u8 {
            let chunk = vec![n; 1 << 20];
            sent += chunk.len() as u64;
            hold.take(&chunk, &mut out);
        }
        assert!(hold.into_held().is_none(), "let go");
        assert_eq!(out.len() as u64, sent);
        assert!(
            out.chunks(1 << 20)
                .enumerate()
                .all(|(n, c)| c.iter().all(|&b| usize::from(b) == n))
        );
    }

    #[test]
    fn the_words_lose_their_terminal_sequences() {
        assert_eq!(
            words("\u{1b}[91mYou've hit your 5-hour limit\u{1b}[0m\n").as_deref(),
            Some("You've hit your 5-hour limit")
        );
        assert_eq!(words(" \n"), None);
    }
}
