//! The work a session did, in words no CLI owns (DESIGN §25): the plan it last held, the
//! files its edit calls changed and how, and the commands it ran with how each ended. Each
//! CLI's reader (`claude_work`, `codex_work`, `gemini_work`, `opencode_work`) turns
//! its own tool calls into these calls of a [`Work`]; the brief (`crate::handoff`) reads
//! only the result.
//!
//! Every field holds others' words from a record agent did not write, so each is bounded
//! as it is kept — a few dozen items, a few KiB each — whatever the record holds; the
//! brief still redacts and quotes them.

use std::collections::VecDeque;

/// At most this many plan items are kept: a plan, not a backlog.
pub const MAX_PLAN: usize = 40;
/// The most of one plan item's text kept, in bytes.
const PLAN_TEXT: usize = 240;
/// At most this many changed files are kept (as [`super::run_actions`] keeps).
pub const MAX_FILES: usize = 20;
/// The most of an edit's new text kept: its first lines, each cut short.
pub const NEW_TEXT_LINES: usize = 8;
const NEW_TEXT_LINE: usize = 200;
/// How many of the last commands are kept: where it stopped, not its history.
pub const LAST_COMMANDS: usize = 10;
/// How many calls may wait for their results at once; a CLI runs a few in parallel.
const PENDING: usize = 32;
/// The most of one command line kept, in bytes.
const COMMAND_TEXT: usize = 1024;
/// The most of a failed command's output kept, its end (where the error is).
pub const OUTPUT_TAIL: usize = 4096;

/// Where a plan item stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanStatus {
    Pending,
    InProgress,
    Completed,
}

impl PlanStatus {
    /// The status as the CLIs spell it (`pending`, `in_progress`, `completed`); an unknown
    /// word is pending: not done is the safe reading.
    pub fn parse(word: &str) -> PlanStatus {
        match word {
            "completed" | "done" => PlanStatus::Completed,
            "in_progress" | "in-progress" | "active" => PlanStatus::InProgress,
            _ => PlanStatus::Pending,
        }
    }
}

/// One item of the session's plan (its todo list, its plan update).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanItem {
    pub text: String,
    pub status: PlanStatus,
}

impl PlanItem {
    pub fn new(text: &str, status: PlanStatus) -> PlanItem {
        PlanItem {
            text: cut(text.trim(), PLAN_TEXT),
            status,
        }
    }
}

/// One edit call's change to one file, as the call itself says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    pub path: String,
    pub added: usize,
    pub removed: usize,
    /// The text it put in (a replacement, a file's content, a patch's `+` lines).
    pub new_text: String,
    /// Whether the call deleted the file.
    pub deleted: bool,
}

/// What the session's edit calls did to one file, all of them together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    pub path: String,
    /// Lines the edits put in and took out (a whole-file write counts its lines as added).
    pub added: usize,
    pub removed: usize,
    /// How many edit calls changed it.
    pub edits: usize,
    /// The last edit's new text, its first [`NEW_TEXT_LINES`] lines.
    pub last_new_text: String,
    /// Its last edit deleted it.
    pub deleted: bool,
}

/// How a command ended, by its CLI's record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// The record holds no result (the session stopped while it ran, or was cut there).
    Unknown,
    Ok,
    /// Failed, with its exit code when the record says it.
    Failed(Option<i64>),
}

/// One command the session ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandRun {
    pub command: String,
    pub ended: Ended,
    /// Its output's end, kept for a failed command only.
    pub output_tail: Option<String>,
}

/// The work built row by row, in the record's order.
#[derive(Debug, Default)]
pub struct Work {
    plan: Vec<PlanItem>,
    changes: Vec<FileChange>,
    /// The last commands, each with its call's id.
    commands: VecDeque<(Option<String>, CommandRun)>,
    failed: Option<CommandRun>,
    /// Edit calls waiting for their results, by call id.
    pending: VecDeque<(String, Vec<Edit>)>,
}

/// What a [`Work`] holds when the record is read.
#[derive(Debug, Default)]
pub struct Done {
    pub plan: Vec<PlanItem>,
    pub changes: Vec<FileChange>,
    pub commands: Vec<CommandRun>,
    pub last_failure: Option<CommandRun>,
}

impl Work {
    /// The session's plan as it now holds it: each plan update replaces the last.
    pub fn plan(&mut self, items: impl IntoIterator<Item = PlanItem>) {
        self.plan = items
            .into_iter()
            .filter(|item| !item.text.is_empty())
            .take(MAX_PLAN)
            .collect();
    }

