//! Choosing a rung (DESIGN.md §5): health first (cooling rungs are skipped and fresh good
//! ones trusted, without a call), then probes — hedged, so a vendor that hangs costs one
//! probe timeout rather than one per rung. The winner is the first rung in table order that
//! answered once every rung above it has failed.

use std::collections::HashMap;
use std::ffi::OsString;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::config::Config;
use crate::error_class::ErrorClass;
use crate::launch::known::{self, Judge};
use crate::launch::parking::Parking;
use crate::launch::resolve;
use crate::launch::rung::{self, Rung};
use crate::launch::rung_state::{Action, Park, RungState};
use crate::probe::Outcome;
use crate::state::health::{self, Store, Verdict};
use crate::state::meter::Meter;

/// What is known about one rung.
#[derive(Debug, Clone)]
pub enum Status {
    /// Usable: trusted from health, probed now, or unprobed by configuration.
    Good {
        how: Good,
        reason: String,
        latency: Option<Duration>,
    },
    /// Not usable now. `skip`: a built-in rung whose CLI is not installed.
    Failed {
        class: ErrorClass,
        reason: String,
        skip: bool,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Good {
    Trusted,
    Probed,
    /// `probe = { kind = "none" }`.
    Unprobed,
    /// The budget refused the probe: run unprobed, the fast-fail net still guards it.
    BudgetUnprobed,
}

impl Status {
    /// What a probe's outcome says: good, or failed with its class.
    pub fn of_probe(outcome: &Outcome) -> Status {
        if outcome.is_ok() {
            Status::Good {
                how: Good::Probed,
                reason: outcome.reason.clone(),
                latency: Some(outcome.latency),
            }
        } else {
            Status::Failed {
                class: outcome.class,
                reason: outcome.reason.clone(),
                skip: false,
            }
        }
    }

    /// What a launch makes of a rung in `state`, once [`RungState::launch_action`] said
    /// to run it (`run`) or to pass over it.
    pub fn of_state(state: &RungState, run: bool, now_ms: u64) -> Status {
        if run {
            let (how, reason, latency) = match state {
                RungState::Ok {
                    fresh: true,
                    reason,
                    latency_ms,
                    ..
                } => (
                    Good::Probed,
                    reason.clone(),
                    latency_ms.map(Duration::from_millis),
                ),
                RungState::Ok { reason, .. } => (Good::Trusted, reason.clone(), None),
                RungState::Budget { reason } => (Good::BudgetUnprobed, reason.clone(), None),
                other => (Good::Unprobed, other.describe(now_ms), None),
            };
            return Status::Good {
                how,
                reason,
                latency,
            };
        }
        let (reason, skip) = match state {
            RungState::Parked { reason, .. }
            | RungState::Cooling { reason, .. }
            | RungState::Failed { reason, .. } => (reason.clone(), false),
            RungState::Skipped {
                why, not_installed, ..
            } => (why.clone(), *not_installed),
            // Its class (`unproved`) already says it is not proved; the reason is why.
            RungState::NotProved { why, .. } => (why.clone(), false),
            other => (other.describe(now_ms), false),
        };
        Status::Failed {
            class: state.class(),
            reason,
            skip,
        }
    }

    pub fn is_good(&self) -> bool {
        matches!(self, Status::Good { .. })
    }

    pub fn reason(&self) -> &str {
        match self {
            Status::Good { reason, .. } | Status::Failed { reason, .. } => reason,
        }
    }
}

/// The result of one choice: the winner (0-based), and every rung passed over on the way.
#[derive(Debug)]
pub struct Choice {
    pub winner: Option<usize>,
    pub passed: Vec<(usize, Status)>,
    pub winner_status: Option<Status>,
}

#[derive(Debug, Clone)]
enum Slot {
    Unresolved,
    Known(Status),
    NeedsProbe,
    Waiting(String),
}

enum Probe {
    Running,
    Done(Outcome),
}

pub struct Cascade<'a> {
    config: &'a Config,
    store: Store,
    meter: Meter,
    judge: Judge<'a>,
    parking: Parking,
    rungs: Vec<Option<Rung<'a>>>,
    /// Probes this process started, by target: a target shared by two rungs is called once.
    probes: HashMap<String, Probe>,
    tx: mpsc::Sender<(String, Outcome)>,
    rx: mpsc::Receiver<(String, Outcome)>,
    /// The user's words for a launch: a rung whose CLI cannot take them is passed over
    /// before it is probed or run.
    args: Option<Vec<OsString>>,
    /// The session those words resume, when they do: only its own rung can take them.
    resuming: Option<rung::Resuming>,
    /// The rungs this launch already ran (or could not start), with why: never chosen
    /// again by it, and no cover for a rung above.
    tried: HashMap<usize, String>,
}

impl<'a> Cascade<'a> {
    pub fn new(config: &'a Config, store: Store, meter: Meter) -> Cascade<'a> {
        let judge = Judge {
            config,
            health: store.load(),
            now_ms: health::now_ms(),
        };
        let parking = Parking::new(store.state_dir());
        let (tx, rx) = mpsc::channel();
        Cascade {
            config,
            store,
            meter,
            judge,
            parking,
            rungs: vec![None; config.rungs.len()],
            probes: HashMap::new(),
            tx,
            rx,
            args: None,
            resuming: None,
            tried: HashMap::new(),
        }
    }

    /// Rung `index` ran in this launch and failed (`reason`), or could not start: it is
    /// passed over from now on, so a later choice can look above it again.
    pub fn tried(&mut self, index: usize, reason: &str) {
        self.tried.insert(index, reason.to_string());
    }

    /// Whether this launch already ran rung `index` (see [`Cascade::tried`]).
    pub fn was_tried(&self, index: usize) -> bool {
        self.tried.contains_key(&index)
    }

    /// Health and the clock as they are now, for a choice made again later in the same
    /// launch (a `--wait`): what this process found itself still holds.
    pub fn refresh(&mut self) {
        self.judge.health = self.store.load();
        self.judge.now_ms = health::now_ms();
    }

    /// For a launch of `args`: each rung is judged by whether its CLI can take them.
    #[must_use]
    pub fn for_args(mut self, args: &[OsString]) -> Cascade<'a> {
        self.args = Some(args.to_vec());
        self
    }

