//! `agent --usage`: where every token went, and what it cost (DESIGN.md §11).
//!
//! Sources: agent's own ledger (`usage.jsonl`: probes, relayed calls), and every CLI's own
//! records of its calls that agent reads (`login::readers`: Claude Code's transcripts,
//! Codex's session files, Gemini CLI's chat records, opencode's database). Each call is
//! counted once:
//!
//! - a CLI writes one answer on several lines (Claude Code: one per content block) or
//!   copies it into a resumed session: calls are kept once per id (`message.id`, else
//!   `requestId`; Codex: `response_id`);
//! - a call that went through the relay is in the ledger *and* in the CLI's transcript: it
//!   counts on the relay side only. The transcript's call is recognised by the relay line's
//!   `request_id` or `message_id`, or by its CLI session (`session`, from the session header
//!   the CLI sends), which also ties it to the relay line's run for `--reconcile`.

pub mod bar;
pub mod clock;
pub mod follow;
pub mod links;
pub mod logins;
pub mod query;
pub mod reconcile;
pub mod relay_index;
pub mod scan;
pub mod sources;
pub mod stack;
pub mod summary;
pub mod table;
pub mod tally;

use std::path::PathBuf;
use std::process::ExitCode;

use crate::cli::usage::{Source, UsageCli};
use crate::config::Config;
use crate::exit_codes::usage;
use crate::login::calls::Transcripts;
use crate::login::readers;
use clock::{Clock, Day};
use query::Query;
use sources::{CliStats, LedgerStats, Sources};
use tally::{PerRun, Rules, View};

