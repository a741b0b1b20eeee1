//! The `claude-cli` upstream: `POST /{name}/v1/messages` answered by this host's own Claude
//! Code login (a subscription needs no API key). Each call runs
//!
//! ```text
//! claude -p --model M --output-format json --tools "" --strict-mcp-config
//!        --setting-sources project --no-session-persistence --disable-slash-commands
//!        --system-prompt <a short neutral prompt>
//! ```
//!
//! in an empty temporary directory (no project settings, hooks, plugins or MCP servers to
//! load), with the request's system prompt and messages folded into one prompt on stdin.
//! The answer comes back in Anthropic's Message format — as SSE events when the request
//! asked to stream — with the CLI's usage; a usage limit becomes 429 `relay_cli_quota`.

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::response::Response;
use bytes::Bytes;
use http::request::Parts;
use http::{Method, StatusCode};
use serde_json::Value;

use super::answer::{self, Message};
use super::call::{CallMeta, End, record_for, reserve};
use super::caller::Caller;
use super::shared::Relay;
use crate::config::relay::Upstream;
use crate::error_class::ErrorClass;
use crate::scratch::Scratch;

/// What the CLI is told about itself; the caller's own system prompt is in the prompt.
const NEUTRAL_SYSTEM_PROMPT: &str =
    "You are a helpful assistant. Follow the instructions in the user's message.";

/// The most the CLI may print on stdout (and on stderr) for one answer: a long answer in
/// its JSON is a few hundred kilobytes.
const OUTPUT_CAP: usize = 16 << 20;

/// Why a run gave no answer: the status and error type to answer with, and what to say.
struct Failure {
    status: StatusCode,
    kind: &'static str,
    message: String,
    class: ErrorClass,
}

pub async fn answer(
    relay: Arc<Relay>,
    upstream: &Upstream,
    caller: &Caller,
    parts: Parts,
    rest: String,
    body: Bytes,
) -> Response {
    let path = rest.split('?').next().unwrap_or("");
    if parts.method != Method::POST || path != "/v1/messages" {
        return answer::error(
            StatusCode::NOT_FOUND,
            "not_found_error",
            &format!(
                "relay: the claude-cli upstream \"{}\" answers only POST /{}/v1/messages",
                upstream.name, upstream.name
            ),
        );
    }
    let Ok(request) = serde_json::from_slice::<Value>(&body) else {
        return answer::error(
            StatusCode::BAD_REQUEST,
            "invalid_request_error",
            "relay: the body is not JSON",
        );
    };
    let model = match super::call::checked_model(request.get("model").and_then(Value::as_str)) {
        Ok(model) => model,
        Err(refusal) => return *refusal,
    };
    let Some(model) = model else {
        return answer::error(
            StatusCode::BAD_REQUEST,
            "invalid_request_error",
            "relay: model: field required",
        );
    };
    let prompt = match fold_prompt(&request) {
        Ok(prompt) => prompt,
        Err(why) => {
            return answer::error(
                StatusCode::BAD_REQUEST,
                "invalid_request_error",
                &format!("relay: {why}"),
            );
        }
    };
    let stream = request.get("stream").and_then(Value::as_bool) == Some(true);
    let command = upstream.command.clone().unwrap_or_else(|| "claude".into());
    let Some(binary) = crate::backend::discover::find(&command) else {
        return answer::error(
            StatusCode::SERVICE_UNAVAILABLE,
            "relay_mode_disabled",
            &format!(
                "relay: the claude-cli upstream \"{}\" cannot run: {command} is not installed on the relay host",
                upstream.name
            ),
        );
    };

    let started = Instant::now();
    let meta = CallMeta::from_headers(&parts.headers);
    if let Some(refusal) = super::subscriptions::refusal(&relay, caller, upstream, None).await {
        return refusal;
    }
    let record = record_for(&meta, caller, upstream, Some(model.clone()));
    let reservation = match reserve(&relay, caller, &record).await {
        Ok(reservation) => reservation,
        Err(response) => return response,
    };
    let call = super::call::Call::new(
        Arc::clone(&relay),
        reservation,
        record,
        vec![format!(
            "command {} {model} @relay:{}",
            binary.display(),
            upstream.name
        )],
        format!("{model} via relay {}", upstream.name),
        started,
    );
    let timeout = relay.config.upstream_timeout;
    let run_model = model.clone();
    let outcome =
        tokio::task::spawn_blocking(move || run(&binary, &run_model, &prompt, timeout)).await;
    let outcome = outcome.unwrap_or_else(|_| {
        Err(Failure {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            kind: "api_error",
            message: "the claude run panicked".into(),
            class: ErrorClass::Upstream5xx,
        })
    });
    let elapsed = started.elapsed();
    match outcome {
        Ok(message) => {
            let message_id = format!("msg_relay_{:016x}", fastrand::u64(..));
            let mut call = call;
            call.record.message_id = Some(message_id.clone());
            call.finish(
                &End::Answered {
                    status: 200,
                    headers: &[],
                    body: b"",
                    stream_error: None,
                },
                Some(elapsed),
                message.tokens,
                (body.len(), message.text.len() as u64),
            );
            if stream {
                answer::message_events(&message_id, &model, &message)
            } else {
                answer::message_json(&message_id, &model, &message)
            }
        }
        Err(failure) => {
            let end = End::Failed {
                status: failure.status.as_u16(),
                class: failure.class,
                why: failure.message.clone(),
            };
            call.finish(&end, Some(elapsed), None, (body.len(), 0));
            answer::error(failure.status, failure.kind, &failure.message)
        }
    }
}

