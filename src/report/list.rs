//! `agent --list`: the backends (where each CLI was found, what agent can do with its
//! sessions) and the rung table. No calls.

use std::fmt::Write as _;
use std::process::ExitCode;

use serde_json::json;

use crate::config::Config;
use crate::launch::{resolve, rung, session_answers};
use crate::text::printable;

/// The subscription login a rung runs on, with its windows: never a token.
pub fn login_json(rung: &rung::Rung) -> serde_json::Value {
    let Ok(ready) = &rung.state else {
        return serde_json::Value::Null;
    };
    ready
        .plan
        .login
        .as_ref()
        .map_or(serde_json::Value::Null, |login| {
            let now = jiff::Timestamp::now();
            let mut json = login.json(&login.windows(&crate::paths::state_dir(), now), now);
            // The pool account the rung runs on, by which a person knows the login.
            if let Some(account) = &rung.account {
                json["account"] = serde_json::json!(account);
            }
            json
        })
}

/// What the rung's launch runs: the model it passes, else the CLI's own default with the
/// model the CLI itself reported (its settings, else the model it last ran), when known.
pub fn runs_json(rung: &rung::Rung) -> serde_json::Value {
    match &rung.run_model {
        Some(model) => json!({"model": model, "alias": rung.run_alias, "cli_default": false}),
        None => {
            let reported = crate::launch::reported_model::of(rung.backend);
            json!({
                "model": null,
                "cli_default": true,
                "reported_model": reported.as_ref().map(|r| r.model.clone()),
                "reported_by": reported.as_ref().map(crate::launch::reported_model::Reported::source),
            })
        }
    }
}

pub fn run(config: &Config, json: bool) -> anyhow::Result<ExitCode> {
    let rungs: Vec<_> = config
        .rungs
        .iter()
        .enumerate()
        .map(|(i, def)| (def, resolve::resolve(config, i + 1, def)))
        .collect();
    let source = config.source.as_ref().map_or_else(
        || "built-in (no configuration file)".to_string(),
        |p| p.display().to_string(),
    );

    if json {
        let backends: Vec<_> = config
            .backends
            .values()
            .map(|b| {
                json!({
                    "name": b.name,
                    "label": b.label,
                    "command": b.command,
                    "vendor": b.vendor,
                    "probe": b.probe.kind.as_str(),
                    "binary": crate::backend::discover::find(&b.command),
                    "sessions": session_answers::of(b.family).json(),
                })
            })
            .collect();
        let rows: Vec<_> = rungs
            .iter()
            .map(|(def, r)| {
                let (state, reason) = match &r.state {
                    Ok(_) => ("ready", String::new()),
                    Err(u) if u.skip => ("skip", u.reason.clone()),
                    Err(u) => ("fail", u.reason.clone()),
                };
                json!({
                    "rung": r.index,
                    "backend": def.backend,
                    "probe_model": r.probe_model,
                    "run_model": r.run_model,
                    "runs": runs_json(r),
                    "probe": r.backend.probe.kind.as_str(),
                    "state": state,
                    "reason": reason,
                    "login": login_json(r),
                })
            })
            .collect();
        crate::report::emit_json(&json!({"config": source, "backends": backends, "rungs": rows}))?;
        return Ok(ExitCode::SUCCESS);
    }

    let mut out = String::new();
    // Names, labels, vendors and paths come from the configuration: none of it may drive
    // the terminal.
    let _ = writeln!(out, "config: {}\n\nbackends:", printable(&source));
    let name_width = config
        .backends
        .keys()
        .map(|name| printable(name).chars().count())
        .max()
        .unwrap_or(0);
    for backend in config.backends.values() {
        let found = crate::backend::discover::find(&backend.command)
            .map_or_else(|| "not installed".to_string(), |p| p.display().to_string());
        let _ = writeln!(
            out,
            "  {:name_width$}  {:22} vendor {:10} probe {:10} {}",
            printable(&backend.name),
            printable(&backend.label),
            printable(&backend.vendor),
            backend.probe.kind.as_str(),
            printable(&found)
        );
    }
    // What a window that runs out mid-session can come to on each, said before it does.
    let _ = writeln!(out, "\nsessions (when a window runs out mid-session):");
    for backend in config.backends.values() {
        let _ = writeln!(
            out,
            "  {:name_width$}  {}",
            printable(&backend.name),
            session_answers::of(backend.family).line()
        );
    }
    let table = if config.rungs_are_builtin {
        "built-in table"
    } else {
        "from the configuration file"
    };
    let _ = writeln!(out, "\nrungs ({table}):");
    let cells: Vec<[String; 5]> = rungs
        .iter()
        .map(|(def, r)| {
            let state = match &r.state {
                Ok(ready) => ready
                    .plan
                    .login
                    .as_ref()
                    .map(|login| match login.refused {
                        Some(why) => format!("{} — not proved: {why}", login.name()),
                        None => login.name(),
                    })
                    .unwrap_or_default(),
                Err(u) if u.skip => format!("SKIP {}", u.reason),
                Err(u) => format!("FAIL {}", u.reason),
            };
            // A model may be the one a CLI's records last named; a reason may quote others.
            [
                format!("{}", r.index),
                def.backend.clone(),
                r.probe_model.clone().unwrap_or_else(|| "-".into()),
                // No model passed: the CLI runs its own default, named by what it said.
                r.run_model
                    .clone()
                    .unwrap_or_else(|| crate::launch::reported_model::default_text(r.backend)),
                state,
            ]
            .map(|cell| printable(&cell))
        })
        .collect();
    let header = ["#", "backend", "probe model", "run model", ""].map(String::from);
    let widths: Vec<usize> = (0..4)
        .map(|c| {
            cells
                .iter()
                .chain([&header])
                .map(|row| row[c].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for row in std::iter::once(&header).chain(&cells) {
        let line = format!(
            "  {:>w0$}  {:w1$}  {:w2$}  {:w3$}  {}",
            row[0],
            row[1],
            row[2],
            row[3],
            row[4],
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2],
            w3 = widths[3]
        );
        let _ = writeln!(out, "{}", line.trim_end());
    }
    if config.rungs_are_builtin {
        // The one order a user may wonder at: why agy comes before Gemini CLI.
        let _ = writeln!(
            out,
            "\norder: of Google's CLIs, Antigravity (agy) comes before Gemini CLI: a Google AI subscription (Pro, Ultra, free) runs in agy; Gemini CLI no longer serves personal Google logins (since 2026-06-18) and keeps API keys, Vertex AI and Code Assist licences"
        );
    }
    crate::report::emit(&out)?;
    Ok(ExitCode::SUCCESS)
}
