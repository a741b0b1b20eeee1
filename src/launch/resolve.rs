//! Resolving a rung of the table (DESIGN.md §4, §18): its backend's binary found, its models
//! with aliases resolved, its launch environment expanded, its account or pool of logins
//! chosen and its probe planned — into a [`Rung`], or the local reason it cannot run.

use std::path::Path;
use std::time::Duration;

use super::rung::{LoginPool, Ready, Rung, Unusable};
use crate::accounts::AccountDef;
use crate::adapter::Family;
use crate::adapter::claude::bare_model;
use crate::backend::discover;
use crate::config::{Backend, Config, ProbeKind, RungDef};
use crate::error_class::ErrorClass;
use crate::expand::expand;
use crate::probe::login::LoginRung;
use crate::probe::{self, PlanError, ProbePlan};

/// Resolves an alias through the backend's `models`; anything else is a full id, verbatim.
pub fn resolve_model(backend: &Backend, name: &str) -> Result<String, PlanError> {
    match backend.models.get(name) {
        Some(target) => expand(target).map_err(|var| PlanError::missing(&var, false)),
        None => Ok(name.to_string()),
    }
}

/// What resolving a rung needs from around it.
pub struct Context<'a> {
    pub from_builtin_table: bool,
    pub timeout: Duration,
    /// The row's account, and every account (their variables are kept from the CLI).
    pub account: Option<&'a AccountDef>,
    pub accounts: &'a [AccountDef],
    pub pricing: Option<&'a crate::config::pricing::Pricing>,
    pub state_dir: Option<&'a Path>,
}

/// Every rung of the table, made concrete, in order.
pub fn all(config: &Config) -> Vec<Rung<'_>> {
    config
        .rungs
        .iter()
        .enumerate()
        .map(|(i, def)| resolve(config, i + 1, def))
        .collect()
}

/// Makes rung `def` (1-based `index`) concrete. A row of a pool of logins runs on the
/// first of them, in rotation order, whose windows leave it open.
pub fn resolve<'a>(config: &'a Config, index: usize, def: &RungDef) -> Rung<'a> {
    let state_dir = crate::paths::state_dir();
    if def.logins.is_empty() {
        return resolve_on(config, index, def, def.account.as_deref(), &state_dir);
    }
    resolve_pool(config, index, def, &state_dir)
}

/// Rung `def` of a pool of logins, on the login whose key is `login` (`CLI:identity`): a
/// session being resumed lives in that login's home, so its rung runs on it and on no other
/// of the pool. `None` when no login of the pool has that key (then the pool chooses).
pub fn resolve_on_login<'a>(
    config: &'a Config,
    index: usize,
    def: &RungDef,
    login: &str,
) -> Option<Rung<'a>> {
    let backend = config.backends.get(&def.backend)?;
    let name = def.logins.iter().find(|name| {
        config
            .accounts
            .iter()
            .find(|account| &account.name == *name)
            .and_then(|account| crate::accounts::login_key(backend, account))
            .as_deref()
            == Some(login)
    })?;
    let state_dir = crate::paths::state_dir();
    let mut rung = resolve_on(config, index, def, Some(name), &state_dir);
    rung.pool = Some(LoginPool {
        rotation: crate::accounts::rotation_of(
            backend,
            &config
                .accounts
                .iter()
                .filter(|a| a.backend == backend.name)
                .collect::<Vec<_>>(),
        ),
        figures: None,
        passed: Vec::new(),
        all_parked: false,
    });
    Some(rung)
}

