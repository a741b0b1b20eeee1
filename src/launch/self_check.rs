//! The CLI's own check (DESIGN §17): a rung on a subscription login may not be probed with
//! its token (the vendors reserve it for their own CLIs), so the CLI itself runs, headless,
//! with its own login, and a minimal prompt, bounded by a timeout; then what it printed and
//! the record it wrote of that run say whether it answered, hit a limit (and which window,
//! until when), or failed.
//!
//! It proves what the launch will run (seed 002: a check of another model than the one in
//! use is a green light over a broken rung): the rung's binary, its launch environment (the
//! same home variable, or none), and the model the launch passes — none when the launch
//! passes none, so the CLI runs its own default exactly as the launch does, never the model
//! a probe would have named. Its tools and MCP servers are off where the CLI has words for
//! that ([`SelfCheck::no_tools_args`]): one word back needs none of them. Rungs that would
//! run the same check (one login, one model) share one ([`key`]).
//!
//! A report never runs a folder's code (DESIGN §23): the check runs in the directory a launch
//! would use only when that CLI's own trust record trusts it; else in a scratch directory
//! agent owns, with the CLI's project settings, hooks and MCP servers off where it can say
//! so ([`SelfCheck::scratch_args`], [`SelfCheck::scratch_env`]). A folder in which a launch
//! would be refused (Gemini CLI's untrusted folder, Codex outside a git repository) is
//! reported as that fact, read from the record, and nothing runs.
//!
//! What each CLI prints and what its words mean is its adapter's ([`SelfCheck`]); this file
//! only runs it and judges by those tables. Never by the exit code alone: Antigravity
//! exits 0 on a spent quota. One call, reserved through the meter before it runs and written
//! to the ledger after (role [`ROLE`], the CLI's own token count and session id), so
//! `--usage` counts it once beside the CLI's transcript of it.
//!
//! Safe to call from several threads at once: each call runs its own child and shares only
//! the meter's and the windows' files, which lock.

use std::ffi::OsString;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use jiff::Timestamp;

use crate::adapter::dialect::Refusal;
use crate::adapter::{CheckDir, Env, Meaning, Said, SelfCheck, Trust};
use crate::child::{Group, Job, Stopped};
use crate::error_class::ErrorClass;
use crate::launch::parking::{self, Parking};
use crate::launch::rung::{Ready, Rung};
use crate::probe::Outcome;
use crate::state::ledger::Tokens;
use crate::state::meter::{CallInfo, Meter, Spent, estimate_tokens};
use crate::state::window::Window;

/// The ledger's role for a self-check's call.
pub const ROLE: &str = "self_check";

/// The prompt: one word back is all it takes to prove the login answers.
pub const PROMPT: &str = "Reply with the single word ok.";

/// What one self-check found.
#[derive(Debug, Clone)]
pub struct Finding {
    /// Its class and one line of reason (redacted, printable).
    pub outcome: Outcome,
    /// The full window, when the CLI hit a limit that names one.
    pub window: Option<Window>,
    /// What the check spent, as the CLI itself counted it (`None`: it did not say; the
    /// ledger then holds an estimate, marked as such).
    pub tokens: Option<Tokens>,
    /// The CLI's session id, when it gave one.
    pub session: Option<String>,
}

impl Finding {
    fn nothing_run(class: ErrorClass, reason: &str) -> Finding {
        Finding {
            outcome: Outcome {
                class,
                reason: crate::text::printable(&crate::redact::redact(reason)),
                latency: Duration::ZERO,
                clears_at: None,
            },
            window: None,
            tokens: None,
            session: None,
        }
    }
}

