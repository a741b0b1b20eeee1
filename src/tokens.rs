//! Token counts: the one value type every floor sums (the budget, the ledger, pricing, the
//! usage report), with sums that saturate instead of wrapping.

use serde::{Deserialize, Serialize};

/// The most tokens one field of one call is believed: a billion. The largest context
/// windows are a few million tokens and an answer is far smaller, so no real call comes
/// within two orders of magnitude — while five fields of a billion still add up far below
/// `u64::MAX`. An upstream, a gateway or a record answering `18446744073709551615` would
/// otherwise wrap the day's total back to nothing, or pin the budget at its ceiling forever.
pub const MAX_PER_FIELD: u64 = 1_000_000_000;

/// A token count as the books take it from an answer or a CLI's output about a call that
/// happened: a non-negative integer, at most [`MAX_PER_FIELD`] (the call still counts).
pub fn count(value: &serde_json::Value) -> Option<u64> {
    value.as_u64().map(|n| n.min(MAX_PER_FIELD))
}

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
    /// Whether every figure is one a real call can have (at most [`MAX_PER_FIELD`]). A
    /// record another program wrote (a transcript, a rollout, a chat) with a figure past
    /// it is not believed: the line is skipped as unreadable rather than clamped, since
    /// no call of that size happened.
    pub fn is_plausible(&self) -> bool {
        [
            self.input,
            self.output,
            self.reasoning,
            self.cache_read,
            self.cache_write,
        ]
        .iter()
        .all(|&n| n <= MAX_PER_FIELD)
    }

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
