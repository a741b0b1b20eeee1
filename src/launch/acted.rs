//! Whether a run that failed fast had already acted — changed files or ran commands, by
//! its CLI's own record — so that it is not re-run blind on the next rung (issue 28 item
//! 10). The second net hands a run that "never really started" to the next CLI with the
//! same arguments; a run that edited the tree did start, and a second CLI given the same
//! prompt from scratch would redo or fight the half-done work.

use std::path::Path;

use jiff::Timestamp;

use crate::adapter::Env;
use crate::launch::rung::Rung;
use crate::login::readers;

pub use crate::login::run_actions::Actions;

/// What the run of `rung` that started at `start` in `cwd` (its session `id` when known) did, as its record says
/// (nothing when its CLI keeps no record agent reads: Gemini CLI, Antigravity, opencode).
pub fn by_run(rung: &Rung, cwd: &Path, start: Timestamp, id: Option<&str>) -> Actions {
    let Ok(ready) = &rung.state else {
        return Actions::default();
    };
    let family = rung.backend.family;
    let Some(home) = family.home(&Env::child(&ready.env, &ready.env_remove)) else {
        return Actions::default();
    };
    readers::run_actions(family, &home, cwd, start, id)
}
