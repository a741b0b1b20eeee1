//! The relay against a hostile token holder and a careless upstream: the key goes only to
//! its upstream's authority and prefix and never comes back, every call keeps its ledger
//! line through a stop, and what a client sends cannot blow up shared state.

use std::fs;
use std::thread;

use serde_json::{Value, json};

use crate::relay::{ANTHROPIC_KEY, MODEL, PROMPT, TOKEN, ledger, messages_body, relay_world};
use crate::support::relay::{RelayProc, raw};
use crate::support::{MockApi, Reply, Rule, Sandbox, Usage};

fn streamed_body(model: &str) -> String {
    json!({"model": model, "max_tokens": 16, "stream": true,
        "messages": [{"role": "user", "content": PROMPT}]})
    .to_string()
}

fn budget(sb: &Sandbox) -> Value {
    let run = sb.run(&["--budget", "status", "--json"]);
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {run:?}"))
}

fn state_file_size(sb: &Sandbox, name: &str) -> u64 {
    fs::metadata(sb.state_dir().join(name)).map_or(0, |m| m.len())
}

fn stars(text: &str) -> String {
    "*".repeat(text.len())
}

#[test]
fn a_request_target_never_moves_the_key_to_another_authority_or_out_of_the_prefix() {
    let (sb, api) = relay_world();
    // Were the relay to glue the target onto the base, `//x8/v1/…` on an upstream named `x8`
    // whose base is `http://127.0.0.1:4567` would go to port 45678: the decoy's.
    let decoy = MockApi::start();
    let port = decoy.addr().port();
    let name = format!("x{}", port % 10);
    sb.write_config(&format!(
        "[relay.upstreams.{name}]\nkind = \"anthropic\"\nbase = \"http://127.0.0.1:{}\"\n",
        port / 10
    ));
    sb.env(
        &format!("AGENT_RELAY_{}_KEY", name.to_uppercase()),
        ANTHROPIC_KEY,
    );
    let mut relay = RelayProc::start(&sb, &[]);
    let body = messages_body(MODEL);

    for target in [
        "//anthropic/v1/messages".to_string(),
        format!("//{name}/v1/messages"),
        "/anthropic/../openai/v1/chat/completions".to_string(),
        "/anthropic/%2e%2E/openai/v1/chat/completions".to_string(),
        "/anthropic/v1%2f..%2f..%2fopenai/v1/chat/completions".to_string(),
        "/anthropic/./v1/messages".to_string(),
        "/anthropic//v1/messages".to_string(),
        format!("http://{}//anthropic/v1/messages", relay.addr),
    ] {
        let answer = relay.post(&target, Some(TOKEN), &body, &[]);
        assert_eq!(answer.status, 400, "{target}: {answer:?}");
        assert_eq!(
            answer.json()["error"]["type"],
            "invalid_request_error",
            "{target}"
        );
        assert!(
            answer.body.contains("nothing was sent upstream"),
            "{target}: {}",
            answer.body
        );
    }
    assert!(api.requests().is_empty(), "{:?}", api.requests());
    assert!(decoy.requests().is_empty(), "{:?}", decoy.requests());

    // The plain target still works, and nothing before it was counted.
    let good = relay.post("/anthropic/v1/messages", Some(TOKEN), &body, &[]);
    assert_eq!(good.status, 200, "{good:?}");
    assert_eq!(api.post_requests()[0].path, "/v1/messages");
    relay.stop();
    assert_eq!(ledger(&sb).len(), 1, "{:?}", ledger(&sb));
}

