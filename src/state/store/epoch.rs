//! How a replica knows the shared store forgot (a restart without persistence, `FLUSHALL`,
//! a failover to an empty replica), and how the day's count is rebuilt before anyone is
//! served as if nothing had been spent.
//!
//! The store holds an epoch, `PREFIX:epoch`, made by the first process that finds it
//! missing. Every reservation names the epoch its process counts in, and the reservation
//! script refuses one that names another ([`Stale`]): the process then rejoins. Rejoining
//! an epoch that began on a store that had forgotten adds this machine's own count for the
//! day, read from its local `usage.jsonl` (every machine keeps one), once per machine per
//! epoch, with this process's calls in flight (reserved in what the store forgot, their lines
//! not written yet), and puts back the caps set with `agent --budget set` from this machine's
//! copy of the last caps it read. Until every relay replica of the previous epoch has rejoined (each
//! one's bookkeeping thread looks at the epoch every second, and names the replicas it knows)
//! and at least [`REBUILD_AT_LEAST`] has passed, or [`REBUILD_WAIT`] has passed for one that
//! is gone, reservations wait: no replica spends another's share before its count is back.
//! A store that was never counted in (no process remembers an epoch) starts with no wait.
//!
//! What this machine remembers of the store lives in `store.json` (0600, written under its
//! lock): its id, the epoch it joined, the relay replicas of that epoch, the last caps.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use std::sync::{Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::state::budget::{Day, Limits};
use crate::state::json_file::JsonFile;
use crate::state::ledger::Ledger;
use crate::state::store::{Down, Shared};

/// How long reservations wait for the relay replicas of the previous epoch to bring their
/// counts back: longer than their bookkeeping threads take to look (a second), short enough
/// that a replica that is gone for good costs one pause.
pub const REBUILD_WAIT: Duration = Duration::from_secs(3);
/// How often a relay's bookkeeping thread looks at the epoch.
pub const WATCH_EVERY: Duration = Duration::from_secs(1);
/// A rebuild lasts at least this long, so every live replica's bookkeeping thread has looked
/// at the epoch (and named the replicas it knows) before anyone is served: one that joined
/// the team a moment before the store forgot may be known to none of the others yet.
pub const REBUILD_AT_LEAST: Duration = Duration::from_millis(1500);

pub(crate) fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// The reservation named an epoch that is not the store's: rejoin, then ask again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stale;

/// What this machine remembers of the shared store (`store.json`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Remembered {
    /// This machine's id among the store's members: made once.
    #[serde(default)]
    pub machine: String,
    /// The epoch this machine's count is in (0: none yet).
    #[serde(default)]
    pub epoch: u64,
    /// The relay replicas of that epoch: whom a rebuild waits for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replicas: Vec<String>,
    /// The last caps read from the store (set by `agent --budget set`), to put back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<Limits>,
}

/// This process's side of the epoch: read by every reservation and by the bookkeeping
/// thread while it writes a batch, taken whole by a rejoin.
pub struct Memory {
    /// Whether this process is a relay replica (a rebuild waits for those).
    relay: bool,
    known: RwLock<Option<Remembered>>,
    watched: Mutex<Option<Instant>>,
    in_flight: Mutex<InFlight>,
}

impl Memory {
    pub fn new(relay: bool) -> Memory {
        Memory {
            relay,
            known: RwLock::new(None),
            watched: Mutex::new(None),
            in_flight: Mutex::new(InFlight::default()),
        }
    }

    fn in_flight(&self) -> std::sync::MutexGuard<'_, InFlight> {
        self.in_flight
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Calls this process reserved and has not written to its ledger yet, by epoch, day and
/// client: a rejoin brings them back with the ledger's, since their reservations went
/// with what the store forgot and their lines are not there yet.
/// An epoch, a day, a named client.
type Flight = (u64, String, Option<String>);

#[derive(Default)]
struct InFlight {
    counts: HashMap<Flight, u64>,
    /// Epochs and days whose calls in flight a rejoin brought back: when they finish, they
    /// owe the store their tokens only.
    carried: HashSet<(u64, String)>,
}

/// A call reserved in `epoch` has its line written now: no longer in flight. Whether a
/// rejoin brought it back (then it owes the store no call of its own).
pub fn landed(shared: &Shared, epoch: u64, day: &str, client: Option<&str>) -> bool {
    let mut in_flight = shared.memory.in_flight();
    let key = (epoch, day.to_string(), client.map(str::to_string));
    if let Some(n) = in_flight.counts.get_mut(&key) {
        *n = n.saturating_sub(1);
        if *n == 0 {
            in_flight.counts.remove(&key);
        }
    }
    in_flight.carried.contains(&(epoch, day.to_string()))
}

fn file(state_dir: &Path) -> JsonFile<Remembered> {
    JsonFile::new(state_dir, "store.json").synced()
}

/// Held while a reservation is asked for and while a batch of finished calls is written: no
/// rejoin counts the calls in flight or reads the ledger meanwhile, so each call is counted
/// once (by the rejoin that found it, or by what its batch owes).
pub struct Counting<'a> {
    guard: RwLockReadGuard<'a, Option<Remembered>>,
}

