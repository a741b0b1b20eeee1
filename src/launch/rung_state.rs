//! What a rung is now: one rule, fed the facts, that every face draws on — the cascade's
//! choice, `--status`, `--check-fallback`, `--dry-run`, the dashboard and the statusline's
//! fallback word. Pure: the callers gather the facts (the table, health shared by every
//! process, the windows, what this process has just found) and print the answer.
//!
//! "Not proved" is its own state and never OK: a login file proves that a file exists, and
//! a rung nobody called is not a fallback (seed 002: "six rungs on paper and one real").

use std::time::Duration;

use serde_json::json;

use crate::error_class::ErrorClass;
use crate::state::health::{Outcome, Proof, TargetHealth, Verdict};

/// How a rung can be proved to answer, from its configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Check {
    /// agent's own call: an API probe, or the CLI's quota report (`agy /usage`).
    Probe,
    /// The backend's `probe = { kind = "command" }`: the user's own headless run.
    Command,
    /// A subscription login: the CLI itself, headless, on its own login.
    SelfCheck,
    /// Nothing proves it: `self_check = false`, or `probe = { kind = "none" }`.
    Off(&'static str),
    /// Its CLI no longer serves its login (Gemini CLI's personal Google logins): nothing
    /// is called for it, nothing proves it, and a launch passes over it. Why.
    Refused(&'static str),
}

impl Check {
    fn proof(&self) -> Proof {
        match self {
            Check::Command => Proof::Command,
            Check::SelfCheck => Proof::SelfCheck,
            Check::Probe | Check::Off(_) | Check::Refused(_) => Proof::Probe,
        }
    }

    /// Whether a launch may call for it before running the rung (a login is never probed).
    fn probed_by_a_launch(&self) -> bool {
        matches!(self, Check::Probe | Check::Command)
    }
}

/// Where a rung failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum During {
    /// The launched CLI failed fast.
    Launch,
    /// A probe or the CLI's own check.
    Check,
}

/// What a rung is now.
#[derive(Debug, Clone, PartialEq)]
pub enum RungState {
    /// It answered: how, when (unix ms), and in how long.
    Ok {
        proof: Proof,
        reason: String,
        at_ms: u64,
        latency_ms: Option<u64>,
        /// Found by this process just now, not read from health.
        fresh: bool,
    },
    /// Its login's window is past the mark: no call until the reset.
    Parked {
        reason: String,
        until_ms: Option<u64>,
    },
    /// Skipped with no call after a failure until then (`None`: until the configuration
    /// changes); `breaker`: the circuit breaker is open.
    Cooling {
        class: ErrorClass,
        reason: String,
        until_ms: Option<u64>,
        breaker: bool,
    },
    /// It failed, at a launch or in a check, and nothing has answered since.
    Failed {
        during: During,
        class: ErrorClass,
        reason: String,
        at_ms: u64,
        /// Found by this process just now: a launch does not ask again.
        fresh: bool,
    },
    /// Nothing has shown that it answers: why. `passed_over`: nothing can (its CLI no
    /// longer serves its login), so a launch passes over it and it is nobody's cover.
    NotProved { why: String, passed_over: bool },
    /// It cannot run here: no credential, bad arguments — or no option at all, neither alive
    /// nor dead (`not_installed`: its CLI is not installed, not set up, or turned off).
    Skipped {
        class: ErrorClass,
        why: String,
        not_installed: bool,
    },
    /// Nothing known: a launch probes it first.
    Unchecked,
    /// The daily budget kept it from being checked: neither alive nor dead.
    Budget { reason: String },
}

/// A window that parks the rung: its reason and reset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Park {
    pub reason: String,
    pub until_ms: Option<u64>,
    /// The window is full: the wall itself, not only past the mark.
    pub full: bool,
}

impl Park {
    /// Whether this parks its rung: a full window always does; one only past the mark
    /// (`park_at_percent`) never parks the last rung that could run — asked only then.
    /// The one statement of that guard, for the launch and the reports alike.
    pub fn applies(&self, below_could_run: impl FnOnce() -> bool) -> bool {
        self.full || below_could_run()
    }
}

/// What is known of one rung, gathered by the caller.
#[derive(Debug, Clone, Copy)]
pub struct Facts<'a> {
    /// How it can be proved, or why it cannot run at all.
    pub ready: Result<&'a Check, Unfit<'a>>,
    /// Health's record of its target, shared by every process.
    pub record: Option<&'a TargetHealth>,
    /// What this process found just now (a probe, a check), newer than the record.
    pub fresh: Option<&'a Outcome>,
    /// The window that parks it, when the caller parks it.
    pub parked: Option<&'a Park>,
    /// How long a good answer is trusted: `probe_cache_seconds`, or for a CLI's own check
    /// `self_check_cache_seconds`.
    pub trust: Duration,
    pub now_ms: u64,
}

