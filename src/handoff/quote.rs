//! How the brief quotes others' words (DESIGN §21, §23): redacted by value and by shape,
//! stripped of what a terminal or a reader would not show, and fenced so that nothing quoted
//! can close its fence and write the brief's own headings; and how a quote is cut to fit,
//! saying what was left out.

use crate::state::file as state_file;

/// Others' text as the brief quotes it: secrets redacted, and only line ends and tabs kept
/// of the characters [`crate::text::is_unprintable`] names (none may reorder or hide what
/// the next reader sees).
pub(super) fn quoted_text(text: &str) -> String {
    crate::redact::redact(text)
        .replace("\r\n", "\n")
        .chars()
        .filter(|&c| c == '\n' || c == '\t' || !crate::text::is_unprintable(c))
        .collect()
}

/// Others' short text on one line of the brief, redacted.
pub(super) fn one_line(text: &str) -> String {
    crate::text::printable(&state_file::capped(&crate::redact::redact(text)))
}

/// `text` in a fence of backticks longer than any run of them inside it, so nothing in it
/// can close the fence.
pub(super) fn fenced(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat((longest + 1).max(3));
    let end = if text.ends_with('\n') { "" } else { "\n" };
    format!("{fence}text\n{text}{end}{fence}\n")
}

pub(super) use crate::text::keep_end;

/// The head and tail of `text` within `room` bytes, a line between them saying how much of
/// the middle was left out.
pub(super) fn keep_ends(text: &str, room: usize) -> String {
    if text.len() <= room {
        return text.to_string();
    }
    let mut head = room / 2;
    while !text.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = text.len() - (room - head);
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    format!(
        "{}\n[… {} bytes left out …]\n{}",
        &text[..head],
        tail - head,
        &text[tail..]
    )
}
