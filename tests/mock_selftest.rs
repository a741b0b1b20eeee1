//! Self-tests of the harness: the mock API answers like the real APIs, scripts as
//! documented and never hangs the suite; fake CLIs record exactly what they were given.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::thread;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::sandbox::{run_command, spawn};
use crate::support::{MockApi, Reply, Rule, Sandbox, Usage, wait};

fn client(timeout: Duration) -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(timeout))
        .build()
        .into()
}

/// A finished exchange.
struct Got {
    status: u16,
    headers: ureq::http::HeaderMap,
    body: String,
}

impl Got {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

fn post(api: &MockApi, path: &str, headers: &[(&str, &str)], body: &Value) -> Got {
    let mut request = client(Duration::from_secs(5)).post(format!("{}{path}", api.url()));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let mut response = request.send_json(body).expect("request to the mock");
    Got {
        status: response.status().as_u16(),
        headers: response.headers().clone(),
        body: response.body_mut().read_to_string().expect("body"),
    }
}

fn anthropic(api: &MockApi, model: &str, key: &str) -> Got {
    post(
        api,
        "/v1/messages",
        &[("x-api-key", key), ("anthropic-version", "2023-06-01")],
        &json!({"model": model, "max_tokens": 1, "messages": [{"role": "user", "content": "hi"}]}),
    )
}

/// Read an SSE body line by line as it arrives: (event name or "", data, when it arrived).
fn read_sse(
    api: &MockApi,
    path: &str,
    headers: &[(&str, &str)],
    body: &Value,
) -> (Got, Vec<(String, String)>) {
    let mut request = client(Duration::from_secs(5)).post(format!("{}{path}", api.url()));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send_json(body).expect("request to the mock");
    let got = Got {
        status: response.status().as_u16(),
        headers: response.headers().clone(),
        body: String::new(),
    };
    let reader = BufReader::new(response.into_body().into_reader());
    let mut events = Vec::new();
    let mut name = String::new();
    for line in reader.lines() {
        let line = line.expect("read SSE line");
        let line = line.trim_end_matches('\r');
        if let Some(n) = line.strip_prefix("event: ") {
            n.clone_into(&mut name);
        } else if let Some(data) = line.strip_prefix("data: ") {
            events.push((std::mem::take(&mut name), data.to_owned()));
        }
    }
    (got, events)
}

#[test]
fn anthropic_default_answer_is_a_message_with_usage() {
    let api = MockApi::start();
    let got = post(
        &api,
        "/v1/messages?beta=true",
        &[("x-api-key", "sk-test")],
        &json!({"model": "claude-opus-5", "max_tokens": 1, "messages": []}),
    );
    assert_eq!(got.status, 200);
    let body = got.json();
    assert_eq!(body["type"], "message");
    assert_eq!(body["role"], "assistant");
    assert_eq!(body["model"], "claude-opus-5");
    assert_eq!(body["content"][0], json!({"type": "text", "text": "ok"}));
    assert_eq!(body["stop_reason"], "end_turn");
    assert_eq!(body["usage"]["input_tokens"], 8);
    assert_eq!(body["usage"]["output_tokens"], 1);
    assert!(got.header("request-id").is_some());

    let bearer = post(
        &api,
        "/v1/messages",
        &[("Authorization", "Bearer tok-1")],
        &json!({"model": "claude-sonnet-5"}),
    );
    assert_eq!(bearer.status, 200);

    let requests = api.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].method, "POST");
    assert_eq!(requests[0].path, "/v1/messages");
    assert_eq!(requests[0].query, "beta=true");
    assert_eq!(requests[0].model.as_deref(), Some("claude-opus-5"));
    assert_eq!(requests[0].credential.as_deref(), Some("sk-test"));
    assert_eq!(requests[0].header("X-API-KEY"), Some("sk-test"));
    assert_eq!(requests[0].json()["max_tokens"], 1);
    assert_eq!(requests[1].credential.as_deref(), Some("tok-1"));
    assert_eq!(api.posts(), 2);
    assert_eq!(api.posts_for_model("claude-sonnet-5"), 1);
}