/// Why a rung cannot run, as its resolution said.
#[derive(Debug, Clone, Copy)]
pub struct Unfit<'a> {
    pub class: ErrorClass,
    pub reason: &'a str,
    pub not_installed: bool,
}

/// The one rule: what a rung is now.
pub fn state(facts: &Facts) -> RungState {
    let check = match facts.ready {
        Err(unfit) => {
            return RungState::Skipped {
                class: unfit.class,
                why: unfit.reason.to_string(),
                not_installed: unfit.not_installed,
            };
        }
        Ok(check) => check,
    };
    // Before any record: an old answer of the CLI's own check predates the refusal.
    if let Check::Refused(why) = check {
        return RungState::NotProved {
            why: (*why).to_string(),
            passed_over: true,
        };
    }
    if let Some(park) = facts.parked {
        return RungState::Parked {
            reason: park.reason.clone(),
            until_ms: park.until_ms,
        };
    }
    if let Some(outcome) = facts.fresh {
        return match outcome.class {
            ErrorClass::Budget => RungState::Budget {
                reason: outcome.reason.clone(),
            },
            ErrorClass::Unproved => RungState::NotProved {
                why: outcome.reason.clone(),
                passed_over: false,
            },
            ErrorClass::Ok => RungState::Ok {
                proof: check.proof(),
                reason: outcome.reason.clone(),
                at_ms: facts.now_ms,
                latency_ms: u64::try_from(outcome.latency.as_millis()).ok(),
                fresh: true,
            },
            class => RungState::Failed {
                during: During::Check,
                class,
                reason: outcome.reason.clone(),
                at_ms: facts.now_ms,
                fresh: true,
            },
        };
    }
    let Some(record) = facts.record else {
        return unproved(check, None);
    };
    if let Some(failure) = &record.launch_failure {
        return RungState::Failed {
            during: During::Launch,
            class: ErrorClass::Fastfail,
            reason: failure.reason.clone(),
            at_ms: failure.at_ms,
            fresh: false,
        };
    }
    match record.verdict(facts.trust, facts.now_ms) {
        Verdict::Cooling {
            class,
            reason,
            until_ms,
        } => RungState::Cooling {
            class,
            reason,
            until_ms,
            breaker: matches!(
                record.breaker,
                crate::state::health::Breaker::Open { until_ms, .. } if until_ms > facts.now_ms
            ),
        },
        Verdict::Trusted { reason } if !matches!(check, Check::Off(_)) => RungState::Ok {
            proof: record.proved_by.unwrap_or(Proof::Probe),
            reason,
            at_ms: record.checked_ms,
            latency_ms: record.latency_ms,
            fresh: false,
        },
        _ if record.class == ErrorClass::Ok || matches!(check, Check::Off(_)) => {
            unproved(check, Some(record))
        }
        _ => RungState::Failed {
            during: During::Check,
            class: record.class,
            reason: record.reason.clone(),
            at_ms: record.checked_ms,
            fresh: false,
        },
    }
}

/// A rung with no fresh good answer: due for a probe, or not proved and why.
fn unproved(check: &Check, record: Option<&TargetHealth>) -> RungState {
    match check {
        Check::Probe | Check::Command => RungState::Unchecked,
        Check::Off(why) => RungState::NotProved {
            why: (*why).to_string(),
            passed_over: false,
        },
        Check::Refused(why) => RungState::NotProved {
            why: (*why).to_string(),
            passed_over: true,
        },
        Check::SelfCheck => RungState::NotProved {
            why: match record {
                Some(record) if record.class == ErrorClass::Ok => format!(
                    "its last check passed {} ago",
                    age(crate::state::health::now_ms().saturating_sub(record.checked_ms))
                ),
                _ => "the CLI's own check has not run (`agent --status` runs it)".to_string(),
            },
            passed_over: false,
        },
    }
}

/// What a launch does with a rung in this state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Run it with no call first.
    Run,
    /// Probe it, then run it if it answers.
    Probe,
    /// Pass over it, with no call.
    Pass,
}

impl RungState {
    /// What a launch does with it: a rung is passed over only for what a call would not
    /// change (a window, a cooldown, no binary, a login its CLI no longer serves); a
    /// failure with no cooldown is asked again, and a login, which is never probed, runs —
    /// the fast-fail net guards it.
    pub fn launch_action(&self, check: Option<&Check>) -> Action {
        let probed = check.is_some_and(Check::probed_by_a_launch);
        match self {
            RungState::NotProved {
                passed_over: true, ..
            }
            | RungState::Failed { fresh: true, .. } => Action::Pass,
            RungState::Ok { .. } | RungState::NotProved { .. } | RungState::Budget { .. } => {
                Action::Run
            }
            RungState::Unchecked => Action::Probe,
            RungState::Failed { .. } if probed => Action::Probe,
            RungState::Failed { .. } => Action::Run,
            RungState::Parked { .. } | RungState::Cooling { .. } | RungState::Skipped { .. } => {
                Action::Pass
            }
        }
    }

