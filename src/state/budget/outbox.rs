//! What the relay's finished calls owe the shared store — their ledger lines for the
//! stream, their tokens for the
//! day's count — kept while the store does not answer and sent again until it takes them.
//! A blip at the end of a call (the server paused, restarting, failing over) loses nothing:
//! the client has its answer, this machine's `usage.jsonl` has the line, and the store gets
//! both once it answers.
//!
//! Each batch goes as one parcel, in one script: a command that timed out may still run
//! once the server wakes, so a parcel carries an id the server keeps for a while, and a
//! parcel sent again after it was taken is not counted twice. Bounded: while the store is
//! away, what comes after the parcel being tried gathers into one more (tokens summed per
//! day and client), keeping the newest [`MAX_LINES`] lines (the local file keeps them all).

use std::collections::VecDeque;
use std::path::Path;

use crate::state::budget::day::today;
use crate::state::budget::epoch;
use crate::state::budget::keys::{KEEP_SECONDS, client_key, day_key};
use crate::state::budget::on_store::Owed;
use crate::state::store::stream::Stream;
use crate::state::store::{Down, Shared};

/// Ledger lines kept for the stream while the store is away (a few megabytes).
pub const MAX_LINES: usize = 10_000;
/// How long the server remembers a parcel it took: far longer than a retry comes after the
/// server answers again.
const TAKEN_SECONDS: u64 = 300;

/// The parcel's id is remembered (`SET NX EX`) before anything is added; the stream's lines
/// are added even when the counts are not (a stream of the wrong type refuses them and the
/// counts still go); the counts only in the epoch they were counted for.
const DELIVER: &str = r"
if not redis.call('SET', KEYS[1], '1', 'NX', 'EX', ARGV[1]) then
  return {2, 0}
end
local n = tonumber(ARGV[5])
local refused = 0
for i = 1, n do
  local added = redis.pcall('XADD', KEYS[2], 'MAXLEN', '~', ARGV[2], '*', 'j', ARGV[5 + i])
  if type(added) == 'table' and added.err then
    refused = 1
    break
  end
end
local at = 6 + n
local owed = tonumber(ARGV[at])
if owed == 0 then
  return {1, refused}
end
if redis.call('MGET', KEYS[3])[1] ~= ARGV[3] then
  return {0, refused}
end
local k = 4
for i = 1, owed do
  local keys, tokens = tonumber(ARGV[at + 1]), ARGV[at + 2]
  at = at + 2
  for j = 1, keys do
    redis.call('HINCRBY', KEYS[k], 'tokens', tokens)
    redis.call('EXPIRE', KEYS[k], ARGV[4])
    k = k + 1
  end
end
return {1, refused}";

#[derive(Debug)]
struct Parcel {
    id: u64,
    lines: VecDeque<String>,
    /// The epoch its counts were counted for (every count of one batch is).
    epoch: u64,
    owed: Vec<Owed>,
    /// Sent at least once: the server may have taken it, so nothing more goes in it.
    tried: bool,
}

impl Parcel {
    fn new(epoch: u64) -> Parcel {
        Parcel {
            id: fastrand::u64(..),
            lines: VecDeque::new(),
            epoch,
            owed: Vec::new(),
            tried: false,
        }
    }
}

#[derive(Debug, Default)]
pub struct Outbox {
    parcels: VecDeque<Parcel>,
    /// Lines dropped from a full parcel since the store last took what waited.
    dropped: usize,
    /// Whether the wait was told (once per outage).
    told: bool,
}

impl Outbox {
    pub fn is_empty(&self) -> bool {
        self.parcels.is_empty()
    }

    /// A batch's lines for the shared ledger stream and what its calls owe, counted for
    /// `epoch`: a parcel of its own, or added to the one gathering behind a parcel tried.
    pub fn add(&mut self, epoch: u64, lines: Vec<String>, owed: Vec<Owed>) {
        let open = self
            .parcels
            .back()
            .is_some_and(|last| !last.tried && last.epoch == epoch);
        if !open {
            self.parcels.push_back(Parcel::new(epoch));
        }
        let Some(parcel) = self.parcels.back_mut() else {
            return;
        };
        parcel.lines.extend(lines);
        while parcel.lines.len() > MAX_LINES {
            parcel.lines.pop_front();
            self.dropped += 1;
        }
        for owed in owed {
            if owed.tokens == 0 {
                continue;
            }
            match parcel
                .owed
                .iter_mut()
                .find(|o| o.day == owed.day && o.client == owed.client)
            {
                Some(o) => o.tokens = o.tokens.saturating_add(owed.tokens),
                None => parcel.owed.push(owed),
            }
        }
    }

