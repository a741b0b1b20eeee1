//! The daily call and token budget (DESIGN.md §8, seed 001): before any LLM call, one call
//! is reserved under a cross-process lock and the reservation is saved — if it cannot be
//! saved, the call is not sent. After the call its tokens are added to the day it reserved.
//! Days are local calendar days. The token cap stops later calls only: a call in flight can
//! cross it.
//!
//! [`Budget`] is the door, and counts in `budget.json` unless a shared store is configured.
//! The budget's use of that store lives here too, on top of the generic store
//! ([`crate::state::store`], which knows no budget): [`on_store`] (the reservation script
//! and the counts), [`keys`] (where they are), [`epoch`] (knowing the store forgot, and the
//! day's count rebuilt), [`reserved`] (this home's reservations still open on its disk) and
//! [`outbox`] (what the relay's finished calls owe the store while it is away).

pub mod day;
pub mod epoch;
pub mod keys;
pub mod on_store;
pub mod outbox;
pub mod reservation;
pub mod reserved;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::state::file::{self as state_file, Durability};
use crate::state::json_file::{Corrupt, JsonFile};
use crate::state::ledger::{Ledger, Tokens};
use crate::state::store;

pub use crate::config::limits::Limits;
pub use day::{Day, day_of, local_day, spent, today};
pub use reservation::{ClientCaps, Refusal, Reservation};

/// Days older than this are dropped from `budget.json` (the ledger keeps the history).
const KEEP_DAYS: usize = 40;

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BudgetFile {
    /// Set by `agent --budget set`; wins over the configuration file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<Limits>,
    #[serde(default)]
    pub days: BTreeMap<String, Day>,
    /// Named relay clients' own counts (`--relay tokens add NAME --daily-calls N`): day →
    /// client → counts. Every call a client makes also counts in `days`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub clients: BTreeMap<String, BTreeMap<String, Day>>,
}

/// How many times a reservation rejoins the store's epoch before it calls the store away
/// (an epoch that keeps changing under it).
const REJOINS: usize = 3;
/// How often a reservation asks again while the day's count is being rebuilt.
const REBUILD_POLL: std::time::Duration = std::time::Duration::from_millis(20);

#[derive(Debug, Clone)]
pub struct Budget {
    file: JsonFile<BudgetFile>,
    state_dir: PathBuf,
    /// Caps from the configuration file (or the defaults).
    configured: Limits,
}

impl Budget {
    pub fn new(state_dir: &Path, configured: Limits) -> Budget {
        Budget {
            file: JsonFile::new(state_dir, "budget.json")
                .rebuilt_by("rebuilding the counts from the ledger"),
            state_dir: state_dir.to_path_buf(),
            configured,
        }
    }

    /// Reserves one call for today, or says why not.
    pub fn reserve(&self) -> Result<Reservation, Refusal> {
        self.reserve_on(&today())
    }

    pub fn reserve_on(&self, day: &str) -> Result<Reservation, Refusal> {
        self.reserve_block(day, 1)
            .map(|(reservation, _)| reservation)
    }

    /// Reserves up to `want` calls on `day` at once — never past the cap, and never more
    /// than an eighth of what is left (at least one), so other processes are not starved —
    /// and returns how many were granted. One at a time for agent's own calls; in blocks
    /// for the relay, which hands them out one per call and gives back what it did not use
    /// ([`Budget::release`]).
    pub fn reserve_block(&self, day: &str, want: u64) -> Result<(Reservation, u64), Refusal> {
        self.reserve_block_for(day, want, None)
    }

