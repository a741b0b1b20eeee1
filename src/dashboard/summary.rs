//! The line at the top of the page: what a launch would run now, how the fallback stands,
//! and the tightest window — the three things a glance is for.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use jiff::Timestamp;
use serde_json::Value;

use super::html::escape;
use super::logins::{self, LoginName};
use super::rungs::rung_name;
use super::words;
use crate::config::Config;
use crate::state::window::Window;
use crate::watch::alerts::WatchdogState;

/// The rows' states that are a fault now, which a watchdog verdict may predate
/// (`RungState::is_fault`).
const FAULTS: [&str; 3] = ["failed", "cooling", "breaker_open"];

pub struct Facts<'a> {
    pub config: &'a Config,
    pub rows: &'a Value,
    pub watchdog: &'a WatchdogState,
    pub windows: &'a BTreeMap<String, Vec<Window>>,
    pub names: &'a BTreeMap<String, LoginName>,
    pub now: Timestamp,
}

pub fn draw(html: &mut String, facts: &Facts) {
    let rows: Vec<&Value> = facts.rows.as_array().into_iter().flatten().collect();
    let pick = rows
        .iter()
        .find(|row| row["would_pick"].as_bool() == Some(true));
    let _ = write!(
        html,
        "<section class=\"summary\" id=\"summary\" data-pick=\"{}\"><p>",
        pick.and_then(|row| row["rung"].as_u64()).unwrap_or(0)
    );
    match pick {
        Some(row) => {
            let backend = row["backend"].as_str().unwrap_or("");
            let label = facts
                .config
                .backends
                .get(backend)
                .map(|b| b.label.as_str())
                .filter(|label| !label.is_empty() && *label != backend);
            let _ = write!(
                html,
                "<span class=\"part\">A launch runs <strong>{}</strong> (rung {}{})</span>",
                escape(&rung_name(row)),
                row["rung"].as_u64().unwrap_or(0),
                label.map_or_else(String::new, |l| format!(", {}", escape(l)))
            );
        }
        None => html.push_str(
            "<span class=\"part bad\">No rung would run now: a launch passes over every one</span>",
        ),
    }
    html.push_str(" · ");
    fallback(html, facts, &rows);
    html.push_str(" · ");
    tightest(html, facts);
    html.push_str("</p></section>");
}

fn fallback(html: &mut String, facts: &Facts, rows: &[&Value]) {
    let first_vendor = facts.config.first_vendor().unwrap_or_default();
    let faults: Vec<String> = rows
        .iter()
        .filter(|row| row["vendor"].as_str() != Some(first_vendor))
        .filter(|row| FAULTS.contains(&row["state"].as_str().unwrap_or("")))
        .map(|row| {
            format!(
                "{} is {}",
                escape(&rung_name(row)),
                escape(&row["state"].as_str().unwrap_or("").replace('_', " "))
            )
        })
        .collect();
    html.push_str("<span class=\"part\">Fallback: ");
    match facts.watchdog.state.as_deref() {
        Some(verdict) => {
            let class = match verdict {
                "OK" => "ok",
                "DOWN" => "bad",
                _ => "warn",
            };
            let _ = write!(
                html,
                "<strong class=\"{class}\" data-watchdog-summary=\"{}\">{}</strong>",
                escape(verdict),
                escape(verdict)
            );
            if let Some(at) = words::time_of(facts.watchdog.last_check.as_deref(), facts.now) {
                let _ = write!(html, " (checked {at})");
            }
        }
        None => html.push_str("<span class=\"mute\">never checked</span>"),
    }
    if !faults.is_empty() {
        let _ = write!(
            html,
            "; <span class=\"bad\">now {}</span>",
            faults.join(", ")
        );
    }
    html.push_str("</span>");
}

fn tightest(html: &mut String, facts: &Facts) {
    let tightest = facts
        .windows
        .iter()
        .flat_map(|(login, windows)| windows.iter().map(move |w| (login, w)))
        .max_by(|a, b| a.1.used_percent.total_cmp(&b.1.used_percent));
    let Some((login, window)) = tightest else {
        html.push_str("<span class=\"part mute\">no login has reported its windows yet</span>");
        return;
    };
    let name = facts
        .names
        .get(login)
        .cloned()
        .unwrap_or_else(|| logins::of_key(login));
    let _ = write!(
        html,
        "<span class=\"part\">Tightest window: <span title=\"{}\">{}</span> {} at <strong class=\"{}\">{:.0} %</strong>, resets {}</span>",
        escape(&name.detail),
        escape(&name.label),
        escape(&window.scope.describe()),
        if window.is_full() {
            "bad"
        } else if window.used_percent >= 80.0 {
            "warn"
        } else {
            "ok"
        },
        window.shown_percent().clamp(0.0, 100.0),
        words::time(window.resets_at, facts.now)
    );
}
