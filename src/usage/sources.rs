//! What each source of `--usage` gave (agent's ledger, each CLI's records): how much was
//! read, how many calls it held and how many of them the relay counted instead, for the
//! report's footer and `--json`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::transcripts::SourceStats;
use crate::cli::usage::Source;

/// What each source gave, for the footer and `--json`.
#[derive(Debug, Clone, Default)]
pub struct Sources {
    pub ledger: Option<LedgerStats>,
    /// Each CLI's records that were read, by the `--source` that names them.
    pub clis: BTreeMap<Source, CliStats>,
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
