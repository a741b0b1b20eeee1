//! Claude Code's login: whether there is one, its plan and its access token's expiry.
//! Facts from the pinned `@anthropic-ai/claude-code` 2.1.197 binary (functions named as
//! minified there), confirmed with `strings` (research §1.1):
//!
//! - The store is the plaintext file `<dir>/.credentials.json` (`CTn()`), where `<dir>` is
//!   `$CLAUDE_SECURESTORAGE_CONFIG_DIR` when that variable is set (empty: `~/.claude`),
//!   else `$CLAUDE_CONFIG_DIR`, else `~/.claude` (`m7()`, `Zn()`), `~` being `os.homedir()`,
//!   which is `$HOME` on Unix.
//! - On macOS the store is first the Keychain generic password
//!   `Claude Code<OAUTH_FILE_SUFFIX>-credentials<suffix>` (`Fye()`), account `$USER`;
//!   `OAUTH_FILE_SUFFIX` is empty in production builds, and `<suffix>` is `-` and the first 8
//!   hex digits of the SHA-256 of the config directory, added only when
//!   `CLAUDE_SECURESTORAGE_CONFIG_DIR` is set non-empty (its value is hashed) or, when that
//!   is unset, `CLAUDE_CONFIG_DIR` is set non-empty (its value is hashed). Claude Code
//!   reads it with `security find-generic-password -a $USER -w -s NAME` (`aci()`); so does
//!   agent, never anything that writes.
//! - The JSON: `{"claudeAiOauth": {accessToken, refreshToken, expiresAt (epoch ms), scopes,
//!   subscriptionType, rateLimitTier, clientId}, "mcpOAuth": …}`. A Keychain item may hold
//!   only `mcpOAuth` (CodexBar, UNCONFIRMED against the binary): no login. After a refused
//!   refresh Claude Code writes empty tokens and `expiresAt: 0`: a login with no token.
//! - Some readers also meet a hex-encoded Keychain value (openusage, cc-limit-guard;
//!   UNCONFIRMED against the binary): accepted.
//! - Claude Code treats its token as expired 5 minutes before `expiresAt` (`Ute()`) and then
//!   refreshes it itself; [`Login::expires_at`] is the stored value, unchanged.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::asking::{Answerer, AskWindows, Asked, Asking};
use super::{Login, forget_token, window};
use super::{OwnStore, Readers};
use crate::adapter::{self, Env};
use crate::backend::{Api, Credential};
use crate::bounded_read;

/// The variable that moves only the credentials store (new in 2.1.x).
const SECURE_STORAGE_DIR_VAR: &str = "CLAUDE_SECURESTORAGE_CONFIG_DIR";
use crate::adapter::claude::CONFIG_DIR_VAR;
/// A token Claude Code is given in the environment (`claude setup-token`'s, usually).
pub use crate::adapter::claude::OAUTH_TOKEN_VAR;

/// Claude Code's configuration directory in agent's own environment, as its adapter
/// finds it (`crate::adapter::claude::home`).
pub fn config_dir() -> Option<PathBuf> {
    crate::adapter::claude::home(&crate::adapter::Env::process())
}

/// Where the credentials file lives (`m7()`).
pub fn credentials_path() -> Option<PathBuf> {
    let dir = match std::env::var_os(SECURE_STORAGE_DIR_VAR) {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        Some(_) => crate::paths::home()?.join(".claude"),
        None => config_dir()?,
    };
    Some(dir.join(".credentials.json"))
}

