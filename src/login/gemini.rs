//! Gemini CLI's login, the auth type its settings select, and the model it last ran
//! (research §3.1, §3.4, §3.5). Confirmed in the pinned 0.61.0 bundle
//! (`chunk-JDPZ4CE3.js`):
//!
//! - The global directory is `<home>/.gemini`, home being `$GEMINI_CLI_HOME` when set,
//!   else `os.homedir()` (`homedir()`, `Storage.getGlobalGeminiDir()`).
//! - The login is `oauth_creds.json` there (`Storage.getOAuthCredsPath()`), google-auth
//!   credentials `{access_token, refresh_token, scope, token_type, id_token, expiry_date
//!   (epoch ms)}`. It holds no plan. (With `GEMINI_FORCE_ENCRYPTED_FILE_STORAGE` the login is
//!   in a keychain or an encrypted file instead: not read, so unknown.)
//! - The auth type is `security.auth.selectedType` of `settings.json` there:
//!   `oauth-personal` (LOGIN_WITH_GOOGLE), `gemini-api-key`, `vertex-ai`, `cloud-shell`,
//!   `compute-default-credentials`, `gateway` (`AuthType`). Releases before the `security`
//!   block kept a top-level `selectedAuthType`: read too (from older releases' settings,
//!   not checked against the pinned bundle).
//! - Chats are `<global dir>/tmp/<project id>/chats/session-*.jsonl` (`getProjectTempDir()`,
//!   `SESSION_FILE_PREFIX`; under `SANDBOX=sandbox-exec` the runtime dir is
//!   `~/.cache/.gemini` instead: not followed). A line is metadata, a message `{id, type:
//!   "user"|"gemini"|"info", …, model}` (`recordMessage()` sets `model` on `gemini`
//!   messages only), `{"$set": {…, messages?: […]}}` or `{"$rewindTo": id}`. Older releases
//!   wrote one `.json` object with `messages`.
//!
//! Google stopped serving Gemini CLI's Google login for individual accounts on 2026-06-18
//! (research §3): a present login may still be refused. No local record says so.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{Login, forget_token, records, window};
use super::{OwnStore, Readers};
use crate::adapter::{self, Env};
use crate::bounded_read;

/// `selectedType` of a Google login.
pub const LOGIN_WITH_GOOGLE: &str = "oauth-personal";

/// Gemini CLI's global directory in agent's own environment, as its adapter finds it.
pub fn gemini_dir() -> Option<PathBuf> {
    crate::adapter::gemini::home(&crate::adapter::Env::process())
}

/// The Google login in `<gemini dir>/oauth_creds.json`.
pub fn read_login(gemini_dir: &Path) -> Option<Login> {
    login_from_creds(&bounded_read::json(
        &gemini_dir.join("oauth_creds.json"),
        bounded_read::LOGIN,
    )?)
}

/// The login in parsed credentials; every token is registered for redaction and dropped.
pub fn login_from_creds(creds: &Value) -> Option<Login> {
    creds.as_object()?;
    let access = creds.get("access_token").and_then(Value::as_str);
    for key in ["access_token", "refresh_token", "id_token"] {
        forget_token(creds.get(key).and_then(Value::as_str));
    }
    Some(Login {
        plan: None,
        tier: None,
        expires_at: creds
            .get("expiry_date")
            .and_then(Value::as_f64)
            .and_then(window::from_epoch_millis),
        token_present: access.is_some_and(|t| !t.trim().is_empty()),
    })
}

/// The auth type `<gemini dir>/settings.json` selects.
pub fn read_auth_type(gemini_dir: &Path) -> Option<String> {
    auth_type(&bounded_read::json(
        &gemini_dir.join("settings.json"),
        bounded_read::SETTINGS,
    )?)
}

/// The auth type a parsed settings file selects.
pub fn auth_type(settings: &Value) -> Option<String> {
    settings
        .pointer("/security/auth/selectedType")
        .or_else(|| settings.get("selectedAuthType"))
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
        .map(str::to_string)
}

