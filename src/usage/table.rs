//! How `--usage` prints: an aligned table with a small bar per row on a terminal, the same
//! table without bars or colour when piped, and `--json` for scripts.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{BufWriter, IsTerminal as _, Write as _};

use owo_colors::{AnsiColors, OwoColorize as _};
use serde::Serialize;

use super::bar;
use super::query::Query;
use super::reconcile::{Row, Status, TOLERANCE};
use super::sources::Sources;
use super::stack::Stack;
use super::summary::{CACHE_HINT_BELOW, Cost, Group, Summary};
use super::tally::{By, Counts};
use crate::state::ledger::Tokens;
use crate::term::emit;

/// How a table is drawn.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    /// Bars and digit grouping (a person at a terminal).
    pub tty: bool,
    pub color: bool,
    /// The terminal's width (`COLUMNS`), which `--by day`'s bar fits into.
    pub columns: Option<usize>,
}

impl Style {
    fn detect() -> Style {
        Style {
            tty: std::io::stdout().is_terminal(),
            color: crate::term::color_stdout(),
            columns: bar::columns(),
        }
    }
}

/// Cells of the bar of a `--by model|account|run|backend` row on a terminal.
const BAR_WIDTH: usize = 12;
/// The colours of `--by day`'s stacked bar, one per backend, the largest first; backends
/// past the palette share its last colour as `other`.
const PALETTE: [AnsiColors; 6] = [
    AnsiColors::Cyan,
    AnsiColors::Magenta,
    AnsiColors::Yellow,
    AnsiColors::Green,
    AnsiColors::Blue,
    AnsiColors::Red,
];

/// A day's `(backend, tokens)`.
fn backends(group: &Group) -> impl Iterator<Item = (&str, u64)> {
    group
        .backends
        .iter()
        .map(|(name, tokens)| (name.as_str(), *tokens))
}

/// The day's bar, one coloured segment per backend.
fn stacked_bar(stack: &Stack, group: &Group, largest: u64, width: usize) -> String {
    bar::stacked(&stack.parts(backends(group)), largest, width)
        .iter()
        .zip(PALETTE)
        .filter(|(segment, _)| !segment.is_empty())
        .map(|(segment, colour)| segment.color(colour).to_string())
        .collect()
}

/// `bar: █ claude  █ codex`, each block in its backend's colour.
fn stack_legend(stack: &Stack) -> String {
    let entries: Vec<String> = stack
        .names("(unknown)")
        .into_iter()
        .zip(PALETTE)
        .map(|(name, colour)| format!("{} {name}", "█".color(colour)))
        .collect();
    format!("bar: {}", entries.join("  "))
}

// ---- the usage report --------------------------------------------------------------------

pub fn usage(
    query: &Query,
    summary: &Summary,
    sources: &Sources,
    json: bool,
) -> anyhow::Result<()> {
    if json {
        return usage_json(query, summary, sources);
    }
    emit(&usage_text(query, summary, sources, Style::detect()))
}

