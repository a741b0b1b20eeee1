//! Secrets by their shape. Redaction by value ([`crate::redact`]) removes every secret agent
//! knows; a text may also hold keys agent never saw — a user's `sk-ant-api03-…` pasted into a
//! prompt, a `ghp_…` a tool printed, a PEM block read from a file, a CLI's error quoting its
//! key — and the hand-off brief would copy them verbatim into another vendor's prompt, a
//! reason into a state file. Each well-known shape is replaced by a placeholder that says what
//! was removed (`[redacted: GitHub token]`), so the reader knows something was there.
//!
//! A shape is a fixed head at a word's start and a long enough run of its alphabet after it:
//! the lengths are set well above any ordinary word (`sk-` alone, "a short-lived sk-ant-at01-
//! access token" and `AKIA` in prose stay), and no regex crate is needed. The two heads an
//! identifier may begin with (`sk-`, `rt_`) also need a run that looks random: both cases
//! and a digit, or digits for a quarter of it (hex) — `rt_spawn_blocking_worker_pool` stays.

/// What a run of bytes may be made of.
#[derive(Clone, Copy)]
enum Alphabet {
    /// Letters, digits, `-` and `_` (most vendors' keys, base64url).
    Token,
    /// Letters and digits.
    Alnum,
    /// Upper-case letters and digits (AWS key ids).
    Upper,
    /// [`Alphabet::Token`] and `.` (Google's OAuth access tokens).
    Dotted,
}

impl Alphabet {
    fn has(self, byte: u8) -> bool {
        match self {
            Alphabet::Token => byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_',
            Alphabet::Alnum => byte.is_ascii_alphanumeric(),
            Alphabet::Upper => byte.is_ascii_uppercase() || byte.is_ascii_digit(),
            Alphabet::Dotted => Alphabet::Token.has(byte) || byte == b'.',
        }
    }
}

/// A head, the alphabet and the least length of what follows it, and what it is.
struct Shape {
    head: &'static str,
    alphabet: Alphabet,
    least: usize,
    /// Exactly `least` long (AWS key ids), not at least.
    exact: bool,
    /// The run must look random ([`looks_random`]): the head alone does not tell a key.
    random: bool,
    what: &'static str,
}

const fn shape(head: &'static str, alphabet: Alphabet, least: usize, what: &'static str) -> Shape {
    Shape {
        head,
        alphabet,
        least,
        exact: false,
        random: false,
        what,
    }
}

/// Longest heads first, so `sk-ant-` wins over `sk-`.
const SHAPES: &[Shape] = &[
    shape("sk-ant-", Alphabet::Token, 20, "Anthropic key"),
    shape("sk-proj-", Alphabet::Token, 20, "OpenAI key"),
    shape("sk-svcacct-", Alphabet::Token, 20, "OpenAI key"),
    shape("sk-admin-", Alphabet::Token, 20, "OpenAI key"),
    shape("sk-or-v1-", Alphabet::Token, 20, "OpenRouter key"),
    Shape {
        random: true,
        ..shape("sk-", Alphabet::Token, 32, "API key")
    },
    shape("github_pat_", Alphabet::Token, 30, "GitHub token"),
    shape("ghp_", Alphabet::Alnum, 30, "GitHub token"),
    shape("gho_", Alphabet::Alnum, 30, "GitHub token"),
    shape("ghu_", Alphabet::Alnum, 30, "GitHub token"),
    shape("ghs_", Alphabet::Alnum, 30, "GitHub token"),
    shape("ghr_", Alphabet::Alnum, 30, "GitHub token"),
    shape("glpat-", Alphabet::Token, 20, "GitLab token"),
    Shape {
        exact: true,
        ..shape("AKIA", Alphabet::Upper, 16, "AWS access key id")
    },
    Shape {
        exact: true,
        ..shape("ASIA", Alphabet::Upper, 16, "AWS access key id")
    },
    shape("AIza", Alphabet::Token, 35, "Google API key"),
    shape("ya29.", Alphabet::Dotted, 20, "Google OAuth token"),
    shape("1//0", Alphabet::Token, 20, "Google refresh token"),
    shape("xoxb-", Alphabet::Token, 20, "Slack token"),
    shape("xoxp-", Alphabet::Token, 20, "Slack token"),
    shape("xoxa-", Alphabet::Token, 20, "Slack token"),
    shape("xoxr-", Alphabet::Token, 20, "Slack token"),
    shape("xoxs-", Alphabet::Token, 20, "Slack token"),
    shape("xapp-", Alphabet::Token, 20, "Slack token"),
    // Codex's refresh token (`tokens.refresh_token` in its `auth.json`).
    Shape {
        random: true,
        ..shape("rt_", Alphabet::Token, 24, "refresh token")
    },
];