    /// The same launch with other words (a hand-off's first prompt, a resume's): which
    /// rungs can take them is judged again as each is next looked at; what is known of
    /// health, probes and windows stays.
    pub fn retarget(&mut self, args: &[OsString], resuming: Option<rung::Resuming>) {
        self.args = Some(args.to_vec());
        self.resuming = resuming;
        self.rungs.fill(None);
    }

    /// Everything as it is now, for a choice made again from the top: health, the clock
    /// and the windows (a rung's login is chosen again), with no probe and no run of this
    /// launch held against a rung — after a wait, or once a session moved on.
    pub fn start_over(&mut self) {
        self.refresh();
        self.rungs.fill(None);
        self.probes.clear();
        self.tried.clear();
    }

    /// Whether any rung below `index` (0-based) could still run, as far as is known without
    /// a call: the one answer to "is this the last rung that could run", which a parking
    /// before the wall and a spent quota both ask.
    pub fn below_could_run(&mut self, index: usize) -> bool {
        let now = jiff::Timestamp::now();
        (index + 1..self.config.rungs.len()).any(|below| self.could_run(below, now))
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    pub fn parking(&self) -> &Parking {
        &self.parking
    }

    /// The resolved rung at `index` (0-based), resolving it on first use.
    pub fn rung(&mut self, index: usize) -> &Rung<'a> {
        if self.rungs[index].is_none() {
            let def = &self.config.rungs[index];
            // A session being resumed runs on its own login of a pool, not the pool's choice.
            let pinned = self
                .resuming
                .as_ref()
                .filter(|resuming| resuming.index == index && !def.logins.is_empty())
                .and_then(|resuming| resuming.login.as_deref())
                .and_then(|login| resolve::resolve_on_login(self.config, index + 1, def, login));
            let mut rung = pinned.unwrap_or_else(|| resolve::resolve(self.config, index + 1, def));
            if let (Some(args), Ok(_)) = (&self.args, &rung.state)
                && let Some(reason) = self.refusal(index, &rung, args)
            {
                rung.state = Err(rung::Unusable {
                    class: ErrorClass::BadArguments,
                    reason,
                    skip: false,
                });
            }
            self.rungs[index] = Some(rung);
        }
        self.rungs[index].as_ref().expect("resolved above")
    }

    /// Why rung `index` cannot take the launch's words `args`, if it cannot: its CLI refuses
    /// them, or they resume a session of another rung's.
    fn refusal(&self, index: usize, rung: &Rung, args: &[OsString]) -> Option<String> {
        let resume = match &self.resuming {
            Some(resuming) if resuming.index != index => {
                return Some(format!(
                    "the session being resumed is rung {}'s: passed over",
                    resuming.index + 1
                ));
            }
            Some(resuming)
                if resuming.login.is_some() && login_key(rung) != resuming.login.as_deref() =>
            {
                return Some(format!(
                    "the session being resumed ran on another of its logins ({}): passed over",
                    resuming.login.as_deref().unwrap_or_default()
                ));
            }
            resuming => resuming.as_ref().map(|resuming| resuming.id.as_str()),
        };
        rung.translate_resuming(args, resume)
            .err()
            .map(|refusal| refusal.to_string())
    }

