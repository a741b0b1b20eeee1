//! Each rung's state as already known, with no call made: what health, the windows and
//! the table say right now (the dashboard's rung table; `--status` probes instead). The
//! same rules as a launch's choice ([`super::cascade`]): not installed is skipped, a login
//! past its mark is parked unless no rung below could run, a cooling target or an open
//! breaker is skipped, a fresh good probe is trusted, anything else would be probed.

use crate::config::Config;
use crate::launch::parking::{Decision, Parking};
use crate::launch::rung::{self, Rung};
use crate::probe::Call;
use crate::state::health::{self, Breaker, Store, Verdict};

/// What is known of a rung now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum State {
    /// Probed OK within `probe_cache_seconds`: a launch uses it without a call.
    Ok,
    /// `probe = { kind = "none" }`: run without a probe.
    Unprobed,
    /// Nothing recent: a launch would probe it.
    Unknown,
    /// Its login's window is past the mark: skipped with no call until the reset.
    Parked { until_ms: Option<u64> },
    /// A cooldown after a failure: skipped with no call until then (`None`: until the
    /// configuration changes).
    Cooling { until_ms: Option<u64> },
    /// The circuit breaker is open after repeated failures.
    BreakerOpen { until_ms: u64 },
    /// Cannot run at all (not installed, no credential…).
    Skipped,
}

impl State {
    pub fn as_str(&self) -> &'static str {
        match self {
            State::Ok => "ok",
            State::Unprobed => "unprobed",
            State::Unknown => "unknown",
            State::Parked { .. } => "parked",
            State::Cooling { .. } => "cooling",
            State::BreakerOpen { .. } => "breaker_open",
            State::Skipped => "skipped",
        }
    }

    /// Until when a launch passes over it, if it does.
    pub fn until_ms(&self) -> Option<u64> {
        match self {
            State::Parked { until_ms } | State::Cooling { until_ms } => *until_ms,
            State::BreakerOpen { until_ms } => Some(*until_ms),
            _ => None,
        }
    }

    /// Whether a launch would run it (after a probe, for `Unknown`).
    pub fn could_run(&self) -> bool {
        matches!(self, State::Ok | State::Unprobed | State::Unknown)
    }
}

/// One rung as known now.
#[derive(Debug)]
pub struct Known<'a> {
    pub rung: Rung<'a>,
    pub state: State,
    /// Why, in one line (the health's reason, the window, the missing binary).
    pub reason: String,
    /// Unix milliseconds of the last probe or launch verdict of its target.
    pub checked_ms: Option<u64>,
    pub latency_ms: Option<u64>,
    /// The rung a launch would start from now (the first that could run).
    pub would_pick: bool,
}

/// Every rung of the table, as known now. Reads health and the windows; calls and writes
/// nothing.
pub fn rungs(config: &Config) -> Vec<Known<'_>> {
    let state_dir = crate::paths::state_dir();
    let health = Store::new(&state_dir).load();
    // Looking writes nothing: what a launch would park is shown, and remembered by it.
    let parking = Parking::read_only(&state_dir);
    let now = jiff::Timestamp::now();
    let now_ms = health::now_ms();
    let mut known: Vec<Known> = config
        .rungs
        .iter()
        .enumerate()
        .map(|(i, def)| {
            let rung = rung::resolve(config, i + 1, def);
            let (mut reason, mut checked_ms, mut latency_ms) = (String::new(), None, None);
            let state = match &rung.state {
                Err(unusable) => {
                    reason.clone_from(&unusable.reason);
                    State::Skipped
                }
                Ok(ready) if matches!(ready.plan.call, Call::None) => {
                    reason = ready.plan.unprobed_reason();
                    State::Unprobed
                }
                Ok(ready) => {
                    let target = &ready.plan.target;
                    if let Some(seen) = health.targets.get(target) {
                        checked_ms = Some(seen.checked_ms);
                        latency_ms = seen.latency_ms;
                        reason.clone_from(&seen.reason);
                    }
                    match health.verdict(target, config.probe_cache, now_ms) {
                        Verdict::Trusted { .. } => State::Ok,
                        Verdict::Unknown => State::Unknown,
                        Verdict::Cooling {
                            reason: why,
                            until_ms,
                            ..
                        } => {
                            let breaker_open = health.targets.get(target).is_some_and(|t| {
                                matches!(t.breaker, Breaker::Open { until_ms, .. } if until_ms > now_ms)
                            });
                            reason = why;
                            match until_ms {
                                Some(until_ms) if breaker_open => State::BreakerOpen { until_ms },
                                _ => State::Cooling { until_ms },
                            }
                        }
                    }
                }
            };
            Known {
                rung,
                state,
                reason,
                checked_ms,
                latency_ms,
                would_pick: false,
            }
        })
        .collect();
    // Parking, bottom-up: the last rung that could run is never parked.
    let mut below_could_run = false;
    for entry in known.iter_mut().rev() {
        if entry.state != State::Skipped
            && let Decision::Park { window, reason } = parking.check(config, &entry.rung, now)
            && below_could_run
        {
            entry.state = State::Parked {
                until_ms: u64::try_from(window.resets_at.as_millisecond()).ok(),
            };
            entry.reason = reason;
        }
        below_could_run |= entry.state.could_run();
    }
    if let Some(first) = known.iter_mut().find(|k| k.state.could_run()) {
        first.would_pick = true;
    }
    known
}
