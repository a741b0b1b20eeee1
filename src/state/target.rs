//! The key of a health fact: what was called (probe kind, endpoint, model) and with which
//! credential source — never the credential. One spelling for everyone who reads or writes
//! health (the probe, the relay, `--accounts test`), so a quota the relay sees is the
//! quota the next launch skips.

use std::fmt;

/// `anthropic https://api.anthropic.com claude-opus-5 @env:ANTHROPIC_API_KEY`
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The probe kind: `anthropic`, `openai`, `gemini`, `command`, `none`.
    pub kind: String,
    /// The base URL called, without a trailing slash (or the command run).
    pub endpoint: String,
    /// `None`: no model (shown as `-`).
    pub model: Option<String>,
    /// Where the credential came from: `env:VAR`, `account:NAME`, `config:BACKEND`,
    /// `backend:NAME`, `none`.
    pub source: String,
}

impl Target {
    /// The credential source of an account's calls.
    pub fn account_source(account: &str) -> String {
        format!("account:{account}")
    }

    /// How every target probed with `account`'s credential ends.
    pub fn account_suffix(account: &str) -> String {
        format!(" @{}", Target::account_source(account))
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} {} @{}",
            self.kind,
            self.endpoint.trim_end_matches('/'),
            self.model.as_deref().unwrap_or("-"),
            self.source
        )
    }
}

#[cfg(test)]
mod tests {
    use super::Target;

    #[test]
    fn a_target_is_spelled_one_way() {
        let target = Target {
            kind: "anthropic".into(),
            endpoint: "http://127.0.0.1:18790/anthropic/".into(),
            model: Some("claude-opus-5".into()),
            source: Target::account_source("work"),
        };
        assert_eq!(
            target.to_string(),
            "anthropic http://127.0.0.1:18790/anthropic claude-opus-5 @account:work"
        );
        assert!(
            target
                .to_string()
                .ends_with(&Target::account_suffix("work"))
        );
    }
}