impl Counting<'_> {
    /// The epoch this process counts in now (0: none yet).
    pub fn epoch(&self) -> u64 {
        self.guard.as_ref().map_or(0, |known| known.epoch)
    }

    /// The server reserved a call in [`Counting::epoch`]: in flight until its line is
    /// written ([`landed`]).
    pub fn reserved(&self, shared: &Shared, day: &str, client: Option<&str>) {
        *shared
            .memory
            .in_flight()
            .counts
            .entry((self.epoch(), day.to_string(), client.map(str::to_string)))
            .or_default() += 1;
    }
}

fn read<'a>(shared: &'a Shared, state_dir: &Path) -> RwLockReadGuard<'a, Option<Remembered>> {
    {
        let guard = shared
            .memory
            .known
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if guard.is_some() {
            return guard;
        }
    }
    drop(write(shared, state_dir));
    shared
        .memory
        .known
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The whole memory, loaded from `store.json` the first time (with this machine's id made
/// and saved if it had none).
fn write<'a>(shared: &'a Shared, state_dir: &Path) -> RwLockWriteGuard<'a, Option<Remembered>> {
    let mut guard = shared
        .memory
        .known
        .write()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if guard.is_none() {
        let file = file(state_dir);
        let mut remembered = file.load();
        if remembered.machine.is_empty() {
            remembered = file
                .update(|saved| {
                    if saved.machine.is_empty() {
                        saved.machine = format!("{:016x}", fastrand::u64(..));
                    }
                    saved.clone()
                })
                .unwrap_or_else(|err| {
                    crate::term::warn(&format!(
                        "could not save this machine's id for the shared store: {err:#}"
                    ));
                    Remembered {
                        machine: format!("{:016x}", fastrand::u64(..)),
                        ..remembered
                    }
                });
        }
        *guard = Some(remembered);
    }
    guard
}

/// The epoch this process counts in (0: none yet).
pub fn known(shared: &Shared, state_dir: &Path) -> u64 {
    read(shared, state_dir)
        .as_ref()
        .map_or(0, |known| known.epoch)
}

/// See [`Counting`].
pub fn counting<'a>(shared: &'a Shared, state_dir: &Path) -> Counting<'a> {
    Counting {
        guard: read(shared, state_dir),
    }
}

/// Keeps `limits` (the caps the store holds, set by `agent --budget set`) as this machine's
/// copy, when they are not what it holds already.
pub fn saw_limits(shared: &Shared, state_dir: &Path, limits: Limits) {
    if read(shared, state_dir)
        .as_ref()
        .is_some_and(|known| known.limits == Some(limits))
    {
        return;
    }
    let mut guard = write(shared, state_dir);
    if let Some(known) = guard.as_mut() {
        known.limits = Some(limits);
        save(state_dir, known);
    }
}

fn save(state_dir: &Path, known: &Remembered) {
    let saved = file(state_dir).update(|saved| *saved = known.clone());
    if let Err(err) = saved {
        crate::term::warn(&format!(
            "could not save what this machine knows of the shared store: {err:#}"
        ));
    }
}

/// Marks the start of a new epoch, counts this machine in, puts back the caps: all one
/// step on the server. Made only when the store has no epoch; a new epoch whose day has no
/// count left means the store forgot, and only then do joiners bring counts back and
/// reservations wait for the replicas.
const JOIN: &str = r"
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local e = redis.call('GET', KEYS[1])
if not e then
  e = ARGV[1]
  redis.call('SET', KEYS[1], e)
  redis.call('DEL', KEYS[3], KEYS[4], KEYS[5])
  if redis.call('EXISTS', KEYS[7]) == 0 then
    redis.call('SET', KEYS[6], '1')
    if ARGV[10] == '1' then
      redis.call('SET', KEYS[2], string.format('%.0f', now), 'PX', ARGV[3])
    end
  else
    redis.call('SET', KEYS[6], '0')
  end
