//! From an answer (status, body, headers) to an error class, a reason line, and — when the
//! answer says when it will clear — the end of the cooldown.

use crate::error_class::ErrorClass;

/// At most this many characters of a failing body are quoted.
pub use crate::text::snippet;

/// When an answer says it will clear: the HTTP client's reading of its headers and body.
pub use crate::http::clears_at;

/// Words that mean "out of quota" rather than "slow down" (seeds 000, 002; DESIGN.md §5).
pub const QUOTA_WORDS: &[&str] = &[
    "quota",
    "usage limit",
    "usage_limit",
    "credit balance",
    "arrearage",
    "insufficient_quota",
    "billing",
    "relay_mode_disabled",
    "relay_credentials_missing",
    // A Claude apps gateway at a developer's spend limit (429, `billing_error`, "spend
    // limit reached · resets Oct 1"), and Claude Code's codes for it
    // (`enforced_spend_limit_reached`, `contract_spend_limit_reached`): 2.1.332 binary.
    "spend limit reached",
    "spend_limit_reached",
];

/// The gateway's answer when it cannot read its spend store and fails closed (429
/// `billing_error` "spend limit unavailable", 2.1.332's gateway): nobody's limit is spent,
/// the gateway is unwell, so it is a short cooldown, not a quota.
const SPEND_STORE_DOWN: &str = "spend limit unavailable";

/// The class of a non-success HTTP status, reading the body for quota words.
pub fn classify_status(status: u16, body: &str) -> ErrorClass {
    let lower = body.to_ascii_lowercase();
    let quota_words = QUOTA_WORDS.iter().any(|word| lower.contains(word));
    match status {
        402 => ErrorClass::Quota,
        429 if lower.contains(SPEND_STORE_DOWN) => ErrorClass::RateLimited,
        400..=499 if quota_words => ErrorClass::Quota,
        429 => ErrorClass::RateLimited,
        401 | 403 => ErrorClass::Auth,
        // Gemini answers a bad key with 400 INVALID_ARGUMENT / API_KEY_INVALID.
        400 if lower.contains("api_key_invalid") || lower.contains("api key not valid") => {
            ErrorClass::Auth
        }
        404 => ErrorClass::BadModel,
        400 if mentions_missing_model(&lower) => ErrorClass::BadModel,
        400..=499 => ErrorClass::BadRequest,
        503 | 529 => ErrorClass::Overloaded,
        _ => ErrorClass::Upstream5xx,
    }
}

fn mentions_missing_model(lower: &str) -> bool {
    lower.contains("model")
        && [
            "not found",
            "not_found",
            "does not exist",
            "invalid model",
            "unknown model",
            "not supported",
        ]
        .iter()
        .any(|phrase| lower.contains(phrase))
}

/// The class of a CLI's failed run, from what it printed (command probes).
pub fn classify_output(text: &str) -> ErrorClass {
    let lower = text.to_ascii_lowercase();
    if QUOTA_WORDS.iter().any(|word| lower.contains(word)) {
        ErrorClass::Quota
    } else if lower.contains("429") || lower.contains("rate limit") || lower.contains("rate_limit")
    {
        ErrorClass::RateLimited
    } else if [
        "401",
        "403",
        "invalid api key",
        "not logged in",
        "unauthorized",
        "authentication",
    ]
    .iter()
    .any(|word| lower.contains(word))
    {
        ErrorClass::Auth
    } else if lower.contains("529") || lower.contains("overloaded") || lower.contains("503") {
        ErrorClass::Overloaded
    } else {
        ErrorClass::BadRequest
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use super::*;

    #[test]
    fn statuses_map_to_the_classes_of_the_design() {
        assert_eq!(
            classify_status(429, r#"{"error":{"type":"rate_limit_error"}}"#),
            ErrorClass::RateLimited
        );
        assert_eq!(
            classify_status(429, "You have hit your usage limit"),
            ErrorClass::Quota
        );
        assert_eq!(
            classify_status(400, "Your credit balance is too low"),
            ErrorClass::Quota
        );
        assert_eq!(classify_status(402, ""), ErrorClass::Quota);
        assert_eq!(classify_status(403, "Arrearage"), ErrorClass::Quota);
        assert_eq!(classify_status(529, "overloaded"), ErrorClass::Overloaded);
        assert_eq!(classify_status(503, ""), ErrorClass::Overloaded);
        assert_eq!(classify_status(401, ""), ErrorClass::Auth);
        assert_eq!(classify_status(403, ""), ErrorClass::Auth);
        assert_eq!(classify_status(404, ""), ErrorClass::BadModel);
        assert_eq!(
            classify_status(
                400,
                r#"{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT"}}"#
            ),
            ErrorClass::Auth
        );
        assert_eq!(
            classify_status(400, "model: claude-x not found"),
            ErrorClass::BadModel
        );
        assert_eq!(
            classify_status(400, "max_tokens too large"),
            ErrorClass::BadRequest
        );
        assert_eq!(classify_status(500, ""), ErrorClass::Upstream5xx);
        assert_eq!(classify_status(502, ""), ErrorClass::Upstream5xx);
    }

    #[test]
    fn a_gateways_spend_limit_is_a_quota_until_the_reset_it_names() {
        // As 2.1.332's gateway refuses a developer at the cap: 429, `billing_error`, the
        // period's end in the unified reset headers (epoch seconds).
        let body = r#"{"type":"error","error":{"type":"billing_error","message":"spend limit reached · resets Oct 1"}}"#;
        assert_eq!(classify_status(429, body), ErrorClass::Quota);
        let headers: Vec<(String, String)> = [
            ("anthropic-ratelimit-unified-status", "rejected"),
            ("anthropic-ratelimit-unified-reset", "1790812800"),
            ("anthropic-ratelimit-unified-overage-reset", "1790812800"),
            ("anthropic-ratelimit-unified-overage-utilization", "1.04"),
            ("anthropic-ratelimit-unified-overage-period", "monthly"),
            ("x-should-retry", "false"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_789_400_000);
        assert_eq!(
            clears_at(&headers, body, now),
            Some(SystemTime::UNIX_EPOCH + Duration::from_secs(1_790_812_800))
        );
        // Claude Code's own words for it, as a CLI's output.
        assert_eq!(
            classify_output("API Error: 429 enforced_spend_limit_reached"),
            ErrorClass::Quota
        );
        // Its spend store down, the gateway fails closed: a short cooldown, no quota.
        let down = r#"{"type":"error","error":{"type":"billing_error","message":"spend limit unavailable"}}"#;
        assert_eq!(classify_status(429, down), ErrorClass::RateLimited);
    }

    #[test]
    fn snippets_are_one_line_and_bounded() {
        let text = format!("line one\n\tline two {}", "x".repeat(300));
        let cut = snippet(&text);
        assert!(!cut.contains('\n'));
        assert!(cut.starts_with("line one line two x"));
        assert_eq!(cut.chars().count(), crate::text::REASON_BODY_CHARS);
    }
}
