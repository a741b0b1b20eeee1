//! `agent --budget status|set|recent`: the daily caps, today's use, and the ledger's tail.

use std::fmt::Write as _;
use std::process::ExitCode;

use serde_json::json;

use crate::cli::budget::{BudgetCli, Command};
use crate::config::Config;
use crate::exit_codes::usage;
use crate::report::{emit, emit_json};
use crate::state::budget::{Budget, LimitSource, Limits};
use crate::state::ledger::Ledger;

pub fn run(config: &Config, args: &[String], global_json: bool) -> anyhow::Result<ExitCode> {
    let cli: BudgetCli = match crate::cli::parse_sub(args) {
        Ok(cli) => cli,
        Err(code) => return Ok(code),
    };
    let state_dir = crate::paths::state_dir();
    let budget = Budget::new(&state_dir, config.budget);
    match cli.command {
        Command::Status { json } => status(&budget, json || global_json),
        Command::Set { calls, tokens } => set(&budget, calls, tokens),
        Command::Recent { tail, json } => {
            recent(&Ledger::new(&state_dir), tail, json || global_json)
        }
    }
}

/// What the budget counts, said once for the text and `--json`: agent's own calls, not the
/// calls a CLI makes on its own login while it runs.
pub const COUNTS: &str = "counts agent's own calls only: probes, checks (a self-check runs the CLI once) and calls relayed through `agent --relay`; the calls a CLI makes on its own login while you use it are not agent's and are not counted (`agent --usage` shows them)";

fn cap(limit: u64) -> String {
    if limit == 0 {
        "unlimited".to_string()
    } else {
        limit.to_string()
    }
}

/// What `agent --budget status --json` prints (the dashboard serves this same document).
pub fn status_document(budget: &Budget) -> serde_json::Value {
    let day = crate::state::budget::today();
    let (used, limits, source) = budget.status_on(&day);
    let exhausted = crate::state::budget::spent(used, limits);
    json!({
        "day": day,
        "calls": used.calls,
        "tokens": used.tokens,
        "limits": {"calls": limits.calls, "tokens": limits.tokens},
        "limits_from": match source {
            LimitSource::Config => "config",
            LimitSource::SetCommand => "set",
        },
        "exhausted": exhausted,
        "counts": "agent_calls",
        "counts_note": COUNTS,
    })
}

fn status(budget: &Budget, json: bool) -> anyhow::Result<ExitCode> {
    if json {
        emit_json(&status_document(budget))?;
        return Ok(ExitCode::SUCCESS);
    }
    let day = crate::state::budget::today();
    let (used, limits, source) = budget.status_on(&day);
    let exhausted = crate::state::budget::spent(used, limits);
    let source = match source {
        LimitSource::Config => "config",
        LimitSource::SetCommand => "set",
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "today ({day}, local): {} of {} calls, {} of {} tokens{}",
        used.calls,
        cap(limits.calls),
        used.tokens,
        cap(limits.tokens),
        if exhausted {
            " — exhausted: launches run unprobed, checks report the budget"
        } else {
            ""
        }
    );
    let from = if source == "set" {
        "set with `agent --budget set`"
    } else {
        "from the configuration ([budget]) or the defaults"
    };
    let _ = writeln!(
        out,
        "caps: {} calls, {} tokens a day, {from}",
        cap(limits.calls),
        cap(limits.tokens)
    );
    let _ = writeln!(out, "{COUNTS}");
    let _ = writeln!(
        out,
        "the token cap stops later calls only: a call in flight may cross it"
    );
    emit(&out)?;
    Ok(ExitCode::SUCCESS)
}

fn set(budget: &Budget, calls: Option<u64>, tokens: Option<u64>) -> anyhow::Result<ExitCode> {
    if calls.is_none() && tokens.is_none() {
        return Err(usage(
            "--budget set: give --calls N and/or --tokens N (0 = unlimited)",
        ));
    }
    let (_, current, _) = budget.status();
    let limits = Limits {
        calls: calls.unwrap_or(current.calls),
        tokens: tokens.unwrap_or(current.tokens),
    };
    budget.set_limits(limits)?;
    emit(&format!(
        "daily caps: {} calls, {} tokens\n",
        cap(limits.calls),
        cap(limits.tokens)
    ))?;
    Ok(ExitCode::SUCCESS)
}

fn recent(ledger: &Ledger, tail: usize, json: bool) -> anyhow::Result<ExitCode> {
    let records = ledger.tail(tail);
    if json {
        emit_json(&serde_json::to_value(&records)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    if records.is_empty() {
        emit("no calls recorded yet\n")?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = String::from(
        "time                  role   backend       model                     status  class             in       out  secs\n",
    );
    let now = jiff::Timestamp::now();
    for r in &records {
        let mark = if r.estimated { "~" } else { " " };
        let time = crate::when::short_stamp(&r.time, now);
        // A stamp another program wrote that does not parse still keeps its column.
        let time: String = time.chars().take(21).collect();
        let _ = writeln!(
            out,
            "{time:21} {:6} {:13} {:25} {:>6}  {:16} {mark}{:>7} {mark}{:>7}  {:.2}",
            r.role,
            r.backend.as_deref().unwrap_or("-"),
            r.model.as_deref().unwrap_or("-"),
            r.status.map_or_else(|| "-".to_string(), |s| s.to_string()),
            r.error_kind,
            r.tokens.input + r.tokens.cache_read + r.tokens.cache_write,
            r.tokens.output + r.tokens.reasoning,
            r.duration_s
        );
    }
    if records.iter().any(|r| r.estimated) {
        out.push_str("~ estimated by agent (the provider reported no usage)\n");
    }
    emit(&out)?;
    Ok(ExitCode::SUCCESS)
}
