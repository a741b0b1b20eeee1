//! Probes: one real call that proves a rung works now (DESIGN.md §3). A model list is never
//! liveness; a 200 that is not the API's own answer is a failure.

mod classify;
mod command;
mod http;
pub mod login;
mod plan;
mod usage;

use std::time::Duration;

pub use classify::{QUOTA_WORDS, classify_output, classify_status, clears_at, snippet};
pub use http::host;
pub use plan::{PlanError, plan};
pub use usage::tokens as usage_tokens;

use crate::config::{Auth, OpenAiApi};
use crate::error_class::ErrorClass;
use crate::state::meter::{CallInfo, Meter};

/// Everything a probe needs, resolved: no variables, no aliases left.
#[derive(Debug, Clone)]
pub struct ProbePlan {
    /// The health key: endpoint × model × credential source (never the credential).
    pub target: String,
    pub call: Call,
    pub model: Option<String>,
    pub timeout: Duration,
    /// The ledger's columns for this probe's calls.
    pub info: CallInfo,
    /// The subscription login the rung runs on, when it does: never probed with a prompt.
    pub login: Option<login::LoginRung>,
    /// The API, base and credential the rung's CLI will use, resolved once here
    /// (`backend::resolve`) for the launch floor to read (the login windows ask there);
    /// `None` when it cannot be resolved.
    pub endpoint: Option<crate::backend::Endpoint>,
}

impl ProbePlan {
    /// Why a rung that is not probed runs anyway, as `--status` says it.
    pub fn unprobed_reason(&self) -> String {
        match &self.login {
            Some(login) => {
                let now = jiff::Timestamp::now();
                login.describe(&login.windows(&crate::paths::state_dir(), now), now)
            }
            None => "not probed (probe kind none): the fast-fail net guards the launch".into(),
        }
    }
}

#[derive(Debug, Clone)]
pub enum Call {
    Anthropic {
        base: String,
        key: String,
        auth: Auth,
        oauth: bool,
    },
    /// No credential to call with: only whether the API host answers at all.
    Reach {
        base: String,
    },
    OpenAi {
        base: String,
        key: Option<String>,
        api: OpenAiApi,
    },
    Gemini {
        base: String,
        key: String,
    },
    Command {
        argv: Vec<String>,
        env: Vec<(String, String)>,
        env_remove: Vec<String>,
    },
    /// `probe = { kind = "none" }`, or a subscription login: unprobed; the fast-fail net
    /// alone guards the launch.
    None,
    /// A CLI asked about its own quota with no prompt and no model call (Antigravity's
    /// `agy --print /usage`), by a judge the launch floor supplies (it reads the CLI's
    /// answer with `login::`).
    SelfReport {
        binary: std::path::PathBuf,
        /// What the rung removes from the CLI's environment (other vendors' keys).
        env_remove: Vec<String>,
        login_key: String,
        judge: fn(&std::path::Path, &[String], &str, Duration) -> Outcome,
    },
}

pub use crate::state::health::Outcome;

/// Runs the probe through the meter (each call reserved against the budget and written to
/// the ledger). Blocking; never longer than the plan's timeout (plus process teardown).
pub fn run(plan: &ProbePlan, meter: &Meter) -> Outcome {
    let started = std::time::Instant::now();
    let mut outcome = match &plan.call {
        Call::Command {
            argv,
            env,
            env_remove,
        } => command::run(argv, env, env_remove, plan.timeout, meter, &plan.info),
        Call::None => Outcome {
            class: ErrorClass::Ok,
            reason: plan.unprobed_reason(),
            latency: Duration::ZERO,
            clears_at: None,
        },
        Call::SelfReport {
            binary,
            env_remove,
            login_key,
            judge,
        } => judge(binary, env_remove, login_key, plan.timeout),
        call => http::run(call, plan.model.as_deref(), plan.timeout, meter, &plan.info),
    };
    outcome.reason = crate::redact::redact(&outcome.reason);
    if outcome.latency.is_zero() {
        outcome.latency = started.elapsed();
    }
    outcome
}

/// Runs a probe and records what it found: the target's health, and the health of the
/// account whose credential it used. Probes call; health only records.
pub fn run_and_record(
    store: &crate::state::health::Store,
    plan: &ProbePlan,
    meter: &Meter,
    policy: &crate::state::health::Policy,
) -> Outcome {
    let outcome = run(plan, meter);
    store.record(&plan.target, &outcome, policy);
    if let Some(account) = &plan.info.account {
        crate::state::account_health::after_probe(
            store.state_dir(),
            account,
            outcome.class,
            &outcome.reason,
        );
    }
    outcome
}
