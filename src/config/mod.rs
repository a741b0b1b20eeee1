//! The configuration (DESIGN.md §3): the compiled-in built-in table, overridden key by key by
//! the user's TOML file, then by the `AGENT_*` environment. Every mistake in the file is a
//! usage error naming the file, the line and the key.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

pub mod accounts;
pub mod alerts;
mod backend;
pub mod backend_args;
pub mod builtin;
mod document;
pub mod fields;
pub mod limits;
pub mod on_limit;
pub mod pricing;
pub mod relay;
mod rung;
mod secrets;
mod source;
pub mod store;
pub mod template;
mod words;

pub use backend::{Auth, Backend, OpenAiApi, ProbeDef, ProbeKind};
pub use rung::RungDef;

use crate::bounds::{self, Bounds, Unit};
use crate::exit_codes::usage;
use limits::{BreakerPolicy, Limits};
use on_limit::OnLimit;
use source::Source;

/// The settings agent runs with, after merging.
#[derive(Debug, Clone)]
pub struct Config {
    /// The file that was read, if any.
    pub source: Option<PathBuf>,
    pub fastfail: Duration,
    pub probe_timeout: Duration,
    pub probe_cache: Duration,
    /// How long a CLI's own check (`self_check`) is trusted: a little under the watchdog's
    /// two hours, so each of its runs checks each CLI about once.
    pub self_check_cache: Duration,
    pub hedge: Duration,
    pub quota_cooldown: Duration,
    /// A subscription login whose window is this full (percent) is parked before the wall.
    pub park_at_percent: f64,
    /// How long `codex app-server` may take to say its login's windows (`--status`,
    /// `--check-fallback`; a launch waits at most `probe_timeout` too).
    pub app_server_timeout: Duration,
    /// What to do when a session runs out of its window mid-work (`on_limit`); a backend's
    /// own wins ([`Config::on_limit_for`]). `None`: not said, the launch decides.
    pub on_limit: Option<OnLimit>,
    pub backends: BTreeMap<String, Backend>,
    pub rungs: Vec<RungDef>,
    /// False when the user's file replaced the table with its own `[[rungs]]`.
    pub rungs_are_builtin: bool,
    /// Daily caps from `[budget]` (`agent --budget set` overrides them).
    pub budget: Limits,
    pub breaker: BreakerPolicy,
    /// Where the watchdog's alerts go (`[alerts.*]`).
    pub alerts: alerts::AlertsConfig,
    /// Token prices and monthly plans for `--usage` (`[pricing]`).
    pub pricing: crate::config::pricing::Pricing,
    /// Credential pools (`[[accounts]]`, then `credentials.toml`).
    pub accounts: Vec<accounts::AccountDef>,
    /// The credential relay (`[relay]`).
    pub relay: relay::RelayConfig,
    /// Where shared state lives (`[store]`): `None` for the state directory's files.
    pub store: Option<store::RedisStore>,
    /// What the file has that agent set aside (an unknown key, a backend that looks like a
    /// typo of one agent knows), one sentence each: a launch and the reports print them and
    /// go on, the doctor counts each as a problem.
    pub warnings: Vec<String>,
    /// The keys of the file that hold a secret written in it (`alerts.telegram.bot_token`),
    /// never their values: the doctor warns of each.
    pub secrets_in_file: Vec<String>,
}

