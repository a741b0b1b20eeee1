//! The credential relay: the official SDKs work through it with the relay token as their
//! key, the upstream sees only the real key, nothing leaks, the budget holds, and what the
//! relay sees steers the next launch.

use std::fs;
use std::thread;

use serde_json::{Value, json};

use crate::support::python::run_script;
use crate::support::relay::{RelayProc, raw};
use crate::support::sandbox::files_under;
use crate::support::{MockApi, Reply, Rule, Sandbox, Usage, wait};
use crate::world::{CLAUDE_THEN_CODEX, world};

pub(crate) const TOKEN: &str = "agr-test-RELAY-TOKEN-0123456789abcdef";
pub(crate) const ANTHROPIC_KEY: &str = "sk-ant-api03-UPSTREAM-KEY-0123456789abcdef";
pub(crate) const OPENAI_KEY: &str = "sk-proj-UPSTREAM-OPENAI-KEY-0123456789";
pub(crate) const PROMPT: &str = "Tell me about the SECRET-PROMPT-PLATYPUS in one word";
pub(crate) const MODEL: &str = "claude-opus-5";

/// A sandbox whose relay has the token, both keys, and both upstreams on the mock.
pub(crate) fn relay_world() -> (Sandbox, MockApi) {
    let api = MockApi::start();
    let sb = Sandbox::new();
    sb.env("AGENT_RELAY_TOKEN", TOKEN);
    sb.env("AGENT_RELAY_ANTHROPIC_KEY", ANTHROPIC_KEY);
    sb.env("AGENT_RELAY_ANTHROPIC_BASE", api.url());
    sb.env("AGENT_RELAY_OPENAI_KEY", OPENAI_KEY);
    sb.env("AGENT_RELAY_OPENAI_BASE", api.url());
    (sb, api)
}

pub(crate) fn messages_body(model: &str) -> String {
    json!({"model": model, "max_tokens": 16, "messages": [{"role": "user", "content": PROMPT}]})
        .to_string()
}

pub(crate) fn ledger(sb: &Sandbox) -> Vec<Value> {
    fs::read_to_string(sb.state_dir().join("usage.jsonl"))
        .unwrap_or_default()
        .lines()
        // As agent reads it (`read_jsonl`): a blank line — a torn tail's separator, or one
        // being appended while this reads — is no record.
        .filter(|line| !line.trim().is_empty())
        .map(|line| serde_json::from_str(line).expect("a ledger line is JSON"))
        .collect()
}

/// Every POST the upstream got carried the real key, never the relay token.
fn assert_only_the_real_key_went_upstream(api: &MockApi, key: &str) {
    let posts = api.post_requests();
    assert!(!posts.is_empty(), "nothing reached the upstream");
    for request in &posts {
        assert_eq!(request.credential.as_deref(), Some(key), "{request:?}");
        for (name, value) in &request.headers {
            assert!(
                !value.contains(TOKEN),
                "the relay token went upstream in {name}"
            );
            assert!(
                !name.to_ascii_lowercase().starts_with("x-agent-"),
                "{name} went upstream"
            );
        }
    }
}

#[test]
fn the_anthropic_sdk_works_through_the_relay_streaming_and_not() {
    let (sb, api) = relay_world();
    api.on(Rule::model(MODEL).reply(Reply::ok_text("platypus")));
    let relay = RelayProc::start(&sb, &[]);
    let base = format!("{}/anthropic", relay.url);
    let env = [
        ("RELAY_BASE_URL", base.as_str()),
        ("RELAY_TOKEN", TOKEN),
        ("MODEL", MODEL),
        ("PROMPT", PROMPT),
    ];

    let plain = run_script("anthropic_sdk.py", &["plain"], &env);
    let stream = run_script("anthropic_sdk.py", &["stream"], &env);

    assert_eq!(plain["text"], "platypus", "{plain}");
    assert_eq!(plain["input_tokens"], 8);
    assert_eq!(stream["text"], "platypus", "{stream}");
    assert_eq!(api.posts_for_model(MODEL), 2);
    assert_only_the_real_key_went_upstream(&api, ANTHROPIC_KEY);
    let posts = api.post_requests();
    assert_eq!(posts[0].path, "/v1/messages");
    assert_eq!(posts[0].header("x-api-key"), Some(ANTHROPIC_KEY));
    assert!(posts[0].header("authorization").is_none());
}

