//! `agent --status`: every rung probed for real, in parallel, ignoring the cache and
//! cooldowns. Rows come in table order, each printed as soon as it and every row above it
//! are known; on a terminal a progress line says what is still being waited for.

use std::fmt::Write as _;
use std::io::{IsTerminal as _, Write as _};
use std::process::ExitCode;
use std::sync::mpsc;

use serde_json::json;

use crate::config::Config;
use crate::launch::resolve;
use crate::launch::rung::Rung;
use crate::launch::rung_state::RungState;
use crate::launch::survey::{self, Finding};
use crate::state::health::Store;

pub fn run(config: &Config, json: bool) -> anyhow::Result<ExitCode> {
    if json {
        let rows = probe_document(config);
        super::warn_expiring(config);
        crate::report::emit_json(&rows)?;
        return Ok(ExitCode::SUCCESS);
    }
    let (rungs, store, meter) = survey_ready(config);
    let names: Vec<String> = rungs.iter().map(Rung::short_name).collect();
    let width = names.iter().map(|n| n.chars().count()).max().unwrap_or(0);
    let live = std::io::stdout().is_terminal();
    let columns = crate::term::stdout_columns();
    let mut rows = super::rows::Rows::new(width, columns, 0);
    let dir = std::env::current_dir().unwrap_or_else(|_| std::path::PathBuf::from("."));

    let (tx, rx) = mpsc::channel();
    let mut states: Vec<Option<RungState>> = vec![None; rungs.len()];
    let mut printed = 0;
    let mut received = 0;
    std::thread::scope(|scope| -> anyhow::Result<()> {
        scope.spawn(|| survey::check_all(config, &store, &meter, &rungs, &dir, &tx));
        let mut out = std::io::stdout().lock();
        while received < rungs.len() {
            let Ok(Finding { index, state }) = rx.recv() else {
                break;
            };
            received += 1;
            states[index] = Some(state);
            let mut chunk = String::new();
            if live {
                chunk.push_str("\r\x1b[2K");
            }
            let now_ms = crate::state::health::now_ms();
            while let Some(Some(state)) = states.get(printed) {
                // A backend skipped for one reason (no proxy configured) is one line, not
                // one per rung — whichever check answers first: a skipped row waits for the
                // next rung of its backend to be known before it is printed.
                let same_backend = |next: usize| {
                    rungs
                        .get(next)
                        .is_some_and(|r| r.backend.name == rungs[printed].backend.name)
                };
                let mut fold = 1;
                let mut unknown_below = false;
                while matches!(state, RungState::Skipped { .. }) && same_backend(printed + fold) {
                    match states.get(printed + fold).and_then(Option::as_ref) {
                        None => {
                            unknown_below = true;
                            break;
                        }
                        Some(next) if next == state => fold += 1,
                        Some(_) => break,
                    }
                }
                if unknown_below {
                    break;
                }
                let line = if fold > 1 {
                    let name = format!("{} ({fold} rungs)", rungs[printed].backend.name);
                    rows.row(&name, state, now_ms)
                } else {
                    rows.rung(&rungs[printed], state, now_ms)
                };
                let _ = writeln!(chunk, "{line}");
                printed += fold;
            }
            if live && printed < rungs.len() {
                let pending: Vec<&str> = (printed..rungs.len())
                    .filter(|&i| states[i].is_none())
                    .map(|i| names[i].as_str())
                    .collect();
                // One line, or the next rewrite would leave its first lines behind.
                let waiting = format!("checking… waiting for {}", pending.join(", "));
                let _ = match columns {
                    Some(columns) if waiting.chars().count() >= columns => {
                        let cut: String = waiting.chars().take(columns.saturating_sub(2)).collect();
                        write!(chunk, "{cut}…")
                    }
                    _ => write!(chunk, "{waiting}"),
                };
            }
            out.write_all(chunk.as_bytes())?;
            out.flush()?;
        }
        Ok(())
    })?;

    if let Some(line) = last_handoff(&crate::paths::state_dir())
        .as_ref()
        .and_then(handoff_line)
    {
        match columns {
            Some(columns) => println!("{}", crate::text::wrap(&line, 0, 2, columns).join("\n  ")),
            None => println!("{line}"),
        }
    }
    super::warn_expiring(config);
    Ok(ExitCode::SUCCESS)
}

