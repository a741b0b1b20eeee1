//! One relayed call from the books' side: who asked (the `X-Agent-*` headers), where it
//! went, its reservation against the budget (or its turning away), and — once it is over —
//! its ledger line and what it says about the upstream's health. Both kinds of upstream
//! (`proxy`, `claude_cli`) open and close their calls here.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use axum::response::Response;
use http::{HeaderMap, StatusCode};

use super::accounting::Finished;
use super::answer;
use super::caller::Caller;
use super::shared::Relay;
use crate::config::relay::Upstream;
use crate::error_class::ErrorClass;
use crate::probe::{Outcome, QUOTA_WORDS, clears_at};
use crate::state::budget::{Refusal, Reservation};
use crate::state::ledger::{CallRecord, Tokens};

/// Longest value taken from an `X-Agent-*` header, in bytes.
const META_LIMIT: usize = 200;
/// Longest `model` a client may name, in bytes: real model names are under 100, and the
/// model names health targets and ledger lines, which every launch reads — an 8 MB one
/// once grew `health.json` and `events.jsonl` to 100 MB each.
pub const MODEL_LIMIT: usize = 200;

/// A client's string as shared state may hold it: control characters (line breaks, tabs,
/// escapes) dropped, cut to `limit` bytes on a character boundary, secrets redacted.
fn clean(text: &str, limit: usize) -> String {
    let mut out = String::with_capacity(text.len().min(limit));
    for c in text.chars().filter(|c| !c.is_control()) {
        if out.len() + c.len_utf8() > limit {
            break;
        }
        out.push(c);
    }
    crate::redact::redact(&out)
}

/// The `model` a client named, as the books take it: over [`MODEL_LIMIT`] bytes it is
/// refused (the relay's 400 answer, to give before anything is used), control characters
/// are dropped.
pub fn checked_model(model: Option<&str>) -> Result<Option<String>, Box<Response>> {
    match model {
        Some(model) if model.len() > MODEL_LIMIT => Err(Box::new(answer::error(
            StatusCode::BAD_REQUEST,
            "invalid_request_error",
            &format!(
                "relay: model: {} bytes is longer than the {MODEL_LIMIT} a model name may be; nothing was sent upstream",
                model.len()
            ),
        ))),
        Some(model) => Ok(Some(clean(model, MODEL_LIMIT)).filter(|m| !m.is_empty())),
        None => Ok(None),
    }
}

/// What the client said about the call, from its headers.
#[derive(Debug, Clone, Default)]
pub struct CallMeta {
    pub run: Option<String>,
    pub node: Option<String>,
    pub role: Option<String>,
    pub attempt: Option<u32>,
    pub session: Option<String>,
}

impl CallMeta {
    pub fn from_headers(headers: &HeaderMap) -> CallMeta {
        let text = |name: &str| {
            headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::trim)
                .map(|v| clean(v, META_LIMIT))
                .filter(|v| !v.is_empty())
        };
        CallMeta {
            run: text("x-agent-run"),
            node: text("x-agent-node"),
            role: text("x-agent-role"),
            attempt: text("x-agent-attempt").and_then(|v| v.parse().ok()),
            // Claude Code's and Codex's own session ids tie the call to their transcripts.
            session: text("x-claude-code-session-id")
                .or_else(|| text("session-id"))
                .or_else(|| text("session_id")),
        }
    }
}

/// Reserves one call, answering 429 `budget_exhausted` (or 503) when the budget says no;
/// a refused call still gets its ledger line (`record`, marked refused).
pub async fn reserve(
    relay: &Arc<Relay>,
    caller: &Caller,
    record: &CallRecord,
) -> Result<Reservation, Response> {
    let caps = caller.caps();
    // Most calls take a reservation already saved in a block, without blocking; a named
    // client with caps of its own takes each of its own.
    let from_block = caps
        .is_none()
        .then(|| relay.books.reserve_from_block())
        .flatten();
    let taken = match from_block {
        Some(reservation) => Ok(Ok(reservation)),
        None => {
            let books = Arc::clone(relay);
            tokio::task::spawn_blocking(move || books.books.reserve(caps.as_ref())).await
        }
    };
    // A refusal that sends nothing gets its ledger line, marked refused.
    let turned = |status: StatusCode, code: &str, refusal: &Refusal| {
        turned_away(relay, record.clone(), status, code);
        answer::error(
            status,
            code,
            &format!("relay: {refusal}; nothing was sent upstream"),
        )
    };
    match taken {
        Ok(Ok(reservation)) => Ok(reservation),
        Ok(Err(refusal @ (Refusal::Exhausted { .. } | Refusal::ClientExhausted { .. }))) => Err(
            turned(StatusCode::TOO_MANY_REQUESTS, "budget_exhausted", &refusal),
        ),
        Ok(Err(refusal @ Refusal::StoreUnavailable(_))) => Err(turned(
            StatusCode::SERVICE_UNAVAILABLE,
            "store_unavailable",
            &refusal,
        )),
        Ok(Err(refusal)) => Err(answer::error(
            StatusCode::SERVICE_UNAVAILABLE,
            "budget_unavailable",
            &format!("relay: {refusal}"),
        )),
        Err(_) => Err(answer::error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "api_error",
            "relay: the budget reservation failed",
        )),
    }
}

