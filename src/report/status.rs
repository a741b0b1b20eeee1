//! `agent --status`: every rung probed for real, in parallel, ignoring the cache and
//! cooldowns. Rows come in table order, each printed as soon as it and every row above it
//! are known; on a terminal a progress line says what is still being waited for.

use std::fmt::Write as _;
use std::io::{IsTerminal as _, Write as _};
use std::process::ExitCode;
use std::sync::mpsc;

use serde_json::json;

use crate::config::Config;
use crate::error_class::ErrorClass;
use crate::launch::cascade::Status;
use crate::launch::rung::{self, Rung};
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

    let (tx, rx) = mpsc::channel();
    let mut statuses: Vec<Option<Status>> = vec![None; rungs.len()];
    let mut printed = 0;
    let mut received = 0;
    std::thread::scope(|scope| -> anyhow::Result<()> {
        scope.spawn(|| survey::probe_all(config, &store, &meter, &rungs, &tx));
        let mut out = std::io::stdout().lock();
        while received < rungs.len() {
            let Ok(Finding { index, status }) = rx.recv() else {
                break;
            };
            received += 1;
            statuses[index] = Some(status);
            let mut chunk = String::new();
            if live {
                chunk.push_str("\r\x1b[2K");
            }
            while let Some(Some(status)) = statuses.get(printed) {
                let _ = writeln!(chunk, "{}", row(&names[printed], width, status));
                printed += 1;
            }
            if live && printed < rungs.len() {
                let pending: Vec<&str> = (printed..rungs.len())
                    .filter(|&i| statuses[i].is_none())
                    .map(|i| names[i].as_str())
                    .collect();
                let _ = write!(chunk, "probing… waiting for {}", pending.join(", "));
            }
            out.write_all(chunk.as_bytes())?;
            out.flush()?;
        }
        Ok(())
    })?;

    super::warn_expiring(config);
    Ok(ExitCode::SUCCESS)
}

/// Every rung resolved, the login rungs' windows asked (with `login_usage` on: a login
/// rung is never probed), and the store and meter the survey records through.
fn survey_ready(config: &Config) -> (Vec<Rung<'_>>, Store, crate::state::meter::Meter) {
    let rungs: Vec<Rung> = config
        .rungs
        .iter()
        .enumerate()
        .map(|(i, def)| rung::resolve(config, i + 1, def))
        .collect();
    let state_dir = crate::paths::state_dir();
    // A login rung is never probed: with `login_usage` on, its windows are asked instead.
    for rung in &rungs {
        crate::launch::login_usage::ask(config, rung, &state_dir, jiff::Timestamp::now());
    }
    (
        rungs,
        Store::new(&state_dir),
        crate::state::meter::Meter::new(&state_dir, config.budget),
    )
}

/// Every rung probed for real, as `--status --json` prints it (the dashboard's "probe
/// now" does exactly this).
pub fn probe_document(config: &Config) -> serde_json::Value {
    let (rungs, store, meter) = survey_ready(config);
    let (tx, rx) = mpsc::channel();
    let mut statuses: Vec<Option<Status>> = vec![None; rungs.len()];
    std::thread::scope(|scope| {
        scope.spawn(|| survey::probe_all(config, &store, &meter, &rungs, &tx));
        for _ in 0..rungs.len() {
            let Ok(Finding { index, status }) = rx.recv() else {
                break;
            };
            statuses[index] = Some(status);
        }
    });
    let rows: Vec<_> = rungs
        .iter()
        .zip(&statuses)
        .filter_map(|(rung, status)| Some(json_row(rung, status.as_ref()?)))
        .collect();
    serde_json::Value::Array(rows)
}

/// Every rung as already known — health, windows, the table — with no call made: the
/// dashboard's `/status.json`. The rows of `--status --json`, with the states a launch
/// sees (`ok`, `unprobed`, `unknown`, `parked`, `cooling`, `breaker_open`, `skipped`),
/// until when, the last check's age and latency, and the rung a launch would pick now.
pub fn known_document(config: &Config) -> serde_json::Value {
    let now_ms = crate::state::health::now_ms();
    let rows: Vec<_> = crate::launch::known::rungs(config)
        .iter()
        .map(|known| {
            let rung = &known.rung;
            let until = known.state.until_ms().and_then(|ms| {
                jiff::Timestamp::from_millisecond(i64::try_from(ms).ok()?)
                    .ok()
                    .map(|t| t.to_string())
            });
            json!({
                "rung": rung.index,
                "backend": rung.backend.name,
                "vendor": rung.backend.vendor,
                "model": rung.probe_model,
                "state": known.state.as_str(),
                "reason": known.reason,
                "until": until,
                "checked_age_seconds": known.checked_ms.map(|at| now_ms.saturating_sub(at) / 1000),
                "latency_ms": known.latency_ms,
                "would_pick": known.would_pick,
                "login": super::list::login_json(rung),
            })
        })
        .collect();
    serde_json::Value::Array(rows)
}

/// `OK   claude / claude-opus-5   api.anthropic.com reachable, claude-opus-5 answered (312 ms)`
pub fn row(name: &str, width: usize, status: &Status) -> String {
    let (state, text) = match status {
        Status::Good {
            reason, latency, ..
        } => ("OK", format!("{reason}{}", survey::latency_note(*latency))),
        Status::Failed {
            reason, skip: true, ..
        }
        | Status::Failed {
            class: ErrorClass::Budget,
            reason,
            ..
        } => ("SKIP", reason.clone()),
        Status::Failed { class, reason, .. } => ("FAIL", format!("{class}: {reason}")),
    };
    let state = paint(state);
    // Reasons quote others (an upstream's body, a CLI's words, a window's name).
    let (name, text) = (crate::text::printable(name), crate::text::printable(&text));
    format!("{state} {name:width$}   {text}")
}

fn paint(state: &str) -> String {
    use owo_colors::OwoColorize as _;
    let padded = format!("{state:4}");
    if !crate::term::color_stdout() {
        return padded;
    }
    match state {
        "OK" => padded.green().to_string(),
        "FAIL" => padded.red().to_string(),
        _ => padded.dimmed().to_string(),
    }
}

pub fn json_row(rung: &Rung, status: &Status) -> serde_json::Value {
    let (state, class, latency) = match status {
        Status::Good { latency, .. } => ("ok", "ok", latency.map(|l| l.as_millis())),
        Status::Failed {
            class, skip: true, ..
        } => ("skip", class.as_str(), None),
        Status::Failed {
            class: ErrorClass::Budget,
            ..
        } => ("budget", "budget_exhausted", None),
        Status::Failed { class, .. } => ("fail", class.as_str(), None),
    };
    json!({
        "rung": rung.index,
        "backend": rung.backend.name,
        "vendor": rung.backend.vendor,
        "model": rung.probe_model,
        "state": state,
        "class": class,
        "reason": status.reason(),
        "latency_ms": latency,
        "login": super::list::login_json(rung),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_quoting_others_shows_none_of_their_control_or_bidi_characters() {
        let status = Status::Failed {
            class: ErrorClass::RateLimited,
            reason: "429 \u{202E}detats\u{202C} \u{1b}]0;pwned\u{7}slow down".into(),
            skip: false,
        };
        let line = row("claude / m\u{200F}", 12, &status);
        assert!(line.ends_with("429 detats ]0;pwnedslow down"), "{line:?}");
        assert!(line.contains(" claude / m "), "{line:?}");
        assert!(!line.chars().any(crate::text::is_unprintable), "{line:?}");
    }
}