/// `text` with every secret of a well-known shape replaced by `[redacted: WHAT]`.
pub fn scrub(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut at = 0;
    while at < bytes.len() {
        let starts_a_word = at == 0 || !Alphabet::Dotted.has(bytes[at - 1]);
        let found = if starts_a_word {
            pem_block(text, at)
                .or_else(|| jwt(bytes, at))
                .map(|(end, what)| (at, end, what))
                .or_else(|| aws_secret(text, at))
                .or_else(|| {
                    let (end, what) = SHAPES.iter().find_map(|shape| matches(shape, bytes, at))?;
                    Some((at, end, what))
                })
        } else {
            None
        };
        match found {
            Some((from, end, what)) => {
                out.push_str(&text[copied..from]);
                out.push_str("[redacted: ");
                out.push_str(what);
                out.push(']');
                copied = end;
                at = end;
            }
            None => at += 1,
        }
    }
    out.push_str(&text[copied..]);
    out
}

/// Where a match of `shape` at `at` ends, and what it is.
fn matches(shape: &Shape, bytes: &[u8], at: usize) -> Option<(usize, &'static str)> {
    let rest = bytes.get(at..)?.strip_prefix(shape.head.as_bytes())?;
    let run = rest.iter().take_while(|&&b| shape.alphabet.has(b)).count();
    let fits = if shape.exact {
        run == shape.least
    } else {
        run >= shape.least
    };
    let start = at + shape.head.len();
    let random = !shape.random || looks_random(&bytes[start..start + run]);
    (fits && random).then_some((start + run, shape.what))
}

/// Whether a run reads as generated, not as words: upper case, lower case and a digit
/// (base62, base64url), or digits for at least a quarter of it with a letter (hex).
fn looks_random(run: &[u8]) -> bool {
    let has = |test: fn(&u8) -> bool| run.iter().any(test);
    let digits = run.iter().filter(|b| b.is_ascii_digit()).count();
    let mixed = has(u8::is_ascii_uppercase) && has(u8::is_ascii_lowercase) && digits > 0;
    let hex = digits * 4 >= run.len() && has(u8::is_ascii_alphabetic);
    mixed || hex
}

/// A JWT: three base64url parts, the first two JSON (`eyJ`), joined by dots.
fn jwt(bytes: &[u8], at: usize) -> Option<(usize, &'static str)> {
    let mut end = at;
    for part in 0..3 {
        let rest = bytes.get(end..)?;
        if part < 2 && !rest.starts_with(b"eyJ") {
            return None;
        }
        let run = rest.iter().take_while(|&&b| Alphabet::Token.has(b)).count();
        if run < 10 {
            return None;
        }
        end += run;
        if part < 2 {
            if bytes.get(end) != Some(&b'.') {
                return None;
            }
            end += 1;
        }
    }
    Some((end, "JWT"))
}

/// A PEM private key block, through its END line (or the end of the text, when cut).
fn pem_block(text: &str, at: usize) -> Option<(usize, &'static str)> {
    let rest = text.get(at..)?.strip_prefix("-----BEGIN ")?;
    let line_end = rest.find('\n').unwrap_or(rest.len());
    if !rest[..line_end].contains("PRIVATE KEY-----") {
        return None;
    }
    let end = match rest.find("-----END ") {
        Some(start) => {
            let tail = &rest[start..];
            let close = tail[9..].find("-----").map_or(tail.len(), |i| 9 + i + 5);
            start + close
        }
        None => rest.len(),
    };
    Some((at + "-----BEGIN ".len() + end, "PEM private key"))
}

