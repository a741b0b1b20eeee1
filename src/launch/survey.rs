//! Probing many rungs at once, for real, ignoring the cache and cooldowns (`--status`,
//! `--check-fallback`): every rung asked, none skipped because another already answered.
//! Results arrive as each probe ends; each is recorded in health, refreshing it.

use std::collections::HashMap;
use std::sync::mpsc;
use std::time::Duration;

use crate::config::Config;
use crate::launch::cascade::{Good, Status};
use crate::launch::rung::Rung;
use crate::probe::{self, Call};
use crate::state::health::Store;
use crate::state::meter::Meter;

/// One rung's finding: its index in the table (0-based) and what was found.
pub struct Finding {
    pub index: usize,
    pub status: Status,
}

/// Probes `rungs` in parallel and sends each finding as soon as it is known. A target shared
/// by two rungs is called once and reported for both. Returns when every finding was sent.
pub fn probe_all(
    config: &Config,
    store: &Store,
    meter: &Meter,
    rungs: &[Rung],
    found: &mpsc::Sender<Finding>,
) {
    let (tx, rx) = mpsc::channel::<(String, probe::Outcome)>();
    let mut waiting: HashMap<String, Vec<usize>> = HashMap::new();
    for rung in rungs {
        let index = rung.index - 1;
        let ready = match &rung.state {
            Err(unusable) => {
                let status = Status::Failed {
                    class: unusable.class,
                    reason: unusable.reason.clone(),
                    skip: unusable.skip,
                };
                let _ = found.send(Finding { index, status });
                continue;
            }
            Ok(ready) => ready,
        };
        if matches!(ready.plan.call, Call::None) {
            let status = Status::Good {
                how: Good::Unprobed,
                reason: ready.plan.unprobed_reason(),
                latency: None,
            };
            let _ = found.send(Finding { index, status });
            continue;
        }
        let target = ready.plan.target.clone();
        let first = !waiting.contains_key(&target);
        waiting.entry(target).or_default().push(index);
        if first {
            let plan = ready.plan.clone();
            let tx = tx.clone();
            let store = store.clone();
            let meter = meter.clone();
            let policy = config.policy();
            std::thread::spawn(move || {
                let outcome = crate::probe::run_and_record(&store, &plan, &meter, &policy);
                let _ = tx.send((plan.target, outcome));
            });
        }
    }
    drop(tx);
    while !waiting.is_empty() {
        let Ok((target, outcome)) = rx.recv() else {
            break;
        };
        for index in waiting.remove(&target).unwrap_or_default() {
            let _ = found.send(Finding {
                index,
                status: Status::of_probe(&outcome),
            });
        }
    }
}

/// `(312 ms)` for a probe's latency.
pub fn latency_note(latency: Option<Duration>) -> String {
    latency.map_or_else(String::new, |l| format!(" ({} ms)", l.as_millis()))
}