#[test]
fn openai_chat_and_responses_default_answers() {
    let api = MockApi::start();
    let auth = [("Authorization", "Bearer sk-openai")];
    for path in ["/v1/chat/completions", "/chat/completions"] {
        let got = post(
            &api,
            path,
            &auth,
            &json!({"model": "gpt-5", "max_tokens": 1}),
        );
        assert_eq!(got.status, 200, "{path}");
        let body = got.json();
        assert_eq!(body["object"], "chat.completion");
        assert_eq!(body["choices"][0]["message"]["content"], "ok");
        assert_eq!(body["choices"][0]["finish_reason"], "stop");
        assert_eq!(body["usage"]["prompt_tokens"], 8);
        assert_eq!(body["usage"]["completion_tokens"], 1);
        assert!(got.header("x-request-id").is_some());
    }
    for path in ["/v1/responses", "/responses"] {
        let got = post(
            &api,
            path,
            &auth,
            &json!({"model": "gpt-5-codex", "max_output_tokens": 16}),
        );
        assert_eq!(got.status, 200, "{path}");
        let body = got.json();
        assert_eq!(body["object"], "response");
        assert_eq!(body["status"], "completed");
        assert_eq!(body["model"], "gpt-5-codex");
        assert_eq!(body["output"][0]["type"], "message");
        assert_eq!(body["output"][0]["content"][0]["type"], "output_text");
        assert_eq!(body["output"][0]["content"][0]["text"], "ok");
        assert_eq!(body["usage"]["input_tokens"], 8);
        assert_eq!(body["usage"]["total_tokens"], 9);
    }
    assert!(
        api.requests()
            .iter()
            .all(|r| r.credential.as_deref() == Some("sk-openai"))
    );
    assert_eq!(api.posts_for_model("gpt-5"), 2);
}

#[test]
fn gemini_default_answer_has_candidates() {
    let api = MockApi::start();
    let got = post(
        &api,
        "/v1beta/models/gemini-2.5-pro:generateContent",
        &[("x-goog-api-key", "AIza-test")],
        &json!({"contents": [{"parts": [{"text": "hi"}]}], "generationConfig": {"maxOutputTokens": 1}}),
    );
    assert_eq!(got.status, 200);
    let body = got.json();
    assert_eq!(body["candidates"][0]["content"]["parts"][0]["text"], "ok");
    assert_eq!(body["candidates"][0]["content"]["role"], "model");
    assert_eq!(body["candidates"][0]["finishReason"], "STOP");
    assert_eq!(body["usageMetadata"]["promptTokenCount"], 8);
    assert_eq!(body["usageMetadata"]["totalTokenCount"], 9);

    post(
        &api,
        "/v1beta/models/gemini-2.5-flash:generateContent?key=AIza-query",
        &[],
        &json!({}),
    );
    let requests = api.requests();
    assert_eq!(requests[0].model.as_deref(), Some("gemini-2.5-pro"));
    assert_eq!(requests[0].credential.as_deref(), Some("AIza-test"));
    assert_eq!(requests[1].model.as_deref(), Some("gemini-2.5-flash"));
    assert_eq!(requests[1].credential.as_deref(), Some("AIza-query"));
}

#[test]
fn warm_ups_answer_an_empty_200_whatever_the_rules_and_are_not_posts() {
    let api = MockApi::start();
    api.on(Rule::any().reply(Reply::status(500)));
    let agent = client(Duration::from_secs(5));
    let head = agent
        .head(format!("{}/", api.url()))
        .call()
        .expect("HEAD /");
    assert_eq!(head.status(), 200);
    let mut get = agent.get(format!("{}/", api.url())).call().expect("GET /");
    assert_eq!(get.status(), 200);
    assert_eq!(get.body_mut().read_to_string().expect("body"), "");
    assert_eq!(api.requests().len(), 2);
    assert_eq!(api.posts(), 0);
    assert_eq!(anthropic(&api, "m", "k").status, 500);
    assert_eq!(api.posts(), 1);
}

#[test]
fn unknown_routes_are_404_and_models_lists_scripted_models() {
    let api = MockApi::start();
    api.on(Rule::model("claude-opus-5").reply(Reply::status(429)));
    assert_eq!(post(&api, "/v2/nothing", &[], &json!({})).status, 404);
    let mut models = client(Duration::from_secs(5))
        .get(format!("{}/v1/models", api.url()))
        .call()
        .expect("GET /v1/models");
    assert_eq!(models.status(), 200);
    let list: Value = models.body_mut().read_json().expect("json");
    assert_eq!(list["object"], "list");
    assert_eq!(list["data"][0]["id"], "claude-opus-5");
}

#[test]
fn a_model_can_be_rate_limited_with_retry_after() {
    let api = MockApi::start();
    api.on(Rule::model("claude-opus-5").reply(
        Reply::anthropic_error(
            429,
            "rate_limit_error",
            "Number of requests has exceeded your rate limit",
        )
        .header("retry-after", "90"),
    ));
    let capped = anthropic(&api, "claude-opus-5", "k");
    assert_eq!(capped.status, 429);
    assert_eq!(capped.header("retry-after"), Some("90"));
    assert_eq!(capped.header("content-type"), Some("application/json"));
    let body = capped.json();
    assert_eq!(body["type"], "error");
    assert_eq!(body["error"]["type"], "rate_limit_error");

    assert_eq!(anthropic(&api, "claude-sonnet-5", "k").status, 200);
    assert_eq!(api.posts_for_model("claude-opus-5"), 1);
    assert_eq!(api.posts_for_model("claude-sonnet-5"), 1);
}