/// `aws_secret_access_key = VALUE` (any case, `=` or `:`, quoted or not): where the value
/// (40 characters or more) starts and ends — the name, which tells the reader what was
/// there, is kept.
fn aws_secret(text: &str, at: usize) -> Option<(usize, usize, &'static str)> {
    const NAME: &str = "aws_secret_access_key";
    let head = text.get(at..at + NAME.len())?;
    if !head.eq_ignore_ascii_case(NAME) {
        return None;
    }
    let bytes = text.as_bytes();
    let mut end = at + NAME.len();
    while matches!(
        bytes.get(end),
        Some(b' ' | b'\t' | b'"' | b'\'' | b'=' | b':')
    ) {
        end += 1;
    }
    let run = bytes[end..]
        .iter()
        .take_while(|&&b| b.is_ascii_alphanumeric() || b == b'/' || b == b'+' || b == b'=')
        .count();
    (run >= 40).then_some((end, end + run, "AWS secret key"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_well_known_shape_is_replaced_by_what_it_was() {
        let cases = [
            (
                "sk-ant-api03-Abc123_def456-GHI789jkl012MNO345pqr",
                "Anthropic key",
            ),
            ("sk-ant-oat01-Zx81kQw2Lr0pTn5Yv7cBd9eFg3", "Anthropic key"),
            ("sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "OpenAI key"),
            ("sk-svcacct-Q1w2E3r4T5y6U7i8O9p0AaSsDd", "OpenAI key"),
            ("sk-admin-Q1w2E3r4T5y6U7i8O9p0AaSsDd", "OpenAI key"),
            (
                "sk-or-v1-0f3a9c7e5b1d2f4a6c8e0b9d7f5a3c1e",
                "OpenRouter key",
            ),
            ("sk-Q1w2E3r4T5y6U7i8O9p0AaSsDdFfGgHhJj", "API key"),
            ("sk-0f3a9c7e5b1d2f4a6c8e0b9d7f5a3c1e", "API key"),
            ("ghp_0123456789abcdefABCDEF0123456789abcd", "GitHub token"),
            ("gho_R8mT2vX9qL4nB7cK1zW5yH3jF6dS0aP2eG4u", "GitHub token"),
            ("ghu_R8mT2vX9qL4nB7cK1zW5yH3jF6dS0aP2eG4u", "GitHub token"),
            ("ghs_R8mT2vX9qL4nB7cK1zW5yH3jF6dS0aP2eG4u", "GitHub token"),
            ("ghr_R8mT2vX9qL4nB7cK1zW5yH3jF6dS0aP2eG4u", "GitHub token"),
            (
                "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuv",
                "GitHub token",
            ),
            ("glpat-R8mT2vX9qL4nB7cK1zW5", "GitLab token"),
            ("AKIAIOSFODNN7EXAMPLE", "AWS access key id"),
            ("ASIAJ7QW3ERT5YUI9OPA", "AWS access key id"),
            ("AIzaSyA-0123456789abcdefghijklmnopqrstu", "Google API key"),
            (
                "ya29.a0AfH6SMBx-R8mT2vX9qL4nB7cK1zW5yH3jF6dS0",
                "Google OAuth token",
            ),
            (
                "1//0gR8mT2vX9qL4nB7cK1zW5yH3jF6dS0aP",
                "Google refresh token",
            ),
            (
                "xoxb-123456789012-1234567890123-AbCdEfGhIjKl",
                "Slack token",
            ),
            (
                "xoxp-123456789012-1234567890123-AbCdEfGhIjKl",
                "Slack token",
            ),
            ("xoxa-2-123456789012-AbCdEfGhIjKlMnOp", "Slack token"),
            ("xoxr-123456789012-AbCdEfGhIjKlMnOp", "Slack token"),
            ("xoxs-123456789012-AbCdEfGhIjKlMnOp", "Slack token"),
            ("xapp-1-A0123456789-0123456789012-abcdef0123", "Slack token"),
            ("rt_CODEXFIXTURErefresh0123456789", "refresh token"),
            (
                "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
                "JWT",
            ),
        ];
        for (secret, what) in cases {
            for (before, after) in [("use ", ", then go on"), ("KEY=", "\n"), ("\"", "\"")] {
                let text = format!("{before}{secret}{after}");
                assert_eq!(
                    scrub(&text),
                    format!("{before}[redacted: {what}]{after}"),
                    "{secret}"
                );
            }
        }
    }

    #[test]
    fn a_pem_block_and_an_aws_secret_lose_their_secret_parts() {
        let text = "key:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nAAAA\n-----END OPENSSH PRIVATE KEY-----\nafter";
        assert_eq!(scrub(text), "key:\n[redacted: PEM private key]\nafter");
        let cut = "-----BEGIN RSA PRIVATE KEY-----\nMIIEow";
        assert_eq!(scrub(cut), "[redacted: PEM private key]");
        let aws = "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n";
        assert_eq!(
            scrub(aws),
            "aws_secret_access_key = [redacted: AWS secret key]\n"
        );
        let json = r#"{"AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}"#;
        assert_eq!(
            scrub(json),
            r#"{"AWS_SECRET_ACCESS_KEY": "[redacted: AWS secret key]"}"#
        );
        let named_only = "set aws_secret_access_key in ~/.aws/credentials";
        assert_eq!(scrub(named_only), named_only);
        let public = "-----BEGIN PUBLIC KEY-----\nMFkw\n-----END PUBLIC KEY-----";
        assert_eq!(scrub(public), public);
    }

    #[test]
    fn ordinary_words_and_agents_own_words_stay() {
        for text in [
            "a short-lived sk-ant-at01- access token",
            "sk-learn is a library; ask-me-anything",
            "the AKIA prefix, AKIAIOSFODNN7EXAMPLEX is too long to be an id",
            "ghp_ is GitHub's head; xoxb- is Slack's",
            "xoxb-placeholder-token in the docs",
            "eyJ is how JSON looks in base64",
            "task_rt_main.rs and part_of_a_word",
            "rt_spawn_blocking_worker_pool_thread and rt_SpawnBlockingWorkerPoolThread",
            "sk-learn-estimator-pipeline-v2-configuration-file",
            "the sk- head, and sk-ant-api03- with nothing after it",
            "AKIA1234 is too short, xAKIAIOSFODNN7EXAMPLE is inside a word",
            "ya29. and 1//0 alone, AIzaSy too short",
            "[redacted] stays [redacted]",
            "naïve café — 日本語",
        ] {
            assert_eq!(scrub(text), text);
        }
    }
}
