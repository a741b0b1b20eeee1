//! Text helpers every floor may use: others' text made safe to print ([`printable`]),
//! one-line snippets of an answer's body for reasons, argv quoted as a person would type it
//! in a POSIX shell, and the word a slip was meant to be ([`closest`]: "did you mean").
//!
//! Text agent prints from others — a model's display name from the statusline feed, a
//! CLI's error, a window's name, an upstream body quoted in a reason — loses every control
//! and bidi character (DESIGN §19): none of it may move the cursor, clear the screen, set
//! a terminal's title or reorder what a person reads (`U+202E` turning `txt.exe` around).

/// The longest part of a failing body a reason quotes.
pub const REASON_BODY_CHARS: usize = 140;

/// Whether `c` may not reach a terminal or a page from others' text: a C0 or C1 control
/// (newline and tab included), DEL, or a format character that reorders or hides text —
/// the bidi marks, embeddings, overrides and isolates (`U+061C`, `U+200E`, `U+200F`,
/// `U+202A`–`U+202E`, `U+2066`–`U+2069`), the zero-width and invisible characters
/// (`U+180E`, `U+200B`–`U+200D`, `U+2060`–`U+2064`, `U+206A`–`U+206F`, `U+FEFF`), the line
/// and paragraph separators and the interlinear annotation marks.
pub fn is_unprintable(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061C}'
                | '\u{180E}'
                | '\u{200B}'..='\u{200F}'
                | '\u{2028}'..='\u{202E}'
                | '\u{2060}'..='\u{206F}'
                | '\u{FEFF}'
                | '\u{FFF9}'..='\u{FFFB}'
        )
}

/// Others' text as one printed line: its terminal sequences gone whole
/// ([`without_sequences`]), white space that is a control (a newline, a tab, a line
/// separator) becomes a space, and every other [`is_unprintable`] character is dropped.
/// The one function applied wherever others' text enters what agent prints.
pub fn printable(text: &str) -> String {
    without_sequences(text)
        .chars()
        .filter_map(|c| match c {
            c if !is_unprintable(c) => Some(c),
            c if c.is_whitespace() => Some(' '),
            _ => None,
        })
        .collect()
}

/// [`printable`] for each line of a message agent wrote on several lines (an error with
/// the configuration's lines under it): its own line breaks are kept, nothing else.
pub fn printable_lines(text: &str) -> String {
    text.split('\n')
        .map(printable)
        .collect::<Vec<_>>()
        .join("\n")
}

/// One line of at most [`REASON_BODY_CHARS`] characters: terminal sequences gone whole
/// ([`without_sequences`]), control characters and runs of white space folded to one space, the other [`is_unprintable`] characters dropped, an
/// ellipsis where it was cut.
pub fn snippet(text: &str) -> String {
    let mut folded = String::with_capacity(text.len().min(512));
    let mut last_space = true;
    for ch in without_sequences(text).chars() {
        if ch.is_whitespace() || ch.is_control() {
            if !last_space {
                folded.push(' ');
                last_space = true;
            }
        } else if is_unprintable(ch) {
        } else {
            folded.push(ch);
            last_space = false;
        }
    }
    let folded = folded.trim_end();
    if folded.chars().count() <= REASON_BODY_CHARS {
        return folded.to_string();
    }
    let cut: String = folded.chars().take(REASON_BODY_CHARS - 1).collect();
    format!("{cut}…")
}

/// Others' text without the terminal sequences a CLI writes for colour, the cursor or a
/// window's title — each whole, not only its ESC (`ESC [ 9 1 m`, `ESC ] 0 ; title BEL`,
/// the one-character C1 CSI) — nor what is left of one once its ESC was lost (a read cut
/// inside it, an earlier reader that dropped only the ESC): `[0m`, `[1;31m`, `[2K`,
/// `[?25l`. Such a fragment is taken only in a sequence's shape, digits first and not
/// closed by `]`, so a bracket that is text stays: `[agent]`, `[1/3]`, `[5m]`, `[mode]`.
/// A sequence cut off at the end of the text goes with it.
pub fn without_sequences(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains(['\u{1b}', '\u{9b}', '\u{9d}', '\u{90}', '[']) {
        return std::borrow::Cow::Borrowed(text);
    }
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    while let Some(&c) = chars.get(at) {
        at = match c {
            '\u{1b}' => after_escape(&chars, at + 1),
            '\u{9b}' => after_csi(&chars, at + 1),
            // OSC, DCS, SOS, PM, APC: a string up to its terminator.
            '\u{9d}' | '\u{90}' | '\u{98}' | '\u{9e}' | '\u{9f}' => after_string(&chars, at + 1),
            '[' if let Some(end) = after_lost_escape(&chars, at + 1) => end,
            c => {
                out.push(c);
                at + 1
            }
        };
    }
    std::borrow::Cow::Owned(out)
}

