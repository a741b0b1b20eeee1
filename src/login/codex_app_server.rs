//! Asking Codex itself for its windows: `codex app-server`'s JSON-RPC method
//! `account/rateLimits/read` (research §2.2a). Codex answers with its own login and its
//! own refresh — agent sends no prompt and holds no token. This file runs the server
//! ([`ask`], Codex's `Readers::ask_windows`), builds the lines to write to its stdin and
//! reads its answer. The server starts Codex and calls Codex's own backend (0.171.0
//! answered in under a second against a local mock; 10–20 s has been seen), so it is asked
//! with a bound, and only where a probe would otherwise be due (`launch::ask_windows`).
//!
//! Confirmed against the pinned 0.171.0 with `codex app-server generate-json-schema --out
//! DIR`; the schemas used are kept in `tests/fixtures/codex-app-server/`:
//! - Messages are newline-delimited JSON-RPC without a `"jsonrpc"` member
//!   (`JSONRPCRequest` requires only `id` and `method`).
//! - `initialize` takes `{"clientInfo": {"name", "title"?, "version"}}`; the client then
//!   sends the `initialized` notification (`{"method": "initialized"}`).
//! - `account/rateLimits/read` takes nullable `GetAccountRateLimitsParams`
//!   (`excludeResetCreditDetails` skips a backend lookup agent does not need) and answers
//!   `GetAccountRateLimitsResponse`: `rateLimits` (the historical single bucket),
//!   `rateLimitsByLimitId` (keyed by metered limit id, `codex` being the plan's),
//!   `ordinaryUsageAllowed` ("Null means unavailable; clients must not infer recovery from
//!   percentages or reset times"); each `RateLimitSnapshot` has `primary`/`secondary`
//!   `RateLimitWindow {usedPercent (int), windowDurationMins?, resetsAt? (epoch s)}`,
//!   `limitId`, `limitName`, `planType`, `rateLimitReachedType`.
//!
//! Confirmed by running the pinned 0.171.0 in a network namespace with only loopback,
//! logged in by a fixture `auth.json` and pointed at a mock backend (`chatgpt_base_url`):
//! `codex -s read-only -a never app-server` and plain `codex app-server` both answer
//! exactly [`request_lines`] (the exchange is kept in `tests/fixtures/codex-app-server/
//! rate-limits-read-0.171.0.{stdin,stdout}.jsonl`). Codex turns `GET
//! {chatgpt_base_url}/wham/usage` into the answer — a weekly window reported in `primary`
//! stays a 10080-minute window — and also, unasked, calls `wham/accounts/check` and
//! `ps/plugins/installed` and opens its remote-control websocket on that base: whoever runs
//! it should know it is not silent. A backend error comes back as JSON-RPC error -32603
//! whose message quotes the backend's body (so it is redacted here). The research doc's
//! `rate_limit_reached_type: {"kind": …}` for `wham/usage` is wrong for 0.171.0, which
//! wants `{"type": …}`. Still from the research doc only: `-32601` meaning a Codex too old
//! for the method.

use jiff::Timestamp;
use serde_json::{Value, json};

use super::asking::{Asked, Asking};
use super::codex_rollout::model_limit_family;
use super::window::{self, Scope, Source, Window};
use crate::child::{Group, Talk};

/// The longest line of the server's looked at: its answer is a few kilobytes.
const LINE_CAP: usize = 1 << 20;
/// The most lines read before giving up on an answer (the handshake's, notifications').
const LINES: usize = 1_000;
/// The most bytes read from the server in all.
const CAP: usize = 4 << 20;

/// Runs `codex app-server` as the rung will run Codex, sends the read and waits for its
/// answer at most `asking.timeout`, reading at most [`LINES`] lines and [`CAP`] bytes; then
/// the server and everything it started are ended (`child::converse`).
pub fn ask(asking: &Asking) -> Asked {
    let mut command = crate::child_env::command(asking.binary);
    command
        .arg("app-server")
        .envs(asking.env.iter().map(|(k, v)| (k, v)));
    for name in asking.env_remove {
        command.env_remove(name);
    }
    let mut say = String::new();
    for line in request_lines(env!("CARGO_PKG_VERSION")) {
        say.push_str(&line);
        say.push('\n');
    }
    let talk = Talk {
        timeout: asking.timeout,
        group: Group::Own,
        say: say.as_bytes(),
        line_cap: LINE_CAP,
        lines: LINES,
        cap: CAP,
    };
    let reply = crate::child::converse(&mut command, &talk, |line| {
        parse_reply(line, Timestamp::now())
    })
    .ok()
    .and_then(|talked| talked.answer);
    match reply {
        Some(Reply::Limits(limits)) => Asked::Windows(limits.windows),
        other => Asked::Nothing(format!("no windows ({other:?})")),
    }
}

