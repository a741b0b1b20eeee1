//! Tests of the one rule (`launch::rung_state`), fed every state, and of every face that
//! draws on it: the cascade's choice, `--dry-run`'s line, `--status`'s row and JSON,
//! `--check-fallback`'s verdict, the dashboard's row and the statusline's fallback word.

use std::time::Duration;

use crate::error_class::ErrorClass;
use crate::launch::cascade::Status;
use crate::launch::rung_state::*;
use crate::state::health::{Breaker, LaunchFailure};
use crate::state::health::{Outcome, Proof, TargetHealth};

/// The test's now, from the clock the page reads too (a fixed instant would put the
/// parked window's reset in the past on a later day).
static NOW: std::sync::LazyLock<u64> = std::sync::LazyLock::new(crate::state::health::now_ms);
const MIN: u64 = 60_000;

fn record(class: ErrorClass, checked_ms: u64) -> TargetHealth {
    TargetHealth {
        class,
        reason: format!("{class} answer"),
        checked_ms,
        cooldown_until_ms: None,
        consecutive_failures: 0,
        auth_failures: 0,
        latency_ms: Some(3100),
        breaker: Breaker::Closed,
        recent: Vec::new(),
        half_open_until_ms: None,
        proved_by: None,
        launch_failure: None,
    }
}

fn outcome(class: ErrorClass, reason: &str) -> Outcome {
    Outcome {
        class,
        reason: reason.to_string(),
        latency: Duration::from_millis(3100),
        clears_at: None,
    }
}

fn facts<'a>(
    check: &'a Check,
    record: Option<&'a TargetHealth>,
    fresh: Option<&'a Outcome>,
    parked: Option<&'a Park>,
) -> Facts<'a> {
    Facts {
        ready: Ok(check),
        record,
        fresh,
        parked,
        trust: Duration::from_secs(300),
        now_ms: *NOW,
    }
}

/// One of every state, each from the facts that make it.
fn every_state() -> Vec<(&'static str, RungState)> {
    let self_check = Check::SelfCheck;
    let probe = Check::Probe;
    let mut proved = record(ErrorClass::Ok, *NOW - MIN);
    proved.proved_by = Some(Proof::SelfCheck);
    let mut launched = record(ErrorClass::Fastfail, *NOW - 5 * MIN);
    launched.launch_failure = Some(LaunchFailure {
        at_ms: *NOW - 5 * MIN,
        reason: "exited 1 after 0s".into(),
    });
    let mut cooling = record(ErrorClass::Auth, *NOW - MIN);
    cooling.cooldown_until_ms = Some(*NOW + 10 * MIN);
    let park = Park {
        reason: "5-hour limit 100%, resets 15:00".into(),
        until_ms: Some(*NOW + 42 * MIN),
        full: true,
    };
    let answered = outcome(ErrorClass::Ok, "codex answered: OK");
    let refused = outcome(ErrorClass::Auth, "401 Unauthorized — run `codex login`");
    let budget = outcome(ErrorClass::Budget, "budget exhausted: 500 of 500 calls");
    let off = Check::Off("self_check = false");
    let gone = Check::Refused(crate::adapter::gemini::PERSONAL_LOGIN_GONE);
    let unfit = Facts {
        ready: Err(Unfit {
            class: ErrorClass::BinaryMissing,
            reason: "not installed",
            not_installed: true,
        }),
        ..facts(&probe, None, None, None)
    };
    vec![
        (
            "ok, proved by the CLI's own check now",
            state(&facts(&self_check, None, Some(&answered), None)),
        ),
        (
            "ok, proved a minute ago",
            state(&facts(&self_check, Some(&proved), None, None)),
        ),
        (
            "parked",
            state(&facts(&self_check, Some(&proved), None, Some(&park))),
        ),
        ("cooling", state(&facts(&probe, Some(&cooling), None, None))),
        (
            "failed at launch",
            state(&facts(&self_check, Some(&launched), None, None)),
        ),
        (
            "failed in a check",
            state(&facts(&self_check, None, Some(&refused), None)),
        ),
        (
            "not proved: self_check = false",
            state(&facts(&off, Some(&proved), None, None)),
        ),
        (
            "not proved: its CLI no longer serves the login, an old pass notwithstanding",
            state(&facts(&gone, Some(&proved), None, None)),
        ),
        (
            "not proved: never checked",
            state(&facts(&self_check, None, None, None)),
        ),
        ("skipped", state(&unfit)),
        ("unchecked", state(&facts(&probe, None, None, None))),
        ("budget", state(&facts(&probe, None, Some(&budget), None))),
    ]
}

