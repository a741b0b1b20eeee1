//! Secrets are removed by value wherever they would appear: reasons, errors, state files.
//! A value counts as secret because of where it came from (a probe key, a credential
//! variable), and once known it is scrubbed from any text, whatever field carries it. What
//! is left then loses every secret of a well-known shape agent never saw
//! ([`crate::secret_shapes`]): a CLI's error may quote a key of its own.
//!
//! Every pass *marks* bytes of the original text and the marked runs are replaced once at
//! the end. Replacing pass by pass is what leaked: with two Anthropic keys known, the first
//! key's 12-character head (`sk-ant-api03`, shared by every key) was replaced inside the
//! second key's echo, so neither the second key's whole value nor its head matched any
//! more and most of it survived. Marking on the original text makes the passes independent
//! of their order.

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};

const MARK: &str = "[redacted]";
/// Shorter values are not treated as secrets (they would scrub ordinary words).
const MIN_SECRET_LEN: usize = 8;
/// Any run of this many characters of a secret's own part is scrubbed wherever it appears:
/// error messages like to echo a head or a tail ("Incorrect API key: sk-abc…wxyz").
const WINDOW: usize = 12;
/// The last characters of a long secret, which vendors echo on their own ("…wxyz" shown
/// as the last 8 by some gateways).
const TAIL: usize = 8;

/// The fixed heads vendors put in front of the random part. They are the same for every
/// key, so they are no secret, and agent's own words quote them ("a short-lived
/// sk-ant-at01- access token"): fragments are taken from what follows them only.
/// Longest first, so `sk-ant-api03-` wins over `sk-ant-` and `sk-`.
const VENDOR_HEADS: &[&str] = &[
    "sk-ant-admin01-",
    "sk-ant-api03-",
    "sk-ant-oat01-",
    "sk-ant-ort01-",
    "sk-ant-at01-",
    "sk-ant-rt01-",
    "github_pat_",
    "sk-svcacct-",
    "sk-or-v1-",
    "sk-admin-",
    "sk-proj-",
    "sk-ant-",
    "glpat-",
    "ghp_",
    "gho_",
    "ghs_",
    "xoxb-",
    "xoxp-",
    "ya29.",
    "AIza",
    "1//",
    "sk-",
];

/// A set of secrets and the fragments of them to look for.
#[derive(Debug, Default)]
pub struct Redactor {
    /// Whole values, each scrubbed wherever it appears.
    values: Vec<String>,
    /// Every `WINDOW`-byte run of every secret's own part.
    windows: HashSet<[u8; WINDOW]>,
    /// The last `TAIL` bytes of each long secret's own part.
    tails: Vec<String>,
}

impl Redactor {
    pub fn new<I: IntoIterator<Item = S>, S: AsRef<str>>(secrets: I) -> Self {
        let mut redactor = Self::default();
        for secret in secrets {
            redactor.add(secret.as_ref());
        }
        redactor
    }

    /// Learns one more secret; values shorter than `MIN_SECRET_LEN` are ignored.
    pub fn add(&mut self, secret: &str) {
        if secret.len() < MIN_SECRET_LEN || self.values.iter().any(|known| known == secret) {
            return;
        }
        self.values.push(secret.to_string());
        let own = own_part(secret).as_bytes();
        if own.len() >= WINDOW {
            for window in own.windows(WINDOW) {
                self.windows
                    .insert(window.try_into().expect("windows are WINDOW long"));
            }
        }
        if own.len() >= 20 {
            let tail = &own[own.len() - TAIL..];
            // Only a tail that is whole characters can be searched for as text.
            if let Ok(tail) = std::str::from_utf8(tail) {
                self.tails.push(tail.to_string());
            }
        }
    }

    /// `text` with every known secret, every `WINDOW`-character fragment of a secret's own
    /// part and every URL's credentials (its userinfo, a `?pass=`) removed.
    pub fn redact(&self, text: &str) -> String {
        let text = strip_url_credentials(text);
        let bytes = text.as_bytes();
        let mut marked = vec![false; bytes.len()];
        let mut any = false;
        let mut mark = |start: usize, len: usize| {
            marked[start..start + len].fill(true);
            any = true;
        };
        for value in self.values.iter().chain(&self.tails) {
            for (at, _) in text.match_indices(value.as_str()) {
                mark(at, value.len());
            }
        }
        if !self.windows.is_empty() && bytes.len() >= WINDOW {
            for start in 0..=bytes.len() - WINDOW {
                let window: &[u8; WINDOW] = bytes[start..start + WINDOW]
                    .try_into()
                    .expect("slice is WINDOW long");
                if self.windows.contains(window) {
                    mark(start, WINDOW);
                }
            }
        }
        if !any {
            return text.into_owned();
        }
        replace_marked(&text, &marked)
    }
}

