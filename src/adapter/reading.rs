//! Small readers the adapters share: another program's output and files, read as JSON,
//! bounded, and a word quoted for a shell.

use std::path::Path;

/// The JSON documents in `text`: the whole of it when it is one, else each line that is one.
pub(super) fn json_documents(text: &str) -> Vec<serde_json::Value> {
    if let Ok(whole) = serde_json::from_str::<serde_json::Value>(text.trim()) {
        return vec![whole];
    }
    text.lines()
        .filter_map(|line| serde_json::from_str(line.trim()).ok())
        .collect()
}

/// A JSON value as a token count, when it is a non-negative integer (bounded: a CLI's
/// output is another program's word).
pub(super) fn count(value: Option<&serde_json::Value>) -> u64 {
    value.and_then(crate::tokens::count).unwrap_or(0)
}

/// A JSON string, trimmed, when it is not empty.
pub(super) fn text_of(value: Option<&serde_json::Value>) -> Option<String> {
    non_empty(value?.as_str()?)
}

/// A settings file's JSON, when it exists, fits its cap and parses (read bounded: another
/// program's file).
pub(super) fn read_json(path: &Path) -> Option<serde_json::Value> {
    crate::bounded_read::json(path, crate::bounded_read::SETTINGS)
}

/// `text` as one word of a POSIX shell: as it is when it holds nothing the shell reads,
/// else in single quotes.
pub(super) fn shell_word(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+@%:,".contains(c));
    if plain {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

/// A non-empty string, trimmed.
pub(super) fn non_empty(text: &str) -> Option<String> {
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}