/// The pool's rung: each login in turn, passed over while its windows park this rung (the
/// parking rule, `parking::Parking::check`, for this rung's model) or it cannot run; with
/// every login parked, the one back soonest.
fn resolve_pool<'a>(config: &'a Config, index: usize, def: &RungDef, state_dir: &Path) -> Rung<'a> {
    let parking = super::parking::Parking::read_only(state_dir);
    let now = jiff::Timestamp::now();
    let mut passed: Vec<(String, String)> = Vec::new();
    let mut candidates: Vec<(Rung<'a>, Option<jiff::Timestamp>)> = Vec::new();
    let mut chosen = None;
    for name in &def.logins {
        let rung = resolve_on(config, index, def, Some(name), state_dir);
        let held = match &rung.state {
            Err(unusable) => Some((unusable.reason.clone(), None)),
            Ok(_) => match parking.check(config, &rung, now) {
                super::parking::Decision::Go => None,
                super::parking::Decision::Park { window, reason } => {
                    Some((reason, Some(window.resets_at)))
                }
            },
        };
        match held {
            None => {
                chosen = Some(rung);
                break;
            }
            Some((reason, back_at)) => {
                passed.push((name.clone(), reason));
                candidates.push((rung, back_at));
            }
        }
    }
    let all_parked = chosen.is_none();
    let mut rung = chosen.unwrap_or_else(|| {
        // Every login is held: stand on the parked one back soonest (the cascade's notice
        // then names the earliest reset), else the first.
        let at = candidates
            .iter()
            .enumerate()
            .filter_map(|(i, (_, back))| back.map(|back| (i, back)))
            .min_by_key(|(_, back)| *back)
            .map_or(0, |(i, _)| i);
        candidates.swap_remove(at).0
    });
    if all_parked {
        passed.retain(|(name, _)| Some(name) != rung.account.as_ref());
    }
    let backend = rung.backend;
    let pool: Vec<&AccountDef> = config
        .accounts
        .iter()
        .filter(|a| a.backend == backend.name)
        .collect();
    let rotation = crate::accounts::rotation_of(backend, &pool);
    let figures = (rotation == crate::accounts::Rotation::SoonestReset).then(|| {
        let windows = crate::state::windows::Windows::new(state_dir);
        let figures: Vec<crate::accounts::rotation::Figures> = def
            .logins
            .iter()
            .filter_map(|name| pool.iter().find(|a| &a.name == name))
            .map(|account| {
                let known = crate::accounts::login_key(backend, account)
                    .map(|key| windows.known(&key, now))
                    .unwrap_or_default();
                crate::accounts::rotation::Figures::of(&account.name, &known, now)
            })
            .collect();
        crate::accounts::rotation::explain(&figures, rung.account.as_deref().unwrap_or(""))
    });
    rung.pool = Some(LoginPool {
        rotation,
        figures,
        passed,
        all_parked,
    });
    rung
}

/// Rung `def` on `account` (one of its pool's, or its own).
fn resolve_on<'a>(
    config: &'a Config,
    index: usize,
    def: &RungDef,
    account: Option<&str>,
    state_dir: &Path,
) -> Rung<'a> {
    let backend = &config.backends[&def.backend];
    let account = account.and_then(|name| config.accounts.iter().find(|a| a.name == name));
    let context = Context {
        from_builtin_table: config.rungs_are_builtin,
        timeout: config.probe_timeout,
        account,
        accounts: &config.accounts,
        pricing: Some(&config.pricing),
        state_dir: Some(state_dir),
    };
    let mut rung = resolve_with(backend, index, &def.probe_model, &def.run_model, &context);
    if !def.logins.is_empty() {
        // Marked as a pool's row at once: its label says "login".
        rung.pool = Some(LoginPool {
            rotation: crate::accounts::Rotation::SoonestReset,
            figures: None,
            passed: Vec::new(),
            all_parked: false,
        });
    }
    rung
}

pub fn resolve_with<'a>(
    backend: &'a Backend,
    index: usize,
    probe_model: &str,
    run_model: &str,
    context: &Context,
) -> Rung<'a> {
    let family = backend.family;
    let mut rung = Rung {
        index,
        backend,
        probe_model: None,
        run_model: None,
        // An alias of the backend's naming another id is said beside it.
        run_alias: (!run_model.is_empty()
            && backend.models.contains_key(run_model)
            && resolve_model(backend, run_model).is_ok_and(|id| id != run_model))
        .then(|| run_model.to_string()),
        runs_words: std::sync::OnceLock::new(),
        account: context.account.map(|a| a.name.clone()),
        pool: None,
        state: Err(placeholder()),
    };
    // The CLI's settings as the launched CLI finds them: the backend's `env` may move its home.
    let launch_vars = launch_env(backend).unwrap_or_default();
    let configured_env = crate::adapter::Env::child(&launch_vars, &backend.env_remove);
    let models = (|| -> Result<(Option<String>, Option<String>), PlanError> {
        let run = (!run_model.is_empty())
            .then(|| resolve_model(backend, run_model))
            .transpose()?;
        let probe = if probe_model.is_empty() {
            // Probe what runs: the run model, else the CLI's own configured model.
            match &run {
                Some(run) => Some(run.clone()),
                // A CLI whose settings name none runs its own default; the probe asks
                // for the model it last ran, else the backend's default.
                None => family
                    .configured_model(&configured_env)
                    // Only a call needs a model: a command or unprobed rung never walks
                    // the CLI's records for one.
                    .or_else(|| {
                        probe_calls_a_model(backend)
                            .then(|| crate::login::readers::last_model(family, &configured_env))
                            .flatten()
                    })
                    .or_else(|| backend.default_model.clone())
                    .map(|name| resolve_model(backend, bare_model(&name)))
                    .transpose()?,
            }
        } else {
            Some(resolve_model(backend, probe_model)?)
        };
        Ok((probe, run))
    })();
    match models {
        Ok((probe, run)) => {
            rung.probe_model = probe;
            rung.run_model = run;
        }
        Err(err) => {
            rung.state = Err(err.into());
            return rung;
        }
    }
    rung.state = ready(&rung, context);
    rung
}