/// The part of a secret that is its own: without the vendor's fixed head.
fn own_part(secret: &str) -> &str {
    VENDOR_HEADS
        .iter()
        .find_map(|head| secret.strip_prefix(head))
        .unwrap_or(secret)
}

/// Replaces each maximal run of marked characters (a character counts as marked when any
/// of its bytes is) by one `MARK`.
fn replace_marked(text: &str, marked: &[bool]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_run = false;
    for (at, c) in text.char_indices() {
        if marked[at..at + c.len_utf8()].contains(&true) {
            if !in_run {
                out.push_str(MARK);
                in_run = true;
            }
        } else {
            in_run = false;
            out.push(c);
        }
    }
    out
}

/// `scheme://user:password@host/…?pass=P&db=0` → `scheme://host/…?pass=[redacted]&db=0`,
/// for every URL in `text`. A URL's userinfo is a credential however it was written, and so
/// is a query parameter named for one (`pass`, `password`, `token`, `key`, `sig`, …): neither
/// is ever shown or stored.
pub fn strip_url_credentials(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains("://") || !(text.contains('@') || text.contains('?')) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let (before, after) = rest.split_at(at + 3);
        out.push_str(before);
        let url_len = after
            .find(|c: char| matches!(c, '"' | '\'' | '<' | '>' | '`') || c.is_whitespace())
            .unwrap_or(after.len());
        let authority_len = after[..url_len].find(['/', '?', '#']).unwrap_or(url_len);
        let authority = &after[..authority_len];
        match authority.rfind('@') {
            Some(userinfo_end) => out.push_str(&authority[userinfo_end + 1..]),
            None => out.push_str(authority),
        }
        // The rest of this URL, its query's secrets gone; a URL inside it is looked at next.
        let (path, tail) = after[authority_len..].split_at(url_len - authority_len);
        let path = without_query_secrets(path);
        if path.contains("://") {
            out.push_str(&strip_url_credentials(&path));
        } else {
            out.push_str(&path);
        }
        rest = tail;
    }
    out.push_str(rest);
    std::borrow::Cow::Owned(out)
}

/// Whether a URL's query parameter of this name carries a credential.
pub fn is_secret_query_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    looks_secret(name)
        || ["pass", "passwd", "pwd", "auth", "sig", "signature"].contains(&lower.as_str())
}

/// The values of a URL's query parameters named for a credential, as written.
pub fn query_secrets(url: &str) -> Vec<&str> {
    let Some((_, query)) = url.split_once('?') else {
        return Vec::new();
    };
    let query = query.split('#').next().unwrap_or("");
    query
        .split(['&', ';'])
        .filter_map(|pair| pair.split_once('='))
        .filter(|(name, value)| !value.is_empty() && is_secret_query_name(name))
        .map(|(_, value)| value)
        .collect()
}

/// `path?query#fragment` with the value of each parameter named for a credential replaced.
fn without_query_secrets(path: &str) -> std::borrow::Cow<'_, str> {
    let Some(mark) = path.find('?') else {
        return std::borrow::Cow::Borrowed(path);
    };
    let (head, query) = path.split_at(mark + 1);
    let (query, fragment) = query.split_at(query.find('#').unwrap_or(query.len()));
    let mut out = String::with_capacity(path.len());
    out.push_str(head);
    for pair in query.split_inclusive(['&', ';']) {
        let (pair, separator) = match pair.strip_suffix(['&', ';']) {
            Some(bare) => (bare, &pair[bare.len()..]),
            None => (pair, ""),
        };
        match pair.split_once('=') {
            Some((name, value)) if !value.is_empty() && is_secret_query_name(name) => {
                out.push_str(name);
                out.push('=');
                out.push_str(MARK);
            }
            _ => out.push_str(pair),
        }
        out.push_str(separator);
    }
    out.push_str(fragment);
    std::borrow::Cow::Owned(out)
}

