//! Credential pools (DESIGN.md §7, seed 004): several accounts per backend, treated as a
//! managed fleet. Subscription tokens and API keys, each with its own health, taken in the
//! backend's rotation order; within a rung the next healthy account for the same model is
//! tried before the cascade descends. The rung table is expanded to one row per account
//! ([`expand`]), so every part of agent that walks the table walks the accounts too.

pub mod check;
pub mod health;
pub mod rotation;
pub mod store;

use std::path::Path;

use serde::{Deserialize, Serialize};

pub use rotation::Rotation;

use crate::backend::cli_settings::Family;
use crate::config::{Backend, Config, RungDef};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A subscription token (`sk-ant-oat01-…`): paid for by the month.
    Oauth,
    /// A pay-per-token key.
    ApiKey,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Oauth => "oauth",
            Kind::ApiKey => "api_key",
        }
    }
}

/// One account, as configured (`[[accounts]]`) or stored by `agent --accounts add`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AccountDef {
    pub name: String,
    /// The backend whose launches and probes use it.
    pub backend: String,
    pub kind: Kind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_env: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_cmd: Option<String>,
    /// Only in `credentials.toml` (0600): never in the configuration file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
    /// The variable the launched CLI gets the secret in (default: by CLI and kind).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_var: Option<String>,
    #[serde(default = "default_priority")]
    pub priority: i64,
    /// 0: no cap.
    #[serde(default)]
    pub monthly_budget_usd: f64,
    /// `YYYY-MM-DD`: drives the token-expiring warnings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires: Option<String>,
    /// Saved while offline: never checked against the API.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unverified: bool,
}

fn default_priority() -> i64 {
    100
}

/// The largest monthly cap an account may have (USD): beyond any real spend.
const MONTHLY_BUDGET_MAX: f64 = 1e9;
/// Account names are shown in notices and reports, one per line, and key state files.
const NAME_MAX_CHARS: usize = 100;

/// A field of an account that cannot be used as given, and why.
#[derive(Debug)]
pub struct Invalid {
    /// The field, as written in the file (`name`, `monthly_budget_usd`).
    pub key: &'static str,
    pub message: String,
}

/// Why `name` cannot name an account, if it cannot.
pub fn name_problem(name: &str) -> Option<String> {
    if name.trim().is_empty() {
        return Some("must not be empty".into());
    }
    if name.chars().any(char::is_control) {
        return Some("must be one line, without control characters".into());
    }
    if name.chars().count() > NAME_MAX_CHARS {
        return Some(format!("must be at most {NAME_MAX_CHARS} characters"));
    }
    None
}

impl AccountDef {
    /// The checks every account passes wherever it comes from (the configuration file,
    /// `credentials.toml`, `agent --accounts add`): a usable name, a finite cap, a real date.
    pub fn check(&self) -> Result<(), Invalid> {
        if let Some(message) = name_problem(&self.name) {
            return Err(Invalid {
                key: "name",
                message,
            });
        }
        crate::bounds::amount(self.monthly_budget_usd, MONTHLY_BUDGET_MAX).map_err(|why| {
            Invalid {
                key: "monthly_budget_usd",
                message: format!("{why} (USD; 0: no cap)"),
            }
        })?;
        if let Some(expires) = &self.expires
            && expires.parse::<jiff::civil::Date>().is_err()
        {
            return Err(Invalid {
                key: "expires",
                message: "expected a date, YYYY-MM-DD".into(),
            });
        }
        Ok(())
    }

    /// The variable the launched CLI reads this account's secret from.
    pub fn secret_var(&self, backend: &Backend) -> String {
        if let Some(var) = &self.secret_var {
            return var.clone();
        }
        match (
            Family::of_backend(&backend.name, &backend.command),
            self.kind,
        ) {
            (Family::Claude, Kind::Oauth) => "CLAUDE_CODE_OAUTH_TOKEN".into(),
            (Family::Claude, Kind::ApiKey) => "ANTHROPIC_API_KEY".into(),
            (Family::Gemini, _) => "GEMINI_API_KEY".into(),
            (Family::Codex, _) => crate::backend::cli_settings::codex_config()
                .and_then(|c| c.custom_provider().and_then(|(_, p)| p.env_key.clone()))
                .unwrap_or_else(|| "OPENAI_API_KEY".into()),
            (Family::Other, _) => "OPENAI_API_KEY".into(),
        }
    }

