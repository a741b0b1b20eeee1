//! `agent --accounts list|add|remove|test`: the credential pools. A secret is read from
//! stdin (never argv, where `ps` shows it), checked against the API before it is written,
//! and never printed.

use std::fmt::Write as _;
use std::io::{BufRead as _, IsTerminal as _};
use std::process::ExitCode;

use anyhow::Context as _;
use serde_json::json;

use crate::accounts::check::{self, CheckResult};
use crate::accounts::{self, AccountDef, Kind, store};
use crate::cli::accounts::{AccountsCli, Command, KindArg};
use crate::config::Config;
use crate::exit_codes::usage;
use crate::report::{emit, emit_json};

pub fn run(config: &Config, args: &[String], global_json: bool) -> anyhow::Result<ExitCode> {
    let cli: AccountsCli = match crate::cli::parse_sub(args) {
        Ok(cli) => cli,
        Err(code) => return Ok(code),
    };
    match cli.command {
        Command::List { json } => list(config, json || global_json),
        Command::Add {
            name,
            backend,
            kind,
            priority,
            expires,
            secret_var,
            monthly_budget_usd,
        } => {
            let kind = match kind {
                KindArg::Oauth => Kind::Oauth,
                KindArg::ApiKey => Kind::ApiKey,
            };
            let def = AccountDef {
                name,
                backend,
                kind,
                secret_env: None,
                secret_cmd: None,
                secret: None,
                secret_var,
                priority,
                monthly_budget_usd,
                expires,
                unverified: false,
            };
            add(config, def)
        }
        Command::Remove { name } => remove(config, &name),
        Command::Test { name, json } => test(config, name.as_deref(), json || global_json),
    }
}

fn source_of(account: &AccountDef) -> String {
    match (&account.secret_env, &account.secret_cmd, &account.secret) {
        (Some(var), _, _) => format!("env {var}"),
        (None, Some(_), _) => "secret command".to_string(),
        (None, None, Some(_)) => "credentials.toml".to_string(),
        (None, None, None) => "none".to_string(),
    }
}

/// An account's health in words, without a call.
fn health_of(account: &AccountDef) -> (String, Option<String>) {
    let state_dir = crate::paths::state_dir();
    let health = crate::state::account_health::get(&state_dir, &account.name);
    let state = if let Err(err) = account.read_secret() {
        format!("broken: {err:#}")
    } else if let Some(reason) = crate::state::account_health::skip_reason(
        &state_dir,
        &account.name,
        crate::state::health::now_ms(),
    ) {
        reason
    } else if account.unverified {
        "healthy (unverified: saved offline)".to_string()
    } else {
        "healthy".to_string()
    };
    let last = health
        .last_check
        .map(|word| format!("{word} at {}", health.last_check_time.unwrap_or_default()));
    (state, last)
}

