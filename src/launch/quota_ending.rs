//! A late run its CLI ended on a refused quota, for a CLI whose records name no window
//! (opencode): the provider's 429 at its quota, which opencode 1.18.33 retries five times
//! (2 s doubling, 30 s at most between tries — about 70 s, with no setting to turn it off)
//! before it prints `Error: <the provider's message>` and exits 1. Such an ending went past
//! `fastfail_seconds`, so it is final (seed 002's rule: its code is passed through), but it
//! is a quota, not a run that worked: the target is skipped for `quota_minutes`, and when no
//! rung below could run and another is parked until a known reset, the launch ends as one
//! with every rung parked (75, naming the reopening) — as it does for the other CLIs, whose
//! records name the window.

use std::time::Duration;

use crate::adapter::Meaning;
use crate::config::Config;
use crate::error_class::ErrorClass;
use crate::state::health::{Outcome, Store};

use super::rung::Rung;

/// The CLI's last line on stderr when it says, in its adapter's words, that its quota was
/// refused — for a CLI whose run records name no window (those are read instead); `None`
/// for any other ending. Only the last line: a session's earlier output may quote anything.
pub fn refused(rung: &Rung, stderr_head: &str) -> Option<String> {
    let family = rung.backend.family;
    if crate::login::readers::reads_run_windows(family) {
        return None;
    }
    let plain = crate::text::without_sequences(stderr_head);
    let last = plain
        .lines()
        .map(str::trim)
        .rfind(|line| !line.is_empty())?;
    match family.self_check()?.meaning(last)? {
        (Meaning::Limit, _) => Some(crate::text::snippet(&crate::redact::redact(last))),
        _ => None,
    }
}

/// Files the refused quota against the rung's target (skipped for `quota_minutes`) and says
/// so: the run exited `code` after `elapsed`, its CLI saying `said`.
pub fn skip(config: &Config, store: &Store, rung: &Rung, code: i32, elapsed: Duration, said: &str) {
    let Ok(ready) = &rung.state else { return };
    let reason = format!(
        "exited {code} after {}s on its quota: {said}",
        elapsed.as_secs()
    );
    let refused = Outcome {
        class: ErrorClass::Quota,
        reason: reason.clone(),
        latency: elapsed,
        clears_at: None,
    };
    store.record(&ready.plan.target, &refused, &config.policy());
    crate::term::notice(&format!(
        "{} {reason} — skipped for {} min",
        rung.label(),
        config.quota_cooldown.as_secs() / 60
    ));
}