pub fn usage_text(query: &Query, summary: &Summary, sources: &Sources, style: Style) -> String {
    let mut out = String::new();
    if let Some(window) = window(query) {
        let _ = writeln!(out, "{window}");
    }
    if summary.groups.is_empty() {
        out.push_str("no calls recorded");
        out.push_str(if query.since.is_some() || query.until.is_some() {
            " in this window\n"
        } else {
            "\n"
        });
        let _ = writeln!(out, "{}", sources_line(sources));
        return out;
    }
    let mut header = vec![
        summary.by.as_str().to_string(),
        "calls".into(),
        "input".into(),
        "output".into(),
        "reasoning".into(),
        "cache read".into(),
        "cache write".into(),
        "total".into(),
        "cost".into(),
        "cache eff".into(),
    ];
    // `--by day` always draws its bar column (the picture of the days, piped too); the
    // other groupings draw a small one on a terminal only.
    let day_bars = summary.by == By::Day;
    let row_bars = style.tty && !day_bars;
    if row_bars {
        header.push(String::new());
    }
    let largest = summary
        .groups
        .iter()
        .map(|g| g.counts.tokens.total())
        .max()
        .unwrap_or(0);
    let mut rows = vec![header];
    for group in &summary.groups {
        let mut row = cells(&key_text(summary.by, &group.key), group, style);
        if row_bars {
            row.push(bar::total(group.counts.tokens.total(), largest, BAR_WIDTH));
        }
        rows.push(row);
    }
    let mut total = cells("total", &summary.total, style);
    if row_bars {
        total.push(String::new());
    }
    rows.push(total);
    let last = rows.len() - 1;
    let mut lines = align(&rows, &[0, 10]);
    let mut legend = None;
    if day_bars {
        let width = bar::fit(
            style.columns,
            lines.first().map_or(0, |l| l.chars().count()),
        );
        let stack = style
            .color
            .then(|| Stack::new(summary.groups.iter().map(backends), PALETTE.len()));
        for (line, group) in lines[1..last].iter_mut().zip(&summary.groups) {
            line.push_str("  ");
            match &stack {
                Some(stack) => line.push_str(&stacked_bar(stack, group, largest, width)),
                None => line.push_str(&bar::total(group.counts.tokens.total(), largest, width)),
            }
        }
        legend = stack.as_ref().map(stack_legend);
    }
    for (index, line) in lines.into_iter().enumerate() {
        let line = if style.color && (index == 0 || index == last) {
            line.bold().to_string()
        } else {
            line
        };
        let _ = writeln!(out, "{}", line.trim_end());
    }
    if let Some(legend) = legend {
        let _ = writeln!(out, "{legend}");
    }
    out.push('\n');
    for note in notes(summary) {
        let _ = writeln!(out, "{note}");
    }
    for hint in hints(summary) {
        if style.color {
            let _ = writeln!(out, "{}", hint.yellow());
        } else {
            let _ = writeln!(out, "{hint}");
        }
    }
    let _ = writeln!(out, "{}", sources_line(sources));
    out
}

fn cells(key: &str, group: &Group, style: Style) -> Vec<String> {
    let t = &group.counts.tokens;
    let n = |v: u64| int(v, style.tty);
    let estimated = if group.counts.estimated > 0 { "~" } else { "" };
    vec![
        key.to_string(),
        n(group.counts.calls),
        format!("{estimated}{}", n(t.input)),
        format!("{estimated}{}", n(t.output)),
        n(t.reasoning),
        n(t.cache_read),
        n(t.cache_write),
        format!("{estimated}{}", n(t.total())),
        cost_cell(group, style.tty),
        percent(group.cache_efficiency()),
    ]
}

fn key_text(by: By, key: &str) -> String {
    if key.is_empty() {
        match by {
            By::Run => "(no run)".into(),
            By::Account => "(no account)".into(),
            By::Client => "(no client)".into(),
            _ => "(unknown)".into(),
        }
    } else {
        // A model, account or run name as a CLI's records spelt it: others' text.
        crate::text::printable(key)
    }
}

fn window(query: &Query) -> Option<String> {
    let zone = match query.tz_offset_hours {
        Some(h) => format!("UTC{h:+}"),
        None => "local time".into(),
    };
    match (query.since, query.until) {
        (None, None) => None,
        (Some(since), None) => Some(format!("since {} ({zone})", since.as_str())),
        (None, Some(until)) => Some(format!("until {} ({zone})", until.as_str())),
        (Some(since), Some(until)) => {
            Some(format!("{} to {} ({zone})", since.as_str(), until.as_str()))
        }
    }
}

