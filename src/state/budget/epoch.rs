//! How a replica knows the shared store forgot (a restart without persistence, `FLUSHALL`,
//! a failover to an empty replica), and how the day's count is rebuilt before anyone is
//! served as if nothing had been spent.
//!
//! The store holds an epoch, `PREFIX:epoch`, made by the first process that finds it
//! missing — or damaged (not a number this store made, not even a string: taken for a store
//! that forgot, rewritten, and told as a corrupt record). Every reservation names the epoch
//! its process counts in, and the reservation script refuses one that names another
//! ([`Stale`]): the process then rejoins. Rejoining an epoch that began on a store that had
//! forgotten adds this home's own count for the day, once per home (state directory) per
//! epoch: the calls in its `usage.jsonl` and the reservations of every process of this home
//! still open on its disk (see [`super::reserved`]: calls in flight, a `kill -9`ed
//! replica's among them), each call once; and puts back the caps set with `agent --budget
//! set` and the documents kept to put back (the relay's named clients, see
//! [`JsonFile::kept`]) from this home's copies. Until every relay replica of the previous
//! epoch has rejoined (each one's bookkeeping thread looks at the epoch every second, and
//! names the replicas it knows) and at least [`REBUILD_AT_LEAST`] has passed, or
//! [`REBUILD_WAIT`] has passed for one that is gone, reservations wait: no replica spends
//! another's share before its count is back. A store that was never counted in (no process
//! remembers an epoch) starts with no wait.
//!
//! What this machine remembers of the store lives in `store.json` (0600, written under its
//! lock): its id, the epoch it joined, the relay replicas of that epoch, the last caps.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::{Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::config::limits::Limits;
use crate::state::budget::day::{Day, local_day, today};
use crate::state::budget::keys::{KEEP_SECONDS, client_key, day_key, limits_key};
use crate::state::budget::reserved;
use crate::state::events;
use crate::state::json_file::{self, JsonFile};
use crate::state::ledger::Ledger;
use crate::state::store::{Down, Role, Shared};

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
struct Memory {
    known: RwLock<Option<Remembered>>,
    watched: Mutex<Option<Instant>>,
}

/// What this process remembers of `shared`'s store, made on first use. Kept here, on the
/// budget's side, rather than in the connection: the store knows no budget. A process is
/// given one store ([`crate::state::store::install`]), so it has one memory; a test that
/// starts a server of its own gets a memory of its own. Each lives as long as the process.
fn memory(shared: &Shared) -> &'static Memory {
    type Remembering = (String, String, &'static Memory);
    static MEMORIES: Mutex<Vec<Remembering>> = Mutex::new(Vec::new());
    let mut memories = MEMORIES
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(&(_, _, memory)) = memories
        .iter()
        .find(|(place, prefix, _)| *place == shared.place && *prefix == shared.prefix)
    {
        return memory;
    }
    let memory: &'static Memory = Box::leak(Box::new(Memory {
        known: RwLock::new(None),
        watched: Mutex::new(None),
    }));
    memories.push((shared.place.clone(), shared.prefix.clone(), memory));
    memory
}

/// Whether this process is a relay replica: a rebuild waits for those.
fn relay(shared: &Shared) -> bool {
    shared.role == Role::Relay
}

fn file(state_dir: &Path) -> JsonFile<Remembered> {
    JsonFile::new(state_dir, "store.json").synced()
}

/// Held while a reservation is asked for and while a batch of finished calls is written:
/// the epoch it names is the one this process counts in until it is dropped (a rejoin of
/// this process waits for it).
pub struct Counting<'a> {
    guard: RwLockReadGuard<'a, Option<Remembered>>,
}

impl Counting<'_> {
    /// The epoch this process counts in now (0: none yet).
    pub fn epoch(&self) -> u64 {
        self.guard.as_ref().map_or(0, |known| known.epoch)
    }
}