#[test]
fn a_credential_can_be_refused() {
    let api = MockApi::start();
    api.on(Rule::credential("bad-key").reply(Reply::anthropic_error(
        401,
        "authentication_error",
        "invalid x-api-key",
    )));
    api.on(Rule::model("gpt-5")
        .and_credential("bad-key")
        .reply(Reply::openai_error(
            401,
            "invalid_api_key",
            "Incorrect API key provided",
        )));
    let refused = anthropic(&api, "claude-opus-5", "bad-key");
    assert_eq!(refused.status, 401);
    assert_eq!(refused.json()["error"]["type"], "authentication_error");
    assert_eq!(anthropic(&api, "claude-opus-5", "good-key").status, 200);

    let openai = post(
        &api,
        "/v1/chat/completions",
        &[("Authorization", "Bearer bad-key")],
        &json!({"model": "gpt-5"}),
    );
    assert_eq!(openai.status, 401);
    assert_eq!(openai.json()["error"]["code"], "invalid_api_key");
    assert_eq!(openai.json()["error"]["type"], "invalid_api_key");
}

#[test]
fn gemini_error_has_the_google_shape() {
    let api = MockApi::start();
    api.on(
        Rule::path_contains(":generateContent").reply(Reply::gemini_error(
            400,
            "INVALID_ARGUMENT",
            "API key not valid",
        )),
    );
    let got = post(
        &api,
        "/v1beta/models/gemini-2.5-pro:generateContent",
        &[("x-goog-api-key", "x")],
        &json!({}),
    );
    assert_eq!(got.status, 400);
    assert_eq!(
        got.json(),
        json!({"error": {"code": 400, "message": "API key not valid", "status": "INVALID_ARGUMENT"}})
    );
}

#[test]
fn times_limits_a_rule_and_the_newest_rule_wins() {
    let api = MockApi::start();
    api.on(Rule::any().reply(Reply::status(500).body("upstream broke")));
    api.on(Rule::model("m").times(1).reply(Reply::status(529)));
    assert_eq!(anthropic(&api, "m", "k").status, 529);
    let second = anthropic(&api, "m", "k");
    assert_eq!(second.status, 500);
    assert_eq!(second.body, "upstream broke");
    assert!(
        second
            .header("content-type")
            .is_some_and(|v| v.starts_with("text/plain"))
    );
    assert_eq!(anthropic(&api, "other", "k").status, 500);
    api.clear_rules();
    assert_eq!(anthropic(&api, "m", "k").status, 200);
}

#[test]
fn answer_text_and_usage_are_configurable() {
    let api = MockApi::start();
    let usage = Usage {
        input: 3,
        output: 5,
        cache_read: 100,
        cache_write: 7,
        reasoning: 2,
    };
    api.on(Rule::any().reply(Reply::ok_text("hello there").usage(usage)));
    let body = anthropic(&api, "m", "k").json();
    assert_eq!(body["content"][0]["text"], "hello there");
    assert_eq!(body["usage"]["input_tokens"], 3);
    assert_eq!(body["usage"]["cache_read_input_tokens"], 100);
    assert_eq!(body["usage"]["cache_creation_input_tokens"], 7);
    let chat = post(&api, "/v1/chat/completions", &[], &json!({"model": "m"})).json();
    assert_eq!(chat["choices"][0]["message"]["content"], "hello there");
    assert_eq!(chat["usage"]["prompt_tokens"], 103);
    assert_eq!(chat["usage"]["prompt_tokens_details"]["cached_tokens"], 100);
    assert_eq!(
        chat["usage"]["completion_tokens_details"]["reasoning_tokens"],
        2
    );
    let gemini = post(&api, "/v1beta/models/g:generateContent", &[], &json!({})).json();
    assert_eq!(gemini["usageMetadata"]["cachedContentTokenCount"], 100);
    assert_eq!(gemini["usageMetadata"]["thoughtsTokenCount"], 2);
    assert_eq!(gemini["usageMetadata"]["candidatesTokenCount"], 3);
}

#[test]
fn held_answers_come_only_once_their_gate_is_released() {
    let api = MockApi::start();
    api.on(Rule::model("held").reply(Reply::ok().held("gate")));
    thread::scope(|scope| {
        let gate = api.releasing("gate");
        let held = scope.spawn(|| anthropic(&api, "held", "k").status);
        api.wait_for_posts(1);
        // Another call is answered meanwhile; the held one is still upstream after it.
        assert_eq!(anthropic(&api, "free", "k").status, 200);
        // The mock counts an answer out once it is written, a moment after its client
        // has it.
        wait::until("the free call counted out", || api.posts_in_flight() == 1);
        assert!(!held.is_finished(), "answered before its gate was released");
        gate.now();
        assert_eq!(held.join().unwrap(), 200);
    });
    wait::until("the held call counted out", || api.posts_in_flight() == 0);
    assert_eq!(api.most_posts_in_flight(), 2);
    // A gate once released lets every later answer through at once.
    assert_eq!(anthropic(&api, "held", "k").status, 200);
}

