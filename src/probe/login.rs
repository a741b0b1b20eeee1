//! A rung whose credential is a subscription login (DESIGN §12): never probed with a
//! prompt — the vendors reserve these logins for their own CLIs, and the real API refuses
//! a subscription token from anything else — so it runs unprobed, guarded by the fast-fail
//! net, and is judged by its windows when a CLI has reported them. Unknown is not dead.
//!
//! What is kept of a login is what `login::` reads: whether it is there, its plan and its
//! access token's expiry; never a token.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use jiff::Timestamp;
use serde_json::json;

use crate::adapter::{self, Env, Family};
use crate::backend::{Credential, Endpoint};
use crate::state::window::Window;

/// A login a rung runs on.
#[derive(Debug, Clone, PartialEq)]
pub struct LoginRung {
    /// The CLI whose login it is.
    pub family: Family,
    /// The key its windows are kept under (its adapter's `login_key`): never a token.
    pub key: String,
    /// Where it was found: `store`, `env:VAR`, `account:NAME`.
    pub origin: String,
    pub plan: Option<String>,
    pub expires_at: Option<Timestamp>,
    /// Where its CLI writes the record of each run, when agent reads those records for the
    /// login's windows and for what a run did (Claude Code's configuration directory,
    /// Codex's home): set once with the rung (`launch::resolve::ready`), by its adapter.
    pub records: Option<PathBuf>,
    /// Why its CLI no longer serves this kind of login (Gemini CLI's personal Google
    /// logins, read by `login::readers::refused_login`): nothing proves the rung and a
    /// launch passes over it.
    pub refused: Option<&'static str>,
}

/// What a CLI's own login store holds, as the launch floor reads it (`login::`).
#[derive(Debug, Clone)]
pub enum Store {
    /// A subscription login.
    Login(Box<LoginRung>),
    /// A key the CLI keeps in its store (`codex login --api-key`): a key, not a login.
    Key(Credential),
    /// Nothing agent can see.
    Empty,
}

/// What a rung's endpoint says about a login: `Ok(Some)` a login to run unprobed,
/// `Ok(None)` not a login, `Err(store)` the CLI falls back to its own store and the store
/// holds no login (the caller decides what that means). `child` is the launched CLI's
/// environment: the login is named by its adapter from it, as parking and the statusline
/// name it, and `read_store` reads the store the CLI would find there.
pub fn of_endpoint(
    endpoint: &Endpoint,
    account: Option<&str>,
    child: &Env,
    read_store: &dyn Fn(Family, &Env) -> Store,
) -> Result<Option<LoginRung>, Store> {
    if let Some(credential) = &endpoint.credential {
        if !credential.is_subscription_login() {
            return Ok(None);
        }
        // A subscription token given in a variable or an account: its plan and expiry are
        // not known (a `setup-token` token lasts a year).
        let account = account.map(|name| adapter::Account {
            name,
            is_login: true,
        });
        let key = adapter::claude::token_login_key(child, account, &credential.value);
        let origin = match account {
            Some(account) => format!("account:{}", account.name),
            None => credential.source.clone(),
        };
        return Ok(Some(LoginRung {
            family: Family::Claude,
            key,
            origin,
            plan: None,
            expires_at: None,
            records: None,
            refused: None,
        }));
    }
    let Some(own) = endpoint.own_login else {
        return Ok(None);
    };
    match read_store(own, child) {
        Store::Login(login) => Ok(Some(*login)),
        other => Err(other),
    }
}

impl LoginRung {
    /// `login (max)`, `login (Claude Code, from env:CLAUDE_CODE_OAUTH_TOKEN)`: its plan, else
    /// its CLI as people know it.
    pub fn name(&self) -> String {
        let mut parts = vec![
            self.plan
                .clone()
                .unwrap_or_else(|| self.family.display_name().into()),
        ];
        if self.origin != "store" {
            parts.push(format!("from {}", self.origin));
        }
        format!("login ({})", parts.join(", "))
    }

    /// The windows known for this login at `now`, from the shared store.
    pub fn windows(&self, state_dir: &Path, now: Timestamp) -> Vec<Window> {
        crate::state::windows::Windows::new(state_dir).known(&self.key, now)
    }

    /// `login (max), token expires 2026-09-14; 5-hour 42% (resets …)`: what it is and its
    /// windows, for `--accounts list`.
    pub fn describe_brief(&self, windows: &[Window], now: Timestamp) -> String {
        self.describe_beside(windows, now, None)
    }

