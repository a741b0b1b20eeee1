//! `agent --tasks`: the tasks of this folder that crossed CLIs (DESIGN §25), newest first —
//! each a chain of the sessions that carried it, where it came from and how each ended, and
//! what `agent -c` here would do. Read from `tasks.json` and the briefs; no call, no CLI
//! started.

use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;

use jiff::Timestamp;
use serde_json::json;

use crate::state::tasks::{self, Link, Task};
use crate::text::printable;
use crate::when::short;

pub fn run(json: bool) -> anyhow::Result<ExitCode> {
    let folder = std::env::current_dir()?;
    let chains = tasks::of_folder(&crate::paths::state_dir(), &folder);
    let now = Timestamp::now();
    if json {
        let tasks: Vec<serde_json::Value> =
            chains.iter().map(|task| task_json(task, now)).collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({"folder": folder, "tasks": tasks}))?
        );
    } else {
        print!("{}", text(&folder, &chains, now));
    }
    Ok(ExitCode::SUCCESS)
}

/// The report as text.
fn text(folder: &Path, chains: &[Task], now: Timestamp) -> String {
    let place = printable(&folder.to_string_lossy());
    if chains.is_empty() {
        return format!(
            "No task has crossed CLIs in {place}. A task becomes a chain when a session that ran out of its window goes on in another CLI (--on-limit=continue); `agent -c` then continues it where it lives.\n"
        );
    }
    let mut out = format!("Tasks that crossed CLIs in {place}, newest first:\n");
    for task in chains {
        out.push('\n');
        let about = task_words(task).map_or_else(String::new, |words| format!(" · {words}"));
        let _ = writeln!(out, "started {}{about}", short(task.started, now));
        for (at, link) in task.links.iter().enumerate() {
            let _ = writeln!(out, "  {}. {}", at + 1, link_words(link, now));
        }
        let _ = writeln!(out, "  {}", next_words(task, now));
    }
    out
}

/// What the task was, by its first brief.
fn task_words(task: &Task) -> Option<String> {
    task.first_brief().and_then(crate::handoff::task_of)
}

/// `Codex (gpt-6.2) · from 1 · session ID · 09:14–09:40 · ran out (5-hour limit, resets
/// 14:00) · brief PATH`.
fn link_words(link: &Link, now: Timestamp) -> String {
    let mut words = printable(&link.label);
    if let Some(parent) = link.parent {
        let _ = write!(words, " · from {}", parent + 1);
    }
    match &link.session {
        Some(id) => {
            let _ = write!(words, " · session {}", printable(id));
        }
        None => words.push_str(" · session unknown"),
    }
    let _ = write!(
        words,
        " · {}–{}",
        short(link.at, now),
        short(link.last, now)
    );
    if let Some(spent) = &link.spent {
        let _ = write!(words, " · ran out ({})", printable(spent));
    }
    if let Some(brief) = &link.brief {
        let _ = write!(words, " · brief {}", printable(&brief.to_string_lossy()));
    }
    words
}

/// What `agent -c` here does with the task, as far as is known without a call.
pub fn next_words(task: &Task, now: Timestamp) -> String {
    if let Some(closed) = task.closed {
        return format!(
            "closed {}: a new session began here after it, and `agent -c` continues that one",
            short(closed, now)
        );
    }
    let Some(current) = task.current() else {
        return String::new();
    };
    let lives = format!(
        "`agent -c` here continues it in {}{}",
        printable(&current.label),
        current
            .session
            .as_deref()
            .map_or_else(String::new, |id| format!(" session {}", printable(id)))
    );
    match back_up(task, now) {
        Some(higher) => format!(
            "{}'s window has reset: `agent -c` here takes the task back up to it, with a brief of what was done since (if it answers; else {})",
            printable(&higher.label),
            lives.trim_start_matches("`agent -c` here ")
        ),
        None => {
            let out: Vec<String> = task
                .links
                .iter()
                .filter(|link| link.still_out(now) && link.label != current.label)
                .filter_map(|link| {
                    Some(format!(
                        "{} is out until {}",
                        printable(&link.label),
                        short(link.resets_at?, now)
                    ))
                })
                .collect();
            if out.is_empty() {
                lives
            } else {
                format!("{lives} ({})", out.join("; "))
            }
        }
    }
}

