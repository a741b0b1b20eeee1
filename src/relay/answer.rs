//! Every answer the relay sends is built here: its own errors (one JSON shape both SDKs
//! read), the gate's refusals in each upstream's own terms, what a connection over the caps
//! or being closed reads, `/healthz`, the `claude-cli` upstream's answers in Anthropic's
//! Messages format (JSON or SSE), and the head of a forwarded upstream answer.
//!
//! The handlers decide *what* to answer and say why; how it goes on the wire is this file's.

use std::fmt::Write as _;
use std::sync::Arc;

use axum::body::Body;
use axum::response::Response;
use http::header::HeaderName;
use http::{HeaderMap, HeaderValue, StatusCode};
use serde_json::{Value, json};

use super::gate::Passage;
use super::scrub::{Needle, Scrubber};
use crate::config::relay::Kind;
use crate::error_class::ErrorClass;
use crate::state::ledger::Tokens;

/// The relay's own answer: `{"type":"error","error":{"type":…,"message":…}}` — the
/// Anthropic SDK and the OpenAI SDK both read `error.message` from it.
pub fn error(status: StatusCode, kind: &str, message: &str) -> Response {
    let body = json!({
        "type": "error",
        "error": {"type": kind, "code": kind, "message": crate::redact::redact(message)},
    });
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    // Both SDKs honour this: a wrong token or a spent budget is not worth retrying.
    if status.is_client_error() {
        headers.insert("x-should-retry", HeaderValue::from_static("false"));
    }
    response
}

/// The answer for a call the gate shut, in the upstream's own terms: 429 for a cooldown
/// (`rate_limit_error`, OpenAI's `rate_limit_exceeded`), 503 for an open breaker
/// (`overloaded_error`, `server_overloaded`), and `retry-after` in whole seconds, rounded up.
pub fn shut_by_gate(passage: &Passage, kind: Kind, what: &str, now_ms: u64) -> Response {
    let (until_ms, breaker, class, probing) = match passage {
        Passage::Shut {
            until_ms,
            breaker,
            class,
            probing,
        } => (*until_ms, *breaker, *class, *probing),
        Passage::Open | Passage::HalfOpen => (now_ms, false, ErrorClass::RateLimited, false),
    };
    let seconds = until_ms.saturating_sub(now_ms).div_ceil(1000).max(1);
    let (status, code, why) = match (breaker, kind) {
        (false, Kind::Openai) => (
            StatusCode::TOO_MANY_REQUESTS,
            "rate_limit_exceeded",
            format!("cooling down ({class})"),
        ),
        (false, _) => (
            StatusCode::TOO_MANY_REQUESTS,
            "rate_limit_error",
            format!("cooling down ({class})"),
        ),
        (true, Kind::Openai) => (
            StatusCode::SERVICE_UNAVAILABLE,
            "server_overloaded",
            "failing: its breaker is open".to_string(),
        ),
        (true, _) => (
            StatusCode::SERVICE_UNAVAILABLE,
            "overloaded_error",
            "failing: its breaker is open".to_string(),
        ),
    };
    let message = if probing {
        format!(
            "relay: {what} was {why}; another call is trying it now, ask again in {seconds}s; nothing was sent upstream"
        )
    } else {
        format!(
            "relay: {what} is {why} for {seconds}s more, as its last answers said; nothing was sent upstream"
        )
    };
    let mut response = error(status, code, &message);
    let headers = response.headers_mut();
    // As the upstream's own answer would: worth retrying after the wait.
    headers.remove("x-should-retry");
    if let Ok(value) = HeaderValue::from_str(&seconds.to_string()) {
        headers.insert(http::header::RETRY_AFTER, value);
    }
    response
}

