//! Forwarding to an `anthropic` or `openai` upstream: `/{upstream}/rest` goes to
//! `{base}/rest` with the client's auth and `X-Agent-*` headers stripped and the upstream's
//! key injected in that API's own header. The answer streams back frame by frame as it
//! arrives — never buffered to its end — while [`UsageReader`] reads its usage on the side.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use http::header;
use http::request::Parts;
use http::{HeaderMap, HeaderValue, Method, StatusCode};
use http_body::{Frame, SizeHint};
use http_body_util::Full;
use hyper::body::Incoming;
use serde::Deserialize;

use super::answer;
use super::call::{Call, CallMeta, End, record_for, reserve, turned_away};
use super::caller::Caller;
use super::keys::Key;
use super::scrub::Scrubber;
use super::shared::Relay;
use super::target::Target;
use super::usage::UsageReader;
use crate::backend::endpoint::{Api, AuthScheme, default_scheme};
use crate::config::relay::{Kind, Upstream};
use crate::state::health::now_ms;
use crate::state::ledger::COOLING;

/// How much of an error answer is kept to classify it.
const ERROR_BODY_KEPT: usize = 64 * 1024;

/// The few fields of a request body the relay reads. Everything else is skipped unparsed.
#[derive(Debug, Default, Deserialize)]
pub struct Peek {
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub stream: Option<bool>,
    #[serde(default, deserialize_with = "present")]
    stream_options: bool,
}

fn present<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
    serde::de::IgnoredAny::deserialize(deserializer).map(|_| true)
}

impl Peek {
    pub fn of(body: &[u8]) -> Peek {
        serde_json::from_slice(body).unwrap_or_default()
    }
}

