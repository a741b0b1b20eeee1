//! `agent [ARGS]`: choose a rung, announce any descent, run the CLI, and fall to the next
//! rung only when the chosen one fails fast. `--use` skips all of it and execs.

pub mod acted;
pub mod agy_usage;
pub mod cascade;
pub mod child;
pub mod claude_result;
pub mod codex_limits;
pub mod dry_run;
pub mod fastfail;
pub mod folder;
pub mod held;
pub mod known;
pub mod limit_ending;
pub mod login_usage;
pub mod no_prompt;
pub mod outcome;
pub mod own_login;
pub mod parking;
pub mod quota_ending;
pub mod reported_model;
pub mod resolve;
pub mod rung;
pub mod rung_state;
pub mod same_way;
pub mod self_check;
pub mod survey;
pub mod waiting;

use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::PathBuf;
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

/// The cascade: choose, run, and descend on a fast failure; after a limit ending, follow
/// `on_limit`. The outcome record (`--outcome`) is written on the way out.
pub fn run(config: &Config, options: &Options) -> anyhow::Result<ExitCode> {
    if !options.dry_run {
        no_prompt::refuse(options.args)?;
    }
    let code = run_cascade(config, options)?;
    outcome::finish(i32::from(code));
    Ok(ExitCode::from(code))
}

/// A hand-off waiting for the rung it goes to: announced once that rung is chosen.
struct Handoff {
    from: String,
    spent: String,
    brief: Option<PathBuf>,
}

