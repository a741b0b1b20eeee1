//! `health.json`: what agent knows about each probe target, shared by every agent process
//! on the machine (DESIGN.md §5–6). Read without a lock (files are replaced atomically);
//! changed only under the lock, re-reading first so no other process's update is lost.
//!
//! Two mechanisms decide when a target is skipped without a call: per-class cooldowns
//! (rate limit, quota, auth — or the time the answer said it clears) and a circuit
//! breaker per target that opens after repeated failures and is half-open after its
//! backoff, when the next use is the probe.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use crate::error_class::ErrorClass;
use crate::state::events;
use crate::state::file as state_file;
use crate::state::json_file::JsonFile;

const RATE_LIMIT_COOLDOWN: Duration = Duration::from_secs(2 * 60);
const AUTH_COOLDOWN: Duration = Duration::from_secs(15 * 60);
const AUTH_COOLDOWN_CAP: Duration = Duration::from_secs(6 * 60 * 60);
/// How many recent results a target keeps for the error-rate window.
const RECENT_KEPT: usize = 50;
/// A target not seen for this long is dropped on the next write.
const FORGET_AFTER: Duration = Duration::from_secs(30 * 24 * 60 * 60);

/// What a probe found.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub class: ErrorClass,
    /// One line, secrets redacted, failing bodies quoted to 140 characters.
    pub reason: String,
    pub latency: Duration,
    /// When the answer said it would clear.
    pub clears_at: Option<SystemTime>,
}

impl Outcome {
    pub fn is_ok(&self) -> bool {
        self.class == ErrorClass::Ok
    }

    /// No call was sent: the budget said no. Says nothing about the rung's health.
    pub fn refused(refusal: &crate::state::budget::Refusal) -> Outcome {
        Outcome {
            class: ErrorClass::Budget,
            reason: refusal.to_string(),
            latency: Duration::ZERO,
            clears_at: None,
        }
    }
}

pub use crate::config::limits::{BreakerPolicy, Policy};

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct HealthFile {
    #[serde(default)]
    pub targets: BTreeMap<String, TargetHealth>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TargetHealth {
    pub class: ErrorClass,
    pub reason: String,
    /// Unix milliseconds of the last probe or launch verdict.
    pub checked_ms: u64,
    /// Until when the target is skipped without a call (unix milliseconds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cooldown_until_ms: Option<u64>,
    #[serde(default)]
    pub consecutive_failures: u32,
    /// Auth failures in a row: each doubles the auth-dead cooldown.
    #[serde(default)]
    pub auth_failures: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<u64>,
    #[serde(default)]
    pub breaker: Breaker,
    /// Recent results `(unix ms, ok)`, for the error-rate window.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub recent: Vec<(u64, bool)>,
    /// A relay replica's claim on the one half-open call after a cooldown or an open
    /// breaker ended (unix milliseconds it holds until): every other replica waits for its
    /// answer, which replaces this record and so ends the claim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub half_open_until_ms: Option<u64>,
    /// How the last good answer was had: a probe (the default), the rung's command probe,
    /// or the CLI's own check (a subscription login is never probed with a prompt).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proved_by: Option<Proof>,
    /// The launched CLI failed fast since the last good answer: a health fact until a later
    /// success (a probe, a check, or a launch that really started).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch_failure: Option<LaunchFailure>,
}

/// How a target was proved to answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Proof {
    /// agent's own call to the API (or the CLI's quota report, `agy /usage`).
    Probe,
    /// The backend's `probe = { kind = "command" }`.
    Command,
    /// The CLI itself, headless, on its own login (`self_check`).
    SelfCheck,
}

/// A launch that failed fast: when, and what it did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LaunchFailure {
    pub at_ms: u64,
    pub reason: String,
}

/// A target's circuit breaker. Open with its end in the past is half-open: the next use
/// is the probe.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Breaker {
    #[default]
    Closed,
    Open {
        until_ms: u64,
        backoff_ms: u64,
    },
}

