//! The relay's gate: before a call goes upstream, what the shared health says about the
//! upstream it would use. A rate limit or quota whose cooldown is still running, or an open
//! breaker, turns the call away without sending anything — whichever relay replica (or
//! launch) learned it, since they all share `health.json` (or the store behind it).
//!
//! When the cooldown or the breaker's backoff is over, exactly one call goes through as the
//! half-open probe: the replica that sends it stamps a claim in the target's record under
//! the store's lock, and every other call, on any replica, is turned away until that call's
//! answer replaces the record (restoring the target, or starting a new cooldown).
//!
//! Health is read at most [`FRESH_FOR`] old, so a cooldown another replica writes is
//! honoured well within a second of its answer.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::error_class::ErrorClass;
use crate::state::health::{Breaker, HealthFile, Store, TargetHealth, now_ms};

/// How old the health a call is checked against may be.
pub const FRESH_FOR: Duration = Duration::from_millis(250);
/// The longest a half-open claim holds: the claim ends when its call's answer is recorded,
/// and this bounds the wait of every other replica when the claimant died mid-call.
const HALF_OPEN_HOLD: Duration = Duration::from_secs(60);
/// What a call turned away while another is the half-open one is told to wait.
const CLAIMED_RETRY_MS: u64 = 1_000;

/// What health says about sending a call to a target now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Passage {
    /// Nothing in force: send it.
    Open,
    /// A cooldown or breaker has ended and nobody has tried since: the call that claims it
    /// is the one that goes.
    HalfOpen,
    /// Send nothing before `until_ms`.
    Shut {
        until_ms: u64,
        /// An open breaker (503), not a cooldown (429).
        breaker: bool,
        class: ErrorClass,
        /// It has ended, and another call is the half-open one.
        probing: bool,
    },
}

/// The gate's rule for one target's record at `now_ms`. Only the cooldowns an upstream
/// itself announced — rate limits and quotas, ending when the answer said or at the fixed
/// time of DESIGN.md §5 — and open breakers shut it: an auth cooldown is left to the key
/// being read again after a 401, and a bad model has no end.
pub fn passage(health: Option<&TargetHealth>, now_ms: u64) -> Passage {
    let Some(health) = health else {
        return Passage::Open;
    };
    let cooldown = match health.class {
        ErrorClass::RateLimited | ErrorClass::Quota => health.cooldown_until_ms,
        _ => None,
    };
    let breaker = match health.breaker {
        Breaker::Open { until_ms, .. } => Some(until_ms),
        Breaker::Closed => None,
    };
    if cooldown.is_none() && breaker.is_none() {
        return Passage::Open;
    }
    let running = |until: Option<u64>| until.filter(|until| *until > now_ms);
    let shut = |until_ms, breaker, probing| Passage::Shut {
        until_ms,
        breaker,
        class: health.class,
        probing,
    };
    match (running(cooldown), running(breaker)) {
        // Another call is the half-open one: its answer decides, so ask again soon rather
        // than for as long as its claim could hold.
        (None, None) => match running(health.half_open_until_ms) {
            Some(until) => shut(
                until.min(now_ms + CLAIMED_RETRY_MS),
                breaker.is_some(),
                true,
            ),
            None => Passage::HalfOpen,
        },
        (Some(cooling), None) => shut(cooling, false, false),
        (None, Some(open)) => shut(open, true, false),
        (Some(cooling), Some(open)) => shut(cooling.max(open), true, false),
    }
}

/// A half-open claim this relay holds on `target`, stamped `until_ms`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    pub target: String,
    pub until_ms: u64,
}

/// The relay's view of health, read at most [`FRESH_FOR`] ago.
pub struct Gate {
    store: Store,
    cached: Mutex<Option<(Instant, Arc<HealthFile>)>>,
}

impl Gate {
    pub fn new(store: Store) -> Gate {
        Gate {
            store,
            cached: Mutex::new(None),
        }
    }

    /// Whether a call to `target` may go now: `Ok(None)` to send it, `Ok(Some(claim))` to
    /// send it as the one half-open call, `Err` with the passage that shuts it.
    pub async fn admit(&self, target: &str) -> Result<Option<Claim>, Passage> {
        let health = self.health().await;
        match passage(health.get(target), now_ms()) {
            Passage::Open => Ok(None),
            shut @ Passage::Shut { .. } => Err(shut),
            Passage::HalfOpen => {
                let store = self.store.clone();
                let wanted = target.to_string();
                let claimed = tokio::task::spawn_blocking(move || claim(&store, &wanted))
                    .await
                    .unwrap_or(Ok(None));
                // Whatever the claim found is newer than the cache.
                *self.cached.lock().unwrap_or_else(PoisonError::into_inner) = None;
                claimed
            }
        }
    }

