//! `health.json`: what agent knows about each probe target, shared by every agent process
//! on the machine (DESIGN.md §5–6). Read without a lock (files are replaced atomically);
//! changed only under the lock, re-reading first so no other process's update is lost.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use crate::error_class::ErrorClass;
use crate::events;
use crate::probe::Outcome;
use crate::state_file;

const RATE_LIMIT_COOLDOWN: Duration = Duration::from_secs(2 * 60);
const AUTH_COOLDOWN: Duration = Duration::from_secs(15 * 60);
const AUTH_COOLDOWN_CAP: Duration = Duration::from_secs(6 * 60 * 60);

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
    /// Nothing recent: probe it.
    Unknown,
}

pub fn now_ms() -> u64 {
    millis(SystemTime::now())
}

fn millis(time: SystemTime) -> u64 {
    time.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

#[derive(Debug, Clone)]
pub struct Store {
    path: PathBuf,
    state_dir: PathBuf,
}

impl Store {
    pub fn new(state_dir: &Path) -> Store {
        Store {
            path: state_dir.join("health.json"),
            state_dir: state_dir.to_path_buf(),
        }
    }

    /// Reads the current health. A missing file is empty; an unreadable one is moved aside
    /// (with a `corrupt_state` event) and treated as empty.
    pub fn load(&self) -> HealthFile {
        match fs::read(&self.path) {
            Ok(bytes) => match serde_json::from_slice(&bytes) {
                Ok(file) => file,
                Err(err) => {
                    self.set_aside(&err.to_string());
                    HealthFile::default()
                }
            },
            Err(err) if err.kind() == io::ErrorKind::NotFound => HealthFile::default(),
            Err(err) => {
                crate::term::debug(&format!("reading {}: {err}", self.path.display()));
                HealthFile::default()
            }
        }
    }

    fn set_aside(&self, why: &str) {
        if let Ok(aside) = state_file::quarantine(&self.path) {
            crate::term::warn(&format!(
                "{} was unreadable ({why}); kept aside as {} and started afresh",
                self.path.display(),
                aside.display()
            ));
            events::record(
                &self.state_dir,
                events::Kind::CorruptState,
                "health.json",
                &aside.to_string_lossy(),
                why,
            );
        }
    }

    /// Changes health under the lock: re-read, apply, replace atomically.
    pub fn update(&self, change: impl FnOnce(&mut HealthFile)) -> anyhow::Result<()> {
        let _lock = state_file::lock(&self.path)?;
        let mut file = self.load();
        change(&mut file);
        let json = serde_json::to_vec_pretty(&file)?;
        state_file::write_atomic(&self.path, &json)
    }

    /// Records a probe's outcome for `target` (the cooldown policy lives in [`after`]).
    pub fn record(&self, target: &str, outcome: &Outcome, quota_cooldown: Duration) {
        let result = self.update(|file| {
            let previous = file.targets.get(target);
            let next = after(previous, outcome, quota_cooldown, SystemTime::now());
            file.targets.insert(target.to_string(), next);
        });
        if let Err(err) = result {
            crate::term::debug(&format!("could not record health: {err:#}"));
        }
    }

    /// The launched CLI failed fast: stop trusting the target so the next launch probes it
    /// again. No cooldown — a wrong argument fails every CLI alike, and must not leave every
    /// rung skipped for minutes.
    pub fn distrust(&self, target: &str, reason: &str) {
        let result = self.update(|file| {
            let entry = file
                .targets
                .entry(target.to_string())
                .or_insert_with(|| TargetHealth {
                    class: ErrorClass::Fastfail,
                    reason: String::new(),
                    checked_ms: 0,
                    cooldown_until_ms: None,
                    consecutive_failures: 0,
                    auth_failures: 0,
                    latency_ms: None,
                });
            entry.class = ErrorClass::Fastfail;
            entry.reason = crate::redact::redact(reason);
            entry.checked_ms = now_ms();
            entry.consecutive_failures += 1;
        });
        if let Err(err) = result {
            crate::term::debug(&format!("could not record health: {err:#}"));
        }
    }
}

/// The health a target has after `outcome`: the cooldown rules of DESIGN.md §5.
pub fn after(
    previous: Option<&TargetHealth>,
    outcome: &Outcome,
    quota_cooldown: Duration,
    now: SystemTime,
) -> TargetHealth {
    let failures = previous.map_or(0, |p| p.consecutive_failures);
    let auth_failures = previous.map_or(0, |p| p.auth_failures);
    let class = outcome.class;
    let auth_failures = if class == ErrorClass::Auth {
        auth_failures + 1
    } else if class == ErrorClass::Ok {
        0
    } else {
        auth_failures
    };
    let fixed = match class {
        ErrorClass::RateLimited => Some(RATE_LIMIT_COOLDOWN),
        ErrorClass::Quota => Some(quota_cooldown),
        ErrorClass::Auth => {
            let doublings = auth_failures.saturating_sub(1).min(16);
            Some((AUTH_COOLDOWN * 2u32.pow(doublings)).min(AUTH_COOLDOWN_CAP))
        }
        _ => None,
    };
    let cooldown_until_ms = if class == ErrorClass::Ok {
        None
    } else if let Some(at) = outcome.clears_at.filter(|at| *at > now) {
        // The answer said when it clears: trust that over the fixed time (capped at a day).
        Some(millis(at.min(now + Duration::from_secs(24 * 60 * 60))))
    } else {
        fixed.map(|d| millis(now + d))
    };
    TargetHealth {
        class,
        reason: outcome.reason.clone(),
        checked_ms: millis(now),
        cooldown_until_ms,
        consecutive_failures: if class == ErrorClass::Ok {
            0
        } else {
            failures + 1
        },
        auth_failures,
        latency_ms: u64::try_from(outcome.latency.as_millis()).ok(),
    }
}

impl HealthFile {
    /// Whether `target` may be trusted, must be skipped, or needs a probe, at `now_ms`.
    pub fn verdict(&self, target: &str, probe_cache: Duration, now_ms: u64) -> Verdict {
        let Some(health) = self.targets.get(target) else {
            return Verdict::Unknown;
        };
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
        match health.cooldown_until_ms {
            Some(until) if until > now_ms => Verdict::Cooling {
                class: health.class,
                reason: health.reason.clone(),
                until_ms: Some(until),
            },
            _ => Verdict::Unknown,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(class: ErrorClass) -> Outcome {
        Outcome {
            class,
            reason: "r".into(),
            latency: Duration::from_millis(5),
            clears_at: None,
        }
    }

    #[test]
    fn auth_cooldown_doubles_to_six_hours() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(10_000_000);
        let mut health: Option<TargetHealth> = None;
        let mut minutes = Vec::new();
        for _ in 0..7 {
            let next = after(
                health.as_ref(),
                &outcome(ErrorClass::Auth),
                Duration::from_secs(3600),
                now,
            );
            minutes.push((next.cooldown_until_ms.unwrap() - millis(now)) / 60_000);
            health = Some(next);
        }
        assert_eq!(minutes, [15, 30, 60, 120, 240, 360, 360]);
    }

    #[test]
    fn trusted_only_within_the_cache_window() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(10_000_000);
        let mut file = HealthFile::default();
        file.targets.insert(
            "t".into(),
            after(None, &outcome(ErrorClass::Ok), Duration::ZERO, now),
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
}
