//! The last hand-off (DESIGN §21: a session that ran out of its window, continued on
//! another rung with a brief) as `--status` and the dashboard show it: the newest hand-off
//! event of `events.jsonl`, however many other events came after it.

use serde_json::{Value, json};

use crate::support::{Reply, Rule};
use crate::world::{World, world};

const TABLE: &str = r#"
[[rungs]]
backend = "claude"
run_model = "claude-opus-5"

[[rungs]]
backend = "codex"
"#;

/// The first rung's label, as the launch names it in its events.
const FROM: &str = "Claude Code (claude-opus-5)";
const TO: &str = "Codex (its default model)";

/// What the launch records as a hand-off's reason.
fn reason(brief: &str) -> String {
    format!("5-hour limit, resets 10:30 — brief {brief}")
}

/// An `events.jsonl` line as `events::record` writes it.
fn event(time: &str, kind: &str, from: &str, to: &str, reason: &str) -> String {
    json!({"time": time, "event": kind, "from": from, "to": to, "reason": reason}).to_string()
}

/// A sandbox whose events hold an older hand-off, the newest one, and other events around
/// and after them; returns the newest hand-off's brief.
fn handed_off() -> (World, String) {
    let w = world();
    w.sb.write_config(TABLE);
    w.sb.env("TZ", "UTC");
    w.api.on(Rule::any().reply(Reply::ok()));
    let dir = w.sb.state_dir();
    let old_brief = dir.join("handoffs/20261201T090000Z-4711.md");
    let brief = dir
        .join("handoffs/20261202T053007Z-0b9f3c52-7d1e-4c7a-9a55-2f0e6a1d8c41.md")
        .display()
        .to_string();
    let lines = [
        event(
            "2026-12-01T09:00:00Z",
            "handoff",
            "Gemini CLI (gemini-test-pro)",
            FROM,
            &reason(&old_brief.display().to_string()),
        ),
        event("2026-12-02T05:29:00Z", "fallback", FROM, TO, "rate limited"),
        event(
            "2026-12-02T05:30:07.25Z",
            "handoff",
            FROM,
            TO,
            &reason(&brief),
        ),
        event(
            "2026-12-02T05:40:00Z",
            "fastfail",
            TO,
            "",
            "exited 1 after 0s",
        ),
    ];
    std::fs::write(dir.join("events.jsonl"), lines.join("\n") + "\n").unwrap();
    (w, brief)
}

#[test]
fn status_names_the_newest_hand_off_on_one_line() {
    let (w, brief) = handed_off();

    let run = w.sb.run(&["--status"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    let said: Vec<&str> = run
        .stdout
        .lines()
        .filter(|line| line.contains("hand-off"))
        .collect();
    assert_eq!(
        said,
        [format!(
            "last hand-off: Wed 2 Dec 05:30 {FROM} → {TO}: {brief}"
        )],
        "{}",
        run.stdout
    );
}

#[test]
fn status_json_puts_the_newest_hand_off_on_the_row_of_the_rung_it_came_from() {
    let (w, brief) = handed_off();

    let run = w.sb.run(&["--status", "--json"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    let rows: Value = serde_json::from_str(&run.stdout).unwrap();
    let rows = rows.as_array().expect("the rows stay an array");
    assert_eq!(rows.len(), 2, "{rows:#?}");
    assert_eq!(
        rows[0]["last_handoff"],
        json!({"time": "2026-12-02T05:30:07.25Z", "from": FROM, "to": TO, "brief": brief,
            "reason": reason(&brief)}),
        "{rows:#?}"
    );
    assert_eq!(rows[1].get("last_handoff"), None, "{rows:#?}");
}

#[test]
fn status_without_a_hand_off_says_nothing_of_one() {
    let w = world();
    w.sb.write_config(TABLE);
    w.api.on(Rule::any().reply(Reply::ok()));
    std::fs::write(
        w.sb.state_dir().join("events.jsonl"),
        event("2026-12-02T05:29:00Z", "fallback", FROM, TO, "rate limited") + "\n",
    )
    .unwrap();

    let text = w.sb.run(&["--status"]);
    let json = w.sb.run(&["--status", "--json"]);

    assert_eq!(text.code, Some(0), "{text:?}");
    assert!(!text.stdout.contains("hand-off"), "{}", text.stdout);
    assert!(!json.stdout.contains("last_handoff"), "{}", json.stdout);
}

#[test]
fn the_dashboard_names_the_newest_hand_off() {
    let (w, brief) = handed_off();
    let dashboard = crate::dashboard::Dashboard::start(&w.sb);
    let session = dashboard.log_in();

    let page = crate::dashboard::get(&dashboard.addr, "/", &session);

    assert_eq!(page.status, 200, "{page:?}");
    let line = page
        .body
        .split("<p data-last-handoff>")
        .nth(1)
        .and_then(|rest| rest.split("</p>").next())
        .unwrap_or_else(|| panic!("no hand-off line: {}", page.body));
    assert!(
        line.starts_with("last hand-off: <time datetime=\"2026-12-02T05:30:07Z\""),
        "{line}"
    );
    assert!(
        line.ends_with(&format!(" {FROM} → {TO}: <code>{brief}</code>")),
        "{line}"
    );
    assert_eq!(page.body.matches("data-last-handoff").count(), 1);
}