/// The system prompt and every turn as one prompt. A lone user message is passed as it
/// is; anything longer is laid out turn by turn in tags the model reads naturally.
fn fold_prompt(request: &Value) -> Result<String, String> {
    let system = match request.get("system") {
        None | Some(Value::Null) => String::new(),
        Some(value) => text_of(value),
    };
    let Some(messages) = request.get("messages").and_then(Value::as_array) else {
        return Err("messages: field required".into());
    };
    if messages.is_empty() {
        return Err("messages: at least one message is required".into());
    }
    let turns: Vec<(&str, String)> = messages
        .iter()
        .map(|m| {
            let role = m.get("role").and_then(Value::as_str).unwrap_or("user");
            (role, m.get("content").map(text_of).unwrap_or_default())
        })
        .collect();
    if system.trim().is_empty() && turns.len() == 1 && turns[0].0 == "user" {
        return Ok(turns[0].1.clone());
    }
    let mut prompt = String::new();
    if !system.trim().is_empty() {
        prompt.push_str("<system>\n");
        prompt.push_str(system.trim_end());
        prompt.push_str("\n</system>\n\n");
    }
    for (role, text) in turns {
        let tag = if role == "assistant" {
            "assistant"
        } else {
            "user"
        };
        let _ = write!(prompt, "<{tag}>\n{}\n</{tag}>\n\n", text.trim_end());
    }
    prompt.push_str("Reply to the last user turn.\n");
    Ok(prompt)
}

