//! `[alerts]`: where the watchdog's alerts go (Telegram, a webhook, a command).

use std::time::Duration;

use serde::Deserialize;

/// `[alerts]` in the configuration.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AlertsConfig {
    pub telegram: Option<TelegramConfig>,
    pub webhook: Option<WebhookConfig>,
    pub command: Option<CommandConfig>,
    /// The time all deliveries of one run may take, retries included (default 60); within
    /// [`DEADLINE`], which the configuration's loading checks.
    pub deadline_seconds: Option<toml::Spanned<f64>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TelegramConfig {
    /// `"${AGENT_TELEGRAM_TOKEN}"`, or use `bot_token_cmd`.
    pub bot_token: Option<String>,
    pub bot_token_cmd: Option<String>,
    pub chat_id: String,
    /// Overridable, e.g. for a local mock in tests.
    #[serde(default = "default_telegram_api")]
    pub api_url: String,
}

pub(super) fn default_telegram_api() -> String {
    "https://api.telegram.org".to_string()
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebhookConfig {
    /// Receives a JSON POST `{state, previous, message, rungs}`.
    pub url: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommandConfig {
    /// Run without a shell; the message is appended as the last argument.
    pub argv: Vec<String>,
}

impl AlertsConfig {
    /// Withholds from every child the variables an alert's secret is expanded from: the
    /// Telegram token's and the webhook URL's (a chat hook's URL is its credential).
    pub fn withhold_variables(&self) {
        let templates = [
            self.telegram.as_ref().and_then(|t| t.bot_token.as_deref()),
            self.webhook.as_ref().map(|w| w.url.as_str()),
        ];
        for name in templates
            .into_iter()
            .flatten()
            .flat_map(crate::expand::references)
        {
            crate::child_env::withhold(&name);
        }
    }

    /// Registers for redaction every secret an alert channel holds, however it is written
    /// (literal, or `${VAR}` expanded now): the bot token, and the webhook URL's path and
    /// query — a chat hook's URL is its credential. A session that quoted the configuration
    /// must not carry them into another vendor's prompt. Not the whole URL: every run of 12
    /// characters of a registered value is redacted wherever it appears, and the host
    /// (`https://hooks.slack.com`) is no secret — the path goes from every copy of the URL.
    /// A `${VAR}` not set registers nothing: its name is no secret, and the fault naming it
    /// must stay readable.
    pub fn register_secrets(&self) {
        let expanded = |text: &str| crate::expand::expand(text).ok();
        let token = self.telegram.as_ref().and_then(|t| t.bot_token.as_deref());
        if let Some(token) = token.and_then(expanded) {
            crate::redact::register(&token);
        }
        if let Some(url) = self.webhook.as_ref().and_then(|w| expanded(&w.url))
            && let Some(secret) = url_secret(&url)
        {
            crate::redact::register(secret);
        }
    }

    /// The keys of this section that hold a secret written in the file itself, for the
    /// doctor to warn about (a `${VAR}` or a `*_cmd` keeps it out of the file).
    pub fn literal_secrets(&self) -> Vec<&'static str> {
        let literal = crate::expand::written_out;
        let mut keys = Vec::new();
        if self
            .telegram
            .as_ref()
            .and_then(|t| t.bot_token.as_deref())
            .is_some_and(literal)
        {
            keys.push("alerts.telegram.bot_token");
        }
        if self
            .webhook
            .as_ref()
            .is_some_and(|w| literal(&w.url) && url_secret(&w.url).is_some())
        {
            keys.push("alerts.webhook.url");
        }
        keys
    }

    /// What keeps a configured channel from sending anything, one line each: a Telegram
    /// channel with neither `bot_token` nor `bot_token_cmd` (or an empty one).
    pub fn faults(&self) -> Vec<String> {
        let mut faults = Vec::new();
        if let Some(telegram) = &self.telegram {
            let given =
                |value: &Option<String>| value.as_deref().is_some_and(|v| !v.trim().is_empty());
            if !given(&telegram.bot_token) && !given(&telegram.bot_token_cmd) {
                faults.push(
                    "[alerts.telegram] is missing its bot_token (and has no bot_token_cmd): no alert can reach Telegram"
                        .to_string(),
                );
            }
        }
        faults
    }

    pub fn is_configured(&self) -> bool {
        self.telegram.is_some() || self.webhook.is_some() || self.command.is_some()
    }

    /// The time all deliveries of one run may take, retries included.
    pub fn deadline(&self) -> Duration {
        self.deadline_seconds
            .as_ref()
            .and_then(|seconds| {
                crate::bounds::duration(*seconds.get_ref(), crate::bounds::Unit::Seconds, DEADLINE)
                    .ok()
            })
            .unwrap_or(DEFAULT_DEADLINE)
    }
}

/// How long the alerts of one run may take: a watchdog run must end.
pub const DEADLINE: crate::bounds::Bounds = crate::bounds::Bounds::positive(crate::bounds::HOUR);
pub(super) const DEFAULT_DEADLINE: Duration = Duration::from_secs(60);

/// What of a URL is its credential: everything after the host (path and query), when there
/// is enough of it to be one.
fn url_secret(url: &str) -> Option<&str> {
    let after_scheme = url.split_once("://").map_or(url, |(_, rest)| rest);
    let path = &after_scheme[after_scheme.find('/')?..];
    (path.len() >= 8).then_some(path)
}
