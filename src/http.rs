//! The one HTTP client agent's own blocking calls use (probes, credential checks, alert
//! deliveries, a login's windows asked of its vendor): an honest `User-Agent`, a whole-call
//! timeout, and error statuses returned as answers, because a 429's or 401's body is what
//! tells agent why — and when it clears ([`clears_at`]).

use std::time::{Duration, SystemTime};

/// agent's `User-Agent`: `agent/VERSION`.
pub const USER_AGENT: &str = concat!("agent/", env!("CARGO_PKG_VERSION"));

/// A client whose every call ends within `timeout` (connect, send and read together).
pub fn client(timeout: Duration) -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        .http_status_as_error(false)
        .user_agent(USER_AGENT)
        .build()
        .new_agent()
}

/// When the answer says it will clear: `retry-after` (seconds or an HTTP date), the
/// `anthropic-ratelimit-*-reset` headers (RFC 3339, or epoch seconds as the unified ones
/// are — a gateway's spend limit names its period's end so), or `resets_in_seconds` / `resets_at`
/// in the body. The latest of the reset headers is used: clearing one limit while another
/// still holds would only earn another refusal.
pub fn clears_at(headers: &[(String, String)], body: &str, now: SystemTime) -> Option<SystemTime> {
    let header = |name: &str| {
        headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.trim())
    };
    if let Some(value) = header("retry-after") {
        if let Ok(seconds) = value.parse::<f64>() {
            return Duration::try_from_secs_f64(seconds).ok().map(|d| now + d);
        }
        if let Some(at) = parse_http_date(value) {
            return Some(at);
        }
    }
    let resets = headers
        .iter()
        .filter(|(key, _)| {
            let key = key.to_ascii_lowercase();
            key.starts_with("anthropic-ratelimit-") && key.ends_with("-reset")
        })
        .filter_map(|(_, value)| parse_rfc3339(value.trim()).or_else(|| epoch(value.trim())))
        .max();
    if resets.is_some() {
        return resets;
    }
    from_body(body, now)
}

fn from_body(body: &str, now: SystemTime) -> Option<SystemTime> {
    let json: serde_json::Value = serde_json::from_str(body).ok()?;
    let find = |key: &str| find_key(&json, key);
    if let Some(seconds) = find("resets_in_seconds").and_then(serde_json::Value::as_f64) {
        return Duration::try_from_secs_f64(seconds).ok().map(|d| now + d);
    }
    match find("resets_at")? {
        serde_json::Value::Number(n) => n
            .as_u64()
            .map(|secs| SystemTime::UNIX_EPOCH + Duration::from_secs(secs)),
        serde_json::Value::String(text) => parse_rfc3339(text),
        _ => None,
    }
}

fn find_key<'a>(value: &'a serde_json::Value, key: &str) -> Option<&'a serde_json::Value> {
    match value {
        serde_json::Value::Object(map) => map
            .get(key)
            .or_else(|| map.values().find_map(|v| find_key(v, key))),
        serde_json::Value::Array(items) => items.iter().find_map(|v| find_key(v, key)),
        _ => None,
    }
}

/// `anthropic-ratelimit-unified-reset: 1790812800`.
fn epoch(text: &str) -> Option<SystemTime> {
    let seconds: u64 = text.parse().ok()?;
    SystemTime::UNIX_EPOCH.checked_add(Duration::from_secs(seconds))
}

fn parse_rfc3339(text: &str) -> Option<SystemTime> {
    let ts: jiff::Timestamp = text.parse().ok()?;
    SystemTime::try_from(ts).ok()
}

fn parse_http_date(text: &str) -> Option<SystemTime> {
    let zoned = jiff::fmt::rfc2822::parse(text).ok()?;
    SystemTime::try_from(zoned.timestamp()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_and_reset_headers_set_the_end_of_the_cooldown() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        let headers = vec![("Retry-After".to_string(), "90".to_string())];
        assert_eq!(
            clears_at(&headers, "", now),
            Some(now + Duration::from_secs(90))
        );
        let headers = vec![
            (
                "anthropic-ratelimit-requests-reset".to_string(),
                "1970-01-12T13:48:00Z".to_string(),
            ),
            (
                "anthropic-ratelimit-tokens-reset".to_string(),
                "1970-01-12T13:47:00Z".to_string(),
            ),
        ];
        assert_eq!(
            clears_at(&headers, "", now),
            Some(SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_080))
        );
        let body = r#"{"error":{"type":"usage_limit_reached","resets_in_seconds":600}}"#;
        assert_eq!(
            clears_at(&[], body, now),
            Some(now + Duration::from_secs(600))
        );
        assert_eq!(clears_at(&[], "{}", now), None);
    }
}
