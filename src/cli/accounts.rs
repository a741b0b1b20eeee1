//! `agent --accounts list|add|remove|test`.

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "agent --accounts",
    bin_name = "agent --accounts",
    no_binary_name = true,
    disable_help_subcommand = true
)]
pub struct AccountsCli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Every account: backend, kind, where its secret comes from, health, last check; a
    /// login's plan, expiry and windows
    List {
        #[arg(long)]
        json: bool,
    },
    /// Store a new account; the secret is read from stdin and checked first. A login
    /// (`--kind login --dir DIR`) has no secret: DIR must hold the CLI's own login
    Add {
        name: String,
        #[arg(long, value_name = "BACKEND")]
        backend: String,
        #[arg(long, value_enum)]
        kind: KindArg,
        /// With --kind login: the CLI's home directory it is logged in in (its
        /// CLAUDE_CONFIG_DIR, CODEX_HOME or GEMINI_CLI_HOME); the CLI's default home
        /// (~/.claude, ~/.codex) runs as typing the CLI would, with no such variable set;
        /// refused when another user can write it
        #[arg(long, value_name = "DIR", required_if_eq("kind", "login"))]
        dir: Option<std::path::PathBuf>,
        #[arg(long, value_name = "N", default_value_t = 100)]
        priority: i64,
        /// YYYY-MM-DD: warnings 30 and 7 days ahead
        #[arg(long, value_name = "DATE")]
        expires: Option<String>,
        /// The variable the launched CLI gets the secret in
        #[arg(long, value_name = "VAR")]
        secret_var: Option<String>,
        #[arg(long, value_name = "USD", default_value_t = 0.0)]
        monthly_budget_usd: f64,
    },
    /// Forget a stored account
    Remove { name: String },
    /// Check accounts' credentials against the API (zero-cost: a model list)
    Test {
        name: Option<String>,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum KindArg {
    Oauth,
    #[value(name = "api_key")]
    ApiKey,
    /// A CLI's own login in its own home directory (--dir)
    Login,
}
