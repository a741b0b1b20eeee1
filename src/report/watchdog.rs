//! `agent --install-watchdog [--every 2h] [--dry-run] [--scheduler …]` and
//! `agent --uninstall-watchdog [--dry-run] [--scheduler …]`.

use std::path::Path;
use std::process::ExitCode;

use crate::cli::watchdog::{InstallCli, Scheduler, UninstallCli};
use crate::config::Config;
use crate::watch::schedule;

pub fn install(
    config: &Config,
    args: &[String],
    config_flag: Option<&Path>,
) -> anyhow::Result<ExitCode> {
    let cli: InstallCli = match crate::cli::parse_sub(args) {
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
    let cli: UninstallCli = match crate::cli::parse_sub(args) {
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
