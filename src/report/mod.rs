//! Reports: what agent prints on stdout for a person (aligned text) or a script (`--json`).

pub mod accounts;
pub mod budget;
pub mod check_fallback;
pub mod doctor;
pub mod list;
pub mod status;
pub mod watchdog;

use std::io::Write as _;

/// Writes a whole report to stdout; a closed pipe surfaces as an error `main` treats as
/// a quiet success.
pub fn emit(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

pub fn emit_json(value: &serde_json::Value) -> anyhow::Result<()> {
    let mut text = serde_json::to_string_pretty(value)?;
    text.push('\n');
    emit(&text)
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
