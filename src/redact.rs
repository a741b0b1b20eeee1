//! Secrets are removed by value wherever they would appear: reasons, errors, state files.
//! A value counts as secret because of where it came from (a probe key, a credential
//! variable), and once known it is scrubbed from any text, whatever field carries it.

use std::sync::{Mutex, OnceLock};

const MARK: &str = "[redacted]";
/// Shorter values are not treated as secrets (they would scrub ordinary words).
const MIN_SECRET_LEN: usize = 8;

fn registry() -> &'static Mutex<Vec<String>> {
    static SECRETS: OnceLock<Mutex<Vec<String>>> = OnceLock::new();
    SECRETS.get_or_init(|| {
        let from_env = std::env::vars()
            .filter(|(name, _)| looks_secret(name))
            .map(|(_, value)| value)
            .filter(|value| value.len() >= MIN_SECRET_LEN)
            .collect();
        Mutex::new(from_env)
    })
}

/// Whether an environment variable's name says it holds a credential.
pub fn looks_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    ["KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL"]
        .iter()
        .any(|word| upper.contains(word))
}

/// Remembers a value as secret for the rest of the process.
pub fn register(secret: &str) {
    if secret.len() < MIN_SECRET_LEN {
        return;
    }
    let mut secrets = registry()
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if !secrets.iter().any(|known| known == secret) {
        secrets.push(secret.to_string());
    }
}

/// Scrubs every known secret from `text`: the whole value, and the leading 12 or trailing 8
/// characters that error messages like to echo ("Incorrect API key: sk-abc…wxyz").
pub fn redact(text: &str) -> String {
    let secrets = registry()
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut out = text.to_string();
    for secret in secrets.iter() {
        if out.contains(secret.as_str()) {
            out = out.replace(secret.as_str(), MARK);
        }
        for fragment in fragments(secret) {
            if out.contains(fragment) {
                out = out.replace(fragment, MARK);
            }
        }
    }
    out
}

fn fragments(secret: &str) -> Vec<&str> {
    let chars: Vec<(usize, char)> = secret.char_indices().collect();
    if chars.len() < 20 {
        return Vec::new();
    }
    let head_end = chars[12].0;
    let tail_start = chars[chars.len() - 8].0;
    vec![&secret[..head_end], &secret[tail_start..]]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registered_values_are_scrubbed_wherever_they_appear() {
        register("sk-test-0123456789abcdefghijXYZ");
        let text = redact("bad key sk-test-0123456789abcdefghijXYZ, again: sk-test-0123… …ghijXYZ");
        assert!(!text.contains("0123456789abcdefghij"), "{text}");
        assert!(!text.contains("efghijXYZ"), "{text}");
        assert!(text.contains("[redacted]"));
    }

    #[test]
    fn short_values_are_not_secrets() {
        register("abc");
        assert_eq!(redact("abc def"), "abc def");
    }
}
