//! Who may see the page. A login — the printed URL's `?token=` (good once), `--open`'s
//! `?once=`, or the relay's token — opens a session: a random value that only this process
//! holds, set as an `HttpOnly`, `SameSite=Strict` cookie for [`SESSION_FOR`]. A browser
//! sends a host's cookies to every port of it, so the cookie is never a token that works
//! anywhere else (not on the relay, not on another dashboard). Scripts send the relay's
//! token as a bearer or `x-api-key` instead.
//!
//! Before any of it, the request's `Host` must name the address the page is served on: a
//! page elsewhere that points its own name at 127.0.0.1 (DNS rebinding) is refused.

use std::collections::VecDeque;
use std::net::IpAddr;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use http::HeaderMap;

use crate::access::Token;

/// The cookie a login sets.
pub const COOKIE: &str = "agent_dashboard";

/// How long a session opens the page; the cookie's `Max-Age` says the same.
pub const SESSION_FOR: Duration = Duration::from_secs(8 * 3600);

/// Sessions kept at once per credential; a login past this many ends the oldest of the
/// same credential, so logging in with the relay's token any number of times never ends
/// the session the printed URL opened.
const SESSIONS_KEPT: usize = 64;

/// What opened a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Credential {
    /// The printed URL's token or `--open`'s one-time value: this process's owner, once each.
    Owner,
    /// The relay's token, which every holder of it may present any number of times.
    Relay,
}

/// What opens the page, and the sessions open now.
pub struct Access {
    /// The printed URL's token: it opens one session, then is spent (none under the relay).
    login: Mutex<Option<Token>>,
    /// The relay's token, when there is one: a login any number of times, and a bearer.
    relay: Option<Token>,
    onces: Onces,
    sessions: Sessions,
}

impl Access {
    pub fn new(login: Option<Token>, relay: Option<Token>) -> Access {
        Access {
            login: Mutex::new(login),
            relay,
            onces: Onces::default(),
            sessions: Sessions::new(SESSION_FOR),
        }
    }

    /// Whether the request carries the relay's token (`x-api-key` or a bearer) or a
    /// session's cookie, every one compared.
    pub fn admits(&self, headers: &HeaderMap) -> bool {
        let relay = self.relay.as_ref().is_some_and(|t| t.admits(headers));
        cookies(headers, COOKIE).fold(relay, |ok, value| {
            ok | self.sessions.holds(value.as_bytes())
        })
    }

    /// `?token=`: the printed token (spent by this use) or the relay's opens a new
    /// session, whose cookie value is returned; anything else `None`.
    pub fn log_in(&self, presented: &str) -> anyhow::Result<Option<String>> {
        let owner = {
            let mut login = lock(&self.login);
            let matched = login
                .as_ref()
                .is_some_and(|t| t.matches(presented.as_bytes()));
            if matched {
                *login = None;
            }
            matched
        };
        let relay = self
            .relay
            .as_ref()
            .is_some_and(|t| t.matches(presented.as_bytes()));
        // Both compared whichever matches; the printed token is the owner's when it does.
        let credential = match (owner, relay) {
            (true, _) => Some(Credential::Owner),
            (false, true) => Some(Credential::Relay),
            (false, false) => None,
        };
        self.open_if(credential)
    }

    /// `?once=`: a one-time value issued for `--open`, unused and fresh, opens a session.
    pub fn log_in_once(&self, presented: &str) -> anyhow::Result<Option<String>> {
        self.open_if(self.onces.redeem(presented).then_some(Credential::Owner))
    }

    /// A new one-time value for `--open`.
    pub fn issue_once(&self) -> anyhow::Result<String> {
        self.onces.issue()
    }

    fn open_if(&self, credential: Option<Credential>) -> anyhow::Result<Option<String>> {
        credential
            .map(|credential| self.sessions.open(credential))
            .transpose()
    }
}

/// The sessions this process opened: random values, each good for its lifetime.
struct Sessions {
    lifetime: Duration,
    open: Mutex<VecDeque<(Token, Instant, Credential)>>,
}

impl Sessions {
    fn new(lifetime: Duration) -> Sessions {
        Sessions {
            lifetime,
            open: Mutex::new(VecDeque::new()),
        }
    }

    /// A new session's value (64 hex digits, nothing that names what it opens).
    fn open(&self, credential: Credential) -> anyhow::Result<String> {
        let value = crate::access::generate("")?;
        let mut open = lock(&self.open);
        let same = |(_, _, by): &&(Token, Instant, Credential)| *by == credential;
        if open.iter().filter(same).count() >= SESSIONS_KEPT
            && let Some(oldest) = open.iter().position(|s| same(&s))
        {
            open.remove(oldest);
        }
        open.push_back((Token::from_text(&value), Instant::now(), credential));
        Ok(value)
    }