#[test]
fn a_key_the_upstream_echoes_never_reaches_the_client() {
    let (sb, api) = relay_world();
    let echoed = format!("your key is {ANTHROPIC_KEY}");
    let masked = format!("your key is {}", stars(ANTHROPIC_KEY));
    api.on(Rule::model("in-header").reply(Reply::ok().header("x-echo", &echoed)));
    api.on(Rule::model("in-error").reply(Reply::anthropic_error(
        401,
        "authentication_error",
        &format!("invalid x-api-key: {echoed}"),
    )));
    api.on(Rule::model("in-body").reply(Reply::ok_text(&echoed)));
    let relay = RelayProc::start(&sb, &[]);
    let post = |body: &str| relay.post("/anthropic/v1/messages", Some(TOKEN), body, &[]);

    let header = post(&messages_body("in-header"));
    assert_eq!(header.status, 200);
    assert_eq!(header.header("x-echo"), Some(masked.as_str()), "{header:?}");

    let error = post(&messages_body("in-error"));
    assert_eq!(error.status, 401);
    assert!(error.body.contains(&masked), "{}", error.body);

    let plain = post(&messages_body("in-body"));
    assert_eq!(plain.status, 200);
    assert_eq!(
        plain.json()["content"][0]["text"],
        masked.as_str(),
        "{plain:?}"
    );

    // A stream cut anywhere inside the key: before it, at each of its bytes, after it.
    let streamed = json!({"model": "in-stream", "max_tokens": 16, "stream": true,
        "messages": [{"role": "user", "content": PROMPT}]})
    .to_string();
    for offset in 0..=ANTHROPIC_KEY.len() {
        api.on(Rule::model("in-stream")
            .times(1)
            .reply(Reply::ok_text(&echoed).split_stream(ANTHROPIC_KEY, offset)));
        let stream = post(&streamed);
        assert_eq!(stream.status, 200, "split at {offset}: {stream:?}");
        assert!(
            stream.body.contains(&masked),
            "split at {offset}: {}",
            stream.body
        );
        assert!(
            stream.body.contains("message_stop"),
            "split at {offset}: {}",
            stream.body
        );
    }

    for answer in [&header, &error, &plain] {
        assert!(!format!("{answer:?}").contains(ANTHROPIC_KEY), "{answer:?}");
    }
    // Every answer reached the client whole: masking keeps lengths.
    assert_eq!(api.posts(), 3 + ANTHROPIC_KEY.len() + 1);
}

#[test]
fn a_stop_that_cuts_a_stream_still_writes_the_calls_ledger_line() {
    let (sb, api) = relay_world();
    sb.write_config("[relay]\nstop_grace_seconds = 0.2\n");
    // A stream that starts and never ends.
    api.on(Rule::model(MODEL).reply(Reply::ok().stall_after(2)));
    let mut relay = RelayProc::start(&sb, &[]);
    let body = streamed_body(MODEL);
    let head = format!(
        "POST /anthropic/v1/messages HTTP/1.1\nhost: {}\nx-api-key: {TOKEN}\nx-agent-run: run-cut\ncontent-type: application/json\ncontent-length: {}\nconnection: close\n",
        relay.addr,
        body.len()
    );
    let addr = relay.addr.clone();
    let client = thread::spawn(move || raw(&addr, &head, &body));
    api.wait_for_posts(1);

    relay.stop(); // SIGTERM; panics unless the relay exits

    let _ = client.join();
    let lines = ledger(&sb);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0]["run"], "run-cut", "{}", lines[0]);
    assert_eq!(lines[0]["error_kind"], "relay_stopped", "{}", lines[0]);
    assert_eq!(budget(&sb)["calls"], 1);
}

#[test]
fn absurd_token_counts_are_clamped_and_the_token_cap_refuses_the_next_call() {
    let (sb, api) = relay_world();
    // No cap while the two calls are made: with one, whether the second call is refused
    // depends on whether the first one's tokens were written before it came.
    sb.write_config("[budget]\ncalls = 0\ntokens = 0\n");
    let absurd = Usage {
        input: u64::MAX,
        output: u64::MAX,
        cache_read: u64::MAX,
        cache_write: u64::MAX,
        reasoning: 0,
    };
    api.on(Rule::model(MODEL).reply(Reply::ok().usage(absurd)));
    let mut relay = RelayProc::start(&sb, &[]);
    let post = |relay: &RelayProc, body: &str| {
        relay.post("/anthropic/v1/messages", Some(TOKEN), body, &[])
    };

    assert_eq!(post(&relay, &messages_body(MODEL)).status, 200);
    assert_eq!(post(&relay, &streamed_body(MODEL)).status, 200);
    relay.stop();

    let billion = 1_000_000_000_u64;
    for line in ledger(&sb) {
        assert_eq!(
            line["tokens"],
            json!({"input": billion, "output": billion, "reasoning": 0, "cache_read": billion, "cache_write": billion}),
            "{line}"
        );
    }
    // Two calls of four clamped fields: not wrapped, not pinned at u64::MAX.
    assert_eq!(budget(&sb)["tokens"], 8 * billion);

    sb.write_config("[budget]\ncalls = 0\ntokens = 1000\n");
    let relay = RelayProc::start(&sb, &[]);
    let refused = post(&relay, &messages_body(MODEL));
    assert_eq!(refused.status, 429, "{refused:?}");
    assert_eq!(refused.json()["error"]["type"], "budget_exhausted");
    assert_eq!(api.posts(), 2);
}