    /// Sends what waits, oldest first, until the store is found away: that parcel and the
    /// ones behind it wait for the next try. A parcel whose counts the store's epoch no
    /// longer takes (it forgot since) has them brought back by rejoining: this machine's
    /// ledger holds the lines already.
    pub fn deliver(&mut self, shared: &Shared, state_dir: &Path) {
        while let Some(parcel) = self.parcels.front_mut() {
            // A rejoin since these were counted read their lines from the ledger.
            if parcel.epoch != epoch::known(shared, state_dir) {
                parcel.owed.clear();
            }
            if parcel.lines.is_empty() && parcel.owed.is_empty() {
                self.parcels.pop_front();
                continue;
            }
            parcel.tried = true;
            match send(shared, parcel) {
                Ok((taken, refused)) => {
                    if refused {
                        crate::term::warn(&format!(
                            "relay: the shared store refused ledger lines for its stream {}; this machine's usage.jsonl has them",
                            shared.key("ledger")
                        ));
                    }
                    if !taken && let Err(down) = epoch::rejoin(shared, state_dir, &today()) {
                        crate::term::debug(&format!("relay: rejoining the shared store: {down}"));
                    }
                    self.parcels.pop_front();
                }
                Err(down) if shared.away() => {
                    if !self.told {
                        self.told = true;
                        let lines: usize = self.parcels.iter().map(|p| p.lines.len()).sum();
                        crate::term::warn(&format!(
                            "relay: {down} at {}: {lines} ledger lines and their tokens wait for it, and are sent when it answers",
                            shared.place
                        ));
                    }
                    return;
                }
                Err(down) => {
                    crate::term::warn(&format!(
                        "relay: the shared store refused a batch of ledger lines and tokens ({}); this machine's usage.jsonl has the lines",
                        down.0
                    ));
                    self.parcels.pop_front();
                }
            }
        }
        if self.told {
            crate::term::notice(&format!(
                "relay: what waited for the shared store at {} was delivered",
                shared.place
            ));
        }
        if self.dropped > 0 {
            crate::term::warn(&format!(
                "relay: {} ledger lines did not fit while the shared store was away and are missing from its stream; this machine's usage.jsonl has them",
                self.dropped
            ));
        }
        self.told = false;
        self.dropped = 0;
    }

    /// Says what is left undelivered when the relay stops.
    pub fn abandon(&self) {
        if !self.is_empty() {
            let lines: usize = self.parcels.iter().map(|p| p.lines.len()).sum();
            crate::term::warn(&format!(
                "relay: stopping with {lines} ledger lines and their tokens the shared store did not take; this machine's usage.jsonl has the lines"
            ));
        }
    }
}

/// One parcel, one round trip: `(taken, refused)` — whether its counts were taken (else
/// the store's epoch had moved on), and whether the stream refused its lines.
fn send(shared: &Shared, parcel: &mut Parcel) -> Result<(bool, bool), Down> {
    let script = redis::Script::new(DELIVER);
    let mut invocation = script.key(shared.key(&format!("outbox:{:016x}", parcel.id)));
    invocation
        .key(shared.key(Stream::Ledger.name()))
        .key(epoch::epoch_key(shared));
    invocation
        .arg(TAKEN_SECONDS)
        .arg(Stream::Ledger.kept())
        .arg(parcel.epoch)
        .arg(KEEP_SECONDS)
        .arg(parcel.lines.len());
    for line in parcel.lines.make_contiguous().iter() {
        invocation.arg(line.as_bytes());
    }
    invocation.arg(parcel.owed.len());
    for owed in &parcel.owed {
        invocation.key(day_key(shared, &owed.day));
        let mut keys = 1;
        if let Some(name) = &owed.client {
            invocation.key(client_key(shared, &owed.day, name));
            keys += 1;
        }
        invocation.arg(keys).arg(owed.tokens);
    }
    let (status, refused): (i64, i64) = shared.run(|c| invocation.invoke(c))?;
    Ok((status != 0, refused == 1))
}