#[test]
fn the_openai_sdk_works_through_the_relay_streaming_and_not() {
    let (sb, api) = relay_world();
    api.on(
        Rule::model("gpt-test").reply(Reply::ok_text("wombat").usage(Usage {
            input: 11,
            output: 3,
            ..Usage::default()
        })),
    );
    let relay = RelayProc::start(&sb, &[]);
    let base = format!("{}/openai/v1", relay.url);
    let env = [
        ("RELAY_BASE_URL", base.as_str()),
        ("RELAY_TOKEN", TOKEN),
        ("MODEL", "gpt-test"),
        ("PROMPT", PROMPT),
    ];

    let plain = run_script("openai_sdk.py", &["plain"], &env);
    let stream = run_script("openai_sdk.py", &["stream"], &env);

    assert_eq!(plain["text"], "wombat", "{plain}");
    assert_eq!(plain["prompt_tokens"], 11);
    assert_eq!(stream["text"], "wombat", "{stream}");
    assert_eq!(
        stream["usage"],
        json!({"prompt_tokens": 11, "completion_tokens": 3}),
        "the relay asked for the usage chunk: {stream}"
    );
    assert_only_the_real_key_went_upstream(&api, OPENAI_KEY);
    let posts = api.post_requests();
    assert_eq!(posts[0].path, "/v1/chat/completions");
    assert_eq!(
        posts[1].json()["stream_options"],
        json!({"include_usage": true})
    );
}

#[test]
fn the_first_streamed_text_reaches_the_sdk_while_the_upstream_is_still_sending() {
    let (sb, api) = relay_world();
    // Seven events: the text is the fourth, and the three after it are held upstream until
    // the SDK has said it has the text.
    api.on(Rule::model(MODEL)
        .reply(Reply::ok_text("early bird").pause_after(4, "the SDK has the text")));
    let relay = RelayProc::start(&sb, &[]);
    let base = format!("{}/anthropic", relay.url);
    let marker = sb.tmp_dir().join("first-text");
    let marker_text = marker.display().to_string();

    let stream = thread::scope(|scope| {
        let has_text = api.releasing("the SDK has the text");
        let stream = scope.spawn(|| {
            run_script(
                "anthropic_sdk.py",
                &["stream"],
                &[
                    ("RELAY_BASE_URL", base.as_str()),
                    ("RELAY_TOKEN", TOKEN),
                    ("MODEL", MODEL),
                    ("PROMPT", PROMPT),
                    ("FIRST_TEXT_FILE", marker_text.as_str()),
                ],
            )
        });
        // A relay that buffered the stream would hand the SDK nothing until the upstream
        // ended it, which it does only after this.
        wait::until("the SDK saying it has the first text", || marker.exists());
        has_text.now();
        stream.join().unwrap()
    });

    assert_eq!(stream["text"], "early bird", "{stream}");
}

#[test]
fn a_wrong_token_gets_401_and_nothing_is_sent_upstream() {
    let (sb, api) = relay_world();
    let relay = RelayProc::start(&sb, &[]);

    let wrong = relay.post(
        "/anthropic/v1/messages",
        Some("agr-wrong-0123456789abcdef0123"),
        &messages_body(MODEL),
        &[],
    );
    let none = relay.post("/anthropic/v1/messages", None, &messages_body(MODEL), &[]);
    let base = format!("{}/anthropic", relay.url);
    let sdk = run_script(
        "anthropic_sdk.py",
        &["wrong-token"],
        &[
            ("RELAY_BASE_URL", base.as_str()),
            ("RELAY_TOKEN", TOKEN),
            ("MODEL", MODEL),
            ("PROMPT", PROMPT),
        ],
    );

    assert_eq!(wrong.status, 401, "{wrong:?}");
    assert_eq!(wrong.json()["error"]["type"], "authentication_error");
    assert_eq!(none.status, 401);
    assert_eq!(sdk["status"], 401, "{sdk}");
    assert_eq!(sdk["type"], "AuthenticationError");
    assert!(api.requests().is_empty(), "{:?}", api.requests());
}