    /// An edit call: applied when its result comes back without an error, or at the end
    /// when none came (the session may have stopped after making it).
    pub fn edit(&mut self, call: Option<&str>, edits: Vec<Edit>) {
        match call {
            Some(id) => self.wait(id, edits),
            None => self.apply_all(&edits),
        }
    }

    /// An edit call whose record holds how it ended (Gemini CLI's and opencode's keep each
    /// call with its status): `old` replaced by `new` in `path` (`old` empty: a whole-file
    /// write).
    pub fn edit_that_ended(
        &mut self,
        call: Option<&str>,
        ended: Ended,
        path: &str,
        old: &str,
        new: &str,
    ) {
        let edit = Edit {
            path: path.to_string(),
            added: line_count(new),
            removed: line_count(old),
            new_text: new.to_string(),
            deleted: false,
        };
        self.edit(call, vec![edit]);
        if let Some(id) = call {
            self.result(id, ended, None);
        }
    }

    /// A command call; how it ended comes with [`Work::result`].
    pub fn command(&mut self, call: Option<&str>, command: &str) {
        let run = CommandRun {
            command: cut(command.trim(), COMMAND_TEXT),
            ended: Ended::Unknown,
            output_tail: None,
        };
        self.commands.push_back((call.map(str::to_string), run));
        // More than the last few are kept while reading, so a result that comes late still
        // finds its call; the last few are what the session ends with.
        if self.commands.len() > PENDING {
            self.commands.pop_front();
        }
    }

    /// The result of call `id`: whether it failed and what it printed. A command's ending
    /// may be told twice (a structured event and the model's text): a later telling that
    /// knows less keeps what the first knew.
    pub fn result(&mut self, id: &str, ended: Ended, output: Option<&str>) {
        if let Some(at) = self.pending.iter().position(|(call, _)| call == id)
            && let Some((_, edits)) = self.pending.remove(at)
            && !matches!(ended, Ended::Failed(_))
        {
            self.apply_all(&edits);
        }
        let Some((_, run)) = self
            .commands
            .iter_mut()
            .rev()
            .find(|(call, _)| call.as_deref() == Some(id))
        else {
            return;
        };
        let knows_more = match (run.ended, ended) {
            (_, Ended::Unknown) => false,
            (Ended::Unknown, _) | (Ended::Failed(None), Ended::Failed(Some(_))) => true,
            _ => false,
        };
        if knows_more {
            run.ended = ended;
        }
        if !matches!(run.ended, Ended::Failed(_)) {
            return;
        }
        if run.output_tail.is_none()
            && let Some(output) = output.filter(|o| !o.trim().is_empty())
        {
            run.output_tail = Some(crate::text::keep_end(output, OUTPUT_TAIL));
        }
        self.failed = Some(run.clone());
    }

    fn wait(&mut self, id: &str, edits: Vec<Edit>) {
        self.pending.push_back((id.to_string(), edits));
        if self.pending.len() > PENDING
            && let Some((_, edits)) = self.pending.pop_front()
        {
            // Its result is far behind: it is taken as made, as at the end.
            self.apply_all(&edits);
        }
    }

    fn apply_all(&mut self, edits: &[Edit]) {
        for edit in edits {
            self.apply(edit);
        }
    }

    fn apply(&mut self, edit: &Edit) {
        let path = crate::text::printable(edit.path.trim());
        if path.is_empty() {
            return;
        }
        let at = match self.changes.iter().position(|c| c.path == path) {
            Some(at) => at,
            None if self.changes.len() < MAX_FILES => {
                self.changes.push(FileChange {
                    path,
                    added: 0,
                    removed: 0,
                    edits: 0,
                    last_new_text: String::new(),
                    deleted: false,
                });
                self.changes.len() - 1
            }
            None => return,
        };
        let change = &mut self.changes[at];
        change.added = change.added.saturating_add(edit.added);
        change.removed = change.removed.saturating_add(edit.removed);
        change.edits += 1;
        change.last_new_text = first_lines(&edit.new_text);
        change.deleted = edit.deleted;
    }

    /// The work, with the edits whose results never came taken as made.
    pub fn finish(mut self) -> Done {
        while let Some((_, edits)) = self.pending.pop_front() {
            self.apply_all(&edits);
        }
        let skip = self.commands.len().saturating_sub(LAST_COMMANDS);
        Done {
            plan: self.plan,
            changes: self.changes,
            commands: self.commands.into_iter().skip(skip).map(|c| c.1).collect(),
            last_failure: self.failed,
        }
    }
}

/// How many lines a text holds, as a diff counts them (`""` holds none).
pub fn line_count(text: &str) -> usize {
    text.lines().count()
}

