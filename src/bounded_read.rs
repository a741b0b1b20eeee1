//! The one way agent reads what another program wrote (DESIGN §19): a CLI's login store, its
//! settings, its transcripts, rollouts and chats, `~/.npmrc`, `codex app-server`'s answers and
//! the statusline's stdin. Whatever is on disk, a read never blocks and never holds more than
//! its kind's cap:
//!
//! - The path is `stat`ed first and opened only when it is a regular file, then opened with
//!   `O_NONBLOCK | O_NOCTTY` and checked again on the open descriptor (`fstat`), so a FIFO
//!   swapped in between cannot hang the open nor a device be read. A symbolic link is
//!   followed: users link their CLI settings to a dotfiles repository, and the CLI itself
//!   follows it; what the link reaches must still be a regular file within the cap. (Agent's
//!   *own* state files are another door, `state::file`, which never follows a link.) A
//!   file of a repository's work tree ([`read_no_follow`]) is the exception: its links are
//!   the repository's, so one is never followed.
//! - A whole file ([`read`], [`whole`], [`json`]) larger than its cap is not read at all.
//! - A record file is streamed ([`lines`]): one line at a time, at most [`Cap::line`] of it
//!   held; a longer line is read past without being kept, and a file larger than
//!   [`Cap::file`] is not read.
//! - What does not fit is skipped with one notice per file (at most once per process, so the
//!   dashboard does not repeat it on every load); the notice names the path and the reason,
//!   never the content. A missing file, a dangling link or one agent may not read is simply
//!   absent, as before: unknown is not dead.

use std::collections::HashSet;
use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead as _, BufReader, Read};
use std::os::fd::AsFd;
use std::os::unix::fs::{FileTypeExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, mpsc};
use std::time::Duration;

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;
/// A MiB, as a line length.
const LINE_MIB: usize = 1 << 20;

/// How much of one kind of file agent reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cap {
    /// What such a file is, for the notice (`a login file`).
    pub what: &'static str,
    /// The largest whole file read.
    pub file: u64,
    /// The longest line kept, for files read line by line.
    pub line: usize,
}

/// A CLI's login store (`.credentials.json`, `auth.json`, `oauth_creds.json`): a few KiB.
pub const LOGIN: Cap = Cap {
    what: "a login file",
    file: MIB,
    line: LINE_MIB,
};

/// A CLI's settings (`settings.json`, `config.toml`, `~/.npmrc`): a few KiB.
pub const SETTINGS: Cap = Cap {
    what: "a settings file",
    file: MIB,
    line: LINE_MIB,
};

/// agent's own configuration (`--config`, `$AGENT_CONFIG`): the user's, yet any path may be
/// named there (`/dev/zero`, a FIFO). A few KiB.
pub const CONFIG: Cap = Cap {
    what: "a configuration file",
    file: MIB,
    line: LINE_MIB,
};

/// A chat kept as one JSON document (Gemini CLI's older `session-*.json`): the whole
/// conversation, tool output included, parsed at once.
pub const CHAT: Cap = Cap {
    what: "a chat file",
    file: 16 * MIB,
    line: 16 * LINE_MIB,
};

/// A JSONL record (Claude Code's transcripts, Codex's rollouts, Gemini CLI's chats): streamed.
/// Rollouts of several GB are real (openai/codex#29531 saw 9.4 GB), so only a runaway file
/// is left out. A line is a message: one with a large tool result is about 1 MB, one with a
/// pasted image several; a longer line is skipped.
pub const RECORDS: Cap = Cap {
    what: "a record file",
    file: 16 * GIB,
    line: 16 * LINE_MIB,
};

/// Claude Code's statusline JSON on stdin: a few KiB.
pub const FEED: Cap = Cap {
    what: "the statusline input",
    file: MIB,
    line: LINE_MIB,
};

/// How much of a file is read per system call when streaming.
const CHUNK: usize = 64 << 10;

