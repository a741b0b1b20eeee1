//! The HTTP probes: Anthropic messages, OpenAI chat/responses, Gemini generateContent, and
//! plain reachability when there is no credential to call with.

use std::io::Read as _;
use std::time::{Duration, Instant, SystemTime};

use serde_json::{Value, json};

use super::classify::{classify_status, clears_at, snippet};
use super::{Call, Outcome};
use crate::config::{Auth, OpenAiApi};
use crate::error_class::ErrorClass;
use crate::state::ledger::Tokens;
use crate::state::meter::{CallInfo, Meter, Spent, estimate_tokens};

/// A normal answer is tiny; a captive portal's page need not be read whole.
const BODY_LIMIT: u64 = 256 * 1024;

struct Request<'a> {
    url: String,
    headers: Vec<(&'static str, String)>,
    body: Option<Value>,
    /// Whether a JSON answer of this shape is the API's own success.
    success: fn(&Value) -> bool,
    what: &'a str,
}

pub fn run(
    call: &Call,
    model: Option<&str>,
    timeout: Duration,
    meter: &Meter,
    info: &CallInfo,
) -> Outcome {
    let model_name = model.unwrap_or("the default model");
    let request = match call {
        Call::Reach { base } => return reach(base, model_name, timeout),
        Call::Anthropic {
            base,
            key,
            auth,
            oauth,
        } => {
            let mut headers = vec![
                ("anthropic-version", "2023-06-01".to_string()),
                ("content-type", "application/json".to_string()),
            ];
            match auth {
                Auth::Bearer => headers.push(("authorization", format!("Bearer {key}"))),
                Auth::XApiKey => headers.push(("x-api-key", key.clone())),
            }
            if *oauth {
                headers.push(("anthropic-beta", "oauth-2025-04-20".to_string()));
            }
            Request {
                url: format!("{}/v1/messages", trim(base)),
                headers,
                body: Some(json!({
                    "model": model_name,
                    "max_tokens": 1,
                    "messages": [{"role": "user", "content": "hi"}],
                })),
                success: |v| v.get("type").and_then(Value::as_str) == Some("message"),
                what: "an Anthropic message",
            }
        }
        Call::OpenAi { base, key, api } => {
            let mut headers = vec![("content-type", "application/json".to_string())];
            if let Some(key) = key {
                headers.push(("authorization", format!("Bearer {key}")));
            }
            match api {
                OpenAiApi::Chat => Request {
                    url: format!("{}/chat/completions", trim(base)),
                    headers,
                    body: Some(json!({
                        "model": model_name,
                        "max_tokens": 1,
                        "messages": [{"role": "user", "content": "hi"}],
                    })),
                    success: |v| v.get("choices").is_some_and(Value::is_array),
                    what: "a chat completion",
                },
                OpenAiApi::Responses => Request {
                    url: format!("{}/responses", trim(base)),
                    headers,
                    // 16 is the Responses API's minimum for max_output_tokens.
                    body: Some(
                        json!({"model": model_name, "input": "hi", "max_output_tokens": 16}),
                    ),
                    success: |v| v.get("output").is_some_and(Value::is_array),
                    what: "a Responses API answer",
                },
            }
        }
        Call::Gemini { base, key } => Request {
            url: format!("{}/v1beta/models/{model_name}:generateContent", trim(base)),
            headers: vec![
                ("content-type", "application/json".to_string()),
                ("x-goog-api-key", key.clone()),
            ],
            body: Some(json!({
                "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
                "generationConfig": {"maxOutputTokens": 1},
            })),
            success: |v| v.get("candidates").is_some_and(Value::is_array),
            what: "a Gemini answer",
        },
        Call::Command { .. } | Call::SelfReport { .. } | Call::None => {
            unreachable!("not an HTTP probe")
        }
    };
    call_api(&request, model_name, timeout, meter, info)
}

fn trim(base: &str) -> &str {
    base.trim_end_matches('/')
}

/// `host[:port]` of a URL, for reasons: never its userinfo (`user:password@`).
pub fn host(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or(rest);
    authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host)
}

struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
    ttfb: Duration,
}

/// Sends, metered: each attempt reserves a call first (refused: nothing is sent) and is
/// written to the ledger after. A network error that came back quickly is tried once more
/// inside the timeout; a 429 or 529 is the probe's answer and is never retried.
fn send(
    request: &Request,
    timeout: Duration,
    meter: &Meter,
    info: &CallInfo,
) -> (Result<Answer, Failure>, Duration) {
    let started = Instant::now();
    let mut attempt = 0;
    loop {
        attempt += 1;
        let reservation = match meter.reserve() {
            Ok(reservation) => reservation,
            Err(refusal) => return (Err(Failure::Budget(refusal)), started.elapsed()),
        };
        let call_started = Instant::now();
        let result = send_once(request, timeout.saturating_sub(started.elapsed()));
        let duration = call_started.elapsed();
        let spent = match &result {
            Ok(answer) => spent_on(request, answer, duration),
            Err(_) => Spent {
                class: Some(ErrorClass::Unreachable),
                duration,
                ..Spent::default()
            },
        };
        meter.record(&reservation, info, &spent);
        match result {
            Ok(answer) => return (Ok(answer), started.elapsed()),
            Err(err) => {
                let retryable = !matches!(err, ureq::Error::Timeout(_));
                if attempt == 1 && retryable && started.elapsed() < timeout / 2 {
                    continue;
                }
                return (Err(Failure::Network(err)), started.elapsed());
            }
        }
    }
}