    /// Reads the secret: the configured variable, command or stored value. An unreadable or
    /// empty secret makes the account broken.
    pub fn read_secret(&self) -> anyhow::Result<String> {
        let what = format!("account {}", self.name);
        if let Some(secret) = &self.secret {
            if secret.trim().is_empty() {
                anyhow::bail!("{what}: the stored secret is empty");
            }
            crate::redact::register(secret);
            return Ok(secret.clone());
        }
        let value = self.secret_env.as_ref().map(|var| format!("${{{var}}}"));
        crate::secret::resolve(value.as_deref(), self.secret_cmd.as_deref(), &what)
    }

    /// Days left before `expires`, when set.
    pub fn days_left(&self) -> Option<i64> {
        let expires: jiff::civil::Date = self.expires.as_deref()?.parse().ok()?;
        let today = jiff::ZonedDateTime::now().date();
        Some(i64::from((expires - today).get_days()))
    }

    /// The 30- and 7-day warnings, when due.
    pub fn expiry_warning(&self) -> Option<String> {
        let days = self.days_left()?;
        match days {
            d if d < 0 => Some(format!(
                "account {}: its token expired {} days ago",
                self.name, -d
            )),
            d if d <= 7 => Some(format!(
                "account {}: its token expires in {d} days — replace it now",
                self.name
            )),
            d if d <= 30 => Some(format!(
                "account {}: its token expires in {d} days",
                self.name
            )),
            _ => None,
        }
    }
}

/// Environment variables that carry a credential for this CLI family: removed from the
/// launched CLI's environment so it uses the chosen account and no other.
pub fn credential_vars(backend: &Backend, accounts: &[AccountDef]) -> Vec<String> {
    let mut vars: Vec<String> = match Family::of_backend(&backend.name, &backend.command) {
        Family::Claude => vec![
            "ANTHROPIC_API_KEY".into(),
            "ANTHROPIC_AUTH_TOKEN".into(),
            "CLAUDE_CODE_OAUTH_TOKEN".into(),
        ],
        Family::Gemini => vec!["GEMINI_API_KEY".into(), "GOOGLE_API_KEY".into()],
        Family::Codex | Family::Other => vec!["OPENAI_API_KEY".into()],
    };
    for account in accounts.iter().filter(|a| a.backend == backend.name) {
        for var in [
            account.secret_env.clone(),
            Some(account.secret_var(backend)),
        ]
        .into_iter()
        .flatten()
        {
            if !vars.contains(&var) {
                vars.push(var);
            }
        }
    }
    vars
}

/// Adds the accounts stored in `credentials.toml` to the configured ones.
pub fn load_stored(config: &mut Config) -> anyhow::Result<()> {
    for account in store::read()? {
        if config.accounts.iter().any(|a| a.name == account.name) {
            crate::term::warn(&format!(
                "account {} is both in the configuration and in credentials.toml: the configuration wins",
                account.name
            ));
            continue;
        }
        if config.backends.contains_key(&account.backend) {
            config.accounts.push(account);
        }
    }
    Ok(())
}

/// Expands the rung table: a rung whose backend has accounts becomes one row per usable
/// account, in the backend's rotation order. `advance` moves round-robin on by one (a
/// launch); reports leave it where it is.
pub fn expand(config: &mut Config, state_dir: &Path, advance: bool) {
    if config.accounts.is_empty() {
        return;
    }
    let mut orders: std::collections::BTreeMap<String, Vec<String>> =
        std::collections::BTreeMap::new();
    for backend in config.backends.values() {
        let accounts: Vec<&AccountDef> = config
            .accounts
            .iter()
            .filter(|a| a.backend == backend.name)
            .collect();
        if accounts.is_empty() {
            continue;
        }
        let in_rungs = config.rungs.iter().any(|r| r.backend == backend.name);
        let order = rotation::order(
            backend,
            &accounts,
            &config.pricing,
            state_dir,
            advance && in_rungs,
        );
        orders.insert(backend.name.clone(), order);
    }
    let mut rows = Vec::with_capacity(config.rungs.len());
    for def in config.rungs.drain(..) {
        match orders.get(&def.backend) {
            Some(order) => {
                for name in order {
                    rows.push(RungDef {
                        account: Some(name.clone()),
                        ..def.clone()
                    });
                }
            }
            None => rows.push(def),
        }
    }
    config.rungs = rows;
}
