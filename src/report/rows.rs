//! The rung rows of `--status` and `--check-fallback` (and of the watchdog's alert): a
//! rung's state, then the facts of the login it runs on — said on the first row on that
//! login, and referred to by the rows below it — each row fitted to the terminal's width.
//!
//! ```text
//! PARKED   claude / claude-opus-5     parked: 5-hour limit, resets Wed 21:41 · login (max),
//!                                     token expires 2026-12-03; 5-hour 100% (usage_endpoint,
//!                                     0 s ago), weekly 40% (resets Sat 18:41, …)
//! PARKED   claude / claude-sonnet-5   parked: 5-hour limit, resets Wed 21:41 · login (max) as above
//! ```

use crate::launch::rung::Rung;
use crate::launch::rung_state::RungState;

/// Columns of the state label (`UNPROVED` and a space).
const LABEL: usize = 8;
/// The gap between a row's name and its text.
const GAP: &str = "   ";
/// The fewest columns a row's text is given beside its name before it goes under it.
const MIN_TEXT: usize = 24;
/// How far in a text under its name starts.
const INDENT: usize = 4;

/// How a report lays out its rows: the names' column, the width it fits (`None`: a row is
/// one line, for a file or a pipe), the columns before each row, and the logins a row
/// above has already described.
pub struct Rows {
    width: usize,
    columns: Option<usize>,
    margin: usize,
    described: Vec<String>,
}

impl Rows {
    /// Rows whose names are `width` characters wide, fitted to `columns`, each printed
    /// `margin` characters in.
    pub fn new(width: usize, columns: Option<usize>, margin: usize) -> Rows {
        Rows {
            width,
            columns,
            margin,
            described: Vec::new(),
        }
    }

    /// A rung's row with its own facts beside its state: the login it runs on, its plan
    /// and windows (`· login (max); 5-hour 42% (resets Tue 15:00, statusline, 3 min
    /// ago)`) — or, when a row above described that login, only its name, `as above`.
    pub fn rung(&mut self, rung: &Rung, state: &RungState, now_ms: u64) -> String {
        let text = self.with_login(rung, state, now_ms);
        self.fit(&paint(state.label()), &rung.short_name(), &text)
    }

    /// [`Rows::rung`] with no colour and never broken, for a message sent elsewhere (an
    /// alert, which the reader's own screen wraps).
    pub fn plain_rung(&mut self, rung: &Rung, state: &RungState, now_ms: u64) -> String {
        let text = self.with_login(rung, state, now_ms);
        let label = format!("{:LABEL$}", state.label());
        unfitted(&label, &rung.short_name(), self.width, &text)
    }

    /// A row of a name and a state alone (a backend skipped for one reason, folded).
    pub fn row(&self, name: &str, state: &RungState, now_ms: u64) -> String {
        self.fit(&paint(state.label()), name, &state_text(state, now_ms))
    }

    /// `label name   text`, the text broken to the width with its later lines under its
    /// first; on a screen too narrow for a column beside the name, under the name, a
    /// little in.
    fn fit(&self, label: &str, name: &str, text: &str) -> String {
        let Some(columns) = self.columns else {
            return unfitted(label, name, self.width, text);
        };
        let name = crate::text::printable(name);
        let name_width = self.width.max(name.chars().count());
        let beside = self.margin + LABEL + 1 + name_width + GAP.len();
        let (head, indent) = if columns >= beside + MIN_TEXT {
            (format!("{label} {name:name_width$}{GAP}"), beside)
        } else {
            let indent = self.margin + INDENT;
            (format!("{label} {name}\n{}", " ".repeat(indent)), indent)
        };
        let lines = crate::text::wrap(text, indent, indent, columns);
        format!("{head}{}", lines.join(&format!("\n{}", " ".repeat(indent))))
    }