/// Why a cost is incomplete, and what the plans cost per token.
fn notes(summary: &Summary) -> Vec<String> {
    let mut notes = Vec::new();
    notes.extend(login_note(&summary.total.cost));
    if summary.total.counts.estimated > 0 {
        notes.push(format!(
            "~ the tokens of {} were estimated by agent (the provider reported no usage)",
            plural(summary.total.counts.estimated, "call")
        ));
    }
    if summary.total.cost.incomplete {
        let models: Vec<String> = summary
            .total
            .cost
            .unpriced
            .iter()
            .map(|m| {
                if m.is_empty() {
                    "(calls without a model)".to_string()
                } else {
                    crate::text::printable(m)
                }
            })
            .collect();
        notes.push(format!(
            "cost incomplete: no price for {} — add [pricing.models.\"ID\"] (USD per million tokens); ≥ is the part that is priced",
            models.join(", ")
        ));
    }
    for plan in &summary.plans {
        let unit = plan
            .usd_per_million()
            .map_or_else(|| "-".to_string(), |u| format!("${u:.4}"));
        notes.push(format!(
            "plan {} {}: ${:.2} ÷ {} tokens = {unit} per million",
            plan.plan, plan.month, plan.monthly_usd, plan.tokens
        ));
    }
    notes
}

/// A word for each group that reads too little of its input from the cache.
fn hints(summary: &Summary) -> Vec<String> {
    summary
        .groups
        .iter()
        .filter(|g| g.wants_cache_hint())
        .map(|g| {
            format!(
                "hint: {} reads {} of its input from the cache (under {:.0} %): keep the start of each prompt stable and a session on one model, so the prompt cache can hit",
                key_text(summary.by, &g.key),
                percent(g.cache_efficiency()),
                CACHE_HINT_BELOW * 100.0
            )
        })
        .collect()
}

fn sources_line(sources: &Sources) -> String {
    let mut parts = Vec::new();
    if let Some(ledger) = &sources.ledger {
        let mut part = format!(
            "agent's ledger {}",
            plural(ledger.lines - ledger.unreadable, "call")
        );
        if ledger.unreadable > 0 {
            let _ = write!(
                part,
                " ({} skipped)",
                plural(ledger.unreadable, "unreadable line")
            );
        }
        parts.push(part);
    }
    for (family, stats) in &sources.clis {
        let Some(stats) = stats else {
            continue;
        };
        let mut part = format!("{} {}", family.display_name(), plural(stats.calls, "call"));
        let mut extra = Vec::new();
        if stats.read.duplicates > 0 {
            extra.push(format!(
                "{} counted once",
                plural(stats.read.duplicates, "repeated record")
            ));
        }
        if stats.relayed > 0 {
            extra.push(format!("{} relayed, counted in the ledger", stats.relayed));
        }
        if stats.read.unreadable > 0 {
            extra.push(format!(
                "{} skipped",
                plural(stats.read.unreadable, "unreadable record")
            ));
        }
        if !extra.is_empty() {
            let _ = write!(part, " ({})", extra.join(", "));
        }
        parts.push(part);
    }
    format!("from: {}", parts.join(" · "))
}

// ---- reconciliation ----------------------------------------------------------------------

pub fn reconcile(query: &Query, rows: &[Row], sources: &Sources, json: bool) -> anyhow::Result<()> {
    if json {
        return reconcile_json(query, rows, sources);
    }
    emit(&reconcile_text(query, rows, sources, Style::detect()))
}

