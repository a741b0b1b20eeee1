//! `agent --install-watchdog [--every 2h] [--dry-run] [--scheduler …]` and
//! `agent --uninstall-watchdog [--dry-run] [--scheduler …]`.

use std::path::Path;
use std::process::ExitCode;

use clap::Parser;

use crate::config::Config;
use crate::watch::schedule::{self, Scheduler};

#[derive(Debug, Parser)]
#[command(name = "agent --install-watchdog", no_binary_name = true)]
struct InstallCli {
    /// How often to check: 30m, 2h, 1d
    #[arg(long, default_value = "2h")]
    every: String,
    /// Print what would be written and run; change nothing
    #[arg(long)]
    dry_run: bool,
    /// Override the scheduler chosen for this machine
    #[arg(long, value_enum)]
    scheduler: Option<Scheduler>,
}

#[derive(Debug, Parser)]
#[command(name = "agent --uninstall-watchdog", no_binary_name = true)]
struct UninstallCli {
    #[arg(long)]
    dry_run: bool,
    #[arg(long, value_enum)]
    scheduler: Option<Scheduler>,
}

fn parse<T: Parser>(args: &[String]) -> Result<T, ExitCode> {
    T::try_parse_from(args).map_err(|err| {
        let _ = err.print();
        ExitCode::from(u8::try_from(err.exit_code()).unwrap_or(2))
    })
}

pub fn install(
    config: &Config,
    args: &[String],
    config_flag: Option<&Path>,
) -> anyhow::Result<ExitCode> {
    let cli: InstallCli = match parse(args) {
        Ok(cli) => cli,
        Err(code) => return Ok(code),
    };
    let every = schedule::parse_every(&cli.every)?;
    let scheduler = cli.scheduler.unwrap_or_else(Scheduler::detect);
    let plan = schedule::plan(config, scheduler, every, config_flag)?;
    crate::report::emit(&schedule::install(&plan, cli.dry_run)?)?;
    Ok(ExitCode::SUCCESS)
}

pub fn uninstall(
    config: &Config,
    args: &[String],
    config_flag: Option<&Path>,
) -> anyhow::Result<ExitCode> {
    let cli: UninstallCli = match parse(args) {
        Ok(cli) => cli,
        Err(code) => return Ok(code),
    };
    let scheduler = cli.scheduler.unwrap_or_else(Scheduler::detect);
    let plan = schedule::plan(
        config,
        scheduler,
        std::time::Duration::from_secs(7200),
        config_flag,
    )?;
    crate::report::emit(&schedule::uninstall(&plan, cli.dry_run)?)?;
    Ok(ExitCode::SUCCESS)
}