/// The macOS Keychain service Claude Code keeps its login under (`Fye("-credentials")`),
/// from the raw values of `CLAUDE_SECURESTORAGE_CONFIG_DIR` and `CLAUDE_CONFIG_DIR`
/// (`None` when unset). Claude Code NFC-normalizes the directory before hashing it; a
/// directory name that is not already NFC would name another item (not handled).
pub fn keychain_service(secure_storage_dir: Option<&str>, config_dir: Option<&str>) -> String {
    let hashed = match secure_storage_dir {
        Some(dir) => Some(dir).filter(|d| !d.is_empty()),
        None => config_dir.filter(|d| !d.is_empty()),
    };
    match hashed {
        Some(dir) => format!(
            "Claude Code-credentials-{}",
            &crate::digest::sha256_hex(dir.as_bytes())[..8]
        ),
        None => "Claude Code-credentials".to_string(),
    }
}

/// The Keychain service for this process's environment.
pub fn keychain_service_from_env() -> String {
    let secure = std::env::var(SECURE_STORAGE_DIR_VAR).ok();
    let config = std::env::var(CONFIG_DIR_VAR).ok();
    keychain_service(secure.as_deref(), config.as_deref())
}

/// The Keychain service Claude Code started in `env` keeps its login under: the default
/// item when neither variable is set there (a default home launched as typed), whatever
/// agent's own environment holds.
fn keychain_service_in(env: &Env) -> String {
    keychain_service(
        env.raw(SECURE_STORAGE_DIR_VAR).as_deref(),
        env.raw(CONFIG_DIR_VAR).as_deref(),
    )
}

/// The login in Claude Code's store: on macOS the Keychain item first, then the file.
pub fn read_login() -> Option<Login> {
    read_keychain().or_else(|| read_login_file(&credentials_path()?))
}

fn read_keychain() -> Option<Login> {
    read_keychain_item(&keychain_service_from_env())
}

#[cfg(target_os = "macos")]
fn read_keychain_item(service: &str) -> Option<Login> {
    parse_store(&super::keychain::read(service, None)?)
}

#[cfg(not(target_os = "macos"))]
fn read_keychain_item(_service: &str) -> Option<Login> {
    None
}

/// The login in a credentials file.
pub fn read_login_file(path: &Path) -> Option<Login> {
    login_from_store(&bounded_read::json(path, bounded_read::LOGIN)?)
}

/// The login in a store's text: JSON, or JSON in hex as some Keychain items hold it.
pub fn parse_store(text: &str) -> Option<Login> {
    let text = text.trim();
    let value: Value = match serde_json::from_str(text) {
        Ok(value) => value,
        Err(_) => serde_json::from_slice(&decode_hex(text)?).ok()?,
    };
    login_from_store(&value)
}

/// The login in a parsed store. Every token in it is registered for redaction, then
/// dropped.
pub fn login_from_store(store: &Value) -> Option<Login> {
    let oauth = store.get("claudeAiOauth")?.as_object()?;
    let access = oauth.get("accessToken").and_then(Value::as_str);
    forget_token(access);
    forget_token(oauth.get("refreshToken").and_then(Value::as_str));
    let text = |key: &str| {
        oauth
            .get(key)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_string)
    };
    let expires_at = oauth
        .get("expiresAt")
        .and_then(Value::as_f64)
        .filter(|ms| *ms > 0.0)
        .and_then(window::from_epoch_millis);
    Some(Login {
        plan: text("subscriptionType"),
        tier: text("rateLimitTier"),
        expires_at,
        token_present: access.is_some_and(|t| !t.trim().is_empty()),
    })
}

/// A token given to Claude Code in `CLAUDE_CODE_OAUTH_TOKEN`, a login like any other
/// (DESIGN §12): registered for redaction; its plan and expiry are not known (a
/// `setup-token` token lasts a year and is inference-only).
pub fn login_from_env_token(token: Option<&str>) -> Option<Login> {
    let token = token.map(str::trim).filter(|t| !t.is_empty())?;
    forget_token(Some(token));
    Some(Login {
        plan: None,
        tier: None,
        expires_at: None,
        token_present: true,
    })
}

/// Claude Code treats its token as expired this long before `expiresAt` (`Ute()`).
const EXPIRY_MARGIN: jiff::SignedDuration = jiff::SignedDuration::from_mins(5);

