//! `agent`: run the AI coding CLI that really answers right now. See DESIGN.md for the
//! contract; `main.rs` only calls [`run`].

// Floors (STYLE.md; `tests/layers.rs` holds each module to its floor): leaves, then `adapter`,
// then `cli`, then `config`, then `state` and `backend`, then `probe`, `accounts` and `login`,
// then `handoff`, then `launch`, then the faces (`report`, `watch`, `relay`, `usage`,
// `dashboard`). A module imports only from below it.

// Leaves.
pub mod access;
pub mod bounded_read;
pub mod bounds;
pub mod child;
pub mod child_env;
pub mod digest;
pub mod error_class;
pub mod exit_codes;
pub mod expand;
pub mod http;
pub mod ownership;
pub mod paths;
pub mod pty;
pub mod redact;
pub mod retry;
pub mod scratch;
pub mod secret;
pub mod secret_shapes;
pub mod service_text;
pub mod signals;
pub mod term;
pub mod text;
pub mod tokens;
pub mod when;
// The command line's definition (clap types only).
pub mod cli;
// Schema.
pub mod config;
// What agent knows of each CLI.
pub mod adapter;
// Records, and what a CLI uses.
pub mod backend;
pub mod state;
// Calls.
pub mod accounts;
pub mod login;
pub mod probe;
// A session's brief for the next CLI.
pub mod handoff;
// Choice and launch.
pub mod launch;
// Faces.
pub mod dashboard;
pub mod relay;
pub mod report;
pub mod usage;
pub mod watch;
// The man page and completions, generated from the command line.
pub mod docs;

use std::process::ExitCode;

/// Parses the command line and does what it asks.
pub fn run() -> anyhow::Result<ExitCode> {
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    if args.len() == 1 && args[0] == "--statusline" {
        // Claude Code runs it on every refresh of its screen: not even the command line's
        // parser is built (it is most of the cost), the configuration is read only for the
        // fallback word (never to fail on), and it never fails.
        return Ok(report::statusline::run());
    }
    // Armed before the command line is read: a usage error in it (`--on-limit=bogus`) is a
    // way out the record must tell a script about too.
    // A path refused here is refused again, as a usage error, once the command line says
    // this is a launch.
    let _ = launch::outcome::record_to(launch::outcome::path_from(None));
    let cli = match cli::parse(args) {
        Ok(cli) => cli,
        Err(err) => {
            // --help and --version land here too, with exit code 0: no launch, no record.
            let _ = err.print();
            let code = err.exit_code();
            if code != 0 {
                launch::outcome::finish(code);
            }
            return Ok(ExitCode::from(u8::try_from(code).unwrap_or(2)));
        }
    };
    // Only a launch is recorded: a report run with AGENT_OUTCOME set in the environment
    // must not replace the record of the launch before it.
    launch::outcome::record_to(
        cli.mode
            .is_launch()
            .then(|| launch::outcome::path_from(cli.outcome.as_deref()))
            .flatten(),
    )?;
    if cli.mode == cli::Mode::Statusline {
        return Ok(report::statusline::run());
    }
    term::init(cli.quiet, cli.color);
    if cli.mode.is_report() && cli.mode != cli::Mode::Doctor {
        // Before anything reads it: a report from state another user can write is refused
        // (exit 2, with the fix). A launch goes on without the state instead, unprobed —
        // the launcher says so — and the doctor reports it as a problem.
        refuse_untrusted_state_dir()?;
    }
    let config = || configured(&cli);
    match &cli.mode {
        cli::Mode::Statusline => Ok(report::statusline::run()),
        cli::Mode::Docs { man, completions } => {
            if let Some(dir) = man {
                docs::write_man(dir)?;
            }
            if let Some(dir) = completions {
                docs::write_completions(dir)?;
            }
            Ok(ExitCode::SUCCESS)
        }
        cli::Mode::ConfigTemplate => {
            term::emit(&config::template::render())?;
            Ok(ExitCode::SUCCESS)
        }
        cli::Mode::InstallStatusline => report::statusline_install::install(cli.dry_run),
        cli::Mode::UninstallStatusline => report::statusline_install::uninstall(cli.dry_run),
        // The doctor reports a broken configuration instead of stopping at it.
        cli::Mode::Doctor => {
            report::doctor::run(paths::config_file(cli.config.clone()).as_ref(), cli.json)
        }
        cli::Mode::Unpark(name) => report::unpark::run(&config()?, name, cli.json),
        cli::Mode::Accounts(args) => report::accounts::run(&config()?, args, cli.json),
        cli::Mode::List => report::list::run(&config()?, cli.json),
        cli::Mode::Tasks => report::tasks::run(cli.json),
        cli::Mode::InstallWatchdog(args) => {
            report::watchdog::install(&config()?, args, cli.config.as_deref())
        }
        cli::Mode::UninstallWatchdog(args) => {
            report::watchdog::uninstall(&config()?, args, cli.config.as_deref())
        }
        cli::Mode::Relay(args) => relay::run(&config()?, args, cli.config.as_deref()),
        cli::Mode::Budget(args) => report::budget::run(&config()?, args, cli.json),
        cli::Mode::Dashboard(args) => dashboard::run(&config()?, args),
        cli::Mode::Usage(args) => usage::run(&config()?, args, cli.json),
        cli::Mode::Status => report::status::run(&config()?, cli.json),
        cli::Mode::CheckFallback => report::check_fallback::run(&config()?, cli.json),
        cli::Mode::DryRun | cli::Mode::Force(_) | cli::Mode::Launch => {
            launch_as_asked(&config()?, &cli)
        }
    }
}