// ---- the file's shape -------------------------------------------------------------------

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    // Every number is read as f64 (TOML integers too) and range-checked by `bounds`.
    fastfail_seconds: Option<Spanned<f64>>,
    probe_timeout_seconds: Option<Spanned<f64>>,
    probe_cache_seconds: Option<Spanned<f64>>,
    self_check_cache_seconds: Option<Spanned<f64>>,
    hedge_ms: Option<Spanned<f64>>,
    quota_minutes: Option<Spanned<f64>>,
    park_at_percent: Option<Spanned<f64>>,
    app_server_seconds: Option<Spanned<f64>>,
    on_limit: Option<OnLimit>,
    #[serde(default)]
    backends: BTreeMap<String, Spanned<BackendFile>>,
    rungs: Option<Vec<RungFile>>,
    budget: Option<BudgetSection>,
    breaker: Option<BreakerSection>,
    alerts: Option<alerts::AlertsConfig>,
    pricing: Option<crate::config::pricing::PricingFile>,
    accounts: Option<Vec<Spanned<accounts::AccountDef>>>,
    relay: Option<relay::RelayFile>,
    store: Option<Spanned<store::StoreFile>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct BudgetSection {
    calls: Option<Spanned<f64>>,
    tokens: Option<Spanned<f64>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct BreakerSection {
    threshold: Option<Spanned<f64>>,
    error_rate: Option<Spanned<f64>>,
    window_seconds: Option<Spanned<f64>>,
    min_calls: Option<Spanned<f64>>,
    backoff_seconds: Option<Spanned<f64>>,
    max_backoff_seconds: Option<Spanned<f64>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct BackendFile {
    label: Option<String>,
    command: Option<Spanned<String>>,
    vendor: Option<String>,
    model_flag: Option<String>,
    default_model: Option<String>,
    models: Option<BTreeMap<String, Spanned<String>>>,
    env: Option<BTreeMap<String, String>>,
    env_remove: Option<Vec<String>>,
    probe: Option<ProbeFile>,
    rotation: Option<accounts::Rotation>,
    park_at_percent: Option<Spanned<f64>>,
    extra_usage: Option<bool>,
    login_usage: Option<bool>,
    translate: Option<bool>,
    self_check: Option<bool>,
    on_limit: Option<OnLimit>,
    args: Option<Spanned<Vec<String>>>,
    headless_args: Option<Spanned<Vec<String>>>,
    interactive_args: Option<Spanned<Vec<String>>>,
    enabled: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProbeFile {
    kind: Option<ProbeKind>,
    url: Option<String>,
    key: Option<String>,
    auth: Option<Auth>,
    api: Option<OpenAiApi>,
    argv: Option<Vec<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RungFile {
    backend: Spanned<String>,
    #[serde(default)]
    probe_model: String,
    #[serde(default)]
    run_model: String,
}

/// The ranges of the top-level and `[breaker]` durations (see `bounds`).
pub const FASTFAIL: Bounds = Bounds::up_to(bounds::YEAR);
/// A probe is on the launch path: longer than an hour is a hang.
pub const PROBE_TIMEOUT: Bounds = Bounds::positive(bounds::HOUR);
const PROBE_CACHE: Bounds = Bounds::up_to(bounds::YEAR);
/// 100 minutes: the watchdog runs every two hours, so each run finds the last check stale
/// and runs each CLI once; a `--status` between two runs reuses it.
pub const DEFAULT_SELF_CHECK_CACHE: Duration = Duration::from_secs(100 * 60);
/// Asking a CLI about its login is on the launch and report paths: more than a few
/// minutes is a hang.
const APP_SERVER_TIMEOUT: Bounds = Bounds::positive(bounds::HOUR);
const HEDGE: Bounds = Bounds::up_to(bounds::HOUR);
const QUOTA_COOLDOWN: Bounds = Bounds::up_to(bounds::YEAR);
const BREAKER_WINDOW: Bounds = Bounds::positive(bounds::YEAR);
const BREAKER_BACKOFF: Bounds = Bounds::up_to(bounds::YEAR);
/// Park a login at 95 % of a window: close enough to the wall that little of the plan is
/// left unused, far enough that a long turn started at 94 % rarely runs into it (the
/// peers settled between 90 and 98).
pub const DEFAULT_PARK_AT_PERCENT: f64 = 95.0;
/// Breaker counts (0 turns the consecutive-failure rule off).
const BREAKER_COUNT_MAX: u64 = 1_000_000;
/// Daily budget caps (0 = unlimited).
const BUDGET_COUNT_MAX: u64 = 1_000_000_000_000_000;

// ---- loading ----------------------------------------------------------------------------

/// Loads the built-in table, then the file (when there is one), then the environment.
pub fn load(file: Option<(PathBuf, bool)>) -> anyhow::Result<Config> {
    let mut config = defaults(builtin::backends(), builtin::rungs());
    if let Some((path, explicit)) = file
        && let Some(text) = read_file(&path, explicit)?
    {
        let source = Source {
            path: &path,
            text: &text,
        };
        let (parsed, unknown): (FileConfig, _) = document::parse(&source)?;
        config.warnings.extend(unknown.iter().map(|key| {
            let hint = key
                .suggestion
                .as_ref()
                .map_or(String::new(), |close| format!(" — did you mean {close}?"));
            format!(
                "config: unknown key \"{}\" in {}:{}{hint} (ignored)",
                key.key,
                path.display(),
                key.line
            )
        }));
        merge(&mut config, parsed, &source, false)?;
        config.source = Some(path);
    }
    apply_env_overrides(&mut config)?;
    secrets::register(&config.backends, &config.alerts);
    Ok(config)
}

/// The configuration file's text, `None` when the default one is absent. It names the
/// commands agent runs, so it is read as anything another program wrote (never blocking on a
/// FIFO, never more than its cap: `--config /dev/zero` is refused at once) and only when no
/// other user can change it ([`crate::ownership`]). Every refusal is a configuration error
/// naming the file (exit 2).
fn read_file(path: &Path, explicit: bool) -> anyhow::Result<Option<String>> {
    let shown = path.display();
    let bytes = match crate::bounded_read::read(path, crate::bounded_read::CONFIG) {
        Ok(bytes) => bytes,
        Err(crate::bounded_read::Skipped::Missing) if !explicit => return Ok(None),
        Err(why) => return Err(usage(format!("the configuration file {shown}: {why}"))),
    };
    crate::ownership::refuse_exposed(path, "the configuration file")?;
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| usage(format!("the configuration file {shown} is not UTF-8")))
}

/// The settings before any file: the given table, and every other default.
fn defaults(backends: BTreeMap<String, Backend>, rungs: Vec<RungDef>) -> Config {
    Config {
        source: None,
        fastfail: Duration::from_secs(25),
        probe_timeout: Duration::from_secs(10),
        probe_cache: Duration::from_secs(300),
        self_check_cache: DEFAULT_SELF_CHECK_CACHE,
        hedge: Duration::from_millis(400),
        quota_cooldown: Duration::from_secs(60 * 60),
        park_at_percent: DEFAULT_PARK_AT_PERCENT,
        app_server_timeout: Duration::from_secs(20),
        on_limit: None,
        backends,
        rungs,
        rungs_are_builtin: true,
        budget: Limits::default(),
        breaker: BreakerPolicy::default(),
        alerts: alerts::AlertsConfig::default(),
        pricing: pricing::Pricing::default(),
        accounts: Vec::new(),
        relay: relay::RelayConfig::default(),
        store: None,
        warnings: Vec::new(),
        secrets_in_file: Vec::new(),
    }
}

fn merge(
    config: &mut Config,
    file: FileConfig,
    source: &Source,
    builtin: bool,
) -> anyhow::Result<()> {
    config.secrets_in_file.extend(secrets_written_in(&file));
    let duration = |value: &Option<Spanned<f64>>,
                    key: &str,
                    unit: Unit,
                    range: Bounds|
     -> anyhow::Result<Option<Duration>> {
        value
            .as_ref()
            .map(|spanned| {
                bounds::duration(*spanned.get_ref(), unit, range)
                    .map_err(|why| source.error(spanned.span().start, key, &why))
            })
            .transpose()
    };
    let count = |value: &Option<Spanned<f64>>, key: &str, max: u64| {
        value
            .as_ref()
            .map(|spanned| {
                bounds::count(*spanned.get_ref(), 0, max)
                    .map_err(|why| source.error(spanned.span().start, key, &why))
            })
            .transpose()
    };
    let seconds = |value: &Option<Spanned<f64>>, key: &str, range: Bounds| {
        duration(value, key, Unit::Seconds, range)
    };
    if let Some(d) = seconds(&file.fastfail_seconds, "fastfail_seconds", FASTFAIL)? {
        config.fastfail = d;
    }
    if let Some(d) = seconds(
        &file.probe_timeout_seconds,
        "probe_timeout_seconds",
        PROBE_TIMEOUT,
    )? {
        config.probe_timeout = d;
    }
    if let Some(d) = seconds(
        &file.probe_cache_seconds,
        "probe_cache_seconds",
        PROBE_CACHE,
    )? {
        config.probe_cache = d;
    }
    if let Some(d) = seconds(
        &file.self_check_cache_seconds,
        "self_check_cache_seconds",
        PROBE_CACHE,
    )? {
        config.self_check_cache = d;
    }
    if let Some(d) = duration(
        &file.quota_minutes,
        "quota_minutes",
        Unit::Minutes,
        QUOTA_COOLDOWN,
    )? {
        config.quota_cooldown = d;
    }
    if let Some(d) = duration(&file.hedge_ms, "hedge_ms", Unit::Millis, HEDGE)? {
        config.hedge = d;
    }
    if let Some(d) = seconds(
        &file.app_server_seconds,
        "app_server_seconds",
        APP_SERVER_TIMEOUT,
    )? {
        config.app_server_timeout = d;
    }
    if let Some(percent) = percent(file.park_at_percent.as_ref(), source, "park_at_percent")? {
        config.park_at_percent = percent;
    }
    if let Some(choice) = file.on_limit {
        config.on_limit = Some(choice);
    }
    if let Some(budget) = file.budget {
        if let Some(calls) = count(&budget.calls, "budget.calls", BUDGET_COUNT_MAX)? {
            config.budget.calls = calls;
        }
        if let Some(tokens) = count(&budget.tokens, "budget.tokens", BUDGET_COUNT_MAX)? {
            config.budget.tokens = tokens;
        }
    }
    if let Some(alerts) = file.alerts {
        if let Some(deadline) = &alerts.deadline_seconds {
            bounds::duration(*deadline.get_ref(), Unit::Seconds, alerts::DEADLINE).map_err(
                |why| source.error(deadline.span().start, "alerts.deadline_seconds", &why),
            )?;
        }
        alerts.withhold_variables();
        config.alerts = alerts;
    }
    if let Some(relay) = file.relay {
        config
            .relay
            .merge(relay)
            .map_err(|bad| source.error(bad.offset, &bad.key, &bad.message))?;
    }
    if let Some(section) = file.store {
        let offset = section.span().start;
        config.store = section
            .into_inner()
            .validate()
            .map_err(|bad| source.error(offset, bad.key, &bad.message))?;
    }
    if let Some(pricing) = file.pricing {
        config.pricing = pricing
            .validate()
            .map_err(|bad| source.error(bad.offset, &bad.key, &bad.message))?;
    }
    if let Some(breaker) = file.breaker {
        let policy = &mut config.breaker;
        let small = |value: &Option<Spanned<f64>>, key: &str| -> anyhow::Result<Option<u32>> {
            Ok(count(value, key, BREAKER_COUNT_MAX)?
                .map(|n| u32::try_from(n).expect("within BREAKER_COUNT_MAX")))
        };
        if let Some(n) = small(&breaker.threshold, "breaker.threshold")? {
            policy.threshold = n;
        }
        if let Some(n) = small(&breaker.min_calls, "breaker.min_calls")? {
            policy.min_calls = n;
        }
        if let Some(rate) = &breaker.error_rate {
            if !(0.0..=1.0).contains(rate.get_ref()) {
                return Err(source.error(
                    rate.span().start,
                    "breaker.error_rate",
                    "must be a number from 0 to 1",
                ));
            }
            policy.error_rate = *rate.get_ref();
        }
        if let Some(d) = seconds(
            &breaker.window_seconds,
            "breaker.window_seconds",
            BREAKER_WINDOW,
        )? {
            policy.window = d;
        }
        if let Some(d) = seconds(
            &breaker.backoff_seconds,
            "breaker.backoff_seconds",
            BREAKER_BACKOFF,
        )? {
            policy.backoff = d;
        }
        if let Some(d) = seconds(
            &breaker.max_backoff_seconds,
            "breaker.max_backoff_seconds",
            BREAKER_BACKOFF,
        )? {
            policy.max_backoff = d;
        }
    }

    for (name, spanned) in file.backends {
        let span = spanned.span();
        let over = spanned.into_inner();
        let key = format!("backends.{name}");
        let backend = match config.backends.remove(&name) {
            Some(existing) => existing,
            None => {
                let Some(command) = &over.command else {
                    let known = config.backends.keys().map(String::as_str);
                    if let Some(close) = crate::text::closest(&name, known) {
                        // An override of a backend agent knows, misspelt: set aside like an
                        // unknown key, not taken for a new backend without a command.
                        config.warnings.push(format!(
                            "config: unknown backend \"{key}\" in {}:{} — did you mean backends.{close}? (ignored: a new backend needs `command`)",
                            source.path.display(),
                            source.line(span.start)
                        ));
                        continue;
                    }
                    return Err(source.error(span.start, &key, "a new backend needs `command`"));
                };
                Backend::new(&name, &name, command.get_ref(), &name, builtin)
            }
        };
        let backend = overlay(backend, over, source, &key)?;
        config.backends.insert(name, backend);
    }

    // After the backends: an account may belong to a backend this file defines.
    for (index, spanned) in file.accounts.unwrap_or_default().into_iter().enumerate() {
        let span = spanned.span();
        let account = spanned.into_inner();
        account.check().map_err(|bad| {
            source.error(
                span.start,
                &format!("accounts[{}].{}", index + 1, bad.key),
                &bad.message,
            )
        })?;
        if account.secret.is_some() {
            // Never the value in the message: it is a secret, and this error is printed.
            return Err(source.error(
                span.start,
                &format!("accounts[{}].secret", index + 1),
                "a secret is never written in the configuration file: name a variable with `secret_env`, a command with `secret_cmd`, or store it 0600 with `agent --accounts add NAME --backend B --kind K < key.txt`",
            ));
        }
        let key = format!("accounts.{}", account.name);
        if !config.backends.contains_key(&account.backend) {
            return Err(source.error(
                span.start,
                &key,
                &format!(
                    "unknown backend \"{}\"{}",
                    account.backend,
                    did_you_mean(&account.backend, config.backends.keys())
                ),
            ));
        }
        if config.accounts.iter().any(|a| a.name == account.name) {
            return Err(source.error(
                span.start,
                &key,
                "an account of this name is already defined",
            ));
        }
        config.accounts.push(account);
    }

    if let Some(rungs) = file.rungs {
        let mut defs = Vec::with_capacity(rungs.len());
        for (index, rung) in rungs.into_iter().enumerate() {
            let name = rung.backend.get_ref();
            if !config.backends.contains_key(name) {
                let known: Vec<&str> = config.backends.keys().map(String::as_str).collect();
                return Err(source.error(
                    rung.backend.span().start,
                    &format!("rungs[{}].backend", index + 1),
                    &format!(
                        "unknown backend \"{name}\"{} (known: {})",
                        did_you_mean(name, config.backends.keys()),
                        known.join(", ")
                    ),
                ));
            }
            defs.push(RungDef {
                backend: rung.backend.into_inner(),
                probe_model: rung.probe_model,
                run_model: rung.run_model,
                account: None,
                logins: Vec::new(),
            });
        }
        if defs.is_empty() {
            return Err(usage(format!(
                "{}: rungs: the table has no rungs",
                source.path.display()
            )));
        }
        config.rungs = defs;
        config.rungs_are_builtin = builtin;
    }
    Ok(())
}

/// The keys of `file` that hold a secret written in it, in its order of sections.
fn secrets_written_in(file: &FileConfig) -> Vec<String> {
    let mut keys = Vec::new();
    for (name, backend) in &file.backends {
        let backend = backend.get_ref();
        let probe_key = backend.probe.as_ref().and_then(|p| p.key.as_deref());
        keys.extend(secrets::in_backend(name, backend.env.as_ref(), probe_key));
    }
    let store_url = file.store.as_ref().and_then(|s| s.get_ref().url.as_deref());
    if store_url.is_some_and(secrets::in_store_url) {
        keys.push("store.url".to_string());
    }
    if let Some(alerts) = &file.alerts {
        keys.extend(alerts.literal_secrets().into_iter().map(String::from));
    }
    keys
}

fn overlay(
    mut backend: Backend,
    over: BackendFile,
    source: &Source,
    key: &str,
) -> anyhow::Result<Backend> {
    if let Some(label) = over.label {
        backend.label = label;
    }
    if let Some(command) = over.command {
        if command.get_ref().trim().is_empty() {
            return Err(source.error(
                command.span().start,
                &format!("{key}.command"),
                "must not be empty",
            ));
        }
        backend.set_command(command.into_inner());
    }
    if let Some(vendor) = over.vendor {
        backend.vendor = vendor;
    }
    if let Some(flag) = over.model_flag {
        backend.model_flag = (!flag.is_empty()).then_some(flag);
    }
    if let Some(model) = over.default_model {
        backend.default_model = (!model.is_empty()).then_some(model);
    }
    for (alias, target) in over.models.unwrap_or_default() {
        if target.get_ref().trim().is_empty() {
            return Err(source.error(
                target.span().start,
                &format!("{key}.models.{alias}"),
                "the alias resolves to nothing",
            ));
        }
        backend.models.insert(alias, target.into_inner());
    }
    backend.env.extend(over.env.unwrap_or_default());
    if let Some(remove) = over.env_remove {
        backend.env_remove = remove;
    }
    if let Some(rotation) = over.rotation {
        backend.rotation = Some(rotation);
    }
    if let Some(percent) = percent(
        over.park_at_percent.as_ref(),
        source,
        &format!("{key}.park_at_percent"),
    )? {
        backend.park_at_percent = Some(percent);
    }
    if let Some(extra) = over.extra_usage {
        backend.extra_usage = extra;
    }
    if let Some(login_usage) = over.login_usage {
        backend.login_usage = login_usage;
    }
    if let Some(self_check) = over.self_check {
        backend.self_check = self_check;
    }
    if let Some(enabled) = over.enabled {
        backend.enabled = enabled;
    }
    if let Some(choice) = over.on_limit {
        backend.on_limit = Some(choice);
    }
    if let Some(translate) = over.translate {
        backend.translate = translate;
    }
    let own = backend_args::BackendArgsFile {
        args: over.args,
        headless_args: over.headless_args,
        interactive_args: over.interactive_args,
    };
    backend.own_args.overlay(own, source, key)?;
    if let Some(probe) = over.probe {
        let def = &mut backend.probe;
        if let Some(kind) = probe.kind {
            def.kind = kind;
        }
        def.url = probe.url.or(def.url.take());
        def.key = probe.key.or(def.key.take());
        def.auth = probe.auth.or(def.auth);
        def.api = probe.api.unwrap_or(def.api);
        def.argv = probe.argv.or(def.argv.take());
    }
    Ok(backend)
}

/// ` — did you mean claude?` when `name` is a slip of one of `known`, else nothing.
fn did_you_mean<'a>(name: &str, known: impl IntoIterator<Item = &'a String>) -> String {
    crate::text::closest(name, known.into_iter().map(String::as_str))
        .map_or(String::new(), |close| format!(" — did you mean {close}?"))
}

/// A percentage setting, checked: a number from 0 to 100.
fn percent(
    value: Option<&Spanned<f64>>,
    source: &Source,
    key: &str,
) -> anyhow::Result<Option<f64>> {
    value
        .map(|spanned| {
            bounds::amount(*spanned.get_ref(), 100.0)
                .map_err(|why| source.error(spanned.span().start, key, &why))
        })
        .transpose()
}

/// `AGENT_PROBE_TIMEOUT` and `AGENT_FASTFAIL_SECONDS` win over the file.
fn apply_env_overrides(config: &mut Config) -> anyhow::Result<()> {
    for (var, slot, range) in [
        (
            "AGENT_PROBE_TIMEOUT",
            &mut config.probe_timeout,
            PROBE_TIMEOUT,
        ),
        ("AGENT_FASTFAIL_SECONDS", &mut config.fastfail, FASTFAIL),
    ] {
        let Ok(text) = std::env::var(var) else {
            continue;
        };
        if text.is_empty() {
            continue;
        }
        let seconds: f64 = text
            .trim()
            .parse()
            .map_err(|_| usage(format!("{var}={text}: expected a number of seconds")))?;
        *slot = bounds::duration(seconds, Unit::Seconds, range)
            .map_err(|why| usage(format!("{var}={text}: {why}")))?;
    }
    Ok(())
}

impl Config {
    /// The percent at which `backend`'s logins are parked before the wall.
    pub fn park_at_percent(&self, backend: &Backend) -> f64 {
        backend.park_at_percent.unwrap_or(self.park_at_percent)
    }

    /// The `on_limit` the file sets for `backend`: its own, else the top level's. `None`
    /// when the file says neither (the command line, read by the launch, wins over both).
    pub fn on_limit_for(&self, backend: &Backend) -> Option<OnLimit> {
        backend.on_limit.or(self.on_limit)
    }

    /// The cooldown and breaker rules, for the health store.
    /// How long a CLI's own check may take: a CLI starts, loads its settings and answers,
    /// which is slower than one API call — four probe timeouts (40 s by default).
    pub fn self_check_timeout(&self) -> Duration {
        self.probe_timeout * 4
    }

    pub fn policy(&self) -> limits::Policy {
        limits::Policy {
            quota_cooldown: self.quota_cooldown,
            breaker: self.breaker,
        }
    }

    /// The vendor of rung 1: rungs of any other vendor are "independent".
    pub fn first_vendor(&self) -> Option<&str> {
        self.rungs
            .first()
            .and_then(|rung| self.backends.get(&rung.backend))
            .map(|backend| backend.vendor.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load_text(text: &str) -> anyhow::Result<Config> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, text).unwrap();
        load(Some((path, true)))
    }

    #[test]
    fn the_builtin_table_has_eight_rungs() {
        let config = load(None).unwrap();
        let names: Vec<&str> = config.rungs.iter().map(|r| r.backend.as_str()).collect();
        assert_eq!(
            names,
            [
                "claude",
                "claude",
                "claude-proxy",
                "claude-proxy",
                "codex",
                "agy",
                "gemini",
                "opencode"
            ]
        );
        assert_eq!(config.first_vendor(), Some("anthropic"));
    }

    #[test]
    fn a_backend_is_overridden_key_by_key() {
        let config = load_text(
            "[backends.gemini]\ncommand = \"my-gemini\"\nprobe = { url = \"http://x\" }\n",
        )
        .unwrap();
        let gemini = &config.backends["gemini"];
        assert_eq!(gemini.command, "my-gemini");
        assert_eq!(gemini.label, "Gemini CLI");
        assert_eq!(gemini.probe.kind, ProbeKind::Gemini);
        assert_eq!(gemini.probe.url.as_deref(), Some("http://x"));
        assert!(config.rungs_are_builtin);
    }

    #[test]
    fn translate_is_on_unless_a_backend_turns_it_off() {
        assert!(load(None).unwrap().backends["codex"].translate);
        let config = load_text("[backends.codex]\ntranslate = false\n").unwrap();
        assert!(!config.backends["codex"].translate);
        assert!(config.backends["gemini"].translate);
    }

    #[test]
    fn park_at_percent_is_a_percentage_top_level_and_per_backend() {
        let config = load(None).unwrap();
        assert!((config.park_at_percent - DEFAULT_PARK_AT_PERCENT).abs() < f64::EPSILON);
        assert!(!config.backends["claude"].extra_usage);
        let config = load_text(
            "park_at_percent = 90\n[backends.codex]\npark_at_percent = 98.5\nextra_usage = true\n",
        )
        .unwrap();
        assert!((config.park_at_percent(&config.backends["claude"]) - 90.0).abs() < f64::EPSILON);
        assert!((config.park_at_percent(&config.backends["codex"]) - 98.5).abs() < f64::EPSILON);
        assert!(config.backends["codex"].extra_usage);
        assert!(!config.backends["claude"].login_usage);
        let on = load_text("[backends.claude]\nlogin_usage = true\n").unwrap();
        assert!(on.backends["claude"].login_usage);
        for bad in ["101", "-1", "nan", "inf"] {
            let err = load_text(&format!("park_at_percent = {bad}\n")).unwrap_err();
            let text = format!("{err:#}");
            assert!(
                text.contains("config.toml:1: park_at_percent: must be a number from 0 to 100"),
                "{text}"
            );
            let err =
                load_text(&format!("[backends.claude]\npark_at_percent = {bad}\n")).unwrap_err();
            let text = format!("{err:#}");
            assert!(
                text.contains("config.toml:2: backends.claude.park_at_percent"),
                "{text}"
            );
        }
    }

    #[test]
    fn on_limit_is_a_backends_own_else_the_top_levels_else_unsaid() {
        let config = load(None).unwrap();
        assert_eq!(config.on_limit_for(&config.backends["claude"]), None);
        let config =
            load_text("on_limit = \"stop\"\n[backends.codex]\non_limit = \"continue\"\n").unwrap();
        assert_eq!(
            config.on_limit_for(&config.backends["claude"]),
            Some(OnLimit::Stop)
        );
        assert_eq!(
            config.on_limit_for(&config.backends["codex"]),
            Some(OnLimit::Continue)
        );
        let config = load_text("[backends.claude]\non_limit = \"resume\"\n").unwrap();
        assert_eq!(
            config.on_limit_for(&config.backends["claude"]),
            Some(OnLimit::Resume)
        );
        assert_eq!(config.on_limit_for(&config.backends["gemini"]), None);
    }

    #[test]
    fn a_bad_on_limit_names_the_file_line_key_and_the_choices() {
        let err = load_text("hedge_ms = 1\non_limit = \"contine\"\n").unwrap_err();
        let text = format!("{err:#}");
        assert!(
            text.contains("config.toml:2: on_limit: expected one of \"ask\", \"continue\", \"resume\", \"stop\" (found \"contine\") — did you mean \"continue\"?"),
            "{text}"
        );
        let err = load_text("[backends.codex]\n\non_limit = 1\n").unwrap_err();
        let text = format!("{err:#}");
        assert!(
            text.contains("config.toml:3: backends.codex.on_limit: expected"),
            "{text}"
        );
    }

    #[test]
    fn an_unknown_key_is_set_aside_with_a_warning_naming_its_line() {
        let config = load_text("fastfail_seconds = 3\n\n[backends.claude]\nmodles = {}\n").unwrap();
        assert_eq!(config.fastfail, Duration::from_secs(3));
        let [warning] = config.warnings.as_slice() else {
            panic!("{:?}", config.warnings)
        };
        assert!(
            warning.contains("unknown key \"backends.claude.modles\" in ")
                && warning
                    .contains("config.toml:4 — did you mean backends.claude.models? (ignored)"),
            "{warning}"
        );
    }

    #[test]
    fn a_misspelt_builtin_backend_is_set_aside_not_taken_for_a_new_one() {
        let config = load_text("[backends.claud]\nmodel_flag = \"-m\"\n").unwrap();
        assert!(!config.backends.contains_key("claud"));
        assert!(
            config.warnings[0].contains("did you mean backends.claude?"),
            "{:?}",
            config.warnings
        );
        let err = load_text("[backends.mine]\nmodel_flag = \"-m\"\n").unwrap_err();
        assert!(
            format!("{err:#}").contains("backends.mine: a new backend needs `command`"),
            "{err:#}"
        );
        let err = load_text("[[rungs]]\nbackend = \"geminy\"\n").unwrap_err();
        assert!(
            format!("{err:#}").contains("unknown backend \"geminy\" — did you mean gemini?"),
            "{err:#}"
        );
    }

    #[test]
    fn errors_name_the_file_line_and_key() {
        let err = load_text("fastfail_seconds = 3\n\n[backends.codex]\nprobe_timeout_seconds = 1\n[backends.codex.probe]\nkind = \"anthropc\"\n").unwrap_err();
        let text = format!("{err:#}");
        assert!(
            text.contains(
                "config.toml:6: backends.codex.probe.kind: expected one of \"anthropic\""
            ),
            "{text}"
        );
        assert!(text.contains("did you mean \"anthropic\"?"), "{text}");

        let err = load_text("[[rungs]]\nbackend = \"claude\"\n\n[[rungs]]\nbackend = \"nope\"\n")
            .unwrap_err();
        let text = format!("{err:#}");
        assert!(
            text.contains("config.toml:5: rungs[2].backend: unknown backend \"nope\""),
            "{text}"
        );

        let err = load_text("[backends.claude]\nmodels = { opus = \"\" }\n").unwrap_err();
        assert!(
            format!("{err:#}").contains("config.toml:2: backends.claude.models.opus"),
            "{err:#}"
        );
    }

    #[test]
    fn every_key_holding_a_secret_written_in_the_file_is_named() {
        let config = load_text(
            r#"
[backends.router]
command = "codex"
env = { ROUTER_API_KEY = "LITERALenvKEY0123456789", ROUTER_TOKEN = "${ROUTER_TOKEN_VAR:-x}" }
probe = { kind = "openai", url = "https://router.example/v1", key = "LITERALprobeKEY01234" }

[store]
kind = "redis"
url = "redis://team:LITERALstorePASS42@127.0.0.1:6379/0"

[alerts.telegram]
bot_token = "7012345678:AAHliteralTELEGRAMtoken0123456789"
chat_id = "42"

[alerts.webhook]
url = "https://hooks.example/services/T000/B000/LITERALhookPATH0123"
"#,
        )
        .unwrap();
        assert_eq!(
            config.secrets_in_file,
            [
                "backends.router.env.ROUTER_API_KEY",
                "backends.router.probe.key",
                "store.url",
                "alerts.telegram.bot_token",
                "alerts.webhook.url",
            ]
        );
        let variables = load_text(
            "[store]\nkind = \"redis\"\nurl = \"redis://team:${STORE_PASS_VAR:-x}@h:6379\"\n\
             [alerts.telegram]\nbot_token_cmd = \"pass show bot\"\nchat_id = \"42\"\n",
        )
        .unwrap();
        assert!(variables.secrets_in_file.is_empty(), "{variables:?}");
    }

    /// `builtin.toml` read as the built-in table, the way the table was once loaded: what the
    /// compiled-in table is tested against.
    fn parse_builtin_reference(text: &str) -> anyhow::Result<Config> {
        let mut config = defaults(BTreeMap::new(), Vec::new());
        let file: FileConfig = toml::from_str(text)?;
        let source = Source {
            path: Path::new("<built-in>"),
            text,
        };
        merge(&mut config, file, &source, true)?;
        Ok(config)
    }

    /// The documented table, parsed exactly as a user's file is: what the compiled-in
    /// table must equal, key by key.
    #[test]
    fn the_compiled_in_table_is_the_documented_one() {
        let documented =
            parse_builtin_reference(include_str!("builtin.toml")).expect("builtin.toml parses");
        let compiled = builtin::backends();
        assert_eq!(
            compiled.keys().collect::<Vec<_>>(),
            documented.backends.keys().collect::<Vec<_>>()
        );
        for (name, backend) in &compiled {
            assert_eq!(backend, &documented.backends[name], "backend {name}");
        }
        assert_eq!(builtin::rungs(), documented.rungs);
        assert!(documented.rungs_are_builtin);
    }
}
