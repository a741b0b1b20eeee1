//! Hand-offs (DESIGN §21): a session that ran out of its usage window mid-work is continued
//! by the next CLI with a brief of it — what was asked, where it stopped, the files it
//! changed, where it came from. The brief is a file in the state directory the next CLI is
//! told to read; nothing here runs a CLI or chooses one (that is the launch's).

pub mod brief;
pub mod worktree_changes;

pub use brief::{Source, write};
