//! The file's TOML read against the shape agent knows. A key agent does not know (a typo
//! of an optional tuning key, most often) is set aside with a "did you mean" and the rest is
//! read without it: a fallback launcher must not stop on a cosmetic slip. A value of the
//! wrong type for a key agent does know is an error that names the key, the form expected,
//! the value found and the line.

use std::ops::Range;

use serde::de::DeserializeOwned;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::source::Source;
use crate::exit_codes::usage;

/// At most this many unknown keys are set aside before the file is given up on.
const UNKNOWN_KEYS_MAX: usize = 100;
/// The longest value an error quotes.
const FOUND_CHARS: usize = 60;

/// A key the file has and agent does not know, set aside.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Unknown {
    /// Dotted from the top of the file: `backends.claude.modles`, `rungs[2].bakend`.
    pub key: String,
    pub line: usize,
    /// The known key it is closest to, dotted the same way.
    pub suggestion: Option<String>,
}

/// Reads the file's text as `T`, setting aside every key `T` does not have.
pub(super) fn parse<T: DeserializeOwned>(source: &Source) -> anyhow::Result<(T, Vec<Unknown>)> {
    let mut document = DeTable::parse(source.text).map_err(|err| syntax_error(source, &err))?;
    let mut unknown: Vec<Unknown> = Vec::new();
    loop {
        let err = match T::deserialize(toml::de::Deserializer::from(document.clone())) {
            Ok(value) => {
                // In the file's order, not the order serde met them in.
                unknown.sort_by_key(|key| key.line);
                return Ok((value, unknown));
            }
            Err(err) => err,
        };
        let message = err.message();
        let span = err.span();
        if let (Some(name), Some(span)) = (message.strip_prefix("unknown field `"), &span)
            && unknown.len() < UNKNOWN_KEYS_MAX
            && let Some(key) = entries(document.get_ref())
                .into_iter()
                .find(|entry| entry.key_span == *span)
                .map(|entry| entry.name)
            && remove_key(document.get_mut(), span)
        {
            let name = name.split('`').next().unwrap_or_default();
            let known = quoted_words(message.split_once("expected").map_or("", |(_, e)| e));
            let suggestion = crate::text::closest(name, known.iter().map(String::as_str))
                .map(|word| format!("{}{word}", key.strip_suffix(name).unwrap_or_default()));
            unknown.push(Unknown {
                line: source.line(span.start),
                key,
                suggestion,
            });
            continue;
        }
        return Err(type_error(source, document.get_ref(), &err));
    }
}

/// A file that is not TOML at all: the parser's own words, at its line.
fn syntax_error(source: &Source, err: &toml::de::Error) -> anyhow::Error {
    let line = err.span().map_or(String::new(), |span| {
        format!(":{}", source.line(span.start))
    });
    usage(format!(
        "{}{line}: {}",
        source.path.display(),
        err.message().trim_end()
    ))
}

/// A known key with a value it cannot hold, told as `FILE:LINE: KEY: expected FORM (found
/// VALUE)`.
fn type_error(source: &Source, document: &DeTable, err: &toml::de::Error) -> anyhow::Error {
    let message = err.message().trim_end();
    let Some(span) = err.span() else {
        return usage(format!("{}: {message}", source.path.display()));
    };
    let at = format!("{}:{}", source.path.display(), source.line(span.start));
    let Some(key) = key_at(document, &span) else {
        return usage(format!("{at}: {message}"));
    };
    let found = found(source.text, &span);
    if let Some(rest) = message.strip_prefix("unknown variant `") {
        let word = rest.split('`').next().unwrap_or_default();
        let choices = quoted_words(rest.split_once("expected").map_or("", |(_, e)| e));
        let listed: Vec<String> = choices.iter().map(|c| format!("\"{c}\"")).collect();
        let hint = crate::text::closest(word, choices.iter().map(String::as_str))
            .map_or(String::new(), |close| {
                format!(" — did you mean \"{close}\"?")
            });
        return usage(format!(
            "{at}: {key}: expected one of {} (found {found}){hint}",
            listed.join(", ")
        ));
    }
    if let Some(rest) = message.strip_prefix("missing field `") {
        let field = rest.split('`').next().unwrap_or_default();
        return usage(format!("{at}: {key}: `{field}` is missing"));
    }
    if message == "wanted string or table" {
        // toml's words for a name (an enum's variant) given as something else.
        return usage(format!(
            "{at}: {key}: expected {} (found {found})",
            form(&key, "a string")
        ));
    }
    let expected = message
        .strip_prefix("invalid type: ")
        .or_else(|| message.strip_prefix("invalid value: "))
        .and_then(|rest| rest.split_once(", expected "))
        .map(|(_, expected)| expected);
    match expected {
        Some(serde_expected) => usage(format!(
            "{at}: {key}: expected {} (found {found})",
            form(&key, serde_expected)
        )),
        None => usage(format!("{at}: {key}: {message}")),
    }
}

