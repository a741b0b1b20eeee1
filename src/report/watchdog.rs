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
    for (label, fact) in refused_in(config, &dir) {
        // The check reports it on every run; better said now, while the directory can
        // still be chosen again.
        crate::term::warn(&format!(
            "in the watchdog's directory {}, {label}: {fact}; or choose another with --dir DIR",
            dir.display()
        ));
    }
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

/// The rungs whose CLI would refuse a launch in `dir` by its own trust record (Codex
/// outside a git repository), each with the fact and its fix as `--status` words them;
/// one line per distinct fact.
fn refused_in(config: &Config, dir: &Path) -> Vec<(String, String)> {
    let mut refused: Vec<(String, String)> = Vec::new();
    for (index, def) in config.rungs.iter().enumerate() {
        let rung = crate::launch::resolve::resolve(config, index + 1, def);
        let Ok(ready) = &rung.state else {
            continue;
        };
        let Ok(args) = crate::launch::self_check::argv(&rung, &[]) else {
            continue;
        };
        let env = crate::adapter::env::Env::child(&ready.env, &ready.env_remove);
        if let Some(fact) = rung
            .backend
            .family
            .refusal_in(&env, dir, &args)
            .map(|refusal| crate::adapter::would_be_refused(&refusal))
            && !refused.iter().any(|(_, seen)| *seen == fact)
        {
            refused.push((rung.label(), fact));
        }
    }
    refused
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
