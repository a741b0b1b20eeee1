//! `agent --relay serve|init|tokens|install`.

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "agent --relay",
    bin_name = "agent --relay",
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
    /// Named clients, one token per person with caps of their own: `add NAME
    /// [--daily-calls N] [--daily-tokens N]`, `list [--json]`, `revoke NAME`
    Tokens {
        #[command(subcommand)]
        command: TokensCommand,
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

#[derive(Debug, Subcommand)]
pub enum TokensCommand {
    /// Make a client and print its token, once (only its SHA-256 is kept)
    Add {
        /// The client's name, as the ledger and `--usage --by client` show it
        name: String,
        /// This client's calls a day (0 = no cap of its own; the team's caps still hold)
        #[arg(long, value_name = "N", default_value_t = 0)]
        daily_calls: u64,
        /// This client's tokens a day (0 = no cap of its own)
        #[arg(long, value_name = "N", default_value_t = 0)]
        daily_tokens: u64,
        /// Replace an existing client's token and caps (its old token stops working)
        #[arg(long)]
        force: bool,
    },
    /// The named clients: name, caps, when made, the hash's last four digits (never a token)
    List {
        /// Machine-readable output
        #[arg(long)]
        json: bool,
    },
    /// Remove a client: its token is refused from the next request on, no restart needed
    Revoke {
        /// The client's name
        name: String,
    },
}
