//! `agent [ARGS]`: choose a rung, announce any descent, run the CLI, and fall to the next
//! rung only when the chosen one fails fast. `--use` skips all of it and execs.

pub mod agy_usage;
pub mod cascade;
pub mod child;
pub mod codex_limits;
pub mod dry_run;
pub mod fastfail;
pub mod known;
pub mod login_usage;
pub mod own_login;
pub mod parking;
pub mod rung;
pub mod survey;

use std::ffi::OsString;
use std::fmt::Write as _;
use std::process::ExitCode;

use crate::config::Config;
use crate::exit_codes::{UnavailableError, usage};
use crate::launch::cascade::{Cascade, Choice, Good, Status};
use crate::state::events;
use crate::state::health::Store;
use crate::term;
use child::Ended;
use fastfail::Verdict;

pub struct Options<'a> {
    /// The CLI's words, exactly as given (not necessarily UTF-8).
    pub args: &'a [OsString],
    pub dry_run: bool,
    pub json: bool,
}

/// The cascade: choose, run, and descend on a fast failure.
pub fn run(config: &Config, options: &Options) -> anyhow::Result<ExitCode> {
    let state_dir = crate::paths::state_dir();
    if state_dir.as_os_str().is_empty() || state_dir.exists() {
        // Every state file refuses it too: nothing is read from it or written to it, and
        // probes cannot reserve their call, so the top rung runs unprobed.
        if let Err(err) = crate::state::file::check_dir(&state_dir) {
            term::notice(&format!(
                "{err:#} — running without agent's state (rungs unprobed, nothing recorded)"
            ));
        }
    }
    let mut cascade = Cascade::new(
        config,
        Store::new(&state_dir),
        crate::state::meter::Meter::new(&state_dir, config.budget),
    );
    let mut start = 0;
    // Why each rung was passed over, for the final message if none is left.
    let mut why_not: Vec<(String, String)> = Vec::new();
    loop {
        let choice = cascade.choose(start);
        if options.dry_run {
            return dry_run::print(&mut cascade, &choice, options.args, options.json);
        }
        announce_passed(&mut cascade, &choice, &mut why_not);
        let Some(winner) = choice.winner else {
            return Err(no_rung_left(&why_not));
        };
        let rung = cascade.rung(winner).clone();
        if let Some(Status::Good {
            how: Good::BudgetUnprobed,
            reason,
            ..
        }) = &choice.winner_status
        {
            term::notice(&format!(
                "{reason} — running {} unprobed; the fast-fail net still guards it",
                rung.label()
            ));
        }
        if let Some(account) = &rung.account {
            crate::accounts::rotation::ran_on(rung.backend, account, &state_dir);
        }
        if winner > 0 {
            term::notice(&format!("using {}", rung.label()));
            if start == 0 {
                let first = cascade.rung(0).label();
                let reason = why_not.first().map_or("", |(_, reason)| reason.as_str());
                events::record(
                    &state_dir,
                    events::Kind::Fallback,
                    &first,
                    &rung.label(),
                    reason,
                );
            }
        }
        let Ok(ready) = &rung.state else {
            unreachable!("a winner is always ready")
        };
        let mut command = child::command(
            &rung.command_prefix(),
            options.args,
            &ready.env,
            &ready.env_remove,
        );
        let run_start = jiff::Timestamp::now();
        child::tell_the_statusline(
            &mut command,
            &rung.label(),
            ready.login.as_ref().map(|login| login.key.as_str()),
        );
        let (ended, elapsed) = child::run(command)?;
        let verdict = if crate::signals::was_told_to_stop() {
            Verdict::Final
        } else {
            fastfail::judge(ended, elapsed, config.fastfail)
        };
        match (ended, verdict) {
            (Ended::Signal(signal), _) => crate::signals::die_by(signal),
            (Ended::Code(code), Verdict::Final) => return Ok(ExitCode::from(exit_byte(code))),
            (Ended::Code(code), Verdict::FastFail) => {
                let reason = format!("exited {code} after {}s", elapsed.as_secs());
                term::notice(&format!(
                    "{} {reason} — treating as unavailable",
                    rung.label()
                ));
                cascade.store().distrust(&ready.plan.target, &reason);
                learn_windows(config, &cascade, &rung, run_start);
                events::record(
                    &state_dir,
                    events::Kind::Fastfail,
                    &rung.label(),
                    "",
                    &reason,
                );
                why_not.push((rung.label(), reason));
                start = winner + 1;
            }
        }
    }
}

