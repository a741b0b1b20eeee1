//! Who may reach agent's local servers (the relay and the dashboard): loopback unless the
//! user means otherwise, and a bearer token compared in constant time. Shared here, below
//! the faces, because faces may not import each other.

use std::fs;
use std::io::{self, Read as _};
use std::net::{SocketAddr, ToSocketAddrs as _};
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use http::HeaderMap;
use subtle::ConstantTimeEq as _;

use crate::exit_codes::usage;

/// Where the relay token may come from instead of its file.
pub const RELAY_TOKEN_ENV: &str = "AGENT_RELAY_TOKEN";
/// Shorter tokens are refused: a guessable token would hand out every key behind it.
const MIN_LEN: usize = 24;

/// Where `agent --relay init` keeps the relay token: beside the configuration, 0600.
pub fn relay_token_path() -> anyhow::Result<PathBuf> {
    crate::paths::relay_token_file()
        .context("no home directory to keep the relay token in (set HOME)")
}

/// Where to listen, refusing a non-loopback address without `allow_remote`. `setting`
/// names where the address came from, for the message.
pub fn listen_address(setting: &str, text: &str, allow_remote: bool) -> anyhow::Result<SocketAddr> {
    let addrs: Vec<SocketAddr> = text
        .to_socket_addrs()
        .map_err(|err| usage(format!("{setting} = \"{text}\": {err}")))?
        .collect();
    let Some(first) = addrs.first().copied() else {
        return Err(usage(format!("{setting} = \"{text}\": no address")));
    };
    if !allow_remote && !addrs.iter().all(|a| a.ip().is_loopback()) {
        return Err(usage(format!(
            "refusing to listen on {text}: it is not a loopback address, and anyone who can reach it could use a stolen token. Pass --allow-remote to mean it (or keep 127.0.0.1 and use an ssh tunnel)"
        )));
    }
    Ok(first)
}

/// Says so when a secret's file may be read by its group or everyone: served anyway (the
/// owner may mean it, and refusing would stop a relay on a reboot), but never silently.
/// `renew` says what to do if someone may have read it.
pub fn warn_if_others_read(path: &Path, what: &str, renew: &str) {
    use std::os::unix::fs::PermissionsExt as _;
    let Ok(meta) = fs::metadata(path) else {
        return;
    };
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        crate::term::warn(&format!(
            "{} is {mode:o}: other users can read {what} in it and spend every key behind the relay; chmod 600 {}, and if someone may have read it, {renew}",
            path.display(),
            crate::text::shell_quote(&path.to_string_lossy())
        ));
    }
}

/// A bearer token a client must present.
#[derive(Clone)]
pub struct Token(String);

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token([redacted])")
    }
}

impl Token {
    /// The relay token: `AGENT_RELAY_TOKEN`, else the token file. Registered for redaction
    /// at once. A missing token is a usage error naming the fix.
    pub fn load_relay() -> anyhow::Result<Token> {
        let (token, from) = match std::env::var(RELAY_TOKEN_ENV) {
            Ok(value) if !value.trim().is_empty() => {
                (value.trim().to_string(), RELAY_TOKEN_ENV.to_string())
            }
            _ => {
                let path = relay_token_path()?;
                let text = match fs::read_to_string(&path) {
                    Ok(text) => text,
                    Err(err) if err.kind() == io::ErrorKind::NotFound => {
                        return Err(usage(format!(
                            "no relay token: run `agent --relay init` (writes {}) or set {RELAY_TOKEN_ENV}",
                            path.display()
                        )));
                    }
                    Err(err) => {
                        return Err(err).with_context(|| format!("reading {}", path.display()));
                    }
                };
                warn_if_others_read(
                    &path,
                    "the relay token",
                    "`agent --relay init --force` makes a new one",
                );
                (text.trim().to_string(), path.display().to_string())
            }
        };
        crate::redact::register(&token);
        if token.len() < MIN_LEN {
            return Err(usage(format!(
                "the relay token from {from} is shorter than {MIN_LEN} characters; run `agent --relay init --force` for a new one"
            )));
        }
        Ok(Token(token))
    }