fn run_cascade(config: &Config, options: &Options) -> anyhow::Result<u8> {
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
    let new_cascade = |args: &[OsString]| {
        Cascade::new(
            config,
            Store::new(&state_dir),
            crate::state::meter::Meter::new(&state_dir, config.budget),
        )
        .for_args(args)
    };
    // Claude Code's words for the CLI: the user's, until a hand-off or a resume says others.
    let mut args: Vec<OsString> = options.args.to_vec();
    let mut cascade = new_cascade(&args);
    let mut start = 0;
    // Why each rung was passed over, for the final message if none is left.
    let mut why_not: Vec<(String, String)> = Vec::new();
    // How each rung that ran failed at once, for the same.
    let mut ran_failed: Vec<same_way::How> = Vec::new();
    // A launch waits for a parked rung at most once.
    let mut wait = options.wait;
    let mut handoff: Option<Handoff> = None;
    // The rungs (and logins) a session was handed off from: never again, never back up.
    let mut handed_from: Vec<(usize, Option<String>)> = Vec::new();
    // A session is resumed after its reset at most once.
    let mut resumed = false;
    loop {
        let mut choice = cascade.choose(start);
        if options.dry_run {
            return dry_run::print(&mut cascade, &choice, &args, options.json).map(|_| 0);
        }
        // The rung a session was just handed off from is passed over as parked: the hand-off
        // notice says so once.
        let said: Vec<usize> = match handoff {
            Some(_) => handed_from.iter().map(|(index, _)| *index).collect(),
            None => Vec::new(),
        };
        announce_passed(&mut cascade, &choice, &said, &mut why_not);
        if choice.winner.is_none()
            && start > 0
            && let Some(again) = reopened_above(&mut cascade)
        {
            choice = again;
        }
        let Some(winner) = choice.winner else {
            if let Some(handoff) = &handoff {
                term::notice(&format!(
                    "{} ran out of its window ({}) — no other rung is open to continue on",
                    handoff.from, handoff.spent
                ));
            }
            match waiting::every_rung_parked(config, &mut cascade, wait.take()) {
                None => return Err(no_rung_left(&why_not, &ran_failed)),
                Some(waiting::Parked::Exit(code)) => return Ok(code),
                Some(waiting::Parked::Reopened) => {
                    // Health, probes and windows as they are now, from the top.
                    cascade = new_cascade(&args);
                    start = 0;
                    why_not.clear();
                    ran_failed.clear();
                    continue;
                }
            }
        };
        let rung = cascade.rung(winner).clone();
        let Ok(ready) = &rung.state else {
            unreachable!("a winner is always ready")
        };
        let login_key = ready.login.as_ref().map(|login| login.key.clone());
        if handed_from.contains(&(winner, login_key.clone())) {
            // Its window was filed when it handed off; a state dir agent cannot write
            // would offer it again. It is never handed the session back.
            cascade.tried(winner, "the session was handed off from it");
            start = winner + 1;
            continue;
        }
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
        if let Some(handoff) = handoff.take() {
            announce_handoff(&state_dir, &handoff, &rung.label());
        } else if winner > 0 {
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
        let (run_args, session_id) = limit_ending::name_the_session(&rung, &args);
        // The cascade passed over every rung whose CLI cannot take the words.
        let translation = rung
            .translate(&run_args)
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
            login_key.as_deref(),
        );
        let family = rung.backend.family;
        let stdout_plan = stdout_plan(config, family, &run_args);
        let child::Outcome {
            ended,
            elapsed,
            stderr_head,
            printed,
            held,
        } = match child::run(command, family.needs_terminal(), stdout_plan) {
            Ok(outcome) => outcome,
            Err(err) if too_long_to_start(&err) => {
                // The system refused the words before the CLI ran: nothing ran, nothing
                // is unhealthy, and another rung (another CLI's words) may fit.
                let reason = format!("{err:#} — its command line is too long to start");
                term::notice(&format!("{} cannot start: {reason}", rung.label()));
                cascade.tried(winner, &reason);
                why_not.push((rung.label(), reason));
                start = winner + 1;
                continue;
            }
            Err(err) => return Err(err),
        };
        let ran = |ended: outcome::Ended, code: Option<i32>| outcome::RungRun {
            rung: winner + 1,
            cli: rung.backend.family.name().to_string(),
            label: rung.label(),
            model: rung.run_model.clone(),
            session: session_id.clone(),
            seconds: elapsed.as_secs_f64(),
            code,
            ended,
            window: None,
            reset: None,
        };
        // A headless prompt that a CLI printing nothing off a terminal answered with nothing,
        // even on agent's own (DESIGN §22): it did not answer, whatever its exit code says.
        let silent = printed == Some(false) && crate::adapter::dialect::runs_headless(&run_args);
        let verdict = if crate::signals::was_told_to_stop() {
            Verdict::Final
        } else {
            fastfail::judge(ended, elapsed, config.fastfail, silent)
        };
        match (ended, verdict) {
            (Ended::Signal(signal), _) => {
                deliver(
                    held,
                    stdout_plan,
                    &rung,
                    &stderr_head,
                    signal + 128,
                    elapsed,
                );
                outcome::rung_ran(ran(outcome::Ended::Signal, None));
                crate::signals::die_by(signal)
            }
            (Ended::Code(code), Verdict::Final) => {
                // It really started: a failure at an earlier launch is no longer news.
                if code == 0 || elapsed >= config.fastfail {
                    cascade.store().launched(&ready.plan.target);
                }
                let ending = (code != 0 && elapsed >= config.fastfail)
                    .then(|| {
                        limit_ending_of(config, &cascade, &rung, run_start, session_id.clone())
                    })
                    .flatten();
                if ending.is_none()
                    && code != 0
                    && elapsed >= config.fastfail
                    && let Some(said) = quota_ending::refused(&rung, &stderr_head)
                {
                    // Its quota, though it names no window: skipped until it clears, and
                    // with no rung left but parked ones, the launch ends as a parked one.
                    quota_ending::skip(config, cascade.store(), &rung, code, elapsed, &said);
                    if !quota_ending::below_could_run(config, winner) {
                        outcome::rung_ran(ran(outcome::Ended::Limit, Some(code)));
                        match waiting::every_rung_parked(config, &mut cascade, wait.take()) {
                            Some(waiting::Parked::Exit(parked)) => {
                                deliver(held, stdout_plan, &rung, &stderr_head, code, elapsed);
                                return Ok(parked);
                            }
                            Some(waiting::Parked::Reopened) => {
                                // Another rung answers now: this run's words were its last.
                                show_words(held, &rung, &stderr_head);
                                cascade = new_cascade(&args);
                                start = 0;
                                why_not.clear();
                                continue;
                            }
                            None => {
                                deliver(held, stdout_plan, &rung, &stderr_head, code, elapsed);
                                return Ok(exit_byte(code));
                            }
                        }
                    }
                }
                let Some(ending) = ending else {
                    deliver(held, stdout_plan, &rung, &stderr_head, code, elapsed);
                    let ended = if code == 0 {
                        outcome::Ended::Done
                    } else {
                        outcome::Ended::Error
                    };
                    outcome::rung_ran(ran(ended, Some(code)));
                    return Ok(exit_byte(code));
                };
                outcome::rung_ran(outcome::RungRun {
                    window: Some(ending.window.scope.describe()),
                    reset: Some(ending.window.resets_at),
                    ..ran(outcome::Ended::Limit, Some(code))
                });
                let chain = limit_ending::Chain {
                    index: winner,
                    login: login_key.as_ref(),
                    handed_from: &handed_from,
                    resumed,
                };
                let asked = limit_ending::Asked {
                    on_limit: options.on_limit,
                    wait: options.wait,
                };
                let next = limit_ending::follow(
                    config,
                    &asked,
                    &chain,
                    &rung,
                    &args,
                    &ending,
                    code,
                    &mut cascade,
                    new_cascade,
                );
                if let limit_ending::Next::Exit(_) = next {
                    deliver(held, stdout_plan, &rung, &stderr_head, code, elapsed);
                } else {
                    // The session goes on elsewhere: what this run printed was its last word.
                    show_words(held, &rung, &stderr_head);
                }
                match next {
                    limit_ending::Next::Exit(code) => return Ok(code),
                    limit_ending::Next::HandOff { words, brief } => {
                        handed_from.push((winner, login_key.clone()));
                        handoff = Some(Handoff {
                            from: rung.label(),
                            spent: ending.spent.clone(),
                            brief,
                        });
                        args = words;
                    }
                    limit_ending::Next::Resume { words } => {
                        resumed = true;
                        args = words;
                    }
                }
                // From the rung that ran out down (its other logins first), with health,
                // probes and windows as they are now. `--wait` is still the launch's.
                cascade = new_cascade(&args);
                start = winner;
                why_not.clear();
                ran_failed.clear();
            }
            (Ended::Code(code), Verdict::FastFail)
                if let Some(why) = refused_arguments(&rung, code, &stderr_head) =>
            {
                // Bad arguments are not an outage: another rung would be handed the same.
                term::notice(&format!(
                    "{} refused the arguments (exit {code}, {why}) — not an outage, so no other rung is tried; `agent --dry-run ARGS` shows the command line it was given",
                    rung.label()
                ));
                deliver(held, stdout_plan, &rung, &stderr_head, code, elapsed);
                outcome::rung_ran(ran(outcome::Ended::UsageError, Some(code)));
                return Ok(exit_byte(code));
            }
            (Ended::Code(code), Verdict::FastFail)
                if let Some(fact) = std::env::current_dir().ok().and_then(|dir| {
                    folder::refused(&rung, &translation.argv, &dir, code, &stderr_head)
                }) =>
            {
                // A fact about this folder, not a dead rung: nothing is recorded against it.
                term::notice(&format!(
                    "{} refused this folder (exit {code}): {fact}",
                    rung.label()
                ));
                outcome::rung_ran(ran(outcome::Ended::FastFail, Some(code)));
                cascade.tried(winner, &fact);
                why_not.push((rung.label(), fact));
                ran_failed.push(same_way::How::Folder);
                start = winner + 1;
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
                deliver(held, stdout_plan, &rung, &stderr_head, code, elapsed);
                outcome::rung_ran(ran(outcome::Ended::Error, Some(code)));
                return Ok(exit_byte(code));
            }
            (Ended::Code(code), Verdict::FastFail) => {
                let reason = if silent {
                    "printed nothing for a headless prompt".to_string()
                } else {
                    format!("exited {code} after {}s", elapsed.as_secs())
                };
                // What it printed never reaches stdout, above the next rung's answer.
                show_words(held, &rung, &stderr_head);
                term::notice(&format!(
                    "{} {reason} — treating as unavailable",
                    rung.label()
                ));
                cascade.store().distrust(&ready.plan.target, &reason);
                file_fast_failure(config, &cascade, &rung, run_start, &reason);
                outcome::rung_ran(ran(outcome::Ended::FastFail, Some(code)));
                cascade.tried(winner, &reason);
                why_not.push((rung.label(), reason));
                ran_failed.push(same_way::How::of(&rung, code, &stderr_head, silent));
                start = winner + 1;
            }
        }
    }
}