    /// Chooses the first usable rung at or after `start`.
    pub fn choose(&mut self, start: usize) -> Choice {
        let count = self.config.rungs.len();
        let mut slots: Vec<Slot> = vec![Slot::Unresolved; count];
        let mut last_start: Option<Instant> = None;
        let hedge = self.config.hedge;
        loop {
            let frontier =
                (start..count).find(|&i| !matches!(&slots[i], Slot::Known(Status::Failed { .. })));
            let Some(frontier) = frontier else {
                return Self::finish(start, None, &slots);
            };
            if matches!(slots[frontier], Slot::Unresolved) {
                slots[frontier] = self.evaluate(frontier);
                continue;
            }
            match slots[frontier].clone() {
                Slot::Known(Status::Good { .. }) => {
                    return Self::finish(start, Some(frontier), &slots);
                }
                Slot::Known(Status::Failed { .. }) | Slot::Unresolved => {}
                Slot::NeedsProbe => {
                    if self.start_probe(frontier) {
                        last_start = Some(Instant::now());
                    }
                    slots[frontier] = Slot::Waiting(self.target(frontier));
                }
                Slot::Waiting(_) => {
                    let deadline = last_start.map_or_else(Instant::now, |at| at + hedge);
                    if Instant::now() >= deadline {
                        if let Some(next) = self.hedge_candidate(frontier, &mut slots) {
                            crate::term::debug(&format!(
                                "rung {} has not answered within {} ms: probing rung {} alongside",
                                frontier + 1,
                                hedge.as_millis(),
                                next + 1
                            ));
                            if self.start_probe(next) {
                                last_start = Some(Instant::now());
                            }
                            slots[next] = Slot::Waiting(self.target(next));
                            continue;
                        }
                        // Nothing left to hedge with: wait for the answers already asked for.
                        last_start = None;
                        self.wait(&mut slots, None);
                    } else {
                        self.wait(&mut slots, Some(deadline));
                    }
                }
            }
        }
    }

    /// The next rung below `frontier` worth probing early, if none below it is already good.
    fn hedge_candidate(&mut self, frontier: usize, slots: &mut [Slot]) -> Option<usize> {
        for (next, slot) in slots.iter_mut().enumerate().skip(frontier + 1) {
            if matches!(slot, Slot::Unresolved) {
                *slot = self.evaluate(next);
            }
            match slot {
                Slot::NeedsProbe => return Some(next),
                Slot::Known(Status::Good { .. }) => return None,
                _ => {}
            }
        }
        None
    }

    /// Waits for one probe answer (until `deadline`, if given) and applies it to every rung
    /// that was waiting on that target.
    fn wait(&mut self, slots: &mut [Slot], deadline: Option<Instant>) {
        let received = match deadline {
            Some(deadline) => self
                .rx
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
                .ok(),
            None => self.rx.recv().ok(),
        };
        let Some((target, outcome)) = received else {
            return;
        };
        for slot in slots.iter_mut() {
            if matches!(slot, Slot::Waiting(t) if *t == target) {
                *slot = Slot::Known(status_of(&outcome));
            }
        }
        self.probes.insert(target, Probe::Done(outcome));
    }

    fn target(&mut self, index: usize) -> String {
        match &self.rung(index).state {
            Ok(ready) => ready.plan.target.clone(),
            Err(_) => String::new(),
        }
    }

    /// What can be said of a rung without a new call: its state by the one rule, and what
    /// a launch does with it.
    fn evaluate(&mut self, index: usize) -> Slot {
        if let Some(reason) = self.tried.get(&index) {
            return Slot::Known(Status::Failed {
                class: ErrorClass::Fastfail,
                reason: reason.clone(),
                skip: false,
            });
        }
        let now_ms = health::now_ms();
        let rung = self.rung(index).clone();
        let target = rung
            .state
            .as_ref()
            .ok()
            .map(|ready| ready.plan.target.clone());
        let fresh = match target.as_ref().and_then(|t| self.probes.get(t)) {
            Some(Probe::Done(outcome)) => Some(outcome.clone()),
            Some(Probe::Running) => return Slot::Waiting(target.unwrap_or_default()),
            None => None,
        };
        let parked = if fresh.is_none() {
            self.parked(index)
        } else {
            None
        };
        let state = self.judge.state(&rung, fresh.as_ref(), parked.as_ref());
        let action = state.launch_action(known::check_of(&rung).ok().as_ref());
        crate::term::debug(&format!(
            "rung {}: {}: {} — {}",
            index + 1,
            rung.label(),
            state.as_str(),
            state.describe(now_ms)
        ));
        match action {
            Action::Probe => Slot::NeedsProbe,
            Action::Run => Slot::Known(Status::of_state(&state, true, now_ms)),
            Action::Pass => Slot::Known(Status::of_state(&state, false, now_ms)),
        }
    }