pub fn reconcile_text(query: &Query, rows: &[Row], sources: &Sources, style: Style) -> String {
    let mut out = String::new();
    if let Some(window) = window(query) {
        let _ = writeln!(out, "{window}");
    }
    if rows.is_empty() {
        out.push_str(
            "no relayed calls to reconcile (the relay writes `relay` lines in the ledger)\n",
        );
        let _ = writeln!(out, "{}", sources_line(sources));
        return out;
    }
    let n = |v: u64| int(v, style.tty);
    let mut table = vec![
        [
            "run",
            "model",
            "client calls",
            "relay calls",
            "client tokens",
            "relay tokens",
            "gap",
            "",
        ]
        .map(String::from)
        .to_vec(),
    ];
    for row in rows {
        let status = match row.status {
            Status::Match => "match",
            Status::Mismatch => "MISMATCH",
            Status::NoClientRecords => "no client records",
            Status::NoRelayRecords => "no relay records",
        };
        table.push(vec![
            if row.run.is_empty() {
                "(no run)".into()
            } else {
                crate::text::printable(&row.run)
            },
            if row.model.is_empty() {
                "(unknown)".into()
            } else {
                crate::text::printable(&row.model)
            },
            n(row.client.calls),
            n(row.relay.calls),
            n(row.client.tokens.total()),
            n(row.relay.tokens.total()),
            format!("{:.1} %", row.gap * 100.0),
            status.to_string(),
        ]);
    }
    for (index, line) in align(&table, &[0, 1, 7]).into_iter().enumerate() {
        let line = line.trim_end().to_string();
        let line = if !style.color {
            line
        } else if index == 0 {
            line.bold().to_string()
        } else {
            match rows[index - 1].status {
                Status::Match => line.green().to_string(),
                _ => line.red().to_string(),
            }
        };
        let _ = writeln!(out, "{line}");
    }
    out.push('\n');
    let _ = writeln!(
        out,
        "gap: tokens the two sides disagree on, figure by figure, over the larger total; a match is within {:.0} %. Reasoning is {}.",
        TOLERANCE * 100.0,
        if query.reasoning_in_output {
            "counted inside output (--reasoning-in-output)"
        } else {
            "compared apart from output (--reasoning-in-output compares them as one)"
        }
    );
    let _ = writeln!(out, "{}", sources_line(sources));
    out
}

// ---- JSON --------------------------------------------------------------------------------

/// Writes a report as pretty JSON straight to stdout (a large `--by run` report is never
/// held twice in memory); a closed pipe surfaces as the I/O error `main` keeps quiet about.
fn emit_serialized<T: Serialize>(value: &T) -> anyhow::Result<()> {
    let mut out = BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    serde_json::to_writer_pretty(&mut out, value).map_err(std::io::Error::from)?;
    out.write_all(b"\n")?;
    out.flush()?;
    Ok(())
}

fn round(value: f64, places: i32) -> f64 {
    let scale = 10f64.powi(places);
    (value * scale).round() / scale
}

#[derive(Serialize)]
struct TokensOut {
    input: u64,
    output: u64,
    reasoning: u64,
    cache_read: u64,
    cache_write: u64,
    total: u64,
}

impl From<&Tokens> for TokensOut {
    fn from(t: &Tokens) -> TokensOut {
        TokensOut {
            input: t.input,
            output: t.output,
            reasoning: t.reasoning,
            cache_read: t.cache_read,
            cache_write: t.cache_write,
            total: t.total(),
        }
    }
}

#[derive(Serialize)]
struct CountsOut {
    calls: u64,
    errors: u64,
    estimated: u64,
    tokens: TokensOut,
}

impl From<&Counts> for CountsOut {
    fn from(c: &Counts) -> CountsOut {
        CountsOut {
            calls: c.calls,
            errors: c.errors,
            estimated: c.estimated,
            tokens: (&c.tokens).into(),
        }
    }
}

/// A row: its key (null when the calls did not say), then its figures.
#[derive(Serialize)]
struct KeyedOut<'a> {
    key: Option<&'a str>,
    #[serde(flatten)]
    group: GroupOut<'a>,
}

#[derive(Serialize)]
struct GroupOut<'a> {
    #[serde(flatten)]
    counts: CountsOut,
    cost_usd: Option<f64>,
    cost_usd_known: f64,
    cost_incomplete: bool,
    unpriced_models: Vec<&'a str>,
    /// Calls on a subscription login: paid by the plan, no per-call cost (not in `cost_usd`).
    login_calls: u64,
    login_plans: Vec<&'a str>,
    cache_efficiency: Option<f64>,
    cache_hint: bool,
    /// With `--by day`: the day's tokens per backend (what the stacked bars draw).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    tokens_by_backend: &'a BTreeMap<String, u64>,
}

