//! Token counts: the one value type every floor sums (the budget, the ledger, pricing, the
//! usage report), with sums that saturate instead of wrapping.

use serde::{Deserialize, Serialize};

/// Token counts of one call. The five figures are disjoint: `input` excludes cache reads
/// and writes, `output` excludes `reasoning` (an OpenAI `output_tokens` of 70 with 20
/// reasoning tokens is `output: 50, reasoning: 20`), so [`Tokens::total`] is their sum.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tokens {
    #[serde(default)]
    pub input: u64,
    #[serde(default)]
    pub output: u64,
    #[serde(default)]
    pub reasoning: u64,
    #[serde(default)]
    pub cache_read: u64,
    #[serde(default)]
    pub cache_write: u64,
}

impl Tokens {
    /// What counts against the daily token cap: everything the call consumed.
    pub fn total(&self) -> u64 {
        self.input
            .saturating_add(self.output)
            .saturating_add(self.reasoning)
            .saturating_add(self.cache_read)
            .saturating_add(self.cache_write)
    }
}

/// Adds another call's counts, saturating: a ledger line from anywhere cannot wrap a sum.
impl std::ops::AddAssign<&Tokens> for Tokens {
    fn add_assign(&mut self, more: &Tokens) {
        self.input = self.input.saturating_add(more.input);
        self.output = self.output.saturating_add(more.output);
        self.reasoning = self.reasoning.saturating_add(more.reasoning);
        self.cache_read = self.cache_read.saturating_add(more.cache_read);
        self.cache_write = self.cache_write.saturating_add(more.cache_write);
    }
}