    /// A new random token (`prefix` and 64 hex digits), registered for redaction.
    pub fn fresh(prefix: &str) -> anyhow::Result<Token> {
        let token = generate(prefix)?;
        crate::redact::register(&token);
        Ok(Token(token))
    }

    pub fn from_text(text: &str) -> Token {
        Token(text.to_string())
    }

    /// The token itself, for the one place that must show it (a URL printed once).
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Whether `presented` is this token, in constant time (a length difference alone
    /// ends it early).
    pub fn matches(&self, presented: &[u8]) -> bool {
        bool::from(presented.ct_eq(self.0.as_bytes()))
    }

    /// Whether the request carries this token, in `x-api-key` or as a bearer.
    pub fn admits(&self, headers: &HeaderMap) -> bool {
        // Both places are compared, whichever matches: no early answer to time.
        presented(headers).fold(false, |ok, value| ok | self.matches(value))
    }
}

/// The tokens a request carries: `x-api-key`, then `Authorization: Bearer …`.
pub fn presented(headers: &HeaderMap) -> impl Iterator<Item = &[u8]> {
    [
        headers.get("x-api-key").map(http::HeaderValue::as_bytes),
        bearer(headers),
    ]
    .into_iter()
    .flatten()
}

/// The value of `Authorization: Bearer …`, if sent.
pub fn bearer(headers: &HeaderMap) -> Option<&[u8]> {
    let value = headers.get(http::header::AUTHORIZATION)?.as_bytes();
    (value.len() > 7 && value[..7].eq_ignore_ascii_case(b"bearer ")).then(|| &value[7..])
}

/// `prefix` and 64 hex digits from the kernel's random source.
pub fn generate(prefix: &str) -> anyhow::Result<String> {
    let mut bytes = [0u8; 32];
    fs::File::open("/dev/urandom")
        .and_then(|mut random| random.read_exact(&mut bytes))
        .context("reading /dev/urandom")?;
    Ok(format!("{prefix}{}", crate::digest::hex(&bytes)))
}

/// The next connection to serve, or `None` once Ctrl-C or SIGTERM asks the server to stop.
/// A failed accept (out of descriptors and the like) is said, and the wait goes on.
pub async fn next_connection(
    listener: &tokio::net::TcpListener,
    terminate: &mut tokio::signal::unix::Signal,
    server: &str,
) -> Option<tokio::net::TcpStream> {
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _peer)) => {
                    // Small answers must not wait on Nagle against delayed ACK.
                    let _ = stream.set_nodelay(true);
                    return Some(stream);
                }
                Err(err) => {
                    crate::term::warn(&format!("{server}: accepting a connection: {err}"));
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                }
            },
            _ = tokio::signal::ctrl_c() => return None,
            _ = terminate.recv() => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, value.parse().unwrap());
        }
        map
    }

    #[test]
    fn the_token_is_accepted_in_either_header_and_nothing_else_is() {
        let token = Token::from_text("agr-0123456789abcdef0123456789");
        assert!(token.admits(&headers(&[("x-api-key", "agr-0123456789abcdef0123456789")])));
        assert!(token.admits(&headers(&[(
            "authorization",
            "Bearer agr-0123456789abcdef0123456789"
        )])));
        assert!(!token.admits(&headers(&[("x-api-key", "agr-0123456789abcdef012345678")])));
        assert!(!token.admits(&headers(&[(
            "authorization",
            "agr-0123456789abcdef0123456789"
        )])));
        assert!(!token.admits(&HeaderMap::new()));
    }

    #[test]
    fn generated_tokens_are_long_and_distinct() {
        let a = generate("agr-").unwrap();
        let b = generate("agr-").unwrap();
        assert_eq!(a.len(), 68);
        assert_ne!(a, b);
    }

    #[test]
    fn only_loopback_addresses_are_served_without_allow_remote() {
        assert!(listen_address("--listen", "127.0.0.1:0", false).is_ok());
        assert!(listen_address("--listen", "[::1]:0", false).is_ok());
        let err = listen_address("--listen", "0.0.0.0:18790", false).unwrap_err();
        assert!(format!("{err:#}").contains("--allow-remote"), "{err:#}");
        assert!(listen_address("--listen", "0.0.0.0:18790", true).is_ok());
    }
}
