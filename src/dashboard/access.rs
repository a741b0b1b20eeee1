//! Who may see the page: a request carrying the page's token or the relay's, as a bearer,
//! `x-api-key` or the cookie the one-time URL sets.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use http::HeaderMap;

use crate::access::Token;

/// The cookie the one-time URL sets.
pub const COOKIE: &str = "agent_dashboard";

/// The tokens that open the page.
pub struct Keys {
    /// Fresh at each start; printed once, in the URL (none under the relay).
    pub page: Option<Token>,
    /// The relay's token, when there is one.
    pub relay: Option<Token>,
}

impl Keys {
    fn admit(&self, presented: &[u8]) -> bool {
        // Both compared, whatever the first says: the time taken tells nothing.
        let page = self.page.as_ref().is_some_and(|t| t.matches(presented));
        let relay = self.relay.as_ref().is_some_and(|t| t.matches(presented));
        page | relay
    }

    /// Whether the request carries a token that opens the page: `x-api-key`, a bearer or
    /// the cookie, every one compared.
    pub fn admits(&self, headers: &HeaderMap) -> bool {
        crate::access::presented(headers)
            .chain(cookies(headers, COOKIE).map(str::as_bytes))
            .fold(false, |ok, value| ok | self.admit(value))
    }

    /// The one-time URL's `?token=`, if it opens the page.
    pub fn admits_query<'a>(&self, query: Option<&'a str>) -> Option<&'a str> {
        query_value(query, "token").filter(|token| self.admit(token.as_bytes()))
    }
}

/// The value of `name=` in a request's query.
pub fn query_value<'a>(query: Option<&'a str>, name: &str) -> Option<&'a str> {
    query?.split('&').find_map(|pair| {
        let (key, value) = pair.split_once('=')?;
        (key == name).then_some(value)
    })
}

/// How long a one-time address opens the page.
const ONCE_FOR: Duration = Duration::from_secs(60);

/// One-time addresses (`/?once=…`) for `--open`: each opens the page once, within
/// [`ONCE_FOR`], and is worth nothing after — so the browser's command line, which every
/// local user can read, holds nothing reusable.
#[derive(Default)]
pub struct Onces {
    issued: Mutex<Vec<(Token, Instant)>>,
}

impl Onces {
    /// A new one-time value.
    pub fn issue(&self) -> anyhow::Result<String> {
        let value = crate::access::generate("ago-")?;
        self.lock().push((Token::from_text(&value), Instant::now()));
        Ok(value)
    }

    /// Whether `presented` (a request's `?once=`) is a value issued, unused and fresh; it
    /// is used up.
    pub fn redeem(&self, presented: &str) -> bool {
        let mut issued = self.lock();
        issued.retain(|(_, at)| at.elapsed() < ONCE_FOR);
        let found = issued
            .iter()
            .position(|(value, _)| value.matches(presented.as_bytes()));
        found.map(|at| issued.remove(at)).is_some()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(Token, Instant)>> {
        self.issued
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The values of every cookie named `name`.
fn cookies<'a>(headers: &'a HeaderMap, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
    headers
        .get_all(http::header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(move |pair| {
            let (key, value) = pair.trim().split_once('=')?;
            (key == name).then_some(value)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys() -> Keys {
        Keys {
            page: Some(Token::from_text("agd-page-0123456789abcdef0123")),
            relay: Some(Token::from_text("agr-relay-0123456789abcdef012")),
        }
    }

    fn with(name: &'static str, value: &str) -> HeaderMap {
        let mut map = HeaderMap::new();
        map.insert(name, value.parse().unwrap());
        map
    }

    #[test]
    fn the_page_token_or_the_relay_token_opens_the_page_and_nothing_else_does() {
        let keys = keys();
        assert!(keys.admits(&with(
            "cookie",
            "a=b; agent_dashboard=agd-page-0123456789abcdef0123"
        )));
        assert!(keys.admits(&with(
            "cookie",
            "agent_dashboard=agr-relay-0123456789abcdef012"
        )));
        assert!(keys.admits(&with(
            "authorization",
            "Bearer agr-relay-0123456789abcdef012"
        )));
        assert!(!keys.admits(&with(
            "cookie",
            "agent_dashboard=agd-page-0123456789abcdef012"
        )));
        assert!(!keys.admits(&with("cookie", "other=agd-page-0123456789abcdef0123")));
        assert!(!keys.admits(&HeaderMap::new()));
        assert!(
            keys.admits_query(Some("x=1&token=agd-page-0123456789abcdef0123"))
                .is_some()
        );
        assert!(keys.admits_query(Some("token=wrong")).is_none());
        assert!(keys.admits_query(None).is_none());
    }
}
