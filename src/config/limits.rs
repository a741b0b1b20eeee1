//! Limits from the configuration: the daily budget caps (`[budget]`) and when a target's
//! breaker opens (`[breaker]`).

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The default daily caps: generous for probes and checks, small enough to stop a loop.
pub const DEFAULT_CALLS: u64 = 500;
pub const DEFAULT_TOKENS: u64 = 500_000;

/// Daily caps; 0 means unlimited, never "forbid".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    pub calls: u64,
    pub tokens: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            calls: DEFAULT_CALLS,
            tokens: DEFAULT_TOKENS,
        }
    }
}

/// When a target's breaker opens, and for how long (`[breaker]` in the configuration).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BreakerPolicy {
    /// Consecutive failures that open the breaker.
    pub threshold: u32,
    /// A failure rate above this, over `window` with at least `min_calls` results, opens it.
    pub error_rate: f64,
    pub window: Duration,
    pub min_calls: u32,
    /// The first open period; each failed half-open probe doubles it, up to `max_backoff`.
    pub backoff: Duration,
    pub max_backoff: Duration,
}

impl Default for BreakerPolicy {
    fn default() -> BreakerPolicy {
        BreakerPolicy {
            threshold: 5,
            error_rate: 0.5,
            window: Duration::from_secs(10 * 60),
            min_calls: 10,
            backoff: Duration::from_secs(60),
            max_backoff: Duration::from_secs(30 * 60),
        }
    }
}

/// The cooldown rules in force (from the configuration).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Policy {
    pub quota_cooldown: Duration,
    pub breaker: BreakerPolicy,
}
