//! Relay replicas share health: a cooldown or an open breaker one replica learns stops the
//! others from calling that upstream (within a second), and when it ends exactly one call
//! goes through before the rest follow. The replicas here are relay processes on one state
//! directory, as two `agent --relay serve` on one host are.

use std::fs;
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant, SystemTime};

use serde_json::Value;

use crate::relay::{MODEL, TOKEN, ledger, messages_body, relay_world};
use crate::support::relay::{Answer, RelayProc};
use crate::support::{MockApi, Reply, Rule, Sandbox};

const PATH: &str = "/anthropic/v1/messages";

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
fn upstream_health(sb: &Sandbox, api: &MockApi) -> Option<Value> {
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

/// Calls `replica` until it turns a call away without sending it, for at most `deadline`;
/// the turned-away answer.
fn first_refusal(replica: &RelayProc, api: &MockApi, deadline: Instant) -> Option<Answer> {
    while Instant::now() < deadline {
        let (answer, sent) = call_counted(replica, api);
        if !sent {
            return Some(answer);
        }
        thread::sleep(Duration::from_millis(20));
    }
    None
}

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
            .header("retry-after", "2"),
    ));

    let learned = call(a, MODEL);
    let deadline = Instant::now() + Duration::from_secs(1);
    assert_eq!(learned.status, 429, "{learned:?}");

    // Every replica, A's too, turns calls away by then; until then one may still call.
    let mut refusals = Vec::new();
    for replica in [b, c, a] {
        let refused = first_refusal(replica, &api, deadline)
            .expect("a replica still called the rate-limited upstream a second after A learned it");
        refusals.push(refused);
    }
    // Until the cooldown ends, nothing more reaches the upstream from any replica.
    let calls_so_far = api.posts();
    for replica in [a, b, c] {
        let (answer, sent) = call_counted(replica, &api);
        assert!(
            !sent,
            "a call went upstream during the cooldown: {answer:?}"
        );
        refusals.push(answer);
    }
    assert_eq!(api.posts(), calls_so_far);
    for refused in &refusals {
        assert_eq!(refused.status, 429, "{refused:?}");
        assert_eq!(refused.json()["error"]["type"], "rate_limit_error");
        let seconds = retry_after(refused);
        assert!((1..=2).contains(&seconds), "retry-after {seconds}");
    }

    // The upstream has recovered but answers slowly: the half-open call is in flight while
    // the others arrive.
    api.clear_rules();
    api.on(Rule::model(MODEL).reply(Reply::ok().delay(Duration::from_secs(3))));
    let until = upstream_health(&sb, &api).expect("the upstream's health")["cooldown_until_ms"]
        .as_u64()
        .expect("a cooldown with an end");
    sleep_until_ms(until);
    let before = api.posts();
    let start = Arc::new(Barrier::new(6));
    let answers: Vec<Answer> = thread::scope(|scope| {
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
    let flowing = Instant::now() + Duration::from_secs(2);
    while !call_counted(b, &api).1 {
        assert!(Instant::now() < flowing, "the target was not restored");
        thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(upstream_health(&sb, &api).unwrap()["class"], "ok");
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
    assert!(turned_away.len() >= refusals.len() + 5, "{turned_away:?}");
    assert!(turned_away.iter().all(|line| line["status"] == 429
        && line["tokens"]["input"].as_u64().unwrap_or(0) == 0
        && line["model"] == MODEL));
}

#[test]
fn an_open_breaker_on_one_replica_is_503_on_the_other_and_one_call_closes_it() {
    let (sb, api) = relay_world();
    sb.write_config("[breaker]\nthreshold = 2\nbackoff_seconds = 1\n");
    let a = RelayProc::start(&sb, &[]);
    let b = RelayProc::start(&sb, &[]);
    api.on(Rule::model(MODEL).reply(Reply::anthropic_error(500, "api_error", "Internal")));

    assert_eq!(call(&a, MODEL).status, 500);
    assert_eq!(call(&a, MODEL).status, 500);
    let deadline = Instant::now() + Duration::from_secs(1);
    let refused = first_refusal(&b, &api, deadline)
        .expect("B still called the upstream a second after A's breaker opened");
    assert_eq!(refused.status, 503, "{refused:?}");
    assert_eq!(refused.json()["error"]["type"], "overloaded_error");
    let seconds = retry_after(&refused);
    assert!((1..=2).contains(&seconds), "retry-after {seconds}");

    api.clear_rules();
    let until = upstream_health(&sb, &api).expect("the upstream's health")["breaker"]["until_ms"]
        .as_u64()
        .expect("an open breaker");
    sleep_until_ms(until);
    let (answer, sent) = call_counted(&b, &api);
    assert!(sent && answer.status == 200, "{answer:?}");
    let closed = Instant::now() + Duration::from_secs(1);
    while upstream_health(&sb, &api).unwrap()["breaker"]["state"] != "closed" {
        assert!(Instant::now() < closed, "the breaker stayed open");
        thread::sleep(Duration::from_millis(20));
    }
    // The event is appended just after the health it tells of is written: waited for.
    let written = Instant::now() + Duration::from_secs(10);
    loop {
        let events = fs::read_to_string(sb.state_dir().join("events.jsonl")).unwrap();
        if events.contains("\"event\":\"restore\"") {
            break;
        }
        assert!(Instant::now() < written, "no restore event: {events}");
        thread::sleep(Duration::from_millis(20));
    }
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
    let written = Instant::now() + Duration::from_secs(1);
    let until = loop {
        if let Some(until) =
            upstream_health(&sb, &api).and_then(|h| h["cooldown_until_ms"].as_u64())
        {
            break until;
        }
        assert!(
            Instant::now() < written,
            "the cooldown never reached health.json"
        );
        thread::sleep(Duration::from_millis(10));
    };

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
    let deadline = Instant::now() + Duration::from_secs(1);
    loop {
        let (answer, sent) = call_counted(&b, &api);
        if sent {
            assert_eq!(answer.status, 200, "{answer:?}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the claim of a call with no verdict still held: {answer:?}"
        );
        thread::sleep(Duration::from_millis(20));
    }
}