#[test]
fn a_redirect_from_the_upstream_is_not_an_ok_call() {
    let (sb, api) = relay_world();
    api.on(Rule::model(MODEL)
        .reply(Reply::status(301).header("location", "https://elsewhere.invalid/v1/messages")));
    let mut relay = RelayProc::start(&sb, &[]);

    let answer = relay.post(
        "/anthropic/v1/messages",
        Some(TOKEN),
        &messages_body(MODEL),
        &[],
    );
    relay.stop();

    assert_eq!(answer.status, 301, "{answer:?}");
    let lines = ledger(&sb);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0]["status"], 301);
    assert_ne!(lines[0]["error_kind"], "ok", "{}", lines[0]);
    assert_eq!(
        lines[0]["estimated"], false,
        "a failure is not given estimated tokens"
    );
    let health: Value =
        serde_json::from_str(&fs::read_to_string(sb.state_dir().join("health.json")).unwrap())
            .unwrap();
    let targets = health["targets"].as_object().unwrap();
    assert!(!targets.is_empty(), "{health}");
    for (target, entry) in targets {
        assert_ne!(entry["class"], "ok", "{target}: {entry}");
    }
}

#[test]
fn client_strings_are_capped_and_cleaned_before_they_reach_shared_state() {
    let (sb, api) = relay_world();
    let mut relay = RelayProc::start(&sb, &[]);
    let huge = json!({"model": "m".repeat(8 << 20), "max_tokens": 16,
        "messages": [{"role": "user", "content": PROMPT}]})
    .to_string();
    let long_run = "run\t".repeat(20_000);
    let headers = [
        ("x-agent-run", long_run.as_str()),
        ("x-agent-node", "node\twith\ttabs"),
    ];

    let refused = relay.post("/anthropic/v1/messages", Some(TOKEN), &huge, &headers);
    assert_eq!(
        refused.status,
        400,
        "{}",
        &refused.body[..refused.body.len().min(300)]
    );
    assert_eq!(refused.json()["error"]["type"], "invalid_request_error");
    assert!(refused.body.len() < 1000, "the refusal echoes the model");
    assert_eq!(api.posts(), 0);

    let odd = json!({"model": "claude\u{1b}[31m-opus\n-5\u{7}", "max_tokens": 16,
        "messages": [{"role": "user", "content": PROMPT}]})
    .to_string();
    assert_eq!(
        relay
            .post("/anthropic/v1/messages", Some(TOKEN), &odd, &headers)
            .status,
        200
    );
    relay.stop();

    let lines = ledger(&sb);
    assert_eq!(
        lines.len(),
        1,
        "only the sent call is in the ledger: {lines:?}"
    );
    assert_eq!(lines[0]["model"], "claude[31m-opus-5");
    assert_eq!(lines[0]["node"], "nodewithtabs");
    let run = lines[0]["run"].as_str().unwrap();
    assert!(run.len() <= 200 && run.starts_with("runrun"), "{run}");
    for file in ["health.json", "events.jsonl", "usage.jsonl"] {
        let size = state_file_size(&sb, file);
        assert!(size < 16 * 1024, "{file} is {size} bytes");
    }
    let health = fs::read_to_string(sb.state_dir().join("health.json")).unwrap();
    assert!(
        !health.contains('\u{1b}') && !health.contains("\\u001b"),
        "{health}"
    );
}
