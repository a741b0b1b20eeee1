//! From a backend's probe settings to a concrete call: the same base URL, credential and
//! model the launched CLI will use. Unset `url`/`key` mean "what the CLI itself uses".

use std::path::Path;
use std::time::Duration;

use super::{Call, ProbePlan};
use crate::cli_settings::{Family, codex_config};
use crate::config::{Auth, Backend, OpenAiApi, ProbeKind};
use crate::error_class::ErrorClass;
use crate::expand::{MissingVar, expand_with};
use crate::meter::CallInfo;

const ANTHROPIC_API: &str = "https://api.anthropic.com";
const OPENAI_API: &str = "https://api.openai.com/v1";
const GEMINI_API: &str = "https://generativelanguage.googleapis.com";

/// Why a rung cannot be probed, decided without a call.
#[derive(Debug, Clone)]
pub struct PlanError {
    pub class: ErrorClass,
    pub reason: String,
}

impl PlanError {
    pub fn missing(var: &MissingVar, is_credential: bool) -> PlanError {
        let class = if is_credential || crate::redact::looks_secret(&var.0) {
            ErrorClass::CredentialsMissing
        } else {
            ErrorClass::Misconfigured
        };
        PlanError {
            class,
            reason: var.to_string(),
        }
    }
}

/// The values the launched CLI will see: its own extra environment first, then agent's.
struct Env<'a> {
    child: &'a [(String, String)],
    /// Removed from the CLI's environment: not seen by its probe either.
    removed: &'a [String],
}

impl Env<'_> {
    /// The value as set, empty or not.
    fn raw(&self, name: &str) -> Option<String> {
        if let Some((_, value)) = self.child.iter().find(|(key, _)| key == name) {
            return Some(value.clone());
        }
        if self.removed.iter().any(|removed| removed == name) {
            return None;
        }
        std::env::var(name).ok()
    }

    /// The value when set and not empty.
    fn get(&self, name: &str) -> Option<String> {
        self.raw(name).filter(|value| !value.is_empty())
    }

    fn expand(&self, text: &str, is_credential: bool) -> Result<String, PlanError> {
        // Empty values reach `expand_with` as they are: refusing them is its job.
        expand_with(text, &|name| self.raw(name))
            .map_err(|var| PlanError::missing(&var, is_credential))
    }

    /// A credential variable: its value and where it came from, or the error naming it.
    fn credential(&self, name: &str) -> Result<(String, String), PlanError> {
        self.get(name)
            .map(|value| (value, format!("env:{name}")))
            .ok_or_else(|| PlanError::missing(&MissingVar(name.to_string()), true))
    }
}

/// The launched CLI's environment: what is set on top of agent's, and what is removed.
pub struct ChildEnv<'a> {
    pub set: &'a [(String, String)],
    pub removed: &'a [String],
}