#[test]
fn an_absolute_form_target_for_another_host_is_refused_and_one_for_the_relay_is_served() {
    let (sb, api) = relay_world();
    let relay = RelayProc::start(&sb, &[]);
    let body = messages_body(MODEL);
    let head = |target: &str| {
        format!(
            "POST {target} HTTP/1.1\nhost: example.com\nx-api-key: {TOKEN}\ncontent-type: application/json\ncontent-length: {}\nconnection: close\n",
            body.len()
        )
    };

    let foreign = relay.raw(&head("http://example.com/anthropic/v1/messages"), &body);
    let connect = relay.raw(
        "CONNECT example.com:443 HTTP/1.1\nhost: example.com:443\nconnection: close\n",
        "",
    );
    assert_eq!(foreign.status, 403, "{foreign:?}");
    assert_eq!(foreign.json()["error"]["type"], "relay_not_a_proxy");
    assert_eq!(connect.status, 405, "{connect:?}");
    assert!(api.requests().is_empty(), "{:?}", api.requests());

    let own = relay.raw(
        &head(&format!("http://{}/anthropic/v1/messages", relay.addr)),
        &body,
    );
    assert_eq!(own.status, 200, "{own:?}");
    assert_eq!(api.posts(), 1);
}

#[test]
fn an_unknown_upstream_is_404_and_nothing_is_sent() {
    let (sb, api) = relay_world();
    let relay = RelayProc::start(&sb, &[]);

    let answer = relay.post(
        "/nowhere/v1/messages",
        Some(TOKEN),
        &messages_body(MODEL),
        &[],
    );

    assert_eq!(answer.status, 404, "{answer:?}");
    assert!(
        answer.body.contains("no upstream named \\\"nowhere\\\""),
        "{}",
        answer.body
    );
    assert!(api.requests().is_empty());
}

