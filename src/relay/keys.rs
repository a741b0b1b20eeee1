//! The real upstream keys: `AGENT_RELAY_<NAME>_KEY`, else the upstream's `secret_cmd`. A
//! key is read on first use and kept in memory; an upstream's 401 drops it, so the next
//! call reads it again (a rotated key is picked up without a restart).

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use super::scrub::Needle;
use crate::config::relay::{Kind, Upstream};

/// A key and where it came from (`env:AGENT_RELAY_ANTHROPIC_KEY`): the source names the
/// credential in health targets, never the key itself.
#[derive(Clone)]
pub struct Key {
    pub value: Arc<str>,
    pub source: Arc<str>,
}

impl Key {
    /// A Claude subscription (OAuth) token rather than an API key: a login for its owner's
    /// own use (`relay::subscriptions`).
    pub fn is_subscription_login(&self) -> bool {
        crate::backend::endpoint::is_subscription_token(&self.value)
    }
}

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Key({})", self.source)
    }
}

#[derive(Default)]
pub struct Keys {
    cache: RwLock<HashMap<String, Key>>,
    /// Every key read since the start, to mask in answers: one dropped after a 401 was
    /// still injected, and is still a secret.
    injected: RwLock<Arc<[Needle]>>,
}

impl Keys {
    /// The cached key, if any (cheap: no environment read, no command).
    pub fn cached(&self, name: &str) -> Option<Key> {
        self.cache
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(name)
            .cloned()
    }

    /// The key, reading it when it is not cached. Blocking: a secret command may take a
    /// while (call it off the async workers). The error says what is missing, never a value.
    pub fn get(&self, upstream: &Upstream) -> Result<Key, String> {
        if let Some(key) = self.cached(&upstream.name) {
            return Ok(key);
        }
        let key = read(upstream)?;
        crate::redact::register(&key.value);
        self.remember(&key.value);
        self.cache
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(upstream.name.clone(), key.clone());
        Ok(key)
    }

    /// The keys to mask in every answer (cheap: one shared list, replaced when a key is read).
    pub fn injected(&self) -> Arc<[Needle]> {
        Arc::clone(
            &self
                .injected
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }

    fn remember(&self, value: &str) {
        let mut injected = self
            .injected
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if !injected.iter().any(|n| n.bytes() == value.as_bytes()) {
            let mut all = injected.to_vec();
            all.push(Needle::new(value));
            *injected = Arc::from(all);
        }
    }

    /// Forgets a key the upstream refused.
    pub fn drop_key(&self, name: &str) {
        self.cache
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(name);
    }
}

/// Why `upstream` has nowhere to read a key from — neither `AGENT_RELAY_<NAME>_KEY` nor a
/// `secret_cmd` — naming both, or `None` when it has one or needs none (`claude-cli` runs
/// this host's login). A `secret_cmd` is not run here: it runs on the first call.
pub fn missing(upstream: &Upstream) -> Option<String> {
    let var = upstream.env_var("KEY");
    let none = upstream.kind != Kind::ClaudeCli
        && upstream.secret_cmd.is_none()
        && std::env::var(&var).map_or(true, |value| value.trim().is_empty());
    none.then(|| {
        format!(
            "no key for upstream \"{}\": set {var} or relay.upstreams.{}.secret_cmd",
            upstream.name, upstream.name
        )
    })
}

fn read(upstream: &Upstream) -> Result<Key, String> {
    let var = upstream.env_var("KEY");
    if let Ok(value) = std::env::var(&var) {
        let value = value.trim();
        if !value.is_empty() {
            return Ok(Key {
                value: value.into(),
                source: format!("env:{var}").into(),
            });
        }
    }
    let Some(command) = &upstream.secret_cmd else {
        return Err(missing(upstream).unwrap_or_default());
    };
    match crate::secret::from_command(command) {
        Ok(value) if !value.trim().is_empty() => Ok(Key {
            value: value.trim().into(),
            source: format!("secret_cmd:relay.upstreams.{}", upstream.name).into(),
        }),
        Ok(_) => Err(format!(
            "no key for upstream \"{}\": its secret_cmd printed nothing",
            upstream.name
        )),
        Err(err) => Err(format!(
            "no key for upstream \"{}\": its secret_cmd failed: {}",
            upstream.name,
            crate::redact::redact(&format!("{err:#}"))
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn upstream(name: &str, secret_cmd: Option<&str>) -> Upstream {
        Upstream {
            name: name.into(),
            kind: Kind::Openai,
            base: Some("http://127.0.0.1:9".into()),
            secret_cmd: secret_cmd.map(str::to_string),
            command: None,
        }
    }

    #[test]
    fn a_secret_command_is_read_once_and_again_after_a_drop() {
        let dir = tempfile::tempdir().unwrap();
        let counter = dir.path().join("n");
        let command = format!(
            "echo x >> '{}'; echo sk-from-command-0123456789",
            counter.display()
        );
        let keys = Keys::default();
        let up = upstream("keys-test-cmd", Some(&command));
        assert_eq!(&*keys.get(&up).unwrap().value, "sk-from-command-0123456789");
        assert_eq!(&*keys.get(&up).unwrap().value, "sk-from-command-0123456789");
        assert_eq!(
            std::fs::read_to_string(&counter).unwrap().lines().count(),
            1
        );
        keys.drop_key("keys-test-cmd");
        keys.get(&up).unwrap();
        assert_eq!(
            std::fs::read_to_string(&counter).unwrap().lines().count(),
            2
        );
    }

    #[test]
    fn a_missing_key_names_what_to_set() {
        let err = Keys::default()
            .get(&upstream("keys-test-none", None))
            .unwrap_err();
        assert!(err.contains("AGENT_RELAY_KEYS_TEST_NONE_KEY"), "{err}");
    }

    #[test]
    fn an_upstream_is_missing_its_key_only_with_neither_variable_nor_command() {
        let none = missing(&upstream("keys-test-missing", None)).unwrap();
        assert!(
            none.contains("AGENT_RELAY_KEYS_TEST_MISSING_KEY")
                && none.contains("relay.upstreams.keys-test-missing.secret_cmd"),
            "{none}"
        );
        assert_eq!(missing(&upstream("keys-test-missing", Some("false"))), None);
        let mut cli = upstream("keys-test-missing", None);
        cli.kind = Kind::ClaudeCli;
        assert_eq!(missing(&cli), None, "claude-cli needs no key");
    }
}