/// The words the rung's binary is given: its CLI's headless form with a machine-readable
/// answer ([`SelfCheck::args`], in Claude Code's words, said in the CLI's own by its
/// dialect), the prompt, and the model the launch passes (none when it passes none); then
/// the CLI's own words that turn its tools off ([`SelfCheck::no_tools_args`]) and `own`
/// (its dialect passes both as they are).
pub fn argv(rung: &Rung, own: &[&str]) -> Result<Vec<OsString>, Refusal> {
    let family = rung.backend.family;
    let check = family.self_check();
    // The backend's own headless words come after the translation; a word of the check's
    // they already say is not said twice (clap refuses a switch given twice).
    let configured = rung.backend.own_args.for_form(true);
    let args: Vec<OsString> = check
        .map_or(&["-p", "PROMPT"][..], |check| check.args)
        .iter()
        .chain(check.map_or(&[][..], |check| check.no_tools_args))
        .chain(check.map_or(&[][..], |check| check.one_call_args))
        .chain(
            own.iter()
                .filter(|word| !configured.iter().any(|c| c == *word)),
        )
        .map(|word| OsString::from(if *word == "PROMPT" { PROMPT } else { word }))
        .collect();
    // The launch's own model, never the probe's: a rung that passes none runs the CLI's
    // default, and that is what must answer.
    rung.backend
        .in_own_words(rung.run_model.as_deref(), &args)
        .map(|t| t.argv)
}

/// What a check of the rung runs: its binary, its words and its launch environment (home
/// variable, credentials, what is removed), as a digest that holds no secret. Two rungs with
/// the same key — one login, one model — would run the same check, so one check answers for
/// both. `None`: the rung cannot be checked by running its CLI.
pub fn key(rung: &Rung) -> Option<String> {
    let ready = rung.state.as_ref().ok()?;
    let args = argv(rung, &[]).ok()?;
    let mut words = vec![ready.binary.as_os_str().to_owned()];
    words.extend(args);
    words.extend(
        ready
            .env
            .iter()
            .map(|(name, value)| format!("{name}={value}").into()),
    );
    words.extend(
        ready
            .env_remove
            .iter()
            .map(|name| format!("-{name}").into()),
    );
    // Each word's length before it, so no two lists of words run together into one.
    let mut bytes = Vec::new();
    for word in &words {
        let word = word.as_encoded_bytes();
        bytes.extend_from_slice(&word.len().to_le_bytes());
        bytes.extend_from_slice(word);
    }
    Some(crate::digest::sha256_hex(&bytes))
}

/// Whether a launch of the rung in `dir` would be refused, by its CLI's own trust record:
/// a fact of this folder, so no earlier check's answer stands for it.
pub fn refused_in(rung: &Rung, dir: &Path) -> bool {
    let family = rung.backend.family;
    let (Some(check), Ok(ready), Ok(args)) = (family.self_check(), &rung.state, argv(rung, &[]))
    else {
        return false;
    };
    let env = Env::child(&ready.env, &ready.env_remove);
    matches!((check.trust)(&env, dir, &args), Trust::Refused(_))
}

