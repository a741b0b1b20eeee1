//! `agent --budget status|set|recent`.

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "agent --budget",
    bin_name = "agent --budget",
    no_binary_name = true,
    disable_help_subcommand = true
)]
pub struct BudgetCli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Today's calls and tokens against the daily caps: agent's own calls (probes, checks,
    /// relayed calls), not the calls a CLI makes on its own login (`--usage` shows those)
    Status {
        #[arg(long)]
        json: bool,
    },
    /// Set the daily caps (0 = unlimited); they win over the configuration file
    Set {
        #[arg(long, value_name = "N")]
        calls: Option<u64>,
        #[arg(long, value_name = "N")]
        tokens: Option<u64>,
    },
    /// The last calls in the ledger (estimated token counts are marked ~)
    Recent {
        #[arg(long, value_name = "N", default_value_t = 20)]
        tail: usize,
        #[arg(long)]
        json: bool,
    },
}