/// The text of a content value: a string, or the text of its blocks (others named only).
fn text_of(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .map(|block| match block.get("type").and_then(Value::as_str) {
                Some("text") | None => block
                    .get("text")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                Some(other) => format!("[{other} omitted]"),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Runs the CLI once (blocking), within `timeout`.
/// What it produced is the answer's [`Message`].
fn run(binary: &Path, model: &str, prompt: &str, timeout: Duration) -> Result<Message, Failure> {
    let failure = |status, kind, message: String, class| Failure {
        status,
        kind,
        message,
        class,
    };
    let scratch = Scratch::new_in(&std::env::temp_dir(), "agent-relay-cli").map_err(|err| {
        failure(
            StatusCode::INTERNAL_SERVER_ERROR,
            "api_error",
            format!("relay: making a scratch directory: {err}"),
            ErrorClass::Upstream5xx,
        )
    })?;
    let mut command = crate::child_env::command(binary);
    command
        .args([
            "-p",
            "--model",
            model,
            "--output-format",
            "json",
            "--tools",
            "",
        ])
        .args([
            "--strict-mcp-config",
            "--setting-sources",
            "project",
            "--no-session-persistence",
            "--disable-slash-commands",
            "--system-prompt",
            NEUTRAL_SYSTEM_PROMPT,
        ]);
    crate::child_env::start_in(&mut command, scratch.path());
    // The relay's own secrets never reach it (`child_env`), nor another vendor's key.
    for name in
        crate::adapter::Family::Claude.foreign_credential_vars(&crate::adapter::Env::process())
    {
        command.env_remove(name);
    }
    let job = crate::child::Job::new(timeout, crate::child::Group::Own)
        .stdin(prompt.as_bytes())
        .cap(OUTPUT_CAP);
    let ran = crate::child::run(&mut command, &job).map_err(|err| {
        failure(
            StatusCode::SERVICE_UNAVAILABLE,
            "relay_mode_disabled",
            format!("relay: running {}: {err}", binary.display()),
            ErrorClass::BinaryMissing,
        )
    })?;
    let output = match ran.output() {
        Ok(output) => output,
        Err(crate::child::Stopped::Late(_)) => {
            return Err(failure(
                StatusCode::GATEWAY_TIMEOUT,
                "relay_upstream_timeout",
                format!("relay: claude did not answer within {}s", timeout.as_secs()),
                ErrorClass::Unreachable,
            ));
        }
        Err(stopped) => {
            return Err(failure(
                StatusCode::BAD_GATEWAY,
                "api_error",
                format!("relay: claude {stopped}"),
                ErrorClass::Upstream5xx,
            ));
        }
    };
    let stdout = String::from_utf8_lossy(&output.stdout);
    let result: Option<Value> = serde_json::from_str(stdout.trim()).ok().or_else(|| {
        // Some builds print a line of their own before the JSON.
        stdout
            .lines()
            .rev()
            .find_map(|line| serde_json::from_str(line.trim()).ok())
    });
    let is_error = result
        .as_ref()
        .and_then(|r| r.get("is_error"))
        .and_then(Value::as_bool)
        .unwrap_or(true);
    let text = result
        .as_ref()
        .and_then(|r| r.get("result"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    if output.status.success() && !is_error {
        let tokens = result
            .as_ref()
            .filter(|r| r.get("usage").is_some_and(Value::is_object))
            .and_then(crate::probe::usage_tokens);
        let stop_reason = result
            .as_ref()
            .and_then(|r| r.get("stop_reason"))
            .and_then(Value::as_str)
            .unwrap_or("end_turn")
            .to_string();
        return Ok(Message {
            text,
            tokens,
            stop_reason,
        });
    }
    let said = if text.is_empty() {
        format!("{stdout} {}", String::from_utf8_lossy(&output.stderr))
    } else {
        text
    };
    let said = crate::probe::snippet(&crate::redact::redact(&said));
    let api_status = result
        .as_ref()
        .and_then(|r| r.get("api_error_status"))
        .and_then(Value::as_u64);
    let class = match api_status {
        Some(status) => crate::probe::classify_status(u16::try_from(status).unwrap_or(500), &said),
        None => crate::probe::classify_output(&said),
    };
    let exit = output
        .status
        .code()
        .map_or_else(|| "was killed".to_string(), |c| format!("exited {c}"));
    Err(match class {
        ErrorClass::Quota => failure(
            StatusCode::TOO_MANY_REQUESTS,
            "relay_cli_quota",
            format!("relay: claude hit a usage limit: {said}"),
            ErrorClass::Quota,
        ),
        ErrorClass::RateLimited => failure(
            StatusCode::TOO_MANY_REQUESTS,
            "rate_limit_error",
            format!("relay: claude was rate limited: {said}"),
            ErrorClass::RateLimited,
        ),
        ErrorClass::Auth => failure(
            StatusCode::SERVICE_UNAVAILABLE,
            "relay_credentials_missing",
            format!("relay: claude is not logged in on the relay host: {said}"),
            ErrorClass::Auth,
        ),
        ErrorClass::Overloaded => failure(
            StatusCode::from_u16(529).unwrap_or(StatusCode::SERVICE_UNAVAILABLE),
            "overloaded_error",
            format!("relay: claude: {said}"),
            ErrorClass::Overloaded,
        ),
        _ => failure(
            StatusCode::BAD_GATEWAY,
            "api_error",
            format!("relay: claude {exit}: {said}"),
            ErrorClass::Upstream5xx,
        ),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_lone_user_message_is_the_prompt() {
        let request = json!({"model": "m", "messages": [{"role": "user", "content": "hello"}]});
        assert_eq!(fold_prompt(&request).unwrap(), "hello");
    }

    #[test]
    fn system_and_turns_are_folded_in_order() {
        let request = json!({
            "model": "m",
            "system": [{"type": "text", "text": "Be brief."}],
            "messages": [
                {"role": "user", "content": "one"},
                {"role": "assistant", "content": [{"type": "text", "text": "two"}]},
                {"role": "user", "content": [{"type": "text", "text": "three"}, {"type": "image"}]},
            ],
        });
        let prompt = fold_prompt(&request).unwrap();
        let order: Vec<usize> = [
            "<system>\nBe brief.",
            "<user>\none",
            "<assistant>\ntwo",
            "three\n[image omitted]",
        ]
        .iter()
        .map(|part| {
            prompt
                .find(part)
                .unwrap_or_else(|| panic!("{part:?} in {prompt}"))
        })
        .collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]), "{prompt}");
    }

    #[test]
    fn messages_are_required() {
        assert!(fold_prompt(&json!({"model": "m"})).is_err());
    }
}
