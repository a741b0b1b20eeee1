//! The opt-in read of a Claude login's windows from Anthropic's undocumented
//! `GET {base}/api/oauth/usage` (`login_usage = true` on the backend; research §1.2,
//! DESIGN §12). It costs no tokens, but it is off by default: the endpoint is not
//! documented, the vendor's terms reserve the login for Claude Code, and the endpoint is
//! rate-limited per token. When on, it is asked only where nothing fresh is known of the
//! login's windows (a passing check or launch says nothing of them) and the rung is not
//! cooling down, with the access token only while it has not expired
//! (never refreshed), at most once every [`THROTTLE`] per login across every agent
//! process, and never again before its own `429`'s `retry-after`. What it says is recorded
//! under the login's key in `windows.json`; parking does the rest.

use std::collections::BTreeMap;
use std::io::Read as _;
use std::path::Path;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};

use crate::adapter::Family;
use crate::backend::Api;
use crate::config::Config;
use crate::launch::parking;
use crate::launch::rung::Rung;
use crate::state::json_file::JsonFile;
use crate::state::window::{Window, rfc3339};
use crate::state::windows::Windows;

/// At most one call per login this often, shared by every agent process.
pub const THROTTLE: SignedDuration = parking::FRESH;

/// Claude Code's own bound for this call (`Ade()`: `timeout: 5000`).
const TIMEOUT: Duration = Duration::from_secs(5);

/// An answer larger than this is not the endpoint's.
const BODY_LIMIT: u64 = 64 * 1024;