impl<'a> GroupOut<'a> {
    fn new(group: &'a Group) -> GroupOut<'a> {
        GroupOut {
            counts: (&group.counts).into(),
            cost_usd: group.cost.usd().map(|usd| round(usd, 6)),
            cost_usd_known: round(group.cost.known_usd, 6),
            cost_incomplete: group.cost.incomplete,
            unpriced_models: group.cost.unpriced.iter().map(String::as_str).collect(),
            login_calls: group.cost.login_calls,
            login_plans: group.cost.login_plans.iter().map(String::as_str).collect(),
            cache_efficiency: group.cache_efficiency().map(|e| round(e, 4)),
            cache_hint: group.wants_cache_hint(),
            tokens_by_backend: &group.backends,
        }
    }
}

#[derive(Serialize)]
struct WindowOut {
    since: Option<String>,
    until: Option<String>,
    tz_offset_hours: Option<f64>,
}

fn window_json(query: &Query) -> WindowOut {
    WindowOut {
        since: query.since.map(|d| d.as_str().to_string()),
        until: query.until.map(|d| d.as_str().to_string()),
        tz_offset_hours: query.tz_offset_hours,
    }
}

#[derive(Serialize)]
struct PlanOut<'a> {
    plan: &'a str,
    month: &'a str,
    monthly_usd: f64,
    tokens: u64,
    usd_per_million: Option<f64>,
}

#[derive(Serialize)]
struct LedgerOut {
    path: String,
    lines: u64,
    unreadable: u64,
}

#[derive(Serialize)]
struct CliOut {
    files: u64,
    records: u64,
    duplicates: u64,
    unreadable: u64,
    calls: u64,
    relayed: u64,
}

/// `agent`, then each CLI whose records agent counts by its name (`claude`): `null` for a
/// source not read.
#[derive(Serialize)]
struct SourcesOut {
    agent: Option<LedgerOut>,
    #[serde(flatten)]
    clis: BTreeMap<&'static str, Option<CliOut>>,
}

fn sources_json(sources: &Sources) -> SourcesOut {
    SourcesOut {
        agent: sources.ledger.as_ref().map(|l| LedgerOut {
            path: l.path.display().to_string(),
            lines: l.lines,
            unreadable: l.unreadable,
        }),
        clis: sources
            .clis
            .iter()
            .map(|(family, stats)| {
                let out = stats.map(|s| CliOut {
                    files: s.read.files,
                    records: s.read.records,
                    duplicates: s.read.duplicates,
                    unreadable: s.read.unreadable,
                    calls: s.calls,
                    relayed: s.relayed,
                });
                (family.name(), out)
            })
            .collect(),
    }
}

#[derive(Serialize)]
struct UsageOut<'a> {
    by: &'static str,
    window: WindowOut,
    groups: Vec<KeyedOut<'a>>,
    total: GroupOut<'a>,
    cost_incomplete: bool,
    plans: Vec<PlanOut<'a>>,
    /// What the report says of calls on a subscription login, when there are any.
    #[serde(skip_serializing_if = "Option::is_none")]
    login_note: Option<String>,
    hints: Vec<String>,
    sources: SourcesOut,
}

fn usage_json(query: &Query, summary: &Summary, sources: &Sources) -> anyhow::Result<()> {
    emit_serialized(&usage_out(query, summary, sources))
}

/// `--usage --json`'s document as a value (the dashboard serves the same one).
pub fn usage_document(query: &Query, summary: &Summary, sources: &Sources) -> serde_json::Value {
    serde_json::to_value(usage_out(query, summary, sources)).unwrap_or_default()
}

