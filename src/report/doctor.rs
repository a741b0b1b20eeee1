//! `agent --doctor`: everything agent depends on, checked without changing anything and
//! without an LLM call — the configuration, the state directory, each backend's binary
//! (with its `--version`), each rung's credential (present or not, never its value), the
//! budget and the watchdog. Each problem comes with its fix; exit 1 when there is one.

use std::fmt::Write as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use serde_json::json;

use crate::config::Config;
use crate::error_class::ErrorClass;
use crate::report::launchable::Why;
use crate::text::{printable, printable_lines};

const VERSION_TIMEOUT: Duration = Duration::from_secs(5);

/// One line of the report.
struct Check {
    area: String,
    ok: bool,
    /// Not a problem (the exit code stays 0), but something the user should act on.
    warning: bool,
    /// Not a problem: no option here (a CLI not set up, a backend turned off, no proxy).
    skipped: bool,
    /// What was found.
    detail: String,
    /// How to fix it, when it is a problem.
    fix: Option<String>,
}

impl Check {
    fn ok(area: impl Into<String>, detail: impl Into<String>) -> Check {
        Check {
            area: area.into(),
            ok: true,
            warning: false,
            skipped: false,
            detail: detail.into(),
            fix: None,
        }
    }

    fn skipped(area: impl Into<String>, detail: impl Into<String>) -> Check {
        Check {
            skipped: true,
            ..Check::ok(area, detail)
        }
    }

    fn warning(
        area: impl Into<String>,
        detail: impl Into<String>,
        fix: impl Into<String>,
    ) -> Check {
        Check {
            warning: true,
            fix: Some(fix.into()),
            ..Check::ok(area, detail)
        }
    }

    fn problem(
        area: impl Into<String>,
        detail: impl Into<String>,
        fix: impl Into<String>,
    ) -> Check {
        Check {
            area: area.into(),
            ok: false,
            warning: false,
            skipped: false,
            detail: detail.into(),
            fix: Some(fix.into()),
        }
    }
}