pub fn run(config: &Config, args: &[String], global_json: bool) -> anyhow::Result<ExitCode> {
    let cli: UsageCli = match crate::cli::parse_sub(args) {
        Ok(cli) => cli,
        Err(code) => return Ok(code),
    };
    let json = cli.json || global_json;
    let gathered = gather(config, &cli, None)?;
    if cli.reconcile {
        let rows = reconcile::rows(
            &gathered.client,
            &gathered.relay,
            gathered.query.reasoning_in_output,
        );
        table::reconcile(&gathered.query, &rows, &gathered.sources, json)?;
    } else {
        let summary = summary::build(&gathered.tally, gathered.query.by, &config.pricing);
        table::usage(&gathered.query, &summary, &gathered.sources, json)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// What `agent --usage ARGS --json` prints, as a value: the dashboard serves this same
/// document. `args` are `--usage`'s own (`--by day --since …`); `--reconcile` is not one.
/// With a follower, the ledger's lines read by earlier calls are not read again.
pub fn document(
    config: &Config,
    args: &[&str],
    follower: Option<&mut follow::Follower>,
) -> anyhow::Result<serde_json::Value> {
    use clap::Parser as _;
    let cli = UsageCli::try_parse_from(args).map_err(|err| usage(err.to_string()))?;
    let gathered = gather(config, &cli, follower)?;
    let summary = summary::build(&gathered.tally, gathered.query.by, &config.pricing);
    Ok(table::usage_document(
        &gathered.query,
        &summary,
        &gathered.sources,
    ))
}

/// Every call in the window, from the ledger and the CLIs' records, each once.
struct Gathered {
    query: Query,
    tally: tally::Tally,
    /// The CLIs' side of relayed calls, per run and model (only with `--reconcile`).
    client: PerRun,
    /// The relay's side, likewise.
    relay: PerRun,
    sources: Sources,
}

fn gather(
    config: &Config,
    cli: &UsageCli,
    follower: Option<&mut follow::Follower>,
) -> anyhow::Result<Gathered> {
    let day = |flag: &str, text: &Option<String>| -> anyhow::Result<Option<Day>> {
        text.as_deref()
            .map(|t| {
                Day::parse(t)
                    .ok_or_else(|| usage(format!("{flag} {t}: expected a date, YYYY-MM-DD")))
            })
            .transpose()
    };
    let query = Query {
        by: cli.by,
        since: day("--since", &cli.since)?,
        until: day("--until", &cli.until)?,
        tz_offset_hours: cli.tz_offset_hours,
        reasoning_in_output: cli.reasoning_in_output,
    };
    if let (Some(since), Some(until)) = (query.since, query.until)
        && since > until
    {
        return Err(usage(format!(
            "--since {} is after --until {}",
            since.as_str(),
            until.as_str()
        )));
    }
    let wanted = |source| cli.source.is_empty() || cli.source.contains(&source);
    if let Some(family) = cli.source.iter().find_map(|source| match source {
        Source::Cli(family) if !readers::reads_calls(*family) => Some(family),
        _ => None,
    }) {
        return Err(usage(format!(
            "--source {}: agent reads no record of {}'s calls",
            family.name(),
            family.display_name()
        )));
    }
    let clock = Clock::new(cli.tz_offset_hours)?;
    let rules = Rules {
        by: query.by,
        since: query.since,
        until: query.until,
        pricing: &config.pricing,
    };

    // Every CLI whose records agent counts, each through its own reader.
    let mut transcripts = Transcripts::default();
    let mut sources = Sources::default();
    for family in crate::adapter::ALL {
        if !readers::reads_calls(family) {
            continue;
        }
        let read = if wanted(Source::Cli(family)) {
            readers::calls(family, &mut transcripts)
        } else {
            None
        };
        let stats = read.map(|read| CliStats {
            read,
            ..CliStats::default()
        });
        sources.clis.push((family, stats));
    }
    let logins = logins::Logins::seen(config);
    let mut scanned = scan::Scan::default();
    if wanted(Source::Agent) {
        let mut path = crate::state::ledger::Ledger::new(&crate::paths::state_dir())
            .path()
            .to_path_buf();
        let context = scan::Context {
            rules,
            clock: &clock,
            linking: scan::Linking::Now(&transcripts),
            reconcile: cli.reconcile,
            logins: &logins,
        };
        // A team's ledger is the shared store's stream; this machine's file while it is away.
        let from_store = crate::state::store::answered(|shared| {
            let documents = crate::state::store::stream::read_from(
                shared,
                crate::state::store::stream::Stream::Ledger,
                rules.since.and_then(|since| since.earliest_ms()),
            )?;
            path = PathBuf::from(format!("{} {}", shared.place, shared.key("ledger")));
            Ok(scan::scan_documents(&documents, &context))
        });
        scanned = match (from_store, follower) {
            (Some(scanned), _) => scanned,
            (None, Some(follower)) if !cli.reconcile => {
                follower.scan(&path, &context, &transcripts)?
            }
            (None, _) => scan::scan(&path, &context)?,
        };
        sources.ledger = Some(LedgerStats {
            path,
            lines: scanned.lines,
            unreadable: scanned.unreadable,
        });
    }

    // Which transcript calls the relay carried, and for which run.
    let mut relayed: Vec<Option<&str>> = vec![None; transcripts.calls.len()];
    for (index, run) in &scanned.links.by_id {
        relayed[*index] = Some(run);
    }
    for (session, run) in &scanned.links.by_session {
        for &index in transcripts.in_session(session) {
            relayed[index].get_or_insert(run);
        }
    }
    let mut tally = scanned.tally;
    let mut client = PerRun::default();
    let mut clock = clock;
    for (call, run) in transcripts.calls.iter().zip(&relayed) {
        // Counted under the CLI its reader named, and no other.
        let stats = sources.of_cli(call.cli);
        let Some(day) = clock.day(&call.time) else {
            if let Some(stats) = stats {
                stats.read.unreadable += 1;
            }
            continue;
        };
        if let Some(stats) = stats {
            stats.calls += 1;
            stats.relayed += u64::from(run.is_some());
        }
        match run {
            Some(run) => {
                if cli.reconcile && rules.in_window(day) {
                    client.add(run, &call.model, &call.tokens, false);
                }
            }
            None => tally.add(
                &rules,
                &View {
                    day,
                    run: "",
                    backend: call.cli,
                    model: &call.model,
                    account: "",
                    client: "",
                    tokens: &call.tokens,
                    estimated: false,
                    error: false,
                    login: logins.of_cli(call.cli),
                },
            ),
        }
    }

    Ok(Gathered {
        query,
        tally,
        client,
        relay: scanned.relay,
        sources,
    })
}