    /// Rung `index` parked by its login's windows (no call is made). Parked before the wall
    /// (`park_at_percent`), the last rung that could run is not parked; a full window
    /// parks it all the same.
    fn parked(&mut self, index: usize) -> Option<Park> {
        let now = jiff::Timestamp::now();
        let rung = self.rung(index).clone();
        if let Ok(ready) = &rung.state {
            // Asking the CLI stands in for the probe a subscription login never gets,
            // bounded like one. A passing check or launch says nothing of how full the
            // window is now, so it does not stand in the way: the window sources keep
            // their own freshness throttle, and the newest reading wins (a window that
            // filled after the check parks). Only a cooling target, skipped anyway, is not
            // asked.
            let due = !matches!(
                self.judge.health.verdict(
                    &ready.plan.target,
                    self.config.probe_cache,
                    health::now_ms()
                ),
                Verdict::Cooling { .. }
            );
            if due {
                crate::launch::ask_windows::ask(
                    self.config,
                    &rung,
                    self.store.state_dir(),
                    now,
                    crate::launch::ask_windows::Occasion::Launch,
                );
            }
        }
        let park = known::park(self.config, &self.parking, &rung, now)?;
        if !park.applies(|| self.below_could_run(index)) {
            crate::term::debug(&format!(
                "rung {}: {}: {}, but no rung below could run: not parked",
                index + 1,
                rung.label(),
                park.reason
            ));
            return None;
        }
        Some(park)
    }

    /// Whether rung `index`'s login is parked now, by what is known of its windows — even
    /// where it would run as the last rung standing.
    pub fn parked_now(&mut self, index: usize) -> bool {
        let rung = self.rung(index).clone();
        known::park(self.config, &self.parking, &rung, jiff::Timestamp::now()).is_some()
    }

    /// Whether rung `index` could run, as far as is known without a call: ready, not
    /// parked, not cooling down, not already run by this launch.
    fn could_run(&mut self, index: usize, now: jiff::Timestamp) -> bool {
        if self.was_tried(index) {
            return false;
        }
        let rung = self.rung(index).clone();
        let fresh = match rung
            .state
            .as_ref()
            .ok()
            .and_then(|r| self.probes.get(&r.plan.target))
        {
            Some(Probe::Done(outcome)) => Some(outcome.clone()),
            _ => None,
        };
        let park = known::park(self.config, &self.parking, &rung, now);
        self.judge
            .state(&rung, fresh.as_ref(), park.as_ref())
            .could_run()
    }

    /// Starts the probe of rung `index` on its own thread. False when its target is already
    /// being probed (the rung joins that probe instead).
    fn start_probe(&mut self, index: usize) -> bool {
        let Ok(ready) = &self.rung(index).state else {
            return false;
        };
        let plan = ready.plan.clone();
        if self.probes.contains_key(&plan.target) {
            return false;
        }
        crate::term::debug(&format!("rung {}: probing {}", index + 1, plan.target));
        self.probes.insert(plan.target.clone(), Probe::Running);
        let tx = self.tx.clone();
        let store = self.store.clone();
        let meter = self.meter.clone();
        let policy = self.config.policy();
        std::thread::spawn(move || {
            let outcome = crate::probe::run_and_record(&store, &plan, &meter, &policy);
            let _ = tx.send((plan.target, outcome));
        });
        true
    }

    fn finish(start: usize, winner: Option<usize>, slots: &[Slot]) -> Choice {
        let end = winner.unwrap_or(slots.len());
        let passed = (start..end)
            .filter_map(|i| match &slots[i] {
                Slot::Known(status) => Some((i, status.clone())),
                _ => None,
            })
            .collect();
        let winner_status = winner.and_then(|w| match &slots[w] {
            Slot::Known(status) => Some(status.clone()),
            _ => None,
        });
        Choice {
            winner,
            passed,
            winner_status,
        }
    }
}

fn status_of(outcome: &Outcome) -> Status {
    if outcome.class == ErrorClass::Budget {
        // With the budget spent a launch still runs: unprobed, guarded by the second net.
        return Status::Good {
            how: Good::BudgetUnprobed,
            reason: outcome.reason.clone(),
            latency: None,
        };
    }
    Status::of_probe(outcome)
}

impl Cascade<'_> {
    /// How many rungs the table has.
    pub fn len(&self) -> usize {
        self.rungs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rungs.is_empty()
    }
}

/// The key of the login `rung` runs on, when it runs on one.
fn login_key<'r>(rung: &'r Rung) -> Option<&'r str> {
    let ready = rung.state.as_ref().ok()?;
    ready.login.as_ref().map(|login| login.key.as_str())
}
