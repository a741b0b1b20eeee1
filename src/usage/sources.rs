//! What each source of `--usage` gave (agent's ledger, each CLI's records): how much was
//! read, how many calls it held and how many of them the relay counted instead, for the
//! report's footer and `--json`.

use std::path::PathBuf;

use crate::adapter::Family;
use crate::login::calls::SourceStats;

/// What each source gave, for the footer and `--json`.
#[derive(Debug, Clone, Default)]
pub struct Sources {
    pub ledger: Option<LedgerStats>,
    /// Every CLI whose records agent counts, in the adapters' order: what its records gave,
    /// `None` when they were not read (not asked for, or none on this machine).
    pub clis: Vec<(Family, Option<CliStats>)>,
}

impl Sources {
    /// What the records of the CLI named `cli` (a call's `cli`) gave, when they were read.
    pub fn of_cli(&mut self, cli: &str) -> Option<&mut CliStats> {
        self.clis
            .iter_mut()
            .find(|(family, _)| family.name() == cli)
            .and_then(|(_, stats)| stats.as_mut())
    }
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