/// Where the sequence an ESC at `at - 1` opened ends: a CSI (`[`), a string (`]`, `P`,
/// `X`, `^`, `_`), a character set chosen (`( B`, what `tput sgr0` writes), or one of
/// the two-character commands (`7`, `8`, `=`, `>`, `c`, `M`). An ESC before anything
/// else is dropped alone and what follows it stays text.
fn after_escape(chars: &[char], at: usize) -> usize {
    match chars.get(at) {
        Some('[') => after_csi(chars, at + 1),
        Some(']' | 'P' | 'X' | '^' | '_') => after_string(chars, at + 1),
        Some('(' | ')' | '*' | '+')
            if chars.get(at + 1).is_some_and(char::is_ascii_alphanumeric) =>
        {
            at + 2
        }
        Some('7' | '8' | '=' | '>' | 'c' | 'D' | 'E' | 'H' | 'M') => at + 1,
        _ => at,
    }
}

/// Past a CSI's parameters and intermediates (`0`–`?`, space–`/`) and its final (`@`–`~`);
/// at anything else the sequence was broken off there and that character is text again.
fn after_csi(chars: &[char], at: usize) -> usize {
    let mut end = at;
    while let Some(&c) = chars.get(end) {
        match c {
            ' '..='?' => end += 1,
            '@'..='~' => return end + 1,
            _ => return end,
        }
    }
    end
}

/// Past a string's terminator: BEL, `ESC \` or the C1 ST; cut off, past the end.
fn after_string(chars: &[char], at: usize) -> usize {
    let mut end = at;
    while let Some(&c) = chars.get(end) {
        match c {
            '\u{7}' | '\u{9c}' => return end + 1,
            '\u{1b}' if chars.get(end + 1) == Some(&'\\') => return end + 2,
            _ => end += 1,
        }
    }
    end
}

/// After a `[` at `at - 1`: the end of a CSI whose ESC was lost, when what follows has
/// a colour's or an erase's shape (digits and `;` or `:`, then `m`, `K` or `J`; or `?`,
/// digits, then `h` or `l`) and is not a bracketed word (`[5m]`).
fn after_lost_escape(chars: &[char], at: usize) -> Option<usize> {
    let private = chars.get(at) == Some(&'?');
    let start = at + usize::from(private);
    let mut end = start;
    while matches!(chars.get(end), Some('0'..='9' | ';' | ':')) {
        end += 1;
    }
    if !chars.get(start).is_some_and(char::is_ascii_digit) {
        return None;
    }
    let shaped = match chars.get(end) {
        Some('m' | 'K' | 'J') => !private,
        Some('h' | 'l') => private,
        _ => false,
    };
    (shaped && chars.get(end + 1) != Some(&']')).then_some(end + 1)
}

