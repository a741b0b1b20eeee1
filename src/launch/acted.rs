//! Whether a run that failed fast had already acted — changed files or ran commands, by
//! its CLI's own record — so that it is not re-run blind on the next rung (issue 28 item
//! 10). The second net hands a run that "never really started" to the next CLI with the
//! same arguments; a run that edited the tree did start, and a second CLI given the same
//! prompt from scratch would redo or fight the half-done work.

use std::path::Path;

use jiff::Timestamp;

use crate::adapter::{Env, Family};
use crate::launch::rung::Rung;
use crate::login::{claude_transcript, codex_rollout, run_actions};

pub use crate::login::run_actions::Actions;

/// What the run of `rung` that started at `start` in `cwd` did, as its record says
/// (nothing when its CLI keeps no record agent reads: Gemini CLI, Antigravity, opencode).
pub fn by_run(rung: &Rung, cwd: &Path, start: Timestamp) -> Actions {
    let Ok(ready) = &rung.state else {
        return Actions::default();
    };
    let family = rung.backend.family;
    let Some(home) = family.home(&Env::child(&ready.env, &ready.env_remove)) else {
        return Actions::default();
    };
    match family {
        Family::Claude => {
            run_actions::claude(&claude_transcript::project_dir_for(&home, cwd), start)
        }
        Family::Codex => codex_rollout::find_run(&home.join("sessions"), cwd, start)
            .map(|run| run_actions::codex(&run.path, start))
            .unwrap_or_default(),
        Family::Gemini | Family::Agy | Family::Opencode | Family::Other => Actions::default(),
    }
}
