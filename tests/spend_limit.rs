//! A Claude apps gateway's spend limit (DESIGN §22): Claude Code 2.1.332 behind `claude
//! gateway` reports `rate_limits.spend_limit` to its statusline beside the subscription
//! windows; past 100 % it parks the login's Claude rungs until its period resets, and every
//! face says so.

use jiff::{SignedDuration, Timestamp};

use crate::statusline::statusline;
use crate::support::Sandbox;
use crate::world::{CLAUDE_THEN_CODEX, world};

/// The feed as 2.1.332 builds it behind a gateway (`spend_limit.used_percentage` is
/// `Math.round(utilization*1000)/10`, not clamped at 100; `used_usd`, `limit_usd` and
/// `period` optional), with the spend limit at `percent` and resetting at `resets_at`.
fn gateway_feed(percent: f64, resets_at: Timestamp) -> String {
    let five = (Timestamp::now() + SignedDuration::from_hours(2)).as_second();
    let resets = resets_at.as_second();
    format!(
        r#"{{"session_id":"abc123","cwd":"/tmp","model":{{"id":"claude-opus-4-8","display_name":"Opus 4.8"}},
           "version":"2.1.332","rate_limits":{{"five_hour":{{"used_percentage":12.0,"resets_at":{five}}},
           "spend_limit":{{"used_percentage":{percent},"resets_at":{resets},"used_usd":52.0,"limit_usd":50.0,"period":"monthly"}}}}}}"#
    )
}

/// A monthly period's end, ten days ahead, on a whole minute.
fn period_end() -> Timestamp {
    let at = Timestamp::now() + SignedDuration::from_hours(10 * 24);
    Timestamp::from_second(at.as_second() / 60 * 60).unwrap()
}

/// The reset as the notices say it (local time, the sandbox's zone is UTC): `Dec 12 06:00`.
fn reset_words(at: Timestamp) -> String {
    at.to_zoned_datetime(jiff::tz::TimeZone::UTC)
        .strftime("%b %-d %H:%M")
        .to_string()
}

fn utc(sb: &Sandbox) {
    sb.env("TZ", "UTC");
}

#[test]
fn a_spend_limit_past_its_cap_parks_claude_until_its_reset_and_every_face_says_so() {
    let w = world();
    utc(&w.sb);
    w.sb.write_config(CLAUDE_THEN_CODEX);
    let reset = period_end();
    let (code, line, stderr) = statusline(&w.sb, &gateway_feed(104.0, reset));
    assert_eq!(code, Some(0), "{stderr}");
    // The line shows the figure Claude Code was told, past the cap.
    assert!(
        line.contains(&format!("spend limit 104% ↺{}", reset_words(reset))),
        "{line}"
    );

    let run = w.sb.run(&["-p", "hi"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(w.sb.calls("claude").is_empty(), "the parked login ran");
    assert_eq!(w.api.posts_for_model("claude-opus-5"), 0, "probed");
    assert_eq!(w.sb.calls("codex").len(), 1, "{}", run.stderr);
    let notice = format!(
        "[agent] Claude Code (its default model) unavailable — spend limit, resets {}",
        reset_words(reset)
    );
    assert!(run.stderr.contains(&notice), "{}", run.stderr);

    let status = w.sb.run(&["--status"]);
    let row = status
        .stdout
        .lines()
        .find(|l| l.split_whitespace().nth(1) == Some("claude"))
        .unwrap_or_else(|| panic!("{status:?}"));
    assert!(row.contains("PARKED"), "{row}");
    assert!(
        row.contains(&format!("spend limit, resets {}", reset_words(reset))),
        "{row}"
    );

    // The dashboard: the rung's state, and the login's window beside its 5-hour one.
    let dashboard = crate::dashboard::Dashboard::start(&w.sb);
    let session = dashboard.log_in();
    let page = crate::dashboard::get(&dashboard.addr, "/", &session);
    assert_eq!(page.status, 200, "{page:?}");
    assert!(page.body.contains("spend limit, resets "), "{}", page.body);
    assert!(
        page.body
            .contains(r#"data-window="spend" data-percent="100""#),
        "{}",
        page.body
    );
}

#[test]
fn a_spend_limit_at_60_percent_parks_nothing() {
    let w = world();
    utc(&w.sb);
    w.sb.write_config(CLAUDE_THEN_CODEX);
    let reset = period_end();
    let (code, line, stderr) = statusline(&w.sb, &gateway_feed(60.0, reset));
    assert_eq!(code, Some(0), "{stderr}");
    assert!(line.contains("spend limit 60% ↺"), "{line}");
    // Recorded, so what follows is the decision on it, not a feed left unread.
    let windows = std::fs::read_to_string(w.sb.state_dir().join("windows.json")).unwrap();
    assert!(
        windows.contains(r#"{"scope":{"kind":"spend_limit"},"used_percent":60.0"#),
        "{windows}"
    );

    let run = w.sb.run(&["-p", "hi"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(w.sb.calls("claude").len(), 1, "{}", run.stderr);
    assert!(w.sb.calls("codex").is_empty(), "{}", run.stderr);
    assert!(!run.stderr.contains("spend limit"), "{}", run.stderr);
    let status = w.sb.run(&["--status"]);
    assert!(!status.stdout.contains("PARKED"), "{status:?}");
    assert!(!status.stdout.contains("spend limit,"), "{status:?}");
}