/// When each login was last asked, and until when the endpoint asked not to be.
#[derive(Debug, Default, Serialize, Deserialize)]
struct AskedFile {
    #[serde(default)]
    asked: BTreeMap<String, At>,
    /// From a `429`: no call for that login before then.
    #[serde(default)]
    refused_until: BTreeMap<String, At>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
struct At {
    #[serde(with = "rfc3339")]
    at: Timestamp,
}

/// For a Claude rung on a subscription login of a backend with `login_usage = true`, whose
/// windows are not freshly known: asks the endpoint (see the module's doc) and records the
/// windows it names. Returns them (empty when nothing was asked or learnt). The caller
/// does not ask for a rung that is cooling down.
pub fn ask(config: &Config, rung: &Rung, state_dir: &Path, now: Timestamp) -> Vec<Window> {
    if !rung.backend.login_usage {
        return Vec::new();
    }
    let (Some(login), Ok(ready)) = (parking::login_of(rung), &rung.state) else {
        return Vec::new();
    };
    // Anthropic's usage endpoint answers for a Claude login only.
    let (Family::Claude, Some(config_dir)) = (login.family, &login.records) else {
        return Vec::new();
    };
    let windows = Windows::new(state_dir);
    let fresh = |at: Timestamp| now.duration_since(at) < THROTTLE;
    if windows
        .known(&login.key, now)
        .iter()
        .any(|w| fresh(w.observed_at))
    {
        return Vec::new();
    }
    // The endpoint the rung was resolved with: never a second resolution here.
    let Some(endpoint) = ready
        .plan
        .endpoint
        .clone()
        .filter(|e| e.api == Api::Anthropic)
    else {
        return Vec::new();
    };
    let Some(token) = access_token(endpoint.credential, config_dir, now) else {
        crate::term::debug(&format!(
            "{}: no unexpired access token: its windows are not asked (the CLI refreshes it at launch)",
            rung.label()
        ));
        return Vec::new();
    };
    let base = endpoint.base;
    let asked = JsonFile::<AskedFile>::new(state_dir, "login_usage.json")
        .rebuilt_by("the logins' windows are asked again after a few minutes");
    // Checked and marked under one lock: two agents starting together make one call.
    let go = asked.update(|file| {
        file.asked.retain(|_, asked| fresh(asked.at));
        file.refused_until.retain(|_, until| until.at > now);
        if file.refused_until.contains_key(&login.key) || file.asked.contains_key(&login.key) {
            return false;
        }
        file.asked.insert(login.key.clone(), At { at: now });
        true
    });
    match go {
        Ok(true) => {}
        Ok(false) => return Vec::new(),
        Err(err) => {
            // The throttle cannot be kept: no call.
            crate::term::debug(&format!("login_usage.json not updated: {err:#}"));
            return Vec::new();
        }
    }
    crate::term::debug(&format!(
        "{}: asking {base}/api/oauth/usage for its windows",
        rung.label()
    ));
    let timeout = TIMEOUT.min(config.probe_timeout);
    let found = match call(&base, &token, timeout, now) {
        Answer::Windows(found) => found,
        Answer::Refused { until } => {
            crate::term::debug(&format!(
                "/api/oauth/usage: 429, not asked again before {until}"
            ));
            if let Err(err) = asked.update(|file| {
                file.refused_until
                    .insert(login.key.clone(), At { at: until });
            }) {
                crate::term::debug(&format!("login_usage.json not updated: {err:#}"));
            }
            return Vec::new();
        }
        Answer::Nothing(why) => {
            crate::term::debug(&format!("/api/oauth/usage: no windows ({why})"));
            return Vec::new();
        }
    };
    if let Err(err) = windows.record(&login.key, &found, now) {
        crate::term::debug(&format!("windows.json not updated: {err:#}"));
    }
    found
}

/// The subscription token the rung's CLI will use: one given in `CLAUDE_CODE_OAUTH_TOKEN`
/// or by an `oauth` account (`credential`, from the one resolver), else Claude Code's own
/// login's while it has not expired. A key or a proxy's token: none.
fn access_token(
    credential: Option<crate::backend::Credential>,
    config_dir: &Path,
    now: Timestamp,
) -> Option<String> {
    match credential {
        Some(credential) if credential.is_subscription_login() => {
            crate::redact::register(&credential.value);
            Some(credential.value)
        }
        Some(_) => None,
        None => crate::login::claude::access_token_for_usage(config_dir, now),
    }
}

enum Answer {
    Windows(Vec<Window>),
    Refused { until: Timestamp },
    Nothing(String),
}

fn call(base: &str, token: &str, timeout: Duration, now: Timestamp) -> Answer {
    let agent = crate::http::client(timeout);
    let response = agent
        .get(&format!("{base}/api/oauth/usage"))
        .header("authorization", &format!("Bearer {token}"))
        .header("anthropic-beta", "oauth-2025-04-20")
        .header("accept", "application/json")
        .call();
    let mut response = match response {
        Ok(response) => response,
        Err(err) => return Answer::Nothing(crate::redact::redact(&err.to_string())),
    };
    let status = response.status().as_u16();
    let headers: Vec<(String, String)> = response
        .headers()
        .iter()
        .map(|(name, value)| {
            (
                name.as_str().to_string(),
                value.to_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    let mut bytes = Vec::new();
    let read = response
        .body_mut()
        .as_reader()
        .take(BODY_LIMIT)
        .read_to_end(&mut bytes);
    let body = String::from_utf8_lossy(&bytes);
    if status == 429 {
        let clears = crate::probe::clears_at(&headers, &body, std::time::SystemTime::now())
            .and_then(|at| Timestamp::try_from(at).ok());
        // Without a word of when, it is left alone for the throttle's length at least.
        let until = clears.map_or(now + THROTTLE, |at| at.max(now + THROTTLE));
        return Answer::Refused { until };
    }
    if status != 200 {
        return Answer::Nothing(format!("HTTP {status}"));
    }
    if let Err(err) = read {
        return Answer::Nothing(err.to_string());
    }
    match serde_json::from_str(&body) {
        Ok(value) => Answer::Windows(crate::login::claude_oauth_usage::parse(&value, now)),
        Err(err) => Answer::Nothing(format!("not JSON: {err}")),
    }
}
