//! State shared through the store beyond the relay (DESIGN.md §14): launches and watchdogs
//! under different HOMEs — different people, different machines — over one real
//! `redis-server` see one set of cooldowns and send one alert per change; a store that is
//! away is a notice, not a failed launch; a corrupt shared document is kept aside as a
//! corrupt file is.

use crate::support::redis::{RedisServer, Resp};
use crate::support::{MockApi, Reply, Rule, Run, Sandbox};
use crate::world::{CLAUDE_THEN_CODEX, GEMINI_MODEL, sandbox_on};

const PREFIX: &str = "team-state-test";
const OPUS: &str = "claude-opus-5";

/// `[store]` naming the test's server, then `rest`.
fn on_store(sb: &Sandbox, redis: &RedisServer, rest: &str) {
    sb.write_config(&format!(
        "[store]\nkind = \"redis\"\nurl = \"{}\"\nprefix = \"{PREFIX}\"\n\n{rest}\n",
        redis.url()
    ));
}

#[test]
fn a_cooldown_learned_under_one_home_is_honoured_under_another_without_a_call() {
    let mut redis = RedisServer::start();
    let api = MockApi::start();
    api.on(Rule::model(OPUS).reply(
        Reply::anthropic_error(429, "rate_limit_error", "slow down").header("retry-after", "600"),
    ));
    let (alice, bob) = (sandbox_on(&api), sandbox_on(&api));
    on_store(&alice, &redis, CLAUDE_THEN_CODEX);
    on_store(&bob, &redis, CLAUDE_THEN_CODEX);

    let first = alice.run(&["-p", "hi"]);
    assert_eq!(first.code, Some(0), "{first:?}");
    assert_eq!(api.posts_for_model(OPUS), 1, "alice's launch probed opus");
    assert_eq!(alice.calls("codex").len(), 1, "and fell to codex");

    let second = bob.run(&["-p", "hi"]);
    assert_eq!(second.code, Some(0), "{second:?}");
    assert_eq!(
        api.posts_for_model(OPUS),
        1,
        "bob's launch, under another HOME and state directory, skipped opus without a call"
    );
    assert!(
        second
            .stderr
            .contains("Claude Code (its default model) unavailable")
            && second.stderr.contains("slow down"),
        "bob is told why: {}",
        second.stderr
    );
    assert_eq!(bob.calls("codex").len(), 1);
    assert!(bob.calls("claude").is_empty());
    assert!(
        !bob.state_dir().join("health.json").exists(),
        "the cooldown came from the store, not bob's files"
    );

    // The store away: a launch goes on with this machine's files, and says so.
    redis.stop();
    let offline = bob.run(&["-p", "hi"]);
    assert_eq!(offline.code, Some(0), "{offline:?}");
    assert!(
        offline.stderr.contains("using this machine's state files"),
        "{}",
        offline.stderr
    );
    assert_eq!(bob.calls("codex").len(), 2, "the CLI still ran");
}

/// Three machines' `agent --check-fallback` started at the same moment, one per HOME, the
/// delivery held until the two others ended (see
/// [`crate::alerts_replicas::three_runs_one_delivery_held`]).
fn three_machines_check(machines: &[Sandbox], hook: &MockApi, phase: &str) -> Vec<Run> {
    let commands = machines
        .iter()
        .map(|sb| sb.command(&["--check-fallback"]))
        .collect();
    crate::alerts_replicas::three_runs_one_delivery_held(commands, hook, phase)
}