/// The model of the last Gemini answer in the newest chat under `<gemini dir>/tmp`.
pub fn last_model(gemini_dir: &Path) -> Option<String> {
    let Ok(projects) = std::fs::read_dir(gemini_dir.join("tmp")) else {
        return None;
    };
    let mut chats: Vec<(PathBuf, jiff::Timestamp)> = projects
        .flatten()
        .filter(|p| p.file_type().is_ok_and(|t| t.is_dir()))
        .flat_map(|p| {
            records::files_newest_first(&p.path().join("chats"), None, |n| {
                n.starts_with("session-")
                    && (records::has_extension(n, "jsonl") || records::has_extension(n, "json"))
            })
        })
        .collect();
    chats.sort_by_key(|(_, at)| std::cmp::Reverse(*at));
    chats.iter().find_map(|(path, _)| last_model_in(path))
}

/// The model of the last Gemini answer in one chat file (JSONL, or an older `.json`).
pub fn last_model_in(path: &Path) -> Option<String> {
    if path.extension().is_some_and(|e| e == "json") {
        let chat = bounded_read::json(path, bounded_read::CHAT)?;
        return chat
            .get("messages")?
            .as_array()?
            .iter()
            .filter_map(answer_model)
            .next_back();
    }
    let mut last = None;
    for line in records::lines(path) {
        let Ok(record) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        if let Some(model) = answer_model(&record) {
            last = Some(model);
        } else if let Some(messages) = record.pointer("/$set/messages").and_then(Value::as_array) {
            // A rewrite of the whole conversation replaces what came before.
            last = messages.iter().filter_map(answer_model).next_back();
        }
    }
    last
}

fn answer_model(message: &Value) -> Option<String> {
    message.get("id")?.as_str()?;
    if message.get("type").and_then(Value::as_str) != Some("gemini") {
        return None;
    }
    let model = message.get("model")?.as_str()?.trim();
    (!model.is_empty()).then(|| model.to_string())
}

/// Why Gemini CLI refuses the Google login it finds in `env`: a personal login (no Google
/// Cloud project named, the adapter's rule at [`adapter::gemini::PROJECT_VARS`]) since
/// 2026-06-18. `None` for a Code Assist licence's login, and when its settings select
/// another auth type (a key, Vertex AI), which is not the Google login.
pub fn refused_login(env: &Env) -> Option<&'static str> {
    let dir = adapter::gemini::home(env)?;
    if read_auth_type(&dir).is_some_and(|t| t != LOGIN_WITH_GOOGLE) {
        return None;
    }
    let named = |var: &str| env.get(var).is_some_and(|v| !v.trim().is_empty());
    if adapter::gemini::PROJECT_VARS.iter().any(|var| named(var))
        || names_a_project(&dir.join(".env"))
    {
        return None;
    }
    Some(adapter::gemini::PERSONAL_LOGIN_GONE)
}

/// Whether a `.env` file names a project. The CLI loads the first `.env` it finds from its
/// folder up (`.gemini/.env`, then `.env`), else `<gemini dir>/.env`, else `~/.env`
/// (its docs, "Persisting environment variables with .env files"). Only the one in its own
/// directory is read here: the others depend on the folder it runs in, so a project named
/// only in a project's `.env` is not seen (the backend's `env` can name it).
fn names_a_project(path: &Path) -> bool {
    let Some(text) = bounded_read::text(path, bounded_read::SETTINGS) else {
        return false;
    };
    text.lines().any(|line| {
        let line = line.trim();
        let line = line.strip_prefix("export ").unwrap_or(line);
        line.split_once('=').is_some_and(|(name, value)| {
            adapter::gemini::PROJECT_VARS.contains(&name.trim())
                && !value.trim().trim_matches(['"', '\'']).is_empty()
        })
    })
}

