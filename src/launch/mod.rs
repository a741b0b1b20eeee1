//! `agent [ARGS]`: choose a rung, announce any descent, run the CLI, and fall to the next
//! rung only when the chosen one fails fast. `--use` skips all of it and execs.

pub mod acted;
pub mod agy_usage;
pub mod cascade;
pub mod child;
pub mod codex_limits;
pub mod dry_run;
pub mod fastfail;
pub mod known;
pub mod login_usage;
pub mod outcome;
pub mod own_login;
pub mod parking;
pub mod reported_model;
pub mod resolve;
pub mod rung;
pub mod rung_state;
pub mod self_check;
pub mod survey;
pub mod waiting;

use std::ffi::OsString;
use std::fmt::Write as _;
use std::process::ExitCode;

use crate::config::Config;
use crate::error_class::ErrorClass;
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
    /// `--wait[=MAX]` / `AGENT_WAIT`: with every rung parked, wait up to this long for the
    /// earliest reset instead of exiting 75.
    pub wait: Option<std::time::Duration>,
    /// `--on-limit` / `AGENT_ON_LIMIT` (the flag wins): what to do after a session ran out
    /// of its window; `None`: not said here (then `on_limit` in the file, else the default).
    pub on_limit: Option<crate::config::on_limit::OnLimit>,
    /// `--outcome FILE` / `AGENT_OUTCOME` (the flag wins): where the outcome record goes,
    /// already armed with [`outcome::record_to`] before the launch begins.
    pub outcome: Option<std::path::PathBuf>,
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
    let new_cascade = || {
        Cascade::new(
            config,
            Store::new(&state_dir),
            crate::state::meter::Meter::new(&state_dir, config.budget),
        )
        .for_args(options.args)
    };
    let mut cascade = new_cascade();
    let mut start = 0;
    // Why each rung was passed over, for the final message if none is left.
    let mut why_not: Vec<(String, String)> = Vec::new();
    // A launch waits for a parked rung at most once.
    let mut wait = options.wait;
    loop {
        let choice = cascade.choose(start);
        if options.dry_run {
            return dry_run::print(&mut cascade, &choice, options.args, options.json);
        }
        announce_passed(&mut cascade, &choice, &mut why_not);
        let Some(winner) = choice.winner else {
            match waiting::every_rung_parked(config, &mut cascade, wait.take()) {
                None => return Err(no_rung_left(&why_not)),
                Some(waiting::Parked::Exit(code)) => return Ok(code),
                Some(waiting::Parked::Reopened) => {
                    // Health, probes and windows as they are now, from the top.
                    cascade = new_cascade();
                    start = 0;
                    why_not.clear();
                    continue;
                }
            }
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
        // Account before model before vendor: the rung's login was passed on within it.
        for notice in rung.login_notices() {
            term::notice(&notice);
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
        // The cascade passed over every rung whose CLI cannot take the words.
        let translation = rung
            .translate(options.args)
            .map_err(|refusal| usage(refusal.to_string()))?;
        for notice in &translation.notices {
            term::notice(notice);
        }
        let mut command = child::command(
            rung.backend.family,
            &[ready.binary.to_string_lossy().into_owned()],
            &translation.argv,
            &ready.env,
            &ready.env_remove,
        );
        let run_start = jiff::Timestamp::now();
        child::tell_the_statusline(
            &mut command,
            rung.backend.family,
            &rung.label(),
            ready.login.as_ref().map(|login| login.key.as_str()),
        );
        let child::Outcome {
            ended,
            elapsed,
            stderr_head,
        } = match child::run(command) {
            Ok(outcome) => outcome,
            Err(err) if too_long_to_start(&err) => {
                // The system refused the words before the CLI ran: nothing ran, nothing
                // is unhealthy, and another rung (another CLI's words) may fit.
                let reason = format!("{err:#} — its command line is too long to start");
                term::notice(&format!("{} cannot start: {reason}", rung.label()));
                why_not.push((rung.label(), reason));
                start = winner + 1;
                continue;
            }
            Err(err) => return Err(err),
        };
        let verdict = if crate::signals::was_told_to_stop() {
            Verdict::Final
        } else {
            fastfail::judge(ended, elapsed, config.fastfail)
        };
        match (ended, verdict) {
            (Ended::Signal(signal), _) => crate::signals::die_by(signal),
            (Ended::Code(code), Verdict::Final) => {
                // It really started: a failure at an earlier launch is no longer news.
                if code == 0 || elapsed >= config.fastfail {
                    cascade.store().launched(&ready.plan.target);
                }
                if code != 0 && elapsed >= config.fastfail {
                    note_a_limit_ending(config, &cascade, &rung, run_start);
                }
                return Ok(ExitCode::from(exit_byte(code)));
            }
            (Ended::Code(code), Verdict::FastFail)
                if let Some(why) = refused_arguments(&rung, code, &stderr_head) =>
            {
                // Bad arguments are not an outage: another rung would be handed the same.
                term::notice(&format!(
                    "{} refused the arguments (exit {code}, {why}) — not an outage, so no other rung is tried; `agent --dry-run ARGS` shows the command line it was given",
                    rung.label()
                ));
                return Ok(ExitCode::from(exit_byte(code)));
            }
            (Ended::Code(code), Verdict::FastFail)
                if let Some(actions) = acted_before_failing(&rung, run_start) =>
            {
                // It did start: the next CLI handed the same prompt from scratch would redo
                // or fight the half-done work. Its windows are still learnt, so a limit it
                // hit parks it.
                let reason = format!(
                    "exited {code} after {}s, after it had {}",
                    elapsed.as_secs(),
                    actions.describe()
                );
                term::notice(&format!(
                    "{} {reason} — not re-run from scratch on another rung; look at what it left, then run agent again",
                    rung.label()
                ));
                file_fast_failure(config, &cascade, &rung, run_start, &reason);
                return Ok(ExitCode::from(exit_byte(code)));
            }
            (Ended::Code(code), Verdict::FastFail) => {
                let reason = format!("exited {code} after {}s", elapsed.as_secs());
                term::notice(&format!(
                    "{} {reason} — treating as unavailable",
                    rung.label()
                ));
                cascade.store().distrust(&ready.plan.target, &reason);
                file_fast_failure(config, &cascade, &rung, run_start, &reason);
                why_not.push((rung.label(), reason));
                start = winner + 1;
            }
        }
    }
}

/// What every fast failure leaves: the windows its run's record names, and an event.
fn file_fast_failure(
    config: &Config,
    cascade: &Cascade,
    rung: &rung::Rung,
    run_start: jiff::Timestamp,
    reason: &str,
) {
    learn_windows(config, cascade, rung, run_start);
    events::record(
        cascade.store().state_dir(),
        events::Kind::Fastfail,
        &rung.label(),
        "",
        reason,
    );
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
    if let Some(spent) = file_spent_window(config, cascade, rung, run_start) {
        term::notice(&format!("{}: {spent} — parked until then", rung.label()));
    }
}

/// After a late failure (past `fastfail_seconds`: the run was real, and stays final, as
/// seed 002 rules): when the run's own record says its login's window ran out mid-session
/// (DESIGN §21), the window is filed — the next launch skips the login until its reset
/// instead of starting into the same wall — and the user is told, once. Any other late
/// failure is left as it is.
fn note_a_limit_ending(
    config: &Config,
    cascade: &Cascade,
    rung: &rung::Rung,
    run_start: jiff::Timestamp,
) {
    if let Some(spent) = file_spent_window(config, cascade, rung, run_start) {
        term::notice(&format!(
            "{} ran out of its window mid-session ({spent}) — its exit code is passed through; the next launch skips this login until then",
            rung.label()
        ));
    }
}

/// Records the windows the run of `rung` that started at `run_start` names in its own
/// record, and describes the spent one that resets last, when there is one.
fn file_spent_window(
    config: &Config,
    cascade: &Cascade,
    rung: &rung::Rung,
    run_start: jiff::Timestamp,
) -> Option<String> {
    let cwd = std::env::current_dir().ok()?;
    let now = jiff::Timestamp::now();
    let learned = cascade.parking().learn_from_run(rung, &cwd, run_start, now);
    let full = learned
        .iter()
        .filter(|w| w.is_full())
        .max_by_key(|w| w.resets_at)?;
    Some(parking::describe(
        full,
        config.park_at_percent(rung.backend),
    ))
}

/// What the run that failed fast had done — changed files, ran commands — by its CLI's
/// own record, when it did anything.
fn acted_before_failing(rung: &rung::Rung, run_start: jiff::Timestamp) -> Option<acted::Actions> {
    let cwd = std::env::current_dir().ok()?;
    Some(acted::by_run(rung, &cwd, run_start)).filter(acted::Actions::acted)
}

/// Whether starting the CLI failed because its words and environment are more than the
/// system takes (`E2BIG`).
fn too_long_to_start(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::ArgumentListTooLong)
    })
}

