//! The rung table: one row per rung of `/status.json` (the one rule's state), its login,
//! when it resets or retries, and the "probe now" button; and the rung's name the top line
//! uses too.

use std::fmt::Write as _;

use jiff::Timestamp;
use serde_json::Value;

use super::html::escape;
use super::{logins, words};

/// The rung table, under its heading.
pub fn draw(html: &mut String, rows: &Value, base: &str, form: &str, now: Timestamp) {
    html.push_str("<h2>Rungs</h2><table><thead><tr><th class=\"n\">#</th><th>rung</th><th>state</th><th>why</th><th class=\"n\">last check</th><th class=\"n\">latency</th></tr></thead><tbody>");
    for row in rows.as_array().into_iter().flatten() {
        html.push_str(&rung_row_at(row, now));
    }
    let _ = write!(
        html,
        "</tbody></table><form method=\"post\" action=\"{}/probe\"><input type=\"hidden\" name=\"form\" value=\"{}\"><p><button type=\"submit\">probe now</button> <span class=\"mute\">probes every rung as <code>agent --status</code> does, within the budget; the page never probes on its own</span></p></form>",
        escape(base),
        escape(form)
    );
}

/// `claude / claude-sonnet-5 (sonnet)`: the row's own name, which says the model a launch
/// runs; from an older document without one, the backend and the model it names.
pub fn rung_name(row: &Value) -> String {
    if let Some(name) = row["name"].as_str() {
        return name.to_string();
    }
    let backend = row["backend"].as_str().unwrap_or("");
    match row["model"].as_str() {
        Some(model) => format!("{backend} / {model}"),
        None => backend.to_string(),
    }
}

/// One row of the rung table, from a row of `/status.json` (the one rule's state), as of
/// now: the page draws its rows at the instant it renders, the tests one row at a time.
#[cfg(test)]
pub fn rung_row(row: &Value) -> String {
    rung_row_at(row, Timestamp::now())
}

fn rung_row_at(row: &Value, now: Timestamp) -> String {
    let mut html = String::new();
    let rung = row["rung"].as_u64().unwrap_or(0);
    let state = row["state"].as_str().unwrap_or("unknown");
    let login = logins::of_json(&row["login"]).map_or_else(String::new, |name| {
        format!(
            "<br><small class=\"mute\" title=\"{}\">{}</small>",
            escape(&name.detail),
            escape(&name.label)
        )
    });
    let pick = if row["would_pick"].as_bool() == Some(true) {
        " <span class=\"pick\">← a launch starts here</span>"
    } else {
        ""
    };
    let until = row["until"]
        .as_str()
        .and_then(|until| until.parse::<Timestamp>().ok())
        .map_or_else(String::new, |until| {
            let verb = if state == "parked" { "resets" } else { "retry" };
            format!(
                "<br><small>{}</small>",
                words::time_as(until, &format!("{verb} {}", words::relative(until, now)))
            )
        });
    let age = row["checked_age_seconds"].as_i64().map_or_else(
        || "<span class=\"mute\">not yet</span>".to_string(),
        |seconds| words::time(now - jiff::SignedDuration::from_secs(seconds), now),
    );
    let latency = row["latency_ms"]
        .as_u64()
        .map_or_else(String::new, |ms| format!("{} ms", words::grouped(ms)));
    let _ = write!(
        html,
        "<tr data-rung=\"{rung}\" data-state=\"{}\"><td class=\"n\">{rung}</td><td>{}{pick}{login}</td><td class=\"state\"><span class=\"word\">{}</span>{until}</td><td>{}</td><td class=\"n\">{age}</td><td class=\"n\">{}</td></tr>",
        escape(state),
        escape(&rung_name(row)),
        escape(&state.replace('_', " ")),
        escape(row["reason"].as_str().unwrap_or("")),
        escape(&latency)
    );
    html
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_is_named_by_what_runs_as_the_report_names_it() {
        let row = serde_json::json!({"backend": "claude", "model": "claude-opus-5",
            "name": "claude / claude-opus-5-5"});
        assert_eq!(rung_name(&row), "claude / claude-opus-5-5");
        // A document from before rows carried their name.
        let old = serde_json::json!({"backend": "claude", "model": "claude-opus-5"});
        assert_eq!(rung_name(&old), "claude / claude-opus-5");
    }
}
