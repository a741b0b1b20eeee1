//! Secrets by their shape, for text that leaves agent for another vendor (the hand-off
//! brief). Redaction by value ([`crate::redact`]) removes every secret agent knows; a
//! session may also have quoted keys agent never saw — a user's `sk-ant-api03-…` pasted into a
//! prompt, a `ghp_…` a tool printed, a PEM block read from a file — and the brief would copy
//! them verbatim into another vendor's prompt. Each well-known shape is replaced by a
//! placeholder that says what was removed (`[redacted: GitHub token]`), so the next CLI knows
//! something was there.
//!
//! A shape is a fixed head at a word's start and a long enough run of its alphabet after it:
//! the lengths are set well above any ordinary word (`sk-` alone, "a short-lived sk-ant-at01-
//! access token" and `AKIA` in prose stay), and no regex crate is needed.

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
    what: &'static str,
}

const fn shape(head: &'static str, alphabet: Alphabet, least: usize, what: &'static str) -> Shape {
    Shape {
        head,
        alphabet,
        least,
        exact: false,
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
    shape("sk-", Alphabet::Token, 32, "API key"),
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
    shape("xoxb-", Alphabet::Token, 10, "Slack token"),
    shape("xoxp-", Alphabet::Token, 10, "Slack token"),
    shape("xoxa-", Alphabet::Token, 10, "Slack token"),
    shape("xoxr-", Alphabet::Token, 10, "Slack token"),
    shape("xoxs-", Alphabet::Token, 10, "Slack token"),
    shape("xapp-", Alphabet::Token, 10, "Slack token"),
    shape("rt_", Alphabet::Token, 24, "refresh token"),
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
                .or_else(|| aws_secret(text, at))
                .or_else(|| SHAPES.iter().find_map(|shape| matches(shape, bytes, at)))
        } else {
            None
        };
        match found {
            Some((end, what)) => {
                out.push_str(&text[copied..at]);
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
    fits.then_some((at + shape.head.len() + run, shape.what))
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

/// `aws_secret_access_key = VALUE` (any case, `=` or `:`, quoted or not): the 40 characters
/// of the value, the name kept.
fn aws_secret(text: &str, at: usize) -> Option<(usize, &'static str)> {
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
    (run >= 40).then_some((end + run, "AWS secret key"))
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
            ("sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "OpenAI key"),
            ("ghp_0123456789abcdefABCDEF0123456789abcd", "GitHub token"),
            (
                "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuv",
                "GitHub token",
            ),
            ("AKIAIOSFODNN7EXAMPLE", "AWS access key id"),
            ("AIzaSyA-0123456789abcdefghijklmnopqrstu", "Google API key"),
            ("xoxb-123456789012-abcdefABCDEF", "Slack token"),
            ("rt_CODEXFIXTURErefresh0123456789", "refresh token"),
            (
                "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
                "JWT",
            ),
        ];
        for (secret, what) in cases {
            let text = format!("use {secret}, then go on");
            assert_eq!(
                scrub(&text),
                format!("use [redacted: {what}], then go on"),
                "{secret}"
            );
        }
    }

    #[test]
    fn a_pem_block_and_an_aws_secret_lose_their_secret_parts() {
        let text = "key:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nAAAA\n-----END OPENSSH PRIVATE KEY-----\nafter";
        assert_eq!(scrub(text), "key:\n[redacted: PEM private key]\nafter");
        let cut = "-----BEGIN RSA PRIVATE KEY-----\nMIIEow";
        assert_eq!(scrub(cut), "[redacted: PEM private key]");
        let aws = "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n";
        assert_eq!(scrub(aws), "[redacted: AWS secret key]\n");
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
            "eyJ is how JSON looks in base64",
            "task_rt_main.rs and part_of_a_word",
            "naïve café — 日本語",
        ] {
            assert_eq!(scrub(text), text);
        }
    }
}