/// Forwards one request to an HTTP upstream, at the checked target's path under the
/// upstream's base.
pub async fn forward(
    relay: Arc<Relay>,
    upstream: &Upstream,
    caller: &Caller,
    parts: Parts,
    target: &Target,
    body: Bytes,
) -> Response {
    let started = Instant::now();
    let meta = CallMeta::from_headers(&parts.headers);
    // An LLM call is a POST; a warm-up `HEAD` or a model list is forwarded unmetered.
    let metered = parts.method == Method::POST;
    let peek = if metered {
        Peek::of(&body)
    } else {
        Peek::default()
    };
    let model = match super::call::checked_model(peek.model.as_deref()) {
        Ok(model) => model,
        Err(refusal) => return *refusal,
    };
    let path = target.path.as_str();
    // Built from the base's parts before the key is read: a target that cannot make an
    // upstream URL uses nothing.
    let Some(uri) = relay.upstream_uri(upstream, target) else {
        return answer::error(
            StatusCode::BAD_REQUEST,
            "invalid_request_error",
            "relay: the request path does not make a valid upstream URL; nothing was sent upstream",
        );
    };
    let body = match upstream.kind {
        Kind::Openai if wants_usage_added(path, &peek) => add_include_usage(&body).unwrap_or(body),
        _ => body,
    };

    let key = match relay.keys.cached(&upstream.name) {
        Some(key) => key,
        None => {
            let relay_for_key = Arc::clone(&relay);
            let wanted = upstream.clone();
            match tokio::task::spawn_blocking(move || relay_for_key.keys.get(&wanted)).await {
                Ok(Ok(key)) => key,
                Ok(Err(why)) => {
                    return answer::error(
                        StatusCode::SERVICE_UNAVAILABLE,
                        "relay_credentials_missing",
                        &format!("relay: {why}"),
                    );
                }
                Err(_) => {
                    return answer::error(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        "api_error",
                        "relay: reading the upstream key failed",
                    );
                }
            }
        }
    };

    if let Some(refusal) = super::subscriptions::refusal(&relay, caller, upstream, Some(&key)).await
    {
        return refusal;
    }

    let call = if metered {
        let targets = relay.targets(upstream, &key, path, model.as_deref());
        let what = format!(
            "{} via relay {}",
            model.as_deref().unwrap_or("the model"),
            upstream.name
        );
        let mut record = record_for(&meta, caller, upstream, model);
        // The upstream as the relay calls it is the target its own answers speak for; the
        // gate is asked before the budget, so a call turned away spends nothing.
        let claim = match targets.first() {
            Some(target) => match relay.gate.admit(target).await {
                Ok(claim) => claim,
                Err(shut) => {
                    let refusal = answer::shut_by_gate(&shut, upstream.kind, &what, now_ms());
                    record.duration_s = super::call::round_ms(started.elapsed().as_secs_f64());
                    turned_away(&relay, record, refusal.status(), COOLING);
                    return refusal;
                }
            },
            None => None,
        };
        match reserve(&relay, caller, &record).await {
            Ok(reservation) => {
                let mut call = Call::new(
                    Arc::clone(&relay),
                    reservation,
                    record,
                    targets,
                    what,
                    started,
                );
                call.claim = claim;
                Some(call)
            }
            Err(response) => {
                if let Some(claim) = claim {
                    let gate_of = Arc::clone(&relay);
                    let _ = tokio::task::spawn_blocking(move || gate_of.gate.release(&claim)).await;
                }
                return response;
            }
        }
    } else {
        None
    };

    let mut request = hyper::Request::new(Full::new(body.clone()));
    *request.method_mut() = parts.method.clone();
    *request.uri_mut() = uri;
    *request.headers_mut() = upstream_headers(&parts.headers, upstream.kind, &key);

    let sent = relay.client.request(request);
    // An upstream that fails or stays silent: one ledger line and one error answer.
    let failure = match tokio::time::timeout(relay.config.upstream_timeout, sent).await {
        Ok(Ok(upstream_answer)) => Ok(upstream_answer),
        Ok(Err(err)) => {
            let why = crate::redact::redact(&error_chain(&err));
            let message = format!("relay: upstream \"{}\" unreachable: {why}", upstream.name);
            Err((
                StatusCode::BAD_GATEWAY,
                "relay_upstream_unreachable",
                why,
                message,
            ))
        }
        Err(_) => {
            let why = format!(
                "no answer within {}s",
                relay.config.upstream_timeout.as_secs()
            );
            let message = format!("relay: upstream \"{}\": {why}", upstream.name);
            Err((
                StatusCode::GATEWAY_TIMEOUT,
                "relay_upstream_timeout",
                why,
                message,
            ))
        }
    };
    let upstream_answer = match failure {
        Ok(upstream_answer) => upstream_answer,
        Err((status, code, why, message)) => {
            if let Some(call) = call {
                call.finish(
                    &End::Unreachable { status: None, why },
                    None,
                    None,
                    (body.len(), 0),
                );
            }
            return answer::error(status, code, &message);
        }
    };
    let ttfb = started.elapsed();
    let (head, incoming) = upstream_answer.into_parts();
    let status = head.status;
    if status == StatusCode::UNAUTHORIZED {
        // A rotated or revoked key: read it afresh on the next call.
        relay.keys.drop_key(&upstream.name);
    }

    let injected = relay.keys.injected();
    let observed = match call {
        Some(mut call) => {
            let content_type = head
                .headers
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("");
            let sse = content_type
                .to_ascii_lowercase()
                .starts_with("text/event-stream");
            // An error's start is kept to classify it; a good JSON answer whole, for its
            // usage; a good stream not at all (usage is read line by line).
            let kept = match (status.is_success(), sse) {
                (false, _) => ERROR_BODY_KEPT,
                (true, true) => 0,
                (true, false) => usize::MAX,
            };
            let reader = UsageReader::new(content_type, kept);
            call.record.request_id = head
                .headers
                .get("request-id")
                .or_else(|| head.headers.get("x-request-id"))
                .and_then(|v| v.to_str().ok())
                .map(str::to_string);
            let kept_headers = if status.is_success() {
                Vec::new()
            } else {
                head.headers
                    .iter()
                    .filter_map(|(k, v)| {
                        Some((k.as_str().to_string(), v.to_str().ok()?.to_string()))
                    })
                    .collect()
            };
            Some(Watch {
                call,
                reader,
                status: status.as_u16(),
                headers: kept_headers,
                ttfb,
                request_bytes: body.len(),
            })
        }
        None => None,
    };
    // A body known to be empty has nothing to scrub.
    let scrubber =
        (!http_body::Body::is_end_stream(&incoming)).then(|| Scrubber::new(Arc::clone(&injected)));
    let streamed = Body::new(Observed {
        inner: incoming,
        idle: relay.config.upstream_timeout,
        last: Instant::now(),
        timer: None,
        watch: observed,
        scrubber,
        waiting: None,
        ended: false,
    });
    answer::forwarded(status, &head.headers, &injected, streamed)
}

