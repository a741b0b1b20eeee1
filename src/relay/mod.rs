//! The credential relay (DESIGN.md §10, seed 000): the real keys — and the Claude
//! subscription login — stay on one host; every other client talks to a loopback relay
//! with a relay token (from another machine, through an ssh reverse tunnel), and every
//! call is reserved against the budget, recorded in the ledger and read for health.
//!
//! `agent --relay serve | init | tokens | install`. Only `serve` starts a runtime.

mod accounting;
mod answer;
mod call;
mod caller;
mod claude_cli;
mod clients;
mod connections;
mod gate;
mod install;
mod keys;
mod proxy;
mod scrub;
mod server;
mod shared;
mod subscriptions;
mod target;
mod token;
mod usage;

use std::path::Path;
use std::process::ExitCode;

use crate::cli::relay::{Command, RelayCli};
use crate::config::Config;

pub use crate::config::relay::{RelayConfig, RelayFile};

/// `agent --relay …`.
pub fn run(
    config: &Config,
    args: &[String],
    config_flag: Option<&Path>,
) -> anyhow::Result<ExitCode> {
    let cli: RelayCli = match crate::cli::parse_sub(args) {
        Ok(cli) => cli,
        Err(code) => return Ok(code),
    };
    if let Some(store) = &config.store {
        let role = match cli.command {
            Command::Serve { .. } => crate::state::store::Role::Relay,
            _ => crate::state::store::Role::Local,
        };
        crate::state::store::install(store, role)?;
    }
    match cli.command {
        Command::Serve {
            listen,
            allow_remote,
        } => server::serve(config, listen.as_deref(), allow_remote),
        Command::Init { force } => {
            let path = token::init(force)?;
            crate::term::emit(&format!(
                "relay token written to {} (0600). Clients use it as their API key, e.g. AGENT_PROXY_KEY=$(cat {}); `agent --relay serve` reads it (or {}).\n",
                path.display(),
                path.display(),
                token::ENV
            ))?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Tokens { command } => clients::run(config, command),
        Command::Install { dry_run, service } => {
            let launchd = match service.as_deref() {
                Some(kind) => kind == "launchd",
                None => cfg!(target_os = "macos"),
            };
            let plan = install::plan(config, config_flag, launchd)?;
            crate::term::emit(&install::install(&plan, dry_run)?)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}