    /// [`Budget::reserve_block`] for a named client: its own caps are checked and counted
    /// in the same step as the team's. A client's calls are reserved one at a time (a
    /// block held for one person would be refused to another).
    pub fn reserve_block_for(
        &self,
        day: &str,
        want: u64,
        client: Option<&ClientCaps>,
    ) -> Result<(Reservation, u64), Refusal> {
        if let Some(shared) = store::shared() {
            match self.reserve_shared(shared, day, client) {
                Ok(reserved) => return reserved.map(|reservation| (reservation, 1)),
                Err(down) if shared.falls_back() => shared.tell_fallback(&down),
                Err(down) => return Err(Refusal::StoreUnavailable(down.to_string())),
            }
        }
        let _lock = self
            .file
            .lock()
            .map_err(|e| Refusal::Unsaved(format!("{e:#}")))?;
        let mut file = match self.read() {
            Ok(file) => file,
            Err(aside) => return Err(Refusal::Corrupt { aside }),
        };
        let limits = file.limits.unwrap_or(self.configured);
        let used = file.days.get(day).copied().unwrap_or_default();
        if spent(used, limits) {
            return Err(Refusal::Exhausted { used, limits });
        }
        if let Some(client) = client {
            let used = client_day(&file, day, &client.name);
            if spent(used, client.limits) {
                return Err(Refusal::ClientExhausted {
                    name: client.name.clone(),
                    used,
                    limits: client.limits,
                });
            }
        }
        let granted = if client.is_some() {
            1
        } else if limits.calls > 0 {
            want.clamp(1, ((limits.calls - used.calls) / 8).max(1))
        } else {
            want.max(1)
        };
        file.days.entry(day.to_string()).or_default().calls += granted;
        if let Some(client) = client {
            file.clients
                .entry(day.to_string())
                .or_default()
                .entry(client.name.clone())
                .or_default()
                .calls += 1;
        }
        self.save(&mut file, Durability::Unsynced)
            .map_err(|e| Refusal::Unsaved(format!("{e:#}")))?;
        Ok((
            Reservation {
                day: day.to_string(),
                client: client.map(|c| c.name.clone()),
                epoch: 0,
                id: String::new(),
            },
            granted,
        ))
    }

    /// One call reserved on the shared store, in the epoch this process counts in: after
    /// the store forgot, this machine rejoins first (its count for the day brought back),
    /// and waits while the other replicas bring theirs — never served as if nothing had
    /// been spent. A reservation granted is on this home's disk before it is handed out
    /// ([`reserved`]): a rebuild counts it even if this process dies with its call
    /// in flight.
    fn reserve_shared(
        &self,
        shared: &store::Shared,
        day: &str,
        client: Option<&ClientCaps>,
    ) -> Result<Result<Reservation, Refusal>, store::Down> {
        let deadline = std::time::Instant::now() + epoch::REBUILD_WAIT + epoch::WATCH_EVERY;
        let journal = reserved::journal(&self.state_dir);
        let mut rejoins = 0;
        loop {
            let counting = epoch::counting(shared, &self.state_dir);
            // Held from the round trip until the reservation is on the disk: no rebuild of
            // this home counts between the server counting this call and the disk knowing it.
            let asking = match reserved::asking(&self.state_dir) {
                Ok(asking) => asking,
                Err(err) => return Ok(Err(Refusal::Unsaved(format!("{err:#}")))),
            };
            let mut reserved =
                on_store::reserve(shared, counting.epoch(), day, self.configured, client);
            if let Ok(on_store::Reserved::Answered {
                answer: Ok(reservation),
                ..
            }) = &mut reserved
            {
                reservation.id = reserved::new_id();
                let open = reserved::Open {
                    id: reservation.id.clone(),
                    day: day.to_string(),
                    client: reservation.client.clone(),
                };
                if let Err(err) = journal.record(open) {
                    // Not sent, so not spent: given back.
                    let _ = on_store::release(shared, day, 1);
                    return Ok(Err(Refusal::Unsaved(format!("{err:#}"))));
                }
            }
            drop(asking);
            drop(counting);
            match reserved? {
                on_store::Reserved::Answered { answer, set } => {
                    if let Some(set) = set {
                        epoch::saw_limits(shared, &self.state_dir, set);
                    }
                    return Ok(answer);
                }
                on_store::Reserved::Stale(_) if rejoins < REJOINS => {
                    rejoins += 1;
                    epoch::rejoin(shared, &self.state_dir, day)?;
                }
                on_store::Reserved::Stale(_) => {
                    return Err(store::Down(
                        "its epoch kept changing while this machine rejoined it".into(),
                    ));
                }
                on_store::Reserved::Rebuilding if std::time::Instant::now() < deadline => {
                    std::thread::sleep(REBUILD_POLL);
                }
                on_store::Reserved::Rebuilding => {
                    return Err(store::Down(
                        "it is still bringing back the day's count after it forgot".into(),
                    ));
                }
            }
        }
    }

