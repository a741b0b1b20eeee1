//! Relay replicas share health: a cooldown or an open breaker one replica learns stops the
//! others from calling that upstream (once the health they hold is [`FRESH_FOR`] old), and
//! when it ends exactly one call goes through before the rest follow. The replicas here
//! are relay processes on one state directory, as two `agent --relay serve` on one host are.
//!
//! Each step waits for the event that makes the next one true — the record written, the
//! health a replica holds gone stale, the half-open call held upstream — and then asserts
//! the very next call: no deadline decides a test. The one clock left is the cooldown's
//! own, which the upstream sets: long enough that the steps inside it are seconds early.

use std::fs;
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, SystemTime};

use serde_json::Value;

use crate::relay::{MODEL, TOKEN, ledger, messages_body, relay_world};
use crate::support::relay::{Answer, RelayProc};
use crate::support::{MockApi, Reply, Rule, Sandbox, wait};

const PATH: &str = "/anthropic/v1/messages";

/// How old the health a relay checks a call against may be (agent's `relay::gate::FRESH_FOR`):
/// a test that sleeps this long after a record is written knows every replica reads it.
pub(crate) const FRESH_FOR: Duration = Duration::from_millis(250);

pub(crate) fn call(relay: &RelayProc, model: &str) -> Answer {
    relay.post(PATH, Some(TOKEN), &messages_body(model), &[])
}

/// A call to `relay` that reached the mock: the call's answer and whether it went upstream.
pub(crate) fn call_counted(relay: &RelayProc, api: &MockApi) -> (Answer, bool) {
    let before = api.posts();
    let answer = call(relay, MODEL);
    (answer, api.posts() != before)
}

/// The record of the upstream as the relay calls it, for [`MODEL`].
pub(crate) fn upstream_health(sb: &Sandbox, api: &MockApi) -> Option<Value> {
    let text = fs::read_to_string(sb.state_dir().join("health.json")).ok()?;
    let health: Value = serde_json::from_str(&text).ok()?;
    let targets = health["targets"].as_object()?;
    targets
        .iter()
        .find(|(name, _)| {
            name.contains(&api.url())
                && name.contains(MODEL)
                && name.contains("AGENT_RELAY_ANTHROPIC_KEY")
        })
        .map(|(_, record)| record.clone())
}

/// Sleeps until the unix-millisecond instant `until_ms` has passed.
pub(crate) fn sleep_until_ms(until_ms: u64) {
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    let left = u128::from(until_ms).saturating_sub(now);
    thread::sleep(Duration::from_millis(u64::try_from(left).unwrap() + 20));
}

/// The upstream's record once `holds` is true of it, waited for: the books are written
/// just after the answer that changed them.
pub(crate) fn health_once(
    sb: &Sandbox,
    api: &MockApi,
    what: &str,
    holds: impl Fn(&Value) -> bool,
) -> Value {
    wait::for_some(what, || upstream_health(sb, api).filter(|h| holds(h)))
}

/// `call` to `replica`, which must be turned away without reaching the upstream.
fn refused_without_a_call(replica: &RelayProc, api: &MockApi, why: &str) -> Answer {
    let (answer, sent) = call_counted(replica, api);
    assert!(!sent, "{why}: {answer:?}");
    answer
}

/// How long the cooldowns and breakers these tests learn last: the steps they take inside
/// one take a fraction of a second after the event they wait for, so a machine stalled
/// for seconds still takes them in time.
pub(crate) const COOLDOWN: u64 = 5;
const COOLDOWN_SECONDS: &str = "5";

pub(crate) fn retry_after(answer: &Answer) -> u64 {
    answer
        .header("retry-after")
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no retry-after in {answer:?}"))
}