    /// The state's words, then the login's facts or, when a row above gave them, its
    /// name. A parked row has said when its window resets: the facts do not say it again.
    fn with_login(&mut self, rung: &Rung, state: &RungState, now_ms: u64) -> String {
        let mut text = state_text(state, now_ms);
        let Some(login) = rung.state.as_ref().ok().and_then(|r| r.plan.login.as_ref()) else {
            return text;
        };
        text.push_str(" · ");
        if self.described.contains(&login.key) {
            text.push_str(&crate::text::printable(&login.name()));
            text.push_str(" as above");
            return text;
        }
        self.described.push(login.key.clone());
        let now = jiff::Timestamp::now();
        let windows = login.windows(&crate::paths::state_dir(), now);
        let reset_said = match state {
            RungState::Parked { until_ms, .. } => *until_ms,
            _ => None,
        };
        text.push_str(&crate::text::printable(
            &login.describe_beside(&windows, now, reset_said),
        ));
        text
    }
}

/// `OK       claude / claude-opus-5   api.anthropic.com reachable, claude-opus-5 answered (312 ms)`,
/// one line whatever its length.
pub fn row(name: &str, width: usize, state: &RungState, now_ms: u64) -> String {
    unfitted(
        &paint(state.label()),
        name,
        width,
        &state_text(state, now_ms),
    )
}

fn unfitted(label: &str, name: &str, width: usize, text: &str) -> String {
    let name = crate::text::printable(name);
    format!("{label} {name:width$}{GAP}{text}")
}

/// The state's words, which quote others (an upstream's body, a CLI's words, a window's
/// name).
fn state_text(state: &RungState, now_ms: u64) -> String {
    crate::text::printable(&state.describe(now_ms))
}

fn paint(state: &str) -> String {
    use owo_colors::OwoColorize as _;
    let padded = format!("{state:LABEL$}");
    if !crate::term::color_stdout() {
        return padded;
    }
    match state {
        "OK" => padded.green().to_string(),
        "FAIL" => padded.red().to_string(),
        "PARKED" | "UNPROVED" => padded.yellow().to_string(),
        _ => padded.dimmed().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(reason: &str) -> RungState {
        RungState::Failed {
            during: crate::launch::rung_state::During::Check,
            class: crate::error_class::ErrorClass::RateLimited,
            reason: reason.into(),
            at_ms: 0,
            fresh: true,
        }
    }

    #[test]
    fn a_row_quoting_others_shows_none_of_their_control_or_bidi_characters() {
        let state = failed("429 \u{202E}detats\u{202C} \u{1b}]0;pwned\u{7}slow down");
        let line = row("claude / m\u{200F}", 12, &state, 0);
        assert!(line.ends_with("429 detats slow down"), "{line:?}");
        assert!(line.contains(" claude / m "), "{line:?}");
        assert!(!line.chars().any(crate::text::is_unprintable), "{line:?}");
    }

    #[test]
    fn a_row_fits_its_columns_with_its_later_lines_under_its_text() {
        let state = failed(&"slow down ".repeat(12));
        // Printed two columns in, as --check-fallback prints its rows.
        let fitted = format!(
            "  {}",
            Rows::new(10, Some(60), 2).row("codex / m", &state, 0)
        );
        let lines: Vec<&str> = fitted.lines().collect();
        assert!(lines.len() > 2, "{fitted}");
        let text_at = lines[0].find("rate").unwrap();
        for line in &lines {
            assert!(line.chars().count() <= 60, "{line:?} in {fitted}");
        }
        for line in &lines[1..] {
            assert_eq!(line.len() - line.trim_start().len(), text_at, "{fitted}");
        }
        // Too narrow for a column beside the name: the text goes under it.
        let narrow = Rows::new(10, Some(30), 0).row("codex / m", &state, 0);
        assert!(narrow.lines().all(|l| l.chars().count() <= 30), "{narrow}");
        assert_eq!(narrow.lines().next().unwrap(), "FAIL     codex / m");
        // No width: one line.
        let whole = Rows::new(10, None, 0).row("codex / m", &state, 0);
        assert_eq!(whole.lines().count(), 1);
    }
}