/// The access token of Claude Code's own login in `config_dir` (on macOS its Keychain item
/// first), for ONE purpose only: the opt-in read of the login's windows from
/// `/api/oauth/usage` ([`ask_windows`], `login_usage = true`). It is registered for
/// redaction before it is returned; the caller sends it in that one request and drops it,
/// never stores or prints it. `None` when there is no token, or it has no expiry, or it has
/// expired or will within Claude Code's own 5-minute margin: an expired token is never
/// used, and never refreshed (refreshing could rotate Claude Code's refresh token and log
/// it out, research §1.1).
pub fn access_token_for_usage(config_dir: &Path, now: jiff::Timestamp) -> Option<String> {
    let store = usage_store(config_dir)?;
    let oauth = store.get("claudeAiOauth")?;
    let token = oauth.get("accessToken").and_then(Value::as_str)?.trim();
    forget_token(Some(token));
    let expires_at = oauth
        .get("expiresAt")
        .and_then(Value::as_f64)
        .filter(|ms| *ms > 0.0)
        .and_then(window::from_epoch_millis)?;
    (!token.is_empty() && now + EXPIRY_MARGIN < expires_at).then(|| token.to_string())
}

#[cfg(target_os = "macos")]
fn usage_store(config_dir: &Path) -> Option<Value> {
    let keychain = super::keychain::read(&keychain_service_from_env(), None).and_then(|text| {
        let text = text.trim().to_string();
        serde_json::from_str(&text)
            .ok()
            .or_else(|| serde_json::from_slice(&decode_hex(&text)?).ok())
    });
    keychain
        .or_else(|| bounded_read::json(&config_dir.join(".credentials.json"), bounded_read::LOGIN))
}

#[cfg(not(target_os = "macos"))]
fn usage_store(config_dir: &Path) -> Option<Value> {
    bounded_read::json(&config_dir.join(".credentials.json"), bounded_read::LOGIN)
}

fn decode_hex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).ok())
        .collect()
}

/// What agent reads of Claude Code's files.
pub const READERS: Readers = Readers {
    cli: &adapter::claude::CLI,
    own_store,
    refused_login: super::serves_every_login,
    last_model: |env| super::claude_transcript::last_model(adapter::claude::records(env).first()?),
    run_actions: |home, cwd, start, _id| {
        super::run_actions::claude(&super::claude_transcript::project_dir_for(home, cwd), start)
    },
    run_windows: Some(|home, cwd, start, _id| {
        let dir = super::claude_transcript::project_dir_for(home, cwd);
        match super::claude_transcript::find_run_limit(&dir, start).map(|row| row.limit) {
            Some(super::claude_transcript::Limit::Window(window)) => vec![window],
            _ => Vec::new(),
        }
    }),
    run_session: Some(|home, cwd, start, id| {
        let dir = super::claude_transcript::project_dir_for(home, cwd);
        super::claude_session::read(&dir, start, id)
    }),
    // Claude Code runs under the id agent gives it (`--session-id`).
    session_costs_a_run: false,
    session_in_output: None,
    limit_in_output: None,
    // Claude Code has no command that says its windows: its login is asked at Anthropic's
    // own usage endpoint, the one Claude Code reads for `/usage` — undocumented, so only
    // where the backend allows it (`login_usage = true`, DESIGN §12).
    ask_windows: Some(AskWindows {
        what: "/api/oauth/usage",
        answerer: Answerer::Vendor,
        ask: ask_windows,
    }),
    calls: Some(|into| {
        let roots = super::claude_calls::roots();
        Some(super::claude_calls::read(&roots, into))
    }),
};

