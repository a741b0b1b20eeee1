//! [`resolve`]: the API, base URL and credential a backend's CLI will use, worked out
//! once from the backend's settings, the account of the row (if any) and the CLI's own
//! environment. A probe, an account check and the doctor all start from this answer, so
//! they reach the host the launched CLI reaches, with the credential it sends.

use crate::adapter::endpoint::{EndpointDefaults, KeyVar, OpenAiBase, OpenAiForm, Scheme, WireApi};
use crate::adapter::{Env, Family};
use crate::config::{Auth, Backend, OpenAiApi, ProbeKind};
use crate::error_class::ErrorClass;
use crate::expand::{MissingVar, expand_with};

pub const ANTHROPIC_API: &str = "https://api.anthropic.com";
pub const OPENAI_API: &str = "https://api.openai.com/v1";
pub const GEMINI_API: &str = "https://generativelanguage.googleapis.com";

/// Why a backend's endpoint cannot be worked out, decided without a call.
#[derive(Debug, Clone)]
pub struct PlanError {
    pub class: ErrorClass,
    pub reason: String,
}

impl PlanError {
    /// An installed CLI of `family` with no login and no key (`var` unset): not set up, and
    /// how to set it up — its login command, or the key.
    pub fn not_set_up(family: Family, var: &str) -> PlanError {
        let how = match family.login_command(None) {
            Some(login) => format!("log in ({login}) or set {var}"),
            None => format!("set {var}"),
        };
        PlanError {
            class: ErrorClass::NotSetUp,
            reason: format!("not set up: no login and no {var} — {how}"),
        }
    }

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

/// The wire format the CLI speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// Base without a version path (`ANTHROPIC_BASE_URL`).
    Anthropic,
    /// Base ending in its version path (`https://api.openai.com/v1`).
    OpenAi(OpenAiApi),
    /// Base without a version path (`GOOGLE_GEMINI_BASE_URL`).
    Gemini,
}

/// How a credential travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthScheme {
    /// `x-api-key: KEY`
    XApiKey,
    /// `Authorization: Bearer KEY`
    Bearer,
    /// A subscription token (`sk-ant-oat…`): bearer, with the OAuth beta header.
    OAuth,
    /// `x-goog-api-key: KEY`
    GoogApiKey,
}

#[derive(Clone, PartialEq, Eq)]
pub struct Credential {
    pub value: String,
    /// Where it came from, never the value: `env:VAR`, `config:BACKEND`, `account:NAME`.
    pub source: String,
    pub auth: AuthScheme,
}

impl std::fmt::Debug for Credential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credential")
            .field("source", &self.source)
            .field("auth", &self.auth)
            .finish_non_exhaustive()
    }
}

impl Credential {
    /// The headers that carry it.
    pub fn headers(&self) -> Vec<(&'static str, String)> {
        match self.auth {
            AuthScheme::XApiKey => vec![("x-api-key", self.value.clone())],
            AuthScheme::Bearer => vec![("authorization", format!("Bearer {}", self.value))],
            AuthScheme::OAuth => vec![
                ("authorization", format!("Bearer {}", self.value)),
                ("anthropic-beta", "oauth-2025-04-20".to_string()),
            ],
            AuthScheme::GoogApiKey => vec![("x-goog-api-key", self.value.clone())],
        }
    }
}

impl Credential {
    /// A Claude subscription token (`sk-ant-oat…`), however it was given: a login, never
    /// sent with a prompt (DESIGN §12) — the real API refuses it from anything but Claude
    /// Code.
    pub fn is_subscription_login(&self) -> bool {
        self.auth == AuthScheme::OAuth
    }
}