/// Why a file was not read.
#[derive(Debug)]
pub enum Skipped {
    /// Nothing there (a dangling link included).
    Missing,
    /// It could not be opened or read (permissions, I/O).
    Unreadable(io::Error),
    /// A FIFO, device, socket or directory.
    NotRegular(&'static str),
    /// Larger than its kind's cap.
    TooLarge { size: u64, cap: Cap },
}

impl Skipped {
    /// Whether this is worth a notice: the file is there but is no file of its kind.
    fn is_notable(&self) -> bool {
        matches!(self, Skipped::NotRegular(_) | Skipped::TooLarge { .. })
    }
}

impl fmt::Display for Skipped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Skipped::Missing => f.write_str("no such file"),
            Skipped::Unreadable(err) => write!(f, "{err}"),
            Skipped::NotRegular(kind) => write!(
                f,
                "{kind}, not a regular file (agent reads only regular files another program wrote)"
            ),
            Skipped::TooLarge { size, cap } => write!(
                f,
                "{}, more than the {} {} may be",
                size_text(*size),
                size_text(cap.file),
                cap.what
            ),
        }
    }
}

/// `1.5 GiB`, `12 MiB`, `300 bytes`.
fn size_text(bytes: u64) -> String {
    #[allow(clippy::cast_precision_loss)]
    let scaled = |unit: u64| {
        let value = bytes as f64 / unit as f64;
        if bytes.is_multiple_of(unit) {
            format!("{value:.0}")
        } else {
            format!("{value:.1}")
        }
    };
    if bytes >= GIB {
        format!("{} GiB", scaled(GIB))
    } else if bytes >= MIB {
        format!("{} MiB", scaled(MIB))
    } else if bytes >= KIB {
        format!("{} KiB", scaled(KIB))
    } else {
        format!("{bytes} bytes")
    }
}

fn kind_of(file_type: fs::FileType) -> Option<&'static str> {
    if file_type.is_file() {
        None
    } else if file_type.is_fifo() {
        Some("a FIFO")
    } else if file_type.is_char_device() {
        Some("a character device")
    } else if file_type.is_block_device() {
        Some("a block device")
    } else if file_type.is_socket() {
        Some("a socket")
    } else if file_type.is_dir() {
        Some("a directory")
    } else if file_type.is_symlink() {
        Some("a symbolic link")
    } else {
        Some("not a file")
    }
}

/// Whether `meta` is a regular file within `cap`, and its size.
fn fits(meta: &fs::Metadata, cap: Cap) -> Result<u64, Skipped> {
    if let Some(kind) = kind_of(meta.file_type()) {
        return Err(Skipped::NotRegular(kind));
    }
    if meta.len() > cap.file {
        return Err(Skipped::TooLarge {
            size: meta.len(),
            cap,
        });
    }
    Ok(meta.len())
}

fn io_skip(err: io::Error) -> Skipped {
    if err.kind() == io::ErrorKind::NotFound {
        Skipped::Missing
    } else {
        Skipped::Unreadable(err)
    }
}

/// Opens `path` for reading when it is a regular file within `cap`: the file and its size.
pub fn open(path: &Path, cap: Cap) -> Result<(File, u64), Skipped> {
    // Nothing that is not a regular file is even opened (opening a device can do things).
    fits(&fs::metadata(path).map_err(io_skip)?, cap)?;
    open_checked(path, cap)
}

/// Opens `path` without waiting (a FIFO swapped in since the `stat` has no writer to wait
/// for) and checks what was opened, on its descriptor.
fn open_checked(path: &Path, cap: Cap) -> Result<(File, u64), Skipped> {
    open_with(path, cap, nix::fcntl::OFlag::empty())
}

fn open_with(path: &Path, cap: Cap, more: nix::fcntl::OFlag) -> Result<(File, u64), Skipped> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags((nix::fcntl::OFlag::O_NONBLOCK | nix::fcntl::OFlag::O_NOCTTY | more).bits())
        .open(path)
        .map_err(io_skip)?;
    let size = fits(&file.metadata().map_err(io_skip)?, cap)?;
    Ok((file, size))
}

/// The whole of a small file another program wrote.
pub fn read(path: &Path, cap: Cap) -> Result<Vec<u8>, Skipped> {
    read_all(open(path, cap)?, cap)
}