fn usage_out<'a>(query: &'a Query, summary: &'a Summary, sources: &'a Sources) -> UsageOut<'a> {
    UsageOut {
        by: summary.by.as_str(),
        window: window_json(query),
        groups: summary
            .groups
            .iter()
            .map(|g| KeyedOut {
                key: (!g.key.is_empty()).then_some(g.key.as_str()),
                group: GroupOut::new(g),
            })
            .collect(),
        total: GroupOut::new(&summary.total),
        cost_incomplete: summary.total.cost.incomplete,
        plans: summary
            .plans
            .iter()
            .map(|p| PlanOut {
                plan: &p.plan,
                month: &p.month,
                monthly_usd: p.monthly_usd,
                tokens: p.tokens,
                usd_per_million: p.usd_per_million().map(|u| round(u, 6)),
            })
            .collect(),
        login_note: login_note(&summary.total.cost),
        hints: hints(summary),
        sources: sources_json(sources),
    }
}

#[derive(Serialize)]
struct RowOut<'a> {
    run: Option<&'a str>,
    model: Option<&'a str>,
    client: CountsOut,
    relay: CountsOut,
    gap: f64,
    status: &'static str,
    #[serde(rename = "match")]
    matched: bool,
}

#[derive(Serialize)]
struct ReconcileOut<'a> {
    window: WindowOut,
    tolerance: f64,
    reasoning_in_output: bool,
    all_match: bool,
    rows: Vec<RowOut<'a>>,
    sources: SourcesOut,
}

fn reconcile_json(query: &Query, rows: &[Row], sources: &Sources) -> anyhow::Result<()> {
    let report = ReconcileOut {
        window: window_json(query),
        tolerance: TOLERANCE,
        reasoning_in_output: query.reasoning_in_output,
        all_match: rows.iter().all(|r| r.status == Status::Match),
        rows: rows
            .iter()
            .map(|r| RowOut {
                run: (!r.run.is_empty()).then_some(r.run.as_str()),
                model: (!r.model.is_empty()).then_some(r.model.as_str()),
                client: (&r.client).into(),
                relay: (&r.relay).into(),
                gap: round(r.gap, 6),
                status: r.status.as_str(),
                matched: r.status == Status::Match,
            })
            .collect(),
        sources: sources_json(sources),
    };
    emit_serialized(&report)
}

// ---- formatting --------------------------------------------------------------------------

/// Pads every column to its widest cell: the `text` columns to the left, numbers to the
/// right.
fn align(rows: &[Vec<String>], text: &[usize]) -> Vec<String> {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let mut widths = vec![0; columns];
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            widths[i] = widths[i].max(cell.chars().count());
        }
    }
    rows.iter()
        .map(|row| {
            let mut line = String::new();
            for (i, cell) in row.iter().enumerate() {
                if i > 0 {
                    line.push_str("  ");
                }
                let pad = widths[i] - cell.chars().count();
                if text.contains(&i) {
                    line.push_str(cell);
                    line.extend(std::iter::repeat_n(' ', pad));
                } else {
                    line.extend(std::iter::repeat_n(' ', pad));
                    line.push_str(cell);
                }
            }
            line
        })
        .collect()
}

/// `1 call`, `2 calls`.
fn plural(count: u64, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}

