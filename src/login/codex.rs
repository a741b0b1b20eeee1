//! Codex's login: API-key mode or a ChatGPT (subscription) login, its plan and its access
//! token's expiry (research §2.1).
//!
//! - The store is `$CODEX_HOME/auth.json` (default `~/.codex`), `AuthDotJson` in
//!   codex-rs `login/src/auth/storage.rs`: `{"auth_mode", "OPENAI_API_KEY", "tokens":
//!   {id_token, access_token, refresh_token, account_id}, "last_refresh", …}`.
//! - `auth_mode` values seen in the pinned 0.171.0 binary's strings: `apikey`, `chatgpt`,
//!   `chatgptAuthTokens` (tokens handed in by an app-server client), `agentIdentity`,
//!   `personalAccessToken`; older files have no `auth_mode` (tokens mean ChatGPT).
//! - The plan is only in the `id_token` JWT, claim `https://api.openai.com/auth` →
//!   `chatgpt_plan_type` (both strings present in the 0.171.0 binary, "JWT payload missing
//!   expected 'https://api.openai.com/auth' object"); the payload is decoded, the signature
//!   not checked, and nothing else of it is kept.
//! - The expiry is the `access_token` JWT's `exp` (research §5; about 10 days, UNCONFIRMED).
//! - With `cli_auth_credentials_store = "keyring"` the login is in the OS keyring (service
//!   `Codex Auth`, account `cli|<first 16 hex of sha256(canonical CODEX_HOME)>`, research
//!   §2.1, derived from the source, UNCONFIRMED as a literal command) and `auth.json` is
//!   gone; [`keyring_account`] names it, and on macOS [`read_login`] looks there too.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::asking::{Answerer, AskWindows};
use super::{Login, forget_token, jwt, window};
use super::{OwnStore, Readers};
use crate::adapter::{self, Env};
use crate::backend::{AuthScheme, Credential};
use crate::bounded_read;

/// The keyring service Codex keeps its login under.
pub const KEYRING_SERVICE: &str = "Codex Auth";

/// How Codex is logged in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Auth {
    /// An OpenAI API key: not a subscription login (the key itself is registered for
    /// redaction and dropped).
    ApiKey,
    /// A ChatGPT login: a subscription, with its windows.
    ChatGpt(Login),
    /// Another mode Codex knows (`agentIdentity`, `personalAccessToken`…), named as written.
    Other(String),
}

/// Codex's home in agent's own environment, as its adapter finds it.
pub fn codex_home() -> Option<PathBuf> {
    crate::adapter::codex::home(&crate::adapter::Env::process())
}

/// How Codex is logged in, from its file (or, on macOS, its keyring item); `None` when it
/// is not logged in or agent cannot tell.
pub fn read_login() -> Option<Auth> {
    let home = codex_home()?;
    read_auth_file(&home.join("auth.json")).or_else(|| read_keyring(&home))
}

/// The login in Codex's macOS keyring item, for `cli_auth_credentials_store = "keyring"`.
#[cfg(target_os = "macos")]
fn read_keyring(home: &Path) -> Option<Auth> {
    let canonical = std::fs::canonicalize(home).unwrap_or_else(|_| home.to_path_buf());
    let account = keyring_account(&canonical.to_string_lossy());
    let text = super::keychain::read(KEYRING_SERVICE, Some(&account))?;
    auth_from_store(&serde_json::from_str(&text).ok()?)
}

/// Other systems' keyrings (Secret Service) are not read: such a login is unknown.
#[cfg(not(target_os = "macos"))]
fn read_keyring(_home: &Path) -> Option<Auth> {
    None
}

/// The keyring account of the Codex home `canonical_home` (`compute_store_key`).
pub fn keyring_account(canonical_home: &str) -> String {
    format!(
        "cli|{}",
        &crate::digest::sha256_hex(canonical_home.as_bytes())[..16]
    )
}

/// The login in an `auth.json`.
pub fn read_auth_file(path: &Path) -> Option<Auth> {
    auth_from_store(&bounded_read::json(path, bounded_read::LOGIN)?)
}