/// [`read`], where a link at `path` is not followed but refused (a link swapped in since
/// the `lstat` fails the open: `O_NOFOLLOW`).
pub fn read_no_follow(path: &Path, cap: Cap) -> Result<Vec<u8>, Skipped> {
    fits(&fs::symlink_metadata(path).map_err(io_skip)?, cap)?;
    read_all(open_with(path, cap, nix::fcntl::OFlag::O_NOFOLLOW)?, cap)
}

fn read_all((file, size): (File, u64), cap: Cap) -> Result<Vec<u8>, Skipped> {
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0).saturating_add(1));
    // One byte more than the cap tells a file that grew past it since the check.
    file.take(cap.file.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(Skipped::Unreadable)?;
    if bytes.len() as u64 > cap.file {
        return Err(Skipped::TooLarge {
            size: bytes.len() as u64,
            cap,
        });
    }
    Ok(bytes)
}

/// [`read`], with one notice for a file that is not one of its kind; `None` for anything
/// not read.
pub fn whole(path: &Path, cap: Cap) -> Option<Vec<u8>> {
    read(path, cap).map_err(|why| tell(path, &why)).ok()
}

/// [`whole`] as text; `None` when it is not UTF-8.
pub fn text(path: &Path, cap: Cap) -> Option<String> {
    String::from_utf8(whole(path, cap)?).ok()
}

/// [`whole`], parsed as JSON; `None` when it is not JSON.
pub fn json(path: &Path, cap: Cap) -> Option<serde_json::Value> {
    serde_json::from_slice(&whole(path, cap)?).ok()
}

/// The paths already noticed, so a process that reads a file again (the dashboard) says so once.
static TOLD: Mutex<Option<HashSet<PathBuf>>> = Mutex::new(None);

/// One notice for `path`, when `why` is worth one and it was not given before.
fn tell(path: &Path, why: &Skipped) {
    if why.is_notable() {
        tell_once(path, &format!("skipped {}: {why}", path.display()));
    }
}

fn tell_once(path: &Path, message: &str) {
    let first = TOLD.lock().map_or(true, |mut told| {
        told.get_or_insert_with(HashSet::new)
            .insert(path.to_path_buf())
    });
    if first {
        crate::term::notice(message);
    }
}

/// A file (or stream) read line by line, each line at most [`Cap::line`] long; longer lines
/// are read past without being kept. Dropping it gives one notice for a file in which lines
/// were skipped.
pub struct Lines<R> {
    reader: BufReader<R>,
    line: Vec<u8>,
    cap: Cap,
    /// The file, for the notice; `None` for a stream.
    path: Option<PathBuf>,
    skipped: u64,
    held: usize,
    done: bool,
}

/// The lines of a record file another program wrote; `None` when it is missing or is not
/// one (with a notice for a FIFO, a device or a file over [`Cap::file`]).
pub fn lines(path: &Path, cap: Cap) -> Option<Lines<io::Take<File>>> {
    match open(path, cap) {
        Ok((file, _)) => {
            // A file still being written is read no further than the cap.
            let mut lines = lines_of(file.take(cap.file), cap);
            lines.path = Some(path.to_path_buf());
            Some(lines)
        }
        Err(why) => {
            tell(path, &why);
            None
        }
    }
}

/// The lines of a stream (a child's stdout), each at most [`Cap::line`] long.
pub fn lines_of<R: Read>(reader: R, cap: Cap) -> Lines<R> {
    Lines {
        reader: BufReader::with_capacity(CHUNK, reader),
        line: Vec::new(),
        cap,
        path: None,
        skipped: 0,
        held: 0,
        done: false,
    }
}