/// The ledger line of a call the relay turned away before anything went upstream (its
/// budget, the store, a cooling upstream): marked `refused`, which keeps it out of the
/// budget's and the usage report's call counts, with no tokens.
pub fn turned_away(relay: &Relay, mut record: CallRecord, status: StatusCode, error_kind: &str) {
    let now = jiff::Timestamp::now();
    record.time = now.to_string();
    record.day = crate::state::budget::day_of(now);
    record.status = Some(status.as_u16());
    record.error_kind = error_kind.to_string();
    record.refused = true;
    relay.books.finish(Finished {
        record,
        client: None,
        epoch: 0,
        health: None,
        release: None,
    });
}

/// The ledger line's fixed columns for a relayed call.
pub fn record_for(
    meta: &CallMeta,
    caller: &Caller,
    upstream: &Upstream,
    model: Option<String>,
) -> CallRecord {
    CallRecord {
        client: caller.name().map(str::to_string),
        run: meta
            .run
            .clone()
            .unwrap_or_else(|| crate::state::ledger::run_id().to_string()),
        node: meta.node.clone(),
        attempt: meta.attempt,
        session: meta.session.clone(),
        role: meta.role.clone().unwrap_or_else(|| "relay".to_string()),
        backend: Some(format!("relay:{}", upstream.kind.as_str())),
        upstream: upstream.name.clone(),
        model,
        ..CallRecord::default()
    }
}

/// A call that was reserved and sent: everything its ledger line and health need. A call
/// dropped before it was finished — its client left, or the relay's stop cut it — still
/// writes its line: the budget counted it.
pub struct Call {
    pub relay: Arc<Relay>,
    pub reservation: Reservation,
    pub record: CallRecord,
    pub started: Instant,
    /// Health targets the answer speaks for (empty: none).
    pub targets: Vec<String>,
    /// For reasons: `claude-opus-5 via relay anthropic`.
    pub what: String,
    /// The half-open claim this call was sent under, if it is the one probing its target.
    pub claim: Option<super::gate::Claim>,
    /// Its line is handed to the books.
    written: bool,
}

impl Drop for Call {
    fn drop(&mut self) {
        if self.written {
            return;
        }
        let end = if self.relay.is_cutting() {
            End::Stopped { status: None }
        } else {
            End::ClientGone { status: None }
        };
        self.write(&end, None, None, (0, 0));
    }
}

/// How a call ended.
pub enum End<'a> {
    /// The answer arrived whole with this status; `body` is its start (for errors),
    /// `headers` the answer's (for `retry-after`).
    Answered {
        status: u16,
        headers: &'a [(String, String)],
        body: &'a [u8],
        /// An error event inside a 200 stream: its status and JSON.
        stream_error: Option<&'a (u16, String)>,
    },
    /// The upstream could not be reached, or broke off or went silent mid-answer.
    Unreachable { status: Option<u16>, why: String },
    /// Classified by the caller (a `claude-cli` run that failed).
    Failed {
        status: u16,
        class: ErrorClass,
        why: String,
    },
    /// The client went away before the answer was over.
    ClientGone { status: Option<u16> },
    /// The relay's stop cut the call when its grace period was over.
    Stopped { status: Option<u16> },
}

impl Call {
    pub fn finish(
        mut self,
        end: &End,
        ttfb: Option<Duration>,
        tokens: Option<Tokens>,
        estimate: (usize, u64),
    ) {
        self.write(end, ttfb, tokens, estimate);
    }

    pub fn new(
        relay: Arc<Relay>,
        reservation: Reservation,
        record: CallRecord,
        targets: Vec<String>,
        what: String,
        started: Instant,
    ) -> Call {
        Call {
            relay,
            reservation,
            record,
            started,
            targets,
            what,
            claim: None,
            written: false,
        }
    }