/// The API a backend's CLI will call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub api: Api,
    /// Without a trailing slash.
    pub base: String,
    /// `None`: nothing to send (an Anthropic host known only by reachability, a local
    /// OpenAI-style server without auth).
    pub credential: Option<Credential>,
    /// Where the credential came from (`env:VAR`, `account:NAME`, `config:BACKEND`), or
    /// why there is none (`none`, `codex-provider:NAME`, `login:CLI`): part of the health key.
    pub source: String,
    /// With no credential: the CLI whose own login store it falls back to (DESIGN §12: a
    /// subscription login, never for prompts), if it has one. Whether the store holds a
    /// login is read on the calls floor (`login::`), never here, and never its token.
    pub own_login: Option<Family>,
}

impl Endpoint {
    /// Whether this endpoint's credential is a subscription login, not for prompts: a
    /// subscription token, or the CLI's own login store.
    pub fn is_subscription_login(&self) -> bool {
        match &self.credential {
            Some(credential) => credential.is_subscription_login(),
            None => self.own_login.is_some(),
        }
    }

    /// The zero-cost model list on this endpoint (`GET`): proves a credential, never a model.
    pub fn models_url(&self) -> String {
        match self.api {
            Api::Anthropic => format!("{}/v1/models", self.base),
            Api::OpenAi(_) => format!("{}/models", self.base),
            Api::Gemini => format!("{}/v1beta/models", self.base),
        }
    }

    /// Every header a request to this endpoint carries: the credential's, and the API's
    /// version header.
    pub fn headers(&self) -> Vec<(&'static str, String)> {
        let mut headers = Vec::new();
        if self.api == Api::Anthropic {
            headers.push(("anthropic-version", "2023-06-01".to_string()));
        }
        if let Some(credential) = &self.credential {
            headers.extend(credential.headers());
        }
        headers
    }
}

/// The account a row uses: its name, and the variable the launched CLI reads its secret
/// from (set in the child's environment by the caller).
#[derive(Debug, Clone, Copy)]
pub struct Account<'a> {
    pub name: &'a str,
    pub var: &'a str,
}

/// `${VAR}` expanded from the launched CLI's environment `child`; an unset or empty variable
/// is an error.
pub fn expand(child: &Env, text: &str, is_credential: bool) -> Result<String, PlanError> {
    expand_with(text, &|name| child.raw(name))
        .map_err(|var| PlanError::missing(&var, is_credential))
}

/// The credential in `name`, when it is set and not empty.
fn credential(child: &Env, name: &str, auth: AuthScheme) -> Option<Credential> {
    child.get(name).map(|value| Credential {
        value,
        source: format!("env:{name}"),
        auth,
    })
}

/// The credential in `name`, which must be set.
fn required(child: &Env, name: &str, auth: AuthScheme) -> Result<Credential, PlanError> {
    credential(child, name, auth)
        .ok_or_else(|| PlanError::missing(&MissingVar(name.to_string()), true))
}

/// The first credential set among the CLI's key variables.
fn first_set(child: &Env, vars: &[KeyVar]) -> Option<Credential> {
    vars.iter()
        .find_map(|var| credential(child, &var.name, auth_scheme(var.scheme)))
}

/// The backend's extra environment for its CLI (`env`), expanded from agent's; an unset
/// variable fails by name.
pub fn backend_env(backend: &Backend) -> Result<Vec<(String, String)>, PlanError> {
    let mut env = Vec::with_capacity(backend.env.len());
    for (name, template) in &backend.env {
        let value =
            crate::expand::expand(template).map_err(|var| PlanError::missing(&var, false))?;
        if crate::redact::looks_secret(name) {
            crate::redact::register(&value);
        }
        env.push((name.clone(), value));
    }
    Ok(env)
}

