//! Named relay clients: one token per person (`agent --relay tokens add|list|revoke`), only
//! its hash on disk, the person's name on each ledger line and in `--usage --by client`,
//! caps of their own, a revoke that holds at once on a running relay — and no subscription
//! login served to more than one person.

use std::fs;
use std::os::unix::fs::PermissionsExt as _;

use serde_json::Value;

use crate::relay::{ANTHROPIC_KEY, MODEL, TOKEN, ledger, messages_body, relay_world};
use crate::support::redis::RedisServer;
use crate::support::relay::RelayProc;
use crate::support::{MockApi, Reply, Rule, Sandbox, Usage};

const MESSAGES: &str = "/anthropic/v1/messages";

/// `agent --relay tokens add NAME ARGS…`: the token it printed.
fn add(sb: &Sandbox, name: &str, args: &[&str]) -> String {
    let mut argv = vec!["--relay", "tokens", "add", name];
    argv.extend_from_slice(args);
    let run = sb.run(&argv);
    assert_eq!(run.code, Some(0), "{run:?}");
    let token = run.stdout.trim().to_string();
    assert!(
        token.starts_with("agr-") && token.len() == 68,
        "one token on stdout: {run:?}"
    );
    token
}

fn clients_file(sb: &Sandbox) -> std::path::PathBuf {
    sb.state_dir().join("relay_clients.json")
}

fn list_json(sb: &Sandbox) -> Value {
    let run = sb.run(&["--relay", "tokens", "list", "--json"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.stdout))
}

#[test]
fn tokens_add_prints_the_token_once_and_keeps_only_its_hash() {
    let sb = Sandbox::new();

    let alice = add(&sb, "alice", &["--daily-calls", "200"]);
    let bob = add(&sb, "bob@example.com", &[]);

    assert_ne!(alice, bob);
    let path = clients_file(&sb);
    let mode = fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let stored = fs::read_to_string(&path).unwrap();
    for token in [&alice, &bob] {
        assert!(
            !stored.contains(token.as_str()),
            "a token on disk: {stored}"
        );
        assert!(!stored.contains(&token[4..]), "a token on disk: {stored}");
    }
    let listed = list_json(&sb);
    let names: Vec<&str> = listed["clients"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["alice", "bob@example.com"]);
    assert_eq!(listed["clients"][0]["daily_calls"], 200);
    assert_eq!(listed["clients"][0]["daily_tokens"], 0);
    assert_eq!(
        listed["clients"][0]["sha256_tail"].as_str().unwrap().len(),
        4
    );
    let text = sb.run(&["--relay", "tokens", "list"]);
    assert!(text.stdout.contains("alice"), "{text:?}");
    for run in [&text.stdout, &text.stderr, &listed.to_string()] {
        assert!(
            !run.contains(&alice[4..]) && !run.contains(&bob[4..]),
            "{run}"
        );
    }

    // A name taken: refused, and the first token is kept.
    let again = sb.run(&["--relay", "tokens", "add", "alice"]);
    assert_eq!(again.code, Some(2), "{again:?}");
    assert!(again.stderr.contains("--force"), "{}", again.stderr);
    assert!(again.stdout.is_empty(), "no token printed: {again:?}");
    assert_eq!(fs::read_to_string(&path).unwrap(), stored, "nothing lost");

    for bad in ["", "al ice", ".x", "a/b", "bob\nmallory"] {
        let run = sb.run(&["--relay", "tokens", "add", bad]);
        assert_eq!(run.code, Some(2), "{bad:?}: {run:?}");
        assert!(run.stderr.contains("relay client name"), "{}", run.stderr);
    }

    let revoke = sb.run(&["--relay", "tokens", "revoke", "alice"]);
    assert_eq!(revoke.code, Some(0), "{revoke:?}");
    assert_eq!(list_json(&sb)["clients"].as_array().unwrap().len(), 1);
    let unknown = sb.run(&["--relay", "tokens", "revoke", "alice"]);
    assert_eq!(unknown.code, Some(2), "{unknown:?}");
    assert!(
        unknown.stderr.contains("no relay client named"),
        "{}",
        unknown.stderr
    );
}