/// What becomes of the stdout of a run of `family` with `args` (Claude Code's words, as
/// the rung is given them): a headless run's is held while its run may still fail fast,
/// when agent's stdout is not a terminal; one whose `--output-format json` is not Claude
/// Code's result document is kept whole, for agent to write that document.
fn stdout_plan(config: &Config, family: crate::adapter::Family, args: &[OsString]) -> held::Plan {
    use crate::adapter::dialect;
    let mode = if dialect::runs_headless(args) {
        dialect::Mode::Headless
    } else {
        dialect::Mode::Interactive
    };
    held::Plan::for_launch(
        mode,
        !family.prints_claudes_result() && dialect::asks_json_result(args),
        family.needs_terminal(),
        std::io::IsTerminal::is_terminal(&std::io::stdout()),
        config.fastfail,
    )
}

/// Writes what a run that counted printed and agent still held to stdout, in order — as
/// Claude Code's result document when the launch asked for one of a CLI that prints
/// another shape (`claude_result`).
fn deliver(
    held: Option<held::Spool>,
    plan: held::Plan,
    rung: &rung::Rung,
    stderr: &str,
    code: i32,
    elapsed: std::time::Duration,
) {
    use std::io::Write as _;
    let Some(held) = held else { return };
    let mut stdout = std::io::stdout();
    if plan == held::Plan::Whole {
        let doc = claude_result::document(
            rung.backend.family,
            &rung.label(),
            &held.text(),
            stderr,
            code,
            elapsed,
        );
        let _ = writeln!(stdout, "{doc}").and_then(|()| stdout.flush());
    } else {
        let _ = held.write_to(&mut stdout);
    }
}