/// The login in a parsed `auth.json`. Every token and key in it is registered for
/// redaction, then dropped.
pub fn auth_from_store(store: &Value) -> Option<Auth> {
    let text = |value: Option<&Value>| {
        value
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_string)
    };
    let api_key = text(store.get("OPENAI_API_KEY"));
    let tokens = store.get("tokens").filter(|t| t.is_object());
    let id_token = text(tokens.and_then(|t| t.get("id_token")));
    let access = text(tokens.and_then(|t| t.get("access_token")));
    for secret in [
        api_key.as_deref(),
        id_token.as_deref(),
        access.as_deref(),
        text(tokens.and_then(|t| t.get("refresh_token"))).as_deref(),
        text(store.get("personal_access_token")).as_deref(),
    ] {
        forget_token(secret);
    }
    let mode = store.get("auth_mode").and_then(Value::as_str);
    match mode {
        Some("apikey") => return Some(Auth::ApiKey),
        Some("chatgpt" | "chatgptAuthTokens") | None => {}
        Some(other) => return Some(Auth::Other(other.to_string())),
    }
    if mode.is_none() && tokens.is_none() {
        return api_key.map(|_| Auth::ApiKey);
    }
    let plan = id_token
        .as_deref()
        .and_then(jwt::payload)
        .and_then(|claims| {
            claims
                .get("https://api.openai.com/auth")?
                .get("chatgpt_plan_type")?
                .as_str()
                .map(str::to_string)
        })
        .filter(|plan| !plan.is_empty());
    let expires_at = access
        .as_deref()
        .and_then(jwt::payload)
        .and_then(|claims| claims.get("exp")?.as_f64())
        .and_then(window::from_epoch_seconds);
    Some(Auth::ChatGpt(Login {
        plan,
        tier: None,
        expires_at,
        token_present: access.is_some(),
    }))
}

/// What agent reads of Codex's files.
pub const READERS: Readers = Readers {
    cli: &adapter::codex::CLI,
    own_store,
    refused_login: super::serves_every_login,
    last_model: |env| super::codex_rollout::last_model(adapter::codex::records(env).first()?),
    run_actions: |home, cwd, start, id| {
        super::codex_rollout::find_run(&home.join("sessions"), cwd, start, id)
            .map(|run| super::run_actions::codex(&run.path, start))
            .unwrap_or_default()
    },
    run_windows: Some(|home, cwd, start, id| {
        super::codex_rollout::find_run(&home.join("sessions"), cwd, start, id)
            .map(|run| run.windows)
            .unwrap_or_default()
    }),
    run_session: Some(|home, cwd, start, id| {
        super::codex_session::read(&home.join("sessions"), cwd, start, id)
    }),
    session_costs_a_run: false,
    session_in_output: Some(session_in_header),
    limit_in_output: None,
    ask_windows: Some(AskWindows {
        what: "codex app-server",
        answerer: Answerer::Cli,
        ask: super::codex_app_server::ask,
    }),
    calls: Some(|into| {
        let roots = super::codex_calls::roots();
        Some(super::codex_calls::read(&roots, into))
    }),
};

/// The session id `codex exec` prints in the header it writes to stderr as it starts
/// (0.171.0: a line `session id: 01a23eda-cd0f-…` between its `--------` rules). Only a
/// line of the header counts — an id-shaped word later in a run's output is not Codex's.
fn session_in_header(stderr: &str) -> Option<String> {
    let header = stderr.split("\n--------").nth(1)?;
    let id = header
        .lines()
        .find_map(|line| line.trim().strip_prefix("session id: "))?
        .trim();
    let plain =
        !id.is_empty() && id.len() <= 64 && id.chars().all(|c| c.is_ascii_hexdigit() || c == '-');
    plain.then(|| id.to_string())
}

/// What Codex's store in the home it finds in `env` holds: its ChatGPT login, or the key
/// `codex login --api-key` keeps there.
fn own_store(env: &Env) -> Option<OwnStore> {
    let home = adapter::codex::home(env)?;
    let auth = if Some(&home) == adapter::codex::home(&Env::process()).as_ref() {
        read_login()?
    } else {
        read_auth_file(&home.join("auth.json"))?
    };
    match auth {
        Auth::ChatGpt(login) => Some(OwnStore::Login(login)),
        Auth::ApiKey => stored_key(&home).map(OwnStore::Key),
        Auth::Other(_) => None,
    }
}

