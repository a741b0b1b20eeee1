//! The model each CLI last ran, from its own newest record — what a probe that needs a
//! model uses when the CLI's settings name none (DESIGN §12 "out of the box"). The CLIs'
//! built-in defaults move with their releases and plans; what they last ran is a fact.
//! Antigravity has none: where it records its model is UNCONFIRMED (research §4.3).

use super::{Cli, claude, claude_transcript, codex, codex_rollout, gemini};

/// The model `cli` last ran, from its records under the user's directories.
pub fn last_model(cli: Cli) -> Option<String> {
    match cli {
        Cli::Claude => claude_transcript::last_model(&claude::config_dir()?.join("projects")),
        Cli::Codex => codex_rollout::last_model(&codex::codex_home()?.join("sessions")),
        Cli::Gemini => gemini::last_model(&gemini::gemini_dir()?),
        Cli::Agy => None,
    }
}