/// How many of the newest events the last hand-off is looked for among.
const HANDOFF_SCAN: usize = 1000;

/// The newest hand-off event (DESIGN §21), if there was one — with `refused`, the reason,
/// when the rung it went to did not take it up ([`refusal_after`]).
pub fn last_handoff(state_dir: &std::path::Path) -> Option<serde_json::Value> {
    let recent = crate::state::events::recent(state_dir, HANDOFF_SCAN);
    let at = recent
        .iter()
        .rposition(|event| event["event"] == "handoff")?;
    let mut handoff = recent[at].clone();
    if let Some(reason) = refusal_after(&handoff, &recent[at + 1..]) {
        handoff["refused"] = serde_json::json!(reason);
    }
    Some(handoff)
}

/// Why the rung `handoff` went to refused it, from the events `after` it: the first
/// `handoff_refused` that rung recorded.
pub fn refusal_after(handoff: &serde_json::Value, after: &[serde_json::Value]) -> Option<String> {
    after
        .iter()
        .find(|event| event["event"] == "handoff_refused" && event["from"] == handoff["to"])
        .map(|event| event["reason"].as_str().unwrap_or("").to_string())
}

/// `last hand-off: Wed 2 Dec 05:30 Claude Code (claude-opus-5) → Codex (gpt-6.2-sol): PATH`,
/// in local time.
pub fn handoff_line(event: &serde_json::Value) -> Option<String> {
    let at: jiff::Timestamp = event["time"].as_str()?.parse().ok()?;
    let when = at
        .to_zoned_datetime(jiff::tz::TimeZone::system())
        .strftime("%a %-d %b %H:%M");
    let field = |name: &str| crate::text::printable(event[name].as_str().unwrap_or("?"));
    let reason = event["reason"].as_str().unwrap_or("");
    let said = match event["refused"].as_str() {
        Some(why) => format!("refused — {} {why}", field("to")),
        None => brief_of(reason).unwrap_or(reason).to_string(),
    };
    Some(format!(
        "last hand-off: {when} {} → {}: {}",
        field("from"),
        field("to"),
        crate::text::printable(&said)
    ))
}

/// The brief a hand-off event's reason names: the launch writes `<limit> — brief <PATH>`
/// (or the limit alone when no brief could be written).
pub fn brief_of(reason: &str) -> Option<&str> {
    reason
        .rsplit_once(" — brief ")
        .map(|(_, path)| path)
        .filter(|path| !path.is_empty())
}

/// A hand-off event as `--status --json` shows it on the row of the rung it came from.
fn handoff_json(event: &serde_json::Value) -> serde_json::Value {
    let reason = event["reason"].as_str().unwrap_or("");
    let mut said = json!({
        "time": event["time"],
        "from": event["from"],
        "to": event["to"],
        "brief": brief_of(reason),
        "reason": reason,
    });
    if !event["refused"].is_null() {
        said["refused"] = event["refused"].clone();
    }
    said
}

/// Every rung resolved, the login rungs' windows asked where their vendors answer for them
/// (`launch::ask_windows`, `login_usage = true`; all at once, so a slow one costs one
/// bound), and the store and meter the survey records through.
pub fn survey_ready(config: &Config) -> (Vec<Rung<'_>>, Store, crate::state::meter::Meter) {
    let rungs = resolve::all(config);
    let state_dir = crate::paths::state_dir();
    let now = jiff::Timestamp::now();
    std::thread::scope(|scope| {
        for rung in &rungs {
            let state_dir = &state_dir;
            scope.spawn(move || {
                let survey = crate::launch::ask_windows::Occasion::Survey;
                crate::launch::ask_windows::ask(config, rung, state_dir, now, survey)
            });
        }
    });
    (
        rungs,
        Store::new(&state_dir),
        crate::state::meter::Meter::new(&state_dir, config.budget),
    )
}

