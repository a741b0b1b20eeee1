//! Checking many rungs at once, for real (`--status`, `--check-fallback`): every rung
//! asked, none skipped because another already answered, the cache and cooldowns ignored —
//! except a CLI's own check, which runs at most once per `self_check_cache_seconds`
//! (it spends the user's plan), and a parked login, which is not run into its wall.
//! Results arrive as each check ends; each is recorded in health, and judged by the one
//! rule ([`crate::launch::rung_state::state`]). Rungs that share a target share its probe;
//! rungs whose CLI's own check would run the same command (one login, one model:
//! [`crate::launch::self_check::key`]) share that check, and its finding is recorded for each.

use std::collections::{HashMap, HashSet};
use std::sync::mpsc;

use crate::config::Config;
use crate::launch::known::{self, Judge};
use crate::launch::parking::Parking;
use crate::launch::rung::Rung;
use crate::launch::rung_state::{Check, RungState};
use crate::probe::{self, Outcome};
use crate::state::health::{self, Proof, Store};
use crate::state::meter::Meter;

/// One rung's finding: its index in the table (0-based) and its state now.
pub struct Finding {
    pub index: usize,
    pub state: RungState,
}

/// What one check of a target needs: a probe, or the CLI's own check of a rung.
enum Work {
    Probe(Box<probe::ProbePlan>),
    SelfCheck(usize),
}

/// Checks `rungs` in parallel and sends each finding as soon as it is known. A target
/// shared by two rungs is called once and reported for both, and so is a CLI's own check
/// two rungs would run alike. Returns when every finding was sent. `dir`: where a CLI's own
/// check runs (a launch's directory).
pub fn check_all(
    config: &Config,
    store: &Store,
    meter: &Meter,
    rungs: &[Rung],
    dir: &std::path::Path,
    found: &mpsc::Sender<Finding>,
) {
    let judge = Judge {
        config,
        health: store.load(),
        now_ms: health::now_ms(),
    };
    let parking = Parking::new(store.state_dir());
    let now = jiff::Timestamp::now();
    let (tx, rx) = mpsc::channel::<(String, Outcome)>();
    // Per call (a probe's target, a self-check's key): the rungs it answers for, each with
    // the health target a self-check's finding is recorded under (a probe records its own).
    let mut waiting: HashMap<String, Vec<(usize, Option<String>)>> = HashMap::new();
    std::thread::scope(|scope| {
        for (position, rung) in rungs.iter().enumerate() {
            let park = known::park(config, &parking, rung, now);
            let Some(work) = work_of(&judge, rung, position, park.as_ref(), dir) else {
                let state = judge.state(rung, None, park.as_ref());
                let _ = found.send(Finding {
                    index: rung.index - 1,
                    state,
                });
                continue;
            };
            let (call, record_under) = call_of(rung, &work);
            let first = !waiting.contains_key(&call);
            waiting
                .entry(call.clone())
                .or_default()
                .push((position, record_under));
            if !first {
                continue;
            }
            let tx = tx.clone();
            let policy = config.policy();
            match work {
                Work::Probe(plan) => {
                    let (store, meter) = (store.clone(), meter.clone());
                    scope.spawn(move || {
                        let outcome = probe::run_and_record(&store, &plan, &meter, &policy);
                        let _ = tx.send((call, outcome));
                    });
                }
                Work::SelfCheck(position) => {
                    let rung = &rungs[position];
                    let parking = &parking;
                    scope.spawn(move || {
                        let finding = crate::launch::self_check::run(
                            rung,
                            parking,
                            dir,
                            store.state_dir(),
                            config.self_check_timeout(),
                            meter,
                        );
                        let _ = tx.send((call, finding.outcome));
                    });
                }
            }
        }
        drop(tx);
        let answers = Answers {
            config,
            store,
            judge: &judge,
            parking: &parking,
            rungs,
        };
        answers.send_as_they_come(&rx, waiting, found);
    });
}

/// What checking `rung` (at `position` in the list) takes, if anything: a rung parked,
/// unusable or still proved by its last check of its CLI's own is not called.
fn work_of(
    judge: &Judge,
    rung: &Rung,
    position: usize,
    park: Option<&crate::launch::rung_state::Park>,
    dir: &std::path::Path,
) -> Option<Work> {
    match (known::check_of(rung), &rung.state) {
        (Ok(Check::Probe | Check::Command), Ok(ready)) if park.is_none() => {
            Some(Work::Probe(Box::new(ready.plan.clone())))
        }
        (Ok(Check::SelfCheck), Ok(_)) if park.is_none() => {
            // The one rule says whether the last check still proves it (within
            // self_check_cache_seconds, with no failed launch since).
            // A folder a launch would be refused in is a fact of this folder,
            // which no answer given elsewhere stands for.
            let cached = matches!(
                judge.state(rung, None, None),
                RungState::Ok {
                    proof: Proof::SelfCheck,
                    ..
                }
            ) && !crate::launch::self_check::refused_in(rung, dir);
            (!cached).then_some(Work::SelfCheck(position))
        }
        _ => None,
    }
}

/// The call `work` makes (a probe's target, a self-check's key: rungs that would make the
/// same one share it), and the health target a self-check's finding is recorded under (a
/// probe records its own).
fn call_of(rung: &Rung, work: &Work) -> (String, Option<String>) {
    match work {
        Work::Probe(plan) => (plan.target.clone(), None),
        Work::SelfCheck(_) => {
            let target = rung
                .state
                .as_ref()
                .map_or_else(|_| String::new(), |ready| ready.plan.target.clone());
            // A rung whose check cannot be said is checked alone (its own target).
            let key = crate::launch::self_check::key(rung)
                .map_or_else(|| target.clone(), |key| format!("self_check {key}"));
            (key, Some(target))
        }
    }
}

/// What the answers of the calls are judged with.
struct Answers<'a> {
    config: &'a Config,
    store: &'a Store,
    judge: &'a Judge<'a>,
    parking: &'a Parking,
    rungs: &'a [Rung<'a>],
}

impl Answers<'_> {
    /// Sends the finding of every rung `waiting` on a call as that call answers.
    fn send_as_they_come(
        &self,
        rx: &mpsc::Receiver<(String, Outcome)>,
        mut waiting: HashMap<String, Vec<(usize, Option<String>)>>,
        found: &mpsc::Sender<Finding>,
    ) {
        let policy = self.config.policy();
        while !waiting.is_empty() {
            let Ok((call, outcome)) = rx.recv() else {
                break;
            };
            let mut recorded = HashSet::new();
            for (position, record_under) in waiting.remove(&call).unwrap_or_default() {
                // The one check proved every rung that would have run it.
                if let Some(target) = record_under
                    && recorded.insert(target.clone())
                {
                    self.store
                        .record_as(&target, &outcome, &policy, Proof::SelfCheck);
                }
                let rung = &self.rungs[position];
                // A check that hit the window parks the rung, as a launch would read it.
                let park = known::park(self.config, self.parking, rung, jiff::Timestamp::now());
                let fresh = if park.is_some() { None } else { Some(&outcome) };
                let state = self.judge.state(rung, fresh, park.as_ref());
                let _ = found.send(Finding {
                    index: rung.index - 1,
                    state,
                });
            }
        }
    }
}