/// The API a backend's CLI will call, with the credential it will send. `account`'s
/// secret must already be set in `child` (the launched CLI's environment) under
/// `account.var`: with an account, its credential is the one used, whatever else the
/// backend names. What the CLI itself reads is its adapter's answer
/// ([`Family::endpoint_defaults`]); this puts it together with the configuration.
pub fn resolve(
    backend: &Backend,
    account: Option<Account>,
    child: &Env,
) -> Result<Endpoint, PlanError> {
    let family = backend.family;
    let def = &backend.probe;
    let explicit = def.url.is_some() || def.key.is_some();
    let configured = match def.kind {
        ProbeKind::Anthropic => Some(WireApi::Anthropic),
        ProbeKind::Openai => Some(WireApi::OpenAi(Some(openai_form(def.api)))),
        ProbeKind::Gemini => Some(WireApi::Gemini),
        // A CLI probed by running it still talks to its vendor's API: an account check
        // goes there.
        ProbeKind::Command | ProbeKind::None => None,
    };
    let cli = family.endpoint_defaults(configured, child);
    let api = api_of(cli.api, def.api);
    let url = |default: String| -> Result<String, PlanError> {
        match &def.url {
            Some(url) => expand(child, url, false),
            None => Ok(default),
        }
    };
    let configured_key = |auth: AuthScheme| -> Result<Option<Credential>, PlanError> {
        def.key
            .as_ref()
            .map(|text| {
                Ok(Credential {
                    value: expand(child, text, true)?,
                    source: key_source(text, &backend.name),
                    auth,
                })
            })
            .transpose()
    };
    let account_credential = |auth: AuthScheme| -> Result<Option<Credential>, PlanError> {
        account
            .map(|account| {
                credential(child, account.var, auth)
                    .map(|credential| Credential {
                        source: format!("account:{}", account.name),
                        ..credential
                    })
                    .ok_or_else(|| PlanError::missing(&MissingVar(account.var.to_string()), true))
            })
            .transpose()
    };

    let (base, credential) = match api {
        Api::Anthropic => {
            let configured_auth = match def.auth {
                Some(Auth::Bearer) => AuthScheme::Bearer,
                _ => AuthScheme::XApiKey,
            };
            if explicit {
                let base = url(child
                    .get("ANTHROPIC_BASE_URL")
                    .unwrap_or_else(|| ANTHROPIC_API.into()))?;
                let credential = match account_credential(configured_auth)? {
                    Some(credential) => Some(credential),
                    None => configured_key(configured_auth)?,
                };
                (base, credential)
            } else {
                as_claude_code(child, &cli, account, account_credential)?
            }
        }
        Api::OpenAi(_) if explicit => {
            let credential = match account_credential(AuthScheme::Bearer)? {
                Some(credential) => Some(credential),
                None => configured_key(AuthScheme::Bearer)?,
            };
            (url(OPENAI_API.into())?, credential)
        }
        Api::OpenAi(_) => as_openai_cli(child, &cli, account_credential(AuthScheme::Bearer)?)?,
        Api::Gemini => {
            let base = url(child
                .get("GOOGLE_GEMINI_BASE_URL")
                .unwrap_or_else(|| GEMINI_API.into()))?;
            let credential = match account_credential(AuthScheme::GoogApiKey)? {
                Some(credential) => Some(credential),
                None => match configured_key(AuthScheme::GoogApiKey)? {
                    Some(credential) => Some(credential),
                    // No key: Gemini CLI uses its own Google login, when it has one.
                    None => first_set(child, &cli.key_vars),
                },
            };
            (base, credential)
        }
    };
    let api = match (api, &cli.openai_base) {
        // A CLI that follows its own settings (Codex's provider) may have them name its
        // wire API.
        (Api::OpenAi(_), OpenAiBase::Settings(provider)) if !explicit => Api::OpenAi(
            provider
                .as_ref()
                .and_then(|provider| provider.wire_api)
                .map_or(def.api, openai_api),
        ),
        _ => api,
    };
    let credential = credential.map(as_subscription_if_oauth);
    let own_login = (credential.is_none() && !explicit && account.is_none())
        .then(|| own_login(backend, &cli, api, &base))
        .flatten();
    let source = match &credential {
        Some(credential) => {
            crate::redact::register(&credential.value);
            credential.source.clone()
        }
        // A CLI that follows its own settings is known by the provider they name.
        None if !explicit && let OpenAiBase::Settings(provider) = &cli.openai_base => {
            provider.as_ref().map_or_else(
                || "none".to_string(),
                |provider| format!("codex-provider:{}", provider.name),
            )
        }
        None => match own_login {
            Some(login) => format!("login:{}", login.name()),
            None => "none".to_string(),
        },
    };
    Ok(Endpoint {
        api,
        base: base.trim_end_matches('/').to_string(),
        credential,
        source,
        own_login,
    })
}

