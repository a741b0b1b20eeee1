//! Hand-offs (DESIGN §21, §25): a session that ran out of its usage window mid-work is
//! continued by the next CLI with a brief of it — what was asked, the plan it held, what it
//! did (files changed, commands run), where it stopped, what to do next, where it came from. The brief is a file in the state directory the next CLI is
//! told to read; nothing here runs a CLI or chooses one (that is the launch's).

pub mod brief;
mod quote;
mod work;
pub mod worktree_changes;

#[cfg(test)]
mod brief_shape;
#[cfg(test)]
mod reader_tests;

pub use brief::{Source, task_of, write};
