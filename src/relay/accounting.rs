//! Every relayed call is counted: reserved against the daily budget before anything goes
//! upstream (a refusal sends nothing), then one `usage.jsonl` line, its tokens added to the
//! day it reserved, and what the upstream's answer says about its health written to the
//! shared `health.json` — so a quota the relay sees steers the next launch.
//!
//! Reservations are taken from `budget.json` in small blocks — one call at first, doubling
//! while calls keep coming, never more than 64 nor an eighth of what is left — and handed
//! out one per call from memory; what a block has left after a second is given back, so a
//! reservation is always saved before its call is sent, yet a busy relay touches the file
//! once per block rather than once per call. What happens after a call is handed to one
//! bookkeeping thread, which writes whatever has piled up in one go: a burst of calls
//! costs one ledger append and one budget update, and none of it delays an answer.
//!
//! On a shared store, what a batch owes the store (its lines for the ledger stream, its
//! tokens) goes through an outbox: what the store does not take because it is away is kept
//! and sent again every second until it answers. The thread also looks at the store's epoch
//! every second, so a store that forgot is rejoined (this machine's count for the day
//! brought back) before another replica's rebuild has to wait for it.
//!
//! A named client with caps of its own is the exception: each of its calls is reserved on
//! its own, its caps and the team's checked and counted in one step, so the caps hold
//! exactly across replicas (a block held for one person could not be handed to another).

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::{Arc, Mutex, mpsc};
use std::thread;
use std::time::{Duration, Instant};

use crate::error_class::ErrorClass;
use crate::probe::Outcome;
use crate::state::budget::{Budget, ClientCaps, Limits, Refusal, Reservation};
use crate::state::budget::{epoch, on_store::Owed, outbox::Outbox, reserved};
use crate::state::health::{Policy, Store};
use crate::state::ledger::{CallRecord, Ledger, Tokens};
use crate::state::store;

/// A good answer is written to health at most this often per target: enough to keep a
/// launch trusting it, without a file update per call.
const OK_REFRESH: Duration = Duration::from_secs(30);
/// The largest block of reservations taken at once.
const MAX_BLOCK: u64 = 64;
/// How long finished calls gather before they are written together.
const GATHER: Duration = Duration::from_millis(20);
/// How long a block's calls are handed out; the rest is given back after it.
const BLOCK_LIFE: Duration = Duration::from_secs(1);

/// Reservations taken from the budget file, not yet handed to a call.
struct Pool {
    day: String,
    left: u64,
    /// The size of the last block taken.
    size: u64,
    taken_at: Instant,
}

impl Pool {
    /// Gives back what is left of a block (a day's leftovers, an old block's rest).
    fn give_back(&mut self, budget: &Budget) {
        if self.left > 0 {
            if let Err(err) = budget.release(&self.day, self.left) {
                crate::term::warn(&format!(
                    "relay: could not give back unused reservations: {err:#}"
                ));
            }
            self.left = 0;
        }
    }
}

/// One finished call, as the ledger and health need it. No text of the call in here.
#[derive(Debug, Default)]
pub struct Finished {
    pub record: CallRecord,
    /// The named client whose own day its tokens also count on (one with caps).
    pub client: Option<String>,
    /// The shared store's epoch its reservation was counted in (0: `budget.json`, or no
    /// reservation: a call turned away).
    pub epoch: u64,
    /// Targets whose health this answer speaks for, and what it says.
    pub health: Option<(Vec<String>, Outcome)>,
    /// A half-open claim the call held and its answer did not end (no verdict on health):
    /// given back so the next call is the half-open one.
    pub release: Option<super::gate::Claim>,
}

enum Message {
    Call(Box<Finished>),
    Stop,
}

/// The relay's handle on the budget, the ledger and health.
pub struct Books {
    budget: Budget,
    pool: Arc<Mutex<Pool>>,
    sender: mpsc::Sender<Message>,
    worker: Mutex<Option<thread::JoinHandle<()>>>,
}

impl Books {
    pub fn open(state_dir: &Path, limits: Limits, policy: Policy) -> Books {
        let (sender, receiver) = mpsc::channel();
        let pool = Arc::new(Mutex::new(Pool {
            day: String::new(),
            left: 0,
            size: 0,
            taken_at: Instant::now()
                .checked_sub(BLOCK_LIFE)
                .unwrap_or_else(Instant::now),
        }));
        let keeper = Keeper {
            pool: Arc::clone(&pool),
            budget: Budget::new(state_dir, limits),
            ledger: Ledger::new(state_dir),
            health: Store::new(state_dir),
            policy,
            last_ok: HashMap::new(),
            outbox: Outbox::default(),
        };
        let worker = thread::Builder::new()
            .name("relay-books".into())
            .spawn(move || keeper.run(&receiver))
            .expect("spawn the relay's bookkeeping thread");
        Books {
            budget: Budget::new(state_dir, limits),
            pool,
            sender,
            worker: Mutex::new(Some(worker)),
        }
    }

