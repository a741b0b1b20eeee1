//! What agent prints of its own on stderr: `[agent] …` notices, warnings, errors, and the
//! `AGENT_LOG=debug` trail of decisions. Colour only on a terminal, never with NO_COLOR.

use std::io::{IsTerminal as _, Write as _};
use std::sync::OnceLock;

use owo_colors::OwoColorize as _;

use crate::cli::ColorWhen;

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

fn emit(line: &str) {
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "{line}");
}

/// `[agent] …` — a notice a person must see (descent, fast-fail); `--quiet` silences it.
pub fn notice(message: &str) {
    if settings().quiet {
        return;
    }
    let message = crate::redact::redact(message);
    if settings().color {
        emit(&format!("{} {message}", "[agent]".yellow()));
    } else {
        emit(&format!("[agent] {message}"));
    }
}

/// `agent: warning: …` — printed even with `--quiet`.
pub fn warn(message: &str) {
    let message = crate::redact::redact(message);
    if settings().color {
        emit(&format!("{} {message}", "agent: warning:".yellow().bold()));
    } else {
        emit(&format!("agent: warning: {message}"));
    }
}

/// `agent: …` — the one line an error is printed as.
pub fn error(message: &str) {
    let message = crate::redact::redact(message);
    if settings().color {
        emit(&format!("{} {message}", "agent:".red().bold()));
    } else {
        emit(&format!("agent: {message}"));
    }
}

/// `[agent:debug] …` with `AGENT_LOG=debug`: every decision and why.
pub fn debug(message: &str) {
    if settings().debug {
        emit(&format!("[agent:debug] {}", crate::redact::redact(message)));
    }
}

pub fn debug_enabled() -> bool {
    settings().debug
}