/// What health says about using a target now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Probed OK within `probe_cache_seconds`: use it without a call.
    Trusted { reason: String },
    /// Skip it without a call.
    Cooling {
        class: ErrorClass,
        reason: String,
        until_ms: Option<u64>,
    },
    /// Nothing recent (or a half-open breaker): probe it.
    Unknown,
}

/// A change worth an event line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// The class changed (`from` → `to`).
    Class {
        from: String,
        to: String,
    },
    BreakerOpened {
        backoff_ms: u64,
    },
    /// The breaker closed after a good answer: the target is back.
    Restored,
}

pub fn now_ms() -> u64 {
    millis(SystemTime::now())
}

fn millis(time: SystemTime) -> u64 {
    time.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

fn ms(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

#[derive(Debug, Clone)]
pub struct Store {
    file: JsonFile<HealthFile>,
    state_dir: PathBuf,
}

impl Store {
    /// The state directory this store keeps its file in.
    pub fn state_dir(&self) -> &Path {
        &self.state_dir
    }

    pub fn new(state_dir: &Path) -> Store {
        Store {
            file: JsonFile::new(state_dir, "health.json").pretty().shared(),
            state_dir: state_dir.to_path_buf(),
        }
    }

    /// Reads the current health. A missing file is empty; an unreadable one is moved aside
    /// (with a `corrupt_state` event) and treated as empty.
    pub fn load(&self) -> HealthFile {
        self.file.load()
    }

    /// Changes health under the lock: re-read, apply, replace atomically. A cache of what
    /// probes found: rebuilt by the next probe if ever lost, so never fsynced.
    pub fn update<T>(&self, change: impl FnOnce(&mut HealthFile) -> T) -> anyhow::Result<T> {
        self.file.update(change)
    }

    /// Records a probe's outcome for `target` now.
    pub fn record(&self, target: &str, outcome: &Outcome, policy: &Policy) {
        self.record_at(target, outcome, policy, SystemTime::now());
    }

    /// Records an outcome had by `proof` (a command probe, the CLI's own check) now.
    pub fn record_as(&self, target: &str, outcome: &Outcome, policy: &Policy, proof: Proof) {
        self.record_proved(target, outcome, policy, SystemTime::now(), proof);
    }

    /// Records a probe's outcome at `now` (tests pass their own clock), writing a `health`
    /// event on every change of class or breaker and a `restore` event when a target that
    /// was cut off answers again. A budget refusal is no news about the target.
    pub fn record_at(&self, target: &str, outcome: &Outcome, policy: &Policy, now: SystemTime) {
        self.record_proved(target, outcome, policy, now, Proof::Probe);
    }

    fn record_proved(
        &self,
        target: &str,
        outcome: &Outcome,
        policy: &Policy,
        now: SystemTime,
        proof: Proof,
    ) {
        if matches!(outcome.class, ErrorClass::Budget | ErrorClass::Unproved) {
            return;
        }
        let key = key(target);
        let result = self.update(|file| {
            file.forget_unseen(millis(now));
            let previous = file.targets.get(&*key);
            let (mut next, changes) = after(previous, outcome, policy, now);
            if outcome.is_ok() && proof != Proof::Probe {
                next.proved_by = Some(proof);
            }
            file.targets.insert(key.to_string(), next);
            changes
        });
        match result {
            Ok(changes) => {
                for change in changes {
                    let (kind, from, to) = match change {
                        Change::Class { from, to } => (events::Kind::Health, from, to),
                        Change::BreakerOpened { backoff_ms } => (
                            events::Kind::Health,
                            "closed".into(),
                            format!("breaker open for {}s", backoff_ms / 1000),
                        ),
                        Change::Restored => (events::Kind::Restore, "open".into(), "closed".into()),
                    };
                    events::record(
                        &self.state_dir,
                        kind,
                        &format!("{target}: {from}"),
                        &to,
                        &outcome.reason,
                    );
                }
            }
            Err(err) => crate::term::debug(&format!("could not record health: {err:#}")),
        }
    }

    /// Forgets what probes with `account`'s credential found (its check just proved the
    /// key): the next use probes afresh.
    pub fn forget_account(&self, account: &str) {
        let suffix = super::target::Target::account_suffix(account);
        let result =
            self.update(|file| file.targets.retain(|target, _| !target.ends_with(&suffix)));
        if let Err(err) = result {
            crate::term::debug(&format!("could not record health: {err:#}"));
        }
    }

    /// Forgets a quota cooldown of `target` still in force at `now_ms` (the user knows
    /// better: `agent --unpark`): its reason, when there was one. The next use probes it.
    pub fn forget_quota(&self, target: &str, now_ms: u64) -> anyhow::Result<Option<String>> {
        let cooling = |entry: &TargetHealth| {
            entry.class == ErrorClass::Quota
                && entry.cooldown_until_ms.is_some_and(|until| until > now_ms)
        };
        if !self.load().get(target).is_some_and(cooling) {
            return Ok(None);
        }
        self.update(|file| {
            let key = key(target);
            match file.targets.get(&*key) {
                Some(entry) if cooling(entry) => {
                    file.targets.remove(&*key).map(|entry| entry.reason)
                }
                _ => None,
            }
        })
    }

    /// The launched CLI failed fast: stop trusting the target so the next launch probes it
    /// again. No cooldown — a wrong argument fails every CLI alike, and must not leave every
    /// rung skipped for minutes.
    pub fn distrust(&self, target: &str, reason: &str) {
        let result = self.update(|file| {
            let now = now_ms();
            file.forget_unseen(now);
            let entry = file
                .targets
                .entry(key(target).into_owned())
                .or_insert_with(|| TargetHealth {
                    class: ErrorClass::Fastfail,
                    reason: String::new(),
                    checked_ms: now,
                    cooldown_until_ms: None,
                    consecutive_failures: 0,
                    auth_failures: 0,
                    latency_ms: None,
                    breaker: Breaker::Closed,
                    recent: Vec::new(),
                    half_open_until_ms: None,
                    proved_by: None,
                    launch_failure: None,
                });
            let reason = state_file::capped(&crate::redact::redact(reason)).into_owned();
            entry.class = ErrorClass::Fastfail;
            entry.reason.clone_from(&reason);
            entry.checked_ms = now;
            entry.launch_failure = Some(LaunchFailure { at_ms: now, reason });
        });
        if let Err(err) = result {
            crate::term::debug(&format!("could not record health: {err:#}"));
        }
    }

    /// The launched CLI really started (it ran past the fast-fail net, or ended well): a
    /// failure at an earlier launch is no longer news.
    pub fn launched(&self, target: &str) {
        if self
            .load()
            .get(target)
            .is_none_or(|entry| entry.launch_failure.is_none())
        {
            return;
        }
        let result = self.update(|file| {
            if let Some(entry) = file.get_mut(target) {
                entry.launch_failure = None;
            }
        });
        if let Err(err) = result {
            crate::term::debug(&format!("could not record health: {err:#}"));
        }
    }
}

/// The health a target has after `outcome` at `now`, and what changed: the cooldown rules
/// and the breaker of DESIGN.md §5.
pub fn after(
    previous: Option<&TargetHealth>,
    outcome: &Outcome,
    policy: &Policy,
    now: SystemTime,
) -> (TargetHealth, Vec<Change>) {
    let now_ms = millis(now);
    let class = outcome.class;
    let ok = class == ErrorClass::Ok;
    // Rate limits, quotas and auth failures have cooldowns of their own (DESIGN.md §5): a
    // burst of 429s must not open the breaker on top and outlast the reset the answer gave.
    let counts = ok || breaker_counts(class);
    let failures = if ok {
        0
    } else if counts {
        previous.map_or(0, |p| p.consecutive_failures) + 1
    } else {
        previous.map_or(0, |p| p.consecutive_failures)
    };
    let auth_failures = match class {
        ErrorClass::Auth => previous.map_or(0, |p| p.auth_failures) + 1,
        ErrorClass::Ok => 0,
        _ => previous.map_or(0, |p| p.auth_failures),
    };

    let mut recent: Vec<(u64, bool)> = previous.map_or_else(Vec::new, |p| p.recent.clone());
    let window_start = now_ms.saturating_sub(ms(policy.breaker.window));
    recent.retain(|(at, _)| *at >= window_start);
    if counts {
        recent.push((now_ms, ok));
    }
    let excess = recent.len().saturating_sub(RECENT_KEPT);
    recent.drain(..excess);

    let mut changes = Vec::new();
    let previous_class = previous.map(|p| p.class);
    if previous_class != Some(class) {
        changes.push(Change::Class {
            from: previous_class.map_or_else(|| "unknown".to_string(), |c| c.to_string()),
            to: class.to_string(),
        });
    }

    let was = previous.map_or(Breaker::Closed, |p| p.breaker);
    let breaker = match (was, ok) {
        (was, false) if !counts => was,
        (Breaker::Open { .. }, true) => {
            changes.push(Change::Restored);
            Breaker::Closed
        }
        // A call sent before its sender knew the breaker was open (another relay replica
        // or launch opened it a moment earlier) is no half-open probe: it leaves the
        // backoff as it is.
        (open @ Breaker::Open { until_ms, .. }, false) if until_ms > now_ms => open,
        // A failure while half-open (or still open): back off twice as long.
        (Breaker::Open { backoff_ms, .. }, false) => {
            let backoff_ms = (backoff_ms.saturating_mul(2)).min(ms(policy.breaker.max_backoff));
            changes.push(Change::BreakerOpened { backoff_ms });
            Breaker::Open {
                until_ms: now_ms + backoff_ms,
                backoff_ms,
            }
        }
        (Breaker::Closed, false) if should_open(failures, &recent, &policy.breaker) => {
            let backoff_ms = ms(policy.breaker.backoff);
            changes.push(Change::BreakerOpened { backoff_ms });
            Breaker::Open {
                until_ms: now_ms + backoff_ms,
                backoff_ms,
            }
        }
        (Breaker::Closed, _) => Breaker::Closed,
    };

    let fixed = match class {
        ErrorClass::RateLimited => Some(RATE_LIMIT_COOLDOWN),
        ErrorClass::Quota => Some(policy.quota_cooldown),
        ErrorClass::Auth => {
            let doublings = auth_failures.saturating_sub(1).min(16);
            Some((AUTH_COOLDOWN * 2u32.pow(doublings)).min(AUTH_COOLDOWN_CAP))
        }
        _ => None,
    };
    let cooldown_until_ms = if ok {
        None
    } else if let Some(at) = outcome.clears_at.filter(|at| *at > now) {
        // The answer said when it clears: trust that over the fixed time (capped at a day).
        Some(millis(at.min(now + Duration::from_secs(24 * 60 * 60))))
    } else {
        fixed.map(|d| now_ms + ms(d))
    };

    let health = TargetHealth {
        class,
        reason: state_file::capped(&outcome.reason).into_owned(),
        checked_ms: now_ms,
        cooldown_until_ms,
        consecutive_failures: failures,
        auth_failures,
        latency_ms: u64::try_from(outcome.latency.as_millis()).ok(),
        breaker,
        recent,
        half_open_until_ms: None,
        proved_by: None,
        // Only a good answer clears a failed launch: a failing check confirms it.
        launch_failure: if ok {
            None
        } else {
            previous.and_then(|p| p.launch_failure.clone())
        },
    };
    (health, changes)
}

/// The failures the breaker counts: the upstream failing to answer, not it saying "later"
/// (`rate_limited`, `quota`) or "not you" (`auth`), which have cooldowns of their own.
fn breaker_counts(class: ErrorClass) -> bool {
    !matches!(
        class,
        ErrorClass::RateLimited | ErrorClass::Quota | ErrorClass::Auth
    )
}

fn should_open(consecutive: u32, recent: &[(u64, bool)], policy: &BreakerPolicy) -> bool {
    if policy.threshold > 0 && consecutive >= policy.threshold {
        return true;
    }
    let total = recent.len();
    if total == 0 || total < policy.min_calls as usize {
        return false;
    }
    let failed = recent.iter().filter(|(_, ok)| !ok).count();
    #[allow(clippy::cast_precision_loss)]
    let rate = failed as f64 / total as f64;
    rate > policy.error_rate
}

/// The key `target` is kept under: capped, as part of it (a relayed model) may come from a
/// client. Real targets are far shorter than the cap and keep their whole name.
fn key(target: &str) -> std::borrow::Cow<'_, str> {
    state_file::capped(target)
}

impl HealthFile {
    /// Drops targets not probed or used for [`FORGET_AFTER`] before `now_ms`: a model
    /// renamed, an account removed, or a relay client's one-off model would otherwise stay
    /// in the file for ever.
    fn forget_unseen(&mut self, now_ms: u64) {
        let since = now_ms.saturating_sub(ms(FORGET_AFTER));
        self.targets.retain(|_, health| health.checked_ms >= since);
    }

    /// What is known about `target`, under the key it is kept under.
    pub fn get(&self, target: &str) -> Option<&TargetHealth> {
        self.targets.get(&*key(target))
    }

    /// The record of `target` to change, if there is one.
    pub fn get_mut(&mut self, target: &str) -> Option<&mut TargetHealth> {
        self.targets.get_mut(&*key(target))
    }

    /// Whether `target` may be trusted, must be skipped, or needs a probe, at `now_ms`.
    pub fn verdict(&self, target: &str, probe_cache: Duration, now_ms: u64) -> Verdict {
        self.targets
            .get(&*key(target))
            .map_or(Verdict::Unknown, |health| {
                health.verdict(probe_cache, now_ms)
            })
    }
}

impl TargetHealth {
    /// Whether this target may be trusted, must be skipped, or needs a probe, at `now_ms`.
    pub fn verdict(&self, probe_cache: Duration, now_ms: u64) -> Verdict {
        let health = self;
        if health.class == ErrorClass::Ok {
            let age = now_ms.saturating_sub(health.checked_ms);
            if u128::from(age) < probe_cache.as_millis() {
                return Verdict::Trusted {
                    reason: health.reason.clone(),
                };
            }
            return Verdict::Unknown;
        }
        if health.class == ErrorClass::BadModel {
            // Dead until the configuration changes (a new model makes a new target);
            // `--status` re-probes it and clears this.
            return Verdict::Cooling {
                class: health.class,
                reason: health.reason.clone(),
                until_ms: None,
            };
        }
        let breaker_until = match health.breaker {
            Breaker::Open { until_ms, .. } if until_ms > now_ms => Some(until_ms),
            _ => None,
        };
        let cooldown_until = health.cooldown_until_ms.filter(|until| *until > now_ms);
        match breaker_until.max(cooldown_until) {
            Some(until) => Verdict::Cooling {
                class: health.class,
                reason: if breaker_until.is_some() {
                    format!(
                        "breaker open after {} failures: {}",
                        health.consecutive_failures, health.reason
                    )
                } else {
                    health.reason.clone()
                },
                until_ms: Some(until),
            },
            None => Verdict::Unknown,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;

    fn outcome(class: ErrorClass) -> Outcome {
        Outcome {
            class,
            reason: "r".into(),
            latency: Duration::from_millis(5),
            clears_at: None,
        }
    }

    fn policy() -> Policy {
        Policy {
            quota_cooldown: Duration::from_secs(3600),
            breaker: BreakerPolicy::default(),
        }
    }

    fn at(seconds: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000 + seconds)
    }

    #[test]
    fn auth_cooldown_doubles_to_six_hours() {
        let now = at(0);
        let mut health: Option<TargetHealth> = None;
        let mut minutes = Vec::new();
        for _ in 0..7 {
            let (next, _) = after(health.as_ref(), &outcome(ErrorClass::Auth), &policy(), now);
            minutes.push((next.cooldown_until_ms.unwrap() - millis(now)) / 60_000);
            health = Some(next);
        }
        assert_eq!(minutes, [15, 30, 60, 120, 240, 360, 360]);
    }

    #[test]
    fn trusted_only_within_the_cache_window() {
        let now = at(0);
        let mut file = HealthFile::default();
        file.targets.insert(
            "t".into(),
            after(None, &outcome(ErrorClass::Ok), &policy(), now).0,
        );
        let cache = Duration::from_secs(300);
        assert!(matches!(
            file.verdict("t", cache, millis(now) + 299_000),
            Verdict::Trusted { .. }
        ));
        assert_eq!(
            file.verdict("t", cache, millis(now) + 300_000),
            Verdict::Unknown
        );
    }

    #[test]
    fn the_breaker_opens_after_five_failures_half_opens_and_restores() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let policy = policy();
        let cache = Duration::from_secs(300);
        let verdict = |t: u64| store.load().verdict("t", cache, millis(at(t)));

        for second in 0..4 {
            store.record_at("t", &outcome(ErrorClass::Upstream5xx), &policy, at(second));
            assert_eq!(
                verdict(second),
                Verdict::Unknown,
                "four failures leave it closed"
            );
        }
        store.record_at("t", &outcome(ErrorClass::Upstream5xx), &policy, at(4));
        assert!(
            matches!(verdict(5), Verdict::Cooling { .. }),
            "the fifth opens it: skipped"
        );
        assert!(
            matches!(verdict(63), Verdict::Cooling { .. }),
            "for its 60 s backoff"
        );
        assert_eq!(
            verdict(65),
            Verdict::Unknown,
            "half-open: the next use is the probe"
        );

        // The half-open probe fails: open again, twice as long.
        store.record_at("t", &outcome(ErrorClass::Overloaded), &policy, at(65));
        assert!(matches!(verdict(65 + 119), Verdict::Cooling { .. }));
        assert_eq!(verdict(65 + 121), Verdict::Unknown);

        // It answers: closed, trusted, and a restore event says so.
        store.record_at("t", &outcome(ErrorClass::Ok), &policy, at(186));
        assert!(matches!(verdict(187), Verdict::Trusted { .. }));
        let events = fs::read_to_string(dir.path().join("events.jsonl")).unwrap();
        assert_eq!(
            events.matches("\"event\":\"restore\"").count(),
            1,
            "{events}"
        );
        assert_eq!(
            events.matches("breaker open for 60s").count(),
            1,
            "{events}"
        );
        assert_eq!(
            events.matches("breaker open for 120s").count(),
            1,
            "{events}"
        );
    }

    #[test]
    fn a_burst_of_rate_limits_keeps_its_cooldown_and_never_opens_the_breaker() {
        let mut health: Option<TargetHealth> = None;
        for i in 0..20u64 {
            let (next, changes) = after(
                health.as_ref(),
                &outcome(ErrorClass::RateLimited),
                &policy(),
                at(i),
            );
            assert!(
                !changes
                    .iter()
                    .any(|c| matches!(c, Change::BreakerOpened { .. })),
                "opened at the {i}th 429"
            );
            health = Some(next);
        }
        assert_eq!(health.unwrap().breaker, Breaker::Closed);
    }

    #[test]
    fn a_failure_while_the_breaker_is_still_open_leaves_its_backoff() {
        // Two relay replicas: one opened the breaker, the other's call was already out.
        let policy = policy();
        let mut health: Option<TargetHealth> = None;
        for i in 0..5u64 {
            health = Some(
                after(
                    health.as_ref(),
                    &outcome(ErrorClass::Overloaded),
                    &policy,
                    at(i),
                )
                .0,
            );
        }
        let opened = health.as_ref().unwrap().breaker;
        assert!(matches!(
            opened,
            Breaker::Open {
                backoff_ms: 60_000,
                ..
            }
        ));
        let (late, changes) = after(
            health.as_ref(),
            &outcome(ErrorClass::Overloaded),
            &policy,
            at(5),
        );
        assert_eq!(late.breaker, opened);
        assert!(changes.is_empty(), "{changes:?}");
    }

    #[test]
    fn a_high_error_rate_opens_the_breaker_without_five_in_a_row() {
        let policy = policy();
        let mut health: Option<TargetHealth> = None;
        let mut opened_at = None;
        // fail, fail, ok, fail, fail, ok, … — never five in a row, but two thirds failing.
        for i in 0..12u64 {
            let class = if i % 3 == 2 {
                ErrorClass::Ok
            } else {
                ErrorClass::Unreachable
            };
            let (next, changes) = after(health.as_ref(), &outcome(class), &policy, at(i));
            if changes
                .iter()
                .any(|c| matches!(c, Change::BreakerOpened { .. }))
                && opened_at.is_none()
            {
                opened_at = Some(i);
            }
            health = Some(next);
        }
        assert_eq!(
            opened_at,
            Some(9),
            "opens once ten results are in the window"
        );
    }

    #[test]
    fn every_change_of_class_is_a_health_event() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        store.record_at("t", &outcome(ErrorClass::Ok), &policy(), at(0));
        store.record_at("t", &outcome(ErrorClass::Ok), &policy(), at(1));
        store.record_at("t", &outcome(ErrorClass::RateLimited), &policy(), at(2));
        let events = fs::read_to_string(dir.path().join("events.jsonl")).unwrap();
        assert_eq!(
            events.matches("\"event\":\"health\"").count(),
            2,
            "{events}"
        );
        assert!(events.contains("\"to\":\"rate_limited\""), "{events}");
    }

    #[test]
    fn a_target_unseen_for_thirty_days_is_dropped_on_the_next_write() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let day = 24 * 60 * 60;
        store.record_at("old", &outcome(ErrorClass::Ok), &policy(), at(0));
        store.record_at("recent", &outcome(ErrorClass::Ok), &policy(), at(20 * day));

        store.record_at("new", &outcome(ErrorClass::Ok), &policy(), at(31 * day));

        let targets: Vec<String> = store.load().targets.into_keys().collect();
        assert_eq!(targets, ["new", "recent"]);
    }

    #[test]
    fn a_huge_target_and_reason_are_capped_in_health_and_events() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let target = format!("relay {} @account:work", "m".repeat(8 << 20));
        let huge = Outcome {
            reason: "r".repeat(8 << 20),
            ..outcome(ErrorClass::RateLimited)
        };

        store.record_at(&target, &huge, &policy(), at(0));

        let health = fs::metadata(dir.path().join("health.json")).unwrap().len();
        let events = fs::metadata(dir.path().join("events.jsonl")).unwrap().len();
        assert!(health < 8 * 1024, "health.json is {health} bytes");
        assert!(events < 8 * 1024, "events.jsonl is {events} bytes");
        // Still found under its own (long) name, and still its account's.
        let cache = Duration::from_secs(300);
        assert!(matches!(
            store.load().verdict(&target, cache, millis(at(1))),
            Verdict::Cooling { .. }
        ));
        store.forget_account("work");
        assert!(store.load().targets.is_empty());
    }
}