/// The link above the one the task lives in whose window has reset: where `agent -c` goes
/// back up to, if its rung answers.
fn back_up(task: &Task, now: Timestamp) -> Option<&Link> {
    let current = task.current()?;
    task.links[..task.links.len() - 1]
        .iter()
        .filter(|link| {
            link.rung < current.rung
                && link.session.is_some()
                && link.resets_at.is_some_and(|at| at <= now)
        })
        .min_by_key(|link| link.rung)
}

fn task_json(task: &Task, now: Timestamp) -> serde_json::Value {
    let next = if task.closed.is_some() {
        serde_json::Value::Null
    } else {
        let back = back_up(task, now);
        let to = back.or(task.current());
        json!({
            "back_up": back.is_some(),
            "label": to.map(|link| &link.label),
            "session": to.and_then(|link| link.session.as_ref()),
        })
    };
    json!({
        "id": task.id,
        "started": task.started.to_string(),
        "closed": task.closed.map(|at| at.to_string()),
        "task": task_words(task),
        "links": task.links,
        "continue": next,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(rung: usize, label: &str, session: &str, resets_at: Option<i64>) -> Link {
        let at = Timestamp::from_second(1_000).unwrap();
        Link {
            rung,
            label: label.into(),
            cli: "x".into(),
            login: None,
            session: Some(session.into()),
            at,
            last: at,
            resets_at: resets_at.map(|s| Timestamp::from_second(s).unwrap()),
            spent: resets_at.map(|_| "5-hour limit".into()),
            brief: None,
            parent: None,
        }
    }

    fn task(links: Vec<Link>) -> Task {
        Task {
            id: "t-00000001".into(),
            folder: "/f".into(),
            started: Timestamp::from_second(1_000).unwrap(),
            closed: None,
            links,
        }
    }

    #[test]
    fn a_chain_whose_first_rung_is_still_out_continues_where_it_lives() {
        let now = Timestamp::from_second(2_000).unwrap();
        let t = task(vec![
            link(1, "Claude Code (opus)", "s1", Some(9_000)),
            link(2, "Codex (gpt)", "s2", None),
        ]);
        let next = next_words(&t, now);
        assert!(
            next.starts_with("`agent -c` here continues it in Codex (gpt) session s2 (Claude Code (opus) is out until "),
            "{next}"
        );
        assert_eq!(task_json(&t, now)["continue"]["back_up"], false);
    }

    #[test]
    fn a_chain_whose_first_rung_reset_goes_back_up() {
        let now = Timestamp::from_second(10_000).unwrap();
        let t = task(vec![
            link(1, "Claude Code (opus)", "s1", Some(9_000)),
            link(2, "Codex (gpt)", "s2", None),
        ]);
        let next = next_words(&t, now);
        assert!(
            next.starts_with(
                "Claude Code (opus)'s window has reset: `agent -c` here takes the task back up"
            ),
            "{next}"
        );
        let json = task_json(&t, now);
        assert_eq!(json["continue"]["back_up"], true);
        assert_eq!(json["continue"]["session"], "s1");
    }

    #[test]
    fn a_label_from_the_record_cannot_move_the_terminal() {
        let now = Timestamp::from_second(2_000).unwrap();
        let t = task(vec![link(
            1,
            "Claude\u{1b}[2J Code",
            "s\u{1b}]0;x\u{7}1",
            None,
        )]);
        let out = text(Path::new("/f"), &[t], now);
        assert!(!out.contains('\u{1b}'), "{out:?}");
    }
}