    /// Whether a launch could run it (after a probe, for some): the parking rule's "a rung
    /// below could run".
    pub fn could_run(&self) -> bool {
        !matches!(
            self,
            RungState::Parked { .. }
                | RungState::Cooling { .. }
                | RungState::Skipped { .. }
                | RungState::NotProved {
                    passed_over: true,
                    ..
                }
        )
    }

    /// Whether it is proved to answer now: the only state `--check-fallback` counts as cover.
    pub fn is_proved(&self) -> bool {
        matches!(self, RungState::Ok { .. })
    }

    /// Whether it is a fault worth an alert: failed or cooling (not parked by a window,
    /// not unproved, not missing).
    pub fn is_fault(&self) -> bool {
        matches!(self, RungState::Failed { .. } | RungState::Cooling { .. })
    }

    /// The state's name in JSON (`--status --json`, the dashboard).
    pub fn as_str(&self) -> &'static str {
        match self {
            RungState::Ok { .. } => "ok",
            RungState::Parked { .. } => "parked",
            RungState::Cooling { breaker: true, .. } => "breaker_open",
            RungState::Cooling { .. } => "cooling",
            RungState::Failed { .. } => "failed",
            RungState::NotProved { .. } => "not_proved",
            RungState::Skipped { .. } => "skipped",
            RungState::Unchecked => "unknown",
            RungState::Budget { .. } => "budget",
        }
    }

    /// The word a row starts with, eight wide at most.
    pub fn label(&self) -> &'static str {
        match self {
            RungState::Ok { .. } => "OK",
            RungState::Parked { .. } => "PARKED",
            RungState::Cooling { .. }
            | RungState::Failed { .. }
            | RungState::Skipped {
                not_installed: false,
                ..
            } => "FAIL",
            RungState::NotProved { .. } | RungState::Unchecked => "UNPROVED",
            RungState::Skipped { .. } | RungState::Budget { .. } => "SKIP",
        }
    }

    /// The error class, `ok` when it answered.
    pub fn class(&self) -> ErrorClass {
        match self {
            RungState::NotProved {
                passed_over: true, ..
            } => ErrorClass::Unproved,
            RungState::Ok { .. } | RungState::NotProved { .. } | RungState::Unchecked => {
                ErrorClass::Ok
            }
            RungState::Parked { .. } => ErrorClass::Quota,
            RungState::Cooling { class, .. }
            | RungState::Failed { class, .. }
            | RungState::Skipped { class, .. } => *class,
            RungState::Budget { .. } => ErrorClass::Budget,
        }
    }

    /// Until when a launch passes over it, if it does.
    pub fn until_ms(&self) -> Option<u64> {
        match self {
            RungState::Parked { until_ms, .. } | RungState::Cooling { until_ms, .. } => *until_ms,
            _ => None,
        }
    }

    /// When it was last seen answering or failing (unix ms).
    pub fn at_ms(&self) -> Option<u64> {
        match self {
            RungState::Ok { at_ms, .. } | RungState::Failed { at_ms, .. } => Some(*at_ms),
            _ => None,
        }
    }

    /// The rest of its row, in one line: its own facts, stated once.
    pub fn describe(&self, now_ms: u64) -> String {
        let ago = |at: u64| age(now_ms.saturating_sub(at));
        match self {
            RungState::Ok {
                proof,
                reason,
                at_ms,
                latency_ms,
                fresh,
            } => {
                let took = latency_ms.map_or_else(String::new, |ms| format!(", {}", took(ms)));
                let when = if *fresh {
                    String::new()
                } else {
                    format!(" {} ago", ago(*at_ms))
                };
                match proof {
                    // Its answer is one word we asked for: how long it took says more.
                    Proof::SelfCheck => format!("answered the CLI's own check{when}{took}"),
                    Proof::Command => format!("answered its command probe{when}{took}: {reason}"),
                    Proof::Probe if *fresh => format!("{reason}{}", paren_took(*latency_ms)),
                    Proof::Probe => format!("{reason} (probed OK{when})"),
                }
            }
            RungState::Parked { reason, .. } => format!("parked: {reason}"),
            RungState::Cooling {
                class,
                reason,
                until_ms,
                ..
            } => {
                let until = until_ms.map_or_else(
                    || "until the configuration changes".to_string(),
                    |until| format!("{} more", age(until.saturating_sub(now_ms))),
                );
                format!("{class}: {reason} (skipped, {until})")
            }
            RungState::Failed {
                during: During::Launch,
                reason,
                at_ms,
                ..
            } => format!("failed at launch {} ago: {reason}", ago(*at_ms)),
            RungState::Failed {
                class,
                reason,
                at_ms,
                ..
            } if now_ms.saturating_sub(*at_ms) >= 60_000 => {
                format!("{class}: {reason} (checked {} ago)", ago(*at_ms))
            }
            RungState::Failed { class, reason, .. } => format!("{class}: {reason}"),
            RungState::NotProved { why, .. } => format!("not proved: {why}"),
            RungState::Skipped {
                why,
                not_installed: true,
                ..
            } => why.clone(),
            RungState::Skipped { class, why, .. } => format!("{class}: {why}"),
            RungState::Unchecked => "not checked yet: a launch probes it first".to_string(),
            RungState::Budget { reason } => format!("not checked: {reason}"),
        }
    }

    /// The gist of the state in a few words, for a verdict that names many rungs (`auth`,
    /// `failed at launch 5 min ago`, `self_check = false`); none for a proved rung.
    pub fn gist(&self, now_ms: u64) -> Option<String> {
        Some(match self {
            RungState::Ok { .. } => return None,
            RungState::Parked { reason, .. } => reason.clone(),
            RungState::Failed {
                during: During::Launch,
                at_ms,
                ..
            } => format!(
                "failed at launch {} ago",
                age(now_ms.saturating_sub(*at_ms))
            ),
            RungState::Skipped {
                class: ErrorClass::NotSetUp,
                ..
            } => "not set up".to_string(),
            RungState::Skipped {
                class: ErrorClass::Disabled,
                ..
            } => "off".to_string(),
            RungState::Cooling { class, .. }
            | RungState::Failed { class, .. }
            | RungState::Skipped { class, .. } => class.to_string(),
            RungState::NotProved { why, .. } => why.clone(),
            RungState::Unchecked => "not checked yet".to_string(),
            RungState::Budget { .. } => "budget".to_string(),
        })
    }

    /// The row as JSON: the state, its class and facts (`--status --json`, the dashboard).
    pub fn json(&self, now_ms: u64) -> serde_json::Value {
        let until = self.until_ms().and_then(rfc3339);
        let (proof, during) = match self {
            RungState::Ok { proof, .. } => (serde_json::to_value(proof).ok(), None),
            RungState::Failed { during, .. } => (
                None,
                Some(match during {
                    During::Launch => "launch",
                    During::Check => "check",
                }),
            ),
            _ => (None, None),
        };
        json!({
            "state": self.as_str(),
            "class": self.class().as_str(),
            "reason": self.describe(now_ms),
            "proved_by": proof,
            "failed_at": during,
            "until": until,
            "checked_age_seconds": self.at_ms().map(|at| now_ms.saturating_sub(at) / 1000),
            "latency_ms": match self {
                RungState::Ok { latency_ms, .. } => *latency_ms,
                _ => None,
            },
        })
    }
}