#[test]
fn hang_ends_when_the_client_gives_up_and_dropping_the_mock_releases_it() {
    let api = MockApi::start();
    api.on(Rule::any().reply(Reply::hang()));
    let result = client(Duration::from_millis(300))
        .post(format!("{}/v1/messages", api.url()))
        .send_json(json!({"model": "m"}));
    assert!(result.is_err(), "a hung request must time out");
    api.wait_for_posts(1);
    wait::until("the mock seeing the client give up", || {
        api.posts_in_flight() == 0
    });

    // A client still waiting when the mock goes away sees the connection end.
    let mut raw = TcpStream::connect(api.addr()).expect("connect");
    raw.set_read_timeout(Some(wait::PATIENCE)).expect("timeout");
    raw.write_all(b"POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\n{}")
        .expect("send");
    api.wait_for_posts(2);
    drop(api);
    let mut buf = [0u8; 64];
    match raw.read(&mut buf) {
        Ok(0) => {}
        Ok(n) => panic!(
            "unexpected answer: {:?}",
            String::from_utf8_lossy(&buf[..n])
        ),
        Err(e) => panic!("the connection did not end: {e}"),
    }
}

#[test]
fn close_ends_the_connection_without_an_answer() {
    let api = MockApi::start();
    api.on(Rule::any().times(1).reply(Reply::close()));
    let result = client(Duration::from_secs(5))
        .post(format!("{}/v1/messages", api.url()))
        .send_json(json!({"model": "m"}));
    assert!(result.is_err());
    assert_eq!(anthropic(&api, "m", "k").status, 200);
}

#[test]
fn anthropic_stream_arrives_event_by_event() {
    let api = MockApi::start();
    api.on(Rule::any().reply(Reply::ok_text("hi")));
    let (got, events) = read_sse(
        &api,
        "/v1/messages?beta=true",
        &[("x-api-key", "k")],
        &json!({"model": "claude-opus-5", "max_tokens": 32, "stream": true}),
    );
    assert_eq!(got.status, 200);
    assert!(
        got.header("content-type")
            .is_some_and(|v| v.starts_with("text/event-stream"))
    );
    let names: Vec<&str> = events.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "message_start",
            "content_block_start",
            "ping",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop"
        ]
    );
    for (name, data) in &events {
        let data: Value = serde_json::from_str(data).expect("event data is JSON");
        assert_eq!(data["type"], name.as_str());
    }
    let start: Value = serde_json::from_str(&events[0].1).expect("json");
    assert_eq!(start["message"]["model"], "claude-opus-5");
    assert_eq!(start["message"]["usage"]["input_tokens"], 8);
    let delta: Value = serde_json::from_str(&events[3].1).expect("json");
    assert_eq!(delta["delta"], json!({"type": "text_delta", "text": "hi"}));
    let message_delta: Value = serde_json::from_str(&events[5].1).expect("json");
    assert_eq!(message_delta["delta"]["stop_reason"], "end_turn");
    assert_eq!(message_delta["usage"]["output_tokens"], 1);
}

/// A tool call streams as the API streams it: a second block, its input in
/// `input_json_delta` pieces that join into the input, `stop_reason: tool_use`.
#[test]
fn a_tool_use_answer_streams_its_input_in_pieces_and_stops_for_the_tool() {
    let api = MockApi::start();
    let input = json!({"file_path": "/repo/notes.txt", "content": "a line\n"});
    api.on(Rule::any().reply(Reply::anthropic_tool_use(
        "Writing it.",
        "Write",
        input.clone(),
    )));
    let (_, events) = read_sse(
        &api,
        "/v1/messages?beta=true",
        &[("x-api-key", "k")],
        &json!({"model": "claude-opus-5", "max_tokens": 32, "stream": true}),
    );
    let data: Vec<Value> = events
        .iter()
        .map(|(_, d)| serde_json::from_str(d).expect("JSON"))
        .collect();
    let tool_start = data
        .iter()
        .find(|d| d["type"] == "content_block_start" && d["index"] == 1)
        .expect("a second block");
    assert_eq!(tool_start["content_block"]["type"], "tool_use");
    assert_eq!(tool_start["content_block"]["name"], "Write");
    assert_eq!(tool_start["content_block"]["input"], json!({}));
    let pieces: Vec<&str> = data
        .iter()
        .filter(|d| d["delta"]["type"] == "input_json_delta")
        .map(|d| d["delta"]["partial_json"].as_str().expect("a piece"))
        .collect();
    assert!(pieces.len() > 1, "{pieces:?}");
    let joined: Value = serde_json::from_str(&pieces.concat()).expect("the pieces join");
    assert_eq!(joined, input);
    let stop = data
        .iter()
        .find(|d| d["type"] == "message_delta")
        .expect("message_delta");
    assert_eq!(stop["delta"]["stop_reason"], "tool_use");

    let whole = anthropic(&api, "claude-opus-5", "k").json();
    assert_eq!(whole["stop_reason"], "tool_use");
    assert_eq!(whole["content"][0]["text"], "Writing it.");
    assert_eq!(whole["content"][1]["type"], "tool_use");
    assert_eq!(whole["content"][1]["input"], input);
}