/// What a key holds, said the way a person writes it: `a number of milliseconds, e.g.
/// hedge_ms = 400`.
fn form(key: &str, serde_expected: &str) -> String {
    let leaf = key.rsplit('.').next().unwrap_or(key);
    let leaf = leaf.split('[').next().unwrap_or(leaf);
    let (what, example) = match leaf {
        "park_at_percent" => ("a percentage from 0 to 100", "95"),
        "error_rate" => ("a number from 0 to 1", "0.5"),
        "body_limit_mb" => ("a number of megabytes", "32"),
        "calls" => ("a whole number (0: no cap)", "500"),
        "tokens" => ("a whole number (0: no cap)", "500000"),
        "threshold" | "min_calls" => ("a whole number", "5"),
        "priority" => ("a whole number", "100"),
        "monthly_budget_usd" | "monthly_usd" => ("a number of USD", "20"),
        "input" | "output" | "cache_read" | "cache_write" | "reasoning" => {
            ("a number of USD per million tokens", "3")
        }
        "args" | "headless_args" | "interactive_args" => (
            "a list of the CLI's own words",
            "[\"--skip-git-repo-check\"]",
        ),
        "hedge_ms" => ("a number of milliseconds", "400"),
        "fastfail_seconds" => ("a number of seconds", "25"),
        "probe_cache_seconds" => ("a number of seconds", "300"),
        "quota_minutes" => ("a number of minutes", "60"),
        _ if leaf.ends_with("_ms") => ("a number of milliseconds", "400"),
        _ if leaf.ends_with("_seconds") => ("a number of seconds", "10"),
        _ if leaf.ends_with("_minutes") => ("a number of minutes", "60"),
        _ => match serde_expected {
            "a boolean" => ("true or false", "true"),
            "a string" => ("a string in quotes", "\"…\""),
            "a sequence" => ("a list", "[\"…\"]"),
            "f64" | "f32" | "i64" | "u64" | "i32" | "u32" => ("a number", "1"),
            e if e == "a map" || e.starts_with("struct ") => ("a table", "{ … }"),
            other => return other.to_string(),
        },
    };
    format!("{what}, e.g. {leaf} = {example}")
}

/// The value at `span` as the file has it, on one line and short.
fn found(text: &str, span: &Range<usize>) -> String {
    let raw = text.get(span.clone()).unwrap_or_default().trim();
    let line = raw.lines().next().unwrap_or_default();
    let mut shown: String = crate::text::printable(line)
        .chars()
        .take(FOUND_CHARS)
        .collect();
    if shown.len() < raw.len() {
        shown.push('…');
    }
    shown
}

