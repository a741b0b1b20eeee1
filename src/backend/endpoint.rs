//! [`resolve`]: the API, base URL and credential a backend's CLI will use, worked out
//! once from the backend's settings, the account of the row (if any) and the CLI's own
//! environment. A probe, an account check and the doctor all start from this answer, so
//! they reach the host the launched CLI reaches, with the credential it sends.

use crate::adapter::{Family, codex};
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

/// A CLI's own login store, which the CLI uses when it is given no key (DESIGN §12): a
/// subscription login, never for prompts. Whether the store holds a login is read on the
/// calls floor (`login::`), never here, and never its token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OwnLogin {
    /// `~/.claude/.credentials.json` (or the macOS Keychain).
    ClaudeCode,
    /// `$CODEX_HOME/auth.json`: a ChatGPT login, or a key stored by `codex login --api-key`.
    Codex,
    /// `~/.gemini/oauth_creds.json`, when its settings select the Google login.
    GeminiCli,
    /// Antigravity's own login (presence only).
    Antigravity,
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
    /// With no credential: the CLI's own login store it falls back to, if it has one.
    pub own_login: Option<OwnLogin>,
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

/// The launched CLI's environment: what is set on top of agent's, and what is removed.
pub struct ChildEnv<'a> {
    pub set: &'a [(String, String)],
    pub removed: &'a [String],
}