pub fn run(config_file: Option<&(PathBuf, bool)>, json: bool) -> anyhow::Result<ExitCode> {
    let mut checks = Vec::new();
    let mut config = check_config(config_file, &mut checks);
    if let Some(config) = &mut config
        && let Err(err) = crate::accounts::load_stored(config)
    {
        checks.push(Check::problem(
            "accounts",
            format!("{err:#}"),
            "correct credentials.toml at the line named",
        ));
    }
    let state_dir = crate::paths::state_dir();
    check_state_dir(&state_dir, &mut checks);
    if let Some(config) = &config {
        check_binaries(config, &mut checks);
        check_rungs(config, &mut checks);
        check_accounts(config, &state_dir, &mut checks);
        check_budget(config, &state_dir, &mut checks);
        check_store(config, &mut checks);
        check_secrets_in_file(config, &mut checks);
    }
    check_watchdog(config.as_ref(), &state_dir, &mut checks);
    check_relay_token(&mut checks);

    let problems = checks.iter().filter(|c| !c.ok).count();
    let warnings = checks.iter().filter(|c| c.warning).count();
    if json {
        let rows: Vec<_> = checks
            .iter()
            .map(|c| {
                json!({
                    "area": c.area, "ok": c.ok, "warning": c.warning, "skipped": c.skipped,
                    "detail": c.detail, "fix": c.fix,
                })
            })
            .collect();
        crate::report::emit_json(
            &json!({"problems": problems, "warnings": warnings, "checks": rows}),
        )?;
    } else {
        let width = checks
            .iter()
            .map(|c| printable(&c.area).chars().count())
            .max()
            .unwrap_or(0);
        let mut out = String::new();
        for check in &checks {
            let mark = match (check.ok, check.warning) {
                (false, _) => "FAIL",
                (true, true) => "warn",
                (true, false) if check.skipped => "SKIP",
                (true, false) => "ok  ",
            };
            // Areas, details and fixes quote the configuration (backend names, commands,
            // models, paths) and what CLIs said: none of it may drive the terminal.
            let detail = printable_lines(&check.detail);
            let mut detail_lines = detail.lines();
            let _ = writeln!(
                out,
                "{mark} {:width$}  {}",
                printable(&check.area),
                detail_lines.next().unwrap_or("")
            );
            // A finding of several lines (one per rung) stays under its first.
            for line in detail_lines {
                let _ = writeln!(out, "     {:width$}  {line}", "");
            }
            if let Some(fix) = check.fix.as_deref().map(printable_lines) {
                let mut lines = fix.lines();
                let _ = writeln!(
                    out,
                    "     {:width$}  fix: {}",
                    "",
                    lines.next().unwrap_or("")
                );
                // A fix of several lines (an example) stays under its first.
                for line in lines {
                    if line.is_empty() {
                        out.push('\n');
                    } else {
                        let _ = writeln!(out, "     {:width$}  {line}", "");
                    }
                }
            }
        }
        let _ = writeln!(
            out,
            "\n{}{}",
            match problems {
                0 => "no problems found".to_string(),
                1 => "1 problem found".to_string(),
                n => format!("{n} problems found"),
            },
            match warnings {
                0 => String::new(),
                1 => "; 1 warning".to_string(),
                n => format!("; {n} warnings"),
            }
        );
        crate::report::emit(&out)?;
    }
    Ok(if problems == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The file, and the configuration the other checks run on: the file's, or — when the file
/// cannot be used — the built-in table, so one mistake in it does not hide every other finding.
fn check_config(file: Option<&(PathBuf, bool)>, checks: &mut Vec<Check>) -> Option<Config> {
    let shown = file
        .as_ref()
        .map_or_else(|| "(none)".to_string(), |(p, _)| p.display().to_string());
    match crate::config::load(file.cloned()) {
        Ok(config) => {
            let detail = match &config.source {
                Some(path) => format!("{} — valid", path.display()),
                None => format!("{shown} — absent: the built-in table is used"),
            };
            if config.warnings.is_empty() {
                checks.push(Check::ok("config", detail));
            }
            for warning in &config.warnings {
                checks.push(Check::problem(
                    "config",
                    warning.strip_prefix("config: ").unwrap_or(warning),
                    "correct the key at the line named, or remove it",
                ));
            }
            Some(config)
        }
        Err(err) => {
            let fallback = crate::config::load(None).ok();
            let then = if fallback.is_some() {
                " (the checks below use the built-in table)"
            } else {
                ""
            };
            checks.push(Check::problem(
                "config",
                format!("{err:#}{then}"),
                "correct the file at the line named",
            ));
            fallback
        }
    }
}

fn check_state_dir(dir: &Path, checks: &mut Vec<Check>) {
    let not_recorded = "agent cannot record health, budget or ledger: launches run unprobed";
    if dir.as_os_str().is_empty() {
        checks.push(Check::problem(
            "state",
            format!("no state directory (no home directory): {not_recorded}"),
            "set HOME, or AGENT_STATE_DIR to a directory of your own",
        ));
        return;
    }
    let Ok(meta) = std::fs::metadata(dir) else {
        // Missing: fine if agent can make it, that is if its nearest existing ancestor is
        // a directory it may write in.
        let ancestor = dir
            .ancestors()
            .skip(1)
            .find(|a| a.symlink_metadata().is_ok());
        match ancestor {
            Some(ancestor) if !is_writable_dir(ancestor) => checks.push(Check::problem(
                "state",
                format!(
                    "{} cannot be created: {} is not a directory agent may write in; {not_recorded}",
                    dir.display(),
                    ancestor.display()
                ),
                format!(
                    "mkdir -m 700 -p {}, or set AGENT_STATE_DIR to a directory of your own",
                    dir.display()
                ),
            )),
            _ => checks.push(Check::ok(
                "state",
                format!("{} — not created yet (agent makes it 0700)", dir.display()),
            )),
        }
        return;
    };
    let mode = meta.permissions().mode() & 0o777;
    if !meta.is_dir() {
        checks.push(Check::problem(
            "state",
            format!("{} is not a directory", dir.display()),
            "move it away or set AGENT_STATE_DIR",
        ));
        return;
    }
    if let Ok(Some(distrust)) = crate::state::file::distrust(dir) {
        // Every command but a launch refuses it; a launch runs without it.
        checks.push(Check::problem(
            "state",
            format!(
                "{}: launches run unprobed, other commands refuse it",
                distrust.why
            ),
            distrust.fix,
        ));
    } else if !is_writable_dir(dir) {
        checks.push(Check::problem(
            "state",
            format!("{} is not writable: {not_recorded}", dir.display()),
            format!("chmod 700 {}", dir.display()),
        ));
    } else if mode & 0o077 != 0 {
        checks.push(Check::problem(
            "state",
            format!(
                "{} is {mode:o}: other users can read agent's health, budget and ledger",
                dir.display()
            ),
            format!("chmod 700 {}", dir.display()),
        ));
    } else {
        checks.push(Check::ok("state", format!("{} — {mode:o}", dir.display())));
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        let Ok(meta) = entry.metadata() else { continue };
        let mode = meta.permissions().mode() & 0o777;
        if meta.is_file() && mode & 0o077 != 0 {
            checks.push(Check::problem(
                "state",
                format!("{} is {mode:o}", path.display()),
                format!("chmod 600 {}", path.display()),
            ));
        }
    }
}

/// A configured Redis store answers (the doctor asks it once; nothing falls back here).
fn check_store(config: &Config, checks: &mut Vec<Check>) {
    let Some(store) = &config.store else {
        return;
    };
    let shared = match crate::state::store::Shared::new(store, store.on_store_down) {
        Ok(shared) => shared,
        Err(err) => {
            checks.push(Check::problem(
                "store",
                format!("{err:#}"),
                "correct [store] url",
            ));
            return;
        }
    };
    match shared.ping() {
        Ok(version) => checks.push(Check::ok(
            "store",
            format!(
                "redis {version} at {}, keys under {}:",
                shared.place, shared.prefix
            ),
        )),
        Err(down) => checks.push(Check::problem(
            "store",
            format!("{down} at {}", shared.place),
            "start the Redis server or correct [store] url; meanwhile launches use this machine's files and the relay answers 503 store_unavailable (unless on_store_down = \"local\")",
        )),
    }
}

/// Whether this user may create files in `dir` (the kernel's own answer: `access(2)`).
fn is_writable_dir(dir: &Path) -> bool {
    use nix::unistd::{AccessFlags, access};
    dir.is_dir() && access(dir, AccessFlags::W_OK | AccessFlags::X_OK).is_ok()
}

/// The relay token file (`agent --relay init`), if there is one, must be readable by its
/// owner only: whoever reads it can spend every key behind the relay.
fn check_relay_token(checks: &mut Vec<Check>) {
    let Some(path) = crate::paths::relay_token_file() else {
        return;
    };
    let Ok(meta) = std::fs::symlink_metadata(&path) else {
        return;
    };
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        checks.push(Check::problem(
            "relay token",
            format!(
                "{} is {mode:o}: other users can read the relay token and spend every key behind the relay",
                path.display()
            ),
            format!(
                "chmod 600 {}; if someone may have read it, `agent --relay init --force` makes a new one",
                path.display()
            ),
        ));
    } else {
        checks.push(Check::ok(
            "relay token",
            format!("{} — {mode:o}", path.display()),
        ));
    }
}

/// The first line a binary prints for `--version`, within a timeout.
fn version_of(binary: &Path) -> String {
    let ran = crate::child::run(
        crate::child_env::command(binary).arg("--version"),
        &crate::child::Job::new(VERSION_TIMEOUT, crate::child::Group::Own),
    );
    let output = match ran.map(crate::child::Ran::output) {
        Ok(Ok(output)) => String::from_utf8_lossy(&output.stdout).into_owned(),
        Ok(Err(stopped)) => return format!("(--version {stopped})"),
        Err(_) => return "(--version could not run)".to_string(),
    };
    output
        .lines()
        .next()
        .unwrap_or("")
        .trim()
        .chars()
        .take(80)
        .collect()
}

fn check_binaries(config: &Config, checks: &mut Vec<Check>) {
    let mut seen: Vec<&str> = Vec::new();
    for rung in &config.rungs {
        let backend = &config.backends[&rung.backend];
        // Turned off: its binary is never looked for (its rungs say they are off).
        if !backend.enabled || seen.contains(&backend.command.as_str()) {
            continue;
        }
        seen.push(&backend.command);
        let area = format!("binary {}", backend.command);
        match crate::backend::discover::find(&backend.command) {
            Some(path) => checks.push(Check::ok(
                area,
                format!("{} — {}", path.display(), version_of(&path)),
            )),
            None if config.rungs_are_builtin => checks.push(Check::skipped(
                area,
                match crate::backend::discover::elsewhere(&backend.command) {
                    Some(found) => format!(
                        "not on this PATH or in the usual install directories, but installed at {} (its built-in rungs are skipped here)",
                        found.display()
                    ),
                    None => "not installed (its built-in rungs are skipped; install it to use them)"
                        .to_string(),
                },
            )),
            None => checks.push(Check::problem(
                area,
                format!(
                    "not found on PATH or in {} other install directories",
                    crate::backend::discover::extra_dirs().len()
                ),
                format!(
                    "install {} or set backends.{}.command to its absolute path",
                    backend.command, backend.name
                ),
            )),
        }
    }
}

fn check_rungs(config: &Config, checks: &mut Vec<Check>) {
    let mut outs = Vec::new();
    for (index, def) in config.rungs.iter().enumerate() {
        let rung = crate::launch::resolve::resolve(config, index + 1, def);
        let out = super::launchable::out(&rung);
        let area = format!("rung {} {}", index + 1, rung.short_name());
        let refused = rung
            .state
            .as_ref()
            .ok()
            .and_then(|ready| ready.plan.login.as_ref()?.refused);
        match &rung.state {
            // Not agent's fault, and no fix in agent's table: the login itself is gone.
            Ok(_) if refused.is_some() => checks.push(Check::warning(
                area,
                format!("not proved: {}", refused.unwrap_or_default()),
                "log in to Antigravity (`agy`) for a Google AI subscription; Gemini CLI still serves an API key (GEMINI_API_KEY), Vertex AI or a Code Assist licence (GOOGLE_CLOUD_PROJECT)",
            )),
            Ok(ready) if ready.plan.login.is_some() => {
                checks.push(Check::ok(area, ready.plan.unprobed_reason()));
            }
            // Nothing to sign in with: started, the CLI would ask for a login.
            Ok(_) if let Some(Why::NoLogin { way_in }) = out.as_ref().map(|out| &out.why) => {
                checks.push(Check::skipped(
                    area,
                    format!("no login and no key agent can see — {way_in}"),
                ));
            }
            Ok(ready) => {
                let source = ready
                    .plan
                    .target
                    .rsplit(" @")
                    .next()
                    .unwrap_or("")
                    .to_string();
                let credential = match source.as_str() {
                    "none" => "no credential needed or found: reachability only".to_string(),
                    s if s.starts_with("env:") => format!("credential {} present", &s[4..]),
                    s => format!("credential from {s}"),
                };
                // The model it asks about, which is not always the one a launch runs.
                let of = ready
                    .plan
                    .model
                    .as_deref()
                    .map_or(String::new(), |model| format!(" of {model}"));
                checks.push(Check::ok(
                    area,
                    format!(
                        "{} probe{of}; {credential}",
                        rung.backend.probe.kind.as_str()
                    ),
                ));
            }
            // Not installed: already said under its binary.
            Err(unusable) if unusable.class == ErrorClass::BinaryMissing => {}
            // No option here (not set up, turned off, no proxy set): neither alive nor
            // dead, and the reason says how to set it up.
            Err(unusable) if unusable.skip => {
                checks.push(Check::skipped(area, unusable.reason.clone()));
            }
            Err(unusable) => {
                let fix = match unusable.class {
                    ErrorClass::CredentialsMissing | ErrorClass::Misconfigured
                        if unusable.reason.ends_with(" is not set") =>
                    {
                        let var = unusable.reason.trim_end_matches(" is not set");
                        format!(
                            "export {var}=… in your shell profile (and in ~/.config/agent/watchdog.env for the watchdog)"
                        )
                    }
                    _ => "see the reason; `agent --list` shows the table".to_string(),
                };
                checks.push(Check::problem(
                    area,
                    format!("{}: {}", unusable.class, unusable.reason),
                    fix,
                ));
            }
        }
        outs.extend(out);
    }
    // What a launch here would find: nothing that can run is the problem, whatever each
    // row said of itself (a CLI not installed, or not set up, is no fault alone).
    if !config.rungs.is_empty() && outs.len() == config.rungs.len() {
        let path = std::env::var("PATH").unwrap_or_default();
        let (detail, fix) =
            super::launchable::nothing_runs(&outs, &path, &crate::backend::discover::elsewhere);
        checks.push(Check::problem("launch", detail, fix));
    }
}

/// One line per account with its own secret, checked for real (a zero-cost model list):
/// valid, invalid (401), organisation disabled (403) — problems — or unreachable, a warning
/// only: a network hiccup is not a dead account.
fn check_accounts(config: &Config, state_dir: &Path, checks: &mut Vec<Check>) {
    use crate::accounts::check::{CheckResult, check};
    for account in &config.accounts {
        let area = format!("account {}", account.name);
        let backend = &config.backends[&account.backend];
        let secret = match account.read_secret() {
            Ok(secret) => secret,
            Err(err) => {
                checks.push(Check::problem(
                    area,
                    format!("broken: {err:#}"),
                    "set its secret_env variable, fix its secret_cmd, or `agent --accounts remove` and add it again",
                ));
                continue;
            }
        };
        let result = check(backend, account, &secret);
        crate::state::account_health::after_check(state_dir, &account.name, &result);
        let warning = account
            .expiry_warning()
            .map(|w| format!("; {w}"))
            .unwrap_or_default();
        match result {
            CheckResult::Valid => checks.push(Check::ok(
                area,
                format!(
                    "{} {} — valid{warning}",
                    account.backend,
                    account.kind.as_str()
                ),
            )),
            CheckResult::Unknown(why) => checks.push(Check::ok(
                area,
                format!(
                    "{} — unreachable, not checked ({why}): a warning, not a dead account{warning}",
                    account.backend
                ),
            )),
            CheckResult::Invalid(why) => checks.push(Check::problem(
                area,
                format!("invalid (401): {why}"),
                format!(
                    "replace it: agent --accounts remove {0}; agent --accounts add {0} … < new-key",
                    account.name
                ),
            )),
            CheckResult::Disabled(why) => checks.push(Check::problem(
                area,
                format!("organisation disabled (403): {why}"),
                "use an API key of an active organisation, or ask your organisation's admin",
            )),
        }
    }
    let claude_backends: Vec<&str> = config
        .backends
        .values()
        .filter(|b| b.family == crate::adapter::Family::Claude)
        .map(|b| b.name.as_str())
        .collect();
    let has_claude_account = config
        .accounts
        .iter()
        .any(|a| claude_backends.contains(&a.backend.as_str()));
    let env_credential = crate::adapter::claude::CREDENTIAL_VARS
        .iter()
        .any(|v| std::env::var(v).is_ok_and(|x| !x.is_empty()));
    if !has_claude_account && !env_credential {
        let detail = match crate::login::claude::read_login().filter(|l| l.token_present) {
            Some(login) => format!(
                "Claude Code's own login ({}): not checked, as agent never calls with a login's token; its rungs run unprobed, guarded by the fast-fail net",
                login.plan.as_deref().unwrap_or("plan unknown")
            ),
            None => "Claude Code has no login and no key agent can see: its rungs are skipped until it has one".to_string(),
        };
        checks.push(Check::ok("accounts", detail));
    }
}

fn check_budget(config: &Config, state_dir: &Path, checks: &mut Vec<Check>) {
    let budget = crate::state::budget::Budget::new(state_dir, config.budget);
    let (used, limits, _) = budget.status();
    let cap = |n: u64| {
        if n == 0 {
            "unlimited".to_string()
        } else {
            n.to_string()
        }
    };
    let detail = format!(
        "{} of {} calls, {} of {} tokens today",
        used.calls,
        cap(limits.calls),
        used.tokens,
        cap(limits.tokens)
    );
    let spent = (limits.calls > 0 && used.calls >= limits.calls)
        || (limits.tokens > 0 && used.tokens >= limits.tokens);
    if spent {
        checks.push(Check::problem(
            "budget",
            format!("{detail}: exhausted — launches run unprobed, checks cannot call"),
            "wait for tomorrow, or raise it: agent --budget set --calls N --tokens N",
        ));
    } else {
        checks.push(Check::ok("budget", detail));
    }
}

/// A warning for each secret written in the configuration file itself: not a fault (agent
/// redacts it and runs), but anything that can read the file, a backup or a session quoting
/// it, has the secret. Only where it is is shown, never the value.
fn check_secrets_in_file(config: &Config, checks: &mut Vec<Check>) {
    let file = config.source.as_deref().map_or_else(
        || "the configuration file".into(),
        |p| p.display().to_string(),
    );
    for key in &config.secrets_in_file {
        let fix = if key == "alerts.telegram.bot_token" {
            "write `bot_token = \"${AGENT_TELEGRAM_TOKEN}\"` and export the variable, or \
             `bot_token_cmd = \"…\"` that prints it"
        } else {
            "write `${VAR}` there and export VAR (the watchdog reads ~/.config/agent/watchdog.env)"
        };
        checks.push(Check::warning(
            "config",
            format!("{file}: {key} holds a secret written in the configuration file itself"),
            fix,
        ));
    }
}

fn check_watchdog(config: Option<&Config>, state_dir: &Path, checks: &mut Vec<Check>) {
    let last = crate::watch::alerts::last_state(state_dir);
    let verdict = match (&last.state, &last.last_check) {
        (Some(state), Some(at)) => format!(
            "; last check {}: {state}",
            crate::when::short_stamp(at, jiff::Timestamp::now())
        ),
        _ => "; no check recorded yet".to_string(),
    };
    let faults = config.map(|c| c.alerts.faults()).unwrap_or_default();
    let alerts = config.is_some_and(|c| c.alerts.is_configured());
    let alerts = match (alerts, faults.is_empty()) {
        (true, true) => "; alerts configured",
        (true, false) => "; an alert channel cannot send (see alerts)",
        (false, _) => "; no alerts configured",
    };
    for fault in faults {
        checks.push(Check::problem(
            "alerts",
            fault,
            "add bot_token = \"${AGENT_TELEGRAM_TOKEN}\" to [alerts.telegram] and export AGENT_TELEGRAM_TOKEN (in ~/.config/agent/watchdog.env for the watchdog), or bot_token_cmd = \"…\" that prints it",
        ));
    }
    match crate::watch::schedule::installed() {
        Some(where_) if let Some(config) = config.filter(|c| !c.alerts.is_configured()) => {
            checks.push(Check::warning(
                "watchdog",
                format!(
                    "{where_}{verdict}; no alert channel is configured: it checks but tells no one"
                ),
                crate::watch::alerts::no_channel_fix(config),
            ));
        }
        Some(where_) => checks.push(Check::ok("watchdog", format!("{where_}{verdict}{alerts}"))),
        None => checks.push(Check::ok(
            "watchdog",
            format!(
                "not installed (agent --install-watchdog --every 2h schedules it){verdict}{alerts}"
            ),
        )),
    }
}