/// The key `codex login --api-key` keeps in `auth.json`: a key, not a login.
fn stored_key(home: &Path) -> Option<Credential> {
    let store = bounded_read::json(&home.join("auth.json"), bounded_read::LOGIN)?;
    let value = store.get("OPENAI_API_KEY")?.as_str()?.trim().to_string();
    crate::redact::register(&value);
    (!value.is_empty()).then(|| Credential {
        value,
        source: "codex-auth:apikey".into(),
        auth: AuthScheme::Bearer,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::login::jwt::base64url_encode;

    pub(crate) fn jwt(claims: &serde_json::Value) -> String {
        format!(
            "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.{}.c2lnbmF0dXJlLW5vdC1jaGVja2Vk",
            base64url_encode(claims.to_string().as_bytes())
        )
    }

    pub(crate) fn chatgpt_store() -> serde_json::Value {
        serde_json::json!({
            "auth_mode": "chatgpt",
            "OPENAI_API_KEY": null,
            "tokens": {
                "id_token": jwt(&serde_json::json!({"email": "u@example.com", "exp": 1,
                    "https://api.openai.com/auth": {"chatgpt_plan_type": "plus", "chatgpt_account_id": "acct-1"}})),
                "access_token": jwt(&serde_json::json!({"exp": 1_789_400_000, "secretish": "CODEXFIXTUREaccess"})),
                "refresh_token": "rt_CODEXFIXTURErefresh0123456789",
                "account_id": "acct-1"
            },
            "last_refresh": "2026-09-10T12:34:56Z"
        })
    }

    #[test]
    fn a_chatgpt_login_has_the_plan_of_its_id_token_and_the_expiry_of_its_access_token() {
        let Some(Auth::ChatGpt(login)) = auth_from_store(&chatgpt_store()) else {
            panic!()
        };
        assert_eq!(login.plan.as_deref(), Some("plus"));
        assert_eq!(login.expires_at.unwrap().as_second(), 1_789_400_000);
        assert!(login.token_present);
        let shown = format!("{login:?} {}", serde_json::to_string(&login).unwrap());
        assert!(
            !shown.contains("FIXTURE") && !shown.contains("acct-1"),
            "{shown}"
        );
        let store = chatgpt_store();
        for token in ["id_token", "access_token", "refresh_token"] {
            let value = store["tokens"][token].as_str().unwrap();
            assert!(
                !crate::redact::redact(value).contains(&value[value.len() - 12..]),
                "{token} not registered for redaction"
            );
        }
    }

    #[test]
    fn api_key_mode_old_files_and_other_modes_are_told_apart() {
        let key = serde_json::json!({"auth_mode": "apikey", "OPENAI_API_KEY": "sk-proj-CODEXFIXTUREkey0123456789"});
        assert_eq!(auth_from_store(&key), Some(Auth::ApiKey));
        assert!(!crate::redact::redact("sk-proj-CODEXFIXTUREkey0123456789").contains("FIXTURE"));
        let old_key = serde_json::json!({"OPENAI_API_KEY": "sk-proj-CODEXFIXTUREkey0123456789"});
        assert_eq!(auth_from_store(&old_key), Some(Auth::ApiKey));
        let mut old_chatgpt = chatgpt_store();
        old_chatgpt.as_object_mut().unwrap().remove("auth_mode");
        assert!(matches!(
            auth_from_store(&old_chatgpt),
            Some(Auth::ChatGpt(_))
        ));
        let other = serde_json::json!({"auth_mode": "agentIdentity"});
        assert_eq!(
            auth_from_store(&other),
            Some(Auth::Other("agentIdentity".into()))
        );
        assert_eq!(auth_from_store(&serde_json::json!({})), None);
    }

    #[test]
    fn tokens_that_are_not_jwts_leave_plan_and_expiry_unknown() {
        let store = serde_json::json!({"auth_mode": "chatgpt",
            "tokens": {"id_token": "opaque", "access_token": "opaque-access-0123456789"}});
        let Some(Auth::ChatGpt(login)) = auth_from_store(&store) else {
            panic!()
        };
        assert_eq!((login.plan, login.expires_at), (None, None));
        assert!(login.token_present);
    }

    #[test]
    fn the_keyring_account_is_the_hash_of_the_home() {
        // printf %s /home/u/.codex | sha256sum
        assert_eq!(keyring_account("/home/u/.codex"), "cli|9ba275091964248d");
    }
}