/// Runs the rung's CLI once as its own check, for a launch in `dir` (there when its CLI
/// trusts it, else in a scratch directory under `state_dir`), within `timeout`, and judges
/// what it said. The call is reserved through `meter` first (refused: nothing runs) and
/// written to the ledger after; a limit's window is recorded under the login's key by
/// `parking`.
pub fn run(
    rung: &Rung,
    parking: &Parking,
    dir: &Path,
    state_dir: &Path,
    timeout: Duration,
    meter: &Meter,
) -> Finding {
    let ready = match &rung.state {
        Ok(ready) => ready,
        Err(unusable) => return Finding::nothing_run(unusable.class, &unusable.reason),
    };
    let family = rung.backend.family;
    let Some(check) = family.self_check() else {
        return Finding::nothing_run(
            ErrorClass::Misconfigured,
            &format!(
                "agent knows no self-check for {} (no adapter for its command)",
                rung.backend.command
            ),
        );
    };
    // The scratch directory lives until the check is over.
    let Placed {
        args,
        cwd,
        scratch_env,
        scratch: _kept,
    } = match place(rung, ready, dir, state_dir) {
        Ok(placed) => placed,
        Err(finding) => return *finding,
    };
    let cwd = cwd.as_path();
    // The launch environment's secrets never reach a reason or the ledger, by value.
    for (name, value) in &ready.env {
        if crate::redact::looks_secret(name) && !value.is_empty() {
            crate::redact::register(value);
        }
    }
    let reservation = match meter.reserve() {
        Ok(reservation) => reservation,
        Err(refusal) => {
            return Finding {
                outcome: Outcome::refused(&refusal),
                window: None,
                tokens: None,
                session: None,
            };
        }
    };
    let name = binary_name(ready);
    let start = Timestamp::now();
    let started = Instant::now();
    let ran = crate::child::run(
        &mut command(ready, &args, cwd, scratch_env),
        &Job::new(timeout, Group::Own).terminal(family.needs_terminal()),
    );
    let latency = started.elapsed();
    let judged = match ran {
        Err(err) => {
            // It never started: no call was made, and none is counted.
            meter.release(&reservation);
            return Finding::nothing_run(
                ErrorClass::BinaryMissing,
                &format!("{name} could not be started: {err}"),
            );
        }
        Ok(ran) => {
            let stdout = String::from_utf8_lossy(&ran.stdout).into_owned();
            let stderr = String::from_utf8_lossy(&ran.stderr).into_owned();
            // The run's own record names the window it hit, whatever it printed.
            let learned = parking.learn_from_run(rung, cwd, start, Timestamp::now());
            judge(
                check,
                &Printed {
                    name: &name,
                    end: ran.end,
                    stdout: &stdout,
                    stderr: &stderr,
                },
                &learned,
                cwd,
            )
        }
    };
    let (tokens, estimated) = record_the_call(meter, &reservation, rung, &name, &judged, latency);
    finding(judged, latency, (!estimated).then_some(tokens))
}

/// What a check that ran found: its judgement as a health outcome (its reason redacted),
/// the window it hit, the tokens its CLI reported.
fn finding(judged: Judged, latency: Duration, tokens: Option<Tokens>) -> Finding {
    let clears_at = judged.window.as_ref().map(|w| {
        std::time::SystemTime::UNIX_EPOCH
            + Duration::from_secs(u64::try_from(w.resets_at.as_second()).unwrap_or(0))
    });
    Finding {
        outcome: Outcome {
            class: judged.class,
            reason: crate::text::printable(&crate::redact::redact(&judged.reason)),
            latency,
            clears_at,
        },
        window: judged.window,
        tokens,
        session: judged.said.session,
    }
}

/// Where a self-check runs and with which words: the CLI's own check arguments, in the
/// launch's directory when its CLI trusts it, else in a scratch directory (kept alive by
/// `scratch` until the check is over) with the words and variables that turn the folder's
/// settings off.
struct Placed {
    args: Vec<OsString>,
    cwd: std::path::PathBuf,
    scratch_env: &'static [(&'static str, &'static str)],
    scratch: Option<crate::scratch::Scratch>,
}

/// Where the check of `rung` for a launch in `dir` runs; `Err`: the finding of a check
/// that cannot run (words its CLI cannot take, a folder it refuses, no scratch directory).
fn place(rung: &Rung, ready: &Ready, dir: &Path, state_dir: &Path) -> Result<Placed, Box<Finding>> {
    let family = rung.backend.family;
    let refused_words =
        |refusal: Refusal| Finding::nothing_run(ErrorClass::BadArguments, &refusal.what());
    let here = match argv(rung, &[]) {
        Ok(args) => args,
        Err(refusal) => return Err(Box::new(refused_words(refusal))),
    };
    let place = crate::state::file::ensure_dir(state_dir)
        .map_err(|err| std::io::Error::other(format!("{err:#}")))
        .and_then(|()| {
            family.check_dir(
                &Env::child(&ready.env, &ready.env_remove),
                dir,
                &here,
                state_dir,
            )
        });
    let (args, cwd, scratch_env, scratch) = match place {
        Ok(CheckDir::Here) => (here, dir.to_path_buf(), &[][..], None),
        Ok(CheckDir::Scratch { dir, args, env }) => match argv(rung, args) {
            Ok(args) => (args, dir.path().to_path_buf(), env, Some(dir)),
            Err(refusal) => return Err(Box::new(refused_words(refusal))),
        },
        Ok(CheckDir::Refused(fact)) => {
            return Err(Box::new(Finding::nothing_run(
                ErrorClass::Misconfigured,
                &fact,
            )));
        }
        Err(err) => {
            return Err(Box::new(Finding::nothing_run(
                ErrorClass::Misconfigured,
                &format!("making a scratch directory for the check: {err}"),
            )));
        }
    };
    Ok(Placed {
        args,
        cwd,
        scratch_env,
        scratch,
    })
}

