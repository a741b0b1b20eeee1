//! From a backend's probe settings to a concrete call: the same base URL, credential and
//! model the launched CLI will use. Unset `url`/`key` mean "what the CLI itself uses".

use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

use super::login;
use super::{Call, ProbePlan};
use crate::adapter::{Env, Family};
pub use crate::backend::PlanError;
use crate::backend::{Account, Api, AuthScheme, Endpoint};
use crate::config::{Auth, Backend, ProbeKind};
use crate::error_class::ErrorClass;
use crate::state::meter::CallInfo;
use crate::state::target::Target;

/// Plans the probe of one rung: the call goes where the launched CLI goes, with the
/// credential it sends ([`crate::backend::resolve`]). `read_store` reads a CLI's own login
/// store (the launch floor's `login::` readers): a rung on a subscription login is planned
/// unprobed.
#[allow(clippy::too_many_arguments)] // each is its own fact about the rung; none derives another
pub fn plan(
    backend: &Backend,
    model: Option<&str>,
    run_model: Option<&str>,
    binary: &Path,
    child: &Env,
    account: Option<Account>,
    timeout: Duration,
    read_store: &dyn Fn(Family, &Env) -> login::Store,
) -> Result<ProbePlan, PlanError> {
    // A CLI with nothing to run on is not set up here, read from its own files: never
    // started, never counted, and no option for a launch either.
    if let Some(reason) = backend.family.not_set_up(child) {
        return Err(PlanError {
            class: ErrorClass::NotSetUp,
            reason,
        });
    }
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

    let mut login = None;
    let mut resolved = None;
    let (call, source) = match def.kind {
        ProbeKind::None => (Call::None, format!("backend:{}", backend.name)),
        // Antigravity is never sent a prompt as a probe, and its exit code says nothing
        // about its quota: it is asked `/usage` where it can answer that without a model.
        // The launch floor asks agy itself (`Call::SelfReport`) where its version allows.
        ProbeKind::Command if def.argv.is_none() && backend.family.reports_own_quota() => {
            login = login::of_endpoint(&own_login_only(backend.family), None, child, read_store)
                .ok()
                .flatten();
            (Call::None, format!("backend:{}", backend.name))
        }
        ProbeKind::Command => command_call(backend, child, run_model, binary)?,
        ProbeKind::Anthropic | ProbeKind::Openai | ProbeKind::Gemini => {
            let endpoint = crate::backend::resolve(backend, account, child)?;
            resolved = Some(endpoint.clone());
            let source = endpoint.source.clone();
            match login::of_endpoint(&endpoint, account.map(|a| a.name), child, read_store) {
                // A subscription login needs no model to judge: it is not probed.
                Ok(Some(found)) => {
                    login = Some(found);
                    (Call::None, source)
                }
                Ok(None) => {
                    need_model()?;
                    (http_call(endpoint), source)
                }
                Err(store) => {
                    let endpoint = without_login(endpoint, store)?;
                    need_model()?;
                    let source = endpoint.source.clone();
                    (http_call(endpoint), source)
                }
            }
        }
    };
    // A CLI probed by running it still talks to its vendor's API.
    let endpoint_used = match resolved {
        Some(endpoint) => Some(endpoint),
        None => crate::backend::resolve(backend, account, child).ok(),
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
        login,
        endpoint: endpoint_used,
    })
}

/// The endpoint of a CLI that reports its own quota (Antigravity): its own login, nothing
/// else (it reads no key agent knows of).
fn own_login_only(family: Family) -> Endpoint {
    Endpoint {
        api: Api::Gemini,
        base: String::new(),
        credential: None,
        source: format!("login:{}", family.name()),
        own_login: Some(family),
    }
}

