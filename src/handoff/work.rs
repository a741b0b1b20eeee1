//! The brief's account of the work (DESIGN §25): the plan as the session last held it, what
//! is done (each file its edit calls changed, with lines added and removed and the last new
//! text), the commands it ran with their exit status and the last error, and what to do
//! next. All of it comes from the session's own tool calls ([`crate::login::session_work`]),
//! so it says what the session did, never what its messages claimed.
//!
//! Each section comes in two sizes: whole, and short for a brief over its cap (no edit's new
//! text, command lines and the error's end cut shorter). The plan and the next step are the
//! same in both: they always stay.

use std::fmt::Write as _;
use std::path::Path;

use super::quote::{fenced, keep_end, keep_ends, one_line, quoted_text};
use crate::login::session::Session;
use crate::login::session_work::{CommandRun, Ended, FileChange, PlanItem, PlanStatus};

/// How much of a command line a short brief keeps, in bytes; a whole one keeps this twice.
const SHORT_COMMAND: usize = 100;
/// How much of the last error's end a short brief keeps, in bytes.
const SHORT_ERROR: usize = 1024;
/// How much of a path a short brief keeps, its head and its tail.
const SHORT_PATH: usize = 256;

/// The work's sections, each ending in a line end.
pub(super) struct WorkText {
    pub plan: String,
    pub done: String,
    pub commands: String,
    pub next: String,
}

/// The work's sections for `session`, which ran in `cwd` (whose changed files, as agent read
/// them, are `status`); `short` for the size that fits a brief over its cap.
pub(super) fn sections(
    session: &Session,
    cwd: &Path,
    status: Option<&str>,
    short: bool,
) -> WorkText {
    WorkText {
        plan: plan(&session.plan),
        done: done(session, cwd, status, short),
        commands: commands(&session.commands, session.last_failure.as_ref(), short),
        next: next(&session.plan, session.last_failure.as_ref()),
    }
}

/// The plan as a checklist, the step in progress marked.
fn plan(items: &[PlanItem]) -> String {
    if items.is_empty() {
        return "The session's record holds no plan (no todo list or plan update).\n".into();
    }
    let mut out = String::from("The session's plan when it stopped, as its own tool kept it:\n\n");
    for item in items {
        let (mark, note) = match item.status {
            PlanStatus::Completed => ("[x]", ""),
            PlanStatus::InProgress => ("[ ]", " ← in progress"),
            PlanStatus::Pending => ("[ ]", ""),
        };
        let _ = writeln!(out, "- {mark} {}{note}", one_line(&item.text));
    }
    out
}

/// Each changed file with what changed, then the repository's changed files.
fn done(session: &Session, cwd: &Path, status: Option<&str>, short: bool) -> String {
    let mut out = String::new();
    if !session.changes.is_empty() {
        out.push_str(
            "Its edit calls changed these files (lines added and removed, as the calls \
             themselves say; a whole-file write counts its lines as added):\n",
        );
        for change in &session.changes {
            out.push('\n');
            out.push_str(&file_change(change, short));
        }
        if short {
            out.push_str("\nThe edits' new text is left out to fit the brief's cap.\n");
        }
    } else if session.files.is_empty() {
        out.push_str("Its edit tool calls changed no file.\n");
    } else {
        let list: Vec<String> = session.files.iter().map(|f| one_line(f)).collect();
        out.push_str("Its edit tool calls changed:\n\n");
        out.push_str(&fenced(&list.join("\n")));
    }
    if let Some(status) = status {
        let _ = write!(
            out,
            "\nFiles that differ from the repository's index in {} when it stopped \
             (read by agent; nothing of the repository ran):\n\n",
            one_line(&cwd.to_string_lossy())
        );
        out.push_str(&fenced(&quoted_text(status)));
    }
    out
}

