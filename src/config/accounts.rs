//! `[[accounts]]` and a backend's `rotation`: the credential pools of DESIGN.md §7, as the
//! configuration (and `credentials.toml`) declare them.

use serde::{Deserialize, Serialize};

/// How a backend's accounts take turns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Rotation {
    #[default]
    Priority,
    LeastCost,
    RoundRobin,
    Failover,
    /// Logins: spend first the window that resets soonest (what is left in it is lost at
    /// the reset), a login ahead of its weekly pace after one behind it. The default for a
    /// pool of logins.
    SoonestReset,
}

impl Rotation {
    pub fn as_str(self) -> &'static str {
        match self {
            Rotation::Priority => "priority",
            Rotation::LeastCost => "least-cost",
            Rotation::RoundRobin => "round-robin",
            Rotation::Failover => "failover",
            Rotation::SoonestReset => "soonest-reset",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A subscription token (`sk-ant-oat01-…`): paid for by the month.
    Oauth,
    /// A pay-per-token key.
    ApiKey,
    /// A CLI's own login in its own home directory (`dir`): agent never reads its token
    /// for a call; the launch points the CLI's home variable at `dir`.
    Login,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Oauth => "oauth",
            Kind::ApiKey => "api_key",
            Kind::Login => "login",
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
    /// A `login` account's home directory: the value of the CLI's home variable
    /// (`CLAUDE_CONFIG_DIR`, `CODEX_HOME`, `GEMINI_CLI_HOME`). Absolute or `~/…`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dir: Option<String>,
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

/// Why `dir` cannot be a login's directory, if it cannot.
fn dir_problem(dir: &str) -> Option<String> {
    if dir.trim().is_empty() || dir.chars().any(char::is_control) {
        return Some("must be a directory path, one line".into());
    }
    if normalize_dir(dir).is_none() {
        return Some("must be absolute or start with ~/".into());
    }
    None
}

/// A login directory as agent keeps it ([`crate::paths::user_path`]: `~` expanded, `.` and
/// `..` resolved, no trailing `/`); `None` for a relative path, which would mean another
/// directory wherever agent is run.
pub fn normalize_dir(dir: &str) -> Option<std::path::PathBuf> {
    let path = std::path::Path::new(dir);
    let rooted = path.is_absolute() || dir == "~" || dir.starts_with("~/");
    rooted.then(|| crate::paths::user_path(path)).flatten()
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
        match (self.kind, &self.dir) {
            (Kind::Login, None) => {
                return Err(Invalid {
                    key: "dir",
                    message:
                        "a login account needs `dir`, the CLI's home directory it is logged in in"
                            .into(),
                });
            }
            (Kind::Login, Some(dir)) => {
                if self.secret_env.is_some() || self.secret_cmd.is_some() || self.secret.is_some() {
                    return Err(Invalid {
                        key: "kind",
                        message: "a login account has no secret: agent never reads its token (drop secret_env / secret_cmd)".into(),
                    });
                }
                if let Some(message) = dir_problem(dir) {
                    return Err(Invalid {
                        key: "dir",
                        message,
                    });
                }
            }
            (_, Some(_)) => {
                return Err(Invalid {
                    key: "dir",
                    message: "only a `kind = \"login\"` account has a directory".into(),
                });
            }
            (_, None) => {}
        }
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

    pub fn is_login(&self) -> bool {
        self.kind == Kind::Login
    }

    /// A login account's directory as the CLI is given it: `~/` expanded, no trailing
    /// `/` — one spelling, so the key its windows are filed under is the one its CLI's
    /// statusline finds.
    pub fn login_dir(&self) -> Option<std::path::PathBuf> {
        let dir = self.dir.as_deref()?;
        normalize_dir(dir)
    }

    /// Reads the secret: the configured variable, command or stored value. An unreadable or
    /// empty secret makes the account broken.
    pub fn read_secret(&self) -> anyhow::Result<String> {
        let what = format!("account {}", self.name);
        if self.is_login() {
            anyhow::bail!("{what} is a login: agent never reads its token");
        }
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