/// The login store the CLI falls back to when it is given no credential: only a CLI with
/// one of its own, talking to its own API (asked only with no account and no configured
/// key or URL) — an OpenAI-style login (Codex's ChatGPT one) only at OpenAI's own API or
/// at a provider its settings send that login to (`requires_openai_auth`, no `env_key`),
/// not at a provider elsewhere. Such a rung is judged by its login, never sent a prompt by
/// agent: the gateway would refuse a call without the login, and the login is not agent's.
fn own_login(backend: &Backend, cli: &EndpointDefaults, api: Api, base: &str) -> Option<Family> {
    if backend.family.reports_own_quota() {
        return Some(backend.family);
    }
    let at_its_vendor = !matches!(api, Api::OpenAi(_)) || base == OPENAI_API;
    let sent_the_login =
        matches!(&cli.openai_base, OpenAiBase::Settings(Some(provider)) if provider.runs_on_login);
    (cli.own_login && (at_its_vendor || sent_the_login)).then_some(backend.family)
}

/// How a key travels to `api` when nothing else says: Anthropic keys as `x-api-key`,
/// OpenAI-style keys as a bearer, Gemini keys as `x-goog-api-key` — and a subscription
/// token (`sk-ant-oat…`) as a bearer with the OAuth beta header, however it was given.
pub fn default_scheme(api: Api, value: &str) -> AuthScheme {
    match api {
        _ if is_subscription_token(value) => AuthScheme::OAuth,
        Api::Anthropic => AuthScheme::XApiKey,
        Api::OpenAi(_) => AuthScheme::Bearer,
        Api::Gemini => AuthScheme::GoogApiKey,
    }
}

/// A Claude subscription (OAuth) token, as `claude setup-token` prints it.
pub fn is_subscription_token(value: &str) -> bool {
    value.starts_with("sk-ant-oat")
}

/// Subscription tokens only work as a bearer with the OAuth beta header, however given.
fn as_subscription_if_oauth(credential: Credential) -> Credential {
    if is_subscription_token(&credential.value) {
        Credential {
            auth: AuthScheme::OAuth,
            ..credential
        }
    } else {
        credential
    }
}

/// Claude Code's own choice: the proxy at `AGENT_PROXY_URL` when set (it fronts the same
/// account) unless the row has an account, else `ANTHROPIC_BASE_URL` with the first
/// credential variable the CLI reads, else reachability only.
fn as_claude_code(
    child: &Env,
    cli: &EndpointDefaults,
    account: Option<Account>,
    account_credential: impl Fn(AuthScheme) -> Result<Option<Credential>, PlanError>,
) -> Result<(String, Option<Credential>), PlanError> {
    if account.is_none()
        && let Some(proxy) = child.get("AGENT_PROXY_URL")
    {
        let credential = required(child, "AGENT_PROXY_KEY", AuthScheme::Bearer)?;
        return Ok((proxy, Some(credential)));
    }
    let base = child
        .get("ANTHROPIC_BASE_URL")
        .unwrap_or_else(|| ANTHROPIC_API.into());
    if let Some(account) = account {
        // The account's variable is sent as the CLI sends that variable; one it does not
        // list as a bearer.
        let scheme = cli
            .key_vars
            .iter()
            .find(|var| var.name == account.var)
            .map_or(AuthScheme::Bearer, |var| auth_scheme(var.scheme));
        return Ok((base, account_credential(scheme)?));
    }
    Ok((base, first_set(child, &cli.key_vars)))
}