end
local forgot = redis.call('GET', KEYS[6]) == '1'
local n = tonumber(ARGV[12])
if ARGV[4] == '1' then
  redis.call('SADD', KEYS[5], ARGV[2])
end
local added = '0'
if redis.call('SADD', KEYS[3], ARGV[2]) == 1 and forgot then
  added = '1'
  redis.call('HINCRBY', KEYS[7], 'calls', ARGV[5])
  redis.call('HINCRBY', KEYS[7], 'tokens', ARGV[6])
  redis.call('EXPIRE', KEYS[7], ARGV[7])
  for i = 9, #KEYS do
    redis.call('HINCRBY', KEYS[i], 'calls', ARGV[12 + n + 2 * (i - 9) + 1])
    redis.call('HINCRBY', KEYS[i], 'tokens', ARGV[12 + n + 2 * (i - 9) + 2])
    redis.call('EXPIRE', KEYS[i], ARGV[7])
  end
  if ARGV[8] ~= '' and redis.call('EXISTS', KEYS[8]) == 0 then
    redis.call('HSET', KEYS[8], 'calls', ARGV[8], 'tokens', ARGV[9])
  end
end
local since = redis.call('GET', KEYS[2])
if forgot and since then
  for i = 1, n do
    redis.call('SADD', KEYS[4], ARGV[12 + i])
  end
  if #redis.call('SDIFF', KEYS[4], KEYS[3]) == 0 and now - tonumber(since) >= tonumber(ARGV[11]) then
    redis.call('DEL', KEYS[2])
  end
end
local answer = redis.call('SMEMBERS', KEYS[5])
table.insert(answer, 1, added)
table.insert(answer, 1, forgot and '1' or '0')
table.insert(answer, 1, e)
return answer";

/// The keys of the epoch's records.
pub fn epoch_key(shared: &Shared) -> String {
    shared.key("epoch")
}

pub fn rebuilding_key(shared: &Shared) -> String {
    shared.key("epoch:rebuilding")
}

pub fn replicas_key(shared: &Shared) -> String {
    shared.key("epoch:replicas")
}

pub fn joined_key(shared: &Shared) -> String {
    shared.key("epoch:joined")
}

pub fn expected_key(shared: &Shared) -> String {
    shared.key("epoch:expected")
}

/// Joins the store's epoch (making one if it has none), bringing this machine's count for
/// `day` back if the store forgot. Returns the epoch now counted in.
pub fn rejoin(shared: &Shared, state_dir: &Path, day: &str) -> Result<u64, Down> {
    let mut guard = write(shared, state_dir);
    let Some(known) = guard.as_mut() else {
        return Ok(0);
    };
    // Another thread may have rejoined while this one waited.
    let current: Option<String> =
        shared.run(|c| redis::cmd("GET").arg(epoch_key(shared)).query(c))?;
    if known.epoch != 0 && current.as_deref() == Some(known.epoch.to_string().as_str()) {
        return Ok(known.epoch);
    }
    let (mut team, mut clients) = count_day(&Ledger::new(state_dir), day);
    // This process's calls in flight on `day`: reserved in what the store forgot, and not in
    // the ledger yet.
    let flying: Vec<(Flight, u64)> = shared
        .memory
        .in_flight()
        .counts
        .iter()
        .filter(|((_, on, _), _)| on == day)
        .map(|(key, n)| (key.clone(), *n))
        .collect();
    for ((_, _, client), n) in &flying {
        team.calls += n;
        if let Some(name) = client {
            clients.entry(name.clone()).or_default().calls += n;
        }
    }
    let fresh = fastrand::u64(1..);
    let script = redis::Script::new(JOIN);
    let mut invocation = script.key(epoch_key(shared));
    invocation
        .key(rebuilding_key(shared))
        .key(joined_key(shared))
        .key(expected_key(shared))
        .key(replicas_key(shared))
        .key(shared.key("epoch:forgot"))
        .key(super::budget::day_key(shared, day))
        .key(super::budget::limits_key(shared));
    invocation
        .arg(fresh)
        .arg(&known.machine)
        .arg(millis(REBUILD_WAIT))
        .arg(if shared.memory.relay { "1" } else { "0" })
        .arg(team.calls)
        .arg(team.tokens)
        .arg(super::budget::KEEP_SECONDS);
    match known.limits {
        Some(limits) => invocation.arg(limits.calls).arg(limits.tokens),
        None => invocation.arg("").arg(""),
    };
    invocation
        .arg(if known.epoch == 0 { "0" } else { "1" })
        .arg(millis(REBUILD_AT_LEAST))
        .arg(known.replicas.len());
    for replica in &known.replicas {
        invocation.arg(replica);
    }
    for (name, counts) in &clients {
        invocation.key(super::budget::client_key(shared, day, name));
        invocation.arg(counts.calls).arg(counts.tokens);
    }
    let answer: Vec<String> = shared.run(|c| invocation.invoke(c))?;
    let mut answer = answer.into_iter();
    let epoch = answer.next().and_then(|e| e.parse().ok()).unwrap_or(0);
    let forgot = answer.next().as_deref() == Some("1");
    if answer.next().as_deref() == Some("1") {
        // Brought back: they owe the store no call of their own when they land.
        let mut in_flight = shared.memory.in_flight();
        for (key, n) in flying {
            in_flight.carried.insert((key.0, key.1.clone()));
            if let Some(left) = in_flight.counts.get_mut(&key) {
                *left = left.saturating_sub(n);
                if *left == 0 {
                    in_flight.counts.remove(&key);
                }
            }
        }
    }
    if forgot && known.epoch != 0 && epoch != known.epoch {
        crate::term::notice(&format!(
            "the shared store at {} began anew; this machine's count for {day} ({} calls) is in it again",
            shared.place, team.calls
        ));
    }
    known.epoch = epoch;
    known.replicas = answer.collect();
    known.replicas.sort();
    save(state_dir, known);
    Ok(epoch)
}