#[test]
fn a_named_token_is_served_and_its_calls_carry_the_clients_name_to_the_ledger_and_usage() {
    let (sb, api) = relay_world();
    api.on(Rule::model(MODEL).reply(Reply::ok().usage(Usage {
        input: 100,
        output: 10,
        ..Usage::default()
    })));
    let alice = add(&sb, "alice", &[]);
    let bob = add(&sb, "bob", &[]);
    let mut relay = RelayProc::start(&sb, &[]);
    let body = messages_body(MODEL);

    for token in [&alice, &alice, &bob, &TOKEN.to_string()] {
        let answer = relay.post(MESSAGES, Some(token), &body, &[]);
        assert_eq!(answer.status, 200, "{answer:?}");
    }
    // As a bearer too, the way Claude Code sends ANTHROPIC_AUTH_TOKEN.
    let bearer = format!("Bearer {bob}");
    let answer = relay.post(MESSAGES, None, &body, &[("authorization", &bearer)]);
    assert_eq!(answer.status, 200, "{answer:?}");
    relay.stop();

    assert_eq!(api.posts(), 5);
    let clients: Vec<Value> = ledger(&sb).iter().map(|l| l["client"].clone()).collect();
    let named = |name: &str| clients.iter().filter(|c| *c == name).count();
    assert_eq!((named("alice"), named("bob")), (2, 2), "{clients:?}");
    assert_eq!(
        clients.iter().filter(|c| c.is_null()).count(),
        1,
        "the team token's line has no client: {clients:?}"
    );

    let run = sb.run(&["--usage", "--by", "client", "--source", "agent", "--json"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    let group = |key: Value| {
        report["groups"]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["key"] == key)
            .unwrap_or_else(|| panic!("no group {key}: {report:#}"))
            .clone()
    };
    assert_eq!(group("alice".into())["calls"], 2);
    assert_eq!(group("alice".into())["tokens"]["total"], 220);
    assert_eq!(group("bob".into())["calls"], 2);
    assert_eq!(
        group(Value::Null)["calls"],
        1,
        "the team token's call: {report:#}"
    );
    let text = sb.run(&["--usage", "--by", "client", "--source", "agent"]);
    let row = text
        .stdout
        .lines()
        .find(|l| l.starts_with("alice"))
        .unwrap_or_else(|| panic!("{text:?}"));
    assert_eq!(row.split_whitespace().nth(1), Some("2"), "{row}");
    assert!(text.stdout.contains("(no client)"), "{}", text.stdout);
}

#[test]
fn a_revoked_token_gets_401_from_the_running_relay_at_its_next_request() {
    let (sb, api) = relay_world();
    api.on(Rule::any().reply(Reply::ok()));
    let alice = add(&sb, "alice", &[]);
    let bob = add(&sb, "bob", &[]);
    let relay = RelayProc::start(&sb, &[]);
    let body = messages_body(MODEL);
    assert_eq!(relay.post(MESSAGES, Some(&alice), &body, &[]).status, 200);

    let revoke = sb.run(&["--relay", "tokens", "revoke", "alice"]);
    assert_eq!(revoke.code, Some(0), "{revoke:?}");

    let refused = relay.post(MESSAGES, Some(&alice), &body, &[]);
    assert_eq!(refused.status, 401, "{refused:?}");
    assert_eq!(refused.json()["error"]["type"], "authentication_error");
    assert_eq!(api.posts(), 1, "nothing more reached the upstream");
    assert_eq!(relay.post(MESSAGES, Some(&bob), &body, &[]).status, 200);
    assert_eq!(relay.post(MESSAGES, Some(TOKEN), &body, &[]).status, 200);
}

#[test]
fn a_clients_daily_calls_cap_refuses_that_client_on_every_replica_while_others_pass() {
    let (sb, api) = relay_world();
    api.on(Rule::any().reply(Reply::ok()));
    let alice = add(&sb, "alice", &["--daily-calls", "2"]);
    let bob = add(&sb, "bob", &["--daily-calls", "5"]);
    // Two replicas sharing the state.
    let (mut a, mut b) = (RelayProc::start(&sb, &[]), RelayProc::start(&sb, &[]));
    let body = messages_body(MODEL);

    assert_eq!(a.post(MESSAGES, Some(&alice), &body, &[]).status, 200);
    assert_eq!(b.post(MESSAGES, Some(&alice), &body, &[]).status, 200);
    for relay in [&a, &b] {
        let refused = relay.post(MESSAGES, Some(&alice), &body, &[]);
        assert_eq!(refused.status, 429, "{refused:?}");
        assert_eq!(refused.json()["error"]["type"], "budget_exhausted");
        let message = refused.json()["error"]["message"].to_string();
        assert!(
            message.contains("alice's daily budget exhausted: 2 of 2 calls"),
            "{message}"
        );
    }
    assert_eq!(b.post(MESSAGES, Some(&bob), &body, &[]).status, 200);
    assert_eq!(a.post(MESSAGES, Some(TOKEN), &body, &[]).status, 200);
    assert_eq!(api.posts(), 4, "alice's refused calls sent nothing");
    a.stop();
    b.stop();
    let lines = ledger(&sb);
    let alice_lines: Vec<&Value> = lines.iter().filter(|l| l["client"] == "alice").collect();
    assert_eq!(
        alice_lines.len(),
        4,
        "refused calls have lines too: {lines:?}"
    );
}

#[test]
fn a_clients_daily_tokens_cap_stops_its_later_calls() {
    let (sb, api) = relay_world();
    api.on(Rule::any().reply(Reply::ok().usage(Usage {
        input: 100,
        output: 10,
        ..Usage::default()
    })));
    let alice = add(&sb, "alice", &["--daily-tokens", "100"]);
    let bob = add(&sb, "bob", &["--daily-tokens", "1000"]);
    let body = messages_body(MODEL);
    let mut relay = RelayProc::start(&sb, &[]);
    assert_eq!(relay.post(MESSAGES, Some(&alice), &body, &[]).status, 200);
    // Stopped, its books are written: alice has spent 110 tokens of her 100.
    relay.stop();

    let relay = RelayProc::start(&sb, &[]);
    let refused = relay.post(MESSAGES, Some(&alice), &body, &[]);
    assert_eq!(refused.status, 429, "{refused:?}");
    assert!(
        refused.body.contains("110 of 100 tokens"),
        "{}",
        refused.body
    );
    assert_eq!(relay.post(MESSAGES, Some(&bob), &body, &[]).status, 200);
    assert_eq!(api.posts(), 2);
}

#[test]
fn over_one_redis_store_every_replica_knows_the_clients_their_caps_and_a_revoke() {
    let mut redis = RedisServer::start();
    let api = MockApi::start();
    api.on(Rule::any().reply(Reply::ok()));
    // Two machines: their own HOME and state directory, the team's store.
    let machine = || {
        let sb = Sandbox::new();
        sb.env("AGENT_RELAY_TOKEN", TOKEN);
        sb.env("AGENT_RELAY_ANTHROPIC_KEY", ANTHROPIC_KEY);
        sb.env("AGENT_RELAY_ANTHROPIC_BASE", api.url());
        sb.write_config(&format!(
            "[store]\nkind = \"redis\"\nurl = \"{}\"\nprefix = \"clients-test\"\n",
            redis.url()
        ));
        sb
    };
    let (one, two) = (machine(), machine());
    let alice = add(&one, "alice", &["--daily-calls", "2"]);
    let bob = add(&two, "bob", &[]);
    let (a, b) = (RelayProc::start(&one, &[]), RelayProc::start(&two, &[]));
    let body = messages_body(MODEL);

    assert_eq!(b.post(MESSAGES, Some(&alice), &body, &[]).status, 200);
    assert_eq!(a.post(MESSAGES, Some(&bob), &body, &[]).status, 200);
    assert_eq!(a.post(MESSAGES, Some(&alice), &body, &[]).status, 200);
    for relay in [&a, &b] {
        let refused = relay.post(MESSAGES, Some(&alice), &body, &[]);
        assert_eq!(refused.status, 429, "{refused:?}");
        assert!(
            refused.body.contains("alice's daily budget"),
            "{}",
            refused.body
        );
    }

    let revoke = one.run(&["--relay", "tokens", "revoke", "bob"]);
    assert_eq!(revoke.code, Some(0), "{revoke:?}");
    assert_eq!(b.post(MESSAGES, Some(&bob), &body, &[]).status, 401);
    assert_eq!(api.posts(), 3);
    for sb in [&one, &two] {
        assert!(
            !clients_file(sb).exists(),
            "the clients live in the store, not on one machine"
        );
    }

    // The store away: a named client is not told its token is wrong.
    redis.stop();
    let away = a.post(MESSAGES, Some(&alice), &body, &[]);
    assert_eq!(away.status, 503, "{away:?}");
    assert_eq!(away.json()["error"]["type"], "store_unavailable");
    assert_eq!(api.posts(), 3);
    // A revoke only one machine's file would hear is not made.
    let revoke = two.run(&["--relay", "tokens", "revoke", "alice"]);
    assert_eq!(revoke.code, Some(1), "{revoke:?}");
    assert!(
        revoke.stderr.contains("were not changed"),
        "{}",
        revoke.stderr
    );
    assert!(!clients_file(&two).exists());
}

#[test]
fn a_token_left_in_the_local_file_from_before_the_store_is_refused_even_while_the_store_is_away() {
    let mut redis = RedisServer::start();
    let api = MockApi::start();
    api.on(Rule::any().reply(Reply::ok()));
    let sb = Sandbox::new();
    sb.env("AGENT_RELAY_TOKEN", TOKEN);
    sb.env("AGENT_RELAY_ANTHROPIC_KEY", ANTHROPIC_KEY);
    sb.env("AGENT_RELAY_ANTHROPIC_BASE", api.url());
    // Added while this machine kept its clients in its own file; then the team's store.
    let old = add(&sb, "before-the-store", &[]);
    assert!(clients_file(&sb).exists());
    sb.write_config(&format!(
        "[store]\nkind = \"redis\"\nurl = \"{}\"\nprefix = \"left-behind\"\non_store_down = \"local\"\n",
        redis.url()
    ));
    let relay = RelayProc::start(&sb, &[]);
    let body = messages_body(MODEL);

    // The store says who may call, and it never heard of that token.
    assert_eq!(list_json(&sb)["clients"], serde_json::json!([]));
    assert_eq!(relay.post(MESSAGES, Some(&old), &body, &[]).status, 401);

    // The store away, the relay told to go on with its own files: the team's calls do,
    // but the file's clients are still not asked who may call.
    redis.stop();
    assert_eq!(relay.post(MESSAGES, Some(TOKEN), &body, &[]).status, 200);
    let away = relay.post(MESSAGES, Some(&old), &body, &[]);
    assert_eq!(away.status, 503, "{away:?}");
    assert_eq!(away.json()["error"]["type"], "store_unavailable");
    assert_eq!(api.posts(), 1, "the left-behind token reached the upstream");
    // Nor does the list show the file's clients as the relay's.
    let list = sb.run(&["--relay", "tokens", "list", "--json"]);
    assert_eq!(list.code, Some(1), "{list:?}");
    assert!(!list.stdout.contains("before-the-store"), "{list:?}");
}

#[test]
fn with_the_store_away_a_subscription_login_is_not_served_on_the_word_of_the_local_file() {
    let mut redis = RedisServer::start();
    let (sb, _api) = relay_world();
    with_claude_cli(&sb);
    let config = std::fs::read_to_string(sb.config_path()).unwrap();
    sb.write_config(&format!(
        "{config}\n[store]\nkind = \"redis\"\nurl = \"{}\"\nprefix = \"personal\"\non_store_down = \"local\"\n",
        redis.url()
    ));
    let relay = RelayProc::start(&sb, &[]);
    let body = messages_body(MODEL);
    let call = || relay.post("/claude-cli/v1/messages", Some(TOKEN), &body, &[]);
    assert_eq!(call().status, 200, "no named clients in the store");

    // Only the store can say there are still none; this machine's file is not asked.
    redis.stop();
    let away = call();
    assert_eq!(away.status, 503, "{away:?}");
    assert_eq!(away.json()["error"]["type"], "store_unavailable");
    assert_eq!(
        sb.calls("claude").len(),
        1,
        "claude ran with the store away"
    );
}

/// A `claude-cli` upstream on the relay, with a fake `claude` that would answer.
fn with_claude_cli(sb: &Sandbox) {
    sb.write_config("[relay.upstreams.claude-cli]\nkind = \"claude-cli\"\n");
    sb.fake_cli("claude")
        .stdout(r#"{"type":"result","subtype":"success","is_error":false,"result":"hi","usage":{"input_tokens":1,"output_tokens":1}}"#)
        .install();
}

#[test]
fn a_relay_with_named_clients_refuses_to_start_with_a_subscription_login_upstream() {
    let (sb, _api) = relay_world();
    with_claude_cli(&sb);
    let add = sb.run(&["--relay", "tokens", "add", "alice"]);
    assert_eq!(add.code, Some(0), "{add:?}");
    assert!(
        add.stderr.contains("warning") && add.stderr.contains("/claude-cli"),
        "tokens add warns: {}",
        add.stderr
    );

    let serve = sb.run(&["--relay", "serve", "--listen", "127.0.0.1:0"]);

    assert_eq!(serve.code, Some(2), "{serve:?}");
    assert!(serve.stderr.contains("/claude-cli"), "{}", serve.stderr);
    assert!(
        serve
            .stderr
            .contains("reserve subscription plans for their owner's own use"),
        "{}",
        serve.stderr
    );
    assert!(sb.calls("claude").is_empty());

    // An OAuth token as an HTTP upstream's key is the same login.
    let (sb, api) = relay_world();
    sb.env(
        "AGENT_RELAY_ANTHROPIC_KEY",
        "sk-ant-oat01-SUBSCRIPTION-TOKEN-0123456789",
    );
    add_quietly(&sb, "alice");
    let serve = sb.run(&["--relay", "serve", "--listen", "127.0.0.1:0"]);
    assert_eq!(serve.code, Some(2), "{serve:?}");
    assert!(serve.stderr.contains("/anthropic"), "{}", serve.stderr);
    assert!(
        !serve.stderr.contains("SUBSCRIPTION-TOKEN"),
        "the token is not shown: {}",
        serve.stderr
    );
    assert!(api.requests().is_empty());

    // The team token alone is one person: the relay serves as before.
    let (sb, _api) = relay_world();
    with_claude_cli(&sb);
    let relay = RelayProc::start(&sb, &[]);
    let answer = relay.post(
        "/claude-cli/v1/messages",
        Some(TOKEN),
        &messages_body(MODEL),
        &[],
    );
    assert_eq!(answer.status, 200, "{answer:?}");
}

fn add_quietly(sb: &Sandbox, name: &str) {
    let run = sb.run(&["--relay", "tokens", "add", name]);
    assert_eq!(run.code, Some(0), "{run:?}");
}

#[test]
fn a_client_added_while_the_relay_runs_stops_it_serving_a_subscription_login() {
    let (sb, _api) = relay_world();
    with_claude_cli(&sb);
    let relay = RelayProc::start(&sb, &[]);
    let body = messages_body(MODEL);
    assert_eq!(
        relay
            .post("/claude-cli/v1/messages", Some(TOKEN), &body, &[])
            .status,
        200
    );

    let alice = {
        let run = sb.run(&["--relay", "tokens", "add", "alice"]);
        assert_eq!(run.code, Some(0), "{run:?}");
        run.stdout.trim().to_string()
    };

    for token in [TOKEN, alice.as_str()] {
        let answer = relay.post("/claude-cli/v1/messages", Some(token), &body, &[]);
        assert_eq!(answer.status, 403, "{answer:?}");
        assert_eq!(
            answer.json()["error"]["type"],
            "relay_subscription_per_person"
        );
    }
    assert_eq!(
        sb.calls("claude").len(),
        1,
        "claude ran only before the client was added"
    );

    // An OAuth token as an HTTP upstream's key, likewise.
    let (sb, api) = relay_world();
    api.on(Rule::any().reply(Reply::ok()));
    sb.env(
        "AGENT_RELAY_ANTHROPIC_KEY",
        "sk-ant-oat01-SUBSCRIPTION-TOKEN-0123456789",
    );
    let relay = RelayProc::start(&sb, &[]);
    // Sent (the mock answers an OAuth token as the real API does, with a 400).
    relay.post(MESSAGES, Some(TOKEN), &body, &[]);
    assert_eq!(api.posts(), 1);
    add_quietly(&sb, "alice");
    let answer = relay.post(MESSAGES, Some(TOKEN), &body, &[]);
    assert_eq!(answer.status, 403, "{answer:?}");
    assert!(
        !answer.body.contains("SUBSCRIPTION-TOKEN"),
        "{}",
        answer.body
    );
    assert_eq!(api.posts(), 1, "nothing sent after the client was added");
}