impl ChildEnv<'_> {
    /// The same environment, as the CLIs' adapters read it.
    pub fn adapter(&self) -> crate::adapter::Env<'_> {
        crate::adapter::Env::child(self.set, self.removed)
    }

    /// The value the CLI will see, as set (empty or not).
    pub fn raw(&self, name: &str) -> Option<String> {
        if let Some((_, value)) = self.set.iter().find(|(key, _)| key == name) {
            return Some(value.clone());
        }
        if self.removed.iter().any(|removed| removed == name) {
            return None;
        }
        std::env::var(name).ok()
    }

    /// The value when set and not empty.
    pub fn get(&self, name: &str) -> Option<String> {
        self.raw(name).filter(|value| !value.is_empty())
    }

    /// `${VAR}` expanded from the CLI's environment; an unset or empty variable is an error.
    pub fn expand(&self, text: &str, is_credential: bool) -> Result<String, PlanError> {
        expand_with(text, &|name| self.raw(name))
            .map_err(|var| PlanError::missing(&var, is_credential))
    }

    fn credential(&self, name: &str, auth: AuthScheme) -> Option<Credential> {
        self.get(name).map(|value| Credential {
            value,
            source: format!("env:{name}"),
            auth,
        })
    }

    fn required(&self, name: &str, auth: AuthScheme) -> Result<Credential, PlanError> {
        self.credential(name, auth)
            .ok_or_else(|| PlanError::missing(&MissingVar(name.to_string()), true))
    }
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
/// secret must already be set in `child` under `account.var`: with an account, its
/// credential is the one used, whatever else the backend names.
pub fn resolve(
    backend: &Backend,
    account: Option<Account>,
    child: &ChildEnv,
) -> Result<Endpoint, PlanError> {
    let family = backend.family;
    let def = &backend.probe;
    let explicit = def.url.is_some() || def.key.is_some();
    let api = match def.kind {
        ProbeKind::Anthropic => Api::Anthropic,
        ProbeKind::Openai => Api::OpenAi(def.api),
        ProbeKind::Gemini => Api::Gemini,
        // A CLI probed by running it still talks to its vendor's API: an account check
        // goes there.
        ProbeKind::Command | ProbeKind::None => match family {
            Family::Claude => Api::Anthropic,
            Family::Gemini => Api::Gemini,
            Family::Codex => Api::OpenAi(OpenAiApi::Responses),
            Family::Agy | Family::Opencode | Family::Other => Api::OpenAi(def.api),
        },
    };
    let url = |default: String| -> Result<String, PlanError> {
        match &def.url {
            Some(url) => child.expand(url, false),
            None => Ok(default),
        }
    };
    let configured_key = |auth: AuthScheme| -> Result<Option<Credential>, PlanError> {
        def.key
            .as_ref()
            .map(|text| {
                Ok(Credential {
                    value: child.expand(text, true)?,
                    source: key_source(text, &backend.name),
                    auth,
                })
            })
            .transpose()
    };
    let account_credential = |auth: AuthScheme| -> Result<Option<Credential>, PlanError> {
        account
            .map(|account| {
                child
                    .credential(account.var, auth)
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
                as_claude_code(child, account, account_credential)?
            }
        }
        Api::OpenAi(_) if explicit => {
            let credential = match account_credential(AuthScheme::Bearer)? {
                Some(credential) => Some(credential),
                None => configured_key(AuthScheme::Bearer)?,
            };
            (url(OPENAI_API.into())?, credential)
        }
        Api::OpenAi(_) => as_openai_cli(child, family, account_credential(AuthScheme::Bearer)?)?,
        Api::Gemini => {
            let base = url(child
                .get("GOOGLE_GEMINI_BASE_URL")
                .unwrap_or_else(|| GEMINI_API.into()))?;
            let credential = match account_credential(AuthScheme::GoogApiKey)? {
                Some(credential) => Some(credential),
                None => match configured_key(AuthScheme::GoogApiKey)? {
                    Some(credential) => Some(credential),
                    // No key: Gemini CLI uses its own Google login, when it has one.
                    None => child
                        .credential("GEMINI_API_KEY", AuthScheme::GoogApiKey)
                        .or_else(|| child.credential("GOOGLE_API_KEY", AuthScheme::GoogApiKey)),
                },
            };
            (base, credential)
        }
    };
    let api = match (api, &credential) {
        // Codex's provider may name its own wire API.
        (Api::OpenAi(_), _) if !explicit && family == Family::Codex => {
            codex_wire_api(def.api, child)
        }
        _ => api,
    };
    let credential = credential.map(as_subscription_if_oauth);
    let own_login = (credential.is_none() && !explicit && account.is_none())
        .then(|| own_login(backend, family, api, &base, child))
        .flatten();
    let source = match &credential {
        Some(credential) => {
            crate::redact::register(&credential.value);
            credential.source.clone()
        }
        None if family == Family::Codex && !explicit => codex::config(&child.adapter())
            .and_then(|config| config.custom_provider().map(|(name, _)| name.to_string()))
            .map_or_else(
                || "none".to_string(),
                |name| format!("codex-provider:{name}"),
            ),
        None => match own_login {
            Some(login) => format!("login:{}", login.cli_name()),
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

impl OwnLogin {
    /// The CLI's command name, as login keys and sources name it.
    pub fn cli_name(self) -> &'static str {
        match self {
            OwnLogin::ClaudeCode => "claude",
            OwnLogin::Codex => "codex",
            OwnLogin::GeminiCli => "gemini",
            OwnLogin::Antigravity => "agy",
        }
    }
}

/// The login store the CLI falls back to when it is given no credential: only for the
/// built-in CLIs talking to their own vendor (asked only with no account and no configured
/// key or URL; for Codex, no custom provider; for Claude Code, not the proxy).
fn own_login(
    backend: &Backend,
    family: Family,
    api: Api,
    base: &str,
    child: &ChildEnv,
) -> Option<OwnLogin> {
    if is_antigravity(backend) {
        return Some(OwnLogin::Antigravity);
    }
    match (family, api) {
        (Family::Claude, Api::Anthropic) if child.get("AGENT_PROXY_URL").is_none() => {
            Some(OwnLogin::ClaudeCode)
        }
        (Family::Codex, Api::OpenAi(_)) if base == OPENAI_API => Some(OwnLogin::Codex),
        (Family::Gemini, Api::Gemini) => Some(OwnLogin::GeminiCli),
        _ => None,
    }
}

/// Antigravity (`agy`), by its command's file name or the backend's name.
pub fn is_antigravity(backend: &Backend) -> bool {
    let file = std::path::Path::new(&backend.command)
        .file_name()
        .and_then(|name| name.to_str());
    file == Some("agy") || backend.name == "agy"
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
/// credential variable Claude Code reads, else reachability only.
fn as_claude_code(
    child: &ChildEnv,
    account: Option<Account>,
    account_credential: impl Fn(AuthScheme) -> Result<Option<Credential>, PlanError>,
) -> Result<(String, Option<Credential>), PlanError> {
    if account.is_none()
        && let Some(proxy) = child.get("AGENT_PROXY_URL")
    {
        let credential = child.required("AGENT_PROXY_KEY", AuthScheme::Bearer)?;
        return Ok((proxy, Some(credential)));
    }
    let base = child
        .get("ANTHROPIC_BASE_URL")
        .unwrap_or_else(|| ANTHROPIC_API.into());
    let claude_code_auth = |var: &str| match var {
        "ANTHROPIC_API_KEY" => AuthScheme::XApiKey,
        "CLAUDE_CODE_OAUTH_TOKEN" => AuthScheme::OAuth,
        _ => AuthScheme::Bearer,
    };
    if let Some(account) = account {
        return Ok((base, account_credential(claude_code_auth(account.var))?));
    }
    let credential = crate::adapter::claude::CREDENTIAL_VARS
        .iter()
        .find_map(|var| child.credential(var, claude_code_auth(var)));
    Ok((base, credential))
}

/// Codex ignores `OPENAI_BASE_URL` and talks to the provider in its own config.toml;
/// other OpenAI-style CLIs follow `OPENAI_BASE_URL`.
fn as_openai_cli(
    child: &ChildEnv,
    family: Family,
    account: Option<Credential>,
) -> Result<(String, Option<Credential>), PlanError> {
    if family == Family::Codex {
        if let Some(config) = codex::config(&child.adapter())
            && let Some((_, provider)) = config.custom_provider()
        {
            let base = provider.base_url.clone().unwrap_or_default();
            let credential = match (account, &provider.env_key) {
                (Some(credential), _) => Some(credential),
                (None, Some(var)) => Some(child.required(var, AuthScheme::Bearer)?),
                (None, None) => None,
            };
            return Ok((base, credential));
        }
        // No key in the environment: Codex uses its own login (auth.json), whatever mode.
        let credential = account.or_else(|| child.credential("OPENAI_API_KEY", AuthScheme::Bearer));
        return Ok((OPENAI_API.into(), credential));
    }
    let base = child
        .get("OPENAI_BASE_URL")
        .unwrap_or_else(|| OPENAI_API.into());
    let credential = match account {
        Some(credential) => credential,
        None => child.required("OPENAI_API_KEY", AuthScheme::Bearer)?,
    };
    Ok((base, Some(credential)))
}

/// The wire API codex's custom provider names, else the backend's.
fn codex_wire_api(fallback: OpenAiApi, child: &ChildEnv) -> Api {
    let wire = codex::config(&child.adapter()).and_then(|config| {
        config
            .custom_provider()
            .and_then(|(_, provider)| provider.wire_api.clone())
    });
    Api::OpenAi(match wire.as_deref() {
        Some("chat") => OpenAiApi::Chat,
        Some(_) => OpenAiApi::Responses,
        None => fallback,
    })
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
