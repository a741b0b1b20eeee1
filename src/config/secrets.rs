//! The secrets the configuration holds, however they are written: a value in the file
//! itself (`bot_token = "7012…:AAH…"`) or a `${VAR}` expanded from agent's environment.
//!
//! Each is registered for redaction once, as soon as the file is read — not when the part
//! that uses it first runs. A session may quote the file (or a key it read there), and its
//! hand-off brief carries what it quoted into another vendor's prompt: a backend whose
//! `env` holds a key, or an alert channel, that this launch never used would otherwise be
//! unknown to the redaction when the brief is written. A secret written in the file itself
//! is also named (its key, never its value) for `--doctor` to warn of.

use std::collections::BTreeMap;

use super::alerts::AlertsConfig;
use super::backend::Backend;
use crate::expand::written_out;

/// Registers for redaction every secret the configuration holds: each backend's probe key
/// and each value of its `env` whose name says it is a credential, and the alert channels'
/// (the store's password is registered as its URL is checked). A `${VAR}` that is not set
/// registers nothing: its name is no secret (and would be redacted from the error naming it).
pub(super) fn register(backends: &BTreeMap<String, Backend>, alerts: &AlertsConfig) {
    for backend in backends.values() {
        let keys = backend.probe.key.iter();
        let env = backend
            .env
            .iter()
            .filter(|(name, _)| crate::redact::looks_secret(name))
            .map(|(_, value)| value);
        for value in keys.chain(env) {
            if let Ok(secret) = crate::expand::expand(value) {
                crate::redact::register(&secret);
            }
        }
    }
    alerts.register_secrets();
}

/// The keys of a backend section that hold a secret written in the file itself:
/// `backends.NAME.env.VAR` for a credential variable, `backends.NAME.probe.key`.
pub(super) fn in_backend(
    name: &str,
    env: Option<&BTreeMap<String, String>>,
    probe_key: Option<&str>,
) -> Vec<String> {
    let mut keys: Vec<String> = env
        .into_iter()
        .flatten()
        .filter(|(var, value)| crate::redact::looks_secret(var) && written_out(value))
        .map(|(var, _)| format!("backends.{name}.env.{var}"))
        .collect();
    if probe_key.is_some_and(written_out) {
        keys.push(format!("backends.{name}.probe.key"));
    }
    keys
}

/// Whether a store URL as written holds its password or a credential parameter itself.
pub(super) fn in_store_url(url: &str) -> bool {
    super::store::url_secrets(url).into_iter().any(written_out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_credential_written_in_a_backend_or_a_store_url_is_named_and_a_variable_is_not() {
        let env = BTreeMap::from([
            (
                "ROUTER_API_KEY".to_string(),
                "sk-or-v1-LITERALenvKEY".to_string(),
            ),
            ("ROUTER_BASE_URL".into(), "https://router.example".into()),
            ("ROUTER_TOKEN".into(), "${ROUTER_TOKEN_VAR}".into()),
            ("EMPTY_SECRET".into(), " ".into()),
        ]);
        assert_eq!(
            in_backend("router", Some(&env), Some("LITERALprobeKEY")),
            [
                "backends.router.env.ROUTER_API_KEY",
                "backends.router.probe.key"
            ]
        );
        assert!(in_backend("spare", None, Some("${SPARE_KEY}")).is_empty());
        assert!(in_store_url("redis://team:LITERALpass@h:6379/0"));
        assert!(in_store_url("redis://h:6379/0?password=LITERALpass"));
        assert!(!in_store_url("redis://team:${PASS}@h:6379/0"));
        assert!(!in_store_url("redis://h:6379/0"));
    }

    #[test]
    fn every_secret_a_backend_or_an_alert_holds_is_known_to_redaction_but_no_variable_name() {
        let mut router = Backend::new("router", "router", "codex", "router", false);
        router.env = BTreeMap::from([
            (
                "ROUTER_API_KEY".to_string(),
                "sk-or-v1-LITERALenvKEY0123456789abcdef".to_string(),
            ),
            ("ROUTER_BASE_URL".into(), "https://router.example".into()),
            (
                "ROUTER_TOKEN".into(),
                "${SECRETS_TEST_UNSET:-defaultROUTERtoken0123456789}".into(),
            ),
            ("ROUTER_SECRET".into(), "${SECRETS_TEST_UNSET_NAME}".into()),
        ]);
        router.probe.key = Some("LITERALprobeKEY-0123456789".into());
        let alerts: AlertsConfig = toml::from_str(
            "[telegram]\nbot_token = \"7012345678:AAHliteralTELEGRAMtoken0123456789\"\n\
             chat_id = \"42\"\n[webhook]\n\
             url = \"https://hooks.example/services/T000/B000/LITERALhookPATH0123\"\n",
        )
        .unwrap();

        register(&BTreeMap::from([("router".to_string(), router)]), &alerts);

        for secret in [
            "sk-or-v1-LITERALenvKEY0123456789abcdef",
            "LITERALprobeKEY-0123456789",
            "7012345678:AAHliteralTELEGRAMtoken0123456789",
            "/services/T000/B000/LITERALhookPATH0123",
            // A `${VAR}` form, expanded (here to its default).
            "defaultROUTERtoken0123456789",
        ] {
            let quoted = crate::redact::redact(&format!("the session read {secret} there"));
            assert_eq!(quoted, "the session read [redacted] there", "{secret}");
        }
        for mine in [
            "https://router.example",
            "SECRETS_TEST_UNSET_NAME is not set",
        ] {
            assert_eq!(crate::redact::redact(mine), mine);
        }
    }
}