/// 1234567 → `1,234,567` on a terminal, `1234567` otherwise.
fn int(value: u64, grouped: bool) -> String {
    let digits = value.to_string();
    if !grouped {
        return digits;
    }
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `$1058.61` (`$1,058.61` on a terminal), `<$0.01`, `≥$25.54` when part is unpriced, `?`
/// when nothing is priced.
fn usd(cost: &Cost, grouped: bool) -> String {
    let money = |usd: f64| {
        if usd > 0.0 && usd < 0.005 {
            return "<$0.01".to_string();
        }
        let cents = format!("{usd:.2}");
        let (whole, fraction) = cents.split_once('.').unwrap_or((&cents, "00"));
        match whole.parse::<u64>() {
            Ok(whole) => format!("${}.{fraction}", int(whole, grouped)),
            Err(_) => format!("${cents}"),
        }
    };
    match cost.usd() {
        Some(usd) => money(usd),
        None if cost.known_usd > 0.0 => format!("≥{}", money(cost.known_usd)),
        None => "?".into(),
    }
}

/// A group's cost: `plan` where every call ran on a subscription login (paid by the plan,
/// no per-call cost), the priced part `+ plan` where only some did.
fn cost_cell(group: &Group, grouped: bool) -> String {
    let on_login = group.cost.login_calls;
    if on_login == 0 {
        return usd(&group.cost, grouped);
    }
    if on_login >= group.counts.calls {
        return "plan".into();
    }
    format!("{} + plan", usd(&group.cost, grouped))
}

/// `calls on a subscription login are paid by the plan (max): no per-call cost`.
pub fn login_note(cost: &Cost) -> Option<String> {
    (cost.login_calls > 0).then(|| {
        let plans: Vec<String> = cost
            .login_plans
            .iter()
            .map(|p| crate::text::printable(p))
            .collect();
        format!(
            "calls on a subscription login are paid by the plan ({}): no per-call cost",
            plans.join(", ")
        )
    })
}

fn percent(value: Option<f64>) -> String {
    value.map_or_else(|| "-".into(), |v| format!("{:.1} %", v * 100.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::usage::summary::Cost;

    fn group(key: &str, input: u64, cache_read: u64, usd: f64) -> Group {
        Group {
            key: key.into(),
            counts: Counts {
                calls: 3,
                errors: 0,
                estimated: 0,
                tokens: Tokens {
                    input,
                    output: 150,
                    reasoning: 0,
                    cache_read,
                    cache_write: 600,
                },
            },
            cost: Cost {
                known_usd: usd,
                ..Cost::default()
            },
            backends: BTreeMap::new(),
        }
    }

    #[test]
    fn a_terminal_gets_bars_and_grouped_digits_a_pipe_gets_neither() {
        let summary = Summary {
            by: By::Model,
            groups: vec![
                group("claude-opus-5", 300, 3_000_000, 12.5),
                group("claude-haiku-4-5", 300, 3000, 0.02),
            ],
            total: group("", 600, 3_003_000, 12.52),
            plans: Vec::new(),
        };
        let query = Query {
            by: By::Model,
            since: None,
            until: None,
            tz_offset_hours: None,
            reasoning_in_output: false,
        };
        let tty = usage_text(
            &query,
            &summary,
            &Sources::default(),
            Style {
                tty: true,
                color: false,
                columns: None,
            },
        );
        assert!(tty.contains("3,000,000"), "{tty}");
        assert!(tty.contains(&"█".repeat(BAR_WIDTH)), "{tty}");
        let lines: Vec<&str> = tty.lines().collect();
        assert_eq!(
            lines[1].find("$12.50").map(|i| i + 6),
            lines[2].find("$0.02").map(|i| i + 5),
            "costs are right-aligned:\n{tty}"
        );

        let piped = usage_text(
            &query,
            &summary,
            &Sources::default(),
            Style {
                tty: false,
                color: false,
                columns: None,
            },
        );
        assert!(piped.contains("3000000"), "{piped}");
        assert!(!piped.contains('█'), "{piped}");
    }

    #[test]
    fn costs_read_as_money_and_unknown_is_never_zero() {
        let known = |usd| Cost {
            known_usd: usd,
            ..Cost::default()
        };
        assert_eq!(usd(&known(0.0315), false), "$0.03");
        assert_eq!(usd(&known(0.001), false), "<$0.01");
        assert_eq!(usd(&known(0.0), false), "$0.00");
        assert_eq!(usd(&known(1058.609), true), "$1,058.61");
        assert_eq!(usd(&known(1058.609), false), "$1058.61");
        let partial = Cost {
            known_usd: 1.234,
            incomplete: true,
            ..Cost::default()
        };
        assert_eq!(usd(&partial, false), "≥$1.23");
        assert_eq!(
            usd(
                &Cost {
                    incomplete: true,
                    ..Cost::default()
                },
                false
            ),
            "?"
        );
    }

    fn by_day(days: &[(&str, &[(&str, u64)])]) -> Summary {
        let groups: Vec<Group> = days
            .iter()
            .map(|(day, backends)| {
                let mut g = group(day, 0, 0, 0.0);
                g.counts.tokens = Tokens {
                    input: backends.iter().map(|(_, t)| t).sum(),
                    ..Tokens::default()
                };
                g.backends = backends
                    .iter()
                    .map(|(b, t)| ((*b).to_string(), *t))
                    .collect();
                g
            })
            .collect();
        let mut total = group("", 0, 0, 0.0);
        total.counts.tokens.input = groups.iter().map(|g| g.counts.tokens.input).sum();
        Summary {
            by: By::Day,
            groups,
            total,
            plans: Vec::new(),
        }
    }

    fn day_query() -> Query {
        Query {
            by: By::Day,
            since: None,
            until: None,
            tz_offset_hours: None,
            reasoning_in_output: false,
        }
    }

    /// The text after the last two-space gap of each day's line.
    fn day_bars(text: &str, days: usize) -> Vec<String> {
        text.lines()
            .skip(1)
            .take(days)
            .map(|l| l.rsplit("  ").next().unwrap_or("").to_string())
            .collect()
    }

    #[test]
    fn by_day_draws_a_bar_per_day_piped_too_without_colour() {
        let summary = by_day(&[
            ("2026-11-28", &[("claude", 240)]),
            ("2026-11-29", &[("claude", 100), ("codex", 50)]),
            ("2026-11-30", &[("codex", 5)]),
        ]);
        let piped = usage_text(
            &day_query(),
            &summary,
            &Sources::default(),
            Style {
                tty: false,
                color: false,
                columns: None,
            },
        );
        // COLUMNS unknown: the default width, the largest day full.
        let bars = day_bars(&piped, 3);
        let width = bar::DEFAULT_WIDTH;
        assert_eq!(
            bars[0],
            "█".repeat(width),
            "the largest day fills the bar:\n{piped}"
        );
        assert_eq!(bars[1], bar::total(150, 240, width), "{piped}");
        assert_eq!(bars[2], bar::total(5, 240, width), "{piped}");
        assert!(!piped.contains('\u{1b}'), "{piped}");
        assert!(
            !piped.contains("bar:"),
            "no legend without colour:\n{piped}"
        );

        let coloured = usage_text(
            &day_query(),
            &summary,
            &Sources::default(),
            Style {
                tty: true,
                color: true,
                columns: None,
            },
        );
        // Stacked: the same bars, cut by backend, each backend in its colour.
        let plain: String = {
            let mut out = String::new();
            let mut escape = false;
            for c in coloured.chars() {
                match c {
                    '\u{1b}' => escape = true,
                    'm' if escape => escape = false,
                    _ if escape => {}
                    _ => out.push(c),
                }
            }
            out
        };
        assert_eq!(day_bars(&plain, 3), bars, "{coloured}");
        let mixed = coloured.lines().nth(2).unwrap();
        let claude = "█".repeat(bar::total(100, 240, width).chars().count());
        assert!(
            mixed.contains(&format!("{}", claude.cyan())),
            "claude's part in the largest backend's colour: {mixed:?}"
        );
        assert!(
            mixed.contains("\u{1b}[35m"),
            "codex's part in the next: {mixed:?}"
        );
        assert!(coloured.contains("bar: "), "{coloured}");
        let legend = coloured.lines().find(|l| l.starts_with("bar: ")).unwrap();
        assert!(
            legend.find("claude") < legend.find("codex"),
            "the largest backend first: {legend}"
        );
    }

    #[test]
    fn a_row_bar_on_a_terminal_is_its_share_of_the_largest_row() {
        assert_eq!(bar::total(100, 100, BAR_WIDTH).chars().count(), BAR_WIDTH);
        assert_eq!(bar::total(50, 100, BAR_WIDTH), "█".repeat(BAR_WIDTH / 2));
    }
}