/// The words between backticks: serde's list of the fields or variants it expected.
fn quoted_words(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// One key of the document, wherever it is.
struct Entry {
    name: String,
    key_span: Range<usize>,
    value_span: Range<usize>,
}

/// Every key in the document, tables and lists of tables walked, dotted from the top
/// (`rungs[2].backend`: lists count from 1, as the file is read).
fn entries(document: &DeTable) -> Vec<Entry> {
    fn table(prefix: &str, table: &DeTable, out: &mut Vec<Entry>) {
        for (key, value) in table {
            let name = if prefix.is_empty() {
                key.get_ref().to_string()
            } else {
                format!("{prefix}.{}", key.get_ref())
            };
            out.push(Entry {
                name: name.clone(),
                key_span: key.span(),
                value_span: value.span(),
            });
            nested(&name, value, out);
        }
    }
    fn nested(name: &str, value: &Spanned<DeValue>, out: &mut Vec<Entry>) {
        match value.get_ref() {
            DeValue::Table(inner) => table(name, inner, out),
            DeValue::Array(items) => {
                for (index, item) in items.iter().enumerate() {
                    let name = format!("{name}[{}]", index + 1);
                    out.push(Entry {
                        name: name.clone(),
                        key_span: 0..0,
                        value_span: item.span(),
                    });
                    nested(&name, item, out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    table("", document, &mut out);
    out
}

/// The key an error at `span` is about: the key itself, else the value that is exactly
/// there, else the innermost value around it.
fn key_at(document: &DeTable, span: &Range<usize>) -> Option<String> {
    let all = entries(document);
    if let Some(entry) = all.iter().find(|e| e.key_span == *span && !span.is_empty()) {
        return Some(entry.name.clone());
    }
    if let Some(entry) = all.iter().rev().find(|e| e.value_span == *span) {
        return Some(entry.name.clone());
    }
    all.iter()
        .filter(|e| e.value_span.start <= span.start && span.end <= e.value_span.end)
        .min_by_key(|e| e.value_span.len())
        .map(|e| e.name.clone())
}

/// Takes the key whose name is at `span` out of the document; false when there is none.
fn remove_key(table: &mut DeTable, span: &Range<usize>) -> bool {
    let here = table
        .keys()
        .find(|key| key.span() == *span)
        .map(|key| key.get_ref().to_string());
    if let Some(name) = here {
        return table.remove(name.as_str()).is_some();
    }
    table
        .iter_mut()
        .any(|(_, value)| remove_in(value.get_mut(), span))
}

fn remove_in(value: &mut DeValue, span: &Range<usize>) -> bool {
    match value {
        DeValue::Table(inner) => remove_key(inner, span),
        DeValue::Array(items) => items.iter_mut().any(|item| remove_in(item.get_mut(), span)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use std::path::Path;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Shape {
        hedge_ms: Option<f64>,
        probe_cache_seconds: Option<f64>,
        #[serde(default)]
        backends: std::collections::BTreeMap<String, Inner>,
        rungs: Option<Vec<Inner>>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Inner {
        command: Option<String>,
        translate: Option<bool>,
    }

    fn read(text: &str) -> anyhow::Result<(Shape, Vec<Unknown>)> {
        parse(&Source {
            path: Path::new("c.toml"),
            text,
        })
    }

    #[test]
    fn unknown_keys_are_set_aside_with_the_key_they_are_closest_to() {
        let (shape, unknown) = read(
            "hedge_ms = 5\nprobe_cache_secods = 1\n[backends.x]\ncomand = \"y\"\ntranslate = false\n[[rungs]]\nwhatever = 1\n",
        )
        .unwrap();
        assert_eq!(shape.hedge_ms, Some(5.0));
        assert_eq!(shape.probe_cache_seconds, None);
        assert_eq!(shape.backends["x"].translate, Some(false));
        assert_eq!(shape.backends["x"].command, None);
        assert_eq!(shape.rungs.map(|rungs| rungs.len()), Some(1));
        let said: Vec<(&str, usize, Option<&str>)> = unknown
            .iter()
            .map(|u| (u.key.as_str(), u.line, u.suggestion.as_deref()))
            .collect();
        assert!(
            said.contains(&("probe_cache_secods", 2, Some("probe_cache_seconds"))),
            "{said:?}"
        );
        assert!(
            said.contains(&("backends.x.comand", 4, Some("backends.x.command"))),
            "{said:?}"
        );
        assert!(said.contains(&("rungs[1].whatever", 7, None)), "{said:?}");
    }

    #[test]
    fn a_wrong_type_names_the_key_the_form_the_value_and_the_line() {
        let err = read("\nhedge_ms = \"400\"\n").unwrap_err().to_string();
        assert_eq!(
            err,
            "c.toml:2: hedge_ms: expected a number of milliseconds, e.g. hedge_ms = 400 (found \"400\")"
        );
        let err = read("[backends.codex]\ntranslate = \"no\"\n")
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "c.toml:2: backends.codex.translate: expected true or false, e.g. translate = true (found \"no\")"
        );
    }
}