    /// This machine's state directory: where what it remembers of the store is kept.
    pub fn state_dir(&self) -> &Path {
        &self.state_dir
    }

    /// Gives back `calls` reserved on `day` that were never sent.
    pub fn release(&self, day: &str, calls: u64) -> anyhow::Result<()> {
        if calls == 0 {
            return Ok(());
        }
        if let Some(()) = store::answered(|shared| on_store::release(shared, day, calls)) {
            return Ok(());
        }
        let _lock = self.file.lock()?;
        let mut file = self.read_or_rebuilt();
        if let Some(entry) = file.days.get_mut(day) {
            entry.calls = entry.calls.saturating_sub(calls);
        }
        self.save(&mut file, Durability::Unsynced)
    }

    /// A finished call's ledger line, which names `reservation`, is written: from now on
    /// the line counts the call in a rebuild, and its reservation is settled on this home's
    /// disk. (Until then the reservation counts it, so a line that could not be written
    /// leaves the call counted.)
    pub fn written(&self, reservation: &Reservation) {
        if !reservation.id.is_empty() {
            reserved::journal(&self.state_dir).settle([reservation.id.as_str()]);
        }
    }

    /// Adds a finished call's tokens to the day it reserved: on the shared store when it
    /// was reserved there (in the epoch this process counts in now), else in `budget.json`.
    pub fn record(&self, reservation: &Reservation, tokens: &Tokens) -> anyhow::Result<()> {
        if reservation.epoch != 0
            && let Some(shared) = store::shared()
        {
            let owed = on_store::Owed {
                day: reservation.day.clone(),
                client: reservation.client.clone(),
                epoch: epoch::known(shared, &self.state_dir),
                tokens: tokens.total(),
            };
            if owed.tokens == 0 {
                return Ok(());
            }
            match on_store::record(shared, &owed) {
                Ok(Ok(())) => return Ok(()),
                // The store forgot since: rejoining brings this call back from the ledger.
                Ok(Err(_)) => match epoch::rejoin(shared, &self.state_dir, &today()) {
                    Ok(_) => return Ok(()),
                    Err(down) => shared.tell_fallback(&down),
                },
                Err(down) => shared.tell_fallback(&down),
            }
        }
        if tokens.total() == 0 {
            return Ok(());
        }
        let _lock = self.file.lock()?;
        let mut file = self.read_or_rebuilt();
        let day = file.days.entry(reservation.day.clone()).or_default();
        day.tokens = day.tokens.saturating_add(tokens.total());
        if let Some(name) = &reservation.client {
            let day = file
                .clients
                .entry(reservation.day.clone())
                .or_default()
                .entry(name.clone())
                .or_default();
            day.tokens = day.tokens.saturating_add(tokens.total());
        }
        self.save(&mut file, Durability::Unsynced)
    }

    /// Today's use and the caps in force.
    pub fn status(&self) -> (Day, Limits, LimitSource) {
        self.status_on(&today())
    }

    /// `day`'s use and the caps in force. The day is read once by the caller, so a report
    /// that straddles midnight reads one day from the store and the file alike.
    pub fn status_on(&self, day: &str) -> (Day, Limits, LimitSource) {
        if let Some((used, set)) = store::answered(|shared| self.status_shared(shared, day)) {
            return match set {
                Some(set) => (used, set, LimitSource::SetCommand),
                None => (used, self.configured, LimitSource::Config),
            };
        }
        let file = self.read_or_rebuilt();
        let (limits, source) = match file.limits {
            Some(limits) => (limits, LimitSource::SetCommand),
            None => (self.configured, LimitSource::Config),
        };
        (
            file.days.get(day).copied().unwrap_or_default(),
            limits,
            source,
        )
    }

