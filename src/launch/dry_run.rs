//! `agent --dry-run`: the choice a launch would make — rung, command line, the names of the
//! environment it would add, and why — with nothing run. Probes are made as for a launch.

use std::ffi::OsString;
use std::fmt::Write as _;
use std::process::ExitCode;

use serde_json::json;

use crate::adapter::dialect::Translation;
use crate::config::Backend;
use crate::exit_codes::UnavailableError;
use crate::launch::cascade::{Cascade, Choice, Good, Status};
use crate::term::{emit, emit_json};
use crate::text::shell_join;

pub fn describe(status: &Status) -> String {
    match status {
        Status::Good {
            how,
            reason,
            latency,
        } => {
            let how = match how {
                Good::Trusted => "trusted: probed OK recently".to_string(),
                Good::Probed => format!("probed now ({} ms)", latency.map_or(0, |l| l.as_millis())),
                Good::Unprobed => "unprobed".to_string(),
                Good::BudgetUnprobed => {
                    "not probed: the budget is spent; the fast-fail net guards the launch"
                        .to_string()
                }
            };
            format!("{reason} — {how}")
        }
        Status::Failed {
            class,
            reason,
            skip: true,
        } => format!("SKIP {reason} ({class})"),
        Status::Failed { class, reason, .. } => format!("{class}: {reason}"),
    }
}

fn state_name(status: &Status) -> &'static str {
    match status {
        Status::Good { .. } => "ok",
        Status::Failed { skip: true, .. } => "skip",
        Status::Failed { .. } => "fail",
    }
}

/// What a dry run found: the rung the launch would run and how it would run it.
struct Found<'r, 'c> {
    rung: &'r crate::launch::rung::Rung<'c>,
    winner: usize,
    total: usize,
    argv: Vec<String>,
    translation: &'r Translation,
    env_names: Vec<&'r str>,
    env_removed: &'r [String],
    status: &'r Status,
    model: ModelLine,
    /// The launch names a new session itself (a new id each time): said, not shown as an id
    /// that would never be used.
    names_session: bool,
}

/// `resume`: the session the words resume on the winner, when they do (`agent -c` on a
/// task that crossed CLIs).
pub fn print(
    cascade: &mut Cascade,
    choice: &Choice,
    args: &[OsString],
    resume: Option<&str>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let passed: Vec<(usize, String, &Status)> = choice
        .passed
        .iter()
        .map(|(i, status)| (*i, cascade.rung(*i).short_name(), status))
        .collect();
    let Some(winner) = choice.winner else {
        let mut message = String::from("no rung is available:");
        for (i, name, status) in &passed {
            let _ = write!(message, "\n  rung {} {name}: {}", i + 1, describe(status));
        }
        return Err(anyhow::Error::new(UnavailableError(message)));
    };
    let rung = cascade.rung(winner).clone();
    let Ok(ready) = &rung.state else {
        unreachable!("a winner is always ready")
    };
    // The cascade passed over every rung whose CLI cannot take the words.
    let translation = rung
        .translate_resuming(args, resume)
        .map_err(|refusal| crate::exit_codes::usage(refusal.to_string()))?;
    let found = Found {
        rung: &rung,
        winner,
        total: cascade.len(),
        argv: full_argv(&ready.binary.to_string_lossy(), &translation),
        translation: &translation,
        env_names: ready.env.iter().map(|(k, _)| k.as_str()).collect(),
        env_removed: &ready.env_remove,
        status: choice
            .winner_status
            .as_ref()
            .expect("a winner has a status"),
        model: model_line(&rung, args),
        names_session: super::limit_ending::names_a_new_session(&rung, args),
    };
    if json {
        let passed: Vec<_> = passed
            .iter()
            .map(|(i, _, status)| {
                let r = &cascade.rung(*i);
                json!({
                    "rung": i + 1,
                    "backend": r.backend.name,
                    "model": r.probe_model,
                    "state": state_name(status),
                    "class": match status { Status::Failed { class, .. } => class.as_str(), Status::Good { .. } => "ok" },
                    "reason": status.reason(),
                })
            })
            .collect();
        emit_json(&found.json(&passed))?;
    } else {
        emit(&found.text(&passed))?;
    }
    Ok(ExitCode::SUCCESS)
}

impl Found<'_, '_> {
    /// The `--json` document, with the rungs `passed` over.
    fn json(&self, passed: &[serde_json::Value]) -> serde_json::Value {
        let rung = self.rung;
        json!({
            "rung": self.winner + 1,
            "backend": rung.backend.name,
            "label": rung.label(),
            "probe_model": rung.probe_model,
            "run_model": rung.run_model,
            "runs": self.model.json,
            "argv": self.argv,
            "dialect": self.translation.rules,
            "notices": self.translation.notices,
            "names_session": self.names_session,
            "sessions": super::session_answers::of(rung.backend.family).json(),
            "env": self.env_names,
            "env_removed": self.env_removed,
            "reason": self.status.reason(),
            "passed": passed,
            "login": rung.pool.as_ref().map(|pool| json!({
                "name": rung.account,
                "rotation": pool.rotation.as_str(),
                "rule": rung.login_rule(),
                "figures": pool.figures,
                "passed": pool.passed.iter().map(|(name, reason)| json!({"name": name, "reason": reason})).collect::<Vec<_>>(),
                "all_parked": pool.all_parked,
            })),
        })
    }