fn states_sent(hook: &MockApi) -> Vec<String> {
    hook.post_requests()
        .iter()
        .map(|r| r.json()["state"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn three_machines_on_one_store_send_one_alert_per_change_and_one_recovery() {
    let redis = RedisServer::start();
    let api = MockApi::start();
    let hook = MockApi::start();
    let webhook = format!("[alerts.webhook]\nurl = \"{}/hook\"\n", hook.url());
    let machines: Vec<Sandbox> = (0..3)
        .map(|_| {
            let sb = sandbox_on(&api);
            on_store(&sb, &redis, &webhook);
            sb
        })
        .collect();
    api.on(Rule::model(GEMINI_MODEL).reply(Reply::gemini_error(
        400,
        "INVALID_ARGUMENT",
        "API key not valid",
    )));

    for run in three_machines_check(&machines, &hook, "degraded") {
        assert_eq!(run.code, Some(1), "{run:?}");
    }
    assert_eq!(
        states_sent(&hook),
        ["DEGRADED"],
        "OK → DEGRADED seen on three machines is one alert"
    );

    api.clear_rules();
    for run in three_machines_check(&machines, &hook, "recovered") {
        assert_eq!(run.code, Some(0), "{run:?}");
    }
    assert_eq!(
        states_sent(&hook),
        ["DEGRADED", "OK"],
        "DEGRADED → OK seen on three machines is one recovery"
    );
}

/// The keys of the store matching `pattern`.
fn keys(redis: &RedisServer, pattern: &str) -> Vec<String> {
    match redis.command(&["KEYS", pattern]) {
        Resp::Array(keys) => keys.iter().filter_map(Resp::text).collect(),
        other => panic!("KEYS answered {other:?}"),
    }
}

#[test]
fn a_corrupt_shared_document_is_kept_aside_reported_and_the_launch_goes_on() {
    let redis = RedisServer::start();
    let api = MockApi::start();
    let sb = sandbox_on(&api);
    on_store(&sb, &redis, CLAUDE_THEN_CODEX);
    let document = format!("{PREFIX}:health.json");
    redis.command(&["SET", &document, "{not json"]);

    let run = sb.run(&["-p", "hi"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(sb.calls("claude").len(), 1, "the launch went on");
    let aside = keys(&redis, &format!("{document}.corrupt-*"));
    assert_eq!(aside.len(), 1, "kept aside once: {aside:?}");
    assert_eq!(
        redis.command(&["GET", &aside[0]]).text().as_deref(),
        Some("{not json"),
        "the bad bytes are kept for a person to look at"
    );
    assert!(
        run.stderr
            .contains("health.json in the shared store was unreadable")
            && run.stderr.contains(&aside[0]),
        "{}",
        run.stderr
    );
    let corrupt: Vec<serde_json::Value> = redis
        .stream(&format!("{PREFIX}:events"))
        .into_iter()
        .filter(|event| event["event"] == "corrupt_state")
        .collect();
    assert_eq!(corrupt.len(), 1, "{corrupt:?}");
    assert_eq!(corrupt[0]["from"], "health.json");
    assert_eq!(corrupt[0]["to"], aside[0].as_str());
    // What the launch learned replaced it.
    let health = redis
        .command(&["GET", &document])
        .text()
        .expect("rewritten");
    let health: serde_json::Value = serde_json::from_str(&health).expect("valid JSON again");
    assert!(health["targets"].is_object(), "{health}");
}

/// The store as a process of agent's holds it, on the test's server.
fn store_of(redis: &RedisServer) -> agent::state::store::Shared {
    use agent::config::store::{OnStoreDown, RedisStore};
    let store = RedisStore {
        url: redis.url(),
        prefix: PREFIX.into(),
        on_store_down: OnStoreDown::Refuse,
    };
    agent::state::store::Shared::new(&store, OnStoreDown::Refuse).unwrap()
}

#[test]
fn only_the_corrupt_bytes_a_reader_found_are_kept_aside_and_losing_that_race_is_no_outage() {
    use agent::state::store::document;
    let redis = RedisServer::start();
    let shared = store_of(&redis);
    let key = format!("{PREFIX}:watchdog.json");
    let found = b"{not json";
    redis.command(&["SET", &key, "{not json"]);

    // Two readers found the same corrupt bytes: the first keeps them aside…
    let kept = document::keep_aside(&shared, "watchdog.json", found).unwrap();
    assert!(kept.is_some_and(|aside| aside.starts_with(&format!("{key}.corrupt-"))));
    // …the second has nothing left to move, and the server did answer: no outage, so the
    // next call is not refused (nor sent to this machine's files) as if it were away.
    assert_eq!(
        document::keep_aside(&shared, "watchdog.json", found),
        Ok(None)
    );
    assert_eq!(document::get(&shared, "watchdog.json"), Ok(None));

    // A writer replaced the corrupt bytes after this reader found them: the new document
    // (an owed alert, a cooldown) is not what was found corrupt, and stays.
    let written = r#"{"state":"DEGRADED","pending":[]}"#;
    redis.command(&["SET", &key, written]);
    assert_eq!(
        document::keep_aside(&shared, "watchdog.json", found),
        Ok(None)
    );
    assert_eq!(
        redis.command(&["GET", &key]).text().as_deref(),
        Some(written)
    );
    assert_eq!(keys(&redis, &format!("{key}.corrupt-*")).len(), 1);
}
