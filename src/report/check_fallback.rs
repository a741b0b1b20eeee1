//! `agent --check-fallback`: the watchdog's check (DESIGN.md §9). Every independent rung —
//! vendor other than rung 1's — is probed for real, never stopping at the first green one:
//! a fallback that nobody calls is not a fallback. Exit 0 only when all of them answer.

use std::process::ExitCode;
use std::sync::mpsc;

use serde_json::json;

use crate::config::Config;
use crate::error_class::ErrorClass;
use crate::launch::cascade::Status;
use crate::launch::rung::{self, Rung};
use crate::launch::survey;
use crate::report::status::json_row;
use crate::state::health::Store;

/// The watchdog's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Ok,
    Degraded,
    Down,
    /// The daily budget kept some rungs from being called and none was found dead.
    Budget,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Ok => "OK",
            Verdict::Degraded => "DEGRADED",
            Verdict::Down => "DOWN",
            Verdict::Budget => "BUDGET",
        }
    }
}

pub fn run(config: &Config, json: bool) -> anyhow::Result<ExitCode> {
    let first_vendor = config.first_vendor().unwrap_or_default().to_string();
    let rungs: Vec<Rung> = config
        .rungs
        .iter()
        .enumerate()
        .filter(|(_, def)| config.backends[&def.backend].vendor != first_vendor)
        .map(|(i, def)| rung::resolve(config, i + 1, def))
        .collect();
    let state_dir = crate::paths::state_dir();
    let store = Store::new(&state_dir);
    let (tx, rx) = mpsc::channel();
    survey::probe_all(
        config,
        &store,
        &crate::state::meter::Meter::new(&state_dir, config.budget),
        &rungs,
        &tx,
    );
    drop(tx);
    let mut findings: Vec<(usize, Status)> = rx.into_iter().map(|f| (f.index, f.status)).collect();
    findings.sort_by_key(|(index, _)| *index);
    let by_rung = |index: usize| {
        rungs
            .iter()
            .find(|r| r.index == index + 1)
            .expect("probed rung")
    };

    let mention = |(index, status): &(usize, Status)| {
        let extra = match status {
            Status::Good { latency, .. } => survey::latency_note(*latency),
            Status::Failed { .. } => String::new(),
        };
        format!(
            "{} — {}{extra}",
            by_rung(*index).short_name(),
            crate::text::printable(status.reason())
        )
    };
    let alive: Vec<String> = findings
        .iter()
        .filter(|(_, s)| s.is_good())
        .map(mention)
        .collect();
    let unchecked = |status: &Status| {
        matches!(
            status,
            Status::Failed {
                class: ErrorClass::Budget,
                ..
            }
        )
    };
    let dead: Vec<String> = findings
        .iter()
        .filter(|(_, s)| matches!(s, Status::Failed { skip: false, .. }) && !unchecked(s))
        .map(mention)
        .collect();
    // Rungs the budget kept us from calling are neither alive nor dead: the report says so.
    let not_checked: Vec<String> = findings
        .iter()
        .filter(|(_, s)| unchecked(s))
        .map(|(index, _)| by_rung(*index).short_name())
        .collect();
    let budget_note = findings
        .iter()
        .find(|(_, s)| unchecked(s))
        .map(|(_, s)| s.reason().to_string());
    let (verdict, message) = if let (Some(note), true) = (&budget_note, dead.is_empty()) {
        let answered = if alive.is_empty() {
            String::new()
        } else {
            format!("; answered: {}", alive.join("; "))
        };
        (
            Verdict::Budget,
            format!(
                "BUDGET: {note}; not checked: {}{answered}",
                not_checked.join(", ")
            ),
        )
    } else if alive.is_empty() {
        let why = if dead.is_empty() {
            format!("none is configured or installed (every rung is {first_vendor})")
        } else {
            dead.join("; ")
        };
        (
            Verdict::Down,
            format!("DOWN: no provider-independent fallback answers: {why}"),
        )
    } else if dead.is_empty() {
        (
            Verdict::Ok,
            format!(
                "all provider-independent fallbacks OK: {}",
                alive.join("; ")
            ),
        )
    } else {
        (
            Verdict::Degraded,
            format!(
                "DEGRADED: still covered by {} but a rung died: {}",
                alive.join("; "),
                dead.join("; ")
            ),
        )
    };

    let message = match (&budget_note, verdict) {
        (Some(note), Verdict::Degraded | Verdict::Down) => {
            format!(
                "{message}; not checked ({note}): {}",
                not_checked.join(", ")
            )
        }
        _ => message,
    };
    let rows: Vec<_> = findings
        .iter()
        .map(|(i, s)| json_row(by_rung(*i), s))
        .collect();
    let rows = serde_json::Value::Array(rows);
    // The verdict is printed first: alert delivery may take a while, and never changes it.
    if json {
        crate::report::emit_json(
            &json!({"state": verdict.as_str(), "message": message, "rungs": rows}),
        )?;
    } else {
        crate::report::emit(&format!("{message}\n"))?;
    }
    // A budget stop is no news about the fallbacks: the last verdict stands, nothing is sent.
    if verdict != Verdict::Budget {
        crate::watch::alerts::after_check(
            &config.alerts,
            &state_dir,
            verdict.as_str(),
            &message,
            &rows,
        );
    }
    crate::watch::alerts::after_account_checks(config, &state_dir);
    super::warn_expiring(config);
    Ok(match verdict {
        Verdict::Ok => ExitCode::SUCCESS,
        Verdict::Degraded | Verdict::Down => ExitCode::from(1),
        // Nothing could be checked without spending: exit 75, never a false DOWN.
        Verdict::Budget => crate::exit_codes::ExitStatus::Budget.into(),
    })
}