/// The process's secrets. Indexing a secret (every window of it hashed) costs more than a
/// warm launch's whole choice of rung, and most runs never redact anything: secrets are
/// only noted when learned, and indexed, with the environment's, at the first redaction.
#[derive(Default)]
struct Registry {
    noted: Vec<String>,
    redactor: Option<Redactor>,
}

impl Registry {
    fn note(&mut self, secret: &str) {
        match &mut self.redactor {
            Some(redactor) => redactor.add(secret),
            None => self.noted.push(secret.to_string()),
        }
    }

    fn redactor(&mut self) -> &mut Redactor {
        let redactor = self.redactor.get_or_insert_with(|| {
            Redactor::new(
                std::env::vars()
                    .filter(|(name, _)| looks_secret(name))
                    .map(|(_, value)| value),
            )
        });
        for secret in self.noted.drain(..) {
            redactor.add(&secret);
        }
        redactor
    }
}

fn registry() -> std::sync::MutexGuard<'static, Registry> {
    static SECRETS: OnceLock<Mutex<Registry>> = OnceLock::new();
    SECRETS
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
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
    registry().note(secret);
}

/// Scrubs every secret this process knows, every URL's credentials and every secret of a
/// well-known shape from `text`.
pub fn redact(text: &str) -> String {
    let known = registry().redactor().redact(text);
    crate::secret_shapes::scrub(&known)
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
    fn secrets_noted_before_and_after_the_first_redaction_are_scrubbed() {
        let mut registry = Registry::default();
        registry.note("sk-before-0123456789abcdefghij");
        assert_eq!(
            registry
                .redactor()
                .redact("k=sk-before-0123456789abcdefghij"),
            "k=[redacted]"
        );
        registry.note("sk-after-0123456789abcdefghij");
        assert_eq!(
            registry
                .redactor()
                .redact("k=sk-after-0123456789abcdefghij and sk-before-0123456789abcdefghij"),
            "k=[redacted] and [redacted]"
        );
    }

    #[test]
    fn short_values_are_not_secrets() {
        register("abc");
        assert_eq!(redact("abc def"), "abc def");
    }

    #[test]
    fn two_keys_with_one_vendor_head_are_both_scrubbed() {
        let first = "sk-ant-api03-AAAAbbbbCCCCddddEEEEffff0000";
        let second = "sk-ant-api03-ZZZZyyyyXXXXwwwwVVVVuuuu9999";
        let redactor = Redactor::new([first, second]);
        let out = redactor.redact(&format!("invalid x-api-key: {second}"));
        assert_eq!(out, "invalid x-api-key: [redacted]");
    }

    #[test]
    fn agents_own_words_quoting_a_vendor_head_survive() {
        let redactor = Redactor::new(["sk-ant-at01-QQQQrrrrSSSSttttUUUUvvvv"]);
        let hint = "that is a short-lived sk-ant-at01- access token; run `claude setup-token` \
                    for a long-lived sk-ant-oat01- token";
        assert_eq!(redactor.redact(hint), hint);
    }

    #[test]
    fn a_url_loses_its_userinfo() {
        let redactor = Redactor::default();
        assert_eq!(
            redactor.redact("POST https://user:pa55word@hooks.example/agent failed"),
            "POST https://hooks.example/agent failed"
        );
        assert_eq!(
            redactor.redact("to http://tok@127.0.0.1:9/x and ftp://h/y@z"),
            "to http://127.0.0.1:9/x and ftp://h/y@z"
        );
        assert_eq!(
            redactor.redact("mail me@example.org"),
            "mail me@example.org"
        );
    }

    #[test]
    fn a_url_loses_the_secrets_in_its_query_and_keeps_the_rest() {
        let redactor = Redactor::default();
        assert_eq!(
            redactor.redact("store at redis://h:6379/?pass=hunter2hunter2&db=3 is down"),
            "store at redis://h:6379/?pass=[redacted]&db=3 is down"
        );
        assert_eq!(
            redactor
                .redact("redis://h/0?Password=p4ssw0rd#x and https://e/?q=1&token=t0k3n;sig=s1g"),
            "redis://h/0?Password=[redacted]#x and https://e/?q=1&token=[redacted];sig=[redacted]"
        );
        assert_eq!(
            redactor.redact("https://e/?next=http://u:pw@h/?key=k3y&page=2"),
            "https://e/?next=http://h/?key=[redacted]&page=2"
        );
        assert_eq!(redactor.redact("what? a://b"), "what? a://b");
        assert_eq!(
            query_secrets("redis://h/?pass=one&db=0&auth=two"),
            ["one", "two"]
        );
    }

    /// Property: for any set of secrets — sharing heads, tails and vendor prefixes — and any
    /// text holding them whole or in fragments, no `WINDOW`-character run of any secret's
    /// own part survives; and text holding no secret comes back unchanged.
    #[test]
    fn no_window_of_any_secret_survives_any_text() {
        const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        const WORDS: &[&str] = &[
            "invalid",
            "x-api-key:",
            "Incorrect",
            "API",
            "key",
            "provided:",
            "{\"error\":",
            "…",
            " ",
            " ",
            "\n",
            "sk-ant-",
            "token",
            "[redacted]",
            "é",
            "日本",
            ",",
            "\"",
        ];
        let mut rng = fastrand::Rng::with_seed(0x005e_c2e7);
        let random = |rng: &mut fastrand::Rng, len: usize| -> String {
            (0..len)
                .map(|_| ALPHABET[rng.usize(..ALPHABET.len())] as char)
                .collect()
        };
        for case in 0..3000 {
            let head_len = rng.usize(0..30);
            let shared_head = random(&mut rng, head_len);
            let tail_len = rng.usize(0..16);
            let shared_tail = random(&mut rng, tail_len);
            let count = rng.usize(1..5);
            let secrets: Vec<String> = (0..count)
                .map(|_| {
                    let vendor = if rng.bool() {
                        VENDOR_HEADS[rng.usize(..VENDOR_HEADS.len())]
                    } else {
                        ""
                    };
                    let head = if rng.bool() { shared_head.as_str() } else { "" };
                    let tail = if rng.bool() { shared_tail.as_str() } else { "" };
                    let middle_len = rng.usize(1..48);
                    format!("{vendor}{head}{}{tail}", random(&mut rng, middle_len))
                })
                .filter(|s| s.len() >= MIN_SECRET_LEN)
                .collect();
            let redactor = Redactor::new(&secrets);

            let mut text = String::new();
            for _ in 0..rng.usize(1..12) {
                match rng.usize(0..4) {
                    0 if !secrets.is_empty() => {
                        text.push_str(&secrets[rng.usize(..secrets.len())]);
                    }
                    1 if !secrets.is_empty() => {
                        // A fragment of at least a window: what an echo keeps.
                        let own = own_part(&secrets[rng.usize(..secrets.len())]);
                        if own.len() >= WINDOW {
                            let start = rng.usize(..=own.len() - WINDOW);
                            let end = rng.usize(start + WINDOW..=own.len());
                            text.push_str(&own[start..end]);
                        }
                    }
                    _ => text.push_str(WORDS[rng.usize(..WORDS.len())]),
                }
            }
            let out = redactor.redact(&text);
            for secret in &secrets {
                let own = own_part(secret);
                for start in 0..own.len().saturating_sub(WINDOW - 1) {
                    let window = &own[start..start + WINDOW];
                    assert!(
                        !out.contains(window),
                        "case {case}: {window:?} of {secret:?} survived\n secrets {secrets:?}\n text {text:?}\n out {out:?}"
                    );
                }
                if own.len() < WINDOW {
                    assert!(
                        !out.contains(secret.as_str()),
                        "case {case}: {secret:?} survived in {out:?}"
                    );
                }
            }

            let plain: String = (0..rng.usize(0..20))
                .map(|_| WORDS[rng.usize(..WORDS.len())])
                .collect();
            if !secrets.iter().any(|s| plain.contains(s.as_str())) {
                let covered = (0..plain.len().saturating_sub(WINDOW - 1)).any(|i| {
                    plain.is_char_boundary(i)
                        && plain.is_char_boundary(i + WINDOW)
                        && redactor.windows.contains(
                            <&[u8; WINDOW]>::try_from(&plain.as_bytes()[i..i + WINDOW]).unwrap(),
                        )
                });
                if !covered && !redactor.tails.iter().any(|t| plain.contains(t.as_str())) {
                    assert_eq!(
                        redactor.redact(&plain),
                        plain,
                        "case {case}: own words changed"
                    );
                }
            }
        }
    }
}