/// Every rung checked for real, as `--status --json` prints it (the dashboard's "probe
/// now" does exactly this).
pub fn probe_document(config: &Config) -> serde_json::Value {
    let (rungs, store, meter) = survey_ready(config);
    let dir = std::env::current_dir().unwrap_or_else(|_| std::path::PathBuf::from("."));
    let (tx, rx) = mpsc::channel();
    let mut states: Vec<Option<RungState>> = vec![None; rungs.len()];
    std::thread::scope(|scope| {
        scope.spawn(|| survey::check_all(config, &store, &meter, &rungs, &dir, &tx));
        for _ in 0..rungs.len() {
            let Ok(Finding { index, state }) = rx.recv() else {
                break;
            };
            states[index] = Some(state);
        }
    });
    let now_ms = crate::state::health::now_ms();
    let health = store.load();
    // The rows stay the rows scripts read (an array, one per rung): the last hand-off is
    // a field of the row of the rung it came from.
    let handoff = last_handoff(&crate::paths::state_dir());
    let rows: Vec<_> = rungs
        .iter()
        .zip(&states)
        .filter_map(|(rung, state)| {
            let mut row = json_row(rung, state.as_ref()?, &health, now_ms);
            if let Some(event) = handoff
                .as_ref()
                .filter(|event| event["from"].as_str() == Some(rung.label().as_str()))
            {
                row["last_handoff"] = handoff_json(event);
            }
            Some(row)
        })
        .collect();
    serde_json::Value::Array(rows)
}

/// Every rung as already known — health, windows, the table — with no call made: the
/// dashboard's `/status.json`. The rows of `--status --json`, with the rung a launch would
/// pick now.
pub fn known_document(config: &Config) -> serde_json::Value {
    let now_ms = crate::state::health::now_ms();
    let health = Store::new(&crate::paths::state_dir()).load();
    let rows: Vec<_> = crate::launch::known::rungs(config)
        .iter()
        .map(|known| {
            let mut row = json_row(&known.rung, &known.state, &health, now_ms);
            row["would_pick"] = json!(known.would_pick);
            row
        })
        .collect();
    serde_json::Value::Array(rows)
}

/// A row of `--status --json`, `--check-fallback --json` and the dashboard: the rung, its
/// state by the one rule, and how long ago a check last reached it (`health`'s record of
/// its target) — also when the state no longer rests on that check (an answer no longer
/// trusted, a login parked by what it found), which the page once called "not yet".
pub fn json_row(
    rung: &Rung,
    state: &RungState,
    health: &crate::state::health::HealthFile,
    now_ms: u64,
) -> serde_json::Value {
    let mut row = json!({
        "rung": rung.index,
        "name": rung.short_name(),
        "backend": rung.backend.name,
        "vendor": rung.backend.vendor,
        "model": rung.probe_model,
        "runs": super::list::runs_json(rung),
        "login": super::list::login_json(rung),
    });
    if let (Some(row), serde_json::Value::Object(state)) = (row.as_object_mut(), state.json(now_ms))
    {
        row.extend(state);
    }
    let checked_ms = rung
        .state
        .as_ref()
        .ok()
        .and_then(|ready| health.get(&ready.plan.target))
        .map(|record| record.checked_ms);
    if row["checked_age_seconds"].is_null()
        && let Some(at) = checked_ms
    {
        row["checked_age_seconds"] = json!(now_ms.saturating_sub(at) / 1000);
    }
    row
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hand_off_names_its_brief_or_else_its_limit() {
        let event = |reason: &str| {
            json!({"time": "2026-12-02T05:30:07Z", "event": "handoff",
                "from": "Claude Code (claude-opus-5)", "to": "Codex (gpt-6.2-sol)", "reason": reason})
        };
        let with = event("5-hour limit, resets 10:30 — brief /s/handoffs/a.md");
        assert_eq!(handoff_json(&with)["brief"], "/s/handoffs/a.md");
        assert!(
            handoff_line(&with)
                .unwrap()
                .ends_with(" → Codex (gpt-6.2-sol): /s/handoffs/a.md")
        );
        let without = event("5-hour limit, resets 10:30");
        assert_eq!(handoff_json(&without)["brief"], serde_json::Value::Null);
        assert!(
            handoff_line(&without)
                .unwrap()
                .ends_with(": 5-hour limit, resets 10:30")
        );
        assert_eq!(handoff_line(&json!({"event": "handoff"})), None);
        let mut refused = with.clone();
        refused["refused"] = json!("refused this folder (exit 1): not a git repository");
        assert!(
            handoff_line(&refused).unwrap().ends_with(
                " → Codex (gpt-6.2-sol): refused — Codex (gpt-6.2-sol) refused this folder (exit 1): not a git repository"
            )
        );
        assert_eq!(handoff_json(&refused)["refused"], refused["refused"]);
    }
}