    /// The shared store's figures for `day`, this machine's count brought back first if
    /// the store forgot since it last counted there.
    fn status_shared(
        &self,
        shared: &store::Shared,
        day: &str,
    ) -> Result<(Day, Option<Limits>), store::Down> {
        let (used, set, epoch) = on_store::status(shared, day)?;
        if epoch != 0 && epoch == epoch::known(shared, &self.state_dir) {
            return Ok((used, set));
        }
        epoch::rejoin(shared, &self.state_dir, day)?;
        let (used, set, _) = on_store::status(shared, day)?;
        Ok((used, set))
    }

    /// `agent --budget set`: caps stored beside the counts, winning over the config file.
    pub fn set_limits(&self, limits: Limits) -> anyhow::Result<()> {
        if let Some(shared) = store::shared() {
            // Caps meant for the team are not quietly set on one machine.
            on_store::set_limits(shared, limits)
                .map_err(|down| anyhow::anyhow!("{down}; the caps were not changed"))?;
            // This machine's copy, to put back if the store forgets them.
            epoch::saw_limits(shared, &self.state_dir, limits);
            return Ok(());
        }
        let _lock = self.file.lock()?;
        let mut file = self.read_or_rebuilt();
        file.limits = Some(limits);
        self.save(&mut file, Durability::Synced)
    }

    /// Reads `budget.json`. A corrupt file is moved aside (with a warning and a
    /// `corrupt_state` event) and the counts are rebuilt from the ledger and saved; the
    /// caller is told where the old file went (the call that found it is refused once).
    fn read(&self) -> Result<BudgetFile, PathBuf> {
        self.file.read().map_err(|Corrupt { aside }| {
            let mut rebuilt = rebuild(&Ledger::new(&self.state_dir));
            let _ = self.save(&mut rebuilt, Durability::Unsynced);
            aside
        })
    }

    /// For everything but a reservation: a corrupt file is handled as in [`Budget::read`],
    /// then the rebuilt counts are used.
    fn read_or_rebuilt(&self) -> BudgetFile {
        self.read().or_else(|_| self.read()).unwrap_or_default()
    }

    /// Counts are rebuilt from the ledger if a power cut ever spoils the file, so they are
    /// written [`Durability::Unsynced`]; caps set by hand are worth the wait for the disk.
    fn save(&self, file: &mut BudgetFile, durability: Durability) -> anyhow::Result<()> {
        while file.days.len() > KEEP_DAYS {
            let oldest = file.days.keys().next().cloned().unwrap_or_default();
            file.days.remove(&oldest);
        }
        while file.clients.len() > KEEP_DAYS {
            let oldest = file.clients.keys().next().cloned().unwrap_or_default();
            file.clients.remove(&oldest);
        }
        let json = serde_json::to_vec(file)?;
        state_file::write_atomic(self.file.path(), &json, durability)
    }
}

/// A named client's counts on `day`.
fn client_day(file: &BudgetFile, day: &str, name: &str) -> Day {
    file.clients
        .get(day)
        .and_then(|clients| clients.get(name))
        .copied()
        .unwrap_or_default()
}

/// Where the caps in force come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitSource {
    Config,
    SetCommand,
}

