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
            dir,
            priority,
            expires,
            secret_var,
            monthly_budget_usd,
        } => {
            let kind = match kind {
                KindArg::Oauth => Kind::Oauth,
                KindArg::ApiKey => Kind::ApiKey,
                KindArg::Login => Kind::Login,
            };
            if kind != Kind::Login && dir.is_some() {
                return Err(usage(
                    "--accounts add: --dir is for --kind login (a CLI's own login in its own directory); nothing stored",
                ));
            }
            // One spelling of the directory, absolute: the key its windows are filed under.
            let dir = dir
                .map(|dir| crate::paths::user_path(&dir).unwrap_or(dir))
                .map(|dir| dir.to_string_lossy().into_owned());
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
                dir,
                unverified: false,
            };
            if def.is_login() {
                return add_login(config, def);
            }
            add(config, def)
        }
        Command::Remove { name } => remove(config, &name),
        Command::Test { name, json } => test(config, name.as_deref(), json || global_json),
    }
}

fn source_of(account: &AccountDef) -> String {
    if account.is_login() {
        return format!(
            "its own login in {}",
            account
                .login_dir()
                .map_or_else(|| "?".to_string(), |d| d.display().to_string())
        );
    }
    match (&account.secret_env, &account.secret_cmd, &account.secret) {
        (Some(var), _, _) => format!("env {var}"),
        (None, Some(_), _) => "secret command".to_string(),
        (None, None, Some(_)) => "credentials.toml".to_string(),
        (None, None, None) => "none".to_string(),
    }
}

/// The last check of an account: what it found, and when (the stored stamp).
struct LastCheck {
    found: String,
    at: Option<String>,
}

impl LastCheck {
    /// `valid at 2026-12-03T23:36:28Z`, as `--json` keeps it for scripts.
    fn stamped(&self) -> String {
        match &self.at {
            Some(at) => format!("{} at {at}", self.found),
            None => self.found.clone(),
        }
    }

    /// `valid at 23:36`: local and short, for a person.
    fn said(&self) -> String {
        match &self.at {
            Some(at) => format!(
                "{} at {}",
                self.found,
                crate::when::short_stamp(at, jiff::Timestamp::now())
            ),
            None => self.found.clone(),
        }
    }
}