fn placeholder() -> Unusable {
    Unusable {
        class: ErrorClass::Misconfigured,
        reason: String::new(),
        skip: false,
    }
}

/// What a rung of a backend turned off says on every face.
pub const OFF: &str = "off (enabled = false)";

/// The binary a rung of `backend` runs, when the backend is on, its CLI installed and, for a
/// proxy rung, its proxy named.
fn binary_of(backend: &Backend, context: &Context) -> Result<std::path::PathBuf, Unusable> {
    // Turned off: nothing is looked for, called or run.
    if !backend.enabled {
        return Err(Unusable {
            class: ErrorClass::Disabled,
            reason: OFF.into(),
            skip: true,
        });
    }
    let Some(binary) = discover::find(&backend.command) else {
        return Err(if context.from_builtin_table {
            Unusable {
                class: ErrorClass::BinaryMissing,
                reason: "not installed".into(),
                skip: true,
            }
        } else {
            Unusable {
                class: ErrorClass::BinaryMissing,
                reason: format!(
                    "{} not found on PATH or in the usual install directories",
                    backend.command
                ),
                skip: false,
            }
        });
    };
    if let Some(reason) = no_proxy(backend) {
        return Err(Unusable {
            class: ErrorClass::Misconfigured,
            reason,
            skip: true,
        });
    }
    Ok(binary)
}

/// The environment of a rung that runs on `account` (a key or token, not a login): its
/// secret in the variable its kind needs, every other credential variable of the backend
/// removed; the variable's name. An account dead, over its budget or broken is unusable.
fn account_environment(
    backend: &Backend,
    account: &AccountDef,
    context: &Context,
    env: &mut Vec<(String, String)>,
    env_remove: &mut Vec<String>,
) -> Result<String, Unusable> {
    account_in_health(account, context)?;
    if let (Some(dir), Some(pricing)) = (context.state_dir, context.pricing)
        && let Some(reason) = crate::state::account_health::budget_exhausted(dir, pricing, account)
    {
        return Err(Unusable {
            class: ErrorClass::Quota,
            reason,
            skip: false,
        });
    }
    // A broken account (unreadable or empty secret) is out until the user mends it.
    let secret = account.read_secret().map_err(|err| Unusable {
        class: ErrorClass::CredentialsMissing,
        reason: format!("account {} is broken: {err:#}", account.name),
        skip: false,
    })?;
    let var = crate::accounts::secret_var(
        account,
        backend,
        &crate::adapter::Env::child(env, env_remove),
    );
    for other in crate::accounts::credential_vars(backend, context.accounts) {
        // Removed from what agent adds too (a backend's `env` may set one): the CLI
        // must send this account's credential and no other.
        env.retain(|(name, _)| name != &other || other == var);
        if other != var && !env_remove.contains(&other) {
            env_remove.push(other);
        }
    }
    env.retain(|(name, _)| name != &var);
    env.push((var.clone(), secret));
    Ok(var)
}

