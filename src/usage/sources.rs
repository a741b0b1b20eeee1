//! What each source of `--usage` gave (agent's ledger, each CLI's records): how much was
//! read, how many calls it held and how many of them the relay counted instead, for the
//! report's footer and `--json`.

use std::path::PathBuf;

use super::transcripts::SourceStats;

/// What each source gave, for the footer and `--json`.
#[derive(Debug, Clone, Default)]
pub struct Sources {
    pub ledger: Option<LedgerStats>,
    pub claude: Option<CliStats>,
    pub codex: Option<CliStats>,
    pub gemini: Option<CliStats>,
    /// opencode's database, when this machine has one.
    pub opencode: Option<CliStats>,
}

/// agent's own ledger: where it is, its lines, and those that could not be read.
#[derive(Debug, Clone, Default)]
pub struct LedgerStats {
    pub path: PathBuf,
    pub lines: u64,
    pub unreadable: u64,
}

/// One CLI's records.
#[derive(Debug, Clone, Copy, Default)]
pub struct CliStats {
    pub read: SourceStats,
    /// Distinct calls.
    pub calls: u64,
    /// Calls counted on the relay side instead.
    pub relayed: u64,
}