impl<R: Read> Lines<R> {
    /// The next line that fits, without its `\n`; `None` at the end (or at a read error).
    /// A line over the cap is read past, keeping none of it once it is over.
    pub fn next_line(&mut self) -> Option<&[u8]> {
        self.line.clear();
        let mut too_long = false;
        loop {
            if self.done {
                return None;
            }
            let available = match self.reader.fill_buf() {
                Ok(available) => available,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => {
                    // What was read of a line a read error cut is no line.
                    self.done = true;
                    return None;
                }
            };
            if available.is_empty() {
                self.done = true;
                // A last line without its newline.
                if too_long {
                    self.skipped += 1;
                    return None;
                }
                return (!self.line.is_empty()).then_some(&self.line[..]);
            }
            let (part, used, ended) = match memchr::memchr(b'\n', available) {
                Some(at) => (&available[..at], at + 1, true),
                None => (available, available.len(), false),
            };
            if !too_long {
                if self.line.len() + part.len() > self.cap.line {
                    too_long = true;
                    // Let go of what was gathered of it.
                    self.line = Vec::new();
                } else {
                    keep(&mut self.line, part, self.cap.line);
                }
            }
            self.reader.consume(used);
            self.held = self.held.max(self.line.capacity() + self.reader.capacity());
            if ended {
                if !too_long {
                    return Some(&self.line[..]);
                }
                self.skipped += 1;
                too_long = false;
            }
        }
    }

    /// Each line that fits and is UTF-8, without its line end (`\n` or `\r\n`).
    pub fn texts(mut self) -> impl Iterator<Item = String> {
        std::iter::from_fn(move || {
            loop {
                let line = self.next_line()?;
                if let Ok(text) = std::str::from_utf8(line) {
                    return Some(text.trim_end_matches('\r').to_string());
                }
            }
        })
    }

    /// How many lines were longer than the cap.
    pub fn skipped(&self) -> u64 {
        self.skipped
    }

    /// The most bytes this reader held at once (its buffer and the line).
    pub fn held(&self) -> usize {
        self.held
    }
}

/// Appends `part` to `line`, growing it (by doubling) no further than `cap`.
fn keep(line: &mut Vec<u8>, part: &[u8], cap: usize) {
    let needed = line.len() + part.len();
    if needed > line.capacity() {
        let grown = needed.max(line.capacity() * 2).min(cap);
        line.reserve_exact(grown - line.len());
    }
    line.extend_from_slice(part);
}

impl<R> Drop for Lines<R> {
    fn drop(&mut self) {
        if self.skipped > 0
            && let Some(path) = &self.path
        {
            let lines = if self.skipped == 1 { "line" } else { "lines" };
            tell_once(
                path,
                &format!(
                    "skipped {} {lines} longer than {} in {} ({} holds lines up to that)",
                    self.skipped,
                    size_text(self.cap.line as u64),
                    path.display(),
                    self.cap.what
                ),
            );
        }
    }
}

/// All of `reader` when it ends within `within` and holds at most `cap.file` bytes; `None`
/// otherwise (a writer that never closes, a device that never ends). The reading thread
/// is left behind when it does not end in time; it holds at most the cap.
pub fn read_within<R: Read + Send + 'static>(
    reader: R,
    cap: Cap,
    within: Duration,
) -> Option<Vec<u8>> {
    let (tx, rx) = mpsc::sync_channel(1);
    std::thread::Builder::new()
        .name("bounded read".into())
        .spawn(move || {
            let mut bytes = Vec::new();
            let read = reader
                .take(cap.file.saturating_add(1))
                .read_to_end(&mut bytes);
            let _ = tx.send(read.ok().map(|_| bytes));
        })
        .ok()?;
    let bytes = rx.recv_timeout(within).ok()??;
    (bytes.len() as u64 <= cap.file).then_some(bytes)
}

/// This process's stdin, bounded as [`read_within`]; a terminal, a device or a regular file
/// over the cap is not read at all.
pub fn stdin(cap: Cap, within: Duration) -> Option<Vec<u8>> {
    let stdin = io::stdin();
    let stat = nix::sys::stat::fstat(stdin.as_fd()).ok()?;
    let kind =
        nix::sys::stat::SFlag::from_bits_truncate(stat.st_mode) & nix::sys::stat::SFlag::S_IFMT;
    let regular = kind == nix::sys::stat::SFlag::S_IFREG;
    let stream = kind == nix::sys::stat::SFlag::S_IFIFO || kind == nix::sys::stat::SFlag::S_IFSOCK;
    if !(regular || stream)
        || (regular && u64::try_from(stat.st_size).unwrap_or(u64::MAX) > cap.file)
    {
        return None;
    }
    read_within(stdin, cap, within)
}