/// After a fast failure: what that run's own record says of its login's windows is
/// recorded, so the next launch parks the login until the reset instead of running it
/// into the same wall (a short rate limit of the service names no window: nothing).
fn learn_windows(
    config: &Config,
    cascade: &Cascade,
    rung: &rung::Rung,
    run_start: jiff::Timestamp,
) {
    let Ok(cwd) = std::env::current_dir() else {
        return;
    };
    let now = jiff::Timestamp::now();
    let learned = cascade.parking().learn_from_run(rung, &cwd, run_start, now);
    let park_at = config.park_at_percent(rung.backend);
    if let Some(full) = learned
        .iter()
        .filter(|w| w.is_full())
        .max_by_key(|w| w.resets_at)
    {
        term::notice(&format!(
            "{}: {} — parked until then",
            rung.label(),
            parking::describe(full, park_at)
        ));
    }
}

fn exit_byte(code: i32) -> u8 {
    u8::try_from(code & 0xff).unwrap_or(1)
}

/// Prints `[agent] X unavailable — reason` for each rung passed over (not for CLIs that are
/// simply not installed: they were never an option).
fn announce_passed(cascade: &mut Cascade, choice: &Choice, why_not: &mut Vec<(String, String)>) {
    for (index, status) in &choice.passed {
        let label = cascade.rung(*index).label();
        if let Status::Failed { reason, skip, .. } = status {
            if !skip {
                term::notice(&format!("{label} unavailable — {reason}"));
            }
            why_not.push((label, reason.clone()));
        }
    }
}

fn no_rung_left(why_not: &[(String, String)]) -> anyhow::Error {
    let mut message = String::from("no rung is available:");
    for (label, reason) in why_not {
        let _ = write!(message, "\n  {label}: {reason}");
    }
    let fast: Vec<&str> = why_not
        .iter()
        .filter_map(|(_, reason)| reason.strip_prefix("exited "))
        .collect();
    if fast.len() > 1
        && fast.len()
            == why_not
                .iter()
                .filter(|(_, r)| !r.starts_with("not installed"))
                .count()
    {
        message.push_str("\n  every CLI that ran failed at once: if the arguments are wrong for them, fix those; `agent --dry-run ARGS` shows what would run");
    }
    anyhow::Error::new(UnavailableError(message))
}

/// `--use backend[:model]`: no probe, no fallback; exec the CLI in agent's place.
pub fn force(config: &Config, spec: &str, options: &Options) -> anyhow::Result<ExitCode> {
    let (name, model) = spec.split_once(':').unwrap_or((spec, ""));
    let Some(backend) = config.backends.get(name) else {
        let known: Vec<&str> = config.backends.keys().map(String::as_str).collect();
        return Err(usage(format!(
            "--use {spec}: unknown backend \"{name}\" (known: {})",
            known.join(", ")
        )));
    };
    // The model given is the one to run; without one, the CLI keeps its own default.
    let run_model = if model.is_empty() {
        None
    } else {
        Some(
            rung::resolve_model(backend, model)
                .map_err(|err| usage(format!("--use {spec}: {}", err.reason)))?,
        )
    };
    let Some(binary) = crate::backend::discover::find(&backend.command) else {
        return Err(anyhow::Error::new(UnavailableError(format!(
            "--use {spec}: {} not found on PATH or in the usual install directories",
            backend.command
        ))));
    };
    let env = rung::launch_env(backend)
        .map_err(|unusable| usage(format!("--use {spec}: {}", unusable.reason)))?;
    let mut argv = vec![binary.to_string_lossy().into_owned()];
    if let (Some(flag), Some(model)) = (&backend.model_flag, &run_model) {
        argv.extend([flag.clone(), model.clone()]);
    }
    if options.dry_run {
        return dry_run::print_forced(
            backend,
            run_model.as_deref(),
            &argv,
            &env,
            options.args,
            options.json,
        );
    }
    let mut command = child::command(&argv, options.args, &env, &backend.env_remove);
    let label = match &run_model {
        Some(model) => format!("{} ({model})", backend.label),
        None => backend.label.clone(),
    };
    let login = crate::adapter::Family::of_backend(&backend.name, &backend.command)
        .login_key(&crate::adapter::Env::child(&env, &backend.env_remove), None);
    child::tell_the_statusline(&mut command, &label, login.as_deref());
    Err(child::exec(command))
}
