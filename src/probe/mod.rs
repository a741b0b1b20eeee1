//! Probes: one real call that proves a rung works now (DESIGN.md §3). A model list is never
//! liveness; a 200 that is not the API's own answer is a failure.

mod call;
mod classify;
mod command;
mod http;
pub mod login;
mod plan;
mod usage;

use std::time::Duration;

pub use call::{Call, OwnQuota, ProbePlan};
pub use classify::{QUOTA_WORDS, classify_output, classify_status, clears_at, snippet};
pub use http::host;
pub use plan::{PlanError, plan};
pub use usage::tokens as usage_tokens;

use crate::error_class::ErrorClass;
use crate::state::meter::Meter;

pub use crate::state::health::Outcome;

/// Runs the probe through the meter (each call reserved against the budget and written to
/// the ledger). Blocking; never longer than the plan's timeout (plus process teardown).
pub fn run(plan: &ProbePlan, meter: &Meter) -> Outcome {
    let started = std::time::Instant::now();
    let mut outcome = match &plan.call {
        Call::Command {
            family,
            argv,
            env,
            env_remove,
        } => command::run(
            *family,
            argv,
            env,
            env_remove,
            plan.timeout,
            meter,
            &plan.info,
        ),
        Call::None => Outcome {
            class: ErrorClass::Ok,
            reason: plan.unprobed_reason(),
            latency: Duration::ZERO,
            clears_at: None,
        },
        Call::SelfReport { asked, judge } => judge(asked, plan.timeout),
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