/// Shows on stderr, as one line, what a run whose output must not reach stdout (it failed
/// fast, or its session went on elsewhere) printed there, so the user still sees why: its
/// own error when its output is machine-readable, else its words.
fn show_words(held: Option<held::Spool>, rung: &rung::Rung, stderr: &str) {
    let Some(held) = held else { return };
    if let Some(words) = claude_result::failure_words(rung.backend.family, &held.text(), stderr) {
        term::notice(&format!("{} said: {words}", rung.label()));
    }
}

/// Says where the session went and records it: an event (the dashboard and `--status`
/// show the last one) and the outcome's hand-off.
fn announce_handoff(state_dir: &std::path::Path, handoff: &Handoff, to: &str) {
    let brief = match &handoff.brief {
        Some(brief) => {
            outcome::handed_off(brief);
            format!(" with a brief of the session: {}", brief.display())
        }
        None => " with its original words (no brief)".to_string(),
    };
    term::notice(&format!(
        "{} ran out of its window ({}) — continuing in {to}{brief}",
        handoff.from, handoff.spent
    ));
    let reason = match &handoff.brief {
        Some(path) => format!("{} — brief {}", handoff.spent, path.display()),
        None => handoff.spent.clone(),
    };
    events::record(state_dir, events::Kind::Handoff, &handoff.from, to, &reason);
}

/// A late failure's limit ending, when its run's own record names a spent window: the
/// window is filed (the login parked until its reset) and the session read.
fn limit_ending_of(
    config: &Config,
    cascade: &Cascade,
    rung: &rung::Rung,
    run_start: jiff::Timestamp,
    session_id: Option<String>,
) -> Option<limit_ending::LimitEnding> {
    let (window, spent) = file_spent_window(config, cascade, rung, run_start)?;
    let cwd = std::env::current_dir().ok()?;
    let session = limit_ending::read_session(rung, &cwd, run_start, session_id.as_deref());
    let session_id = session_id.or_else(|| session.as_ref().and_then(|s| s.id.clone()));
    Some(limit_ending::LimitEnding {
        window,
        spent,
        session_id,
        session,
    })
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
    if let Some((_, spent)) = file_spent_window(config, cascade, rung, run_start) {
        term::notice(&format!("{}: {spent} — parked until then", rung.label()));
    }
}

