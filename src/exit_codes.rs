//! The exit codes of DESIGN.md §2, in one place.

use std::process::ExitCode;

/// How agent ends when it does not pass a child's own status through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    Success,
    /// `--check-fallback` DEGRADED/DOWN, `--doctor` found a problem.
    Problem,
    /// Usage or configuration error: the message names the file, line and key.
    Usage,
    /// No rung is available: every rung failed its probe or fast-failed.
    Unavailable,
    /// Refused by the budget where nothing could run without spending.
    Budget,
    /// Every rung that could run is parked until a known reset (EX_TEMPFAIL, so a cron
    /// wrapper tries again; `--wait` waits instead).
    Parked,
}

impl ExitStatus {
    pub fn code(self) -> u8 {
        match self {
            ExitStatus::Success => 0,
            ExitStatus::Problem => 1,
            ExitStatus::Usage => 2,
            ExitStatus::Unavailable => 69,
            ExitStatus::Budget | ExitStatus::Parked => 75,
        }
    }

    /// Errors that carry a [`UsageError`] exit 2; everything else is a runtime failure (1).
    pub fn from_error(err: &anyhow::Error) -> ExitStatus {
        if err.chain().any(<dyn std::error::Error>::is::<UsageError>) {
            ExitStatus::Usage
        } else if err
            .chain()
            .any(<dyn std::error::Error>::is::<UnavailableError>)
        {
            ExitStatus::Unavailable
        } else {
            ExitStatus::Problem
        }
    }
}

impl From<ExitStatus> for ExitCode {
    fn from(status: ExitStatus) -> ExitCode {
        ExitCode::from(status.code())
    }
}

/// A mistake in the command line or the configuration: exit 2.
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// Nothing could be run: exit 69.
#[derive(Debug)]
pub struct UnavailableError(pub String);

impl std::fmt::Display for UnavailableError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UnavailableError {}

/// Shorthand for returning a usage error from anywhere.
pub fn usage(message: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(UsageError(message.into()))
}
