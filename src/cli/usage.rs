//! `agent --usage`.

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Parser, ValueEnum};

use crate::adapter::{self, Family};

#[derive(Debug, Parser)]
#[command(
    name = "agent --usage",
    bin_name = "agent --usage",
    no_binary_name = true,
    disable_help_subcommand = true,
    about = "Calls, tokens, cost and cache efficiency, from agent's ledger and the CLIs' own records",
    after_help = "\
Each call is counted once: a CLI record written twice (same message or request id) counts
once, and a call that went through the relay counts on the relay side only. Prices come
from [pricing] in the configuration (USD per million tokens; plans: fee ÷ the month's
tokens); a call without a price leaves the cost unknown (null), never guessed.

Examples:
  agent --usage                               per model, everything recorded
  agent --usage --by day --since 2026-11-01   per local day
  agent --usage --by run --json               per run, for scripts
  agent --usage --by client                   per named relay client (team token: none)
  agent --usage --reconcile                   the CLIs' records against the relay's"
)]
pub struct UsageCli {
    /// Group by local day, model, account, run, backend or the relay's named client
    #[arg(long, value_enum, default_value_t = By::Model)]
    pub by: By,
    /// First local day to count (YYYY-MM-DD)
    #[arg(long, value_name = "DATE")]
    pub since: Option<String>,
    /// Last local day to count (YYYY-MM-DD, inclusive)
    #[arg(long, value_name = "DATE")]
    pub until: Option<String>,
    /// Days in UTC+N instead of the system's time zone (e.g. -5, 5.5)
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub tz_offset_hours: Option<f64>,
    /// Only these sources (default: all)
    #[arg(long, value_parser = sources(), value_delimiter = ',', value_name = "SOURCE")]
    pub source: Vec<Source>,
    /// Per run and model, the CLI's records against the relay's: `match` within 2 %
    #[arg(long)]
    pub reconcile: bool,
    /// With --reconcile: compare output + reasoning as one figure (for when one side
    /// counts thinking inside output)
    #[arg(long, requires = "reconcile")]
    pub reasoning_in_output: bool,
    /// Machine-readable output
    #[arg(long)]
    pub json: bool,
}

/// Where calls are read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// agent's ledger, usage.jsonl (probes and relayed calls).
    Agent,
    /// A CLI's own records of its calls, named as its adapter names it (`claude`).
    Cli(Family),
}

/// What `--source` takes: `agent`, then every CLI agent has an adapter for, in the
/// adapters' order — the values come from the adapters, so a CLI added there is a source
/// here (and in the help, the man page and the completions) with nothing else to change.
fn sources() -> impl TypedValueParser<Value = Source> {
    let agent =
        PossibleValue::new("agent").help("agent's ledger, usage.jsonl (probes and relayed calls)");
    let clis = adapter::ALL.into_iter().map(|family| {
        PossibleValue::new(family.name()).help(format!(
            "{}'s own records of its calls",
            family.display_name()
        ))
    });
    PossibleValuesParser::new(std::iter::once(agent).chain(clis)).map(|name| {
        // The parser let only these names through.
        Family::named(&name).map_or(Source::Agent, Source::Cli)
    })
}

/// What `--usage` adds up by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum By {
    Day,
    Model,
    Account,
    Run,
    Backend,
    /// The relay's named client (`agent --relay tokens add`)
    Client,
}
