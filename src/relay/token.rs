//! The relay token: what clients hold instead of the real keys. From `AGENT_RELAY_TOKEN`,
//! else the 0600 file `agent --relay init` writes. Clients send it in `x-api-key` or
//! `Authorization: Bearer`; it is compared in constant time.

use std::fs;
use std::io::{self, Read as _};
use std::path::PathBuf;

use anyhow::{Context as _, bail};
use http::HeaderMap;
use subtle::ConstantTimeEq as _;

use crate::exit_codes::usage;
use crate::state::file::{self as state_file, Durability};

pub const ENV: &str = "AGENT_RELAY_TOKEN";
/// Shorter tokens are refused: a guessable token would hand out every key behind it.
const MIN_LEN: usize = 24;

/// Where `agent --relay init` keeps the token: beside the configuration, 0600.
pub fn path() -> anyhow::Result<PathBuf> {
    crate::paths::relay_token_file()
        .context("no home directory to keep the relay token in (set HOME)")
}

/// The token clients must present.
pub struct Token(String);

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token([redacted])")
    }
}

impl Token {
    /// `AGENT_RELAY_TOKEN`, else the token file. Registered for redaction at once.
    pub fn load() -> anyhow::Result<Token> {
        let (token, from) = match std::env::var(ENV) {
            Ok(value) if !value.trim().is_empty() => (value.trim().to_string(), ENV.to_string()),
            _ => {
                let path = path()?;
                let text = match fs::read_to_string(&path) {
                    Ok(text) => text,
                    Err(err) if err.kind() == io::ErrorKind::NotFound => {
                        return Err(usage(format!(
                            "no relay token: run `agent --relay init` (writes {}) or set {ENV}",
                            path.display()
                        )));
                    }
                    Err(err) => {
                        return Err(err).with_context(|| format!("reading {}", path.display()));
                    }
                };
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

    #[cfg(test)]
    pub fn from_text(text: &str) -> Token {
        Token(text.to_string())
    }

    /// Whether the request carries this token, in `x-api-key` or as a bearer. Compared in
    /// constant time (a length difference alone ends it early).
    pub fn admits(&self, headers: &HeaderMap) -> bool {
        let mut ok = false;
        if let Some(value) = headers.get("x-api-key") {
            ok |= bool::from(value.as_bytes().ct_eq(self.0.as_bytes()));
        }
        if let Some(value) = headers.get(http::header::AUTHORIZATION) {
            let value = value.as_bytes();
            if value.len() > 7 && value[..7].eq_ignore_ascii_case(b"bearer ") {
                ok |= bool::from(value[7..].ct_eq(self.0.as_bytes()));
            }
        }
        ok
    }
}

/// `agent --relay init`: a new random token in the 0600 file. An existing one is kept
/// unless `force` (clients holding it would be locked out).
pub fn init(force: bool) -> anyhow::Result<PathBuf> {
    let path = path()?;
    if path.exists() && !force {
        bail!(
            "{} already holds a relay token; `agent --relay init --force` replaces it (clients using the old one will get 401)",
            path.display()
        );
    }
    let token = generate()?;
    let _lock = state_file::lock(&path)?;
    state_file::write_atomic(&path, format!("{token}\n").as_bytes(), Durability::Synced)?;
    Ok(path)
}

/// `agr-` and 64 hex digits from the kernel's random source.
fn generate() -> anyhow::Result<String> {
    let mut bytes = [0u8; 32];
    fs::File::open("/dev/urandom")
        .and_then(|mut random| random.read_exact(&mut bytes))
        .context("reading /dev/urandom")?;
    let mut token = String::with_capacity(4 + 64);
    token.push_str("agr-");
    for byte in bytes {
        use std::fmt::Write as _;
        let _ = write!(token, "{byte:02x}");
    }
    Ok(token)
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
        let a = generate().unwrap();
        let b = generate().unwrap();
        assert_eq!(a.len(), 68);
        assert_ne!(a, b);
    }
}
