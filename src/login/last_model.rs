//! The model each CLI last ran, from its own newest record — what a probe that needs a
//! model uses when the CLI's settings name none (DESIGN §12 "out of the box"). The CLIs'
//! built-in defaults move with their releases and plans; what they last ran is a fact.
//! Antigravity has none: where it records its model is UNCONFIRMED (research §4.3).

use crate::adapter::{Env, Family};

use super::{claude_transcript, codex_rollout, gemini};

/// The model a CLI of `family` last ran, from its records where its adapter finds them in
/// `env` (the environment the launched CLI gets).
pub fn last_model(family: Family, env: &Env) -> Option<String> {
    match family {
        Family::Claude => claude_transcript::last_model(family.records(env).first()?),
        Family::Codex => codex_rollout::last_model(family.records(env).first()?),
        Family::Gemini => gemini::last_model(&family.home(env)?),
        Family::Agy | Family::Opencode | Family::Other => None,
    }
}
