//! What a CLI's own login store holds, read with `login::` for the probe planner (which,
//! on the calls floor beside `login`, cannot read it itself): a subscription login with
//! its plan and expiry, a key the CLI keeps there, or nothing. Never a login's token.

use std::path::Path;

use crate::backend::{AuthScheme, Credential, OwnLogin};
use crate::bounded_read;
use crate::login::{self, Cli, Login};
use crate::probe::login::{LoginRung, Store};

/// The store of `own`, as the CLI itself would find it.
pub fn read(own: OwnLogin) -> Store {
    read_login(own).unwrap_or(Store::Empty)
}

fn read_login(own: OwnLogin) -> Option<Store> {
    match own {
        OwnLogin::ClaudeCode => {
            let dir = login::claude::config_dir()?;
            found(Cli::Claude, &dir, login::claude::read_login()?)
        }
        OwnLogin::Codex => {
            let home = login::codex::codex_home()?;
            match login::codex::read_login()? {
                login::codex::Auth::ChatGpt(login) => found(Cli::Codex, &home, login),
                login::codex::Auth::ApiKey => codex_key(&home).map(Store::Key),
                login::codex::Auth::Other(_) => None,
            }
        }
        OwnLogin::GeminiCli => {
            let dir = login::gemini::gemini_dir()?;
            // Another auth type (an API key, Vertex AI) is not the Google login.
            let selected = login::gemini::read_auth_type(&dir);
            if selected
                .as_deref()
                .is_some_and(|t| t != login::gemini::LOGIN_WITH_GOOGLE)
            {
                return None;
            }
            found(Cli::Gemini, &dir, login::gemini::read_login(&dir)?)
        }
        // Where agy keeps its login is not confirmed (research §4.1): an installed agy is
        // taken as logged in; its windows come from its own `/usage`.
        OwnLogin::Antigravity => Some(Store::Login(LoginRung {
            cli: Cli::Agy.as_str(),
            key: login::key(Cli::Agy, "default"),
            origin: "store".to_string(),
            plan: None,
            expires_at: None,
        })),
    }
}

/// A login with a token, keyed by the directory the CLI keeps it in.
fn found(cli: Cli, dir: &Path, login: Login) -> Option<Store> {
    login.token_present.then(|| {
        Store::Login(LoginRung {
            cli: cli.as_str(),
            key: login::key(cli, &dir.display().to_string()),
            origin: "store".to_string(),
            plan: login.plan,
            expires_at: login.expires_at,
        })
    })
}

/// The key `codex login --api-key` keeps in `auth.json`: a key, not a login.
fn codex_key(home: &Path) -> Option<Credential> {
    let store = bounded_read::json(&home.join("auth.json"), bounded_read::LOGIN)?;
    let value = store.get("OPENAI_API_KEY")?.as_str()?.trim().to_string();
    crate::redact::register(&value);
    (!value.is_empty()).then(|| Credential {
        value,
        source: "codex-auth:apikey".into(),
        auth: AuthScheme::Bearer,
    })
}
