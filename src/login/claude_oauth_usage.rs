//! The answer of Anthropic's undocumented `GET /api/oauth/usage` (research §1.2), which
//! Claude Code itself reads for `/usage`: one object per window,
//! `{"utilization": 0–100 | null, "resets_at": ISO 8601 | null}`, under `five_hour`,
//! `seven_day`, `seven_day_opus`, `seven_day_sonnet` (and `seven_day_oauth_apps`, the
//! bucket of third-party apps, which Claude Code's runs do not draw on), plus a `limits`
//! array whose `weekly_scoped` entries name a model (`scope.model.display_name`). A
//! window with no figure or no reset says nothing and is left out.
//!
//! [`ask`] makes that one call, with the login's access token (`login::claude` decides
//! which, and whether to ask at all).

use std::io::Read as _;
use std::time::Duration;

use jiff::Timestamp;
use serde_json::Value;

use super::asking::Asked;
use crate::state::window::{Scope, Source, Window};

/// Claude Code's own bound for this call (`Ade()`: `timeout: 5000`).
const TIMEOUT: Duration = Duration::from_secs(5);

/// An answer larger than this is not the endpoint's.
const BODY_LIMIT: u64 = 64 * 1024;

/// `GET {base}/api/oauth/usage` with `token`, within `timeout` (and Claude Code's own
/// bound): the windows it names, or when a `429` says to ask again (its `retry-after`;
/// `now` when it does not say).
pub fn ask(base: &str, token: &str, timeout: Duration, now: Timestamp) -> Asked {
    let agent = crate::http::client(TIMEOUT.min(timeout));
    let response = agent
        .get(&format!("{base}/api/oauth/usage"))
        .header("authorization", &format!("Bearer {token}"))
        .header("anthropic-beta", "oauth-2025-04-20")
        .header("accept", "application/json")
        .call();
    let mut response = match response {
        Ok(response) => response,
        Err(err) => return Asked::Nothing(crate::redact::redact(&err.to_string())),
    };
    let status = response.status().as_u16();
    let headers: Vec<(String, String)> = response
        .headers()
        .iter()
        .map(|(name, value)| {
            (
                name.as_str().to_string(),
                value.to_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    let mut bytes = Vec::new();
    let read = response
        .body_mut()
        .as_reader()
        .take(BODY_LIMIT)
        .read_to_end(&mut bytes);
    let body = String::from_utf8_lossy(&bytes);
    if status == 429 {
        let clears = crate::http::clears_at(&headers, &body, std::time::SystemTime::now())
            .and_then(|at| Timestamp::try_from(at).ok());
        return Asked::NotBefore(clears.unwrap_or(now));
    }
    if status != 200 {
        return Asked::Nothing(format!("HTTP {status}"));
    }
    if let Err(err) = read {
        return Asked::Nothing(err.to_string());
    }
    match serde_json::from_str(&body) {
        Ok(value) => Asked::Windows(parse(&value, now)),
        Err(err) => Asked::Nothing(format!("not JSON: {err}")),
    }
}

/// The windows in the endpoint's answer, observed at `now`.
pub fn parse(body: &Value, now: Timestamp) -> Vec<Window> {
    let mut windows = Vec::new();
    let named = [
        ("five_hour", Scope::FiveHour),
        ("seven_day", Scope::Weekly),
        (
            "seven_day_opus",
            Scope::ModelWeekly {
                family: "opus".into(),
            },
        ),
        (
            "seven_day_sonnet",
            Scope::ModelWeekly {
                family: "sonnet".into(),
            },
        ),
    ];
    for (key, scope) in named {
        let Some(entry) = body.get(key) else { continue };
        let percent = entry.get("utilization").and_then(Value::as_f64);
        if let Some(window) = window(scope, percent, entry.get("resets_at"), now) {
            windows.push(window);
        }
    }
    // A model's own weekly bucket appears only in `limits` (Claude Code maps it to
    // "Current week (<display_name>)").
    for entry in body
        .get("limits")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if entry.get("kind").and_then(Value::as_str) != Some("weekly_scoped") {
            continue;
        }
        let Some(name) = entry
            .pointer("/scope/model/display_name")
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|n| !n.is_empty())
        else {
            continue;
        };
        let scope = Scope::ModelWeekly {
            family: name.to_lowercase(),
        };
        if windows.iter().any(|w| w.scope == scope) {
            continue;
        }
        let percent = entry.get("percent").and_then(Value::as_f64);
        if let Some(window) = window(scope, percent, entry.get("resets_at"), now) {
            windows.push(window);
        }
    }
    windows
}

fn window(
    scope: Scope,
    percent: Option<f64>,
    resets_at: Option<&Value>,
    now: Timestamp,
) -> Option<Window> {
    let resets_at: Timestamp = resets_at?.as_str()?.trim().parse().ok()?;
    Window::new(scope, percent?, resets_at, Source::UsageEndpoint, now)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_research_example_gives_every_window_with_a_figure_and_a_reset() {
        let body: Value = serde_json::from_str(
            r#"{
              "five_hour":  { "utilization": 37.0, "resets_at": "2026-09-14T21:00:00.000Z" },
              "seven_day":  { "utilization": 88.0, "resets_at": "2026-09-20T00:00:00.000Z" },
              "seven_day_oauth_apps": null,
              "seven_day_opus": null,
              "seven_day_sonnet": { "utilization": 5.0, "resets_at": "2026-09-20T00:00:00+00:00" },
              "extra_usage": { "is_enabled": true, "monthly_limit": 1000, "used_credits": 500, "utilization": 50.0, "currency": "USD" },
              "limits": [
                { "kind": "session", "group": "session", "percent": 37, "resets_at": "2026-09-14T21:00:00.000Z" },
                { "kind": "weekly_scoped", "group": "weekly", "percent": 7, "resets_at": "2026-09-20T00:00:00.000Z",
                  "scope": { "model": { "display_name": "Fable", "id": null }, "surface": null } }
              ]
            }"#,
        )
        .unwrap();
        // Within five hours of the five-hour reset: the example's windows are plausible.
        let now: Timestamp = "2026-09-14T16:00:00Z".parse().unwrap();
        let windows = parse(&body, now);
        let seen: Vec<(Scope, f64)> = windows
            .iter()
            .map(|w| (w.scope.clone(), w.used_percent))
            .collect();
        assert_eq!(
            seen,
            vec![
                (Scope::FiveHour, 37.0),
                (Scope::Weekly, 88.0),
                (
                    Scope::ModelWeekly {
                        family: "sonnet".into()
                    },
                    5.0
                ),
                (
                    Scope::ModelWeekly {
                        family: "fable".into()
                    },
                    7.0
                ),
            ]
        );
        assert!(
            windows
                .iter()
                .all(|w| w.source == Source::UsageEndpoint && w.observed_at == now)
        );
        assert_eq!(
            windows[0].resets_at,
            "2026-09-14T21:00:00Z".parse::<Timestamp>().unwrap()
        );
    }

    #[test]
    fn a_window_without_a_figure_or_a_reset_or_any_odd_answer_gives_nothing() {
        let now = Timestamp::now();
        for text in [
            r#"{"five_hour":{"utilization":null,"resets_at":"2026-09-14T21:00:00Z"}}"#,
            r#"{"five_hour":{"utilization":40,"resets_at":null}}"#,
            r#"{"five_hour":{"utilization":40,"resets_at":"tomorrow"}}"#,
            r#"{"five_hour":"full"}"#,
            r#"{"limits":{"kind":"weekly_scoped"}}"#,
            "[]",
            "null",
        ] {
            let body: Value = serde_json::from_str(text).unwrap();
            assert!(parse(&body, now).is_empty(), "{text}");
        }
    }
}