/// One file's line: its path, its counts, and (whole) the last edit's new text.
fn file_change(change: &FileChange, short: bool) -> String {
    let path = one_line(&change.path);
    let path = if short {
        keep_ends(&path, SHORT_PATH).replace('\n', " ")
    } else {
        path
    };
    let edits = match change.edits {
        1 => "1 edit".to_string(),
        n => format!("{n} edits"),
    };
    let mut out = format!("- {path}: +{} −{} ({edits})", change.added, change.removed);
    if change.deleted {
        out.push_str(", deleted by the last");
        out.push('\n');
        return out;
    }
    if short || change.last_new_text.trim().is_empty() {
        out.push('\n');
        return out;
    }
    out.push_str("; the last edit's new text begins:\n\n");
    out.push_str(&fenced(&quoted_text(&change.last_new_text)));
    out
}

/// The last commands, one line each, and the last failed one's output.
fn commands(runs: &[CommandRun], failure: Option<&CommandRun>, short: bool) -> String {
    let width = if short {
        SHORT_COMMAND
    } else {
        2 * SHORT_COMMAND
    };
    if runs.is_empty() && failure.is_none() {
        return "The record holds no command the session ran.\n".into();
    }
    let mut out = String::new();
    if !runs.is_empty() {
        out.push_str(
            "Its last commands, oldest first (✓ exited 0; exit N failed with that code):\n\n",
        );
        for run in runs {
            let _ = writeln!(out, "- {}: {}", ending(run.ended), command(run, width));
        }
    }
    let Some(failure) = failure else {
        out.push_str("\nNo command failed.\n");
        return out;
    };
    let _ = writeln!(
        out,
        "\nThe last command that failed ({}): {}",
        ending(failure.ended),
        command(failure, width)
    );
    match &failure.output_tail {
        Some(output) => {
            let output = quoted_text(output);
            let output = if short {
                keep_end(&output, SHORT_ERROR)
            } else {
                output
            };
            out.push_str("\nIts output ended with:\n\n");
            out.push_str(&fenced(&output));
        }
        None => out.push_str("\nThe record holds none of its output.\n"),
    }
    out
}

/// A command on one line of the brief, cut to `width` bytes.
fn command(run: &CommandRun, width: usize) -> String {
    let line = one_line(&run.command);
    let line = keep_ends(&line, width).replace('\n', " ");
    // A code span closes only on a run of exactly as many backticks as opened it.
    let longest = line.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let ticks = "`".repeat(longest + 1);
    let pad = if longest == 0 { "" } else { " " };
    format!("{ticks}{pad}{line}{pad}{ticks}")
}

fn ending(ended: Ended) -> String {
    match ended {
        Ended::Ok => "✓".into(),
        Ended::Failed(Some(code)) => format!("exit {code}"),
        Ended::Failed(None) => "failed".into(),
        Ended::Unknown => "no result recorded".into(),
    }
}

/// What the next CLI should do first: the plan's step in progress, else its first pending
/// one; and a failed last command to look at.
fn next(items: &[PlanItem], failure: Option<&CommandRun>) -> String {
    let step = items
        .iter()
        .find(|i| i.status == PlanStatus::InProgress)
        .map(|i| ("Carry on with the step the session was on", i))
        .or_else(|| {
            items
                .iter()
                .find(|i| i.status == PlanStatus::Pending)
                .map(|i| ("Take up the next step of its plan", i))
        });
    let mut out = match (step, items.is_empty()) {
        (Some((what, item)), _) => format!("{what}: {}\n", one_line(&item.text)),
        (None, false) => "Every step of its plan is done: check the work against the task \
                          and finish what is left.\n"
            .into(),
        (None, true) => "The plan is unknown (the session kept none): read the task and \
                         where it stopped, check the changes above, and go on from there.\n"
            .into(),
    };
    if let Some(failure) = failure {
        let _ = writeln!(
            out,
            "\nIts last failed command ({}) is above, with the end of its output.",
            ending(failure.ended)
        );
    }
    out
}