    /// A reservation from the current block when one is left — never blocks (`None` when
    /// a new block is needed, or another thread is taking one).
    pub fn reserve_from_block(&self) -> Option<Reservation> {
        let mut pool = self.pool.try_lock().ok()?;
        if pool.left > 0 && pool.taken_at.elapsed() < BLOCK_LIFE {
            let today = crate::state::budget::today();
            if pool.day == today {
                pool.left -= 1;
                return Some(Reservation::on(&today));
            }
        }
        None
    }

    /// Reserves one call against today's budget, and against a named client's own caps
    /// when it has some: from the current block, else from a new one (blocking then: call
    /// it off the async workers).
    pub fn reserve(&self, client: Option<&ClientCaps>) -> Result<Reservation, Refusal> {
        // A client's own caps are checked and counted with the team's, one call at a time;
        // on a shared store a reservation is one atomic step on the server, and a block held
        // here could be refused to another replica. Neither takes blocks, nor holds the
        // block's lock across the step.
        if client.is_some() || crate::state::store::shared().is_some() {
            return self
                .budget
                .reserve_block_for(&crate::state::budget::today(), 1, client)
                .map(|(reservation, _)| reservation);
        }
        let mut pool = self
            .pool
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let today = crate::state::budget::today();
        let fresh = pool.taken_at.elapsed() < BLOCK_LIFE;
        if pool.left > 0 && fresh && pool.day == today {
            pool.left -= 1;
            return Ok(Reservation::on(&today));
        }
        pool.give_back(&self.budget);
        // A block used up within its life: the next one is twice as big.
        pool.size = if fresh {
            (pool.size * 2).clamp(1, MAX_BLOCK)
        } else {
            1
        };
        let (reservation, granted) = self.budget.reserve_block(&today, pool.size)?;
        pool.day = today;
        pool.left = granted - 1;
        pool.taken_at = Instant::now();
        Ok(reservation)
    }

    /// Hands a finished call to the bookkeeping thread; returns at once.
    pub fn finish(&self, call: Finished) {
        let _ = self.sender.send(Message::Call(Box::new(call)));
    }

    /// Writes everything handed over so far, then stops the bookkeeping thread (later
    /// calls are not written).
    pub fn close(&self) {
        let worker = self
            .worker
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        if let Some(worker) = worker {
            let _ = self.sender.send(Message::Stop);
            let _ = worker.join();
        }
    }
}

impl Drop for Books {
    fn drop(&mut self) {
        self.close();
    }
}

struct Keeper {
    pool: Arc<Mutex<Pool>>,
    budget: Budget,
    ledger: Ledger,
    health: Store,
    policy: Policy,
    /// When each target was last written as good, by this relay.
    last_ok: HashMap<String, Instant>,
    /// What the shared store has not taken yet.
    outbox: Outbox,
}

impl Keeper {
    fn record_locally(&self, reservation: &Reservation, tokens: &Tokens) {
        if let Err(err) = self.budget.record(reservation, tokens) {
            crate::term::warn(&format!(
                "relay: could not record tokens in the budget: {err:#}"
            ));
        }
    }

    fn run(mut self, receiver: &mpsc::Receiver<Message>) {
        loop {
            let first = match receiver.recv_timeout(BLOCK_LIFE) {
                Ok(message) => Some(message),
                Err(mpsc::RecvTimeoutError::Timeout) => None,
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            };
            let mut batch = Vec::new();
            let mut stop = false;
            let mut take = |message| match message {
                Message::Call(call) => batch.push(*call),
                Message::Stop => stop = true,
            };
            if let Some(first) = first {
                take(first);
                // Let a burst gather: one write for everything that comes within a moment.
                let until = Instant::now() + GATHER;
                while let Some(left) = until.checked_duration_since(Instant::now()) {
                    match receiver.recv_timeout(left) {
                        Ok(message) => take(message),
                        Err(_) => break,
                    }
                }
            }
            self.write(batch);
            self.keep_up();
            {
                let mut pool = self
                    .pool
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                if stop || pool.taken_at.elapsed() >= BLOCK_LIFE {
                    pool.give_back(&self.budget);
                }
            }
            if stop {
                self.outbox.abandon();
                return;
            }
        }
        self.outbox.abandon();
        self.pool
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .give_back(&self.budget);
    }