fn ready(rung: &Rung, context: &Context) -> Result<Ready, Unusable> {
    let backend = rung.backend;
    let binary = binary_of(backend, context)?;
    let mut env = launch_env(backend)?;
    let mut env_remove = backend.env_remove.clone();
    let mut account_var = None;
    let login_account = context.account.filter(|a| a.is_login());
    if let Some(account) = login_account {
        login_environment(backend, account, context, &mut env, &mut env_remove)?;
    } else if let Some(account) = context.account {
        account_var = Some(account_environment(
            backend,
            account,
            context,
            &mut env,
            &mut env_remove,
        )?);
    }
    withhold_foreign_keys(backend, &env, &mut env_remove);
    let account = context
        .account
        .zip(account_var.as_deref())
        .map(|(account, var)| crate::backend::Account {
            name: &account.name,
            var,
        });
    let planned = probe::plan(
        backend,
        rung.probe_model.as_deref(),
        rung.run_model.as_deref(),
        &binary,
        &crate::adapter::Env::child(&env, &env_remove),
        account,
        context.timeout,
        &super::own_login::read,
    );
    let mut plan = match (planned, login_account) {
        // A login account runs on the login in its directory, or not at all; never probed.
        (Ok(mut plan), Some(account)) if plan.login.is_none() => {
            let family = backend.family;
            let env = crate::adapter::Env::child(&env, &env_remove);
            let found = super::own_login::login_in(family, &env)
                .ok_or_else(|| no_login(backend, account))?;
            plan.call = probe::Call::None;
            plan.login = Some(found);
            plan
        }
        (Err(_), Some(account)) => return Err(no_login(backend, account)),
        (planned, _) => planned?,
    };
    plan.info.rung = Some(rung.index);
    // A CLI that reports its own quota (Antigravity) is judged by what it says of it, never
    // by a prompt.
    if let (probe::Call::None, Some(login)) = (&plan.call, &plan.login)
        && login.family.reports_own_quota()
    {
        plan.call = probe::Call::SelfReport {
            asked: Box::new(probe::OwnQuota {
                family: login.family,
                binary: binary.clone(),
                env: env.clone(),
                env_remove: env_remove.clone(),
                login_key: login.key.clone(),
            }),
            judge: super::own_quota::judge,
        };
    }
    let login = runs_on(
        backend.family,
        &mut plan,
        &env,
        &env_remove,
        context.account,
    );
    Ok(Ready {
        binary,
        env,
        env_remove,
        plan,
        login,
    })
}

/// The login a rung on a CLI of `family` runs on, in its launch environment (`env` over
/// agent's, less `env_remove`), with the pool `account` if any — one [`LoginRung`] per rung,
/// keyed once: the plan's login (given where its CLI records each run), else the one the
/// adapter names by the CLI's home when the store shows none.
fn runs_on(
    family: Family,
    plan: &mut ProbePlan,
    env: &[(String, String)],
    env_remove: &[String],
    account: Option<&AccountDef>,
) -> Option<LoginRung> {
    let child = crate::adapter::Env::child(env, env_remove);
    let records = if crate::login::readers::reads_run_windows(family) {
        family.home(&child)
    } else {
        None
    };
    if let Some(login) = plan.login.as_mut() {
        login.records = records;
        return Some(login.clone());
    }
    // The CLI may call elsewhere than its vendor (a mock, a gateway) and still run on the
    // login in its home: its records name that login's windows all the same.
    let logged_in = || {
        matches!(
            crate::login::readers::own_store(family, &child),
            Some(crate::login::OwnStore::Login(_))
        )
    };
    if records.is_none() || !(family.login_known_by_home() || logged_in()) {
        return None;
    }
    // A `login` account runs on the login in its directory, found or refused above.
    let account = account
        .filter(|a| !a.is_login())
        .map(|account| crate::adapter::Account {
            name: &account.name,
            is_login: account.kind == crate::config::accounts::Kind::Oauth,
        });
    Some(LoginRung {
        family,
        key: family.login_key(&child, account)?,
        origin: "store".to_string(),
        plan: None,
        expires_at: None,
        records,
        refused: crate::login::readers::refused_login(family, &child),
    })
}

/// Other vendors' key variables that agent has, removed from the CLI's environment (DESIGN
/// §23; the adapter knows which the CLI reads), unless the backend's `env` sets one on
/// purpose.
pub fn withhold_foreign_keys(
    backend: &Backend,
    env: &[(String, String)],
    env_remove: &mut Vec<String>,
) {
    let family = backend.family;
    let child = crate::adapter::Env::child(env, env_remove);
    for var in family.foreign_credential_vars(&child) {
        let set_on_purpose = env.iter().any(|(name, _)| name == var);
        if !set_on_purpose
            && std::env::var_os(var).is_some()
            && !env_remove.iter().any(|name| name == var)
        {
            env_remove.push(var.to_string());
        }
    }
}