/// What a connection over the caps reads before it is closed: written raw to the socket,
/// since no HTTP connection is served for it.
pub fn over_cap() -> Vec<u8> {
    let body =
        json!({"type": "error", "error": {"type": "overloaded_error", "code": "overloaded_error",
        "message": "relay: every connection it can hold is busy with a call; try again shortly"}})
        .to_string();
    format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 1\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// A request arriving on a connection just told to close (idle, or making room).
pub fn closing() -> Response {
    let mut response = error(
        StatusCode::SERVICE_UNAVAILABLE,
        "overloaded_error",
        "relay: this connection was being closed to make room; send the request again",
    );
    response.headers_mut().insert(
        http::header::CONNECTION,
        http::HeaderValue::from_static("close"),
    );
    response
}

/// A request body over `relay.body_limit_mb` (`limit` bytes).
pub fn too_large(limit: u64) -> Response {
    error(
        StatusCode::PAYLOAD_TOO_LARGE,
        "request_too_large",
        &format!(
            "relay: the request body is larger than {} MB (relay.body_limit_mb)",
            limit / (1024 * 1024)
        ),
    )
}

/// One upstream as `/healthz` shows it to a caller with the token: its kind, and whether
/// what it needs is there — its key, or (`claude-cli`) its CLI — never the key itself.
pub struct Readiness {
    pub kind: Kind,
    pub ready: bool,
}

/// `GET /healthz`: `{"ok":true}`, and with the token each upstream's [`Readiness`].
pub fn health(upstreams: Option<Vec<(String, Readiness)>>) -> Response {
    let mut body = json!({"ok": true});
    if let Some(upstreams) = upstreams {
        let mut map = serde_json::Map::new();
        for (name, Readiness { kind, ready }) in upstreams {
            let entry = match kind {
                Kind::ClaudeCli => json!({"kind": kind.as_str(), "command": ready}),
                _ => json!({"kind": kind.as_str(), "key": ready}),
            };
            map.insert(name, entry);
        }
        body["upstreams"] = Value::Object(map);
    }
    let mut response = Response::new(Body::from(body.to_string()));
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    response
}

/// An answer the relay writes itself (the `claude-cli` upstream's): its text, usage and
/// why it stopped, put in Anthropic's Messages format by [`message_json`] or
/// [`message_events`].
pub struct Message {
    pub text: String,
    pub tokens: Option<Tokens>,
    pub stop_reason: String,
}

fn usage_json(tokens: Option<Tokens>) -> Value {
    let t = tokens.unwrap_or_default();
    json!({
        "input_tokens": t.input,
        "cache_creation_input_tokens": t.cache_write,
        "cache_read_input_tokens": t.cache_read,
        "output_tokens": t.output + t.reasoning,
    })
}

fn message_body(id: &str, model: &str, message: &Message) -> Value {
    json!({
        "id": id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": message.text}],
        "stop_reason": message.stop_reason,
        "stop_sequence": null,
        "usage": usage_json(message.tokens),
    })
}

/// The whole answer as one Messages JSON body.
pub fn message_json(id: &str, model: &str, message: &Message) -> Response {
    let mut response = Response::new(Body::from(message_body(id, model, message).to_string()));
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// The whole answer as the event sequence a streaming Messages call produces.
pub fn message_events(id: &str, model: &str, message: &Message) -> Response {
    let mut start = message_body(id, model, message);
    start["content"] = json!([]);
    start["stop_reason"] = Value::Null;
    start["usage"]["output_tokens"] = json!(0);
    let events = [
        (
            "message_start",
            json!({"type": "message_start", "message": start}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": message.text}}),
        ),
        (
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        ),
        (
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": message.stop_reason, "stop_sequence": null}, "usage": usage_json(message.tokens)}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ];
    let mut text = String::new();
    for (name, data) in events {
        let _ = write!(text, "event: {name}\ndata: {data}\n\n");
    }
    let mut response = Response::new(Body::from(text));
    let headers = response.headers_mut();
    headers.insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream; charset=utf-8"),
    );
    headers.insert(
        http::header::CACHE_CONTROL,
        HeaderValue::from_static("no-cache"),
    );
    response
}

/// Hop-by-hop headers: never forwarded either way — not in a forwarded answer's headers
/// ([`forwarded`]) nor in the request sent upstream (`proxy`).
pub fn hop_by_hop(name: &HeaderName) -> bool {
    matches!(
        name.as_str(),
        "connection"
            | "keep-alive"
            | "proxy-connection"
            | "proxy-authenticate"
            | "proxy-authorization"
            | "te"
            | "trailer"
            | "transfer-encoding"
            | "upgrade"
    )
}

/// An upstream's answer as the client gets it: the upstream's status, its headers minus the
/// hop-by-hop ones and with every `injected` key masked, and `body` — the upstream's own,
/// streamed through (and scrubbed) by the caller.
pub fn forwarded(
    status: StatusCode,
    upstream_headers: &HeaderMap,
    injected: &Arc<[Needle]>,
    body: Body,
) -> Response {
    let mut response = Response::new(body);
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.reserve(upstream_headers.len());
    for (name, value) in upstream_headers {
        if !hop_by_hop(name) {
            headers.append(name.clone(), value.clone());
        }
    }
    Scrubber::new(Arc::clone(injected)).headers(response.headers_mut());
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_is_the_seconds_left_rounded_up() {
        let shut = Passage::Shut {
            until_ms: 2_001,
            breaker: false,
            class: ErrorClass::RateLimited,
            probing: false,
        };
        let answer = shut_by_gate(&shut, Kind::Anthropic, "m via relay a", 0);
        assert_eq!(answer.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(answer.headers()["retry-after"], "3");
        let answer = shut_by_gate(&shut, Kind::Anthropic, "m via relay a", 2_000);
        assert_eq!(answer.headers()["retry-after"], "1");
    }
}
