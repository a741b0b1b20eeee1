//! `agent --dashboard [--listen ADDR] [--allow-remote] [--open]`.

use clap::Parser;

#[derive(Debug, Parser)]
#[command(name = "agent --dashboard", no_binary_name = true)]
pub struct DashboardCli {
    /// Address to listen on (port 0: a free one)
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:0")]
    pub listen: String,
    /// Allow a non-loopback listen address (anyone who can reach it and holds the token
    /// sees your usage; prefer an ssh -L tunnel)
    #[arg(long)]
    pub allow_remote: bool,
    /// Open the page in the browser ($BROWSER, else xdg-open, or open on macOS) through a
    /// one-time address that carries no token
    #[arg(long)]
    pub open: bool,
}