#[test]
fn listening_on_all_interfaces_without_allow_remote_refuses_to_start() {
    let (sb, _api) = relay_world();

    let run = sb.run(&["--relay", "serve", "--listen", "0.0.0.0:0"]);

    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(
        run.stderr.contains("refusing to listen on 0.0.0.0:0"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("--allow-remote"), "{}", run.stderr);
}

#[test]
fn a_cap_of_ten_lets_exactly_ten_of_thirty_concurrent_requests_through() {
    let (sb, api) = relay_world();
    sb.write_config("[budget]\ncalls = 10\ntokens = 0\n");
    // The calls that go upstream are held there until the cap's worth has arrived: they
    // are all in flight at once while the others are refused.
    api.on(Rule::any().reply(Reply::ok().held("the cap is upstream")));
    let relay = RelayProc::start(&sb, &[]);
    let body = messages_body(MODEL);

    let statuses: Vec<u16> = thread::scope(|scope| {
        let upstream = api.releasing("the cap is upstream");
        let handles: Vec<_> = (0..30)
            .map(|_| {
                scope.spawn(|| {
                    relay
                        .post("/anthropic/v1/messages", Some(TOKEN), &body, &[])
                        .status
                })
            })
            .collect();
        api.wait_for_posts(10);
        upstream.now();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });

    assert_eq!(
        statuses.iter().filter(|s| **s == 200).count(),
        10,
        "{statuses:?}"
    );
    assert_eq!(
        statuses.iter().filter(|s| **s == 429).count(),
        20,
        "{statuses:?}"
    );
    assert_eq!(api.posts(), 10, "exactly ten reached the upstream");
    let refused = relay.post("/anthropic/v1/messages", Some(TOKEN), &body, &[]);
    assert_eq!(refused.json()["error"]["type"], "budget_exhausted");
    assert_eq!(refused.header("x-should-retry"), Some("false"));
}

#[test]
fn every_relayed_call_is_one_ledger_line_with_the_callers_headers_and_the_providers_tokens() {
    let (sb, api) = relay_world();
    api.on(Rule::model(MODEL).reply(Reply::ok().usage(Usage {
        input: 20,
        output: 7,
        cache_read: 100,
        ..Usage::default()
    })));
    let mut relay = RelayProc::start(&sb, &[]);
    let headers = [
        ("x-agent-run", "run-42"),
        ("x-agent-node", "draft"),
        ("x-agent-role", "engineer"),
        ("x-agent-attempt", "2"),
    ];
    let streamed = json!({"model": MODEL, "max_tokens": 16, "stream": true,
        "messages": [{"role": "user", "content": PROMPT}]})
    .to_string();

    assert_eq!(
        relay
            .post(
                "/anthropic/v1/messages",
                Some(TOKEN),
                &messages_body(MODEL),
                &headers
            )
            .status,
        200
    );
    let stream = relay.post("/anthropic/v1/messages", Some(TOKEN), &streamed, &headers);
    assert!(stream.body.contains("message_stop"), "{}", stream.body);
    relay.stop();

    let lines = ledger(&sb);
    assert_eq!(lines.len(), 2, "{lines:?}");
    for line in &lines {
        assert_eq!(line["run"], "run-42", "{line}");
        assert_eq!(line["node"], "draft");
        assert_eq!(line["role"], "engineer");
        assert_eq!(line["attempt"], 2);
        assert_eq!(line["upstream"], "anthropic");
        assert_eq!(line["model"], MODEL);
        assert_eq!(line["status"], 200);
        assert_eq!(line["error_kind"], "ok");
        assert_eq!(line["estimated"], false);
        assert_eq!(
            line["tokens"],
            json!({"input": 20, "output": 7, "reasoning": 0, "cache_read": 100, "cache_write": 0})
        );
        assert!(line["ttfb_s"].as_f64().is_some(), "{line}");
        assert!(line["duration_s"].as_f64().is_some(), "{line}");
        assert!(
            line["request_id"]
                .as_str()
                .is_some_and(|id| id.starts_with("req_mock")),
            "{line}"
        );
        assert!(
            line["message_id"]
                .as_str()
                .is_some_and(|id| id.starts_with("msg_mock")),
            "{line}"
        );
    }
    let budget = sb.run(&["--budget", "status", "--json"]);
    let budget: Value = serde_json::from_str(&budget.stdout).unwrap();
    assert_eq!(budget["calls"], 2);
    assert_eq!(budget["tokens"], 2 * 127);
}

#[test]
fn neither_the_token_nor_a_key_nor_the_prompt_is_in_any_file_agent_writes() {
    let (sb, api) = relay_world();
    sb.write_config("[relay.upstreams.cli]\nkind = \"claude-cli\"\n");
    sb.fake_cli("claude")
        .script(r#"cat >/dev/null; printf '%s' '{"type":"result","is_error":true,"result":"You have hit your usage limit","api_error_status":429}'; exit 1"#)
        .install();
    api.on(Rule::model("capped").reply(Reply::anthropic_error(
        429,
        "rate_limit_error",
        &format!("usage limit for key {ANTHROPIC_KEY}: {PROMPT}"),
    )));
    api.on(Rule::model("bad").reply(Reply::anthropic_error(400, "invalid_request_error", PROMPT)));
    let mut relay = RelayProc::start(&sb, &[]);
    let headers = [("x-agent-run", "leak-check")];
    for model in [MODEL, "capped", "bad"] {
        relay.post(
            "/anthropic/v1/messages",
            Some(TOKEN),
            &messages_body(model),
            &headers,
        );
    }
    relay.post(
        "/cli/v1/messages",
        Some(TOKEN),
        &messages_body(MODEL),
        &headers,
    );
    relay.post(
        "/anthropic/v1/messages",
        Some("agr-wrong-0123456789abcdef0123"),
        &messages_body(MODEL),
        &[],
    );
    relay.stop();

    assert!(ledger(&sb).len() >= 4, "{:?}", ledger(&sb));
    let mut files = files_under(sb.root());
    files.retain(|(path, _)| !path.starts_with("calls"));
    assert!(files.iter().any(|(p, _)| p.ends_with("usage.jsonl")));
    assert!(files.iter().any(|(p, _)| p.ends_with("health.json")));
    for (path, text) in files {
        for secret in [TOKEN, ANTHROPIC_KEY, OPENAI_KEY, "SECRET-PROMPT-PLATYPUS"] {
            assert!(
                !text.contains(secret),
                "{secret} is in {}: {text}",
                path.display()
            );
        }
    }
    for secret in [TOKEN, ANTHROPIC_KEY, "SECRET-PROMPT-PLATYPUS"] {
        assert!(!relay.stderr().contains(secret), "{}", relay.stderr());
    }
}

#[test]
fn a_quota_the_relay_sees_steers_the_next_launch_past_that_rung_without_a_call() {
    let w = world();
    let (sb, api) = (&w.sb, &w.api);
    sb.write_config(CLAUDE_THEN_CODEX);
    sb.env("AGENT_RELAY_TOKEN", TOKEN);
    sb.env("AGENT_RELAY_ANTHROPIC_KEY", ANTHROPIC_KEY);
    sb.env("AGENT_RELAY_ANTHROPIC_BASE", api.url());
    api.on(Rule::model(MODEL).reply(Reply::anthropic_error(
        429,
        "rate_limit_error",
        "You have reached your usage limit",
    )));
    let relay = RelayProc::start(sb, &[]);
    // The launcher reaches Anthropic through this relay, with the relay token.
    sb.env("AGENT_PROXY_URL", format!("{}/anthropic", relay.url));
    sb.env("AGENT_PROXY_KEY", TOKEN);

    let seen = relay.post(
        "/anthropic/v1/messages",
        Some(TOKEN),
        &messages_body(MODEL),
        &[],
    );
    assert_eq!(seen.status, 429, "{seen:?}");
    wait::until("the quota in health.json", || {
        fs::read_to_string(sb.state_dir().join("health.json"))
            .unwrap_or_default()
            .contains("\"quota\"")
    });

    let run = sb.run(&["-p", "hi"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(
        api.posts_for_model(MODEL),
        1,
        "the launch skipped the capped rung without calling it"
    );
    assert!(
        run.stderr
            .contains("Claude Code (its default model) unavailable"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("usage limit"), "{}", run.stderr);
    assert_eq!(sb.calls("codex").len(), 1, "codex ran instead");
    assert!(sb.calls("claude").is_empty());
}

#[test]
fn a_body_over_the_limit_gets_413_and_nothing_is_sent() {
    let (sb, api) = relay_world();
    sb.write_config("[relay]\nbody_limit_mb = 0.01\n");
    let relay = RelayProc::start(&sb, &[]);
    let big = json!({"model": MODEL, "max_tokens": 16,
        "messages": [{"role": "user", "content": "x".repeat(20_000)}]})
    .to_string();

    let declared = relay.post("/anthropic/v1/messages", Some(TOKEN), &big, &[]);
    let chunked = relay.raw(
        &format!(
            "POST /anthropic/v1/messages HTTP/1.1\nhost: x\nx-api-key: {TOKEN}\ntransfer-encoding: chunked\nconnection: close\n"
        ),
        &format!("{:x}\r\n{big}\r\n0\r\n\r\n", big.len()),
    );

    assert_eq!(declared.status, 413, "{declared:?}");
    assert_eq!(chunked.status, 413, "{chunked:?}");
    assert!(api.requests().is_empty());
}

#[test]
fn a_client_that_stops_sending_mid_request_is_timed_out() {
    let (sb, api) = relay_world();
    sb.write_config("[relay]\nclient_timeout_seconds = 1\n");
    let relay = RelayProc::start(&sb, &[]);

    // Headers promise 100 bytes; 10 come, then nothing.
    let stalled_body = relay.raw(
        &format!(
            "POST /anthropic/v1/messages HTTP/1.1\nhost: x\nx-api-key: {TOKEN}\ncontent-length: 100\n"
        ),
        "{\"model\":",
    );
    assert_eq!(stalled_body.status, 408, "{stalled_body:?}");
    // Half a header line, then nothing: the connection is closed.
    let mut stream = std::net::TcpStream::connect(&relay.addr).unwrap();
    std::io::Write::write_all(
        &mut stream,
        b"POST /anthropic/v1/messages HTTP/1.1\r\nhost: x\r\n",
    )
    .unwrap();
    stream.set_read_timeout(Some(wait::PATIENCE)).unwrap();
    let mut rest = Vec::new();
    // The relay's end of the connection, not this read's patience running out.
    let closed = std::io::Read::read_to_end(&mut stream, &mut rest);
    assert!(closed.is_ok(), "the relay kept the connection: {closed:?}");

    assert!(api.requests().is_empty());
}

#[test]
fn an_upstream_401_drops_the_key_and_the_next_call_reads_it_again() {
    let (sb, api) = relay_world();
    sb.env_remove("AGENT_RELAY_ANTHROPIC_KEY");
    let counter = sb.tmp_dir().join("reads");
    sb.write_config(&format!(
        "[relay.upstreams.anthropic]\nsecret_cmd = \"echo read >> '{}'; echo {ANTHROPIC_KEY}\"\n",
        counter.display()
    ));
    api.on(Rule::any().times(1).reply(Reply::anthropic_error(
        401,
        "authentication_error",
        "invalid x-api-key",
    )));
    let relay = RelayProc::start(&sb, &[]);
    let call = || {
        relay
            .post(
                "/anthropic/v1/messages",
                Some(TOKEN),
                &messages_body(MODEL),
                &[],
            )
            .status
    };

    assert_eq!(call(), 401);
    assert_eq!(call(), 200);
    assert_eq!(call(), 200);

    let reads = fs::read_to_string(&counter).unwrap_or_default();
    assert_eq!(
        reads.lines().count(),
        2,
        "read once, dropped on 401, read again once"
    );
    assert_only_the_real_key_went_upstream(&api, ANTHROPIC_KEY);
}

#[test]
fn healthz_says_ok_to_anyone_and_shows_which_keys_are_there_to_the_token() {
    let (sb, _api) = relay_world();
    sb.env_remove("AGENT_RELAY_OPENAI_KEY");
    let relay = RelayProc::start(&sb, &[]);

    let anyone = relay.get("/healthz", None);
    let holder = relay.get("/healthz", Some(TOKEN));

    assert_eq!(anyone.status, 200);
    assert_eq!(anyone.json(), json!({"ok": true}));
    assert_eq!(
        holder.json(),
        json!({"ok": true, "upstreams": {
            "anthropic": {"kind": "anthropic", "key": true},
            "openai": {"kind": "openai", "key": false},
        }})
    );
    assert!(!holder.body.contains(ANTHROPIC_KEY));
}

#[test]
fn an_openai_call_without_a_key_answers_503_relay_credentials_missing() {
    let (sb, api) = relay_world();
    sb.env_remove("AGENT_RELAY_OPENAI_KEY");
    let relay = RelayProc::start(&sb, &[]);

    let answer = relay.post(
        "/openai/v1/chat/completions",
        Some(TOKEN),
        &json!({"model": "gpt-test", "messages": [{"role": "user", "content": "hi"}]}).to_string(),
        &[],
    );

    assert_eq!(answer.status, 503, "{answer:?}");
    assert_eq!(answer.json()["error"]["type"], "relay_credentials_missing");
    assert!(
        answer.body.contains("AGENT_RELAY_OPENAI_KEY"),
        "{}",
        answer.body
    );
    assert!(api.requests().is_empty());
}

#[test]
fn serve_warns_at_start_once_per_upstream_without_a_key_and_still_serves() {
    let (sb, api) = relay_world();
    sb.env_remove("AGENT_RELAY_ANTHROPIC_KEY");
    sb.env_remove("AGENT_RELAY_OPENAI_KEY");
    sb.write_config(
        "[relay.upstreams.bailian]\nkind = \"openai\"\nbase = \"http://127.0.0.1:9\"\nsecret_cmd = \"echo sk-bailian-0123456789\"\n\n[relay.upstreams.claude-cli]\nkind = \"claude-cli\"\n",
    );
    let relay = RelayProc::start(&sb, &[]);

    // Printed before the line that says where it listens, so all there by now.
    let stderr = relay.stderr();
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|line| line.starts_with("agent: warning: no key for upstream"))
        .collect();
    assert_eq!(
        warnings.len(),
        2,
        "anthropic and openai, once each:\n{stderr}"
    );
    for (name, var) in [
        ("anthropic", "AGENT_RELAY_ANTHROPIC_KEY"),
        ("openai", "AGENT_RELAY_OPENAI_KEY"),
    ] {
        assert!(
            warnings.iter().any(|line| line.contains(&format!(
                "\"{name}\": set {var} or relay.upstreams.{name}.secret_cmd"
            ))),
            "{name}: {stderr}"
        );
    }
    assert!(
        !stderr.contains("\"bailian\"") && !stderr.contains("\"claude-cli\""),
        "a secret_cmd or a CLI login is somewhere to read from: {stderr}"
    );

    // It serves all the same: the call that needs the key is refused, nothing goes upstream.
    assert_eq!(relay.get("/healthz", None).status, 200);
    let answer = relay.post(
        "/anthropic/v1/messages",
        Some(TOKEN),
        &messages_body(MODEL),
        &[],
    );
    assert_eq!(answer.status, 503, "{answer:?}");
    assert_eq!(answer.json()["error"]["type"], "relay_credentials_missing");
    assert!(api.requests().is_empty());
}

#[test]
fn serve_with_every_key_set_warns_of_none() {
    let (sb, _api) = relay_world();
    let relay = RelayProc::start(&sb, &[]);
    assert_eq!(relay.get("/healthz", None).status, 200);
    assert!(!relay.stderr().contains("warning"), "{}", relay.stderr());
}

/// A fake `claude` that keeps what it was given and answers like `--output-format json`.
fn fake_claude_cli(sb: &Sandbox, answer: &str, exit: i32) {
    sb.fake_cli("claude")
        .script(&format!(
            r#"cat > "$calls/$n/stdin"
pwd > "$calls/$n/cwd"
ls -A > "$calls/$n/ls"
printf '%s' '{answer}'
exit {exit}"#
        ))
        .install();
}

#[test]
fn the_claude_cli_upstream_answers_in_anthropic_format_with_the_clis_usage() {
    let (sb, _api) = relay_world();
    sb.write_config("[relay.upstreams.claude-cli]\nkind = \"claude-cli\"\n");
    fake_claude_cli(
        &sb,
        r#"{"type":"result","subtype":"success","is_error":false,"result":"cli says hi","stop_reason":"end_turn","session_id":"s1","usage":{"input_tokens":408,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":5}}"#,
        0,
    );
    let mut relay = RelayProc::start(&sb, &[]);
    let body = json!({"model": "claude-haiku-4-5", "max_tokens": 64,
        "system": "Answer in one word.",
        "messages": [{"role": "user", "content": PROMPT}]})
    .to_string();

    let answer = relay.post("/claude-cli/v1/messages", Some(TOKEN), &body, &[]);

    assert_eq!(answer.status, 200, "{answer:?}");
    let message = answer.json();
    assert_eq!(message["type"], "message");
    assert_eq!(message["content"][0]["text"], "cli says hi");
    assert_eq!(message["usage"]["input_tokens"], 408);
    assert_eq!(message["usage"]["output_tokens"], 5);
    let run = &sb.calls("claude")[0];
    let argv: Vec<&str> = run.argv.iter().map(String::as_str).collect();
    assert_eq!(
        &argv[..7],
        [
            "-p",
            "--model",
            "claude-haiku-4-5",
            "--output-format",
            "json",
            "--tools",
            ""
        ]
    );
    for flag in [
        "--strict-mcp-config",
        "--no-session-persistence",
        "--disable-slash-commands",
        "--system-prompt",
    ] {
        assert!(argv.contains(&flag), "{argv:?}");
    }
    let call_dir = sb.calls_dir().join("claude/1");
    let stdin = fs::read_to_string(call_dir.join("stdin")).unwrap();
    assert!(
        stdin.contains("Answer in one word.") && stdin.contains(PROMPT),
        "{stdin}"
    );
    let cwd = fs::read_to_string(call_dir.join("cwd")).unwrap();
    assert!(cwd.contains("agent-relay-cli-"), "{cwd}");
    assert_eq!(
        fs::read_to_string(call_dir.join("ls")).unwrap(),
        "",
        "an empty directory"
    );
    assert!(!run.env.contains_key("AGENT_RELAY_TOKEN"));
    assert!(!run.env.contains_key("AGENT_RELAY_ANTHROPIC_KEY"));
    relay.stop();
    let lines = ledger(&sb);
    assert_eq!(lines[0]["upstream"], "claude-cli");
    assert_eq!(lines[0]["tokens"]["input"], 408);
}

#[test]
fn a_claude_cli_usage_limit_becomes_429_relay_cli_quota() {
    let (sb, _api) = relay_world();
    sb.write_config("[relay.upstreams.claude-cli]\nkind = \"claude-cli\"\n");
    fake_claude_cli(
        &sb,
        r#"{"type":"result","subtype":"success","is_error":true,"api_error_status":429,"result":"Claude AI usage limit reached|1767225600"}"#,
        1,
    );
    let relay = RelayProc::start(&sb, &[]);

    let answer = relay.post(
        "/claude-cli/v1/messages",
        Some(TOKEN),
        &messages_body(MODEL),
        &[],
    );

    assert_eq!(answer.status, 429, "{answer:?}");
    assert_eq!(answer.json()["error"]["type"], "relay_cli_quota");
}

#[test]
fn init_writes_a_private_token_that_serve_then_accepts() {
    let (sb, api) = relay_world();
    sb.env_remove("AGENT_RELAY_TOKEN");

    let none = sb.run(&["--relay", "serve", "--listen", "127.0.0.1:0"]);
    assert_eq!(none.code, Some(2), "{none:?}");
    assert!(
        none.stderr.contains("agent --relay init"),
        "{}",
        none.stderr
    );

    let init = sb.run(&["--relay", "init"]);
    assert_eq!(init.code, Some(0), "{init:?}");
    let path = sb.home().join(".config/agent/relay-token");
    let mode = std::os::unix::fs::PermissionsExt::mode(&fs::metadata(&path).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600);
    let token = fs::read_to_string(&path).unwrap().trim().to_string();
    assert!(token.len() >= 64, "{token}");
    assert!(!init.stdout.contains(&token), "the token is not printed");
    let again = sb.run(&["--relay", "init"]);
    assert_ne!(again.code, Some(0), "an existing token is kept: {again:?}");

    let relay = RelayProc::start(&sb, &[]);
    let answer = relay.post(
        "/anthropic/v1/messages",
        Some(&token),
        &messages_body(MODEL),
        &[],
    );
    assert_eq!(answer.status, 200, "{answer:?}");
    assert_eq!(api.posts(), 1);
}

#[test]
fn install_writes_a_systemd_user_service_that_runs_the_relay() {
    let sb = Sandbox::new();

    let run = sb.run(&["--relay", "install", "--service", "systemd"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    let unit = fs::read_to_string(sb.home().join(".config/systemd/user/agent-relay.service"))
        .expect("the unit was written");
    assert!(unit.contains("--relay serve"), "{unit}");
    assert!(unit.contains("ExecStart=/"), "an absolute path: {unit}");
    assert!(unit.contains("EnvironmentFile=-"), "{unit}");
    assert!(
        run.stdout
            .contains("systemctl --user enable --now agent-relay.service"),
        "{}",
        run.stdout
    );

    let launchd = sb.run(&["--relay", "install", "--service", "launchd", "--dry-run"]);
    assert_eq!(launchd.code, Some(0), "{launchd:?}");
    assert!(
        launchd.stdout.contains("<string>dev.agent.relay</string>"),
        "{}",
        launchd.stdout
    );
}

#[test]
fn a_relay_config_mistake_names_the_file_line_and_key() {
    let sb = Sandbox::new();
    sb.write_config(
        "[relay]\nlisten = \"127.0.0.1:1\"\n\n[relay.upstreams.x]\nkind = \"openai\"\n",
    );

    let run = sb.run(&["--relay", "serve"]);

    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(
        run.stderr.contains("config.toml:4: relay.upstreams.x.base"),
        "{}",
        run.stderr
    );

    sb.write_config("[relay]\nlisen = \"x\"\n");
    let run = sb.run(&["--relay", "serve"]);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(
        run.stderr.contains("config.toml:2") && run.stderr.contains("lisen"),
        "{}",
        run.stderr
    );
}

/// Nagle's algorithm against delayed ACKs adds some 40 ms to every small answer: the relay
/// turns it off on both of its sockets of a call. What is proved is the socket option
/// itself, read off the relay's own sockets, not how long an answer took.
#[test]
fn tcp_nodelay_is_on_the_relays_sockets_to_its_client_and_to_the_upstream() {
    let (sb, api) = relay_world();
    let relay = RelayProc::start(&sb, &[]);
    let body = messages_body(MODEL);
    let mut stream = std::net::TcpStream::connect(&relay.addr).unwrap();
    stream.set_read_timeout(Some(wait::PATIENCE)).unwrap();
    let request = format!(
        "POST /anthropic/v1/messages HTTP/1.1\r\nhost: x\r\nx-api-key: {TOKEN}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    // Two calls on one kept-alive connection; the relay keeps its upstream one too.
    for _ in 0..2 {
        std::io::Write::write_all(&mut stream, request.as_bytes()).unwrap();
        read_one_answer(&mut stream);
    }
    assert_eq!(api.posts(), 2);

    let sockets = relay.tcp_sockets();
    let nodelay_to = |peer: std::net::SocketAddr| {
        sockets
            .iter()
            .find(|socket| socket.peer_addr().ok() == Some(peer))
            .unwrap_or_else(|| panic!("no socket of the relay's is connected to {peer}"))
            .nodelay()
            .unwrap()
    };
    assert!(
        nodelay_to(stream.local_addr().unwrap()),
        "TCP_NODELAY is off on the relay's socket to its client"
    );
    assert!(
        nodelay_to(api.addr()),
        "TCP_NODELAY is off on the relay's socket to the upstream"
    );
}

/// Reads one content-length framed answer off a kept-alive connection.
fn read_one_answer(stream: &mut std::net::TcpStream) {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        std::io::Read::read_exact(stream, &mut byte).expect("an answer");
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .map(|v| v.trim().parse().unwrap())
        .expect("content-length");
    let mut body = vec![0u8; length];
    std::io::Read::read_exact(stream, &mut body).unwrap();
}

#[test]
fn the_same_socket_carries_raw_requests_too() {
    // The raw client itself works against the mock (guards the helpers above).
    let api = MockApi::start();
    let answer = raw(
        &api.addr().to_string(),
        "GET /v1/models HTTP/1.1\nhost: x\nconnection: close\n",
        "",
    );
    assert_eq!(answer.status, 200);
}