/// An account's health in words, without a call.
fn health_of(account: &AccountDef) -> (String, Option<LastCheck>) {
    let state_dir = crate::paths::state_dir();
    let health = crate::state::account_health::get(&state_dir, &account.name);
    let state = if account.is_login() {
        // A login is judged by its windows and the fast-fail net, never by its token.
        crate::state::account_health::skip_reason(
            &state_dir,
            &account.name,
            crate::state::health::now_ms(),
        )
        .unwrap_or_else(|| "healthy".to_string())
    } else if let Err(err) = account.read_secret() {
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
    let last = health.last_check.map(|found| LastCheck {
        found,
        at: health.last_check_time,
    });
    (state, last)
}

fn list(config: &Config, json: bool) -> anyhow::Result<ExitCode> {
    if json {
        let rows: Vec<_> = config
            .accounts
            .iter()
            .map(|a| {
                let (health, last) = health_of(a);
                let mut row = json!({
                    "name": a.name, "backend": a.backend, "kind": a.kind.as_str(), "secret_from": source_of(a),
                    "priority": a.priority, "health": health, "last_check": last.as_ref().map(LastCheck::stamped),
                    "expires": a.expires, "warning": a.expiry_warning(),
                });
                if let Some(login) = login_report(config, a) {
                    row["dir"] = json!(a.login_dir());
                    row["login"] = login.json();
                }
                row
            })
            .collect();
        emit_json(&serde_json::Value::Array(rows))?;
        return Ok(ExitCode::SUCCESS);
    }
    if config.accounts.is_empty() {
        emit(&own_logins_text(config))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = String::new();
    for account in &config.accounts {
        let (health, last) = health_of(account);
        let rotation = config.backends.get(&account.backend).map_or("?", |b| {
            let pool: Vec<&AccountDef> = config
                .accounts
                .iter()
                .filter(|a| a.backend == b.name)
                .collect();
            accounts::rotation_of(b, &pool).as_str()
        });
        let _ = writeln!(
            out,
            "{}  {} ({rotation})  {}  secret from {}  priority {}  {health}{}",
            account.name,
            account.backend,
            account.kind.as_str(),
            source_of(account),
            account.priority,
            last.map(|l| format!("  last check {}", l.said()))
                .unwrap_or_default()
        );
        if let Some(login) = login_report(config, account) {
            let _ = writeln!(out, "  {}", login.text());
        }
        if let Some(warning) = account.expiry_warning() {
            let _ = writeln!(out, "  warning: {warning}");
        }
    }
    emit(&out)?;
    Ok(ExitCode::SUCCESS)
}

/// `--accounts list` with no accounts configured: says so in one line, then the CLIs' own
/// logins agent sees (plan, expiry, windows — never a token), which the rungs run on as
/// they are, and how a second login of one becomes an account.
fn own_logins_text(config: &Config) -> String {
    use crate::adapter::Env;
    let mut out = String::from(
        "no accounts configured: the rungs use each CLI's own login or key as the CLI finds it\n",
    );
    let state_dir = crate::paths::state_dir();
    let now = jiff::Timestamp::now();
    let mut seen = Vec::new();
    for family in crate::adapter::ALL {
        let Some(login) = crate::launch::own_login::login_in(family, &Env::process()) else {
            continue;
        };
        let label = config
            .backends
            .values()
            .find(|b| b.family == family)
            .map_or(family.name(), |b| b.label.as_str());
        let windows = login.windows(&state_dir, now);
        let _ = writeln!(
            out,
            "  {label}: its own {}",
            login.describe_brief(&windows, now)
        );
        seen.push(family.name());
    }
    if seen.is_empty() {
        out.push_str("  no CLI's own login is seen on this machine\n");
    }
    let backend = seen.first().copied().unwrap_or("claude");
    let _ = writeln!(
        out,
        "a second login: agent --accounts add NAME --backend {backend} --kind login --dir DIR; a key: agent --accounts add NAME --backend {backend} --kind api_key < key.txt"
    );
    out
}

/// What a `login` account's directory holds now, and its windows: read from the CLI's
/// own store (presence, plan, expiry — never the token) and `windows.json`.
struct LoginReport {
    dir: String,
    /// How the CLI is run on it: with its home variable at `dir`, or as typing it would.
    how_run: String,
    found: Option<crate::probe::login::LoginRung>,
    windows: Vec<crate::state::window::Window>,
    login_command: Option<String>,
    now: jiff::Timestamp,
}

impl LoginReport {
    fn text(&self) -> String {
        match &self.found {
            Some(login) => login.describe_brief(&self.windows, self.now),
            None => format!(
                "no login in {}{}",
                self.dir,
                self.login_command
                    .as_ref()
                    .map(|c| format!(" — log in there: {c}"))
                    .unwrap_or_default()
            ),
        }
    }

    fn json(&self) -> serde_json::Value {
        let windows: Vec<_> = self
            .windows
            .iter()
            .map(|w| {
                json!({"scope": w.scope.describe(), "used_percent": w.used_percent,
                       "resets_at": w.resets_at.to_string(), "source": w.source,
                       "observed_at": w.observed_at.to_string()})
            })
            .collect();
        match &self.found {
            Some(login) => json!({
                "present": true, "plan": login.plan, "key": login.key,
                "expires_at": login.expires_at.map(|t| t.to_string()),
                "windows": windows,
            }),
            None => {
                json!({"present": false, "login_command": self.login_command, "windows": windows})
            }
        }
    }
}

fn login_report(config: &Config, account: &AccountDef) -> Option<LoginReport> {
    let backend = config.backends.get(&account.backend)?;
    let home = accounts::login_home(backend, account)?;
    let family = backend.family;
    let set = home.set();
    let mut removed = accounts::credential_vars(backend, &config.accounts);
    removed.extend(home.unset());
    let env = crate::adapter::Env::child(&set, &removed);
    let now = jiff::Timestamp::now();
    let found = crate::launch::own_login::login_in(family, &env);
    let key = found
        .as_ref()
        .map(|l| l.key.clone())
        .or_else(|| accounts::login_key(backend, account));
    let windows = key
        .map(|key| crate::state::windows::Windows::new(&crate::paths::state_dir()).known(&key, now))
        .unwrap_or_default();
    Some(LoginReport {
        login_command: family.login_command(home.moved_dir()),
        dir: home.dir_text(),
        how_run: home.describe(&backend.label, &backend.command),
        found,
        windows,
        now,
    })
}

/// `--accounts add NAME --backend B --kind login --dir DIR`: stored only when DIR holds the
/// CLI's own login (read for presence, plan and expiry, never its token); when it holds
/// none, the command that logs in there is printed and nothing is stored — a login pool
/// with an empty directory in it would only hand its rungs on at every launch.
fn add_login(config: &Config, def: AccountDef) -> anyhow::Result<ExitCode> {
    let backend = checked(config, &def)?;
    if def.secret_var.is_some() {
        return Err(usage(
            "--accounts add: a login has no secret, so no --secret-var; nothing stored",
        ));
    }
    if config.accounts.iter().any(|a| a.name == def.name) {
        return Err(usage(format!(
            "--accounts add: an account named {} exists already",
            def.name
        )));
    }
    // The CLI runs the hooks and settings in its home as the user: a home another user can
    // write is theirs to run code in.
    if let Some(dir) = def.login_dir() {
        crate::ownership::refuse_exposed(&dir, "--accounts add: login directory")
            .map_err(|err| usage(format!("{err:#}; nothing stored")))?;
    }
    let Some(report) = login_report(config, &def) else {
        return Err(usage(format!(
            "--accounts add: agent cannot move {}'s home, so it cannot run one of its logins from a directory; nothing stored",
            backend.label
        )));
    };
    let Some(found) = &report.found else {
        let how = report.login_command.clone().unwrap_or_default();
        anyhow::bail!(
            "--accounts add: no {} login in {}. Log in there first: {how}; then run this again. Nothing stored",
            backend.label,
            report.dir
        );
    };
    let summary = found.describe_brief(&report.windows, report.now);
    let name = def.name.clone();
    let key = found.key.clone();
    store::update(|accounts| {
        if accounts.iter().any(|a| a.name == def.name) {
            anyhow::bail!("an account named {} is stored already", def.name);
        }
        accounts.push(def);
        Ok(())
    })?;
    crate::state::windows::Windows::new(&crate::paths::state_dir()).forget_removed(&key)?;
    let path = store::path()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    emit(&format!(
        "stored login {name} in {path}: {summary}\n  agent never reads its token: {}\n",
        report.how_run
    ))?;
    Ok(ExitCode::SUCCESS)
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

/// The backend `--accounts add` names, once the account it describes passes its checks
/// (each refusal names the option it came from).
fn checked<'c>(config: &'c Config, def: &AccountDef) -> anyhow::Result<&'c crate::config::Backend> {
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
            "dir" => "--dir",
            "monthly_budget_usd" => "--monthly-budget-usd",
            "expires" => "--expires",
            other => other,
        };
        return Err(usage(format!(
            "--accounts add: {what}: {}; nothing stored",
            bad.message
        )));
    }
    Ok(backend)
}

fn add(config: &Config, mut def: AccountDef) -> anyhow::Result<ExitCode> {
    let backend = checked(config, &def)?;
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
        // Its login's windows outlive it: they stay named by the account they were.
        if let Some(key) = config
            .accounts
            .iter()
            .find(|a| a.name == name)
            .and_then(|account| {
                accounts::login_key(config.backends.get(&account.backend)?, account)
            })
        {
            crate::state::windows::Windows::new(&crate::paths::state_dir())
                .name_removed(&key, name)?;
        }
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
        if account.is_login() {
            // No call with a login's token: whether its directory still holds it.
            let (word, detail) = match login_report(config, account) {
                Some(LoginReport {
                    found: Some(login), ..
                }) => ("login".to_string(), login.name()),
                Some(report) => {
                    bad += 1;
                    ("no_login".to_string(), report.text())
                }
                None => {
                    bad += 1;
                    (
                        "no_login".to_string(),
                        "agent cannot move this CLI's home".to_string(),
                    )
                }
            };
            rows.push((account.name.clone(), word, detail));
            continue;
        }
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
