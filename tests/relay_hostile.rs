//! The relay against a hostile token holder and a careless upstream: the key goes only to
//! its upstream's authority and prefix and never comes back, every call keeps its ledger
//! line through a stop, and what a client sends cannot blow up shared state.

use serde_json::json;

use crate::relay::{ANTHROPIC_KEY, MODEL, PROMPT, TOKEN, ledger, messages_body, relay_world};
use crate::support::relay::RelayProc;
use crate::support::{MockApi, Reply, Rule};

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
