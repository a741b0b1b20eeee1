//! `[store]`: where state shared by several processes lives (DESIGN.md §14). Files in the
//! state directory by default; a Redis server when replicas of the relay, or one person's
//! machines, must see one budget, one set of cooldowns and one alert per change.

use serde::Deserialize;

/// The key prefix when none is set: several teams can share one server with their own.
pub const DEFAULT_PREFIX: &str = "agent";

/// What the relay does while the Redis server cannot be reached.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OnStoreDown {
    /// New calls get 503 `store_unavailable`: a budget is never exceeded because the
    /// store was away.
    #[default]
    Refuse,
    /// Each replica falls back to its own files, with a warning.
    Local,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    #[default]
    Files,
    Redis,
}

/// `[store]` as written in the file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoreFile {
    #[serde(default)]
    pub kind: Kind,
    /// `redis://HOST:PORT[/DB]` or `rediss://…` (TLS); `${VAR}` is expanded, so the
    /// password can stay out of the file.
    pub url: Option<String>,
    pub prefix: Option<String>,
    #[serde(default)]
    pub on_store_down: OnStoreDown,
}

/// A Redis store, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedisStore {
    /// May hold a password: never printed as is (see `redact::strip_url_credentials`).
    pub url: String,
    pub prefix: String,
    pub on_store_down: OnStoreDown,
}

/// A bad `[store]` key, for the loader's error with its place in the file.
#[derive(Debug)]
pub struct Bad {
    pub key: &'static str,
    pub message: String,
}

impl StoreFile {
    /// `None` for the files of today; a Redis store with its URL expanded and checked.
    pub fn validate(self) -> Result<Option<RedisStore>, Bad> {
        if self.kind == Kind::Files {
            if self.url.is_some() {
                return Err(Bad {
                    key: "store.url",
                    message: "a url is only for kind = \"redis\"".into(),
                });
            }
            return Ok(None);
        }
        let Some(url) = self.url else {
            return Err(Bad {
                key: "store.url",
                message: "kind = \"redis\" needs url = \"redis://HOST:PORT\"".into(),
            });
        };
        // The URL may carry the store's password: no child sees the variables it is from.
        for name in crate::expand::references(&url) {
            crate::child_env::withhold(&name);
        }
        let url = crate::expand::expand(&url).map_err(|missing| Bad {
            key: "store.url",
            message: missing.to_string(),
        })?;
        if !(url.starts_with("redis://") || url.starts_with("rediss://")) {
            return Err(Bad {
                key: "store.url",
                message: format!(
                    "{} is not a redis:// or rediss:// URL",
                    crate::redact::strip_url_credentials(&url)
                ),
            });
        }
        for secret in url_secrets(&url) {
            crate::redact::register(secret);
        }
        let prefix = self.prefix.unwrap_or_else(|| DEFAULT_PREFIX.to_string());
        let fits = |c: char| c.is_ascii_alphanumeric() || "-_.:".contains(c);
        if prefix.is_empty() || prefix.len() > 64 || !prefix.chars().all(fits) {
            return Err(Bad {
                key: "store.prefix",
                message: "1 to 64 of A-Z a-z 0-9 - _ . :".into(),
            });
        }
        Ok(Some(RedisStore {
            url,
            prefix,
            on_store_down: self.on_store_down,
        }))
    }
}

/// The secrets a store URL holds: its password and the values of its query parameters
/// named for a credential (`?pass=…`).
pub(super) fn url_secrets(url: &str) -> Vec<&str> {
    let mut secrets = crate::redact::query_secrets(url);
    secrets.extend(userinfo_password(url));
    secrets
}

/// The password in `redis://user:PASSWORD@host`, so redaction knows it by value.
fn userinfo_password(url: &str) -> Option<&str> {
    let rest = url.split_once("://")?.1;
    let authority = rest.split('/').next()?;
    let userinfo = authority.rsplit_once('@')?.0;
    let password = userinfo.split_once(':').map_or(userinfo, |(_, p)| p);
    (!password.is_empty()).then_some(password)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redis(url: &str) -> StoreFile {
        StoreFile {
            kind: Kind::Redis,
            url: Some(url.into()),
            ..StoreFile::default()
        }
    }

    #[test]
    fn a_redis_store_needs_a_redis_url_and_a_plain_prefix() {
        assert!(StoreFile::default().validate().unwrap().is_none());
        let store = redis("redis://127.0.0.1:6379/2")
            .validate()
            .unwrap()
            .unwrap();
        assert_eq!(store.prefix, "agent");
        assert_eq!(store.on_store_down, OnStoreDown::Refuse);
        assert_eq!(redis("http://x").validate().unwrap_err().key, "store.url");
        let mut bad_prefix = redis("redis://h");
        bad_prefix.prefix = Some("a b".into());
        assert_eq!(bad_prefix.validate().unwrap_err().key, "store.prefix");
    }

    #[test]
    fn the_password_in_the_url_is_known_to_redaction() {
        assert_eq!(
            userinfo_password("rediss://team:s3cret-pa55@redis.example:6380/0"),
            Some("s3cret-pa55")
        );
        assert_eq!(
            userinfo_password("redis://:only-pa55word@h"),
            Some("only-pa55word")
        );
        assert_eq!(userinfo_password("redis://h:6379"), None);
    }
}