/// A rule can pick one conversation's turns by what their bodies carry.
#[test]
fn a_rule_can_match_what_the_body_carries() {
    let api = MockApi::start();
    api.on(Rule::path_contains("/v1/messages")
        .and_body_contains("tool_result")
        .reply(Reply::status(429)));
    assert_eq!(anthropic(&api, "m", "k").status, 200);
    let with_result = post(
        &api,
        "/v1/messages",
        &[("x-api-key", "k")],
        &json!({"model": "m", "messages": [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "done"}]}]}),
    );
    assert_eq!(with_result.status, 429);
}

#[test]
fn openai_chat_stream_ends_with_usage_and_done() {
    let api = MockApi::start();
    let (got, events) = read_sse(
        &api,
        "/v1/chat/completions",
        &[],
        &json!({"model": "gpt-5", "stream": true, "stream_options": {"include_usage": true}}),
    );
    assert!(
        got.header("content-type")
            .is_some_and(|v| v.starts_with("text/event-stream"))
    );
    let data: Vec<&str> = events.iter().map(|(_, d)| d.as_str()).collect();
    assert_eq!(data.last(), Some(&"[DONE]"));
    let chunks: Vec<Value> = data[..data.len() - 1]
        .iter()
        .map(|d| serde_json::from_str(d).expect("chunk JSON"))
        .collect();
    let text: String = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(text, "ok");
    assert!(
        chunks
            .iter()
            .all(|c| c["object"] == "chat.completion.chunk")
    );
    let usage = chunks.last().expect("usage chunk");
    assert_eq!(usage["choices"], json!([]));
    assert_eq!(usage["usage"]["total_tokens"], 9);

    let (_, plain) = read_sse(
        &api,
        "/v1/chat/completions",
        &[],
        &json!({"model": "gpt-5", "stream": true}),
    );
    assert!(plain.iter().all(|(_, d)| !d.contains("\"usage\"")));
    assert_eq!(plain.last().map(|(_, d)| d.as_str()), Some("[DONE]"));
}

#[test]
fn responses_stream_has_every_event_in_order() {
    let api = MockApi::start();
    let (got, events) = read_sse(
        &api,
        "/v1/responses",
        &[("Authorization", "Bearer sk")],
        &json!({"model": "gpt-5-codex", "stream": true, "input": "hi"}),
    );
    assert_eq!(got.status, 200);
    let names: Vec<&str> = events.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "response.created",
            "response.in_progress",
            "response.output_item.added",
            "response.content_part.added",
            "response.output_text.delta",
            "response.output_text.done",
            "response.content_part.done",
            "response.output_item.done",
            "response.completed"
        ]
    );
    for (i, (name, data)) in events.iter().enumerate() {
        let data: Value = serde_json::from_str(data).expect("JSON");
        assert_eq!(data["type"], name.as_str());
        assert_eq!(data["sequence_number"], i);
    }
    let done: Value = serde_json::from_str(&events[7].1).expect("JSON");
    assert_eq!(done["item"]["role"], "assistant");
    assert_eq!(done["item"]["content"][0]["type"], "output_text");
    assert_eq!(done["item"]["content"][0]["text"], "ok");
    let completed: Value = serde_json::from_str(&events[8].1).expect("JSON");
    assert_eq!(completed["response"]["status"], "completed");
    assert_eq!(completed["response"]["usage"]["input_tokens"], 8);
    assert_eq!(completed["response"]["usage"]["output_tokens"], 1);
}

#[test]
fn gemini_stream_is_sse_data_lines() {
    let api = MockApi::start();
    let (got, events) = read_sse(
        &api,
        "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse",
        &[("x-goog-api-key", "k")],
        &json!({"contents": []}),
    );
    assert!(
        got.header("content-type")
            .is_some_and(|v| v.starts_with("text/event-stream"))
    );
    let chunks: Vec<Value> = events
        .iter()
        .map(|(_, d)| serde_json::from_str(d).expect("JSON"))
        .collect();
    assert!(chunks.len() >= 2);
    let text: String = chunks
        .iter()
        .filter_map(|c| c["candidates"][0]["content"]["parts"][0]["text"].as_str())
        .collect();
    assert_eq!(text, "ok");
    let last = chunks.last().expect("chunk");
    assert_eq!(last["candidates"][0]["finishReason"], "STOP");
    assert_eq!(last["usageMetadata"]["totalTokenCount"], 9);
    assert_eq!(api.posts_for_model("gemini-2.5-pro"), 1);
}