    /// Gives a claim back without an answer to show for it (the budget refused the call,
    /// or its client left): the next call is the half-open one. Blocking.
    pub fn release(&self, claim: &Claim) {
        release(&self.store, claim);
    }

    async fn health(&self) -> Arc<HealthFile> {
        {
            let cached = self.cached.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some((read_at, health)) = cached.as_ref()
                && read_at.elapsed() < FRESH_FOR
            {
                return Arc::clone(health);
            }
        }
        let store = self.store.clone();
        let read_at = Instant::now();
        let health = Arc::new(
            tokio::task::spawn_blocking(move || store.load())
                .await
                .unwrap_or_default(),
        );
        *self.cached.lock().unwrap_or_else(PoisonError::into_inner) =
            Some((read_at, Arc::clone(&health)));
        health
    }
}

/// Takes the half-open call for `target` under the store's lock, unless another replica
/// took it first or the record changed since it was read. A store that cannot be written
/// lets the call go: health is a cache of what answers said, the budget is the guard.
fn claim(store: &Store, target: &str) -> Result<Option<Claim>, Passage> {
    let taken = store.update(|file| {
        let now = now_ms();
        match passage(file.get(target), now) {
            Passage::HalfOpen => {
                let until_ms = now + u64::try_from(HALF_OPEN_HOLD.as_millis()).unwrap_or(0);
                if let Some(health) = file.get_mut(target) {
                    health.half_open_until_ms = Some(until_ms);
                }
                Ok(Some(Claim {
                    target: target.to_string(),
                    until_ms,
                }))
            }
            Passage::Open => Ok(None),
            shut @ Passage::Shut { .. } => Err(shut),
        }
    });
    taken.unwrap_or_else(|err| {
        crate::term::debug(&format!(
            "relay: could not claim the half-open call: {err:#}"
        ));
        Ok(None)
    })
}

/// Ends `claim` if it is still the one in the record.
pub fn release(store: &Store, claim: &Claim) {
    let result = store.update(|file| {
        if let Some(health) = file.get_mut(&claim.target)
            && health.half_open_until_ms == Some(claim.until_ms)
        {
            health.half_open_until_ms = None;
        }
    });
    if let Err(err) = result {
        crate::term::debug(&format!(
            "relay: could not end the half-open claim: {err:#}"
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(class: ErrorClass) -> TargetHealth {
        TargetHealth {
            class,
            reason: String::new(),
            checked_ms: 0,
            cooldown_until_ms: None,
            consecutive_failures: 1,
            auth_failures: 0,
            latency_ms: None,
            breaker: Breaker::Closed,
            recent: Vec::new(),
            half_open_until_ms: None,
            proved_by: None,
            launch_failure: None,
        }
    }

    #[test]
    fn a_rate_limit_shuts_until_its_end_then_half_opens_once() {
        let health = TargetHealth {
            cooldown_until_ms: Some(2_000),
            ..record(ErrorClass::RateLimited)
        };
        assert_eq!(
            passage(Some(&health), 1_000),
            Passage::Shut {
                until_ms: 2_000,
                breaker: false,
                class: ErrorClass::RateLimited,
                probing: false,
            }
        );
        assert_eq!(passage(Some(&health), 2_000), Passage::HalfOpen);
        let claimed = TargetHealth {
            half_open_until_ms: Some(60_000),
            ..health
        };
        assert!(matches!(
            passage(Some(&claimed), 2_000),
            Passage::Shut {
                until_ms: 3_000,
                probing: true,
                ..
            }
        ));
    }

    #[test]
    fn an_open_breaker_shuts_with_503_and_auth_or_ok_never_shut() {
        let open = TargetHealth {
            breaker: Breaker::Open {
                until_ms: 5_000,
                backoff_ms: 60_000,
            },
            ..record(ErrorClass::Upstream5xx)
        };
        assert!(matches!(
            passage(Some(&open), 1_000),
            Passage::Shut { breaker: true, .. }
        ));
        let auth = TargetHealth {
            cooldown_until_ms: Some(5_000),
            ..record(ErrorClass::Auth)
        };
        assert_eq!(passage(Some(&auth), 1_000), Passage::Open);
        assert_eq!(passage(Some(&record(ErrorClass::Ok)), 1_000), Passage::Open);
        assert_eq!(passage(None, 1_000), Passage::Open);
    }
}
