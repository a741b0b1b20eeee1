//! `agent --install-watchdog [--every 2h] [--dir DIR] [--dry-run] [--scheduler …]` and
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
    let dir = schedule::job_dir(cli.dir.as_deref())?;
    let scheduler = cli.scheduler.unwrap_or_else(Scheduler::detect);
    let plan = schedule::plan(config, scheduler, every, &dir, config_flag)?;
    crate::report::emit(&schedule::install(&plan, cli.dry_run)?)?;
    if !config.alerts.is_configured() {
        // Installed all the same: the verdicts still reach --doctor, the statusline and the
        // dashboard; but nobody is told of a change until a channel is set.
        crate::term::warn(&format!(
            "no alert channel is configured — the watchdog will check every {} but tell no one; {}",
            schedule::humane(every),
            crate::watch::alerts::no_channel_fix(config)
        ));
    }
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
    // Removing needs only the files' paths, which depend on neither the interval nor the
    // job's directory.
    let plan = schedule::plan(
        config,
        scheduler,
        std::time::Duration::from_secs(7200),
        Path::new("/"),
        config_flag,
    )?;
    crate::report::emit(&schedule::uninstall(&plan, cli.dry_run)?)?;
    Ok(ExitCode::SUCCESS)
}
