//! The page's panel of tasks that crossed CLIs (DESIGN §25): the newest chains on this
//! machine, each with its folder, the sessions that carried it and what `agent -c` in that
//! folder does now. No prompt: what the task was stays in its briefs and `agent --tasks`.

use std::fmt::Write as _;
use std::path::Path;

use jiff::Timestamp;

use super::html::{empty_panel, escape};
use super::words;

/// How many chains the panel shows.
const SHOWN: usize = 5;

pub fn draw(html: &mut String, state_dir: &Path, now: Timestamp) {
    let mut tasks = crate::state::tasks::all(state_dir);
    if tasks.is_empty() {
        empty_panel(
            html,
            "tasks",
            "Tasks across CLIs",
            "none yet (a session handed to another CLI with --on-limit=continue becomes one; agent -c continues it)",
        );
        return;
    }
    tasks.reverse();
    html.push_str("<h2 data-panel=\"tasks\">Tasks across CLIs</h2><table><thead><tr><th>task</th><th>folder</th><th>sessions</th><th>agent -c there</th></tr></thead><tbody>");
    for task in tasks.iter().take(SHOWN) {
        let chain: Vec<String> = task
            .links
            .iter()
            .map(|link| {
                let out = if link.spent.is_some() {
                    " <span class=\"mute\">(ran out)</span>"
                } else {
                    ""
                };
                format!("{}{out}", escape(&link.label))
            })
            .collect();
        let _ = write!(
            html,
            "<tr data-task=\"{id}\"><td><code>{id}</code> {started}</td><td><code>{folder}</code></td><td>{chain}</td><td>{next}</td></tr>",
            id = escape(&task.id),
            started = words::time(task.started, now),
            folder = escape(&task.folder.to_string_lossy()),
            chain = chain.join(" → "),
            next = escape(&crate::report::tasks::next_words(task, now)),
        );
    }
    html.push_str("</tbody></table>");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::tasks::{Link, carried};

    fn link(rung: usize, label: &str, spent: Option<&str>) -> Link {
        let at = Timestamp::now();
        Link {
            rung,
            label: label.into(),
            cli: "x".into(),
            login: None,
            session: Some(format!("s{rung}")),
            at,
            last: at,
            resets_at: spent.map(|_| at + jiff::SignedDuration::from_hours(2)),
            spent: spent.map(str::to_string),
            brief: None,
            parent: None,
        }
    }

    #[test]
    fn a_chain_shows_its_folder_its_sessions_and_where_agent_c_goes_escaped() {
        let dir = tempfile::tempdir().unwrap();
        let folder = Path::new("/work/<repo>");
        let first = carried(
            dir.path(),
            folder,
            None,
            link(1, "Claude Code (opus)", Some("5-hour limit")),
        );
        carried(
            dir.path(),
            folder,
            first.as_ref(),
            link(2, "Codex <gpt>", None),
        );
        let mut html = String::new();
        draw(&mut html, dir.path(), Timestamp::now());
        assert!(html.contains("<h2 data-panel=\"tasks\">"), "{html}");
        assert!(html.contains("<code>/work/&lt;repo&gt;</code>"), "{html}");
        assert!(
            html.contains(
                "Claude Code (opus) <span class=\"mute\">(ran out)</span> → Codex &lt;gpt&gt;"
            ),
            "{html}"
        );
        assert!(
            html.contains("`agent -c` here continues it in Codex &lt;gpt&gt; session s2"),
            "{html}"
        );
        assert!(
            !html.contains("<repo>") && !html.contains("<gpt>"),
            "{html}"
        );
    }

    #[test]
    fn no_chain_is_one_line() {
        let dir = tempfile::tempdir().unwrap();
        let mut html = String::new();
        draw(&mut html, dir.path(), Timestamp::now());
        assert!(html.contains("data-panel=\"tasks\""), "{html}");
        assert!(!html.contains("<table>"), "{html}");
    }
}
