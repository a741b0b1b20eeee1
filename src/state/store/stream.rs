//! The ledger and the events as shared streams: every replica appends its lines (each
//! also keeps its local JSONL), and `--usage`, `--budget` and the watchdog read the
//! team's whole record back. A stream keeps its newest entries only ([`Stream::kept`]); the
//! local files keep everything.

use crate::state::store::{Down, Shared};

/// Entries read per round trip when a whole stream is read.
const PAGE: usize = 10_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Ledger,
    Events,
}

impl Stream {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Stream::Ledger => "ledger",
            Stream::Events => "events",
        }
    }

    /// About how many entries the server keeps (`XADD MAXLEN ~`): a million calls is a
    /// few hundred megabytes of Redis memory.
    pub(crate) fn kept(self) -> usize {
        match self {
            Stream::Ledger => 1_000_000,
            Stream::Events => 100_000,
        }
    }
}

/// Appends `lines` (one JSON document each) in one round trip.
pub fn append(shared: &Shared, stream: Stream, lines: &[String]) -> Result<(), Down> {
    if lines.is_empty() {
        return Ok(());
    }
    let key = shared.key(stream.name());
    shared.run(|c| {
        let mut pipe = redis::pipe();
        for line in lines {
            pipe.cmd("XADD")
                .arg(&key)
                .arg("MAXLEN")
                .arg("~")
                .arg(stream.kept())
                .arg("*")
                .arg("j")
                .arg(line.as_bytes())
                .ignore();
        }
        pipe.query::<()>(c)
    })
}

type Entry = (String, Vec<Vec<u8>>);

/// Every entry, oldest first, as the bytes of its JSON document.
pub fn read_all(shared: &Shared, stream: Stream) -> Result<Vec<Vec<u8>>, Down> {
    read_from(shared, stream, None)
}

/// The entries appended at or after `from_ms` (unix milliseconds; `None`: all), oldest
/// first. A stream entry's id is the server's clock when it was added, so a window is read
/// without the entries before it.
pub fn read_from(
    shared: &Shared,
    stream: Stream,
    from_ms: Option<u64>,
) -> Result<Vec<Vec<u8>>, Down> {
    let key = shared.key(stream.name());
    let mut documents = Vec::new();
    let mut start = from_ms.map_or_else(|| "-".to_string(), |ms| format!("{ms}-0"));
    loop {
        let page: Vec<Entry> = shared.run(|c| {
            redis::cmd("XRANGE")
                .arg(&key)
                .arg(&start)
                .arg("+")
                .arg("COUNT")
                .arg(PAGE)
                .query(c)
        })?;
        let full = page.len() == PAGE;
        if let Some((last, _)) = page.last() {
            start = format!("({last}");
        }
        documents.extend(page.into_iter().filter_map(document));
        if !full {
            return Ok(documents);
        }
    }
}

/// The newest `count` entries, oldest first.
pub fn recent(shared: &Shared, stream: Stream, count: usize) -> Result<Vec<Vec<u8>>, Down> {
    let key = shared.key(stream.name());
    let page: Vec<Entry> = shared.run(|c| {
        redis::cmd("XREVRANGE")
            .arg(&key)
            .arg("+")
            .arg("-")
            .arg("COUNT")
            .arg(count)
            .query(c)
    })?;
    let mut documents: Vec<Vec<u8>> = page.into_iter().filter_map(document).collect();
    documents.reverse();
    Ok(documents)
}

/// The `j` field of an entry (`[field, value, …]`).
fn document((_, fields): Entry) -> Option<Vec<u8>> {
    let mut fields = fields.into_iter();
    while let (Some(field), Some(value)) = (fields.next(), fields.next()) {
        if field == b"j" {
            return Some(value);
        }
    }
    None
}