/// Plans the probe of one rung.
pub fn plan(
    backend: &Backend,
    model: Option<&str>,
    run_model: Option<&str>,
    binary: &Path,
    child: &ChildEnv,
    account: Option<&str>,
    timeout: Duration,
) -> Result<ProbePlan, PlanError> {
    let child_env = child.set;
    let env = Env {
        child: child.set,
        removed: child.removed,
    };
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
    let explicit = def.url.is_some() || def.key.is_some();
    let url = |default: String| match &def.url {
        Some(url) => env.expand(url, false),
        None => Ok(default),
    };
    let key = || -> Result<Option<(String, String)>, PlanError> {
        def.key
            .as_ref()
            .map(|text| Ok((env.expand(text, true)?, key_source(text, &backend.name))))
            .transpose()
    };

    let (call, source) = match def.kind {
        ProbeKind::None => (Call::None, format!("backend:{}", backend.name)),
        ProbeKind::Command => command_call(backend, &env, run_model, binary, child_env)?,
        ProbeKind::Anthropic => {
            need_model()?;
            if explicit {
                let base = url(env
                    .get("ANTHROPIC_BASE_URL")
                    .unwrap_or_else(|| ANTHROPIC_API.into()))?;
                match key()? {
                    Some((key, source)) => (anthropic(base, key, def.auth), source),
                    None => (Call::Reach { base }, "none".into()),
                }
            } else {
                anthropic_as_claude_code(&env, account.is_some())?
            }
        }
        ProbeKind::Openai => {
            need_model()?;
            if explicit {
                let base = url(OPENAI_API.into())?;
                let (key, source) =
                    key()?.map_or((None, "none".to_string()), |(k, s)| (Some(k), s));
                (
                    Call::OpenAi {
                        base,
                        key,
                        api: def.api,
                    },
                    source,
                )
            } else {
                openai_as_the_cli(
                    &env,
                    Family::of_backend(&backend.name, &backend.command),
                    def.api,
                )?
            }
        }
        ProbeKind::Gemini => {
            need_model()?;
            let base = url(env
                .get("GOOGLE_GEMINI_BASE_URL")
                .unwrap_or_else(|| GEMINI_API.into()))?;
            let (key, source) = match key()? {
                Some(found) => found,
                None => env
                    .credential("GEMINI_API_KEY")
                    .or_else(|missing| env.credential("GOOGLE_API_KEY").map_err(|_| missing))?,
            };
            (Call::Gemini { base, key }, source)
        }
    };
    register_secrets(&call);
    let source = account.map_or(source, |name| format!("account:{name}"));
    let target = format!(
        "{} {} {} @{}",
        def.kind.as_str(),
        endpoint(&call),
        model.unwrap_or("-"),
        source
    );
    let info = CallInfo {
        rung: None,
        backend: Some(backend.name.clone()),
        model: model.map(str::to_string),
        account: account.map(str::to_string),
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

fn anthropic(base: String, key: String, auth: Option<Auth>) -> Call {
    // Subscription (OAuth) tokens only work as a bearer, with the OAuth beta header.
    let oauth = key.starts_with("sk-ant-oat");
    let auth = if oauth {
        Auth::Bearer
    } else {
        auth.unwrap_or(Auth::XApiKey)
    };
    Call::Anthropic {
        base,
        key,
        auth,
        oauth,
    }
}

/// The built-in claude probe: the proxy at `AGENT_PROXY_URL` when set (it fronts the same
/// account), else the credential Claude Code itself would use, else reachability only.
fn anthropic_as_claude_code(env: &Env, with_account: bool) -> Result<(Call, String), PlanError> {
    // An account's probe uses the account's own credential, on the CLI's own endpoint.
    if !with_account && let Some(proxy) = env.get("AGENT_PROXY_URL") {
        let (key, source) = env.credential("AGENT_PROXY_KEY")?;
        return Ok((anthropic(proxy, key, Some(Auth::Bearer)), source));
    }
    let base = env
        .get("ANTHROPIC_BASE_URL")
        .unwrap_or_else(|| ANTHROPIC_API.into());
    for (var, auth) in [
        ("ANTHROPIC_API_KEY", Auth::XApiKey),
        ("ANTHROPIC_AUTH_TOKEN", Auth::Bearer),
        ("CLAUDE_CODE_OAUTH_TOKEN", Auth::Bearer),
    ] {
        if let Ok((key, source)) = env.credential(var) {
            return Ok((anthropic(base, key, Some(auth)), source));
        }
    }
    Ok((Call::Reach { base }, "none".into()))
}

/// Codex ignores `OPENAI_BASE_URL` and talks to the provider in its own config.toml;
/// other OpenAI-style CLIs follow `OPENAI_BASE_URL`.
fn openai_as_the_cli(
    env: &Env,
    family: Family,
    api: OpenAiApi,
) -> Result<(Call, String), PlanError> {
    if family == Family::Codex {
        if let Some(config) = codex_config()
            && let Some((name, provider)) = config.custom_provider()
        {
            {
                let base = provider.base_url.clone().unwrap_or_default();
                let api = match provider.wire_api.as_deref() {
                    Some("chat") => OpenAiApi::Chat,
                    Some(_) => OpenAiApi::Responses,
                    None => api,
                };
                return Ok(match &provider.env_key {
                    Some(var) => {
                        let (key, source) = env.credential(var)?;
                        (
                            Call::OpenAi {
                                base,
                                key: Some(key),
                                api,
                            },
                            source,
                        )
                    }
                    None => (
                        Call::OpenAi {
                            base,
                            key: None,
                            api,
                        },
                        format!("codex-provider:{name}"),
                    ),
                });
            }
        }
        let (key, source) = env.credential("OPENAI_API_KEY")?;
        return Ok((
            Call::OpenAi {
                base: OPENAI_API.into(),
                key: Some(key),
                api,
            },
            source,
        ));
    }
    let base = env
        .get("OPENAI_BASE_URL")
        .unwrap_or_else(|| OPENAI_API.into());
    let (key, source) = env.credential("OPENAI_API_KEY")?;
    Ok((
        Call::OpenAi {
            base,
            key: Some(key),
            api,
        },
        source,
    ))
}

fn command_call(
    backend: &Backend,
    env: &Env,
    run_model: Option<&str>,
    binary: &Path,
    child_env: &[(String, String)],
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
        env: child_env.to_vec(),
        env_remove: env.removed.to_vec(),
    };
    Ok((call, source))
}

/// Names where a configured key came from, never the key: `env:VAR` for `${VAR}`.
fn key_source(text: &str, backend: &str) -> String {
    let trimmed = text.trim();
    if let Some(name) = trimmed
        .strip_prefix("${")
        .and_then(|rest| rest.strip_suffix('}'))
    {
        let name = name.split(":-").next().unwrap_or(name);
        return format!("env:{name}");
    }
    format!("config:{backend}")
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