/// An OpenAI chat stream without `stream_options` gets `{"include_usage": true}`, so its
/// last chunk carries the usage.
fn wants_usage_added(path: &str, peek: &Peek) -> bool {
    peek.stream == Some(true)
        && !peek.stream_options
        && (path.ends_with("/chat/completions") || path.ends_with("/completions"))
}

/// Inserts `"stream_options":{"include_usage":true}` as the object's first member, leaving
/// every other byte as the client sent it. `None` when the body is not a JSON object.
fn add_include_usage(body: &[u8]) -> Option<Bytes> {
    let start = body.iter().position(|b| !b.is_ascii_whitespace())?;
    if body[start] != b'{' {
        return None;
    }
    let rest = &body[start + 1..];
    let empty = rest
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|b| *b == b'}');
    let mut out = Vec::with_capacity(body.len() + 48);
    out.extend_from_slice(&body[..=start]);
    out.extend_from_slice(br#""stream_options":{"include_usage":true}"#);
    if !empty {
        out.push(b',');
    }
    out.extend_from_slice(rest);
    Some(Bytes::from(out))
}

/// The client's headers minus its auth, `X-Agent-*`, hop-by-hop headers and framing, plus
/// the upstream key in that API's own header.
fn upstream_headers(from: &HeaderMap, kind: Kind, key: &Key) -> HeaderMap {
    let mut headers = HeaderMap::with_capacity(from.len() + 2);
    for (name, value) in from {
        let text = name.as_str();
        if answer::hop_by_hop(name)
            || text.starts_with("x-agent-")
            || matches!(
                text,
                "host" | "content-length" | "authorization" | "x-api-key" | "accept-encoding"
            )
        {
            continue;
        }
        headers.append(name.clone(), value.clone());
    }
    let secret = |prefix: &str| {
        let mut value = HeaderValue::from_str(&format!("{prefix}{}", key.value))
            .unwrap_or_else(|_| HeaderValue::from_static(""));
        value.set_sensitive(true);
        value
    };
    // The same rule a probe and a launch follow (`backend::endpoint`).
    let api = match kind {
        Kind::Anthropic => Api::Anthropic,
        Kind::Openai | Kind::ClaudeCli => Api::OpenAi(crate::config::OpenAiApi::Chat),
    };
    match default_scheme(api, &key.value) {
        AuthScheme::OAuth => {
            headers.insert(header::AUTHORIZATION, secret("Bearer "));
            let beta = match headers.get("anthropic-beta").and_then(|v| v.to_str().ok()) {
                Some(list) if list.contains("oauth-2025-04-20") => list.to_string(),
                Some(list) => format!("{list},oauth-2025-04-20"),
                None => "oauth-2025-04-20".to_string(),
            };
            if let Ok(value) = HeaderValue::from_str(&beta) {
                headers.insert("anthropic-beta", value);
            }
        }
        AuthScheme::XApiKey => {
            headers.insert("x-api-key", secret(""));
        }
        AuthScheme::Bearer => {
            headers.insert(header::AUTHORIZATION, secret("Bearer "));
        }
        AuthScheme::GoogApiKey => {
            headers.insert("x-goog-api-key", secret(""));
        }
    }
    headers
}

fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// A metered answer in flight.
struct Watch {
    call: Call,
    reader: UsageReader,
    status: u16,
    headers: Vec<(String, String)>,
    ttfb: Duration,
    request_bytes: usize,
}

