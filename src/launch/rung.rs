//! A rung made concrete: backend, models with aliases resolved, the binary found, the
//! launch environment expanded and the probe planned — or the local reason it cannot run.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::accounts::AccountDef;
use crate::adapter::dialect::{self, Refusal, Translation};
use crate::backend::cli_settings::{Family, bare_model};
use crate::backend::discover;
use crate::config::{Backend, Config, ProbeKind, RungDef};
use crate::error_class::ErrorClass;
use crate::expand::expand;
use crate::probe::{self, PlanError, ProbePlan};

#[derive(Debug, Clone)]
pub struct Rung<'a> {
    /// 1-based position in the table.
    pub index: usize,
    pub backend: &'a Backend,
    pub probe_model: Option<String>,
    /// `None`: pass no model flag, so the CLI keeps its own default.
    pub run_model: Option<String>,
    /// The account this row uses, when its backend has a pool.
    pub account: Option<String>,
    pub state: Result<Ready, Unusable>,
}

/// Everything needed to probe and launch.
#[derive(Debug, Clone)]
pub struct Ready {
    pub binary: PathBuf,
    pub env: Vec<(String, String)>,
    /// Variables removed from the CLI's environment: the backend's `env_remove`, and with
    /// an account every other credential variable, so no other account's secret leaks in.
    pub env_remove: Vec<String>,
    pub plan: ProbePlan,
    /// The subscription login it runs on and where its CLI keeps its records, named by its
    /// adapter from `env` once here; parking, the login windows and the statusline read it.
    pub login: Option<super::parking::RungLogin>,
}

/// A rung that cannot run, known without a call.
#[derive(Debug, Clone)]
pub struct Unusable {
    pub class: ErrorClass,
    pub reason: String,
    /// A built-in rung whose CLI is not installed: neither alive nor dead.
    pub skip: bool,
}

impl From<PlanError> for Unusable {
    fn from(err: PlanError) -> Unusable {
        Unusable {
            class: err.class,
            reason: err.reason,
            skip: false,
        }
    }
}

impl Rung<'_> {
    /// "Claude Code (claude-opus-5)", as the notices name it.
    pub fn label(&self) -> String {
        let model = self.probe_model.as_deref().or(self.run_model.as_deref());
        match (model, &self.account) {
            (Some(model), Some(account)) => {
                format!("{} ({model}, account {account})", self.backend.label)
            }
            (Some(model), None) => format!("{} ({model})", self.backend.label),
            (None, Some(account)) => format!("{} (account {account})", self.backend.label),
            (None, None) => self.backend.label.clone(),
        }
    }

    /// "claude / claude-opus-5", as tables name it.
    pub fn short_name(&self) -> String {
        let name = match self.probe_model.as_deref().or(self.run_model.as_deref()) {
            Some(model) => format!("{} / {model}", self.backend.name),
            None => self.backend.name.clone(),
        };
        match &self.account {
            Some(account) => format!("{name} [{account}]"),
            None => name,
        }
    }

    /// The words the launch gives its binary: the user's (Claude Code's command line) in
    /// this rung's CLI's dialect, with the rung's model — or the flag it cannot take.
    pub fn translate(&self, args: &[OsString]) -> Result<Translation, Refusal> {
        translate_for(self.backend, self.run_model.as_deref(), args)
    }
}

/// The user's words for `backend`'s CLI, with `model` (DESIGN.md §16 "Dialects"):
/// translated unless the backend says `translate = false`.
pub fn translate_for(
    backend: &Backend,
    model: Option<&str>,
    args: &[OsString],
) -> Result<Translation, Refusal> {
    let family = Family::of_backend(&backend.name, &backend.command);
    let dialect = if backend.translate {
        dialect::of(family)
    } else {
        None
    };
    dialect::translate(
        dialect,
        &dialect::Request {
            args,
            model,
            model_flag: backend.model_flag.as_deref(),
            vendor: &backend.vendor,
        },
    )
}

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

/// Makes rung `def` (1-based `index`) concrete.
pub fn resolve<'a>(config: &'a Config, index: usize, def: &RungDef) -> Rung<'a> {
    let backend = &config.backends[&def.backend];
    let account = def
        .account
        .as_ref()
        .and_then(|name| config.accounts.iter().find(|a| &a.name == name));
    let state_dir = crate::paths::state_dir();
    let context = Context {
        from_builtin_table: config.rungs_are_builtin,
        timeout: config.probe_timeout,
        account,
        accounts: &config.accounts,
        pricing: Some(&config.pricing),
        state_dir: Some(&state_dir),
    };
    resolve_with(backend, index, &def.probe_model, &def.run_model, &context)
}

pub fn resolve_with<'a>(
    backend: &'a Backend,
    index: usize,
    probe_model: &str,
    run_model: &str,
    context: &Context,
) -> Rung<'a> {
    let family = Family::of_backend(&backend.name, &backend.command);
    let mut rung = Rung {
        index,
        backend,
        probe_model: None,
        run_model: None,
        account: context.account.map(|a| a.name.clone()),
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
                            .then(|| crate::login::last_model::last_model(family, &configured_env))
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

fn ready(rung: &Rung, context: &Context) -> Result<Ready, Unusable> {
    let backend = rung.backend;
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
    let mut env = launch_env(backend)?;
    let mut env_remove = backend.env_remove.clone();
    let mut account_var = None;
    if let Some(account) = context.account {
        if let Some(reason) = context.state_dir.and_then(|dir| {
            crate::state::account_health::skip_reason(
                dir,
                &account.name,
                crate::state::health::now_ms(),
            )
        }) {
            return Err(Unusable {
                class: ErrorClass::Auth,
                reason,
                skip: false,
            });
        }
        if let (Some(dir), Some(pricing)) = (context.state_dir, context.pricing)
            && let Some(reason) =
                crate::state::account_health::budget_exhausted(dir, pricing, account)
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
        let var = crate::accounts::secret_var(account, backend);
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
        account_var = Some(var);
    }
    let account = context
        .account
        .zip(account_var.as_deref())
        .map(|(account, var)| crate::backend::Account {
            name: &account.name,
            var,
        });
    let mut plan = probe::plan(
        backend,
        rung.probe_model.as_deref(),
        rung.run_model.as_deref(),
        &binary,
        &probe::ChildEnv {
            set: &env,
            removed: &env_remove,
        },
        account,
        context.timeout,
        &super::own_login::read,
    )?;
    plan.info.rung = Some(rung.index);
    // Antigravity is judged by what it says of its own quota, never by a prompt.
    if let (probe::Call::None, Some(login)) = (&plan.call, &plan.login)
        && login.cli == crate::login::Cli::Agy.as_str()
    {
        plan.call = probe::Call::SelfReport {
            binary: binary.clone(),
            login_key: login.key.clone(),
            judge: super::agy_usage::run,
        };
    }
    let family = Family::of_backend(&backend.name, &backend.command);
    let login = super::parking::login_in(
        family,
        &crate::adapter::Env::child(&env, &env_remove),
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