enum Failure {
    Network(ureq::Error),
    Budget(crate::state::budget::Refusal),
}

/// The ledger's view of an answer: the provider's usage, or an estimate marked as such.
fn spent_on(request: &Request, answer: &Answer, duration: Duration) -> Spent {
    let success = (200..300).contains(&answer.status);
    let parsed: Option<Value> = serde_json::from_str(&answer.body).ok();
    let usage = parsed.as_ref().and_then(super::usage::tokens);
    let (tokens, estimated) = match usage {
        Some(tokens) => (tokens, false),
        // A refused call is billed nothing; an answer without usage is estimated.
        None if success => (
            Tokens {
                input: estimate_tokens(request.body.as_ref().map_or(0, |b| b.to_string().len())),
                output: 1,
                ..Tokens::default()
            },
            true,
        ),
        None => (Tokens::default(), false),
    };
    let request_id = ["request-id", "x-request-id"].iter().find_map(|name| {
        answer
            .headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.clone())
    });
    Spent {
        status: Some(answer.status),
        class: Some(if success {
            ErrorClass::Ok
        } else {
            classify_status(answer.status, &answer.body)
        }),
        tokens,
        estimated,
        ttfb: Some(answer.ttfb),
        duration,
        request_id,
        session: None,
    }
}

fn send_once(request: &Request, timeout: Duration) -> Result<Answer, ureq::Error> {
    let agent = crate::http::client(timeout);
    let started = Instant::now();
    let mut response = match &request.body {
        Some(body) => {
            let mut builder = agent.post(&request.url);
            for (name, value) in &request.headers {
                builder = builder.header(*name, value);
            }
            builder.send(body.to_string())?
        }
        None => {
            let mut builder = agent.head(&request.url);
            for (name, value) in &request.headers {
                builder = builder.header(*name, value);
            }
            builder.call()?
        }
    };
    let ttfb = started.elapsed();
    let status = response.status().as_u16();
    let headers = response
        .headers()
        .iter()
        .map(|(name, value)| {
            (
                name.as_str().to_string(),
                value.to_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    let mut body = String::new();
    if request.body.is_some() {
        let mut reader = response.body_mut().as_reader().take(BODY_LIMIT);
        let mut bytes = Vec::new();
        reader.read_to_end(&mut bytes).map_err(ureq::Error::Io)?;
        body = String::from_utf8_lossy(&bytes).into_owned();
    }
    Ok(Answer {
        status,
        headers,
        body,
        ttfb,
    })
}

fn call_api(
    request: &Request,
    model: &str,
    timeout: Duration,
    meter: &Meter,
    info: &CallInfo,
) -> Outcome {
    let host = host(&request.url).to_string();
    let (result, latency) = send(request, timeout, meter, info);
    let answer = match result {
        Ok(answer) => answer,
        Err(Failure::Network(err)) => return network_failure(&host, &err, latency, timeout),
        Err(Failure::Budget(refusal)) => return Outcome::refused(&refusal),
    };
    if (200..300).contains(&answer.status) {
        let parsed: Option<Value> = serde_json::from_str(&answer.body).ok();
        if parsed.as_ref().is_some_and(|v| (request.success)(v)) {
            return Outcome {
                class: ErrorClass::Ok,
                reason: format!("{host} reachable, {model} answered"),
                latency,
                clears_at: None,
            };
        }
        return Outcome {
            class: ErrorClass::Unreachable,
            reason: format!(
                "{host} answered {} but not with {}: {}",
                answer.status,
                request.what,
                snippet(&answer.body)
            ),
            latency,
            clears_at: None,
        };
    }
    let class = classify_status(answer.status, &answer.body);
    let quoted = if answer.body.trim().is_empty() {
        format!("HTTP {}", answer.status)
    } else {
        snippet(&crate::redact::redact(&answer.body))
    };
    Outcome {
        class,
        reason: format!("{model} unavailable: {quoted}"),
        latency,
        clears_at: clears_at(&answer.headers, &answer.body, SystemTime::now()),
    }
}

fn network_failure(host: &str, err: &ureq::Error, latency: Duration, timeout: Duration) -> Outcome {
    let reason = match err {
        ureq::Error::Timeout(_) => {
            format!("{host} did not answer within {:.1}s", timeout.as_secs_f64())
        }
        other => format!("{host} unreachable: {}", snippet(&other.to_string())),
    };
    Outcome {
        class: ErrorClass::Unreachable,
        reason,
        latency,
        clears_at: None,
    }
}

fn reach(base: &str, model: &str, timeout: Duration) -> Outcome {
    let request = Request {
        url: format!("{}/", trim(base)),
        headers: Vec::new(),
        body: None,
        success: |_| true,
        what: "",
    };
    let host = host(base).to_string();
    let started = Instant::now();
    match send_once(&request, timeout) {
        Ok(_) => Outcome {
            class: ErrorClass::Ok,
            reason: format!(
                "{host} reachable (no credential here to call {model}; the fast-fail net guards the launch)"
            ),
            latency: started.elapsed(),
            clears_at: None,
        },
        Err(err) => network_failure(&host, &err, started.elapsed(), timeout),
    }
}

#[cfg(test)]
mod tests {
    use super::host;

    #[test]
    fn a_host_never_carries_userinfo() {
        assert_eq!(
            host("https://user:pw@hooks.example:8443/a?b"),
            "hooks.example:8443"
        );
        assert_eq!(host("http://127.0.0.1:9/x@y"), "127.0.0.1:9");
        assert_eq!(host("https://api.anthropic.com"), "api.anthropic.com");
    }
}