/// `text` broken at its spaces into lines of at most `columns` characters, for a line
/// whose first `lead` columns hold something else (a row's label and name) and whose later
/// lines start `indent` columns in: the lines, without what comes before them. A word
/// longer than a line is cut; runs of spaces are one.
pub fn wrap(text: &str, lead: usize, indent: usize, columns: usize) -> Vec<String> {
    let room = |lines: &[String]| {
        let before = if lines.is_empty() { lead } else { indent };
        columns.saturating_sub(before).max(1)
    };
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    let mut length = 0;
    for word in text.split(' ').filter(|word| !word.is_empty()) {
        let mut word: Vec<char> = word.chars().collect();
        loop {
            let room = room(&lines);
            let needed = if length == 0 {
                word.len()
            } else {
                length + 1 + word.len()
            };
            if needed <= room {
                if length > 0 {
                    line.push(' ');
                }
                line.extend(&word);
                length = needed;
                break;
            }
            if length == 0 {
                // Longer than a whole line: what fits, and the rest on the next.
                lines.push(word.drain(..room).collect());
            } else {
                lines.push(std::mem::take(&mut line));
                length = 0;
            }
        }
    }
    if length > 0 || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// The end of `text` within `room` bytes, after a line saying how much was left out: the
/// end of an output or a reply is where it stopped, and the reader should know it was cut.
pub fn keep_end(text: &str, room: usize) -> String {
    if text.len() <= room {
        return text.to_string();
    }
    let mut from = text.len() - room;
    while !text.is_char_boundary(from) {
        from += 1;
    }
    format!("[… {from} bytes left out …]\n{}", &text[from..])
}

/// An argv as a person would type it in a POSIX shell.
pub fn shell_join(argv: &[String]) -> String {
    argv.iter()
        .map(|arg| shell_quote(arg))
        .collect::<Vec<_>>()
        .join(" ")
}

/// One word as a POSIX shell reads it: bare when that is safe, else single-quoted.
pub fn shell_quote(arg: &str) -> String {
    let plain = !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:@%+,".contains(c));
    if plain {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}

/// The candidate closest to `word` when `word` looks like a slip of it — one letter off for
/// words of up to four letters, two for longer ones (inserted, deleted, changed or two
/// swapped) — so `--stauts` finds `--status` and `probe_cache_secods` finds
/// `probe_cache_seconds`, while a word that far from all of them finds nothing. Words under
/// three letters find nothing: everything is close to them.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let length = word.chars().count();
    if length < 3 {
        return None;
    }
    let allowed = if length <= 4 { 1 } else { 2 };
    candidates
        .into_iter()
        .filter(|candidate| *candidate != word)
        .map(|candidate| (edit_distance(word, candidate), candidate))
        .filter(|(distance, _)| *distance <= allowed)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

/// Letters inserted, deleted, changed or swapped with a neighbour to turn `a` into `b`.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut rows = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in rows.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in rows[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (rows[i - 1][j] + 1)
                .min(rows[i][j - 1] + 1)
                .min(rows[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = best;
        }
    }
    rows[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closest_finds_a_slip_and_nothing_farther() {
        let keys = ["probe_cache_seconds", "probe_timeout_seconds", "hedge_ms"];
        assert_eq!(
            closest("probe_cache_secods", keys),
            Some("probe_cache_seconds")
        );
        assert_eq!(closest("hegde_ms", keys), Some("hedge_ms"));
        assert_eq!(closest("something_else", keys), None);
        assert_eq!(closest("claud", ["claude", "codex"]), Some("claude"));
        assert_eq!(closest("cl", ["claude", "c"]), None);
        assert_eq!(edit_distance("stauts", "status"), 1);
    }

    #[test]
    fn others_text_loses_control_and_bidi_characters() {
        assert_eq!(printable("Opus 4.8"), "Opus 4.8");
        assert_eq!(printable("Opus\u{1b}[2J 4.8\u{7}"), "Opus 4.8");
        assert_eq!(printable("a\nb\tc\r\u{2028}d"), "a b c  d");
        assert_eq!(printable("\u{202E}evil\u{202C}.txt"), "evil.txt");
        for c in [
            '\u{0}', '\u{7f}', '\u{85}', '\u{9b}', '\u{61c}', '\u{200b}', '\u{200e}', '\u{200f}',
            '\u{202a}', '\u{202b}', '\u{202c}', '\u{202d}', '\u{202e}', '\u{2066}', '\u{2067}',
            '\u{2068}', '\u{2069}', '\u{feff}',
        ] {
            assert!(is_unprintable(c), "{:04x}", u32::from(c));
            // Not a letter after it: the C1 CSI would take that as its final.
            let shown = printable(&format!("x{c}ü"));
            assert!(shown == "xü" || shown == "x ü", "{:04x}", u32::from(c));
            assert!(
                !snippet(&format!("x{c}ü")).contains(c),
                "{:04x}",
                u32::from(c)
            );
        }
        // Letters of every script, emoji and their joiner-free forms stay.
        for text in ["Sonnet 5", "Ünïcödé", "מודל", "模型", "🙂", "café"] {
            assert_eq!(printable(text), text);
        }
        assert_eq!(
            printable_lines("agent line 1\n  | \u{202E}x\u{1b}]0;t\u{7}\n"),
            "agent line 1\n  | x\n"
        );
    }

    #[test]
    fn a_clis_terminal_sequences_go_whole_and_what_a_lost_escape_left_too() {
        // Whole sequences: colour, cursor, title (BEL and ST), a charset, C1 CSI.
        assert_eq!(
            printable("\u{1b}[91merror\u{1b}[0m: \u{1b}[1;38;5;196mdisk\u{1b}[0m full"),
            "error: disk full"
        );
        assert_eq!(
            printable("\u{1b}]0;title\u{7}a\u{1b}]8;;http://x\u{1b}\\b\u{1b}(Bc\u{9b}2Kd\u{1b}7e"),
            "abcde"
        );
        // What a lost ESC left, and a sequence cut off at the end.
        assert_eq!(printable("[91merror[0m: [2K[?25lbad [1;31m"), "error: bad ");
        assert_eq!(snippet("failed \u{1b}[9"), "failed");
        assert_eq!(snippet("failed [0m"), "failed");
        // Brackets that are text.
        for text in [
            "[agent] Codex (gpt) [1/3]",
            "cooldown [5m] left",
            "[mode] [Kubernetes] [2026-12-02]",
            "a[0]b [x;1m] [?]",
        ] {
            assert_eq!(printable(text), text);
        }
        assert!(matches!(
            without_sequences("plain text"),
            std::borrow::Cow::Borrowed(_)
        ));
    }

    #[test]
    fn wrap_breaks_at_spaces_within_the_columns_and_cuts_only_a_longer_word() {
        assert_eq!(
            wrap("parked: 5-hour limit, resets Wed 21:41", 10, 4, 30),
            ["parked: 5-hour", "limit, resets Wed 21:41"]
        );
        assert_eq!(
            wrap("a 0123456789abcdef b", 0, 2, 8),
            ["a", "012345", "6789ab", "cdef b"]
        );
        assert_eq!(wrap("", 5, 5, 20), [""]);
        assert_eq!(wrap("fits  whole", 0, 0, 80), ["fits whole"]);
    }

    #[test]
    fn shell_join_quotes_only_what_needs_it() {
        let argv = ["claude", "-p", "it's a bug", "--model", "x"].map(String::from);
        assert_eq!(shell_join(&argv), r"claude -p 'it'\''s a bug' --model x");
    }
}