    /// [`Self::describe_brief`] beside a state that already says when one of its windows
    /// resets (a row parked until `reset_said_ms`, unix ms): that reset is not said a
    /// second time.
    pub fn describe_beside(
        &self,
        windows: &[Window],
        now: Timestamp,
        reset_said_ms: Option<u64>,
    ) -> String {
        let mut text = self.name();
        if let Some(at) = self.expires_at {
            let _ = write!(text, ", token expires {}", date(at));
        }
        if windows.is_empty() {
            text.push_str("; window unknown");
        } else {
            let history = crate::state::windows::Windows::new(&crate::paths::state_dir());
            let shown: Vec<String> = windows
                .iter()
                .map(|w| {
                    let readings = history.history(&self.key, &w.scope, now);
                    let full = crate::state::forecast::forecast(&readings, now);
                    let said = reset_said_ms.is_some()
                        && reset_said_ms == u64::try_from(w.resets_at.as_millisecond()).ok();
                    describe_window_with(w, full.map(|f| f.full_at), now, !said)
                })
                .collect();
            let _ = write!(text, "; {}", shown.join(", "));
        }
        text
    }

    /// What a launch says of it running unprobed: what it is and its windows (why it is
    /// not probed is its state's to say, once).
    pub fn describe(&self, windows: &[Window], now: Timestamp) -> String {
        self.describe_brief(windows, now)
    }

    /// The login as `--list --json` and `--doctor --json` show it: never a token.
    pub fn json(&self, windows: &[Window], now: Timestamp) -> serde_json::Value {
        json!({
            "cli": self.family.name(),
            "key": self.key,
            "origin": self.origin,
            "plan": self.plan,
            "token_expires": self.expires_at.map(date),
            "windows": windows.iter().map(|w| json!({
                "window": w.scope.describe(),
                "used_percent": w.used_percent,
                "resets_at": w.resets_at.to_string(),
                "source": w.source,
                "age_seconds": now.duration_since(w.observed_at).as_secs().max(0),
            })).collect::<Vec<_>>(),
        })
    }
}

/// `5-hour 42% (resets Thu 15:00, statusline, 3 min ago)`; with a forecast before the
/// reset, `5-hour 62% · full ≈14:20 at this pace (resets …)` — an estimate from its readings.
pub fn describe_window(window: &Window, full_at: Option<Timestamp>, now: Timestamp) -> String {
    describe_window_with(window, full_at, now, true)
}

/// [`describe_window`], its reset left out unless `reset` (said beside it already).
fn describe_window_with(
    window: &Window,
    full_at: Option<Timestamp>,
    now: Timestamp,
    reset: bool,
) -> String {
    let source = serde_json::to_value(window.source)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    let pace = full_at.map_or_else(String::new, |at| {
        format!(" · full ≈{} at this pace", local(at, "%H:%M"))
    });
    let resets = if reset {
        format!(
            "resets {}, ",
            local(
                window.resets_at,
                crate::state::window::other_day_format(window.resets_at, now)
            )
        )
    } else {
        String::new()
    };
    format!(
        "{} {:.0}%{pace} ({resets}{source}, {} ago)",
        window.scope.describe(),
        window.shown_percent(),
        age(now.duration_since(window.observed_at).as_secs().max(0)),
    )
}

/// A date in the local zone, `2026-09-14`.
pub fn date(at: Timestamp) -> String {
    local(at, "%Y-%m-%d")
}

fn local(at: Timestamp, format: &str) -> String {
    at.to_zoned_datetime(jiff::tz::TimeZone::system())
        .strftime(format)
        .to_string()
}

fn age(seconds: i64) -> String {
    match seconds {
        s if s < 60 => format!("{s} s"),
        s if s < 3600 => format!("{} min", s / 60),
        s if s < 86_400 => format!("{} h", s / 3600),
        s => format!("{} d", s / 86_400),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::window::{Scope, Source};

    #[test]
    fn a_login_with_no_window_says_window_unknown_and_never_a_token() {
        let login = LoginRung {
            family: Family::Claude,
            key: "claude:/h/.claude".into(),
            origin: "store".into(),
            plan: Some("max".into()),
            expires_at: None,
            records: None,
            refused: None,
        };
        let now: Timestamp = "2026-09-14T12:00:00Z".parse().unwrap();
        let text = login.describe(&[], now);
        assert!(text.starts_with("login (max); window unknown"), "{text}");
        let window = Window::new(
            Scope::FiveHour,
            42.0,
            "2026-09-14T15:00:00Z".parse().unwrap(),
            Source::Statusline,
            "2026-09-14T11:57:00Z".parse().unwrap(),
        )
        .unwrap();
        let text = login.describe(&[window], now);
        assert!(text.contains("5-hour 42% (resets "), "{text}");
        assert!(text.contains("statusline, 3 min ago"), "{text}");
    }
}