/// What agent reads of Gemini CLI's files (it keeps no record of a run agent reads for
/// what the run did).
pub const READERS: Readers = Readers {
    cli: &adapter::gemini::CLI,
    own_store,
    refused_login,
    last_model: |env| last_model(&adapter::gemini::home(env)?),
    run_actions: |home, _cwd, _start, id| super::gemini_session::actions(&home.join("tmp"), id),
    run_windows: None,
    run_session: Some(|home, cwd, start, id| {
        super::gemini_session::read(&home.join("tmp"), cwd, start, id)
    }),
    session_costs_a_run: false,
    session_in_output: None,
    limit_in_output: Some(super::gemini_session::limit_in_output),
    ask_windows: None,
    calls: Some(|into| {
        let roots = super::gemini_calls::roots();
        Some(super::gemini_calls::read(&roots, into))
    }),
};

/// The Google login in the Gemini CLI home it finds in `env`; another auth type its
/// settings select (an API key, Vertex AI) is not the Google login.
fn own_store(env: &Env) -> Option<OwnStore> {
    let dir = adapter::gemini::home(env)?;
    let selected = read_auth_type(&dir);
    if selected.as_deref().is_some_and(|t| t != LOGIN_WITH_GOOGLE) {
        return None;
    }
    read_login(&dir).map(OwnStore::Login)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CREDS: &str = r#"{"access_token":"ya29.GEMINIFIXTUREaccess0123456789","refresh_token":"1//0GEMINIFIXTURErefresh0123456789",
        "scope":"https://www.googleapis.com/auth/cloud-platform openid","token_type":"Bearer",
        "id_token":"eyJhbGciOiJSUzI1NiJ9.eyJHRU1JTklGSVhUVVJFIjoxfQ.GEMINIFIXTUREsig","expiry_date":1760000000000}"#;

    #[test]
    fn the_creds_give_expiry_and_presence_and_never_a_token() {
        let login = login_from_creds(&serde_json::from_str(CREDS).unwrap()).unwrap();
        assert_eq!(login.expires_at.unwrap().as_second(), 1_760_000_000);
        assert!(login.token_present);
        assert_eq!(login.plan, None);
        let shown = format!("{login:?}{}", serde_json::to_string(&login).unwrap());
        assert!(!shown.contains("FIXTURE"));
        assert!(!crate::redact::redact(CREDS).contains("GEMINIFIXTUREaccess"));
        assert_eq!(login_from_creds(&Value::Null), None);
    }

    #[test]
    fn a_google_login_is_personal_unless_a_project_is_named_and_another_auth_type_is_not_refused() {
        let dir = tempfile::tempdir().unwrap();
        let gemini = dir.path().join(".gemini");
        std::fs::create_dir_all(&gemini).unwrap();
        let home = dir.path().to_string_lossy().into_owned();
        let set = vec![("GEMINI_CLI_HOME".to_string(), home.clone())];
        let env = Env::child(&set, &[]);
        let google = r#"{"security": {"auth": {"selectedType": "oauth-personal"}}}"#;
        std::fs::write(gemini.join("settings.json"), google).unwrap();
        assert_eq!(
            refused_login(&env),
            Some(adapter::gemini::PERSONAL_LOGIN_GONE)
        );
        // A commented-out or empty project names none.
        std::fs::write(
            gemini.join(".env"),
            "# GOOGLE_CLOUD_PROJECT=x\nGOOGLE_CLOUD_PROJECT=\"\"\n",
        )
        .unwrap();
        assert!(refused_login(&env).is_some());
        std::fs::write(gemini.join(".env"), "GOOGLE_CLOUD_PROJECT_ID = 'acme'\n").unwrap();
        assert_eq!(refused_login(&env), None);
        std::fs::remove_file(gemini.join(".env")).unwrap();
        let with_project = vec![
            ("GEMINI_CLI_HOME".to_string(), home),
            ("GOOGLE_CLOUD_PROJECT".to_string(), "acme".to_string()),
        ];
        assert_eq!(refused_login(&Env::child(&with_project, &[])), None);
        std::fs::write(
            gemini.join("settings.json"),
            r#"{"security": {"auth": {"selectedType": "vertex-ai"}}}"#,
        )
        .unwrap();
        assert_eq!(refused_login(&env), None);
    }

    #[test]
    fn the_auth_type_is_read_from_the_current_and_the_old_settings_layout() {
        let current = serde_json::json!({"security": {"auth": {"selectedType": "oauth-personal"}}, "model": {"name": "gemini-2.5-pro"}});
        assert_eq!(auth_type(&current).as_deref(), Some(LOGIN_WITH_GOOGLE));
        let old = serde_json::json!({"selectedAuthType": "gemini-api-key"});
        assert_eq!(auth_type(&old).as_deref(), Some("gemini-api-key"));
        assert_eq!(auth_type(&serde_json::json!({})), None);
    }

    #[test]
    fn the_last_model_is_the_newest_chats_last_answer() {
        let dir = tempfile::tempdir().unwrap();
        let chats = dir.path().join("tmp/abc123/chats");
        std::fs::create_dir_all(&chats).unwrap();
        let lines = [
            r#"{"sessionId":"s","projectHash":"h","startTime":"2026-09-14T10:00:00Z","lastUpdated":"2026-09-14T10:00:00Z","kind":"main"}"#,
            r#"{"id":"1","timestamp":"2026-09-14T10:00:01Z","type":"user","content":[{"text":"hi"}]}"#,
            r#"{"id":"2","timestamp":"2026-09-14T10:00:02Z","type":"gemini","content":"hello","model":"gemini-3-pro-preview"}"#,
            r#"{"$set":{"lastUpdated":"2026-09-14T10:00:02Z"}}"#,
            r#"{"id":"3","timestamp":"2026-09-14T10:00:03Z","type":"info","content":"note"}"#,
            r#"{"id":"4","timestamp":"2026-09-14T10:00:04Z","type":"user","content":[{"text":"again"}]}"#,
        ]
        .join("\n");
        std::fs::write(chats.join("session-2026-09-14T10-00-5f0c1a2b.jsonl"), lines).unwrap();
        assert_eq!(
            last_model(dir.path()).as_deref(),
            Some("gemini-3-pro-preview")
        );
        // A user's or an info record naming a model is not an answer.
        let said = chats.join("session-said.jsonl");
        std::fs::write(
            &said,
            [
                r#"{"id":"1","type":"gemini","content":"hello","model":"gemini-3-pro-preview"}"#,
                r#"{"id":"2","type":"user","content":[{"text":"hi"}],"model":"gemini-evil"}"#,
                r#"{"id":"3","type":"info","content":"note","model":"gemini-evil"}"#,
            ]
            .join("\n"),
        )
        .unwrap();
        assert_eq!(
            last_model_in(&said).as_deref(),
            Some("gemini-3-pro-preview")
        );
        let rewritten = r#"{"$set":{"messages":[{"id":"9","type":"gemini","content":"x","model":"gemini-3.5-flash"}]}}"#;
        let path = chats.join("session-b.jsonl");
        std::fs::write(&path, rewritten).unwrap();
        assert_eq!(last_model_in(&path).as_deref(), Some("gemini-3.5-flash"));
        let old = chats.join("session-old.json");
        std::fs::write(
            &old,
            r#"{"sessionId":"s","messages":[{"id":"1","type":"gemini","model":"gemini-2.5-pro"},{"id":"2","type":"user"}]}"#,
        )
        .unwrap();
        assert_eq!(last_model_in(&old).as_deref(), Some("gemini-2.5-pro"));
        assert_eq!(last_model(&dir.path().join("none")), None);
    }
}
