//! The answer of Anthropic's undocumented `GET /api/oauth/usage` (research §1.2), which
//! Claude Code itself reads for `/usage`: one object per window,
//! `{"utilization": 0–100 | null, "resets_at": ISO 8601 | null}`, under `five_hour`,
//! `seven_day`, `seven_day_opus`, `seven_day_sonnet` (and `seven_day_oauth_apps`, the
//! bucket of third-party apps, which Claude Code's runs do not draw on), plus a `limits`
//! array whose `weekly_scoped` entries name a model (`scope.model.display_name`). A
//! window with no figure or no reset says nothing and is left out.

use jiff::Timestamp;
use serde_json::Value;

use crate::state::window::{Scope, Source, Window};

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