/// Records the windows the run of `rung` that started at `run_start` names in its own
/// record, and returns the spent one that resets last with its words, when there is one.
fn file_spent_window(
    config: &Config,
    cascade: &Cascade,
    rung: &rung::Rung,
    run_start: jiff::Timestamp,
) -> Option<(crate::login::Window, String)> {
    let cwd = std::env::current_dir().ok()?;
    let now = jiff::Timestamp::now();
    let learned = cascade.parking().learn_from_run(rung, &cwd, run_start, now);
    let full = learned
        .iter()
        .filter(|w| w.is_full())
        .max_by_key(|w| w.resets_at)?;
    let words = parking::describe(full, config.park_at_percent(rung.backend));
    Some((full.clone(), words))
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
/// simply not installed: they were never an option; nor for the rungs in `said`, whose
/// reason another notice gave).
fn announce_passed(
    cascade: &mut Cascade,
    choice: &Choice,
    said: &[usize],
    why_not: &mut Vec<(String, String)>,
) {
    for (index, status) in &choice.passed {
        if cascade.was_tried(*index) {
            // Its failure was said, and counted, when it ran.
            continue;
        }
        let label = cascade.rung(*index).label();
        if let Status::Failed {
            reason,
            skip,
            class,
        } = status
        {
            if *class == ErrorClass::BadArguments {
                term::notice(reason);
            } else if !skip && !said.contains(index) {
                term::notice(&format!("{label} unavailable — {reason}"));
            }
            why_not.push((label, reason.clone()));
        }
    }
}

/// With every rung from the last one tried down used up: a rung above that this launch
/// passed over, open by now (a statusline feed reopened its login while the rungs below
/// were tried), as the launch's own choice finds it. Its notice says so.
fn reopened_above(cascade: &mut Cascade) -> Option<Choice> {
    let again = cascade.choose(0);
    let winner = again.winner?;
    term::notice(&format!(
        "{} reopened while the rungs below it were tried — running it",
        cascade.rung(winner).label()
    ));
    Some(Choice {
        passed: Vec::new(),
        ..again
    })
}

fn no_rung_left(why_not: &[(String, String)], ran: &[same_way::How]) -> anyhow::Error {
    let mut message = String::from("no rung is available:");
    for (label, reason) in why_not {
        let _ = write!(message, "\n  {label}: {reason}");
    }
    // The rungs passed over for the arguments point at them; rungs that never ran do not count.
    let refused: Vec<&str> = why_not
        .iter()
        .filter_map(|(_, reason)| reason.split_once(": passed over").map(|(flag, _)| flag))
        .collect();
    if let Some(cause) = same_way::summary(ran, &refused) {
        let _ = write!(message, "\n  {cause}");
    }
    anyhow::Error::new(UnavailableError(message))
}

/// `--use backend[:model]`: no probe, no fallback; exec the CLI in agent's place (one that
/// needs a terminal, with agent's stdout not one, is run under agent's own instead).
pub fn force(config: &Config, spec: &str, options: &Options) -> anyhow::Result<ExitCode> {
    if !options.dry_run {
        no_prompt::refuse(options.args)?;
    }
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
    if backend.family.needs_terminal() && !std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        // Off a terminal agent cannot step aside: the CLI would print nothing into agent's
        // stdout (DESIGN §22), so agent stays to copy it through a terminal of its own.
        return match child::run(command, true, held::Plan::Stream)?.ended {
            Ended::Code(code) => Ok(ExitCode::from(exit_byte(code))),
            Ended::Signal(signal) => crate::signals::die_by(signal),
        };
    }
    Err(child::exec(command))
}
