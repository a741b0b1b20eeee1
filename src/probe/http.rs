//! The HTTP probes: Anthropic messages, OpenAI chat/responses, Gemini generateContent, and
//! plain reachability when there is no credential to call with.

use std::io::Read as _;
use std::time::{Duration, Instant, SystemTime};

use serde_json::{Value, json};

use super::classify::{classify_status, clears_at, snippet};
use super::{Call, Outcome};
use crate::config::{Auth, OpenAiApi};
use crate::error_class::ErrorClass;

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

pub fn run(call: &Call, model: Option<&str>, timeout: Duration) -> Outcome {
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
        Call::Command { .. } | Call::None => unreachable!("not an HTTP probe"),
    };
    call_api(&request, model_name, timeout)
}

fn trim(base: &str) -> &str {
    base.trim_end_matches('/')
}

/// `host[:port]` of a URL, for reasons.
pub fn host(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    rest.split(['/', '?']).next().unwrap_or(rest)
}

fn agent(timeout: Duration) -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        .http_status_as_error(false)
        .user_agent(concat!("agent/", env!("CARGO_PKG_VERSION")))
        .build()
        .new_agent()
}

struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

/// Sends once; a network error that came back quickly is tried once more inside the
/// timeout. A 429 or 529 is the probe's answer and is never retried.
fn send(request: &Request, timeout: Duration) -> (Result<Answer, ureq::Error>, Duration) {
    let started = Instant::now();
    let mut result = send_once(request, timeout);
    if let Err(err) = &result {
        let elapsed = started.elapsed();
        let retryable = !matches!(err, ureq::Error::Timeout(_));
        if retryable && elapsed < timeout / 2 {
            result = send_once(request, timeout.saturating_sub(elapsed));
        }
    }
    (result, started.elapsed())
}

fn send_once(request: &Request, timeout: Duration) -> Result<Answer, ureq::Error> {
    let agent = agent(timeout);
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
    })
}

fn call_api(request: &Request, model: &str, timeout: Duration) -> Outcome {
    let host = host(&request.url).to_string();
    let (result, latency) = send(request, timeout);
    let answer = match result {
        Ok(answer) => answer,
        Err(err) => return network_failure(&host, &err, latency, timeout),
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
    match send(&request, timeout) {
        (Ok(_), latency) => Outcome {
            class: ErrorClass::Ok,
            reason: format!(
                "{host} reachable (no credential here to call {model}; the fast-fail net guards the launch)"
            ),
            latency,
            clears_at: None,
        },
        (Err(err), latency) => network_failure(&host, &err, latency, timeout),
    }
}