/// The windows of the login `asking` runs on, from Anthropic's usage endpoint at the base
/// URL the rung was resolved with, with the token that login's CLI will use
/// ([`access_token_for_ask`]); nothing is asked without one.
fn ask_windows(asking: &Asking) -> Asked {
    let endpoint = asking.endpoint.filter(|e| e.api == Api::Anthropic);
    let (Some(config_dir), Some(endpoint)) = (asking.records, endpoint) else {
        return Asked::Nothing("not a login on Anthropic's API".to_string());
    };
    let Some(token) = access_token_for_ask(endpoint.credential.clone(), config_dir, asking.now)
    else {
        return Asked::Nothing(
            "no unexpired access token: not asked (the CLI refreshes it at launch)".to_string(),
        );
    };
    super::claude_oauth_usage::ask(&endpoint.base, &token, asking.timeout, asking.now)
}

/// The subscription token the rung's CLI will use: one given in `CLAUDE_CODE_OAUTH_TOKEN`
/// or by an `oauth` account (`credential`, from the one resolver), else Claude Code's own
/// login's while it has not expired. A key or a proxy's token: none.
fn access_token_for_ask(
    credential: Option<Credential>,
    config_dir: &Path,
    now: jiff::Timestamp,
) -> Option<String> {
    match credential {
        Some(credential) if credential.is_subscription_login() => {
            crate::redact::register(&credential.value);
            Some(credential.value)
        }
        Some(_) => None,
        None => access_token_for_usage(config_dir, now),
    }
}

