//! HTML's one escape, for every string the page takes from state: the page never writes
//! others' text without it; and the one-line form of a panel with nothing to show.

use std::fmt::Write as _;

/// Escapes text for HTML content and attribute values, without the control and bidi
/// characters others' text may carry (`text::printable`: a `U+202E` in a model's name
/// reorders a page as it does a terminal).
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in crate::text::printable(text).chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// A collapsed panel: its heading and what it has to say, on one line.
pub fn empty_panel(html: &mut String, panel: &str, heading: &str, text: &str) {
    let _ = write!(
        html,
        "<h2 class=\"empty\" data-panel=\"{panel}\">{heading} <span class=\"mute\">· {}</span></h2>",
        escape(text)
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_markup_character_is_escaped() {
        assert_eq!(
            escape("<script>\"x\" & 'y'</script>"),
            "&lt;script&gt;&quot;x&quot; &amp; &#39;y&#39;&lt;/script&gt;"
        );
    }

    #[test]
    fn others_control_and_bidi_characters_never_reach_the_page() {
        assert_eq!(
            escape("Opus\u{202E}8.4\u{2066} <b>\u{0}\u{1b}[2J"),
            "Opus8.4 &lt;b&gt;"
        );
    }
}
