//! `agent --relay serve|init|install`.

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "agent --relay",
    no_binary_name = true,
    disable_help_subcommand = true
)]
pub struct RelayCli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
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