impl Watch {
    fn end(mut self, how: Ending) {
        let (tokens, message_id) = self.reader.finish();
        self.call.record.message_id = message_id.filter(|id| !id.is_empty());
        let stream_error = self.reader.stream_error().cloned();
        let end = match how {
            Ending::Complete => End::Answered {
                status: self.status,
                headers: &self.headers,
                body: self.reader.body(),
                stream_error: stream_error.as_ref(),
            },
            Ending::Broken(why) => End::Unreachable {
                status: Some(self.status),
                why,
            },
            Ending::ClientGone => End::ClientGone {
                status: Some(self.status),
            },
            Ending::Stopped => End::Stopped {
                status: Some(self.status),
            },
        };
        let received = self.reader.bytes;
        self.call.finish(
            &end,
            Some(self.ttfb),
            tokens,
            (self.request_bytes, received),
        );
    }
}

enum Ending {
    Complete,
    Broken(String),
    ClientGone,
    /// Cut by the relay's stop.
    Stopped,
}

/// The upstream's body on its way to the client: each frame is passed on as it arrives,
/// read for usage on the way and scrubbed of the keys; silence longer than `idle` ends it.
struct Observed {
    inner: Incoming,
    idle: Duration,
    last: Instant,
    timer: Option<Pin<Box<tokio::time::Sleep>>>,
    watch: Option<Watch>,
    /// `None` for a body known to be empty: nothing to scrub.
    scrubber: Option<Scrubber>,
    /// A trailers frame that waits for the held-back bytes to go first.
    waiting: Option<Frame<Bytes>>,
    /// The upstream's body has ended (what was held back may still be going out).
    ended: bool,
}

