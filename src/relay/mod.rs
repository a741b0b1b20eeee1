//! The credential relay (DESIGN.md §10, seed 000): the real keys — and the Claude
//! subscription login — stay on one host; every other client talks to a loopback relay
//! with a relay token (from another machine, through an ssh reverse tunnel), and every
//! call is reserved against the budget, recorded in the ledger and read for health.
//!
//! `agent --relay serve | init | install`. Only `serve` starts a runtime.

mod accounting;
mod call;
mod claude_cli;
mod install;
mod keys;
mod proxy;
mod scrub;
mod server;
mod target;
mod token;
mod usage;

use std::path::Path;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::config::Config;

pub use crate::config::relay::{RelayConfig, RelayFile};

#[derive(Debug, Parser)]
#[command(
    name = "agent --relay",
    no_binary_name = true,
    disable_help_subcommand = true
)]
struct RelayCli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the relay in the foreground (until SIGTERM or Ctrl-C)
    Serve {
        /// Address to listen on [default: relay.listen, 127.0.0.1:18790]
        #[arg(long, value_name = "ADDR")]
        listen: Option<String>,
        /// Allow a non-loopback listen address (anyone who can reach it and holds the
        /// token can spend your keys; prefer an ssh -R tunnel)
        #[arg(long)]
        allow_remote: bool,
    },
    /// Write a new random relay token to ~/.config/agent/relay-token (0600)
    Init {
        /// Replace an existing token (clients holding the old one get 401)
        #[arg(long)]
        force: bool,
    },
    /// Write a systemd user service (Linux) or launchd agent (macOS) that runs the relay
    Install {
        /// Print what would be written; write nothing
        #[arg(long)]
        dry_run: bool,
        /// launchd or systemd [default: this system's]
        #[arg(long, value_name = "KIND", value_parser = ["launchd", "systemd"])]
        service: Option<String>,
    },
}

/// `agent --relay …`.
pub fn run(
    config: &Config,
    args: &[String],
    config_flag: Option<&Path>,
) -> anyhow::Result<ExitCode> {
    let cli = match RelayCli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(err) => {
            let _ = err.print();
            return Ok(ExitCode::from(u8::try_from(err.exit_code()).unwrap_or(2)));
        }
    };
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