    /// The text a person reads, with the rungs `passed` over.
    fn text(&self, passed: &[(usize, String, &Status)]) -> String {
        let rung = self.rung;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "would run: {} — rung {} of {}",
            rung.label(),
            self.winner + 1,
            self.total
        );
        let _ = writeln!(out, "model:     {}", self.model.text);
        let _ = writeln!(out, "command:   {}", shell_join(&self.argv));
        dialect_lines(&mut out, self.translation);
        if self.names_session {
            let _ = writeln!(
                out,
                "session:   a new --session-id UUID goes before these words at launch, so agent knows which session it started"
            );
        }
        let _ = writeln!(
            out,
            "on limit:  {}",
            super::session_answers::of(rung.backend.family).line()
        );
        let _ = writeln!(out, "env:       {}", env_line(&self.env_names));
        if !self.env_removed.is_empty() {
            let _ = writeln!(out, "unset:     {}", self.env_removed.join(", "));
        }
        let _ = writeln!(out, "why:       {}", describe(self.status));
        if let (Some(rule), Some(pool)) = (rung.login_rule(), &rung.pool) {
            let _ = writeln!(out, "login:     {rule}");
            for (name, reason) in &pool.passed {
                let _ = writeln!(out, "passed:    login {name}: {reason}");
            }
        }
        for (i, name, status) in passed {
            let _ = writeln!(
                out,
                "passed:    rung {} {name}: {}",
                i + 1,
                describe(status)
            );
        }
        out
    }
}

/// What the launch would run, said once for the text and once for `--json`.
struct ModelLine {
    text: String,
    json: serde_json::Value,
}

/// The model the launch runs: the user's `--model`, else the rung's, else the CLI's own
/// default — named by what the CLI itself reported (its settings, the model it last ran),
/// never by the model agent would probe with.
fn model_line(rung: &crate::launch::rung::Rung, args: &[OsString]) -> ModelLine {
    use crate::launch::reported_model;
    if let Some(model) = users_model(args) {
        return ModelLine {
            text: format!("{} (your --model)", crate::text::printable(&model)),
            json: json!({"model": model, "from": "user", "cli_default": false}),
        };
    }
    if let Some(model) = &rung.run_model {
        return ModelLine {
            text: format!("{} (the rung's)", crate::text::printable(model)),
            json: json!({"model": model, "from": "rung", "cli_default": false}),
        };
    }
    let reported = reported_model::of(rung.backend);
    ModelLine {
        text: format!(
            "{}: agent passes no model",
            reported_model::default_text(rung.backend)
        ),
        json: json!({
            "model": null,
            "from": "cli",
            "cli_default": true,
            "reported_model": reported.as_ref().map(|r| r.model.clone()),
            "reported_by": reported.as_ref().map(reported_model::Reported::source),
        }),
    }
}

/// The model the user's own words name (`--model X`, `--model=X`), if they name one.
fn users_model(args: &[OsString]) -> Option<String> {
    let mut words = args.iter().map(|a| a.to_string_lossy());
    while let Some(word) = words.next() {
        if word == "--" {
            return None;
        }
        if word == "--model" {
            return words.next().map(std::borrow::Cow::into_owned);
        }
        if let Some(model) = word.strip_prefix("--model=") {
            return Some(model.to_string());
        }
    }
    None
}

/// The program, then the words it is given, as the shell would show them.
fn full_argv(program: &str, translation: &Translation) -> Vec<String> {
    let mut argv = vec![program.to_string()];
    argv.extend(
        translation
            .argv
            .iter()
            .map(|arg| arg.to_string_lossy().into_owned()),
    );
    argv
}

/// What the dialect did to the user's words, and what it dropped.
fn dialect_lines(out: &mut String, translation: &Translation) {
    for rule in &translation.rules {
        let _ = writeln!(out, "dialect:   {rule}");
    }
    for notice in &translation.notices {
        let _ = writeln!(out, "notice:    {notice}");
    }
}

/// The names of the variables a launch adds (never their values).
fn env_line(names: &[&str]) -> String {
    if names.is_empty() {
        "(none added)".to_string()
    } else {
        names.join(", ")
    }
}

/// `--dry-run --use …`: what would be exec'd; nothing is probed.
pub fn print_forced(
    backend: &Backend,
    run_model: Option<&str>,
    argv: &[String],
    env: &[(String, String)],
    translation: &Translation,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let full = full_argv(&argv[0], translation);
    let env_names: Vec<&str> = env.iter().map(|(k, _)| k.as_str()).collect();
    if json {
        emit_json(&json!({
            "backend": backend.name,
            "label": backend.label,
            "run_model": run_model,
            "argv": full,
            "dialect": translation.rules,
            "notices": translation.notices,
            "env": env_names,
            "env_removed": backend.env_remove,
            "reason": "forced with --use: no probe, no fallback",
        }))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = String::new();
    let _ = writeln!(out, "would run: {} — forced with --use", backend.label);
    let _ = writeln!(out, "command:   {}", shell_join(&full));
    dialect_lines(&mut out, translation);
    let _ = writeln!(out, "env:       {}", env_line(&env_names));
    let _ = writeln!(
        out,
        "why:       --use skips probes and fallback; the CLI replaces agent"
    );
    emit(&out)?;
    Ok(ExitCode::SUCCESS)
}