/// Writes the check's call to the ledger against its `reservation`: the tokens its record
/// gave, else an estimate (said so: the second value is `true`).
fn record_the_call(
    meter: &Meter,
    reservation: &crate::state::budget::Reservation,
    rung: &Rung,
    name: &str,
    judged: &Judged,
    latency: Duration,
) -> (Tokens, bool) {
    let Ok(ready) = &rung.state else {
        unreachable!("a check runs only a ready rung")
    };
    let family = rung.backend.family;
    let (tokens, estimated) = match judged.said.tokens {
        Some(tokens) => (tokens, false),
        None => (
            Tokens {
                input: estimate_tokens(PROMPT.len()),
                output: 1,
                ..Tokens::default()
            },
            true,
        ),
    };
    let info = CallInfo {
        // The model it ran: the launch's, else what the CLI itself says it runs (its
        // settings, or its newest record, which this run just wrote) — never the probe's.
        model: rung.run_model.clone().or_else(|| {
            let env = Env::child(&ready.env, &ready.env_remove);
            crate::launch::reported_model::in_env(family, &env).map(|reported| reported.model)
        }),
        upstream: name.to_string(),
        role: ROLE,
        ..ready.plan.info.clone()
    };
    meter.record(
        reservation,
        &info,
        &Spent {
            class: Some(judged.class),
            tokens,
            estimated,
            duration: latency,
            session: judged.said.session.clone(),
            ..Spent::default()
        },
    );
    (tokens, estimated)
}

/// The child: the rung's binary and launch environment (then `extra`), in `dir`, stdin
/// closed (the door closes it), in a process group of its own.
fn command(ready: &Ready, args: &[OsString], dir: &Path, extra: &[(&str, &str)]) -> Command {
    let mut command = crate::child_env::command(&ready.binary);
    command.args(args);
    crate::child_env::start_in(&mut command, dir);
    for name in &ready.env_remove {
        command.env_remove(name);
    }
    command.envs(ready.env.iter().map(|(k, v)| (k, v)));
    command.envs(extra.iter().copied());
    command
}

