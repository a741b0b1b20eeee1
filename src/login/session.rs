//! What one session of a CLI was, from the CLI's own record of it (DESIGN §21): what was
//! asked first and last, what the assistant last said, which files its edit tools changed,
//! and the work itself (`session_work`: its plan, its edits, its commands).
//! A session that ran out of its window mid-work is handed to the next CLI with a brief of
//! this (`crate::handoff`); the parsers of each CLI's record are beside this file
//! (`claude_session`, `codex_session`), and they read only the session asked for — the
//! transcript named by the session's id, or else only what was written since the run began,
//! never an older session's rows.

use super::run_actions::Actions;
use super::session_work::{CommandRun, FileChange, PlanItem, Work};

/// How many of the assistant's last messages a session keeps: where it stopped, not its
/// whole history.
pub const LAST_REPLIES: usize = 3;

/// What one session was, by its CLI's record.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Session {
    /// The CLI's own session id.
    pub id: Option<String>,
    pub model: Option<String>,
    /// The session's first real user prompt, verbatim.
    pub first_prompt: Option<String>,
    /// Its last real user prompt (may equal the first).
    pub last_prompt: Option<String>,
    /// The assistant's last text messages, oldest first, at most [`LAST_REPLIES`].
    pub last_replies: Vec<String>,
    /// The files its edit tool calls changed, as [`super::run_actions`] reads them.
    pub files: Vec<String>,
    /// The plan as the session last held it (its last todo list or plan update), in order;
    /// empty when it kept none.
    pub plan: Vec<PlanItem>,
    /// What its edit calls did to each file, first changed first (the calls whose results
    /// said they failed left out).
    pub changes: Vec<FileChange>,
    /// The last commands it ran, oldest first, with how each ended.
    pub commands: Vec<CommandRun>,
    /// The last command that failed, with its output's end, whether or not it is among
    /// [`Session::commands`].
    pub last_failure: Option<CommandRun>,
    /// Its last turn was refused for its usage limit, by a row its CLI wrote itself, and no
    /// answer came after it: a session that ran out, whatever its CLI's exit code (one that
    /// waited for the reset and went on answered after it, and is not).
    pub ended_on_its_limit: bool,
    /// How long after it ended the limit it ran into resets, when its record says so and
    /// names no window (opencode's provider's `retry-after`).
    pub limit_resets_in: Option<std::time::Duration>,
}

/// A session built row by row, in the order its record holds them.
#[derive(Debug, Default)]
pub(super) struct Collector {
    session: Session,
    /// The files and commands, added to by [`super::run_actions`]'s row readers.
    pub actions: Actions,
    /// The plan, the edits and the commands, added to by each CLI's work reader.
    pub work: Work,
    /// The message the last reply belongs to: Claude Code writes each content block of one
    /// answer as a row of its own, which are one message to a reader.
    reply_of: Option<String>,
    /// Whether any row of the session was read at all.
    read: bool,
}

impl Collector {
    /// A row of the session was read (whatever it held).
    pub fn saw_row(&mut self) {
        self.read = true;
    }

    pub fn id(&mut self, id: &str) {
        if !id.trim().is_empty() {
            self.session.id = Some(id.to_string());
        }
    }

    pub fn model(&mut self, model: &str) {
        if !model.trim().is_empty() {
            self.session.model = Some(model.to_string());
        }
    }

    /// A real user prompt (never a tool's result or the CLI's own context).
    pub fn prompt(&mut self, text: &str) {
        if text.trim().is_empty() {
            return;
        }
        if self.session.first_prompt.is_none() {
            self.session.first_prompt = Some(text.to_string());
        }
        self.session.last_prompt = Some(text.to_string());
        self.reply_of = None;
    }

    /// An assistant's text; `message` names the message it is part of, when the record
    /// splits one message over several rows.
    pub fn reply(&mut self, text: &str, message: Option<&str>) {
        if text.trim().is_empty() {
            return;
        }
        let replies = &mut self.session.last_replies;
        match (message, self.reply_of.as_deref(), replies.last_mut()) {
            (Some(id), Some(last), Some(reply)) if id == last => {
                reply.push('\n');
                reply.push_str(text);
            }
            _ => {
                replies.push(text.to_string());
                if replies.len() > LAST_REPLIES {
                    replies.remove(0);
                }
            }
        }
        self.reply_of = message.map(str::to_string);
    }

    /// A turn refused for the usage limit, by the CLI's own record.
    pub fn ran_out(&mut self) {
        self.session.ended_on_its_limit = true;
    }

    /// How long until the limit its last turn ran into resets, as its record says.
    pub fn resets_in(&mut self, wait: Option<std::time::Duration>) {
        self.session.limit_resets_in = wait;
    }

    /// The model answered (text or a tool call): a limit before it is behind the session.
    pub fn answered(&mut self) {
        self.session.ended_on_its_limit = false;
    }

    /// The session, or `None` when no row of it was read.
    pub fn finish(mut self) -> Option<Session> {
        self.session.files = self.actions.files;
        let done = self.work.finish();
        self.session.plan = done.plan;
        self.session.changes = done.changes;
        self.session.commands = done.commands;
        self.session.last_failure = done.last_failure;
        self.read.then_some(self.session)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_and_last_prompts_and_the_last_three_replies_are_kept() {
        let mut c = Collector::default();
        c.saw_row();
        c.prompt("fix the tests");
        for n in 0..5 {
            c.reply(&format!("reply {n}"), None);
        }
        c.reply("  ", None);
        c.prompt("  ");
        c.prompt("and the docs");
        c.reply("part one", Some("msg_1"));
        c.reply("part two", Some("msg_1"));
        let session = c.finish().unwrap();
        assert_eq!(session.first_prompt.as_deref(), Some("fix the tests"));
        assert_eq!(session.last_prompt.as_deref(), Some("and the docs"));
        assert_eq!(
            session.last_replies,
            ["reply 3", "reply 4", "part one\npart two"]
        );
        assert_eq!(Collector::default().finish(), None);
    }
}