/// The login in the store Claude Code finds in `env`, read as Claude Code reads it there:
/// on macOS the Keychain item its variables in `env` name first (the default item when
/// neither is set, as for a CLI's default home launched with no `CLAUDE_CONFIG_DIR`), then
/// the file.
fn own_store(env: &Env) -> Option<OwnStore> {
    let secure = env.raw(SECURE_STORAGE_DIR_VAR);
    let service = keychain_service_in(env);
    let dir = match secure {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        Some(_) => env.home()?.join(".claude"),
        None => adapter::claude::home(env)?,
    };
    let login =
        read_keychain_item(&service).or_else(|| read_login_file(&dir.join(".credentials.json")))?;
    Some(OwnStore::Login(login))
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) const ACCESS: &str = "sk-ant-oat01-FIXTUREaccessTOKENvalue0123456789abcdef";
    pub(crate) const REFRESH: &str = "sk-ant-ort01-FIXTURErefreshTOKENvalue0123456789abcdef";

    pub(crate) fn store() -> String {
        format!(
            r#"{{"claudeAiOauth":{{"accessToken":"{ACCESS}","refreshToken":"{REFRESH}","expiresAt":1789400000000,
              "scopes":["user:profile","user:inference"],"subscriptionType":"max","rateLimitTier":"default_claude_max_20x",
              "clientId":"9d1c250a-e61b-44d9-88ed-5944d1962f5e"}},"mcpOAuth":{{}}}}"#
        )
    }

    #[test]
    fn a_default_home_launched_with_no_variable_reads_the_default_keychain_item() {
        let removed = [
            CONFIG_DIR_VAR.to_string(),
            SECURE_STORAGE_DIR_VAR.to_string(),
        ];
        let typed = Env::child(&[], &removed);
        assert_eq!(keychain_service_in(&typed), "Claude Code-credentials");
        let moved = [(CONFIG_DIR_VAR.to_string(), "/home/me/.claude".to_string())];
        assert!(
            keychain_service_in(&Env::only(&moved)).starts_with("Claude Code-credentials-"),
            "naming even the default directory is another item"
        );
    }

    #[test]
    fn the_store_gives_plan_tier_and_expiry_and_never_the_token() {
        let login = parse_store(&store()).unwrap();
        assert_eq!(login.plan.as_deref(), Some("max"));
        assert_eq!(login.tier.as_deref(), Some("default_claude_max_20x"));
        assert_eq!(
            login.expires_at,
            Some(jiff::Timestamp::from_second(1_789_400_000).unwrap())
        );
        assert!(login.token_present);
        for shown in [format!("{login:?}"), serde_json::to_string(&login).unwrap()] {
            assert!(!shown.contains("FIXTURE"), "{shown}");
        }
        // Registered for redaction as soon as it was read.
        let echoed = crate::redact::redact(&format!("refused: {ACCESS} / {REFRESH}"));
        assert!(!echoed.contains("FIXTURE"), "{echoed}");
    }

    #[test]
    fn a_hex_keychain_value_is_the_same_store() {
        let hex: String = store()
            .bytes()
            .map(|b| format!("{b:02x}"))
            .collect::<Vec<_>>()
            .concat();
        assert_eq!(parse_store(&hex), parse_store(&store()));
    }

    #[test]
    fn a_logged_out_or_mcp_only_store_is_no_usable_login() {
        let dead = r#"{"claudeAiOauth":{"accessToken":"","refreshToken":"","expiresAt":0}}"#;
        let login = parse_store(dead).unwrap();
        assert!(!login.token_present);
        assert_eq!(login.expires_at, None);
        assert_eq!(parse_store(r#"{"mcpOAuth":{"x":{}}}"#), None);
        assert_eq!(parse_store("not json"), None);
        assert_eq!(parse_store("abc"), None);
    }

    #[test]
    fn the_keychain_item_is_suffixed_by_the_hash_of_a_custom_config_dir() {
        assert_eq!(keychain_service(None, None), "Claude Code-credentials");
        assert_eq!(keychain_service(None, Some("")), "Claude Code-credentials");
        // Hashes checked with `printf %s DIR | sha256sum`.
        assert_eq!(
            keychain_service(None, Some("/home/u/.claude-work")),
            "Claude Code-credentials-9fa37e90"
        );
        // The secure-storage directory wins, and set empty it means "no suffix".
        assert_eq!(
            keychain_service(Some("/s"), Some("/home/u/.claude-work")),
            "Claude Code-credentials-8e295f31"
        );
        assert_eq!(
            keychain_service(Some(""), Some("/home/u/.claude-work")),
            "Claude Code-credentials"
        );
    }

    #[test]
    fn an_env_token_is_a_login_with_no_plan() {
        let login = login_from_env_token(Some(" sk-ant-oat01-ENVfixtureTOKEN0123456789 ")).unwrap();
        assert!(login.token_present);
        assert_eq!(login.plan, None);
        assert!(!format!("{login:?}").contains("ENVfixture"));
        assert!(
            !crate::redact::redact("sk-ant-oat01-ENVfixtureTOKEN0123456789").contains("ENVfixture")
        );
        assert_eq!(login_from_env_token(Some("  ")), None);
        assert_eq!(login_from_env_token(None), None);
    }

    #[test]
    fn the_usage_token_is_given_only_while_it_has_not_expired() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".credentials.json");
        let expires = jiff::Timestamp::from_second(1_789_400_000).unwrap();
        assert_eq!(access_token_for_usage(dir.path(), expires), None);
        std::fs::write(&path, store()).unwrap();
        let before = expires - jiff::SignedDuration::from_mins(6);
        assert_eq!(
            access_token_for_usage(dir.path(), before).as_deref(),
            Some(ACCESS)
        );
        // Inside Claude Code's 5-minute margin, and after: never.
        let near = expires - jiff::SignedDuration::from_mins(4);
        assert_eq!(access_token_for_usage(dir.path(), near), None);
        assert_eq!(access_token_for_usage(dir.path(), expires), None);
        let dead = r#"{"claudeAiOauth":{"accessToken":"","refreshToken":"","expiresAt":0}}"#;
        std::fs::write(&path, dead).unwrap();
        assert_eq!(access_token_for_usage(dir.path(), before), None);
    }

    #[test]
    fn a_credentials_file_is_read_from_its_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".credentials.json");
        assert_eq!(read_login_file(&path), None);
        std::fs::write(&path, store()).unwrap();
        assert_eq!(read_login_file(&path).unwrap().plan.as_deref(), Some("max"));
    }
}
