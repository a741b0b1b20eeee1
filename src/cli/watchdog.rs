//! `agent --install-watchdog` and `agent --uninstall-watchdog`.

use std::path::PathBuf;

use clap::Parser;

#[derive(Debug, Parser)]
#[command(name = "agent --install-watchdog", no_binary_name = true)]
pub struct InstallCli {
    /// How often to check: 30m, 2h, 1d
    #[arg(long, value_name = "INTERVAL", default_value = "2h")]
    pub every: String,
    /// The directory the check is for: a CLI is run there only when it trusts it (else in
    /// agent's scratch directory), and one it would refuse (Gemini CLI untrusted, Codex
    /// outside a git repository) is reported, and warned of now. Must exist and be yours alone (one another
    /// user can write, /tmp included, is refused) [default: the current directory]
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Print what would be written and run; change nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Override the scheduler chosen for this machine
    #[arg(long, value_enum)]
    pub scheduler: Option<Scheduler>,
}

#[derive(Debug, Parser)]
#[command(name = "agent --uninstall-watchdog", no_binary_name = true)]
pub struct UninstallCli {
    #[arg(long)]
    pub dry_run: bool,
    #[arg(long, value_enum)]
    pub scheduler: Option<Scheduler>,
}

/// Where the watchdog is scheduled (`--scheduler`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Scheduler {
    Launchd,
    Systemd,
    Cron,
}