    /// Hands the ledger line and health to the books, once.
    fn write(
        &mut self,
        end: &End,
        ttfb: Option<Duration>,
        tokens: Option<Tokens>,
        estimate: (usize, u64),
    ) {
        if std::mem::replace(&mut self.written, true) {
            return;
        }
        let duration = self.started.elapsed();
        let (status, class, reason) = match end {
            End::Answered {
                status,
                body,
                stream_error,
                ..
            } => {
                // Only a 2xx is an answer: a redirect (the relay follows none) or any other
                // status the client gets instead of one is the upstream's failure, classed
                // by its status (a 3xx counts with the upstream's errors).
                if !(200..300).contains(status) {
                    let text = String::from_utf8_lossy(body);
                    let class = crate::probe::classify_status(*status, &text);
                    let reason = format!(
                        "{} unavailable: {}",
                        self.what,
                        describe(Some(*status), &text)
                    );
                    (Some(*status), Some(class), reason)
                } else if let Some((code, json)) = stream_error {
                    let class = crate::probe::classify_status(*code, json);
                    let reason =
                        format!("{} failed mid-stream: {}", self.what, describe(None, json));
                    (Some(*status), Some(class), reason)
                } else {
                    let reason = format!(
                        "{} answered ({} ms)",
                        self.what,
                        ttfb.unwrap_or(duration).as_millis()
                    );
                    (Some(*status), Some(ErrorClass::Ok), reason)
                }
            }
            End::Unreachable { status, why } => (
                *status,
                Some(ErrorClass::Unreachable),
                format!("{} unreachable: {why}", self.what),
            ),
            End::Failed { status, class, why } => (
                Some(*status),
                Some(*class),
                format!("{} failed: {class}{}", self.what, quota_words(why)),
            ),
            End::ClientGone { status } | End::Stopped { status } => (*status, None, String::new()),
        };
        let record = &mut self.record;
        record.time = jiff::Timestamp::now().to_string();
        record.status = status;
        record.error_kind = match (end, class) {
            (_, Some(class)) => class.as_str(),
            (End::Stopped { .. }, None) => "relay_stopped",
            (_, None) => "client_closed",
        }
        .to_string();
        record.ttfb_s = ttfb.map(|d| round_ms(d.as_secs_f64()));
        record.duration_s = round_ms(duration.as_secs_f64());
        record.day.clone_from(&self.reservation.day);
        record.reservation = (!self.reservation.id.is_empty()).then(|| self.reservation.id.clone());
        match tokens {
            Some(tokens) => record.tokens = tokens,
            None if class == Some(ErrorClass::Ok) => {
                // No usage from the provider: about four bytes a token, marked estimated.
                let (sent, received) = estimate;
                record.tokens = Tokens {
                    input: crate::state::meter::estimate_tokens(sent),
                    output: crate::state::meter::estimate_tokens(
                        usize::try_from(received).unwrap_or(usize::MAX),
                    ),
                    ..Tokens::default()
                };
                record.estimated = true;
            }
            None => {}
        }
        let health = match class {
            // The client's own mistake, or its leaving, says nothing about the upstream.
            None | Some(ErrorClass::BadRequest) => None,
            Some(_) if self.targets.is_empty() => None,
            Some(class) => {
                let clears = match end {
                    End::Answered { headers, body, .. } if class != ErrorClass::Ok => {
                        clears_at(headers, &String::from_utf8_lossy(body), SystemTime::now())
                    }
                    _ => None,
                };
                Some((
                    std::mem::take(&mut self.targets),
                    Outcome {
                        class,
                        reason: crate::redact::redact(&reason),
                        latency: ttfb.unwrap_or(duration),
                        clears_at: clears,
                    },
                ))
            }
        };
        if crate::term::debug_enabled() {
            crate::term::debug(&format!(
                "relay: {} -> {} {} in {:.3}s",
                self.what,
                status.map_or_else(|| "-".to_string(), |s| s.to_string()),
                self.record.error_kind,
                duration.as_secs_f64()
            ));
        }
        // An answer with a verdict replaces the target's record, claim and all.
        let release = if health.is_none() {
            self.claim.take()
        } else {
            None
        };
        self.relay.books.finish(Finished {
            client: self.reservation.client.clone(),
            epoch: self.reservation.epoch,
            record: std::mem::take(&mut self.record),
            health,
            release,
        });
    }
}

/// An upstream's error, described without quoting it: its status, its own error type
/// (`rate_limit_error`, `insufficient_quota`) and the quota words it used. An error body
/// may echo the request (a prompt), and a reason is written to `health.json` and
/// `events.jsonl`: no free text from the answer goes there.
fn describe(status: Option<u16>, body: &str) -> String {
    let json: Option<serde_json::Value> = serde_json::from_str(body).ok();
    let kind = json.as_ref().and_then(|v| {
        let error = v.get("error").unwrap_or(v);
        error
            .get("type")
            .or_else(|| error.get("code"))
            .or_else(|| error.get("status"))
            .and_then(serde_json::Value::as_str)
            .map(str::to_string)
    });
    let kind = kind
        .map(|k| {
            k.chars()
                .filter(|c| c.is_ascii_alphanumeric() || "_.-".contains(*c))
                .take(48)
                .collect::<String>()
        })
        .filter(|k| !k.is_empty())
        .unwrap_or_else(|| "error".to_string());
    let status = status.map_or_else(String::new, |s| format!("{s} "));
    format!("{status}{kind}{}", quota_words(body))
}

/// `; the answer says "usage limit"` when it used a quota word (what makes it a quota).
fn quota_words(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let words: Vec<&str> = QUOTA_WORDS
        .iter()
        .copied()
        .filter(|w| lower.contains(w))
        .collect();
    if words.is_empty() {
        String::new()
    } else {
        format!("; the answer says \"{}\"", words.join("\", \""))
    }
}

pub fn round_ms(seconds: f64) -> f64 {
    (seconds * 1000.0).round() / 1000.0
}
