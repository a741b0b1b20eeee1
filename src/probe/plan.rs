//! From a backend's probe settings to a concrete call: the same base URL, credential and
//! model the launched CLI will use. Unset `url`/`key` mean "what the CLI itself uses".

use std::path::Path;
use std::time::Duration;

use super::{Call, ProbePlan};
use crate::backend::{Account, Api, AuthScheme, Endpoint};
pub use crate::backend::{ChildEnv, PlanError};
use crate::config::{Auth, Backend, ProbeKind};
use crate::error_class::ErrorClass;
use crate::state::meter::CallInfo;
use crate::state::target::Target;

/// Plans the probe of one rung: the call goes where the launched CLI goes, with the
/// credential it sends ([`crate::backend::resolve`]).
pub fn plan(
    backend: &Backend,
    model: Option<&str>,
    run_model: Option<&str>,
    binary: &Path,
    child: &ChildEnv,
    account: Option<Account>,
    timeout: Duration,
) -> Result<ProbePlan, PlanError> {
    let def = &backend.probe;
    let need_model = || {
        model.ok_or_else(|| PlanError {
            class: ErrorClass::Misconfigured,
            reason: format!(
                "no model to probe: the CLI's settings name none; set probe_model on the rung or backends.{}.default_model",
                backend.name
            ),
        })
    };

    let (call, source) = match def.kind {
        ProbeKind::None => (Call::None, format!("backend:{}", backend.name)),
        ProbeKind::Command => command_call(backend, child, run_model, binary)?,
        ProbeKind::Anthropic | ProbeKind::Openai | ProbeKind::Gemini => {
            need_model()?;
            let endpoint = crate::backend::resolve(backend, account, child)?;
            let source = endpoint.source.clone();
            (http_call(endpoint), source)
        }
    };
    register_secrets(&call);
    let source = match account {
        Some(account) => Target::account_source(account.name),
        None => source,
    };
    let target = Target {
        kind: def.kind.as_str().to_string(),
        endpoint: endpoint(&call),
        model: model.map(str::to_string),
        source,
    }
    .to_string();
    let info = CallInfo {
        rung: None,
        backend: Some(backend.name.clone()),
        model: model.map(str::to_string),
        account: account.map(|account| account.name.to_string()),
        upstream: endpoint(&call),
        role: "probe",
    };
    Ok(ProbePlan {
        target,
        call,
        model: model.map(str::to_string),
        timeout,
        info,
    })
}

/// The probe's request on the endpoint the CLI uses.
fn http_call(endpoint: Endpoint) -> Call {
    let Endpoint {
        api,
        base,
        credential,
        ..
    } = endpoint;
    match (api, credential) {
        (Api::Anthropic, Some(credential)) => Call::Anthropic {
            base,
            oauth: credential.auth == AuthScheme::OAuth,
            auth: match credential.auth {
                AuthScheme::XApiKey | AuthScheme::GoogApiKey => Auth::XApiKey,
                AuthScheme::Bearer | AuthScheme::OAuth => Auth::Bearer,
            },
            key: credential.value,
        },
        // No credential to call with: only whether the API host answers at all.
        (Api::Anthropic, None) => Call::Reach { base },
        (Api::OpenAi(api), credential) => Call::OpenAi {
            base,
            key: credential.map(|credential| credential.value),
            api,
        },
        (Api::Gemini, credential) => Call::Gemini {
            base,
            key: credential
                .map(|credential| credential.value)
                .unwrap_or_default(),
        },
    }
}

fn command_call(
    backend: &Backend,
    env: &ChildEnv,
    run_model: Option<&str>,
    binary: &Path,
) -> Result<(Call, String), PlanError> {
    let argv = match &backend.probe.argv {
        Some(argv) => argv
            .iter()
            .map(|arg| env.expand(arg, false))
            .collect::<Result<Vec<_>, _>>()?,
        None => {
            let mut argv = vec![binary.to_string_lossy().into_owned()];
            if let (Some(flag), Some(model)) = (&backend.model_flag, run_model) {
                argv.extend([flag.clone(), model.to_string()]);
            }
            argv.extend(["-p".to_string(), "hi".to_string()]);
            argv
        }
    };
    if argv.is_empty() {
        return Err(PlanError {
            class: ErrorClass::Misconfigured,
            reason: format!("backends.{}.probe.argv is empty", backend.name),
        });
    }
    let source = format!("backend:{}", backend.name);
    let call = Call::Command {
        argv,
        env: env.set.to_vec(),
        env_remove: env.removed.to_vec(),
    };
    Ok((call, source))
}

fn endpoint(call: &Call) -> String {
    match call {
        Call::Anthropic { base, .. }
        | Call::Reach { base }
        | Call::OpenAi { base, .. }
        | Call::Gemini { base, .. } => base.trim_end_matches('/').to_string(),
        Call::Command { argv, .. } => argv.first().cloned().unwrap_or_default(),
        Call::None => "-".into(),
    }
}

fn register_secrets(call: &Call) {
    match call {
        Call::Anthropic { key, .. }
        | Call::Gemini { key, .. }
        | Call::OpenAi { key: Some(key), .. } => {
            crate::redact::register(key);
        }
        Call::Command { env, .. } => {
            for (name, value) in env {
                if crate::redact::looks_secret(name) {
                    crate::redact::register(value);
                }
            }
        }
        _ => {}
    }
}