/// The id of the `initialize` request.
pub const INITIALIZE_ID: u64 = 1;
/// The id of the `account/rateLimits/read` request.
pub const RATE_LIMITS_ID: u64 = 2;
/// JSON-RPC's "method not found".
const METHOD_NOT_FOUND: i64 = -32601;

/// The lines to write to `codex app-server`'s stdin, in order, each to be followed by a
/// newline: the handshake, then the read.
pub fn request_lines(agent_version: &str) -> [String; 3] {
    [
        json!({
            "id": INITIALIZE_ID,
            "method": "initialize",
            "params": {"clientInfo": {"name": "agent", "title": "agent", "version": agent_version}},
        })
        .to_string(),
        json!({"method": "initialized"}).to_string(),
        json!({
            "id": RATE_LIMITS_ID,
            "method": "account/rateLimits/read",
            "params": {"excludeResetCreditDetails": true},
        })
        .to_string(),
    ]
}

/// What Codex said about its login's limits.
#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    pub windows: Vec<Window>,
    /// `planType` of the plan's bucket (`plus`, `pro`…).
    pub plan: Option<String>,
    /// Codex's own word on whether ordinary (included) usage may run; `None` when it
    /// does not say, which by its schema must not be read as either.
    pub ordinary_usage_allowed: Option<bool>,
    /// `rateLimitReachedType` of the plan's bucket (`rate_limit_reached`,
    /// `workspace_member_credits_depleted`…), when a limit is reached.
    pub reached: Option<String>,
}

/// The server's answer to the read.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    Limits(Limits),
    /// The method is unknown to this Codex (too old).
    Unsupported,
    /// Any other error, with its message (redacted).
    Failed(String),
}

/// The answer to the read among the server's stdout lines (notifications and the
/// `initialize` answer are passed over); `None` when it has not come.
pub fn find_reply<'a>(lines: impl IntoIterator<Item = &'a str>, now: Timestamp) -> Option<Reply> {
    lines.into_iter().find_map(|line| parse_reply(line, now))
}

/// One stdout line, if it is the answer to the read.
pub fn parse_reply(line: &str, now: Timestamp) -> Option<Reply> {
    let message: Value = serde_json::from_str(line).ok()?;
    if message.get("id").and_then(Value::as_u64) != Some(RATE_LIMITS_ID) {
        return None;
    }
    if let Some(error) = message.get("error") {
        if error.get("code").and_then(Value::as_i64) == Some(METHOD_NOT_FOUND) {
            return Some(Reply::Unsupported);
        }
        let text = error
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("no message");
        return Some(Reply::Failed(crate::redact::redact(text)));
    }
    Some(Reply::Limits(parse_limits(message.get("result")?, now)?))
}