/// The configuration for `cli`'s mode: read and checked, its warnings said, the stored
/// accounts added, the shared store in place (the relay chooses its own role), and the
/// accounts' rows expanded — a launch takes the next round-robin turn, everything else
/// looks without moving it (`--accounts` sees them unexpanded).
fn configured(cli: &cli::Cli) -> anyhow::Result<config::Config> {
    let mut config = config::load(paths::config_file(cli.config.clone()))?;
    // A key agent does not know is a warning, and the command goes on: a fallback launcher
    // does not stop on a cosmetic typo (a wrong value for a known key did stop it above).
    for warning in &config.warnings {
        term::notice(warning);
    }
    accounts::load_stored(&mut config)?;
    if let Some(store) = &config.store
        && !matches!(cli.mode, cli::Mode::Relay(_))
    {
        // Only a serving relay may refuse calls while the store is away; everything else
        // falls back to this machine's files.
        state::store::install(store, state::store::Role::Local)?;
    }
    if !matches!(cli.mode, cli::Mode::Accounts(_)) {
        let launching = cli.mode == cli::Mode::Launch;
        accounts::expand(&mut config, &paths::state_dir(), launching);
    }
    Ok(config)
}

/// A launch, a forced one or a dry run of either.
fn launch_as_asked(config: &config::Config, cli: &cli::Cli) -> anyhow::Result<ExitCode> {
    refuse_a_slip(config, cli)?;
    // The user writes Claude Code's command line: what it refuses runs nowhere (§23).
    if let Some(refused) = adapter::dialect::refused_by_claude(&cli.cli_args) {
        return Err(exit_codes::usage(refused));
    }
    let options = launch::Options {
        args: &cli.cli_args,
        dry_run: cli.dry_run,
        json: cli.json,
        wait: launch::waiting::max_from(cli.wait.as_deref())?,
        on_limit: config::on_limit::from_command_line(cli.on_limit.as_deref())?,
        outcome: launch::outcome::path_from(cli.outcome.as_deref()),
    };
    match &cli.use_backend {
        Some(spec) => launch::force(config, spec, &options),
        None => launch::run(config, &options),
    }
}

/// `agent --stauts`: a slip of one of agent's own options, and no flag of the CLI that would
/// run first, is a usage error with the suggestion, before any CLI runs (DESIGN.md §2).
fn refuse_a_slip(config: &config::Config, cli: &cli::Cli) -> anyhow::Result<()> {
    let Some((typo, ours)) = &cli.near_miss else {
        return Ok(());
    };
    let first = match &cli.use_backend {
        Some(spec) => config.backends.get(spec.split(':').next().unwrap_or(spec)),
        None => config
            .rungs
            .first()
            .and_then(|rung| config.backends.get(&rung.backend)),
    };
    // With no backend the words are Claude Code's, the language every dialect translates.
    let known = first.map_or_else(
        || adapter::dialect::claude_flag(typo).is_some(),
        |b| b.family.is_flag(typo),
    );
    if known {
        return Ok(());
    }
    Err(exit_codes::usage(format!(
        "unknown option {typo}: did you mean {ours}? (after `--` it would go to the CLI)"
    )))
}

/// The state directory, if it exists, must be the user's own and writable by nobody else.
fn refuse_untrusted_state_dir() -> anyhow::Result<()> {
    let dir = paths::state_dir();
    if dir.as_os_str().is_empty() || dir.exists() {
        state::file::check_dir(&dir)?;
    }
    Ok(())
}

/// A closed stdout (`agent --list | head -1`) is not an error worth a word.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