/// Whether the rung's CLI refused the arguments, and how it said so: its usage-error exit
/// code, or its usage words at the start of its stderr (its adapter's).
fn refused_arguments(rung: &rung::Rung, code: i32, stderr_head: &str) -> Option<String> {
    let family = rung.backend.family;
    if family.dialect().is_some_and(|d| d.usage_exit == Some(code)) {
        return Some("its usage error".to_string());
    }
    family
        .usage_words()
        .iter()
        .find(|words| stderr_head.contains(*words))
        .map(|words| format!("it said \"{words}\""))
}

fn exit_byte(code: i32) -> u8 {
    u8::try_from(code & 0xff).unwrap_or(1)
}

/// Prints `[agent] X unavailable — reason` for each rung passed over (not for CLIs that are
/// simply not installed: they were never an option).
fn announce_passed(cascade: &mut Cascade, choice: &Choice, why_not: &mut Vec<(String, String)>) {
    for (index, status) in &choice.passed {
        let label = cascade.rung(*index).label();
        if let Status::Failed {
            reason,
            skip,
            class,
        } = status
        {
            if *class == ErrorClass::BadArguments {
                term::notice(reason);
            } else if !skip {
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
    if let Some(cause) = same_failure(why_not) {
        let _ = write!(message, "\n  {cause}");
    }
    anyhow::Error::new(UnavailableError(message))
}

/// When every rung that ran failed fast the same way (and every other was passed over for
/// the arguments), what that says and the likeliest cause.
fn same_failure(why_not: &[(String, String)]) -> Option<String> {
    let mut codes: Vec<&str> = Vec::new();
    let mut refused: Vec<&str> = Vec::new();
    for (_, reason) in why_not {
        if let Some(rest) = reason.strip_prefix("exited ") {
            codes.push(rest.split(' ').next().unwrap_or(rest));
        } else if let Some((flag, _)) = reason.split_once(": passed over") {
            refused.push(flag);
        } else if !reason.starts_with("not installed") {
            return None;
        }
    }
    if codes.is_empty() || codes.len() + refused.len() < 2 {
        return None;
    }
    let how = if codes.len() == 1 {
        format!("the one rung that ran exited {} at once", codes[0])
    } else if codes.iter().all(|code| *code == codes[0]) {
        format!(
            "every rung that ran exited {} at once, the same way",
            codes[0]
        )
    } else {
        "every rung that ran failed at once".to_string()
    };
    let cause = if refused.is_empty() {
        "the likeliest cause is what they share — the arguments or the working directory — rather than every vendor at once".to_string()
    } else {
        format!(
            "the likeliest cause is the arguments, not an outage ({})",
            refused.join("; ")
        )
    };
    Some(format!(
        "{how}: {cause}; `agent --dry-run ARGS` shows each command line"
    ))
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
            resolve::resolve_model(backend, model)
                .map_err(|err| usage(format!("--use {spec}: {}", err.reason)))?,
        )
    };
    let Some(binary) = crate::backend::discover::find(&backend.command) else {
        return Err(anyhow::Error::new(UnavailableError(format!(
            "--use {spec}: {} not found on PATH or in the usual install directories",
            backend.command
        ))));
    };
    let env = resolve::launch_env(backend)
        .map_err(|unusable| usage(format!("--use {spec}: {}", unusable.reason)))?;
    // The user still writes Claude Code's command line: it goes in the CLI's words.
    let translation = backend
        .in_own_words(run_model.as_deref(), options.args)
        .map_err(|refusal| usage(format!("--use {spec}: {}", refusal.what())))?;
    let argv = vec![binary.to_string_lossy().into_owned()];
    if options.dry_run {
        return dry_run::print_forced(
            backend,
            run_model.as_deref(),
            &argv,
            &env,
            &translation,
            options.json,
        );
    }
    for notice in &translation.notices {
        term::notice(notice);
    }
    let mut env_remove = backend.env_remove.clone();
    resolve::withhold_foreign_keys(backend, &env, &mut env_remove);
    let mut command = child::command(backend.family, &argv, &translation.argv, &env, &env_remove);
    let label = format!(
        "{} ({})",
        backend.label,
        run_model.as_deref().unwrap_or(rung::DEFAULT_MODEL_WORDS)
    );
    let login = backend
        .family
        .login_key(&crate::adapter::Env::child(&env, &env_remove), None);
    child::tell_the_statusline(&mut command, backend.family, &label, login.as_deref());
    Err(child::exec(command))
}
