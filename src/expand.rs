//! `${VAR}` and `${VAR:-default}` expansion. A referenced variable that is unset or empty is
//! an error naming it — never a silent empty string (the seed's BSD-awk bug).

use std::fmt;

/// A `${VAR}` with no value and no default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingVar(pub String);

impl fmt::Display for MissingVar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} is not set", self.0)
    }
}

impl std::error::Error for MissingVar {}

/// Expands from the process environment.
pub fn expand(text: &str) -> Result<String, MissingVar> {
    expand_with(text, &|name| std::env::var(name).ok())
}

/// Expands with a lookup function (tests, and callers with their own environment).
pub fn expand_with(
    text: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<String, MissingVar> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let body_start = start + 2;
        let Some(body_len) = closing_brace(&rest[body_start..]) else {
            // An unterminated `${` is literal text.
            out.push_str(&rest[start..]);
            return Ok(out);
        };
        let body = &rest[body_start..body_start + body_len];
        let (name, default) = match body.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (body, None),
        };
        match lookup(name).filter(|value| !value.is_empty()) {
            Some(value) => out.push_str(&value),
            None => match default {
                Some(default) => out.push_str(&expand_with(default, lookup)?),
                None => return Err(MissingVar(name.to_string())),
            },
        }
        rest = &rest[body_start + body_len + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Every variable `text` refers to, defaults' own references included, in order.
pub fn references(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        let body_start = start + 2;
        let Some(body_len) = closing_brace(&rest[body_start..]) else {
            break;
        };
        let body = &rest[body_start..body_start + body_len];
        let (name, default) = body.split_once(":-").unwrap_or((body, ""));
        names.push(name.to_string());
        names.extend(references(default));
        rest = &rest[body_start + body_len + 1..];
    }
    names
}

/// Whether `text` refers to any variable at all.
pub fn has_reference(text: &str) -> bool {
    text.contains("${")
}

/// Whether a value is written out in full: neither empty nor naming a variable (`${VAR}`).
pub fn written_out(text: &str) -> bool {
    !text.trim().is_empty() && !has_reference(text)
}

/// The length of a `${…}` body up to its matching `}` (defaults may nest `${…}`).
fn closing_brace(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'$' if bytes.get(i + 1) == Some(&b'{') => {
                depth += 1;
                i += 1;
            }
            b'}' if depth == 0 => return Some(i),
            b'}' => depth -= 1,
            _ => {}
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "SET" => Some("value".into()),
            "EMPTY" => Some(String::new()),
            _ => None,
        }
    }

    #[test]
    fn expands_set_variables_and_defaults() {
        assert_eq!(expand_with("a ${SET} b", &env).unwrap(), "a value b");
        assert_eq!(expand_with("${UNSET:-fallback}", &env).unwrap(), "fallback");
        assert_eq!(expand_with("${UNSET:-${SET}}", &env).unwrap(), "value");
        assert_eq!(expand_with("no refs $HOME", &env).unwrap(), "no refs $HOME");
    }

    #[test]
    fn references_name_every_variable_defaults_included() {
        assert_eq!(
            references("redis://:${PASS}@${HOST:-${FALLBACK_HOST}}:6379 $NOT ${"),
            ["PASS", "HOST", "FALLBACK_HOST"]
        );
    }

    #[test]
    fn unset_or_empty_is_an_error_naming_the_variable() {
        assert_eq!(
            expand_with("${UNSET}", &env),
            Err(MissingVar("UNSET".into()))
        );
        assert_eq!(
            expand_with("x${EMPTY}", &env),
            Err(MissingVar("EMPTY".into()))
        );
        assert_eq!(
            expand_with("${UNSET:-${ALSO_UNSET}}", &env),
            Err(MissingVar("ALSO_UNSET".into()))
        );
    }
}