/// A CLI that falls back to its own login store, when the store holds no subscription
/// login: a key it keeps there is used like any key (`codex login --api-key`); else Claude
/// Code is known by reachability only, and Codex and Gemini CLI, with no login and no key,
/// are not set up here — neither alive nor dead, and the reason says how to set them up.
fn without_login(endpoint: Endpoint, store: login::Store) -> Result<Endpoint, PlanError> {
    if let login::Store::Key(credential) = store {
        crate::redact::register(&credential.value);
        return Ok(Endpoint {
            source: credential.source.clone(),
            credential: Some(credential),
            own_login: None,
            ..endpoint
        });
    }
    // Without a key only the Anthropic API is worth asking (whether its host answers).
    let needs_key = !matches!(endpoint.api, Api::Anthropic);
    match endpoint
        .own_login
        .map(|family| (family, family.credential_vars()))
    {
        Some((family, [var, ..])) if needs_key => Err(PlanError::not_set_up(family, var)),
        _ => Ok(Endpoint {
            own_login: None,
            ..endpoint
        }),
    }
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
    env: &Env,
    run_model: Option<&str>,
    binary: &Path,
) -> Result<(Call, String), PlanError> {
    let argv = match &backend.probe.argv {
        Some(argv) => argv
            .iter()
            .map(|arg| crate::backend::endpoint::expand(env, arg, false))
            .collect::<Result<Vec<_>, _>>()?,
        None => {
            // A one-word headless prompt, `-p hi` in Claude Code's words, said in the CLI's
            // own by its dialect as a launch would say it: `codex exec` (its `-p` is a
            // profile), `opencode run` (its `-p` is a password) — with the CLI's words that
            // keep it to one model call (opencode's session title).
            let one_call = backend
                .family
                .self_check()
                .map_or(&[][..], |check| check.one_call_args);
            let words: Vec<OsString> = ["-p", "hi"]
                .iter()
                .chain(one_call)
                .map(OsString::from)
                .collect();
            let said = backend
                .in_own_words(run_model, &words)
                .map_err(|refusal| PlanError {
                    class: ErrorClass::Misconfigured,
                    reason: format!("backends.{}: {refusal}", backend.name),
                })?;
            std::iter::once(binary.to_string_lossy().into_owned())
                .chain(
                    said.argv
                        .iter()
                        .map(|word| word.to_string_lossy().into_owned()),
                )
                .collect()
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
        family: backend.family,
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
        Call::SelfReport { asked, .. } => asked.binary.to_string_lossy().into_owned(),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ProbeDef;

    /// The argv a `probe = { kind = "command" }` without `argv` runs for the built-in
    /// backend `name`, with the rung's run model `model`.
    fn command_probe(name: &str, model: Option<&str>) -> Vec<String> {
        let mut backend = crate::config::builtin::backends()[name].clone();
        backend.probe = ProbeDef {
            kind: ProbeKind::Command,
            ..ProbeDef::default()
        };
        let binary = Path::new("/opt/bin").join(&backend.command);
        match command_call(&backend, &Env::only(&[]), model, &binary) {
            Ok((Call::Command { argv, .. }, _)) => argv,
            other => panic!("{name}: not a command call: {other:?}"),
        }
    }

    #[test]
    fn a_command_probe_without_argv_runs_each_clis_own_headless_form() {
        // Codex's `-p` is `--profile`: a probe of `-p hi` ran profile "hi".
        let codex = command_probe("codex", Some("gpt-5.5"));
        assert_eq!(codex[0], "/opt/bin/codex");
        assert_eq!(codex[1], "exec", "{codex:?}");
        assert!(!codex.iter().any(|w| w == "-p"), "{codex:?}");
        assert_eq!(codex.last().map(String::as_str), Some("hi"), "{codex:?}");
        assert!(
            codex
                .windows(2)
                .any(|w| w == ["--model", "gpt-5.5"] || w == ["-m", "gpt-5.5"]),
            "{codex:?}"
        );
        // opencode's `-p` is its password.
        let opencode = command_probe("opencode", None);
        assert_eq!(opencode[1], "run", "{opencode:?}");
        assert!(!opencode.iter().any(|w| w == "-p"), "{opencode:?}");
        assert_eq!(
            opencode.last().map(String::as_str),
            Some("hi"),
            "{opencode:?}"
        );
        // Gemini CLI's headless prompt is the value of `--prompt`.
        let gemini = command_probe("gemini", None);
        assert!(gemini.iter().any(|w| w == "--prompt=hi"), "{gemini:?}");
        // Claude Code's own words, and a CLI with no dialect, stay `-p hi`.
        assert_eq!(
            command_probe("claude", Some("claude-opus-5")),
            ["/opt/bin/claude", "--model", "claude-opus-5", "-p", "hi"]
        );
        assert_eq!(command_probe("agy", None), ["/opt/bin/agy", "-p", "hi"]);
    }

    #[test]
    fn a_backend_that_translates_nothing_probes_with_claude_codes_words() {
        let mut backend = crate::config::builtin::backends()["codex"].clone();
        backend.translate = false;
        backend.probe.kind = ProbeKind::Command;
        let Ok((Call::Command { argv, .. }, _)) =
            command_call(&backend, &Env::only(&[]), Some("m"), Path::new("codex"))
        else {
            panic!("not a command call");
        };
        assert_eq!(argv, ["codex", "--model", "m", "-p", "hi"]);
    }
}