#[cfg(test)]
mod tests {
    use std::io::{Seek as _, SeekFrom, Write as _};

    use super::*;

    /// How long a read may go on before the test fails: what blocks, blocks for ever, while
    /// a gigabyte streams in seconds even on a loaded machine — a kill deadline, not a
    /// speed asked of the reader.
    const DEADLINE: Duration = crate::child::test_events::PATIENCE;

    /// `f`'s answer, or a failure naming `what` when it does not come within [`DEADLINE`]
    /// (the thread is left behind: it is blocked, which is what the test is about).
    fn within<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(f());
        });
        rx.recv_timeout(DEADLINE)
            .unwrap_or_else(|_| panic!("{what} did not return within {DEADLINE:?}"))
    }

    /// The files no CLI writes but a user's machine may hold where one belongs.
    struct Hostile {
        _dir: tempfile::TempDir,
        files: Vec<(&'static str, PathBuf)>,
    }

    /// A FIFO, a link to `/dev/zero`, a dangling link, a 1 GB sparse file, a 64 MiB line
    /// (sparse) before a good one, and a sparse file larger than a record file may be.
    fn hostile() -> Hostile {
        let dir = tempfile::tempdir().unwrap();
        let at = |name: &str| dir.path().join(name);
        nix::unistd::mkfifo(&at("fifo"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        std::os::unix::fs::symlink("/dev/zero", at("zero")).unwrap();
        std::os::unix::fs::symlink(at("nothing"), at("dangling")).unwrap();
        File::create(at("sparse"))
            .unwrap()
            .set_len(1_000_000_000)
            .unwrap();
        let mut long = File::create(at("long-line")).unwrap();
        long.seek(SeekFrom::Start(64 * MIB)).unwrap();
        long.write_all(b"\n{\"ok\":1}\n").unwrap();
        File::create(at("runaway"))
            .unwrap()
            .set_len(RECORDS.file + 1)
            .unwrap();
        let files = ["fifo", "zero", "dangling", "sparse", "long-line", "runaway"]
            .into_iter()
            .map(|name| (name, at(name)))
            .collect();
        Hostile { _dir: dir, files }
    }

    const WHOLE_CAPS: [Cap; 4] = [LOGIN, SETTINGS, CHAT, FEED];

    #[test]
    fn no_whole_file_read_blocks_or_holds_more_than_its_cap() {
        let hostile = hostile();
        for cap in WHOLE_CAPS {
            for (name, path) in &hostile.files {
                let path = path.clone();
                let read = within(&format!("{} {name}", cap.what), move || read(&path, cap));
                assert!(
                    read.is_err(),
                    "{} {name}: read as {} bytes",
                    cap.what,
                    read.map_or(0, |b| b.len())
                );
            }
        }
    }

    #[test]
    fn a_fifo_opened_after_the_check_does_not_block_and_is_refused() {
        // The path became a FIFO between `stat` and `open`: `O_NONBLOCK` opens it at once,
        // `fstat` on the descriptor refuses it.
        let hostile = hostile();
        let fifo = hostile.files[0].1.clone();
        let opened = within("opening a FIFO", move || open_checked(&fifo, LOGIN));
        assert!(
            matches!(opened, Err(Skipped::NotRegular("a FIFO"))),
            "{opened:?}"
        );
    }

    #[test]
    fn why_a_file_was_skipped_names_it_never_its_content() {
        let hostile = hostile();
        let why = |name: &str| {
            let path = &hostile.files.iter().find(|(n, _)| *n == name).unwrap().1;
            read(path, LOGIN).unwrap_err()
        };
        assert!(matches!(why("dangling"), Skipped::Missing));
        assert_eq!(
            why("zero").to_string(),
            "a character device, not a regular file (agent reads only regular files another program wrote)"
        );
        assert_eq!(
            why("sparse").to_string(),
            "953.7 MiB, more than the 1 MiB a login file may be"
        );
        assert!(
            why("fifo")
                .to_string()
                .starts_with("a FIFO, not a regular file")
        );
    }

    #[test]
    fn record_files_are_streamed_within_the_line_cap() {
        let hostile = hostile();
        for (name, path) in &hostile.files {
            let path = path.clone();
            let (kept, held, skipped) = within(name, move || {
                let Some(mut lines) = lines(&path, RECORDS) else {
                    return (Vec::new(), 0, 0);
                };
                let mut kept = Vec::new();
                while let Some(line) = lines.next_line() {
                    kept.push(String::from_utf8_lossy(line).into_owned());
                }
                (kept, lines.held(), lines.skipped())
            });
            assert!(
                held <= RECORDS.line + CHUNK,
                "{name}: held {held} bytes, over the line cap"
            );
            match *name {
                // The line after the long one is still read.
                "long-line" => assert_eq!((kept, skipped), (vec!["{\"ok\":1}".into()], 1)),
                // A 1 GB file of one line: read past, nothing kept.
                "sparse" => assert_eq!((kept.len(), skipped), (0, 1)),
                _ => assert!(kept.is_empty(), "{name}: {} lines", kept.len()),
            }
        }
    }

    #[test]
    fn a_stream_is_read_line_by_line_within_the_cap() {
        let cap = Cap {
            what: "a stream",
            file: u64::MAX,
            line: 10,
        };
        let mut stream = b"short\r\n".to_vec();
        stream.extend(std::iter::repeat_n(b'y', 3 * CHUNK));
        stream.extend(b"\n\n0123456789\n01234567890\nlast");
        let mut lines = lines_of(&stream[..], cap);
        let mut seen = Vec::new();
        while let Some(line) = lines.next_line() {
            seen.push(String::from_utf8_lossy(line).into_owned());
        }
        assert_eq!(seen, ["short\r", "", "0123456789", "last"]);
        assert_eq!(lines.skipped(), 2);
        assert!(lines.held() <= 10 + CHUNK, "{}", lines.held());
        let texts: Vec<String> = lines_of(&b"a\r\n\xff\nb"[..], cap).texts().collect();
        assert_eq!(texts, ["a", "b"]);
    }

    #[test]
    fn small_regular_files_and_links_to_them_read_as_before() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.json");
        fs::write(&path, r#"{"a":1}"#).unwrap();
        assert_eq!(json(&path, LOGIN).unwrap()["a"], 1);
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        assert_eq!(json(&link, SETTINGS).unwrap()["a"], 1);
        fs::write(&path, "{").unwrap();
        assert!(json(&path, LOGIN).is_none());
        let huge = format!(r#"{{"a":"{}"}}"#, "x".repeat(2 << 20));
        fs::write(&path, &huge).unwrap();
        assert!(json(&path, LOGIN).is_none());
        assert!(json(&path, CHAT).is_some());
        assert_eq!(text(&dir.path().join("missing"), SETTINGS), None);
    }

    #[test]
    fn a_read_that_follows_no_link_refuses_every_link_and_every_hostile_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.txt");
        fs::write(&path, "plain\n").unwrap();
        assert_eq!(read_no_follow(&path, SETTINGS).unwrap(), b"plain\n");
        let link = dir.path().join("link.txt");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        assert!(matches!(
            read_no_follow(&link, SETTINGS),
            Err(Skipped::NotRegular("a symbolic link"))
        ));
        let hostile = hostile();
        for (name, path) in &hostile.files {
            let path = path.clone();
            let read = within(name, move || read_no_follow(&path, SETTINGS).is_ok());
            assert!(!read, "{name} was read");
        }
    }

    #[test]
    fn a_stream_that_never_ends_or_exceeds_its_cap_is_no_input() {
        // A FIFO opened for reading and writing by the test itself: it never ends.
        let hostile = hostile();
        let fifo = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&hostile.files[0].1)
            .unwrap();
        let never = within("a stream that never ends", move || {
            read_within(fifo, FEED, Duration::from_millis(200))
        });
        assert_eq!(never, None);
        let zero = File::open("/dev/zero").unwrap();
        let endless = within("/dev/zero", move || read_within(zero, FEED, DEADLINE));
        assert_eq!(endless, None);
        assert_eq!(
            read_within(&b"{}"[..], FEED, DEADLINE).as_deref(),
            Some(&b"{}"[..])
        );
    }
}
