//! `agent --statusline`: Claude Code's `statusLine` command (DESIGN §12). Claude Code pipes
//! its status JSON on stdin after each turn; agent records the login's windows from it at
//! zero cost — no call, no token, no network — and prints one short line: the model, the
//! windows with their resets (and the pace's forecast), the fallback word and the rung agent
//! launched. It runs on every refresh of Claude Code's screen, so it builds no command-line
//! parser, reads the configuration only to judge the fallbacks by the one rule (a file that
//! does not load leaves the last verdict alone), and never fails loudly: whatever goes
//! wrong, a minimal line and exit 0.

use std::process::ExitCode;
use std::time::Duration;

use jiff::Timestamp;
use jiff::tz::TimeZone;

use crate::adapter::Env;
use crate::login::claude_statusline::{self, Feed};
use crate::login::{Scope, Window};
use crate::state::windows::Windows;
use crate::text::printable;

use super::statusline_install;

/// How long stdin may take to end: Claude Code writes its JSON and closes it at once.
const STDIN_WAIT: Duration = Duration::from_secs(2);

/// Reads Claude Code's JSON on stdin, records the windows, prints the line. Always exit 0.
pub fn run() -> ExitCode {
    // A feed over its cap (a few KiB is usual), a device, or a stdin that never ends is no
    // feed: the line is drawn without it, silently (stderr here is Claude Code's).
    let input = crate::bounded_read::stdin(crate::bounded_read::FEED, STDIN_WAIT)
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .unwrap_or_default();
    let now = Timestamp::now();
    let state_dir = crate::paths::state_dir();
    let feed = claude_statusline::parse(&input, now);
    if let Some(feed) = &feed
        && !feed.windows.is_empty()
    {
        let windows = Windows::new(&state_dir);
        let key = login_key();
        if !already_known(&feed.windows, &windows.known(&key, now), now) {
            // A state directory agent may not use costs the record, never the line.
            let _ = windows.record(&key, &feed.windows, now);
        }
    }
    // A window's fill at its pace, from its readings (two at least, of this same window).
    let full_at: Vec<(Scope, Timestamp)> = feed
        .as_ref()
        .map(|feed| {
            let windows = Windows::new(&state_dir);
            let key = login_key();
            feed.windows
                .iter()
                .filter_map(|w| {
                    let history = windows.history(&key, &w.scope, now);
                    crate::state::forecast::forecast(&history, now)
                        .map(|f| (w.scope.clone(), f.full_at))
                })
                .collect()
        })
        .unwrap_or_default();
    let facts = Facts {
        feed: feed.as_ref(),
        full_at,
        fallbacks: fallback_word(&state_dir),
        rung: std::env::var(crate::launch::child::RUNG_VAR).ok(),
        zone: TimeZone::system(),
        now,
    };
    let mut line = render(&facts);
    if let Some(theirs) = statusline_install::previous_output(&state_dir, &input) {
        line = beside(&line, &theirs);
    }
    println!("{line}");
    ExitCode::SUCCESS
}

/// The fallback word, by the one rule from what is known now: the last check's verdict,
/// or DEGRADED when a fallback failed at a launch since. No configuration that loads: the
/// last verdict alone (the line never fails).
fn fallback_word(state_dir: &std::path::Path) -> Option<String> {
    let last = crate::watch::alerts::last_state(state_dir).state;
    let Ok(config) = crate::config::load(crate::paths::config_file(None)) else {
        return last;
    };
    let first_vendor = config.first_vendor().unwrap_or_default().to_string();
    let known = crate::launch::known::rungs(&config);
    let fallbacks: Vec<&crate::launch::rung_state::RungState> = known
        .iter()
        .filter(|k| k.rung.backend.vendor != first_vendor)
        .map(|k| &k.state)
        .collect();
    crate::launch::rung_state::fallback_word(last.as_deref(), &fallbacks)
}

/// The key this Claude Code's login is known by: the login agent named when it launched
/// this Claude Code on a token (Claude Code hides the token from this command, so agent
/// tells it by name), else what Claude Code's adapter says of this command's environment —
/// which is Claude Code's own: the token's fingerprint when the token is seen, else its
/// configuration directory. A launch keys the same login by the same function from the
/// environment it gives Claude Code, so windows filed here are the ones it parks by.
pub fn login_key() -> String {
    let told = std::env::var(crate::launch::child::CLAUDE_LOGIN_VAR)
        .ok()
        .filter(|login| is_login_name(login));
    crate::adapter::claude::login_key_from_inside(told.as_deref(), &Env::process())
}

/// `account:NAME` or `token:FINGERPRINT`: anything else in the variable (a token pasted
/// there by mistake) is not used as a key.
fn is_login_name(login: &str) -> bool {
    match login.strip_prefix("account:") {
        Some(name) => {
            !name.is_empty()
                && name.len() <= 64
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '@'))
        }
        None => crate::adapter::claude::is_token_identity(login),
    }
}