/// An account its own health says to skip (its key refused, its login out) cannot run.
fn account_in_health(account: &AccountDef, context: &Context) -> Result<(), Unusable> {
    let now = crate::state::health::now_ms();
    match context
        .state_dir
        .and_then(|dir| crate::state::account_health::skip_reason(dir, &account.name, now))
    {
        Some(reason) => Err(Unusable {
            class: ErrorClass::Auth,
            reason,
            skip: false,
        }),
        None => Ok(()),
    }
}

/// A `login` account's environment: its CLI's home variable at its directory (none at all
/// for the CLI's default home, run as typing the CLI would), and every variable that
/// carries a credential — or moves only the login store — removed, so the CLI runs on that
/// login and sends no other. No secret is read: agent never touches the
/// login's token.
fn login_environment(
    backend: &Backend,
    account: &AccountDef,
    context: &Context,
    env: &mut Vec<(String, String)>,
    env_remove: &mut Vec<String>,
) -> Result<(), Unusable> {
    account_in_health(account, context)?;
    let Some(home) = crate::accounts::login_home(backend, account) else {
        return Err(Unusable {
            class: ErrorClass::Misconfigured,
            reason: format!(
                "login {}: agent cannot move {}'s home (a login account is for Claude Code, Codex or Gemini CLI)",
                account.name, backend.label
            ),
            skip: false,
        });
    };
    // The CLI runs the hooks, settings and MCP servers in its home as the user: a home
    // another user can write is never given to it, by a launch or by a check.
    if let Err(err) = crate::ownership::refuse_exposed(
        &home.dir,
        &format!("login {}: its directory", account.name),
    ) {
        return Err(Unusable {
            class: ErrorClass::Misconfigured,
            reason: format!("{err:#}"),
            skip: false,
        });
    }
    let family = backend.family;
    let mut removed = crate::accounts::credential_vars(backend, context.accounts);
    removed.extend(family.store_vars().iter().map(|v| (*v).to_string()));
    for other in removed {
        env.retain(|(name, _)| name != &other);
        if !env_remove.contains(&other) {
            env_remove.push(other);
        }
    }
    home.apply(env, env_remove);
    Ok(())
}

/// A `login` account whose directory holds no login: the command that logs in there.
fn no_login(backend: &Backend, account: &AccountDef) -> Unusable {
    let dir = account.login_dir().unwrap_or_default();
    let home = crate::accounts::login_home(backend, account);
    let how = backend
        .family
        .login_command(home.as_ref().map_or(Some(dir.as_path()), |h| h.moved_dir()))
        .map(|how| format!(" — log in there: {how}"))
        .unwrap_or_default();
    Unusable {
        class: ErrorClass::CredentialsMissing,
        reason: format!("login {}: no login in {}{how}", account.name, dir.display()),
        skip: false,
    }
}

/// The variable naming the user's proxy: a backend that goes through it is no option
/// while it is unset, like a CLI that is not installed — skipped, neither alive nor dead.
pub const PROXY_VAR: &str = "AGENT_PROXY_URL";

/// `no proxy (AGENT_PROXY_URL unset)` when the backend needs the proxy and none is set.
fn no_proxy(backend: &Backend) -> Option<String> {
    // `${AGENT_PROXY_URL:-…}` has a default of its own: only the bare form needs it.
    let needle = format!("${{{PROXY_VAR}}}");
    let uses_proxy = backend.env.values().any(|v| v.contains(&needle))
        || backend
            .probe
            .url
            .as_deref()
            .is_some_and(|u| u.contains(&needle));
    let unset = std::env::var(PROXY_VAR).map_or(true, |v| v.is_empty());
    (uses_proxy && unset).then(|| format!("no proxy ({PROXY_VAR} unset)"))
}

/// Whether the backend's probe is a model call (and so must name a model).
fn probe_calls_a_model(backend: &Backend) -> bool {
    matches!(
        backend.probe.kind,
        ProbeKind::Anthropic | ProbeKind::Openai | ProbeKind::Gemini
    )
}

/// The backend's extra environment, expanded; an unset variable fails the rung by name.
pub fn launch_env(backend: &Backend) -> Result<Vec<(String, String)>, Unusable> {
    crate::backend::endpoint::backend_env(backend).map_err(Unusable::from)
}
