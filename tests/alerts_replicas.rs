//! One alert per change however many watchdogs run at once: replicas share `watchdog.json`
//! (today one state directory, tomorrow a shared store), and only the run that claims an
//! owed alert delivers it.

use std::process::Command;

use crate::support::sandbox::{RUN_TIMEOUT, run_command};
use crate::support::{MockApi, Reply, Rule, Run, wait};
use crate::world::{GEMINI_MODEL, World, world};

fn with_webhook(w: &World, hook: &MockApi) {
    w.sb.write_config(&format!(
        "[alerts.webhook]\nurl = \"{}/hook\"\n",
        hook.url()
    ));
}

/// Runs the three `commands` at once while `hook` holds the first delivery it gets until
/// the other two runs have ended: they are past their checks, and have sent nothing, while
/// it is still in flight. A second delivery would be held too, and the two runs would never
/// both end: the test fails at the suite's patience.
pub(crate) fn three_runs_one_delivery_held(
    commands: Vec<Command>,
    hook: &MockApi,
    phase: &str,
) -> Vec<Run> {
    hook.on(Rule::path_contains("/hook").reply(Reply::status(200).body("ok").held(phase)));
    std::thread::scope(|scope| {
        let delivered = hook.releasing(phase);
        let runs: Vec<_> = commands
            .into_iter()
            .map(|cmd| scope.spawn(move || run_command(cmd, RUN_TIMEOUT)))
            .collect();
        wait::until("one delivery held and the two other runs ended", || {
            hook.posts() >= 1 && runs.iter().filter(|run| run.is_finished()).count() == 2
        });
        delivered.now();
        runs.into_iter().map(|run| run.join().unwrap()).collect()
    })
}

fn break_gemini(w: &World) {
    w.api
        .on(Rule::model(GEMINI_MODEL).reply(Reply::gemini_error(
            400,
            "INVALID_ARGUMENT",
            "API key not valid",
        )));
}

/// Three `agent --check-fallback` started at the same moment on one HOME and state dir.
fn three_replicas_check(w: &World, hook: &MockApi, phase: &str) -> Vec<Run> {
    let commands: Vec<_> = (0..3)
        .map(|_| w.sb.command(&["--check-fallback"]))
        .collect();
    three_runs_one_delivery_held(commands, hook, phase)
}

fn states_sent(hook: &MockApi) -> Vec<String> {
    hook.post_requests()
        .iter()
        .map(|r| r.json()["state"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn three_replicas_send_one_alert_per_change_and_one_recovery() {
    let w = world();
    let hook = MockApi::start();
    with_webhook(&w, &hook);
    break_gemini(&w);

    for run in three_replicas_check(&w, &hook, "degraded") {
        assert_eq!(run.code, Some(1), "{run:?}");
    }
    assert_eq!(
        states_sent(&hook),
        ["DEGRADED"],
        "OK → DEGRADED seen by three replicas is one alert"
    );

    w.api.clear_rules();
    for run in three_replicas_check(&w, &hook, "recovered") {
        assert_eq!(run.code, Some(0), "{run:?}");
    }
    let sent = hook.post_requests();
    assert_eq!(
        states_sent(&hook),
        ["DEGRADED", "OK"],
        "DEGRADED → OK seen by three replicas is one recovery"
    );
    assert!(
        sent[1].json()["message"]
            .as_str()
            .unwrap()
            .contains("recovered"),
        "{}",
        sent[1].body
    );
    let state: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(w.sb.state_dir().join("watchdog.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        state["pending"],
        serde_json::json!([]),
        "nothing owed: {state}"
    );
}

/// `watchdog.json` as a replica left it: DEGRADED already announced, and the alert still
/// owed to the webhook, held by a run that claimed it until `until`.
fn owed_alert_claimed_until(w: &World, until: &str) {
    let state = serde_json::json!({
        "state": "DEGRADED",
        "since": "2026-01-01T00:00:00Z",
        "pending": [{
            "channel": "webhook",
            "alert": {
                "state": "DEGRADED",
                "previous": "OK",
                "message": "agent watchdog on replica-b: the owed alert",
                "rungs": [],
                "time": "2026-01-01T00:00:00Z",
            },
            "attempts": 0,
            "last_error": "",
            "claim": {"by": "replica-b:4242:00000000deadbeef", "until": until},
        }],
    });
    std::fs::write(
        w.sb.state_dir().join("watchdog.json"),
        serde_json::to_string_pretty(&state).unwrap(),
    )
    .unwrap();
}

#[test]
fn an_alert_claimed_by_a_live_run_waits_and_a_dead_runs_claim_lapses_to_the_next_run() {
    let w = world();
    let hook = MockApi::start();
    w.sb.write_config(&format!(
        "[alerts.webhook]\nurl = \"{}/hook\"\n",
        hook.url()
    ));
    hook.on(Rule::path_contains("/hook").reply(Reply::status(200).body("ok")));
    break_gemini(&w);

    // Another replica is delivering it right now: not ours to send.
    let later = (jiff::Timestamp::now() + jiff::SignedDuration::from_secs(600)).to_string();
    owed_alert_claimed_until(&w, &later);
    assert_eq!(w.sb.run(&["--check-fallback"]).code, Some(1));
    assert_eq!(hook.posts(), 0, "a live claim is left to its holder");

    // That replica was killed mid-delivery: its claim lapsed, so this run sends it.
    owed_alert_claimed_until(&w, "2026-01-01T00:01:00Z");
    let run = w.sb.run(&["--check-fallback"]);
    assert_eq!(run.code, Some(1), "{run:?}");
    let sent = hook.post_requests();
    assert_eq!(sent.len(), 1, "the owed alert, once");
    assert_eq!(
        sent[0].json()["message"],
        "agent watchdog on replica-b: the owed alert"
    );

    assert_eq!(w.sb.run(&["--check-fallback"]).code, Some(1));
    assert_eq!(hook.posts(), 1, "delivered, so never again");
}