#[test]
fn a_429_learned_by_one_replica_stops_the_others_until_it_ends_then_one_call_restores_it() {
    let (sb, api) = relay_world();
    let replicas = [
        RelayProc::start(&sb, &[]),
        RelayProc::start(&sb, &[]),
        RelayProc::start(&sb, &[]),
    ];
    let [a, b, c] = &replicas;
    // B and C have read health before A learns anything: what they hold must not outlive
    // the second the issue allows.
    assert_eq!(call(b, "claude-haiku-warm").status, 200);
    assert_eq!(call(c, "claude-haiku-warm").status, 200);
    // The upstream is rate-limited for this model, as a real one would say to any caller.
    api.on(Rule::model(MODEL).reply(
        Reply::anthropic_error(429, "rate_limit_error", "Number of requests exceeded")
            .header("retry-after", COOLDOWN_SECONDS),
    ));

    let learned = call(a, MODEL);
    assert_eq!(learned.status, 429, "{learned:?}");
    let until = health_once(&sb, &api, "the cooldown in health.json", |h| {
        h["cooldown_until_ms"].is_u64()
    })["cooldown_until_ms"]
        .as_u64()
        .unwrap();
    thread::sleep(FRESH_FOR);

    // Every replica, A's too, turns the very next call away, and every one after it until
    // the cooldown ends: nothing more reaches the upstream from any replica.
    let calls_so_far = api.posts();
    let mut refusals = Vec::new();
    for replica in [b, c, a, a, b, c] {
        refusals.push(refused_without_a_call(
            replica,
            &api,
            "a replica called the rate-limited upstream once the cooldown was written",
        ));
    }
    assert_eq!(api.posts(), calls_so_far);
    for refused in &refusals {
        assert_eq!(refused.status, 429, "{refused:?}");
        assert_eq!(refused.json()["error"]["type"], "rate_limit_error");
        let seconds = retry_after(refused);
        assert!((1..=COOLDOWN).contains(&seconds), "retry-after {seconds}");
    }

    // The upstream has recovered, and holds the half-open call until the five others have
    // been turned away.
    api.clear_rules();
    api.on(Rule::model(MODEL).reply(Reply::ok().held("the others were turned away")));
    sleep_until_ms(until);
    let before = api.posts();
    let start = Arc::new(Barrier::new(6));
    let answers: Vec<Answer> = thread::scope(|scope| {
        let others_turned_away = api.releasing("the others were turned away");
        let handles: Vec<_> = replicas
            .iter()
            .chain(replicas.iter())
            .map(|replica| {
                let start = Arc::clone(&start);
                scope.spawn(move || {
                    start.wait();
                    call(replica, MODEL)
                })
            })
            .collect();
        wait::until("five of the six calls answered", || {
            handles.iter().filter(|h| h.is_finished()).count() == 5
        });
        others_turned_away.now();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let statuses: Vec<u16> = answers.iter().map(|a| a.status).collect();
    assert_eq!(
        api.posts() - before,
        1,
        "one half-open call, not {statuses:?}"
    );
    assert_eq!(
        statuses.iter().filter(|s| **s == 200).count(),
        1,
        "{statuses:?}"
    );
    assert_eq!(
        statuses.iter().filter(|s| **s == 429).count(),
        5,
        "{statuses:?}"
    );

    // Its success restored the target: calls flow again from every replica.
    health_once(&sb, &api, "the restored upstream in health.json", |h| {
        h["class"] == "ok"
    });
    thread::sleep(FRESH_FOR);
    for replica in [a, b, c] {
        let (answer, sent) = call_counted(replica, &api);
        assert!(sent && answer.status == 200, "not restored: {answer:?}");
    }
    for mut replica in replicas {
        replica.stop();
    }
    // The budget counted the calls sent, not the ones turned away.
    let budget: Value = serde_json::from_str(
        &fs::read_to_string(sb.state_dir().join("budget.json")).expect("budget.json"),
    )
    .unwrap();
    let days = budget["days"].as_object().expect("days");
    let counted: u64 = days.values().map(|d| d["calls"].as_u64().unwrap()).sum();
    assert_eq!(counted, api.posts() as u64, "{budget}");
    let turned_away: Vec<Value> = ledger(&sb)
        .into_iter()
        .filter(|line| line["error_kind"] == "cooling")
        .collect();
    assert_eq!(turned_away.len(), refusals.len() + 5, "{turned_away:?}");
    assert!(turned_away.iter().all(|line| line["status"] == 429
        && line["tokens"]["input"].as_u64().unwrap_or(0) == 0
        && line["model"] == MODEL));
}

#[test]
fn an_open_breaker_on_one_replica_is_503_on_the_other_and_one_call_closes_it() {
    let (sb, api) = relay_world();
    sb.write_config(&format!(
        "[breaker]\nthreshold = 2\nbackoff_seconds = {COOLDOWN}\n"
    ));
    let a = RelayProc::start(&sb, &[]);
    let b = RelayProc::start(&sb, &[]);
    // B has read health before A's breaker opens.
    assert_eq!(call(&b, "claude-haiku-warm").status, 200);
    api.on(Rule::model(MODEL).reply(Reply::anthropic_error(500, "api_error", "Internal")));

    assert_eq!(call(&a, MODEL).status, 500);
    assert_eq!(call(&a, MODEL).status, 500);
    let until = health_once(&sb, &api, "the open breaker in health.json", |h| {
        h["breaker"]["until_ms"].is_u64()
    })["breaker"]["until_ms"]
        .as_u64()
        .unwrap();
    thread::sleep(FRESH_FOR);
    let refused = refused_without_a_call(&b, &api, "B called the upstream once A's breaker opened");
    assert_eq!(refused.status, 503, "{refused:?}");
    assert_eq!(refused.json()["error"]["type"], "overloaded_error");
    let seconds = retry_after(&refused);
    assert!((1..=COOLDOWN).contains(&seconds), "retry-after {seconds}");

    api.clear_rules();
    sleep_until_ms(until);
    let (answer, sent) = call_counted(&b, &api);
    assert!(sent && answer.status == 200, "{answer:?}");
    health_once(&sb, &api, "the breaker closed in health.json", |h| {
        h["breaker"]["state"] == "closed"
    });
    // The event is appended just after the health it tells of is written: waited for.
    wait::until("the restore event in events.jsonl", || {
        fs::read_to_string(sb.state_dir().join("events.jsonl"))
            .unwrap()
            .contains("\"event\":\"restore\"")
    });
}

#[test]
fn a_half_open_call_that_says_nothing_about_the_upstream_hands_the_turn_on() {
    let (sb, api) = relay_world();
    let a = RelayProc::start(&sb, &[]);
    let b = RelayProc::start(&sb, &[]);
    api.on(Rule::model(MODEL).times(1).reply(
        Reply::anthropic_error(429, "rate_limit_error", "Number of requests exceeded")
            .header("retry-after", "1"),
    ));
    assert_eq!(call(&a, MODEL).status, 429);
    let until = health_once(&sb, &api, "the cooldown in health.json", |h| {
        h["cooldown_until_ms"].is_u64()
    })["cooldown_until_ms"]
        .as_u64()
        .unwrap();

    // The half-open call is the client's own mistake: a 400 says nothing about the upstream.
    api.on(Rule::model(MODEL).times(1).reply(Reply::anthropic_error(
        400,
        "invalid_request_error",
        "bad field",
    )));
    sleep_until_ms(until);
    let (first, sent) = call_counted(&a, &api);
    assert!(sent && first.status == 400, "{first:?}");

    // Its claim is given back: the next call, on the other replica, is the half-open one.
    health_once(&sb, &api, "the claim given back in health.json", |h| {
        h["half_open_until_ms"].is_null()
    });
    thread::sleep(FRESH_FOR);
    let (answer, sent) = call_counted(&b, &api);
    assert!(
        sent && answer.status == 200,
        "the claim of a call with no verdict still held: {answer:?}"
    );
}