/// The statusline's fallback word: the last `--check-fallback` verdict, made `DEGRADED`
/// when a fallback has a fault now (it failed at a launch, or cools after a failure) that
/// the verdict may predate. A rung not proved since the check is no news: the check said.
pub fn fallback_word(last_verdict: Option<&str>, fallbacks: &[&RungState]) -> Option<String> {
    let fault = fallbacks.iter().any(|state| state.is_fault());
    match last_verdict {
        Some("DOWN") => Some("DOWN".to_string()),
        _ if fault => Some("DEGRADED".to_string()),
        other => other.map(str::to_string),
    }
}

fn rfc3339(ms: u64) -> Option<String> {
    jiff::Timestamp::from_millisecond(i64::try_from(ms).ok()?)
        .ok()
        .map(|t| t.to_string())
}

/// `312 ms`, `3.1 s`.
fn took(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms} ms")
    } else {
        #[allow(clippy::cast_precision_loss)]
        let seconds = ms as f64 / 1000.0;
        format!("{seconds:.1} s")
    }
}

fn paren_took(latency_ms: Option<u64>) -> String {
    latency_ms.map_or_else(String::new, |ms| format!(" ({ms} ms)"))
}

/// `12 s`, `5 min`, `3 h`, `2 d`.
pub fn age(ms: u64) -> String {
    match ms / 1000 {
        s if s < 60 => format!("{s} s"),
        s if s < 3600 => format!("{} min", s / 60),
        s if s < 86_400 => format!("{} h", s / 3600),
        s => format!("{} d", s / 86_400),
    }
}
