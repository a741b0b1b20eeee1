//! The documents the page is drawn from and the JSON endpoints serve: the reports' own
//! (`--status --json` without probing, `--usage --by day --json` over 30 days, `--budget
//! status --json`), never a copy of their logic.

use std::sync::Mutex;

use crate::config::Config;
use crate::usage::follow::Follower;

/// How many days the usage chart covers, today included.
pub const DAYS: i64 = 30;

/// `/status.json`: every rung as known now, with no call made.
pub fn status(config: &Config) -> serde_json::Value {
    crate::report::status::known_document(config)
}

/// `/usage.json`: `agent --usage --by day --since <29 days ago> --json`.
pub fn usage(config: &Config, follower: &Mutex<Follower>) -> anyhow::Result<serde_json::Value> {
    usage_by(config, follower, "day")
}

/// The usage report over the chart's days, grouped `by`. The follower keeps the ledger's
/// sums between loads, so a load reads only the lines appended since the last.
pub fn usage_by(
    config: &Config,
    follower: &Mutex<Follower>,
    by: &str,
) -> anyhow::Result<serde_json::Value> {
    let since = first_day();
    let mut follower = follower
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    crate::usage::document(
        config,
        &["--by", by, "--since", &since],
        Some(&mut follower),
    )
}

/// The first day of the chart, local time, as `YYYY-MM-DD`.
pub fn first_day() -> String {
    let today = jiff::ZonedDateTime::now().date();
    today
        .checked_sub(jiff::Span::new().days(DAYS - 1))
        .unwrap_or(today)
        .to_string()
}

/// `/budget.json`: `agent --budget status --json`.
pub fn budget(config: &Config) -> serde_json::Value {
    let budget = crate::state::budget::Budget::new(&crate::paths::state_dir(), config.budget);
    crate::report::budget::status_document(&budget)
}

/// "probe now": exactly what `agent --status` does (budgeted like it).
pub fn probe(config: &Config) -> serde_json::Value {
    crate::report::status::probe_document(config)
}