/// How long a recorded window that says the same as the feed stands without a rewrite:
/// Claude Code refreshes its line every few seconds, and a write (lock, copy, rename) is
/// most of what a refresh would cost.
const SAME_WINDOW_FRESH_FOR: jiff::SignedDuration = jiff::SignedDuration::from_secs(60);

/// Whether every window of the feed is already recorded with the same figures, observed
/// less than [`SAME_WINDOW_FRESH_FOR`] ago.
fn already_known(fresh: &[Window], known: &[Window], now: Timestamp) -> bool {
    fresh.iter().all(|window| {
        known.iter().any(|k| {
            k.scope == window.scope
                && k.resets_at == window.resets_at
                && (k.used_percent - window.used_percent).abs() < f64::EPSILON
                && now.duration_since(k.observed_at) < SAME_WINDOW_FRESH_FOR
        })
    })
}

/// What the line is made of.
pub struct Facts<'a> {
    pub feed: Option<&'a Feed>,
    /// When a window fills at the pace of its readings, where that falls before its reset.
    pub full_at: Vec<(Scope, Timestamp)>,
    /// The last `--check-fallback` verdict (`OK`, `DEGRADED`, `DOWN`), if one ran.
    pub fallbacks: Option<String>,
    /// The rung agent launched this session on (`AGENT_RUNG`), if it did.
    pub rung: Option<String>,
    pub zone: TimeZone,
    pub now: Timestamp,
}

/// `Opus 4.8 · 5h 42% ↺15:00 · 7d 81% ↺Thu 09:00 · fallbacks OK · rung Claude Code (…)`.
pub fn render(facts: &Facts) -> String {
    let mut parts = Vec::new();
    let model = facts
        .feed
        .and_then(|feed| feed.model_name.as_deref().or(feed.model.as_deref()));
    parts.push(printable(model.unwrap_or("Claude")));
    if let Some(feed) = facts.feed {
        for window in &feed.windows {
            let full = facts
                .full_at
                .iter()
                .find(|(scope, _)| *scope == window.scope)
                .map(|(_, at)| *at);
            let mut text = window_text(window, full, &facts.zone, facts.now);
            if window.scope == Scope::SpendLimit
                && let Some(percent) = feed.spend_limit_percent.filter(|p| *p > 100.0)
            {
                // Past its cap, the line says by how much, as Claude Code was told
                // (the recorded window stops at 100: full).
                text = text.replacen("100%", &format!("{percent:.0}%"), 1);
            }
            parts.push(text);
        }
    }
    if let Some(verdict) = &facts.fallbacks {
        parts.push(format!("fallbacks {}", printable(verdict)));
    }
    if let Some(rung) = facts.rung.as_deref().filter(|rung| !rung.is_empty()) {
        parts.push(format!("via {}", printable(rung)));
    }
    parts.join(" · ")
}

/// `5h 42% ↺15:00`: the reset in local time, with the day when it is not today; with a
/// forecast that falls before it, `5h 62% · full ≈14:20 at this pace ↺15:00` (an estimate).
fn window_text(
    window: &Window,
    full: Option<Timestamp>,
    zone: &TimeZone,
    now: Timestamp,
) -> String {
    let name = match &window.scope {
        Scope::FiveHour => "5h".to_string(),
        Scope::Weekly => "7d".to_string(),
        other => other.describe(),
    };
    let today = zone.to_datetime(now).date();
    let at = |when: Timestamp| {
        let local = zone.to_datetime(when);
        if local.date() == today {
            local.strftime("%H:%M").to_string()
        } else {
            local
                .strftime(crate::state::window::other_day_format(when, now))
                .to_string()
        }
    };
    let pace = full.map_or_else(String::new, |full| {
        format!(" · full ≈{} at this pace", at(full))
    });
    format!(
        "{name} {:.0}%{pace} ↺{}",
        window.shown_percent(),
        at(window.resets_at)
    )
}