#[test]
fn each_fact_makes_its_state() {
    let names: Vec<&str> = every_state().iter().map(|(_, s)| s.as_str()).collect();
    assert_eq!(
        names,
        [
            "ok",
            "ok",
            "parked",
            "cooling",
            "failed",
            "failed",
            "not_proved",
            "not_proved",
            "not_proved",
            "skipped",
            "unknown",
            "budget"
        ]
    );
}

#[test]
fn every_face_draws_each_state_from_the_one_rule() {
    for (what, state) in every_state() {
        // --status: the row's word and its own facts.
        let row = crate::report::rows::row("codex / gpt-5", 14, &state, *NOW);
        let json = state.json(*NOW);
        // The dashboard draws the row from the same JSON.
        let mut document = json.clone();
        document["rung"] = serde_json::json!(2);
        document["backend"] = serde_json::json!("codex");
        let html = super::rungs::rung_row(&document);
        // The cascade's choice, and --dry-run's line for it.
        let action = state.launch_action(Some(&Check::SelfCheck));
        let status = Status::of_state(&state, action == Action::Run, *NOW);
        let dry = crate::launch::dry_run::describe(&status);
        // --check-fallback's verdict with this rung as the only fallback.
        let (verdict, message) =
            crate::report::check_fallback::judge(&[("codex".into(), &state)], "anthropic", *NOW);
        let word = fallback_word(Some("OK"), &[&state]);

        assert!(
            html.contains(&format!("data-state=\"{}\"", state.as_str())),
            "{what}: {html}"
        );
        assert_eq!(json["state"], state.as_str(), "{what}");
        match &state {
            RungState::Ok { proof, fresh, .. } => {
                assert!(row.starts_with("OK "), "{what}: {row}");
                if *proof == Proof::SelfCheck && *fresh {
                    assert!(
                        row.contains("answered the CLI's own check, 3.1 s"),
                        "{what}: {row}"
                    );
                }
                assert!(!fresh || !row.contains(" ago"), "{what}: {row}");
                assert_eq!(action, Action::Run, "{what}");
                assert!(status.is_good(), "{what}");
                assert_eq!(verdict.as_str(), "OK", "{what}: {message}");
                assert_eq!(word.as_deref(), Some("OK"), "{what}");
            }
            RungState::Parked { .. } => {
                assert!(row.starts_with("PARKED "), "{what}: {row}");
                assert!(row.contains("resets 15:00"), "{what}: {row}");
                assert_eq!(action, Action::Pass, "{what}");
                assert!(
                    !status.is_good() && dry.contains("resets 15:00"),
                    "{what}: {dry}"
                );
                assert!(json["until"].as_str().is_some(), "{what}");
                assert_ne!(verdict.as_str(), "OK", "{what}: {message}");
                assert!(
                    html.contains(">parked<") && html.contains("resets in "),
                    "{what}: {html}"
                );
            }
            RungState::Cooling { .. } => {
                assert!(row.starts_with("FAIL "), "{what}: {row}");
                assert_eq!(action, Action::Pass, "{what}");
                assert!(!status.is_good(), "{what}");
                assert_eq!(verdict.as_str(), "DOWN", "{what}: {message}");
                assert_eq!(word.as_deref(), Some("DEGRADED"), "{what}");
            }
            RungState::Failed { during, .. } => {
                assert!(row.starts_with("FAIL "), "{what}: {row}");
                assert_eq!(verdict.as_str(), "DOWN", "{what}: {message}");
                assert_eq!(word.as_deref(), Some("DEGRADED"), "{what}");
                if *during == During::Launch {
                    assert!(
                        row.contains("failed at launch 5 min ago: exited 1"),
                        "{what}: {row}"
                    );
                    assert_eq!(json["failed_at"], "launch", "{what}");
                    // A login is never probed: the launch runs it again, the net guarding it.
                    assert_eq!(action, Action::Run, "{what}");
                } else {
                    assert!(row.contains("codex login"), "{what}: {row}");
                    // This process just saw it fail: it is not asked again.
                    assert_eq!(action, Action::Pass, "{what}");
                }
            }
            RungState::NotProved { why, passed_over } => {
                assert!(row.starts_with("UNPROVED "), "{what}: {row}");
                assert!(row.contains(&format!("not proved: {why}")), "{what}: {row}");
                if *passed_over {
                    // Nothing can prove it: a launch passes over it, saying why.
                    assert_eq!(action, Action::Pass, "{what}");
                    assert!(!state.could_run(), "{what}");
                    assert_eq!(dry, format!("unproved: {why}"), "{what}");
                    assert!(html.contains("Antigravity"), "{what}: {html}");
                } else {
                    assert_eq!(action, Action::Run, "{what}");
                    assert!(status.is_good(), "{what}: a launch still runs it");
                }
                assert!(message.contains("not proved: codex"), "{what}: {message}");
                assert_ne!(verdict.as_str(), "OK", "{what}: never cover");
                assert_eq!(word.as_deref(), Some("OK"), "{what}: the check said");
                assert!(!html.contains("data-state=\"ok\""), "{what}: {html}");
            }
            RungState::Skipped { .. } => {
                assert!(row.starts_with("SKIP "), "{what}: {row}");
                assert_eq!(action, Action::Pass, "{what}");
                assert!(dry.starts_with("SKIP "), "{what}: {dry}");
            }
            RungState::Unchecked => {
                assert!(row.starts_with("UNPROVED "), "{what}: {row}");
                assert_eq!(action, Action::Probe, "{what}");
                assert_ne!(verdict.as_str(), "OK", "{what}: {message}");
            }
            RungState::Budget { .. } => {
                assert!(row.starts_with("SKIP "), "{what}: {row}");
                assert_eq!(action, Action::Run, "{what}");
                assert_eq!(verdict.as_str(), "BUDGET", "{what}: {message}");
            }
        }
    }
}

