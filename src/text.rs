//! Text helpers every floor may use: one-line snippets of an answer's body for reasons, and
//! argv quoted as a person would type it in a POSIX shell.

/// The longest part of a failing body a reason quotes.
pub const REASON_BODY_CHARS: usize = 140;

/// One line of at most [`REASON_BODY_CHARS`] characters: control characters and runs of
/// white space folded to one space, an ellipsis where it was cut.
pub fn snippet(text: &str) -> String {
    let mut folded = String::with_capacity(text.len().min(512));
    let mut last_space = true;
    for ch in text.chars() {
        if ch.is_whitespace() || ch.is_control() {
            if !last_space {
                folded.push(' ');
                last_space = true;
            }
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

#[cfg(test)]
mod tests {
    #[test]
    fn shell_join_quotes_only_what_needs_it() {
        let argv = ["claude", "-p", "it's a bug", "--model", "x"].map(String::from);
        assert_eq!(
            super::shell_join(&argv),
            r"claude -p 'it'\''s a bug' --model x"
        );
    }
}
