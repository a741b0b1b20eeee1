//! `agent --check-fallback`: the watchdog's check (DESIGN.md §9). Every independent rung —
//! vendor other than rung 1's — is checked for real (an API probe, or the CLI's own check
//! for a login), never stopping at the first green one: a fallback that nobody calls is
//! not a fallback. Exit 0 only when all of them are proved to answer now.

use std::fmt::Write as _;
use std::process::ExitCode;
use std::sync::mpsc;

use serde_json::json;

use crate::config::Config;
use crate::error_class::ErrorClass;
use crate::launch::rung::Rung;
use crate::launch::rung_state::RungState;
use crate::launch::survey;
use crate::report::status::json_row;

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
    let (all, store, meter) = crate::report::status::survey_ready(config);
    let rungs: Vec<Rung> = all
        .into_iter()
        .filter(|rung| rung.backend.vendor != first_vendor)
        .collect();
    let state_dir = crate::paths::state_dir();
    // The watchdog's job runs in the directory it was installed for: a launch's directory.
    let dir = std::env::current_dir().unwrap_or_else(|_| std::path::PathBuf::from("."));
    let (tx, rx) = mpsc::channel();
    survey::check_all(config, &store, &meter, &rungs, &dir, &tx);
    drop(tx);
    let mut findings: Vec<(usize, RungState)> =
        rx.into_iter().map(|f| (f.index, f.state)).collect();
    findings.sort_by_key(|(index, _)| *index);
    let by_rung = |index: usize| {
        rungs
            .iter()
            .find(|r| r.index == index + 1)
            .expect("checked rung")
    };
    let named: Vec<(String, &RungState)> = findings
        .iter()
        .map(|(index, state)| (by_rung(*index).short_name(), state))
        .collect();
    let now_ms = crate::state::health::now_ms();
    let (verdict, message) = judge(&named, &first_vendor, now_ms);
    let health = crate::state::health::Store::new(&crate::paths::state_dir()).load();
    let rows: Vec<_> = findings
        .iter()
        .map(|(i, state)| json_row(by_rung(*i), state, &health, now_ms))
        .collect();
    let rows = serde_json::Value::Array(rows);
    // The first vendor's rungs are not fallbacks and are not called here; what is known of
    // them (a parked window, a failed launch) is shown beside, as every face shows it.
    let primary: Vec<_> = crate::launch::known::rungs(config)
        .into_iter()
        .filter(|known| known.rung.backend.vendor == first_vendor)
        .collect();
    // The verdict is printed first: alert delivery may take a while, and never changes it.
    if json {
        let primary: Vec<_> = primary
            .iter()
            .map(|known| json_row(&known.rung, &known.state, &health, now_ms))
            .collect();
        crate::report::emit_json(&json!({
            "state": verdict.as_str(),
            "message": message,
            "rungs": rows,
            "primary": primary,
        }))?;
    } else {
        let primary_names: Vec<(String, &RungState)> = primary
            .iter()
            .map(|known| (known.rung.short_name(), &known.state))
            .collect();
        let checked: Vec<(&Rung, &RungState)> = findings
            .iter()
            .map(|(index, state)| (by_rung(*index), state))
            .collect();
        let width = named
            .iter()
            .chain(&primary_names)
            .map(|(n, _)| n.chars().count())
            .max()
            .unwrap_or(0);
        let mut text = format!("{}\n", crate::text::printable(&message));
        let mut rows = crate::report::rows::Rows::new(width, crate::term::stdout_columns(), 2);
        for (rung, state) in checked.iter().filter(|(_, s)| !is_absent(s)) {
            let _ = writeln!(text, "  {}", rows.rung(rung, state, now_ms));
        }
        let shown: Vec<_> = primary
            .iter()
            .filter(|known| !is_absent(&known.state))
            .collect();
        if !shown.is_empty() {
            let _ = writeln!(
                text,
                "primary vendor ({first_vendor}), as known — not checked here:"
            );
            for known in shown {
                let _ = writeln!(text, "  {}", rows.rung(&known.rung, &known.state, now_ms));
            }
        }
        crate::report::emit(&text)?;
    }
    // A budget stop is no news about the fallbacks: the last verdict stands, nothing is sent.
    if verdict != Verdict::Budget {
        // An alert says what died, what still covers and why: the verdict and every row.
        let width = named
            .iter()
            .map(|(n, _)| n.chars().count())
            .max()
            .unwrap_or(0);
        let mut alert = message.clone();
        let mut lines = crate::report::rows::Rows::new(width, None, 0);
        for (index, state) in findings.iter().filter(|(_, s)| !is_absent(s)) {
            let _ = write!(
                alert,
                "\n{}",
                lines.plain_rung(by_rung(*index), state, now_ms)
            );
        }
        crate::watch::alerts::after_check(
            &config.alerts,
            &state_dir,
            verdict.as_str(),
            &alert,
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

/// A built-in rung whose CLI is not installed (or whose proxy is not set): never an option,
/// so neither cover nor fault, and not shown.
fn is_absent(state: &RungState) -> bool {
    matches!(
        state,
        RungState::Skipped {
            not_installed: true,
            ..
        }
    ) && !is_not_set_up_or_off(state)
}

/// A CLI not set up, or a backend turned off: no option either, but its row is shown, to
/// say how to set it up or that it is off.
fn is_not_set_up_or_off(state: &RungState) -> bool {
    matches!(
        state,
        RungState::Skipped {
            not_installed: true,
            class: ErrorClass::NotSetUp | ErrorClass::Disabled,
            ..
        }
    )
}

/// The verdict on the independent rungs, and its one line: OK only when every one that could
/// be an option is proved now; a rung not proved, parked or failed is never counted as cover.
pub fn judge(rungs: &[(String, &RungState)], first_vendor: &str, now_ms: u64) -> (Verdict, String) {
    // The verdict names each rung with the gist of its state; its row below says the rest.
    let mention = |(name, state): &&(String, &RungState)| match state.gist(now_ms) {
        Some(gist) => format!("{name} ({gist})"),
        None => name.clone(),
    };
    let of = |keep: fn(&RungState) -> bool| -> Vec<&(String, &RungState)> {
        rungs.iter().filter(|(_, state)| keep(state)).collect()
    };
    let alive = of(RungState::is_proved);
    let dead = of(|s| {
        s.is_fault()
            || matches!(
                s,
                RungState::Skipped {
                    not_installed: false,
                    ..
                }
            )
    });
    let parked = of(|s| matches!(s, RungState::Parked { .. }));
    let unproved = of(|s| matches!(s, RungState::NotProved { .. } | RungState::Unchecked));
    let unchecked = of(|s| matches!(s, RungState::Budget { .. }));
    // Installed but not set up, or turned off: no cover, and no fault either.
    let no_option = of(is_not_set_up_or_off);
    let join =
        |list: &[&(String, &RungState)]| list.iter().map(mention).collect::<Vec<_>>().join(", ");
    let names = |list: &[&(String, &RungState)]| {
        list.iter()
            .map(|(n, _)| n.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    // What is wrong besides dead rungs, each said once.
    let mut besides = Vec::new();
    if !parked.is_empty() {
        besides.push(format!("parked: {}", join(&parked)));
    }
    if !unproved.is_empty() {
        besides.push(format!("not proved: {}", join(&unproved)));
    }
    if let Some((_, RungState::Budget { reason })) = unchecked.first() {
        besides.push(format!("not checked ({reason}): {}", names(&unchecked)));
    }
    let besides = |lead: &str| -> String {
        if besides.is_empty() {
            String::new()
        } else {
            format!("{lead}{}", besides.join("; "))
        }
    };
    if let (Some(_), true) = (unchecked.first(), dead.is_empty()) {
        let answered = if alive.is_empty() {
            String::new()
        } else {
            format!("; answered: {}", join(&alive))
        };
        let Some((_, RungState::Budget { reason })) = unchecked.first() else {
            unreachable!("a budget state")
        };
        return (
            Verdict::Budget,
            format!(
                "BUDGET: {reason}; not checked: {}{answered}",
                names(&unchecked)
            ),
        );
    }
    if alive.is_empty() {
        let why = if dead.is_empty() && parked.is_empty() && unproved.is_empty() {
            if no_option.is_empty() {
                format!("none is configured or installed (every rung is {first_vendor})")
            } else {
                format!("none is set up: {}", join(&no_option))
            }
        } else {
            let mut all = Vec::new();
            if !dead.is_empty() {
                all.push(join(&dead));
            }
            all.push(besides(""));
            all.retain(|part| !part.is_empty());
            all.join("; ")
        };
        return (
            Verdict::Down,
            format!("DOWN: no provider-independent fallback answers: {why}"),
        );
    }
    if dead.is_empty() && parked.is_empty() && unproved.is_empty() {
        return (
            Verdict::Ok,
            format!("all provider-independent fallbacks OK: {}", join(&alive)),
        );
    }
    let died = if dead.is_empty() {
        String::new()
    } else {
        format!(" but a rung died: {}", join(&dead))
    };
    let lead = if dead.is_empty() { " but " } else { "; " };
    (
        Verdict::Degraded,
        format!(
            "DEGRADED: still covered by {}{died}{}",
            join(&alive),
            besides(lead)
        ),
    )
}
