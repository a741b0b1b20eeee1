//! What agent prints of its own on stderr: `[agent] …` notices, warnings, errors, and the
//! `AGENT_LOG=debug` trail of decisions. Colour only on a terminal, never with NO_COLOR.

use std::io::{IsTerminal as _, Write as _};
use std::sync::OnceLock;

use owo_colors::OwoColorize as _;

/// When to colour agent's own output (`--color`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorWhen {
    Auto,
    Always,
    Never,
}

struct Settings {
    quiet: bool,
    color: bool,
    debug: bool,
}

static SETTINGS: OnceLock<Settings> = OnceLock::new();

fn settings() -> &'static Settings {
    SETTINGS.get_or_init(|| Settings {
        quiet: false,
        color: false,
        debug: debug_from_env(),
    })
}

fn debug_from_env() -> bool {
    std::env::var("AGENT_LOG").is_ok_and(|v| v.eq_ignore_ascii_case("debug"))
}

/// Called once, after the command line is parsed.
pub fn init(quiet: bool, color: ColorWhen) {
    let color = match color {
        ColorWhen::Always => true,
        ColorWhen::Never => false,
        ColorWhen::Auto => {
            std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::io::stderr().is_terminal()
        }
    };
    let _ = SETTINGS.set(Settings {
        quiet,
        color,
        debug: debug_from_env(),
    });
}

/// Whether stdout output may be coloured (reports).
pub fn color_stdout() -> bool {
    settings().color && std::io::stdout().is_terminal()
}

/// How wide a report on stdout may be: `COLUMNS` when set (a person's choice, or the
/// shell's word for its terminal), else the width of the terminal stdout is; `None` for a
/// file or a pipe, whose rows stay whole lines for a script to read (as `ls -l` and `gh`
/// print them off a terminal).
pub fn stdout_columns() -> Option<usize> {
    columns_set().or_else(|| {
        use std::os::fd::AsFd as _;
        let stdout = std::io::stdout();
        stdout
            .is_terminal()
            .then(|| crate::pty::size_of(stdout.as_fd()))
            .flatten()
            .map(|size| usize::from(size.ws_col))
    })
}

/// The terminal's width as the shell exports it, or a person sets it (`COLUMNS`).
pub fn columns_set() -> Option<usize> {
    std::env::var("COLUMNS")
        .ok()?
        .trim()
        .parse()
        .ok()
        .filter(|&columns| columns > 0)
}

fn emit_notice(line: &str) {
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "{line}");
}

/// What agent prints of a message on stderr: its secrets redacted, and none of the control
/// or bidi characters others' text in it may carry (`text::printable_lines`).
fn shown(message: &str) -> String {
    crate::text::printable_lines(&crate::redact::redact(message))
}

/// `[agent] …` — a notice a person must see (descent, fast-fail); `--quiet` silences it.
pub fn notice(message: &str) {
    if settings().quiet {
        return;
    }
    let message = shown(message);
    if settings().color {
        emit_notice(&format!("{} {message}", "[agent]".yellow()));
    } else {
        emit_notice(&format!("[agent] {message}"));
    }
}

/// `[agent] question? ` on stderr with no line end, for an answer typed after it. Shown
/// even with `--quiet`: a question nobody sees would wait for ever.
pub fn prompt(question: &str) {
    let question = shown(question);
    let mut stderr = std::io::stderr().lock();
    if settings().color {
        let _ = write!(stderr, "{} {question}", "[agent]".yellow());
    } else {
        let _ = write!(stderr, "[agent] {question}");
    }
    let _ = stderr.flush();
}

/// Whether agent's notices reach a person at a terminal (so a line may be rewritten in
/// place), rather than a file, a pipe or nothing (`--quiet`).
pub fn notices_on_terminal() -> bool {
    !settings().quiet && std::io::stderr().is_terminal()
}

/// `[agent] …` rewritten in place on the terminal's last line (a countdown); call
/// [`end_in_place`] before any other output. Only where [`notices_on_terminal`].
pub fn notice_in_place(message: &str) {
    let message = shown(message);
    let tag = if settings().color {
        "[agent]".yellow().to_string()
    } else {
        "[agent]".to_string()
    };
    let mut stderr = std::io::stderr().lock();
    let _ = write!(stderr, "\r{tag} {message}\x1b[K");
    let _ = stderr.flush();
}

/// Ends the line [`notice_in_place`] kept rewriting.
pub fn end_in_place() {
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr);
}

/// `agent: warning: …` — printed even with `--quiet`.
pub fn warn(message: &str) {
    let message = shown(message);
    if settings().color {
        emit_notice(&format!("{} {message}", "agent: warning:".yellow().bold()));
    } else {
        emit_notice(&format!("agent: warning: {message}"));
    }
}

/// `agent: …` — the one line an error is printed as.
pub fn error(message: &str) {
    let message = shown(message);
    if settings().color {
        emit_notice(&format!("{} {message}", "agent:".red().bold()));
    } else {
        emit_notice(&format!("agent: {message}"));
    }
}

/// `[agent:debug] …` with `AGENT_LOG=debug`: every decision and why.
pub fn debug(message: &str) {
    if settings().debug {
        emit_notice(&format!("[agent:debug] {}", shown(message)));
    }
}

pub fn debug_enabled() -> bool {
    settings().debug
}

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

#[cfg(test)]
mod tests {
    #[test]
    fn what_goes_to_stderr_keeps_agents_lines_and_loses_others_controls() {
        assert_eq!(
            super::shown("Claude Code unavailable — weekly \u{202E}supO limit\u{1b}[2K"),
            "Claude Code unavailable — weekly supO limit"
        );
        assert_eq!(
            super::shown("bad config\n  |\n1 | x = \u{7}1\r"),
            "bad config\n  |\n1 | x = 1 "
        );
    }
}
