//! The JSON Claude Code sends on stdin to its `statusLine` command: the cheapest and
//! cleanest live source of a Claude login's windows (no call, no token; research §1.2).
//!
//! Shape confirmed in the pinned 2.1.197 binary (`Ugm()` builds it, `xd()` the common
//! head; `rate_limits` is present only once a response carried the
//! `anthropic-ratelimit-unified-*` headers, each window only when both its headers were):
//!
//! ```json
//! {"session_id": "…", "transcript_path": "…/<session>.jsonl", "cwd": "/home/u/proj",
//!  "permission_mode": "default", "model": {"id": "claude-opus-4-8", "display_name": "Opus 4.8"},
//!  "workspace": {"current_dir": "/home/u/proj", "project_dir": "/home/u/proj", "added_dirs": []},
//!  "version": "2.1.197", "cost": {…}, "context_window": {…, "used_percentage": 12},
//!  "rate_limits": {"five_hour": {"used_percentage": 37.0, "resets_at": 1789400000},
//!                  "seven_day": {"used_percentage": 88.0, "resets_at": 1789900000}}}
//! ```
//!
//! `used_percentage` is `utilization * 100` (0..100); `resets_at` is the header's epoch
//! seconds (`Bda()`: `Number(anthropic-ratelimit-unified-5h-reset)`).
//!
//! Behind a Claude apps gateway (`claude gateway`) a third window comes beside them: the
//! developer's spend limit. Read in the 2.1.332 binary (the statusline's own schema text,
//! and the builder, one source: that binary):
//!
//! ```text
//! "spend_limit": {           // Optional: behind a Claude gateway, your fullest spend limit
//!                            //   (present only while the gateway reports it and its resets_at has not passed)
//!   "used_percentage": number,   // Percentage of the limit used (0-100, above 100 once exceeded)
//!   "resets_at": number,         // Unix epoch seconds when its period resets
//!   "used_usd": number,          // Optional: spend so far this period in USD, …
//!   "limit_usd": number,         // Optional: the limit in USD (present with used_usd)
//!   "period": "daily" | "weekly" | "monthly"   // Optional: the period the limit covers
//! ```
//!
//! built as `...be()==="gateway"&&xt.overage&&{spend_limit:{used_percentage:
//! M9t(xt.overage.utilization),resets_at:xt.overage.resets_at,…}}`, where `M9t(e)` is
//! `Math.round(e*1000)/10` — not clamped, while `five_hour`/`seven_day` go through
//! `j6e(e) = Math.min(M9t(e),100)`. agent's windows are 0..100 (a full one parks), so the
//! recorded window says 100; the feed's own figure, 104 %, is kept in [`Feed::spend_limit_percent`]
//! for the line, which shows what Claude Code was told.

use std::path::PathBuf;

use jiff::Timestamp;
use serde_json::Value;

use super::window::{self, Scope, Source, Window};

/// What one statusline call tells agent.
#[derive(Debug, Clone, PartialEq)]
pub struct Feed {
    pub session_id: Option<String>,
    pub transcript_path: Option<PathBuf>,
    /// The session's working directory (`workspace.current_dir`, else `cwd`).
    pub cwd: Option<PathBuf>,
    /// The model id (`claude-opus-4-8`).
    pub model: Option<String>,
    /// The model's display name (`Opus 4.8`).
    pub model_name: Option<String>,
    /// The login's windows, observed `now`.
    pub windows: Vec<Window>,
    /// The spend limit's `used_percentage` as the feed gave it, past 100 once the cap is
    /// exceeded (the recorded window is clamped to 100).
    pub spend_limit_percent: Option<f64>,
}

