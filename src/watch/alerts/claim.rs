//! A run's hold on an owed alert while it delivers it. Several watchdogs may share
//! `watchdog.json` — runs overlapping on one machine, or replicas over a shared store, which
//! offers the same lock → load → save and nothing more. Taking a claim under the lock is
//! what makes one of them the only sender: without it, every run that loads the state
//! while a delivery is in flight sees the same owed alert and sends it again.
//!
//! A claim is wall-clock time, not a process handle, so it means the same on every machine:
//! a run that dies mid-delivery (killed, machine lost) leaves its claim behind, and it
//! lapses by itself; the next run after `until` sends the alert. Clocks of replicas must
//! agree within [`GRACE`].

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};

/// Beyond the run's delivery deadline: a secret command, the last attempt's end and the
/// final save may run past it, and a claim lapsing while its holder still sends would let
/// a second run send too.
const GRACE: Duration = Duration::from_secs(30);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct Claim {
    /// The run holding it: host, process and a random number, distinct across machines.
    pub by: String,
    /// When it lapses, RFC 3339 (one instant on every machine).
    pub until: String,
}

impl Claim {
    /// A claim for a run that will deliver for at most `deadline` from `now`.
    pub fn new(by: &str, now: Timestamp, deadline: Duration) -> Claim {
        let hold = SignedDuration::try_from(deadline + GRACE).unwrap_or(SignedDuration::MAX);
        Claim {
            by: by.to_string(),
            until: now
                .saturating_add(hold)
                .unwrap_or(Timestamp::MAX)
                .to_string(),
        }
    }

    /// Still held at `now`. An unreadable `until` holds nothing: a garbled claim must not
    /// keep an alert owed for ever.
    pub fn holds_at(&self, now: Timestamp) -> bool {
        self.until
            .parse::<Timestamp>()
            .is_ok_and(|until| now < until)
    }
}

/// This run's name in a claim.
pub(super) fn claimer_id(host: &str) -> String {
    format!("{host}:{}:{:016x}", std::process::id(), fastrand::u64(..))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claim_holds_through_the_deadline_and_grace_then_lapses() {
        let now: Timestamp = "2026-03-01T12:00:00Z".parse().unwrap();
        let claim = Claim::new("me", now, Duration::from_secs(60));

        assert!(claim.holds_at(now));
        assert!(claim.holds_at(now + SignedDuration::from_secs(89)));
        assert!(!claim.holds_at(now + SignedDuration::from_secs(90)));
    }

    #[test]
    fn a_garbled_claim_holds_nothing() {
        let claim = Claim {
            by: "someone".to_string(),
            until: "tomorrow-ish".to_string(),
        };
        assert!(!claim.holds_at(Timestamp::now()));
    }
}