#[test]
fn a_good_answer_older_than_the_trust_is_not_proved_for_a_login_and_due_for_a_probe() {
    let old = record(ErrorClass::Ok, *NOW - 10 * MIN);
    let login = state(&facts(&Check::SelfCheck, Some(&old), None, None));
    assert!(
        matches!(&login, RungState::NotProved { why, .. } if why.contains("passed")),
        "{login:?}"
    );
    let probed = state(&facts(&Check::Probe, Some(&old), None, None));
    assert_eq!(probed, RungState::Unchecked);
}

#[test]
fn a_launch_failure_outranks_an_older_good_answer_until_a_later_one() {
    let mut record = record(ErrorClass::Ok, *NOW - MIN);
    record.launch_failure = Some(LaunchFailure {
        at_ms: *NOW - MIN,
        reason: "exited 2 after 0s".into(),
    });
    let failed = state(&facts(&Check::Probe, Some(&record), None, None));
    assert!(
        matches!(
            failed,
            RungState::Failed {
                during: During::Launch,
                ..
            }
        ),
        "{failed:?}"
    );
    // A launch probes it again before it runs.
    assert_eq!(failed.launch_action(Some(&Check::Probe)), Action::Probe);
    let answered = outcome(ErrorClass::Ok, "answered");
    let now = state(&facts(&Check::Probe, Some(&record), Some(&answered), None));
    assert!(now.is_proved(), "{now:?}");
}

#[test]
fn the_verdict_counts_only_proved_rungs_as_cover() {
    let ok = RungState::Ok {
        proof: Proof::SelfCheck,
        reason: "OK".into(),
        at_ms: *NOW,
        latency_ms: Some(3100),
        fresh: true,
    };
    let off = RungState::NotProved {
        why: "self_check = false".into(),
        passed_over: false,
    };
    let (verdict, message) = crate::report::check_fallback::judge(
        &[("codex".into(), &ok), ("gemini".into(), &off)],
        "anthropic",
        *NOW,
    );
    assert_eq!(verdict.as_str(), "DEGRADED");
    assert!(
        message == "DEGRADED: still covered by codex but not proved: gemini (self_check = false)",
        "{message}"
    );
}

#[test]
fn the_statusline_word_is_the_last_verdict_unless_a_fallback_failed_since() {
    let launched = RungState::Failed {
        during: During::Launch,
        class: ErrorClass::Fastfail,
        reason: "exited 1 after 0s".into(),
        at_ms: *NOW,
        fresh: false,
    };
    let off = RungState::NotProved {
        why: "x".into(),
        passed_over: false,
    };
    assert_eq!(fallback_word(Some("OK"), &[&off]).as_deref(), Some("OK"));
    assert_eq!(
        fallback_word(Some("OK"), &[&off, &launched]).as_deref(),
        Some("DEGRADED")
    );
    assert_eq!(
        fallback_word(Some("DOWN"), &[&launched]).as_deref(),
        Some("DOWN")
    );
    assert_eq!(fallback_word(None, &[&off]), None);
}