/// The statusline input `text`, read at `now`; `None` when it is not a JSON object.
pub fn parse(text: &str, now: Timestamp) -> Option<Feed> {
    let value: Value = serde_json::from_str(text).ok()?;
    value.as_object()?;
    let text_at = |pointer: &str| {
        value
            .pointer(pointer)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    let windows: Vec<Window> = [
        ("five_hour", Scope::FiveHour),
        ("seven_day", Scope::Weekly),
        ("spend_limit", Scope::SpendLimit),
    ]
    .into_iter()
    .filter_map(|(key, scope)| {
        let entry = value.pointer(&format!("/rate_limits/{key}"))?;
        let used = entry.get("used_percentage")?.as_f64()?;
        let resets_at = reset_instant(entry.get("resets_at")?)?;
        Window::new(scope, used, resets_at, Source::Statusline, now)
    })
    .collect();
    Some(Feed {
        session_id: text_at("/session_id"),
        transcript_path: text_at("/transcript_path").map(PathBuf::from),
        cwd: text_at("/workspace/current_dir")
            .or_else(|| text_at("/cwd"))
            .map(PathBuf::from),
        model: text_at("/model/id"),
        model_name: text_at("/model/display_name"),
        spend_limit_percent: windows
            .iter()
            .any(|w| w.scope == Scope::SpendLimit)
            .then(|| value.pointer("/rate_limits/spend_limit/used_percentage"))
            .flatten()
            .and_then(Value::as_f64),
        windows,
    })
}

/// Epoch seconds as 2.1.197 sends them; an RFC 3339 text is accepted too (the usage
/// endpoint's form, should a later build pass it through).
fn reset_instant(value: &Value) -> Option<Timestamp> {
    match value {
        Value::Number(n) => window::from_epoch_seconds(n.as_f64()?),
        Value::String(text) => text.parse().ok(),
        _ => None,
    }
}

#[cfg(test)]
#[allow(clippy::float_cmp)] // figures parsed, not computed
mod tests {
    use super::*;

    /// As `Ugm()` in 2.1.197 builds it.
    const FEED: &str = r#"{"session_id":"5f0c…","transcript_path":"/home/u/.claude/projects/-home-u-proj/5f0c.jsonl",
      "cwd":"/home/u/proj","permission_mode":"default","model":{"id":"claude-opus-4-8","display_name":"Opus 4.8"},
      "workspace":{"current_dir":"/home/u/proj/sub","project_dir":"/home/u/proj","added_dirs":[]},
      "version":"2.1.197","output_style":{"name":"default"},
      "cost":{"total_cost_usd":0.12,"total_duration_ms":1000,"total_api_duration_ms":500,"total_lines_added":0,"total_lines_removed":0},
      "context_window":{"total_input_tokens":10,"total_output_tokens":2,"context_window_size":200000,"current_usage":null,"used_percentage":12,"remaining_percentage":88},
      "exceeds_200k_tokens":false,"fast_mode":false,"thinking":{"enabled":true},
      "rate_limits":{"five_hour":{"used_percentage":37.5,"resets_at":1789400000},"seven_day":{"used_percentage":100,"resets_at":1789900000}}}"#;

    fn now() -> Timestamp {
        "2026-09-14T12:00:00Z".parse().unwrap()
    }

    #[test]
    fn both_windows_model_session_and_directory_are_read() {
        let feed = parse(FEED, now()).unwrap();
        assert_eq!(feed.model.as_deref(), Some("claude-opus-4-8"));
        assert_eq!(feed.model_name.as_deref(), Some("Opus 4.8"));
        assert_eq!(feed.session_id.as_deref(), Some("5f0c…"));
        assert_eq!(feed.cwd, Some(PathBuf::from("/home/u/proj/sub")));
        let [five, week] = &feed.windows[..] else {
            panic!("{:?}", feed.windows)
        };
        assert_eq!(five.scope, Scope::FiveHour);
        assert_eq!(five.used_percent, 37.5);
        assert_eq!(five.resets_at.as_second(), 1_789_400_000);
        assert_eq!(five.source, Source::Statusline);
        assert_eq!(five.observed_at, now());
        assert_eq!(week.scope, Scope::Weekly);
        assert!(week.is_full());
    }

    #[test]
    fn a_feed_before_any_response_has_no_windows_and_broken_ones_are_skipped() {
        let before = r#"{"session_id":"s","cwd":"/p","model":{"id":"claude-sonnet-5","display_name":"Sonnet 5"}}"#;
        let feed = parse(before, now()).unwrap();
        assert!(feed.windows.is_empty());
        assert_eq!(feed.cwd, Some(PathBuf::from("/p")));
        let broken = r#"{"rate_limits":{"five_hour":{"used_percentage":"lots","resets_at":1},
            "seven_day":{"used_percentage":5,"resets_at":"2026-09-20T00:00:00Z"}}}"#;
        let feed = parse(broken, now()).unwrap();
        assert_eq!(feed.windows.len(), 1);
        assert_eq!(feed.windows[0].scope, Scope::Weekly);
        assert_eq!(feed.spend_limit_percent, None);
        assert_eq!(parse("[1]", now()), None);
        assert_eq!(parse("", now()), None);
    }

    #[test]
    fn a_gateways_spend_limit_is_a_window_and_its_figure_past_100_is_kept_for_the_line() {
        // As 2.1.332 builds it behind a gateway: not clamped, with the optional USD fields.
        let resets = 1_790_000_000;
        let text = format!(
            r#"{{"model":{{"id":"claude-opus-4-8"}},"rate_limits":{{
              "five_hour":{{"used_percentage":12,"resets_at":1789400000}},
              "spend_limit":{{"used_percentage":104.2,"resets_at":{resets},"used_usd":52.1,"limit_usd":50,"period":"monthly"}}}}}}"#
        );
        let feed = parse(&text, now()).unwrap();
        let spend = feed
            .windows
            .iter()
            .find(|w| w.scope == Scope::SpendLimit)
            .unwrap_or_else(|| panic!("{:?}", feed.windows));
        assert!(spend.is_full());
        assert_eq!(spend.used_percent, 100.0);
        assert_eq!(spend.resets_at.as_second(), resets);
        assert_eq!(feed.spend_limit_percent, Some(104.2));
        assert_eq!(feed.windows.len(), 2);
    }
}