    /// On a shared store: rejoins it if it forgot (at most every second), and sends what
    /// waits for it.
    fn keep_up(&mut self) {
        let Some(shared) = store::shared() else {
            return;
        };
        let today = crate::state::budget::today();
        if let Err(down) = epoch::watch(shared, self.budget.state_dir(), &today) {
            crate::term::debug(&format!("relay: the shared store's epoch: {down}"));
        }
        self.outbox.deliver(shared, self.budget.state_dir());
    }

    fn write(&mut self, batch: Vec<Finished>) {
        if batch.is_empty() {
            return;
        }
        let mut lines = Vec::new();
        // Per day, client and the epoch each call was reserved in.
        let mut spent: BTreeMap<(String, Option<String>, u64), Tokens> = BTreeMap::new();
        for call in &batch {
            if let Ok(line) = serde_json::to_string(&call.record) {
                lines.push(line);
            }
            *spent
                .entry((call.record.day.clone(), call.client.clone(), call.epoch))
                .or_default() += &call.record.tokens;
        }
        match store::shared() {
            None => {
                // One write with O_APPEND: the lines land together, never interleaved with
                // another process's.
                if let Err(err) = self.ledger.append_lines(&lines) {
                    crate::term::warn(&format!("relay: could not write the ledger: {err:#}"));
                }
                for ((day, client, epoch), tokens) in spent {
                    let reservation = Reservation {
                        day,
                        client,
                        epoch,
                        id: String::new(),
                    };
                    self.record_locally(&reservation, &tokens);
                }
            }
            Some(shared) => {
                // This process does not rejoin between writing these lines and naming the
                // epoch their tokens are owed to: a rejoin after reads them in the ledger
                // (and the parcel, named for an epoch the store left, owes nothing).
                let counting = epoch::counting(shared, self.budget.state_dir());
                let now = counting.epoch();
                match self.ledger.append_local(&lines) {
                    // Each line names its reservation: from now on the line counts the call
                    // (until then its reservation does).
                    Ok(()) => reserved::journal(self.budget.state_dir()).settle(
                        batch
                            .iter()
                            .filter_map(|call| call.record.reservation.as_deref()),
                    ),
                    Err(err) => {
                        crate::term::warn(&format!("relay: could not write the ledger: {err:#}"));
                    }
                }
                let mut owed = Vec::new();
                for ((day, client, epoch), tokens) in spent {
                    if epoch == 0 {
                        // Reserved on this machine's files (the store was away).
                        self.record_locally(
                            &Reservation {
                                day,
                                client,
                                epoch,
                                id: String::new(),
                            },
                            &tokens,
                        );
                        continue;
                    }
                    owed.push(Owed {
                        day,
                        client,
                        epoch: now,
                        tokens: tokens.total(),
                    });
                }
                self.outbox.add(now, lines, owed);
                drop(counting);
                self.outbox.deliver(shared, self.budget.state_dir());
            }
        }
        let mut current: Option<crate::state::health::HealthFile> = None;
        for call in batch {
            if let Some(claim) = &call.release {
                super::gate::release(&self.health, claim);
            }
            let Some((targets, outcome)) = call.health else {
                continue;
            };
            for target in targets {
                if outcome.class == ErrorClass::Ok {
                    let fresh = self
                        .last_ok
                        .get(&target)
                        .is_some_and(|at| at.elapsed() < OK_REFRESH);
                    // Written good lately, and nobody (a launch's probe) has said otherwise.
                    let mut still_ok = || {
                        current
                            .get_or_insert_with(|| self.health.load())
                            .targets
                            .get(&target)
                            .is_some_and(|h| h.class == ErrorClass::Ok)
                    };
                    if fresh && still_ok() {
                        continue;
                    }
                    self.last_ok.insert(target.clone(), Instant::now());
                } else {
                    self.last_ok.remove(&target);
                }
                self.health.record(&target, &outcome, &self.policy);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_sums_saturate_instead_of_wrapping() {
        // What a hand-edited ledger line, or an upstream past the per-field clamp, could hold.
        let huge = Tokens {
            input: u64::MAX,
            output: u64::MAX,
            cache_read: 1,
            ..Tokens::default()
        };
        assert_eq!(huge.total(), u64::MAX);
        let mut day = Tokens::default();
        day += &huge;
        day += &huge;
        assert_eq!(
            (day.input, day.output, day.cache_read),
            (u64::MAX, u64::MAX, 2)
        );
    }
}
