//! What one run of agent does, decided once from its flags: the one answer `lib::run`
//! matches on, and the one place that says which modes are reports (where `--json` and the
//! state directory's check are agent's) and which are launches (which alone write
//! `--outcome`). Before, an if-chain of twenty exits and two lists of flags kept beside it
//! had to agree by hand.

use std::path::PathBuf;

/// One run's purpose. When several are asked for at once, the first in this order wins (as
/// the if-chain it replaces decided; `Cli::take_mode` reads it from the flags).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    /// `--statusline` with other words (alone it never reaches the parser).
    Statusline,
    /// `--generate-man DIR`, `--generate-completions DIR` (for packagers).
    Docs {
        man: Option<PathBuf>,
        completions: Option<PathBuf>,
    },
    /// `--config-template`: print a commented configuration with every key's default.
    ConfigTemplate,
    InstallStatusline,
    UninstallStatusline,
    Doctor,
    /// `--unpark NAME`: forget what parks a login or a rung.
    Unpark(String),
    Accounts(Vec<String>),
    List,
    /// `--tasks`: this folder's tasks that crossed CLIs.
    Tasks,
    InstallWatchdog(Vec<String>),
    UninstallWatchdog(Vec<String>),
    Relay(Vec<String>),
    Budget(Vec<String>),
    Dashboard(Vec<String>),
    Usage(Vec<String>),
    Status,
    CheckFallback,
    /// `--dry-run`: choose as a launch would (with `--use`, as a forced one) and run nothing.
    DryRun,
    /// `--use BACKEND[:MODEL]`: exec that CLI, no probe, no fallback.
    Force(String),
    /// Choose the rung that answers and run it.
    Launch,
}

impl Default for Mode {
    /// Before the flags are read: a launch, as plain words are.
    fn default() -> Mode {
        Mode::Launch
    }
}

impl Mode {
    /// agent reports instead of launching: `--json` is agent's, and the state directory
    /// must be trustworthy before anything reads it. A dry run is a report (and so is every
    /// flag given beside it that is one).
    pub fn is_report(&self) -> bool {
        matches!(
            self,
            Mode::InstallStatusline
                | Mode::UninstallStatusline
                | Mode::Doctor
                | Mode::Unpark(_)
                | Mode::Accounts(_)
                | Mode::List
                | Mode::Tasks
                | Mode::Budget(_)
                | Mode::Dashboard(_)
                | Mode::Usage(_)
                | Mode::Status
                | Mode::CheckFallback
                | Mode::DryRun
        )
    }

    /// agent launches a CLI (or tries to): only a launch writes `--outcome`.
    pub fn is_launch(&self) -> bool {
        matches!(self, Mode::Launch | Mode::Force(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_and_launches_are_told_apart_by_the_mode_alone() {
        for report in [
            Mode::List,
            Mode::DryRun,
            Mode::Doctor,
            Mode::Usage(Vec::new()),
        ] {
            assert!(report.is_report() && !report.is_launch(), "{report:?}");
        }
        for launch in [Mode::Launch, Mode::Force("gemini".into())] {
            assert!(launch.is_launch() && !launch.is_report(), "{launch:?}");
        }
        for neither in [
            Mode::Relay(vec!["serve".into()]),
            Mode::InstallWatchdog(Vec::new()),
            Mode::Statusline,
        ] {
            assert!(!neither.is_launch() && !neither.is_report(), "{neither:?}");
        }
    }
}