#[test]
fn a_paused_stream_hands_over_its_first_events_before_the_rest_exists() {
    let api = MockApi::start();
    api.on(Rule::any().reply(Reply::ok().pause_after(3, "three read")));
    thread::scope(|scope| {
        let three_read = api.releasing("three read");
        let response = client(wait::PATIENCE)
            .post(format!("{}/v1/messages", api.url()))
            .send_json(json!({"model": "m", "stream": true}))
            .expect("headers arrive");
        let mut reader = BufReader::new(response.into_body().into_reader());
        let mut seen = String::new();
        // Each event is flushed as it is sent: the third is read while the mock holds the
        // rest (an answer written whole would never come).
        while !seen.contains("event: ping\ndata: ") {
            reader.read_line(&mut seen).expect("the first three events");
        }
        assert!(!seen.contains("content_block_delta"), "{seen}");
        three_read.now();
        let rest = scope.spawn(move || {
            let mut rest = String::new();
            reader.read_to_string(&mut rest).map(|_| rest)
        });
        let rest = rest.join().unwrap().expect("the rest of the stream");
        assert!(rest.contains("event: message_stop"), "{rest}");
    });
}

#[test]
fn a_stream_can_stall_after_it_started() {
    let api = MockApi::start();
    api.on(Rule::any().reply(Reply::ok().stall_after(2)));
    let response = client(Duration::from_millis(400))
        .post(format!("{}/v1/messages", api.url()))
        .send_json(json!({"model": "m", "stream": true}))
        .expect("headers arrive");
    assert_eq!(response.status(), 200);
    let mut reader = BufReader::new(response.into_body().into_reader());
    let mut seen = String::new();
    let mut line = String::new();
    let outcome = loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) => break Ok(()),
            Ok(_) => seen.push_str(&line),
            Err(e) => break Err(e),
        }
    };
    assert!(
        outcome.is_err(),
        "the stream should have stalled, got {seen}"
    );
    assert!(seen.contains("event: content_block_start"));
    assert!(!seen.contains("content_block_delta"));
}

/// Read one response off a raw connection: (status line, headers, body).
fn read_raw_response(reader: &mut BufReader<TcpStream>) -> (String, Vec<(String, String)>, String) {
    let mut status = String::new();
    reader.read_line(&mut status).expect("status line");
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).expect("header line");
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (k, v) = line.split_once(':').expect("header");
        headers.push((k.trim().to_ascii_lowercase(), v.trim().to_owned()));
    }
    let length: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .map_or(0, |(_, v)| v.parse().expect("length"));
    let mut body = vec![0; length];
    reader.read_exact(&mut body).expect("body");
    (
        status.trim_end().to_owned(),
        headers,
        String::from_utf8(body).expect("utf-8"),
    )
}