fn read<'a>(shared: &'a Shared, state_dir: &Path) -> RwLockReadGuard<'a, Option<Remembered>> {
    {
        let guard = memory(shared)
            .known
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if guard.is_some() {
            return guard;
        }
    }
    drop(write(shared, state_dir));
    memory(shared)
        .known
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The whole memory, loaded from `store.json` the first time (with this machine's id made
/// and saved if it had none).
fn write<'a>(shared: &'a Shared, state_dir: &Path) -> RwLockWriteGuard<'a, Option<Remembered>> {
    let mut guard = memory(shared)
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

/// Marks the start of a new epoch, counts this home in, puts back the caps and the kept
/// documents: all one step on the server. Made only when the store has no epoch, or one it
/// cannot have made (not a number, not a string: then the epoch's own records of a wrong
/// type go too, and the answer says it was damaged); a new epoch whose day has no count
/// left means the store forgot, and only then do joiners bring counts back and
/// reservations wait for the replicas.
const JOIN: &str = r"
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local n, nc, nd = tonumber(ARGV[12]), tonumber(ARGV[13]), tonumber(ARGV[14])
local damaged = '0'
local e = false
local kind = redis.call('TYPE', KEYS[1])['ok']
if kind == 'string' then
  e = redis.call('GET', KEYS[1])
  if not (string.match(e, '^[1-9]%d*$') and #e <= 19) then
    e = false
    damaged = '1'
  end
elseif kind ~= 'none' then
  damaged = '1'
end
local kinds = {'string', 'set', 'set', 'set', 'string'}
for i = 2, 6 do
  local k = redis.call('TYPE', KEYS[i])['ok']
  if k ~= 'none' and k ~= kinds[i - 1] then
    redis.call('DEL', KEYS[i])
    damaged = '1'
  end
end
if not e then
  e = ARGV[1]
  redis.call('DEL', KEYS[1])
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
if ARGV[4] == '1' then
  redis.call('SADD', KEYS[5], ARGV[2])
end
local added = '0'
if redis.call('SADD', KEYS[3], ARGV[2]) == 1 and forgot then
  added = '1'
  redis.call('HINCRBY', KEYS[7], 'calls', ARGV[5])
  redis.call('HINCRBY', KEYS[7], 'tokens', ARGV[6])
  redis.call('EXPIRE', KEYS[7], ARGV[7])
  local at = 14 + n
  for i = 1, nc do
    redis.call('HINCRBY', KEYS[8 + i], 'calls', ARGV[at + 2 * i - 1])
    redis.call('HINCRBY', KEYS[8 + i], 'tokens', ARGV[at + 2 * i])
    redis.call('EXPIRE', KEYS[8 + i], ARGV[7])
  end
  if ARGV[8] ~= '' and redis.call('EXISTS', KEYS[8]) == 0 then
    redis.call('HSET', KEYS[8], 'calls', ARGV[8], 'tokens', ARGV[9])
  end
  at = at + 2 * nc
  for j = 1, nd do
    redis.call('SET', KEYS[8 + nc + j], ARGV[at + j], 'NX')
  end
end
local since = redis.call('GET', KEYS[2])
if forgot and since then
  for i = 1, n do
    redis.call('SADD', KEYS[4], ARGV[14 + i])
  end
  if #redis.call('SDIFF', KEYS[4], KEYS[3]) == 0 and now - tonumber(since) >= tonumber(ARGV[11]) then
    redis.call('DEL', KEYS[2])
  end
end
local answer = redis.call('SMEMBERS', KEYS[5])
table.insert(answer, 1, damaged)
table.insert(answer, 1, added)
table.insert(answer, 1, forgot and '1' or '0')
table.insert(answer, 1, e)
return answer";

/// The largest epoch made (fewer than 19 digits: what the script takes for one it made).
const EPOCH_BELOW: u64 = 1_000_000_000_000_000_000;

/// The store's epoch now, `None` when it has none — or one that is not a number, or a key
/// of another type (`MGET` answers those as missing instead of refusing): either way not
/// the epoch this process counts in.
pub fn current(shared: &Shared) -> Result<Option<u64>, Down> {
    let found: Vec<Option<String>> =
        shared.run(|c| redis::cmd("MGET").arg(epoch_key(shared)).query(c))?;
    Ok(found
        .into_iter()
        .next()
        .flatten()
        .and_then(|e| e.parse().ok()))
}

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

/// Joins the store's epoch (making one if it has none, or a damaged one), bringing this
/// home's count for `day` back if the store forgot. Returns the epoch now counted in.
pub fn rejoin(shared: &Shared, state_dir: &Path, day: &str) -> Result<u64, Down> {
    let mut guard = write(shared, state_dir);
    let Some(known) = guard.as_mut() else {
        return Ok(0);
    };
    // Another thread may have rejoined while this one waited.
    if known.epoch != 0 && current(shared)? == Some(known.epoch) {
        return Ok(known.epoch);
    }
    // No process of this home has a call reserved on the server and not on the disk while
    // this counts; the reservations are read before the ledger (see `reserved::open_on`).
    let tally = reserved::tallying(state_dir).map_err(|err| {
        Down(format!(
            "this machine's reservations could not be counted: {err:#}"
        ))
    })?;
    let open = reserved::open_on(&tally, state_dir, day);
    let (team, clients) = count_day(&Ledger::new(state_dir), day, &open);
    let documents = json_file::kept_copies(state_dir);
    let fresh = fastrand::u64(1..EPOCH_BELOW);
    let script = redis::Script::new(JOIN);
    let mut invocation = script.key(epoch_key(shared));
    invocation
        .key(rebuilding_key(shared))
        .key(joined_key(shared))
        .key(expected_key(shared))
        .key(replicas_key(shared))
        .key(shared.key("epoch:forgot"))
        .key(day_key(shared, day))
        .key(limits_key(shared));
    invocation
        .arg(fresh)
        .arg(&known.machine)
        .arg(millis(REBUILD_WAIT))
        .arg(if relay(shared) { "1" } else { "0" })
        .arg(team.calls)
        .arg(team.tokens)
        .arg(KEEP_SECONDS);
    match known.limits {
        Some(limits) => invocation.arg(limits.calls).arg(limits.tokens),
        None => invocation.arg("").arg(""),
    };
    invocation
        .arg(if known.epoch == 0 { "0" } else { "1" })
        .arg(millis(REBUILD_AT_LEAST))
        .arg(known.replicas.len())
        .arg(clients.len())
        .arg(documents.len());
    for replica in &known.replicas {
        invocation.arg(replica);
    }
    for (name, counts) in &clients {
        invocation.key(client_key(shared, day, name));
        invocation.arg(counts.calls).arg(counts.tokens);
    }
    for (name, bytes) in &documents {
        invocation.key(shared.key(name));
        invocation.arg(bytes.as_bytes());
    }
    let answer: Vec<String> = shared.run(|c| invocation.invoke(c))?;
    drop(tally);
    let mut answer = answer.into_iter();
    let epoch = answer.next().and_then(|e| e.parse().ok()).unwrap_or(0);
    // Whether the store forgot: what this rejoin did about it is the next answer.
    let _forgot = answer.next();
    let added = answer.next().as_deref() == Some("1");
    if answer.next().as_deref() == Some("1") {
        let key = epoch_key(shared);
        let why = "not an epoch this store made";
        crate::term::warn(&format!(
            "{key} was unreadable ({why}) in the shared store at {}; taken for a store that forgot: epoch {epoch} was made in its place, the day's count checked before serving",
            shared.place
        ));
        events::record(
            state_dir,
            events::Kind::CorruptState,
            &key,
            &format!("epoch {epoch}"),
            why,
        );
    }
    if added && known.epoch != 0 && epoch != known.epoch {
        crate::term::notice(&format!(
            "the shared store at {} began anew; this machine's count for {day} ({} calls, its calls in flight among them) is in it again",
            shared.place, team.calls
        ));
    }
    known.epoch = epoch;
    known.replicas = answer.collect();
    known.replicas.sort();
    save(state_dir, known);
    Ok(epoch)
}

/// For a reader that found missing a document this home keeps a copy of: if the store
/// forgot since this process last counted in it (its epoch is not this process's), rejoins
/// now — which puts the copy back — and says so.
pub fn rejoin_if_forgot(shared: &Shared, state_dir: &Path) -> Result<bool, Down> {
    let mine = known(shared, state_dir);
    if mine != 0 && current(shared)? == Some(mine) {
        return Ok(false);
    }
    rejoin(shared, state_dir, &today())?;
    Ok(true)
}

/// A relay's bookkeeping thread, at most every [`WATCH_EVERY`]: rejoins if the store forgot
/// (so a rebuild does not wait for this replica's next call), and keeps the epoch's relay
/// replicas in `store.json` for the next rebuild to wait for.
pub fn watch(shared: &Shared, state_dir: &Path, day: &str) -> Result<(), Down> {
    {
        let mut watched = memory(shared)
            .watched
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if watched.is_some_and(|at| at.elapsed() < WATCH_EVERY) {
            return Ok(());
        }
        *watched = Some(Instant::now());
    }
    // `MGET`: an epoch of the wrong type reads as none (a rejoin rewrites it).
    let (current, mut replicas): (Vec<Option<String>>, Vec<String>) = shared.run(|c| {
        redis::pipe()
            .cmd("MGET")
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
    let current = current.into_iter().next().flatten();
    if current.and_then(|e| e.parse().ok()) != Some(remembered.epoch) {
        drop(known);
        return rejoin(shared, state_dir, day).map(|_| ());
    }
    if relay(shared) && !replicas.contains(&remembered.machine) {
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

/// This home's calls and tokens on `day`: its ledger's, the team's and each named
/// client's (a call the relay turned away counts for nothing), and its reservations still
/// `open` whose ledger lines are not among them (a call whose line is written counts by
/// its line, whether or not its reservation was settled).
fn count_day(ledger: &Ledger, day: &str, open: &[reserved::Open]) -> (Day, BTreeMap<String, Day>) {
    let mut team = Day::default();
    let mut clients: BTreeMap<String, Day> = BTreeMap::new();
    let mut written = BTreeSet::new();
    for record in ledger.read_local() {
        if record.refused {
            continue;
        }
        let on = if record.day.is_empty() {
            local_day(&record.time).unwrap_or_default()
        } else {
            record.day.clone()
        };
        if on != day {
            continue;
        }
        if let Some(id) = record.reservation {
            written.insert(id);
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
    for call in open
        .iter()
        .filter(|o| o.day == day && !written.contains(&o.id))
    {
        team.calls += 1;
        if let Some(name) = &call.client {
            clients.entry(name.clone()).or_default().calls += 1;
        }
    }
    (team, clients)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_is_counted_once_whether_by_its_line_its_open_reservation_or_both() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::new(dir.path());
        let day = "2026-11-30";
        let line = |reservation: &str, client: &str| {
            format!(
                r#"{{"time":"2026-11-30T10:00:00Z","run":"r","day":"{day}","error_kind":"ok","tokens":{{"input":3}},"reservation":"{reservation}","client":"{client}"}}"#
            )
        };
        // Written and settled; written but its settlement lost (a crash between the two).
        std::fs::write(
            ledger.path(),
            format!("{}\n{}\n", line("a", "ana"), line("b", "bo")),
        )
        .unwrap();
        let open = |id: &str, on: &str, client: Option<&str>| reserved::Open {
            id: id.into(),
            day: on.into(),
            client: client.map(str::to_string),
        };
        let (team, clients) = count_day(
            &ledger,
            day,
            &[
                open("b", day, Some("bo")),
                // In flight, or its process killed: no line yet.
                open("c", day, Some("ana")),
                open("d", "2026-11-29", None),
            ],
        );
        assert_eq!((team.calls, team.tokens), (3, 6));
        assert_eq!(clients["ana"].calls, 2);
        assert_eq!(clients["bo"].calls, 1);
    }
}