fn list(config: &Config, json: bool) -> anyhow::Result<ExitCode> {
    if json {
        let rows: Vec<_> = config
            .accounts
            .iter()
            .map(|a| {
                let (health, last) = health_of(a);
                json!({
                    "name": a.name, "backend": a.backend, "kind": a.kind.as_str(), "secret_from": source_of(a),
                    "priority": a.priority, "health": health, "last_check": last,
                    "expires": a.expires, "warning": a.expiry_warning(),
                })
            })
            .collect();
        emit_json(&serde_json::Value::Array(rows))?;
        return Ok(ExitCode::SUCCESS);
    }
    if config.accounts.is_empty() {
        emit(
            "no accounts: add one with `agent --accounts add NAME --backend claude --kind api_key < key.txt`\n",
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = String::new();
    for account in &config.accounts {
        let (health, last) = health_of(account);
        let rotation = config
            .backends
            .get(&account.backend)
            .map_or("?", |b| rotation_word(b.rotation));
        let _ = writeln!(
            out,
            "{}  {} ({rotation})  {}  secret from {}  priority {}  {health}{}",
            account.name,
            account.backend,
            account.kind.as_str(),
            source_of(account),
            account.priority,
            last.map(|l| format!("  last check {l}"))
                .unwrap_or_default()
        );
        if let Some(warning) = account.expiry_warning() {
            let _ = writeln!(out, "  warning: {warning}");
        }
    }
    emit(&out)?;
    Ok(ExitCode::SUCCESS)
}

fn rotation_word(rotation: accounts::Rotation) -> &'static str {
    match rotation {
        accounts::Rotation::Priority => "priority",
        accounts::Rotation::LeastCost => "least-cost",
        accounts::Rotation::RoundRobin => "round-robin",
        accounts::Rotation::Failover => "failover",
    }
}

/// Reads one line from stdin without echoing it on a terminal.
fn read_secret_from_stdin() -> anyhow::Result<String> {
    let stdin = std::io::stdin();
    let terminal = stdin.is_terminal();
    let saved = if terminal {
        eprint!("secret (not shown): ");
        let saved = nix::sys::termios::tcgetattr(&stdin).ok();
        if let Some(saved) = &saved {
            let mut quiet = saved.clone();
            quiet
                .local_flags
                .remove(nix::sys::termios::LocalFlags::ECHO);
            let _ =
                nix::sys::termios::tcsetattr(&stdin, nix::sys::termios::SetArg::TCSANOW, &quiet);
        }
        saved
    } else {
        None
    };
    let mut line = String::new();
    let read = stdin.lock().read_line(&mut line);
    if let Some(saved) = saved {
        let _ = nix::sys::termios::tcsetattr(&stdin, nix::sys::termios::SetArg::TCSANOW, &saved);
        eprintln!();
    }
    read.context("reading the secret from stdin")?;
    Ok(line.trim().to_string())
}

fn add(config: &Config, mut def: AccountDef) -> anyhow::Result<ExitCode> {
    let Some(backend) = config.backends.get(&def.backend) else {
        let known: Vec<&str> = config.backends.keys().map(String::as_str).collect();
        return Err(usage(format!(
            "--accounts add: unknown backend \"{}\" (known: {})",
            def.backend,
            known.join(", ")
        )));
    };
    if let Err(bad) = def.check() {
        let what = match bad.key {
            "name" => "NAME",
            "monthly_budget_usd" => "--monthly-budget-usd",
            "expires" => "--expires",
            other => other,
        };
        return Err(usage(format!(
            "--accounts add: {what}: {}; nothing stored",
            bad.message
        )));
    }
    if config.accounts.iter().any(|a| a.name == def.name) {
        return Err(usage(format!(
            "--accounts add: an account named {} exists already",
            def.name
        )));
    }
    let secret = read_secret_from_stdin()?;
    if secret.is_empty() {
        return Err(usage(
            "--accounts add: no secret on stdin (pipe it in: `… < key.txt`); nothing stored",
        ));
    }
    crate::redact::register(&secret);
    if secret.starts_with("sk-ant-at01-") {
        return Err(usage(
            "--accounts add: that is a short-lived sk-ant-at01- access token, which expires within hours; run `claude setup-token` for a long-lived sk-ant-oat01- token. Nothing stored",
        ));
    }
    let result = check::check(backend, &def, &secret);
    match &result {
        CheckResult::Valid => {}
        CheckResult::Invalid(why) => {
            return Err(usage(format!(
                "--accounts add: the API rejected this credential (401): {why}. Nothing stored"
            )));
        }
        CheckResult::Disabled(why) => {
            return Err(usage(format!(
                "--accounts add: the organisation behind this credential is disabled (403): {why}. Use an API key of an active organisation, or ask your organisation's admin. Nothing stored"
            )));
        }
        CheckResult::Unknown(_) => def.unverified = true,
    }
    def.secret = Some(secret);
    let name = def.name.clone();
    store::update(|accounts| {
        if accounts.iter().any(|a| a.name == def.name) {
            anyhow::bail!("an account named {} is stored already", def.name);
        }
        accounts.push(def);
        Ok(())
    })?;
    crate::state::account_health::after_check(&crate::paths::state_dir(), &name, &result);
    let path = store::path()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let note = match result {
        CheckResult::Unknown(why) => format!(
            " — unverified: the API could not be reached ({why}); `agent --accounts test {name}` checks it later"
        ),
        _ => " — checked: valid".to_string(),
    };
    emit(&format!("stored account {name} in {path} (0600){note}\n"))?;
    Ok(ExitCode::SUCCESS)
}

fn remove(config: &Config, name: &str) -> anyhow::Result<ExitCode> {
    let removed = store::update(|accounts| {
        let before = accounts.len();
        accounts.retain(|a| a.name != name);
        Ok(before != accounts.len())
    })?;
    if removed {
        emit(&format!("removed account {name}\n"))?;
        return Ok(ExitCode::SUCCESS);
    }
    if config.accounts.iter().any(|a| a.name == name) {
        let file = config.source.as_ref().map_or_else(
            || "the configuration file".to_string(),
            |p| p.display().to_string(),
        );
        return Err(usage(format!(
            "account {name} is defined in {file}: remove its [[accounts]] entry there"
        )));
    }
    Err(usage(format!("no account named {name}")))
}

fn test(config: &Config, only: Option<&str>, json: bool) -> anyhow::Result<ExitCode> {
    let state_dir = crate::paths::state_dir();
    let chosen: Vec<&AccountDef> = config
        .accounts
        .iter()
        .filter(|a| only.is_none_or(|n| a.name == n))
        .collect();
    if let Some(name) = only
        && chosen.is_empty()
    {
        return Err(usage(format!("no account named {name}")));
    }
    let mut rows = Vec::new();
    let mut bad = 0;
    for account in chosen {
        let backend = &config.backends[&account.backend];
        let (word, detail) = match account.read_secret() {
            Err(err) => {
                bad += 1;
                ("broken".to_string(), format!("{err:#}"))
            }
            Ok(secret) => {
                let result = check::check(backend, account, &secret);
                crate::state::account_health::after_check(&state_dir, &account.name, &result);
                if matches!(result, CheckResult::Invalid(_) | CheckResult::Disabled(_)) {
                    bad += 1;
                }
                (result.word().to_string(), result.describe())
            }
        };
        rows.push((account.name.clone(), word, detail));
    }
    crate::watch::alerts::after_account_checks(config, &state_dir);
    if json {
        let rows: Vec<_> = rows
            .iter()
            .map(|(n, w, d)| json!({"name": n, "result": w, "detail": d}))
            .collect();
        emit_json(&serde_json::Value::Array(rows))?;
    } else {
        let mut out = String::new();
        for (name, _, detail) in &rows {
            let _ = writeln!(out, "{name}: {detail}");
        }
        emit(&out)?;
    }
    Ok(if bad == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