/// The first [`NEW_TEXT_LINES`] lines of `text`, each cut to a readable length, and how
/// many more there were.
fn first_lines(text: &str) -> String {
    let total = line_count(text);
    let mut kept: Vec<String> = text
        .lines()
        .take(NEW_TEXT_LINES)
        .map(|line| cut(line, NEW_TEXT_LINE))
        .collect();
    if total > NEW_TEXT_LINES {
        kept.push(format!("[… {} more lines]", total - NEW_TEXT_LINES));
    }
    kept.join("\n")
}

/// The head of `text` within `max` bytes, an ellipsis where it was cut.
fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(path: &str, added: usize, removed: usize, new_text: &str) -> Edit {
        Edit {
            path: path.into(),
            added,
            removed,
            new_text: new_text.into(),
            deleted: false,
        }
    }

    #[test]
    fn edits_add_up_per_file_and_a_failed_edit_changes_nothing() {
        let mut work = Work::default();
        work.edit(Some("t1"), vec![edit("a.rs", 2, 1, "one\ntwo")]);
        work.edit(Some("t2"), vec![edit("a.rs", 5, 5, "refused")]);
        work.edit(Some("t3"), vec![edit("a.rs", 1, 0, "three")]);
        work.result("t1", Ended::Ok, None);
        work.result(
            "t2",
            Ended::Failed(None),
            Some("String to replace not found"),
        );
        // t3 has no result: the session stopped after it, so it is taken as made.
        let done = work.finish();
        assert_eq!(
            done.changes,
            [FileChange {
                path: "a.rs".into(),
                added: 3,
                removed: 1,
                edits: 2,
                last_new_text: "three".into(),
                deleted: false,
            }]
        );
        assert!(done.commands.is_empty() && done.last_failure.is_none());
    }

    #[test]
    fn the_last_commands_are_kept_with_the_last_failure_even_when_it_is_older() {
        let mut work = Work::default();
        work.command(Some("c0"), "cargo build");
        work.result("c0", Ended::Failed(Some(101)), Some("error[E0308]"));
        // A structured ending told first is not undone by a vaguer one after it.
        work.result("c0", Ended::Ok, None);
        for n in 1..=12 {
            work.command(Some(&format!("c{n}")), &format!("echo {n}"));
            work.result(&format!("c{n}"), Ended::Ok, Some("ok"));
        }
        work.command(None, "sleep 100");
        let done = work.finish();
        assert_eq!(done.commands.len(), LAST_COMMANDS);
        assert_eq!(done.commands[0].command, "echo 4");
        assert_eq!(done.commands.last().unwrap().ended, Ended::Unknown);
        let failed = done.last_failure.unwrap();
        assert_eq!(failed.command, "cargo build");
        assert_eq!(failed.ended, Ended::Failed(Some(101)));
        assert_eq!(failed.output_tail.as_deref(), Some("error[E0308]"));
    }

    #[test]
    fn hostile_sizes_are_bounded_as_they_are_kept() {
        let mut work = Work::default();
        work.plan(
            (0..100)
                .map(|n| PlanItem::new(&format!("{n}{}", "x".repeat(9999)), PlanStatus::Pending)),
        );
        for n in 0..50 {
            work.edit(
                None,
                vec![edit(&format!("f{n}"), 1, 0, &"line\n".repeat(1000))],
            );
        }
        work.command(Some("c"), &"y".repeat(1 << 20));
        work.result(
            "c",
            Ended::Failed(Some(1)),
            Some(&format!("{}the end", "z".repeat(1 << 20))),
        );
        let done = work.finish();
        assert_eq!(done.plan.len(), MAX_PLAN);
        assert!(done.plan.iter().all(|p| p.text.len() <= PLAN_TEXT + 3));
        assert_eq!(done.changes.len(), MAX_FILES);
        assert_eq!(
            done.changes[0].last_new_text.lines().count(),
            NEW_TEXT_LINES + 1
        );
        let failed = done.last_failure.unwrap();
        assert!(failed.command.len() <= COMMAND_TEXT + 3);
        let output = failed.output_tail.unwrap();
        assert!(output.len() <= OUTPUT_TAIL + 40 && output.ends_with("the end"));
        assert!(output.starts_with("[… "), "{output}");
    }

    #[test]
    fn plan_words_are_read_and_an_unknown_one_is_not_done() {
        assert_eq!(PlanStatus::parse("completed"), PlanStatus::Completed);
        assert_eq!(PlanStatus::parse("in_progress"), PlanStatus::InProgress);
        assert_eq!(PlanStatus::parse("pending"), PlanStatus::Pending);
        assert_eq!(PlanStatus::parse("weird"), PlanStatus::Pending);
    }
}