/// An OpenAI-style CLI: one that follows its own settings (Codex) talks to the provider
/// they name, else OpenAI's own API (ignoring `OPENAI_BASE_URL`), with its key if set and
/// else its own login; the others follow `OPENAI_BASE_URL` and need their key.
fn as_openai_cli(
    child: &Env,
    cli: &EndpointDefaults,
    account: Option<Credential>,
) -> Result<(String, Option<Credential>), PlanError> {
    match &cli.openai_base {
        OpenAiBase::Settings(Some(provider)) => {
            let credential = match (account, &provider.env_key) {
                (Some(credential), _) => Some(credential),
                (None, Some(var)) => Some(required(child, var, AuthScheme::Bearer)?),
                (None, None) => None,
            };
            Ok((provider.base_url.clone(), credential))
        }
        OpenAiBase::Settings(None) => Ok((
            OPENAI_API.into(),
            account.or_else(|| first_set(child, &cli.key_vars)),
        )),
        OpenAiBase::Variable => {
            let base = child
                .get("OPENAI_BASE_URL")
                .unwrap_or_else(|| OPENAI_API.into());
            let credential = match account {
                Some(credential) => credential,
                None => match first_set(child, &cli.key_vars) {
                    Some(credential) => credential,
                    None => {
                        let var = cli
                            .key_vars
                            .first()
                            .map_or("OPENAI_API_KEY", |var| &var.name);
                        return Err(PlanError::missing(&MissingVar(var.to_string()), true));
                    }
                },
            };
            Ok((base, Some(credential)))
        }
    }
}

/// The adapter's wire API as the backend names it: a form left open is the
/// configuration's (`probe.api`).
fn api_of(api: WireApi, configured: OpenAiApi) -> Api {
    match api {
        WireApi::Anthropic => Api::Anthropic,
        WireApi::OpenAi(form) => Api::OpenAi(form.map_or(configured, openai_api)),
        WireApi::Gemini => Api::Gemini,
    }
}

fn openai_api(form: OpenAiForm) -> OpenAiApi {
    match form {
        OpenAiForm::Chat => OpenAiApi::Chat,
        OpenAiForm::Responses => OpenAiApi::Responses,
    }
}

fn openai_form(api: OpenAiApi) -> OpenAiForm {
    match api {
        OpenAiApi::Chat => OpenAiForm::Chat,
        OpenAiApi::Responses => OpenAiForm::Responses,
    }
}

/// How the adapter's scheme is sent.
fn auth_scheme(scheme: Scheme) -> AuthScheme {
    match scheme {
        Scheme::XApiKey => AuthScheme::XApiKey,
        Scheme::Bearer => AuthScheme::Bearer,
        Scheme::OAuth => AuthScheme::OAuth,
        Scheme::GoogApiKey => AuthScheme::GoogApiKey,
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A variable set twice: `Command::env` leaves the last value for the child, and the
    /// one view of its environment reads the same.
    #[test]
    fn a_variable_set_twice_is_read_as_the_child_gets_it_the_last() {
        let set = vec![
            ("AGENT_TEST_TWICE".to_string(), "first".to_string()),
            ("AGENT_TEST_TWICE".to_string(), "last".to_string()),
        ];
        let child = std::process::Command::new("sh")
            .args(["-c", "printf %s \"$AGENT_TEST_TWICE\""])
            .env_clear()
            .envs(set.iter().map(|(name, value)| (name, value)))
            .output()
            .expect("sh runs");
        assert_eq!(String::from_utf8_lossy(&child.stdout), "last");

        let env = Env::only(&set);
        assert_eq!(env.get("AGENT_TEST_TWICE").as_deref(), Some("last"));
        assert_eq!(expand(&env, "${AGENT_TEST_TWICE}", false).unwrap(), "last");
    }
}
