//! A usage limit a CLI named in its own final error (what it printed on stderr as it
//! ended), for a CLI whose run records name no window: Gemini CLI's `TerminalQuotaError`.

use std::time::Duration;

/// A usage limit a CLI named in its own final error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SaidLimit {
    /// How long until it resets, when the CLI said (else agent waits `quota_minutes`).
    pub resets_in: Option<Duration>,
}