#[test]
fn one_connection_serves_many_requests_and_chunked_bodies() {
    let api = MockApi::start();
    let mut conn = TcpStream::connect(api.addr()).expect("connect");
    conn.set_read_timeout(Some(Duration::from_secs(5)))
        .expect("timeout");
    let mut reader = BufReader::new(conn.try_clone().expect("clone"));

    let body = r#"{"model":"m1","max_tokens":1}"#;
    let (a, b) = body.split_at(10);
    write!(
        conn,
        "POST /v1/messages HTTP/1.1\r\nhost: x\r\nx-api-key: k1\r\ntransfer-encoding: chunked\r\n\r\n{:x}\r\n{a}\r\n{:x}\r\n{b}\r\n0\r\n\r\n",
        a.len(),
        b.len()
    )
    .expect("send 1");
    let (status, _, first) = read_raw_response(&mut reader);
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert_eq!(
        serde_json::from_str::<Value>(&first).expect("json")["model"],
        "m1"
    );

    let body = r#"{"model":"m2"}"#;
    write!(
        conn,
        "POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .expect("send 2");
    let (status, _, second) = read_raw_response(&mut reader);
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert_eq!(
        serde_json::from_str::<Value>(&second).expect("json")["model"],
        "m2"
    );

    write!(
        conn,
        "HEAD / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n"
    )
    .expect("send 3");
    let (status, headers, third) = read_raw_response(&mut reader);
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert_eq!(third, "");
    assert!(headers.contains(&("connection".to_owned(), "close".to_owned())));
    let mut rest = Vec::new();
    reader
        .read_to_end(&mut rest)
        .expect("the mock closes the connection");
    assert!(rest.is_empty());

    let requests = api.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[0].body, r#"{"model":"m1","max_tokens":1}"#);
    assert_eq!(requests[0].credential.as_deref(), Some("k1"));
    assert_eq!(requests[1].model.as_deref(), Some("m2"));
    assert_eq!(requests[2].method, "HEAD");
}

#[test]
fn fake_cli_records_argv_env_and_exit_code() {
    let sb = Sandbox::new();
    let path = sb
        .fake_cli("claude")
        .exit(3)
        .stdout("out 'quoted'\n")
        .stderr("err\n")
        .install();
    let args = [
        "-p",
        "hello world",
        "it's \"quoted\"",
        "",
        "$HOME *",
        "line1\nline2",
    ];
    let mut cmd = Command::new(&path);
    cmd.args(args)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("FOO", "bar baz")
        .env("MULTI", "a\nb=c");
    let run = run_command(cmd, crate::support::sandbox::RUN_TIMEOUT);
    assert_eq!(run.code, Some(3), "{run:?}");
    assert_eq!(run.stdout, "out 'quoted'\n");
    assert_eq!(run.stderr, "err\n");

    let mut second = Command::new(&path);
    second.arg("again").env("PATH", "/usr/bin:/bin");
    assert_eq!(
        run_command(second, crate::support::sandbox::RUN_TIMEOUT).code,
        Some(3)
    );
    let mut third = Command::new(&path);
    third.env("PATH", "/usr/bin:/bin");
    run_command(third, crate::support::sandbox::RUN_TIMEOUT);

    let calls = sb.calls("claude");
    assert_eq!(calls.len(), 3);
    assert_eq!(calls[0].argv, args);
    assert_eq!(calls[0].env.get("FOO").map(String::as_str), Some("bar baz"));
    assert_eq!(
        calls[0].env.get("MULTI").map(String::as_str),
        Some("a\nb=c")
    );
    assert!(!calls[0].term_received);
    assert_eq!(calls[1].argv, ["again"]);
    assert!(calls[2].argv.is_empty());
    assert!(sb.calls("codex").is_empty());
}

#[test]
fn fake_cli_runs_in_parallel_keep_distinct_records() {
    let sb = Sandbox::new();
    let path = sb.fake_cli("codex").install();
    let children: Vec<_> = (0..4)
        .map(|i| {
            let mut cmd = Command::new(&path);
            cmd.arg(format!("run{i}")).stdout(Stdio::null());
            spawn(&mut cmd).expect("spawn fake")
        })
        .collect();
    for mut child in children {
        assert!(child.wait().expect("wait").success());
    }
    let mut seen: Vec<String> = sb.calls("codex").into_iter().flat_map(|c| c.argv).collect();
    seen.sort();
    assert_eq!(seen, ["run0", "run1", "run2", "run3"]);
}

#[test]
fn fake_cli_script_body_runs_after_recording() {
    let sb = Sandbox::new();
    let path = sb
        .fake_cli("agy")
        .script("echo \"args: $#\"\nexit 7")
        .install();
    let mut cmd = Command::new(path);
    cmd.args(["a", "b c"]);
    let run = run_command(cmd, crate::support::sandbox::RUN_TIMEOUT);
    assert_eq!(run.code, Some(7));
    assert_eq!(run.stdout, "args: 2\n");
    assert_eq!(sb.calls("agy")[0].argv, ["a", "b c"]);
}

/// Start a fake directly and wait until it has recorded itself (its traps are set by then).
fn start_and_wait_for_record(
    sb: &Sandbox,
    name: &str,
    path: &std::path::Path,
) -> std::process::Child {
    let mut cmd = Command::new(path);
    cmd.stdout(Stdio::null()).stderr(Stdio::null());
    let child = spawn(&mut cmd).expect("spawn fake");
    wait::until("the fake recording its run", || !sb.calls(name).is_empty());
    child
}

fn send_signal(pid: u32, signal: &str) {
    let status = Command::new("kill")
        .args(["-s", signal, &pid.to_string()])
        .status()
        .expect("run kill");
    assert!(status.success());
}

#[test]
fn record_term_records_sigterm_and_exits_143() {
    use std::os::unix::process::ExitStatusExt;
    let sb = Sandbox::new();
    let path = sb
        .fake_cli("gemini")
        .record_term()
        .sleep_ms(30_000)
        .install();
    let mut child = start_and_wait_for_record(&sb, "gemini", &path);
    send_signal(child.id(), "TERM");
    let status = child.wait().expect("wait");
    // Not the end of its 30 s sleep: that would be exit 0.
    assert_eq!(status.code(), Some(143), "{status:?}");
    assert_eq!(status.signal(), None);
    let calls = sb.calls("gemini");
    assert!(calls[0].term_received);
    assert_eq!(calls[0].signal.as_deref(), Some("TERM"));
}

#[test]
fn a_fake_without_record_term_dies_by_the_signal() {
    use std::os::unix::process::ExitStatusExt;
    let sb = Sandbox::new();
    let path = sb.fake_cli("claude").sleep_ms(30_000).install();
    let mut child = start_and_wait_for_record(&sb, "claude", &path);
    send_signal(child.id(), "TERM");
    let status = child.wait().expect("wait");
    assert_eq!(status.signal(), Some(15), "{status:?}");
    assert!(!sb.calls("claude")[0].term_received);
}

#[test]
fn run_command_kills_what_outlives_its_timeout() {
    let sb = Sandbox::new();
    let path = sb
        .fake_cli("claude")
        .stdout("started\n")
        .sleep_ms(30_000)
        .install();
    let run = run_command(Command::new(path), Duration::from_secs(1));
    // Killed, not ended by its 30 s sleep.
    assert!(run.timed_out);
    assert_eq!(run.signal, Some(9));
    assert_eq!(run.stdout, "started\n");
}

#[test]
fn sandbox_command_has_a_clean_private_environment() {
    let sb = Sandbox::new();
    sb.env("AGENT_PROXY_URL", "http://127.0.0.1:9");
    sb.env("AGENT_PROXY_KEY", "first");
    sb.env("AGENT_PROXY_KEY", "second");
    let cmd = sb.command(&["-p", "hi"]);
    assert!(cmd.get_program().to_string_lossy().ends_with("agent"));
    let args: Vec<_> = cmd.get_args().collect();
    assert_eq!(args, ["-p", "hi"]);
    assert_eq!(cmd.get_current_dir(), Some(sb.home()));
    let env: std::collections::BTreeMap<String, String> = cmd
        .get_envs()
        .filter_map(|(k, v)| Some((k.to_str()?.to_owned(), v?.to_str()?.to_owned())))
        .collect();
    let path = |p: &std::path::Path| p.to_string_lossy().into_owned();
    assert_eq!(env["HOME"], path(sb.home()));
    assert_eq!(env["PATH"], format!("{}:/usr/bin:/bin", path(sb.bin_dir())));
    assert_eq!(env["TMPDIR"], path(sb.tmp_dir()));
    assert_eq!(env["XDG_CONFIG_HOME"], path(&sb.home().join(".config")));
    assert_eq!(env["XDG_STATE_HOME"], path(&sb.home().join(".local/state")));
    assert_eq!(env["AGENT_STATE_DIR"], path(sb.state_dir()));
    assert_eq!(env["AGENT_PROXY_URL"], "http://127.0.0.1:9");
    assert_eq!(env["AGENT_PROXY_KEY"], "second");

    let work = sb.set_cwd("project");
    assert_eq!(sb.command(&[]).get_current_dir(), Some(work.as_path()));
}

#[test]
fn sandbox_files_land_where_agent_looks() {
    let sb = Sandbox::new();
    sb.write_config("fastfail_seconds = 1\n");
    assert_eq!(
        sb.config_path(),
        sb.home().join(".config/agent/config.toml")
    );
    assert_eq!(
        std::fs::read_to_string(sb.config_path()).expect("config"),
        "fastfail_seconds = 1\n"
    );
    let settings = sb.write_file(".claude/settings.json", r#"{"model":"opus"}"#);
    assert_eq!(settings, sb.home().join(".claude/settings.json"));

    std::fs::write(sb.state_dir().join("health.json"), "{}").expect("write");
    std::fs::create_dir_all(sb.state_dir().join("locks")).expect("mkdir");
    std::fs::write(sb.state_dir().join("locks/a.lock"), "").expect("write");
    let files = sb.state_files();
    let names: Vec<String> = files
        .iter()
        .map(|(p, _)| p.to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["health.json", "locks/a.lock"]);
    assert_eq!(files[0].1, "{}");
}

#[test]
fn the_oauth_usage_route_answers_like_the_real_endpoint() {
    let api = MockApi::start();
    let get = |headers: &[(&str, &str)]| {
        let mut request =
            client(Duration::from_secs(5)).get(format!("{}/api/oauth/usage", api.url()));
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let mut response = request.call().expect("request to the mock");
        Got {
            status: response.status().as_u16(),
            headers: response.headers().clone(),
            body: response.body_mut().read_to_string().expect("body"),
        }
    };
    let token = "Bearer sk-ant-oat01-selftest";
    let beta = ("anthropic-beta", "oauth-2025-04-20");
    // No bearer, a key instead of a login token, or no beta header: 401, whatever the rules.
    api.on(Rule::path_contains("/api/oauth/usage").reply(Reply::status(200).body("{}")));
    assert_eq!(get(&[beta]).status, 401);
    assert_eq!(
        get(&[("authorization", "Bearer sk-ant-api03-x"), beta]).status,
        401
    );
    assert_eq!(get(&[("authorization", token)]).status, 401);
    api.clear_rules();
    let got = get(&[("authorization", token), beta]);
    assert_eq!(got.status, 200);
    let body = got.json();
    assert!(
        body["five_hour"]["utilization"].as_f64().is_some(),
        "{body}"
    );
    assert!(body["seven_day"]["resets_at"].as_str().is_some(), "{body}");
    api.on(Rule::path_contains("/api/oauth/usage").reply(
        Reply::anthropic_error(429, "rate_limit_error", "Rate limited").header("retry-after", "60"),
    ));
    let got = get(&[("authorization", token), beta]);
    assert_eq!((got.status, got.header("retry-after")), (429, Some("60")));
}