/// agent's line with the previous statusLine command's output beside it (its first line;
/// any further lines follow, as Claude Code shows several).
fn beside(ours: &str, theirs: &str) -> String {
    let theirs = theirs.trim_end_matches(['\n', '\r']);
    if theirs.trim().is_empty() {
        return ours.to_string();
    }
    format!("{ours} │ {theirs}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(feed: Option<&Feed>) -> Facts<'_> {
        Facts {
            feed,
            full_at: Vec::new(),
            fallbacks: Some("OK".into()),
            rung: Some("Claude Code (claude-opus-5)".into()),
            zone: TimeZone::UTC,
            now: "2026-09-14T12:00:00Z".parse().unwrap(),
        }
    }

    #[test]
    fn the_line_names_model_windows_resets_fallbacks_and_rung() {
        let now: Timestamp = "2026-09-14T12:00:00Z".parse().unwrap();
        let json = r#"{"model":{"id":"claude-opus-4-8","display_name":"Opus\u001b[2J 4.8"},
          "rate_limits":{"five_hour":{"used_percentage":42.4,"resets_at":1789394400},
                         "seven_day":{"used_percentage":81,"resets_at":1789722000}}}"#;
        let feed = claude_statusline::parse(json, now).unwrap();
        let line = render(&facts(Some(&feed)));
        assert_eq!(
            line,
            "Opus 4.8 · 5h 42% ↺14:00 · 7d 81% ↺Fri 09:00 · fallbacks OK · via Claude Code (claude-opus-5)"
        );
    }

    #[test]
    fn a_spend_limit_past_its_cap_shows_the_feeds_figure_and_its_date() {
        let now: Timestamp = "2026-09-14T12:00:00Z".parse().unwrap();
        // As 2.1.332 sends it behind a gateway: 104 % of a monthly limit, reset Oct 1.
        let json = r#"{"model":{"id":"claude-opus-4-8","display_name":"Opus 4.8"},
          "rate_limits":{"five_hour":{"used_percentage":42.4,"resets_at":1789394400},
                         "spend_limit":{"used_percentage":104,"resets_at":1790812800,"period":"monthly"}}}"#;
        let feed = claude_statusline::parse(json, now).unwrap();
        assert_eq!(
            render(&facts(Some(&feed))),
            "Opus 4.8 · 5h 42% ↺14:00 · spend limit 104% ↺Oct 1 00:00 · fallbacks OK · via Claude Code (claude-opus-5)"
        );
        let json = json.replace("104", "60");
        let feed = claude_statusline::parse(&json, now).unwrap();
        assert!(
            render(&facts(Some(&feed))).contains(" · spend limit 60% ↺Oct 1 00:00 · "),
            "{}",
            render(&facts(Some(&feed)))
        );
    }

    #[test]
    fn others_text_on_the_line_loses_control_and_bidi_characters() {
        let now: Timestamp = "2026-09-14T12:00:00Z".parse().unwrap();
        let json =
            r#"{"model":{"id":"claude-opus-4-8","display_name":"\u202eOpus\u2066 4.8\u200f"}}"#;
        let feed = claude_statusline::parse(json, now).unwrap();
        let mut facts = facts(Some(&feed));
        facts.fallbacks = Some("OK\u{202E}".into());
        facts.rung = Some("Claude Code\u{1b}[2J (x)".into());
        assert_eq!(
            render(&facts),
            "Opus 4.8 · fallbacks OK · via Claude Code (x)"
        );
    }

    #[test]
    fn only_a_window_with_news_is_written_again() {
        let now: Timestamp = "2026-09-14T12:00:00Z".parse().unwrap();
        let reset: Timestamp = "2026-09-14T15:00:00Z".parse().unwrap();
        let window = |used: f64, seen: Timestamp| {
            Window::new(
                Scope::FiveHour,
                used,
                reset,
                crate::login::Source::Statusline,
                seen,
            )
            .unwrap()
        };
        let seen = now - jiff::SignedDuration::from_secs(10);
        assert!(already_known(
            &[window(42.0, now)],
            &[window(42.0, seen)],
            now
        ));
        assert!(!already_known(
            &[window(43.0, now)],
            &[window(42.0, seen)],
            now
        ));
        let long_ago = now - jiff::SignedDuration::from_secs(61);
        assert!(!already_known(
            &[window(42.0, now)],
            &[window(42.0, long_ago)],
            now
        ));
        assert!(!already_known(&[window(42.0, now)], &[], now));
    }

    #[test]
    fn no_feed_still_gives_a_line() {
        let mut facts = facts(None);
        facts.fallbacks = None;
        facts.rung = None;
        assert_eq!(render(&facts), "Claude");
    }

    #[test]
    fn the_previous_output_stands_beside() {
        assert_eq!(beside("a", "b\n"), "a │ b");
        assert_eq!(beside("a", "  \n"), "a");
    }

    #[test]
    fn a_forecast_before_the_reset_is_shown_as_an_estimate_beside_the_window() {
        let now: Timestamp = "2026-09-14T12:00:00Z".parse().unwrap();
        let window = Window::new(
            Scope::FiveHour,
            62.0,
            "2026-09-14T15:00:00Z".parse().unwrap(),
            crate::state::window::Source::Statusline,
            now,
        )
        .unwrap();
        let full: Timestamp = "2026-09-14T14:20:00Z".parse().unwrap();
        assert_eq!(
            window_text(&window, Some(full), &TimeZone::UTC, now),
            "5h 62% · full ≈14:20 at this pace ↺15:00"
        );
        assert_eq!(
            window_text(&window, None, &TimeZone::UTC, now),
            "5h 62% ↺15:00"
        );
    }
}