impl http_body::Body for Observed {
    type Data = Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = self.get_mut();
        if let Some(frame) = this.waiting.take() {
            return Poll::Ready(Some(Ok(frame)));
        }
        if this.ended {
            return Poll::Ready(None);
        }
        loop {
            match Pin::new(&mut this.inner).poll_frame(cx) {
                Poll::Ready(Some(Ok(frame))) => {
                    this.last = Instant::now();
                    let frame = match frame.into_data() {
                        Ok(data) => {
                            if let Some(watch) = this.watch.as_mut() {
                                watch.reader.feed(&data);
                            }
                            let Some(scrubber) = this.scrubber.as_mut() else {
                                return Poll::Ready(Some(Ok(Frame::data(data))));
                            };
                            let data = scrubber.chunk(data);
                            if data.is_empty() {
                                // All of it could start a key: wait for the next chunk.
                                continue;
                            }
                            Frame::data(data)
                        }
                        Err(frame) => {
                            let held = this.scrubber.as_mut().map(Scrubber::finish);
                            match held.filter(|h| !h.is_empty()) {
                                Some(held) => {
                                    this.waiting = Some(frame);
                                    Frame::data(held)
                                }
                                None => frame,
                            }
                        }
                    };
                    return Poll::Ready(Some(Ok(frame)));
                }
                Poll::Ready(Some(Err(err))) => {
                    let why = format!("the answer broke off: {}", error_chain(&err));
                    if let Some(watch) = this.watch.take() {
                        watch.end(Ending::Broken(why));
                    }
                    return Poll::Ready(Some(Err(Box::new(err))));
                }
                Poll::Ready(None) => {
                    this.ended = true;
                    if let Some(watch) = this.watch.take() {
                        watch.end(Ending::Complete);
                    }
                    let held = this.scrubber.as_mut().map(Scrubber::finish);
                    return match held.filter(|h| !h.is_empty()) {
                        Some(held) => Poll::Ready(Some(Ok(Frame::data(held)))),
                        None => Poll::Ready(None),
                    };
                }
                Poll::Pending => {
                    // The timer is reset lazily: only when it fires is `last` looked at.
                    loop {
                        let deadline = tokio::time::Instant::from_std(this.last + this.idle);
                        let timer = this
                            .timer
                            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
                        if timer.deadline() < deadline {
                            timer.as_mut().reset(deadline);
                        }
                        if timer.as_mut().poll(cx).is_pending() {
                            return Poll::Pending;
                        }
                        if Instant::now() >= this.last + this.idle {
                            break;
                        }
                    }
                    let why = format!("the answer went silent for {}s", this.idle.as_secs());
                    if let Some(watch) = this.watch.take() {
                        watch.end(Ending::Broken(why.clone()));
                    }
                    return Poll::Ready(Some(Err(why.into())));
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.waiting.is_none()
            && (self.ended
                || (self.inner.is_end_stream()
                    && self.scrubber.as_ref().is_none_or(|s| s.held() == 0)))
    }

    fn size_hint(&self) -> SizeHint {
        // Masking keeps lengths; what is held back is still to come.
        let held = self.scrubber.as_ref().map_or(0, Scrubber::held) as u64;
        let inner = self.inner.size_hint();
        let mut hint = SizeHint::new();
        hint.set_lower(inner.lower() + held);
        if let Some(upper) = inner.upper() {
            hint.set_upper(upper + held);
        }
        hint
    }
}

impl Drop for Observed {
    fn drop(&mut self) {
        if let Some(watch) = self.watch.take() {
            // A body hyper knew was empty is never polled to its end: that is complete.
            let how = if http_body::Body::is_end_stream(&self.inner) {
                Ending::Complete
            } else if watch.call.relay.is_cutting() {
                Ending::Stopped
            } else {
                Ending::ClientGone
            };
            watch.end(how);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn include_usage_is_added_as_the_first_member() {
        assert_eq!(
            add_include_usage(br#" {"model":"m","stream":true}"#).unwrap(),
            Bytes::from_static(
                br#" {"stream_options":{"include_usage":true},"model":"m","stream":true}"#
            )
        );
        assert_eq!(
            add_include_usage(b"{ }").unwrap(),
            Bytes::from_static(br#"{"stream_options":{"include_usage":true} }"#)
        );
        assert!(add_include_usage(b"[1]").is_none());
    }

    #[test]
    fn only_chat_streams_without_stream_options_get_it() {
        let peek = Peek::of(br#"{"model":"m","stream":true}"#);
        assert!(wants_usage_added("/v1/chat/completions", &peek));
        assert!(!wants_usage_added("/v1/responses", &peek));
        let peek = Peek::of(br#"{"model":"m","stream":true,"stream_options":null}"#);
        assert!(!wants_usage_added("/v1/chat/completions", &peek));
        let peek = Peek::of(br#"{"model":"m"}"#);
        assert!(!wants_usage_added("/v1/chat/completions", &peek));
    }

    #[test]
    fn client_auth_and_agent_headers_never_go_upstream() {
        let mut from = HeaderMap::new();
        from.insert("x-api-key", HeaderValue::from_static("relay-token"));
        from.insert(
            "authorization",
            HeaderValue::from_static("Bearer relay-token"),
        );
        from.insert("x-agent-run", HeaderValue::from_static("r1"));
        from.insert("anthropic-version", HeaderValue::from_static("2023-06-01"));
        from.insert("connection", HeaderValue::from_static("keep-alive"));
        let key = Key {
            value: "sk-upstream".into(),
            source: "env:X".into(),
        };
        let headers = upstream_headers(&from, Kind::Anthropic, &key);
        assert_eq!(headers.get("x-api-key").unwrap(), "sk-upstream");
        assert!(headers.get("authorization").is_none());
        assert!(headers.get("x-agent-run").is_none());
        assert!(headers.get("connection").is_none());
        assert_eq!(headers.get("anthropic-version").unwrap(), "2023-06-01");

        let oauth = Key {
            value: "sk-ant-oat01-abc".into(),
            source: "env:X".into(),
        };
        let headers = upstream_headers(&from, Kind::Anthropic, &oauth);
        assert_eq!(
            headers.get("authorization").unwrap(),
            "Bearer sk-ant-oat01-abc"
        );
        assert_eq!(headers.get("anthropic-beta").unwrap(), "oauth-2025-04-20");
        assert!(headers.get("x-api-key").is_none());

        let headers = upstream_headers(&from, Kind::Openai, &key);
        assert_eq!(headers.get("authorization").unwrap(), "Bearer sk-upstream");
        assert!(headers.get("x-api-key").is_none());
    }
}
