//! The `command` probe: run the CLI itself headless, stdin closed — in the user's current
//! directory only when that CLI's own trust record trusts it, else in a scratch directory of
//! agent's with the folder's settings, hooks and MCP servers off (DESIGN §23: a report
//! never runs a folder's code). A folder in which a launch would be refused (Gemini CLI's
//! untrusted folder: the seed's "probe passed, launch failed") fails the probe as that
//! fact, read from the record, with nothing run.

use std::ffi::OsString;
use std::time::{Duration, Instant};

use super::Outcome;
use super::classify::{classify_output, snippet};
use crate::adapter::{CheckDir, Env, Family};
use crate::error_class::ErrorClass;
use crate::state::ledger::Tokens;
use crate::state::meter::{CallInfo, Meter, Spent, estimate_tokens};

pub fn run(
    family: Family,
    argv: &[String],
    env: &[(String, String)],
    env_remove: &[String],
    timeout: Duration,
    meter: &Meter,
    info: &CallInfo,
) -> Outcome {
    let place = match where_to_run(family, argv, env, env_remove) {
        Ok(place) => place,
        Err(reason) => {
            return Outcome {
                class: ErrorClass::Misconfigured,
                reason,
                latency: Duration::ZERO,
                clears_at: None,
            };
        }
    };
    // The CLI makes its own LLM call: reserve it like any other.
    let reservation = match meter.reserve() {
        Ok(reservation) => reservation,
        Err(refusal) => return Outcome::refused(&refusal),
    };
    let outcome = run_unmetered(argv, env, env_remove, timeout, &place);
    if outcome.class == ErrorClass::BinaryMissing {
        // It never started: no call was made.
        meter.release(&reservation);
        return outcome;
    }
    // What the CLI sent is unknown here: the tokens are an estimate, marked as such.
    let spent = Spent {
        class: Some(outcome.class),
        tokens: Tokens {
            input: estimate_tokens(argv.iter().map(String::len).sum()),
            output: 1,
            ..Tokens::default()
        },
        estimated: true,
        duration: outcome.latency,
        ..Spent::default()
    };
    meter.record(&reservation, info, &spent);
    outcome
}

/// Where the probe runs: its CLI's own answer for the current directory (see the module's
/// doc); `Err`: the fact that a launch here would be refused, or why no scratch directory
/// could be made.
fn where_to_run(
    family: Family,
    argv: &[String],
    env: &[(String, String)],
    env_remove: &[String],
) -> Result<CheckDir, String> {
    let Ok(dir) = std::env::current_dir() else {
        return Ok(CheckDir::Here);
    };
    let args: Vec<OsString> = argv[1..].iter().map(OsString::from).collect();
    let state_dir = crate::paths::state_dir();
    crate::state::file::ensure_dir(&state_dir)
        .map_err(|err| std::io::Error::other(format!("{err:#}")))
        .and_then(|()| family.check_dir(&Env::child(env, env_remove), &dir, &args, &state_dir))
        .map_err(|err| format!("making a scratch directory for the probe: {err}"))
        .and_then(|place| match place {
            CheckDir::Refused(fact) => Err(fact),
            place => Ok(place),
        })
}

fn run_unmetered(
    argv: &[String],
    env: &[(String, String)],
    env_remove: &[String],
    timeout: Duration,
    place: &CheckDir,
) -> Outcome {
    let started = Instant::now();
    let name = argv
        .first()
        .map(|p| {
            std::path::Path::new(p)
                .file_name()
                .map_or(p.clone(), |n| n.to_string_lossy().into_owned())
        })
        .unwrap_or_default();
    let mut command = crate::child_env::command(&argv[0]);
    command.args(&argv[1..]);
    for name in env_remove {
        command.env_remove(name);
    }
    command.envs(env.iter().map(|(k, v)| (k, v)));
    if let CheckDir::Scratch { dir, args, env } = place {
        command.args(*args).envs(env.iter().copied());
        crate::child_env::start_in(&mut command, dir.path());
    }
    let job = crate::child::Job::new(timeout, crate::child::Group::Own);
    let output = match crate::child::run(&mut command, &job).map(crate::child::Ran::output) {
        Ok(Ok(output)) => output,
        Ok(Err(stopped)) => {
            return Outcome {
                class: ErrorClass::Unreachable,
                reason: format!("{name} {stopped}"),
                latency: started.elapsed(),
                clears_at: None,
            };
        }
        Err(err) => {
            return Outcome {
                class: ErrorClass::BinaryMissing,
                reason: format!("{name} could not be started: {err}"),
                latency: started.elapsed(),
                clears_at: None,
            };
        }
    };
    let latency = started.elapsed();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    if output.status.success() && !stdout.trim().is_empty() {
        return Outcome {
            class: ErrorClass::Ok,
            reason: format!(
                "{name} answered: {}",
                snippet(stdout.trim()).chars().take(60).collect::<String>()
            ),
            latency,
            clears_at: None,
        };
    }
    let how = match output.status.code() {
        Some(0) => "exited 0 with no output".to_string(),
        Some(code) => format!("exited {code}"),
        None => "was killed by a signal".to_string(),
    };
    let printed = format!("{} {}", stderr.trim(), stdout.trim());
    let class = if output.status.success() {
        ErrorClass::BadRequest
    } else {
        classify_output(&printed)
    };
    let printed = snippet(&crate::redact::redact(printed.trim()));
    let reason = if printed.is_empty() {
        format!("{name} {how}")
    } else {
        format!("{name} {how}: {printed}")
    };
    Outcome {
        class,
        reason,
        latency,
        clears_at: None,
    }
}