    /// Whether `presented` is an open session, every one compared in constant time.
    fn holds(&self, presented: &[u8]) -> bool {
        let mut open = lock(&self.open);
        open.retain(|(_, at, _)| at.elapsed() < self.lifetime);
        open.iter().fold(false, |found, (value, _, _)| {
            found | value.matches(presented)
        })
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
struct Onces {
    issued: Mutex<Vec<(Token, Instant)>>,
}

impl Onces {
    /// A new one-time value.
    fn issue(&self) -> anyhow::Result<String> {
        let value = crate::access::generate("ago-")?;
        lock(&self.issued).push((Token::from_text(&value), Instant::now()));
        Ok(value)
    }

    /// Whether `presented` (a request's `?once=`) is a value issued, unused and fresh; it
    /// is used up.
    fn redeem(&self, presented: &str) -> bool {
        let mut issued = lock(&self.issued);
        issued.retain(|(_, at)| at.elapsed() < ONCE_FOR);
        let found = issued
            .iter()
            .position(|(value, _)| value.matches(presented.as_bytes()));
        found.map(|at| issued.remove(at)).is_some()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Whether a request names the address the page is served on, in its `Host` (and its
/// target, when absolute): `localhost`, a loopback address, or the address listened on
/// (any address, when listening on all of them), on whatever port (an ssh tunnel changes
/// it). Any other name is refused: a page that points its own name at this address (DNS
/// rebinding) would otherwise be served as this page's own origin.
pub fn host_is_served(headers: &HeaderMap, target: &http::Uri, listening: IpAddr) -> bool {
    let Some(host) = headers
        .get(http::header::HOST)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<http::uri::Authority>().ok())
    else {
        return false;
    };
    let served = |host: &str| {
        let host = host.trim_start_matches('[').trim_end_matches(']');
        if host.eq_ignore_ascii_case("localhost") {
            return true;
        }
        host.parse::<IpAddr>()
            .is_ok_and(|ip| ip.is_loopback() || ip == listening || listening.is_unspecified())
    };
    served(host.host()) && target.host().is_none_or(served)
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

    const LOGIN: &str = "agd-page-0123456789abcdef0123";
    const RELAY: &str = "agr-relay-0123456789abcdef012";

    fn access() -> Access {
        Access::new(Some(Token::from_text(LOGIN)), Some(Token::from_text(RELAY)))
    }

    fn with(name: &'static str, value: &str) -> HeaderMap {
        let mut map = HeaderMap::new();
        map.insert(name, value.parse().unwrap());
        map
    }

    #[test]
    fn a_login_opens_a_session_whose_cookie_opens_the_page_and_no_token_is_a_cookie() {
        let access = access();
        let session = access
            .log_in(LOGIN)
            .unwrap()
            .expect("the printed token logs in");
        assert!(!session.contains(LOGIN) && !session.contains(RELAY));
        assert!(access.admits(&with("cookie", &format!("a=b; {COOKIE}={session}"))));
        assert!(!access.admits(&with("cookie", &format!("other={session}"))));
        // Neither token works as the cookie; the relay's works as a bearer.
        assert!(!access.admits(&with("cookie", &format!("{COOKIE}={LOGIN}"))));
        assert!(!access.admits(&with("cookie", &format!("{COOKIE}={RELAY}"))));
        assert!(access.admits(&with("authorization", &format!("Bearer {RELAY}"))));
        assert!(!access.admits(&with("authorization", &format!("Bearer {LOGIN}"))));
        // A session is not a bearer either: it is for this page's cookie alone.
        assert!(!access.admits(&with("authorization", &format!("Bearer {session}"))));
        assert!(!access.admits(&HeaderMap::new()));
    }

    #[test]
    fn the_printed_token_logs_in_once_and_the_relays_any_number_of_times() {
        let access = access();
        assert!(access.log_in("wrong").unwrap().is_none());
        assert!(
            access.log_in(LOGIN).unwrap().is_some(),
            "a wrong try spent it"
        );
        assert!(access.log_in(LOGIN).unwrap().is_none(), "used twice");
        let one = access.log_in(RELAY).unwrap().unwrap();
        let two = access.log_in(RELAY).unwrap().unwrap();
        assert_ne!(one, two);
    }

    #[test]
    fn logins_end_only_sessions_of_their_own_credential() {
        let access = access();
        let owner = access.log_in(LOGIN).unwrap().unwrap();
        let relay: Vec<String> = (0..=SESSIONS_KEPT)
            .map(|_| access.log_in(RELAY).unwrap().unwrap())
            .collect();
        let opens = |value: &str| access.admits(&with("cookie", &format!("{COOKIE}={value}")));
        assert!(opens(&owner));
        assert!(!opens(&relay[0]), "the relay's oldest made room");
        assert!(relay[1..].iter().all(|value| opens(value)));
    }

    #[test]
    fn a_session_ends_with_its_lifetime_and_no_other_dashboard_knows_it() {
        let ended = Sessions::new(Duration::ZERO);
        let value = ended.open(Credential::Owner).unwrap();
        assert!(!ended.holds(value.as_bytes()));

        let (here, there) = (access(), access());
        let value = here.log_in(RELAY).unwrap().unwrap();
        assert!(!there.admits(&with("cookie", &format!("{COOKIE}={value}"))));
    }

    #[test]
    fn only_the_address_listened_on_or_loopback_is_a_host_served() {
        let served = |host: &str, listening: &str| {
            host_is_served(
                &with("host", host),
                &http::Uri::from_static("/"),
                listening.parse().unwrap(),
            )
        };
        for host in [
            "127.0.0.1:4000",
            "localhost:4000",
            "LOCALHOST",
            "[::1]:4000",
        ] {
            assert!(served(host, "127.0.0.1"), "{host}");
        }
        assert!(served("127.0.0.1:9999", "127.0.0.1"), "a tunnel's port");
        assert!(served("10.0.0.11:18790", "10.0.0.11"));
        assert!(served("10.0.0.11:18790", "0.0.0.0"));
        for host in [
            "evil.example:4000",
            "evil.example",
            "127.0.0.1.evil.example",
            "localhost.evil.example",
            "10.0.0.12",
            "",
        ] {
            assert!(!served(host, "127.0.0.1"), "{host}");
        }
        assert!(!host_is_served(
            &HeaderMap::new(),
            &http::Uri::from_static("/"),
            "127.0.0.1".parse().unwrap()
        ));
        assert!(!host_is_served(
            &with("host", "127.0.0.1"),
            &http::Uri::from_static("http://evil.example/"),
            "127.0.0.1".parse().unwrap()
        ));
    }
}