/// A `GetAccountRateLimitsResponse`.
pub fn parse_limits(result: &Value, now: Timestamp) -> Option<Limits> {
    let single = result.get("rateLimits").filter(|v| v.is_object());
    let by_id = result
        .get("rateLimitsByLimitId")
        .and_then(Value::as_object)
        .filter(|m| !m.is_empty());
    if single.is_none() && by_id.is_none() {
        return None;
    }
    let mut windows = Vec::new();
    // The buckets by id include the plan's own; the single view mirrors it, so it is read
    // only when there are none.
    match by_id {
        Some(buckets) => {
            for (id, snapshot) in buckets {
                let id = snapshot
                    .get("limitId")
                    .and_then(Value::as_str)
                    .unwrap_or(id);
                windows.extend(snapshot_windows(snapshot, Some(id), now));
            }
        }
        None => windows.extend(snapshot_windows(single?, None, now)),
    }
    let plan_bucket = by_id
        .and_then(|b| b.get("codex"))
        .or(single)
        .unwrap_or(&Value::Null);
    let text = |key: &str| {
        plan_bucket
            .get(key)
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    Some(Limits {
        windows,
        plan: text("planType"),
        ordinary_usage_allowed: result.get("ordinaryUsageAllowed").and_then(Value::as_bool),
        reached: text("rateLimitReachedType"),
    })
}

fn snapshot_windows(snapshot: &Value, id: Option<&str>, now: Timestamp) -> Vec<Window> {
    let id = id.or_else(|| snapshot.get("limitId").and_then(Value::as_str));
    let family = model_limit_family(id, snapshot.get("limitName").and_then(Value::as_str));
    ["primary", "secondary"]
        .iter()
        .filter_map(|slot| snapshot.get(*slot))
        .filter_map(|w| {
            let used = w.get("usedPercent")?.as_f64()?;
            // A window that has not started has no reset; it is not full either.
            let resets_at = window::from_epoch_seconds(w.get("resetsAt")?.as_f64()?)?;
            let scope = w
                .get("windowDurationMins")
                .and_then(Value::as_u64)
                .map_or(Scope::Unstated, |m| Scope::from_minutes(m, family.clone()));
            Window::new(scope, used, resets_at, Source::AppServer, now)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCHEMA: &str =
        include_str!("../../tests/fixtures/codex-app-server/GetAccountRateLimitsResponse.json");
    const REQUESTS: &str =
        include_str!("../../tests/fixtures/codex-app-server/ClientRequest-excerpt.json");

    fn now() -> Timestamp {
        "2026-09-14T12:00:00Z".parse().unwrap()
    }

    /// What agent wrote to the real codex 0.171.0 and what it answered.
    const SENT: &str =
        include_str!("../../tests/fixtures/codex-app-server/rate-limits-read-0.171.0.stdin.jsonl");
    const ANSWERED: &str =
        include_str!("../../tests/fixtures/codex-app-server/rate-limits-read-0.171.0.stdout.jsonl");

    #[test]
    fn the_exchange_with_the_real_codex_is_reproduced_and_read() {
        assert_eq!(
            request_lines("0.1.0").to_vec(),
            SENT.lines().collect::<Vec<_>>()
        );
        let Some(Reply::Limits(limits)) = find_reply(ANSWERED.lines(), now()) else {
            panic!("no answer to the read in the captured output")
        };
        // The mock's wham/usage said: weekly (604800 s) in primary, 100 %, plan plus.
        let [weekly] = &limits.windows[..] else {
            panic!("{:?}", limits.windows)
        };
        assert_eq!(weekly.scope, Scope::Weekly);
        assert!(weekly.is_full());
        assert_eq!(weekly.resets_at.as_second(), 1_789_900_000);
        assert_eq!(limits.plan.as_deref(), Some("plus"));
        assert_eq!(limits.reached.as_deref(), Some("rate_limit_reached"));
        assert_eq!(limits.ordinary_usage_allowed, None);
    }

    /// An answer shaped by the 0.171.0 schema: the weekly window in `primary`, a
    /// per-model bucket beside the plan's.
    fn answer() -> String {
        json!({"id": 2, "result": {
            "rateLimits": {"limitId": "codex", "primary": {"usedPercent": 100, "windowDurationMins": 10080, "resetsAt": 1_789_900_000_u64},
                           "secondary": null, "planType": "plus", "rateLimitReachedType": "rate_limit_reached"},
            "rateLimitsByLimitId": {
                "codex": {"limitId": "codex", "limitName": null,
                          "primary": {"usedPercent": 100, "windowDurationMins": 10080, "resetsAt": 1_789_900_000_u64},
                          "secondary": null, "planType": "plus", "rateLimitReachedType": "rate_limit_reached",
                          "credits": {"hasCredits": false, "unlimited": false, "balance": "0"}},
                "codex_spark": {"limitId": "codex_spark", "limitName": "GPT-5.3-Codex-Spark",
                          "primary": {"usedPercent": 12, "windowDurationMins": 300, "resetsAt": 1_789_400_000_u64},
                          "secondary": {"usedPercent": 3, "windowDurationMins": null, "resetsAt": null}}},
            "ordinaryUsageAllowed": false,
            "rateLimitResetCredits": {"availableCount": 0, "credits": null}}})
        .to_string()
    }

    #[test]
    fn the_requests_follow_the_pinned_schema() {
        let schema: Value = serde_json::from_str(REQUESTS).unwrap();
        let [init, initialized, read] = request_lines("0.1.0");
        let init: Value = serde_json::from_str(&init).unwrap();
        assert_eq!(init["method"], "initialize");
        for required in schema["definitions"]["InitializeParams"]["required"]
            .as_array()
            .unwrap()
        {
            assert!(
                init["params"].get(required.as_str().unwrap()).is_some(),
                "{required}"
            );
        }
        for required in schema["definitions"]["ClientInfo"]["required"]
            .as_array()
            .unwrap()
        {
            assert!(
                init["params"]["clientInfo"]
                    .get(required.as_str().unwrap())
                    .is_some()
            );
        }
        let initialized: Value = serde_json::from_str(&initialized).unwrap();
        assert_eq!(
            schema["ClientNotification"]["oneOf"][0]["properties"]["method"]["enum"][0],
            initialized["method"]
        );
        let read: Value = serde_json::from_str(&read).unwrap();
        assert_eq!(
            schema["account/rateLimits/read"]["properties"]["method"]["enum"][0],
            read["method"]
        );
        let params = schema["definitions"]["GetAccountRateLimitsParams"]["properties"]
            .as_object()
            .unwrap();
        for key in read["params"].as_object().unwrap().keys() {
            assert!(
                params.contains_key(key),
                "{key} is not a parameter of the method"
            );
        }
    }

    #[test]
    fn every_field_read_is_in_the_pinned_schema() {
        let schema: Value = serde_json::from_str(SCHEMA).unwrap();
        let top = schema["properties"].as_object().unwrap();
        for key in ["rateLimits", "rateLimitsByLimitId", "ordinaryUsageAllowed"] {
            assert!(top.contains_key(key), "{key}");
        }
        let snapshot = schema["definitions"]["RateLimitSnapshot"]["properties"]
            .as_object()
            .unwrap();
        for key in [
            "primary",
            "secondary",
            "limitId",
            "limitName",
            "planType",
            "rateLimitReachedType",
        ] {
            assert!(snapshot.contains_key(key), "{key}");
        }
        let window = schema["definitions"]["RateLimitWindow"]["properties"]
            .as_object()
            .unwrap();
        for key in ["usedPercent", "windowDurationMins", "resetsAt"] {
            assert!(window.contains_key(key), "{key}");
        }
    }

    #[test]
    fn the_answer_gives_each_buckets_windows_by_length() {
        let lines = [
            r#"{"id":1,"result":{"userAgent":"codex/0.171.0"}}"#.to_string(),
            r#"{"method":"account/rateLimits/updated","params":{}}"#.to_string(),
            answer(),
        ];
        let Some(Reply::Limits(limits)) = find_reply(lines.iter().map(String::as_str), now())
        else {
            panic!()
        };
        assert_eq!(limits.plan.as_deref(), Some("plus"));
        assert_eq!(limits.ordinary_usage_allowed, Some(false));
        assert_eq!(limits.reached.as_deref(), Some("rate_limit_reached"));
        let weekly: Vec<&Window> = limits
            .windows
            .iter()
            .filter(|w| w.scope == Scope::Weekly)
            .collect();
        assert_eq!(weekly.len(), 1, "the single view is not counted twice");
        assert!(weekly[0].is_full());
        assert_eq!(weekly[0].source, Source::AppServer);
        let spark = limits
            .windows
            .iter()
            .find(|w| w.scope.family().is_some())
            .unwrap();
        assert_eq!(
            spark.scope,
            Scope::ModelFiveHour {
                family: "gpt-5.3-codex-spark".into()
            }
        );
        assert_eq!(limits.windows.len(), 2, "a window with no reset is skipped");
    }

    #[test]
    fn the_single_bucket_alone_is_read_and_errors_are_told_apart() {
        let old = r#"{"id":2,"result":{"rateLimits":{"primary":{"usedPercent":42,"resetsAt":1789400000,"windowDurationMins":300},
            "secondary":{"usedPercent":68,"resetsAt":1789900000,"windowDurationMins":10080},"planType":"pro"}}}"#;
        let Some(Reply::Limits(limits)) = parse_reply(old, now()) else {
            panic!()
        };
        assert_eq!(limits.windows.len(), 2);
        assert_eq!(limits.plan.as_deref(), Some("pro"));
        assert_eq!(limits.ordinary_usage_allowed, None);
        assert_eq!(
            parse_reply(
                r#"{"id":2,"error":{"code":-32601,"message":"Method not found"}}"#,
                now()
            ),
            Some(Reply::Unsupported)
        );
        assert_eq!(
            parse_reply(
                r#"{"id":2,"error":{"code":-32000,"message":"not logged in"}}"#,
                now()
            ),
            Some(Reply::Failed("not logged in".into()))
        );
        assert_eq!(parse_reply(r#"{"id":1,"result":{}}"#, now()), None);
        assert_eq!(parse_reply(r#"{"id":2,"result":{}}"#, now()), None);
    }
}
