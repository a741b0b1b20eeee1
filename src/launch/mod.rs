//! `agent [ARGS]`: choose a rung, announce any descent, run the CLI, and fall to the next
//! rung only when the chosen one fails fast. `--use` skips all of it and execs.

pub mod acted;
pub mod ask_windows;
pub mod cascade;
pub mod child;
pub mod claude_result;
pub mod dry_run;
pub mod ending;
pub mod fastfail;
pub mod folder;
pub mod held;
pub mod known;
pub mod limit_ending;
mod machine;
pub mod no_prompt;
mod options;
pub mod outcome;
pub mod own_login;
pub mod own_quota;
pub mod parking;
pub mod quota_ending;
pub mod reported_model;
pub mod resolve;
pub mod run_record;
pub mod rung;
mod rung_name;
pub mod rung_state;
pub mod same_way;
pub mod self_check;
pub mod session_answers;
pub mod survey;
pub mod task_chain;
pub mod waiting;

use std::process::ExitCode;

use crate::config::Config;
use crate::exit_codes::{UnavailableError, usage};
use crate::term;
use child::Ended;
pub use options::Options;

/// The cascade: choose, run, and descend on a fast failure; after a limit ending, follow
/// `on_limit`. The outcome record (`--outcome`) is written on the way out.
pub fn run(config: &Config, options: &Options) -> anyhow::Result<ExitCode> {
    if !options.dry_run {
        no_prompt::refuse(options.args)?;
    }
    let code = machine::run_cascade(config, options)?;
    outcome::finish(i32::from(code));
    Ok(ExitCode::from(code))
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
            Ended::Code(code) => Ok(ExitCode::from(machine::exit_byte(code))),
            Ended::Signal(signal) => crate::signals::die_by(signal),
        };
    }
    Err(child::exec(command))
}