fn binary_name(ready: &Ready) -> String {
    ready.binary.file_name().map_or_else(
        || ready.binary.to_string_lossy().into_owned(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// What the CLI did.
struct Printed<'a> {
    name: &'a str,
    end: Result<std::process::ExitStatus, Stopped>,
    stdout: &'a str,
    stderr: &'a str,
}

/// The verdict before it is written down.
struct Judged {
    class: ErrorClass,
    reason: String,
    window: Option<Window>,
    said: Said,
}

/// Judges a run by its adapter's tables: a full window in its record, then its words (an
/// untrusted folder, a refused login, a rate limit, a usage limit, any other failure),
/// then its own account of a failure; it passed only when it exited 0 with an answer and
/// none of these.
fn judge(check: &SelfCheck, printed: &Printed, learned: &[Window], dir: &Path) -> Judged {
    let name = printed.name;
    let said = what_it_said(check, printed);
    let all = format!("{}\n{}", printed.stdout, printed.stderr);
    let full = learned
        .iter()
        .filter(|w| w.is_full())
        .max_by_key(|w| w.resets_at)
        .cloned();
    let words = || words_of(&said, printed);
    let how = how_it_ended(printed.end);
    let code = printed.end.ok().and_then(|status| status.code());
    let verdict = |class, reason: String| Judged {
        class,
        reason,
        window: None,
        said: said.clone(),
    };
    if let Some(window) = full {
        let reason = format!("{name}: {}", parking::describe(&window, 100.0));
        return Judged {
            window: Some(window),
            ..verdict(ErrorClass::Quota, reason)
        };
    }
    let meaning = check.meaning(&all);
    if code.is_some() && code == check.untrusted_exit
        || matches!(meaning, Some((Meaning::Untrusted, _)))
    {
        return verdict(
            ErrorClass::Misconfigured,
            format!(
                "{name} will not run in {} ({how}: {}) — {}",
                dir.display(),
                words(),
                check.untrusted_fix_for(dir)
            ),
        );
    }
    match meaning {
        Some((Meaning::Auth, _)) => {
            return verdict(
                ErrorClass::Auth,
                format!("{name} {how}: {} — {}", words(), check.auth_fix),
            );
        }
        Some((Meaning::RateLimited, _)) => {
            return verdict(
                ErrorClass::RateLimited,
                format!("{name} {how}: {}", words()),
            );
        }
        Some((Meaning::Limit, _)) => {
            return verdict(ErrorClass::Quota, format!("{name} {how}: {}", words()));
        }
        _ => {}
    }
    let Ok(status) = printed.end else {
        return verdict(ErrorClass::Unreachable, with_words(name, &how, &words()));
    };
    let failed = matches!(meaning, Some((Meaning::Failure, _))) || said.error.is_some();
    match (&said.answer, status.success() && !failed) {
        (Some(answer), true) => {
            let answer = crate::text::snippet(answer);
            let shown: String = answer.chars().take(60).collect();
            verdict(ErrorClass::Ok, format!("{name} answered: {shown}"))
        }
        (None, true) => verdict(
            ErrorClass::BadRequest,
            format!("{name} {how} with no answer"),
        ),
        (_, false) => {
            let tail = words();
            let class = match crate::probe::classify_output(&tail) {
                // A failure is never a pass, whatever its words.
                ErrorClass::Ok => ErrorClass::BadRequest,
                class => class,
            };
            verdict(class, with_words(name, &how, &tail))
        }
    }
}

/// What the CLI said, by its adapter's reader. A CLI (or a wrapper in front of it) that
/// answers in plain text rather than the machine-readable form still answered; only its
/// tokens are unknown (estimated).
fn what_it_said(check: &SelfCheck, printed: &Printed) -> Said {
    let mut said = (check.read)(printed.stdout, printed.stderr);
    let plain = printed.stdout.trim();
    if said.answer.is_none()
        && said.error.is_none()
        && !plain.is_empty()
        && !plain.starts_with(['{', '['])
    {
        said.answer = Some(plain.to_string());
    }
    said
}

/// The CLI's own words, for a reason: its error, else what it printed last.
fn words_of(said: &Said, printed: &Printed) -> String {
    let text = said
        .error
        .clone()
        .or_else(|| last_words(printed.stderr))
        .or_else(|| last_words(printed.stdout))
        .unwrap_or_default();
    crate::text::snippet(&text)
}

/// How the run ended, in words: `exited 1`, `was killed by a signal`, or why it was stopped.
fn how_it_ended(end: Result<std::process::ExitStatus, crate::child::Stopped>) -> String {
    match end {
        Ok(status) => match status.code() {
            Some(code) => format!("exited {code}"),
            None => "was killed by a signal".to_string(),
        },
        Err(stopped) => stopped.to_string(),
    }
}

/// `NAME HOW`, with its words after a colon when it said any.
fn with_words(name: &str, how: &str, words: &str) -> String {
    if words.is_empty() {
        format!("{name} {how}")
    } else {
        format!("{name} {how}: {words}")
    }
}

/// The last non-empty line of `text`.
fn last_words(text: &str) -> Option<String> {
    text.lines()
        .rev()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .map(str::to_string)
}

#[cfg(test)]
mod tests;
