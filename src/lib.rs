//! `agent`: run the AI coding CLI that really answers right now. See DESIGN.md for the
//! contract; `main.rs` only calls [`run`].

pub mod accounts;
pub mod alerts;
pub mod backend;
pub mod bounds;
pub mod budget;
pub mod builtin;
pub mod cascade;
pub mod cli;
pub mod cli_settings;
pub mod config;
pub mod discover;
pub mod docs;
pub mod error_class;
pub mod events;
pub mod exit_codes;
pub mod expand;
pub mod health;
pub mod http;
pub mod launch;
pub mod launcher;
pub mod ledger;
pub mod meter;
pub mod paths;
pub mod probe;
pub mod redact;
pub mod relay;
pub mod report;
pub mod retry;
pub mod rung;
pub mod schedule;
pub mod secret;
pub mod service_text;
pub mod signals;
pub mod state_file;
pub mod survey;
pub mod term;
pub mod usage;

use std::process::ExitCode;

/// Parses the command line and does what it asks.
pub fn run() -> anyhow::Result<ExitCode> {
    let cli = match cli::parse(std::env::args_os().skip(1).collect()) {
        Ok(cli) => cli,
        Err(err) => {
            // --help and --version land here too, with exit code 0.
            let _ = err.print();
            return Ok(ExitCode::from(u8::try_from(err.exit_code()).unwrap_or(2)));
        }
    };
    term::init(cli.quiet, cli.color);
    if cli.generate_man.is_some() || cli.generate_completions.is_some() {
        if let Some(dir) = &cli.generate_man {
            docs::write_man(dir)?;
        }
        if let Some(dir) = &cli.generate_completions {
            docs::write_completions(dir)?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    if cli.doctor {
        // The doctor reports a broken configuration instead of stopping at it.
        return report::doctor::run(paths::config_file(cli.config.clone()).as_ref(), cli.json);
    }
    let mut config = config::load(paths::config_file(cli.config.clone()))?;
    accounts::load_stored(&mut config)?;
    if let Some(args) = &cli.accounts {
        return report::accounts::run(&config, args, cli.json);
    }
    // A launch takes the next round-robin turn; reports look without moving it.
    let launching = !cli.is_report() && cli.use_backend.is_none();
    accounts::expand(&mut config, &paths::state_dir(), launching);
    if cli.list {
        return report::list::run(&config, cli.json);
    }
    if let Some(args) = &cli.install_watchdog {
        return report::watchdog::install(&config, args, cli.config.as_deref());
    }
    if let Some(args) = &cli.uninstall_watchdog {
        return report::watchdog::uninstall(&config, args, cli.config.as_deref());
    }
    if let Some(args) = &cli.relay {
        return relay::run(&config, args, cli.config.as_deref());
    }
    if let Some(args) = &cli.budget {
        return report::budget::run(&config, args, cli.json);
    }
    if let Some(args) = &cli.usage {
        return usage::run(&config, args, cli.json);
    }
    if cli.status {
        return report::status::run(&config, cli.json);
    }
    if cli.check_fallback {
        return report::check_fallback::run(&config, cli.json);
    }
    let options = launcher::Options {
        args: &cli.cli_args,
        dry_run: cli.dry_run,
        json: cli.json,
    };
    match &cli.use_backend {
        Some(spec) => launcher::force(&config, spec, &options),
        None => launcher::run(&config, &options),
    }
}

/// A closed stdout (`agent --list | head -1`) is not an error worth a word.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