/// A relay's bookkeeping thread, at most every [`WATCH_EVERY`]: rejoins if the store forgot
/// (so a rebuild does not wait for this replica's next call), and keeps the epoch's relay
/// replicas in `store.json` for the next rebuild to wait for.
pub fn watch(shared: &Shared, state_dir: &Path, day: &str) -> Result<(), Down> {
    {
        let mut watched = shared
            .memory
            .watched
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if watched.is_some_and(|at| at.elapsed() < WATCH_EVERY) {
            return Ok(());
        }
        *watched = Some(Instant::now());
    }
    let (current, mut replicas): (Option<String>, Vec<String>) = shared.run(|c| {
        redis::pipe()
            .cmd("GET")
            .arg(epoch_key(shared))
            .cmd("SMEMBERS")
            .arg(replicas_key(shared))
            .query(c)
    })?;
    replicas.sort();
    let known = read(shared, state_dir);
    let Some(remembered) = known.as_ref() else {
        return Ok(());
    };
    if current.and_then(|e| e.parse().ok()) != Some(remembered.epoch) {
        drop(known);
        return rejoin(shared, state_dir, day).map(|_| ());
    }
    if shared.memory.relay && !replicas.contains(&remembered.machine) {
        // Joined by another process of this machine (a report, a launch): a relay replica
        // is one the next rebuild waits for.
        let machine = remembered.machine.clone();
        drop(known);
        shared.run(|c| {
            redis::cmd("SADD")
                .arg(replicas_key(shared))
                .arg(&machine)
                .query::<()>(c)
        })?;
        replicas.push(machine);
        replicas.sort();
        let mut guard = write(shared, state_dir);
        if let Some(known) = guard.as_mut() {
            known.replicas = replicas;
            save(state_dir, known);
        }
        return Ok(());
    }
    if remembered.replicas != replicas {
        drop(known);
        let mut guard = write(shared, state_dir);
        if let Some(known) = guard.as_mut() {
            known.replicas = replicas;
            save(state_dir, known);
        }
    }
    Ok(())
}

/// This machine's calls and tokens on `day` from its own ledger, the team's and each named
/// client's (a call the relay turned away counts for nothing).
fn count_day(ledger: &Ledger, day: &str) -> (Day, BTreeMap<String, Day>) {
    let mut team = Day::default();
    let mut clients: BTreeMap<String, Day> = BTreeMap::new();
    for record in ledger.read_local() {
        if record.refused {
            continue;
        }
        let on = if record.day.is_empty() {
            crate::state::budget::local_day(&record.time).unwrap_or_default()
        } else {
            record.day.clone()
        };
        if on != day {
            continue;
        }
        let tokens = record.tokens.total();
        team.calls += 1;
        team.tokens = team.tokens.saturating_add(tokens);
        if let Some(name) = &record.client {
            let client = clients.entry(name.clone()).or_default();
            client.calls += 1;
            client.tokens = client.tokens.saturating_add(tokens);
        }
    }
    (team, clients)
}
