//! The error classes of DESIGN.md §5: what an answer means for a rung's health.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorClass {
    Ok,
    /// 429 without quota words: cools down for two minutes.
    RateLimited,
    /// Quota, usage limit, credit balance, 402: skipped for `quota_minutes`.
    Quota,
    /// 529, 503.
    Overloaded,
    /// 401, 403: auth-dead, 15 minutes doubling to 6 hours.
    Auth,
    /// 404 or a model-not-found 400: dead until the configuration changes.
    BadModel,
    /// Any other 4xx.
    BadRequest,
    /// 500, 502, 504 and other 5xx.
    Upstream5xx,
    /// DNS, connect, TLS, timeout — or an answer that is not the API's (a captive portal).
    Unreachable,
    /// The launched CLI itself failed within `fastfail_seconds`.
    Fastfail,
    CredentialsMissing,
    /// An installed CLI with no login and no key: never set up here, so neither alive nor
    /// dead — no cover, no alert, passed over by a launch; its row says how to set it up.
    NotSetUp,
    /// Its backend is turned off (`[backends.NAME] enabled = false`): never an option.
    Disabled,
    BinaryMissing,
    Misconfigured,
    /// The user's arguments: a flag the rung's CLI cannot take (passed over before it
    /// runs), or the CLI's own usage error. Says nothing about the rung's health.
    BadArguments,
    /// Not sent: the daily budget refused the call. Says nothing about the rung's health.
    Budget,
    /// Nothing could prove it either way (an agy too old to report its quota without a
    /// prompt): it runs unprobed, and is never reported as OK. No news for health.
    Unproved,
}

impl ErrorClass {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorClass::Ok => "ok",
            ErrorClass::RateLimited => "rate_limited",
            ErrorClass::Quota => "quota",
            ErrorClass::Overloaded => "overloaded",
            ErrorClass::Auth => "auth",
            ErrorClass::BadModel => "bad_model",
            ErrorClass::BadRequest => "bad_request",
            ErrorClass::Upstream5xx => "upstream_5xx",
            ErrorClass::Unreachable => "unreachable",
            ErrorClass::Fastfail => "fastfail",
            ErrorClass::CredentialsMissing => "credentials_missing",
            ErrorClass::NotSetUp => "not_set_up",
            ErrorClass::Disabled => "disabled",
            ErrorClass::BinaryMissing => "binary_missing",
            ErrorClass::Misconfigured => "misconfigured",
            ErrorClass::BadArguments => "bad_arguments",
            ErrorClass::Budget => "budget_exhausted",
            ErrorClass::Unproved => "unproved",
        }
    }

    /// Classes decided locally: shown, never probed.
    pub fn is_local(self) -> bool {
        matches!(
            self,
            ErrorClass::CredentialsMissing
                | ErrorClass::NotSetUp
                | ErrorClass::Disabled
                | ErrorClass::BinaryMissing
                | ErrorClass::Misconfigured
                | ErrorClass::BadArguments
        )
    }
}

impl std::fmt::Display for ErrorClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