/// Counts per local day from the ledger: every recorded call, and its tokens.
pub fn rebuild(ledger: &Ledger) -> BudgetFile {
    let mut file = BudgetFile::default();
    for record in ledger.read_all() {
        // Turned away by the relay (its budget, the store, a cooling upstream): no call.
        if record.refused {
            continue;
        }
        let day = if record.day.is_empty() {
            local_day(&record.time).unwrap_or_default()
        } else {
            record.day.clone()
        };
        let entry = file.days.entry(day).or_default();
        entry.calls += 1;
        entry.tokens = entry.tokens.saturating_add(record.tokens.total());
    }
    file
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rebuild_counts_no_call_the_relay_turned_away() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::new(dir.path());
        let line = |kind: &str| {
            let refused = kind != "ok";
            format!(
                r#"{{"time":"2026-11-30T10:00:00Z","run":"r","day":"2026-11-30","error_kind":"{kind}","refused":{refused},"tokens":{{"input":3}}}}"#
            )
        };
        std::fs::write(
            ledger.path(),
            format!("{}\n{}\n", line("ok"), line(crate::state::ledger::COOLING)),
        )
        .unwrap();
        let day = rebuild(&ledger).days["2026-11-30"];
        assert_eq!((day.calls, day.tokens), (1, 3));
    }

    #[test]
    fn reserves_until_the_cap_then_refuses() {
        let dir = tempfile::tempdir().unwrap();
        let budget = Budget::new(
            dir.path(),
            Limits {
                calls: 2,
                tokens: 0,
            },
        );
        assert!(budget.reserve_on("2026-11-30").is_ok());
        assert!(budget.reserve_on("2026-11-30").is_ok());
        assert!(matches!(
            budget.reserve_on("2026-11-30"),
            Err(Refusal::Exhausted { .. })
        ));
        assert!(
            budget.reserve_on("2026-12-01").is_ok(),
            "a new day starts afresh"
        );
    }

    #[test]
    fn zero_means_unlimited() {
        let dir = tempfile::tempdir().unwrap();
        let budget = Budget::new(
            dir.path(),
            Limits {
                calls: 0,
                tokens: 0,
            },
        );
        for _ in 0..50 {
            budget.reserve_on("2026-11-30").unwrap();
        }
    }

    #[test]
    fn the_token_cap_stops_later_calls_and_tokens_count_on_the_reserved_day() {
        let dir = tempfile::tempdir().unwrap();
        let budget = Budget::new(
            dir.path(),
            Limits {
                calls: 0,
                tokens: 100,
            },
        );
        let before_midnight = budget.reserve_on("2026-11-30").unwrap();
        // The call finishes after midnight: its tokens still count on the 30th.
        budget
            .record(
                &before_midnight,
                &Tokens {
                    input: 150,
                    ..Tokens::default()
                },
            )
            .unwrap();
        assert!(matches!(
            budget.reserve_on("2026-11-30"),
            Err(Refusal::Exhausted { .. })
        ));
        assert!(budget.reserve_on("2026-12-01").is_ok());
    }

    #[test]
    fn a_clients_own_cap_refuses_it_while_others_and_the_team_go_on() {
        let dir = tempfile::tempdir().unwrap();
        let budget = Budget::new(
            dir.path(),
            Limits {
                calls: 10,
                tokens: 0,
            },
        );
        let ana = ClientCaps {
            name: "ana".into(),
            limits: Limits {
                calls: 2,
                tokens: 0,
            },
        };
        let day = "2026-11-30";
        for _ in 0..2 {
            let (reservation, granted) = budget.reserve_block_for(day, 8, Some(&ana)).unwrap();
            assert_eq!(granted, 1, "a client's calls are reserved one at a time");
            assert_eq!(reservation.client.as_deref(), Some("ana"));
        }
        assert!(matches!(
            budget.reserve_block_for(day, 1, Some(&ana)),
            Err(Refusal::ClientExhausted { ref name, .. }) if name == "ana"
        ));
        let bo = ClientCaps {
            name: "bo".into(),
            limits: Limits::default(),
        };
        assert!(budget.reserve_block_for(day, 1, Some(&bo)).is_ok());
        assert_eq!(
            budget.status_on(day).0.calls,
            3,
            "every client's call counts for the team"
        );
    }

    #[test]
    fn a_clients_tokens_count_against_its_own_token_cap() {
        let dir = tempfile::tempdir().unwrap();
        let budget = Budget::new(dir.path(), Limits::default());
        let ana = ClientCaps {
            name: "ana".into(),
            limits: Limits {
                calls: 0,
                tokens: 100,
            },
        };
        let (reservation, _) = budget
            .reserve_block_for("2026-11-30", 1, Some(&ana))
            .unwrap();
        let tokens = Tokens {
            output: 120,
            ..Tokens::default()
        };
        budget.record(&reservation, &tokens).unwrap();
        assert!(matches!(
            budget.reserve_block_for("2026-11-30", 1, Some(&ana)),
            Err(Refusal::ClientExhausted { .. })
        ));
        assert!(budget.reserve_block_for("2026-11-30", 1, None).is_ok());
    }
}
