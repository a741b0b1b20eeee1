//! `--usage --reconcile`: per run and model, what the CLI recorded (its transcript calls
//! that went through the relay) against what the relay metered (its ledger lines).
//!
//! The gap is the share of tokens the two sides disagree on, figure by figure: the sum of
//! |client − relay| over input, output, reasoning, cache read and cache write, divided by
//! the larger side's total. Within 2 % is a `match`. Providers differ on reasoning: agent
//! keeps it apart from output when the source says how many (OpenAI), while Anthropic's
//! output already holds the thinking. `--reasoning-in-output` compares output + reasoning
//! as one figure, for when one side cannot tell them apart.

use std::collections::BTreeSet;

use super::tally::{Counts, PerRun, SEP};
use crate::state::ledger::Tokens;

/// At most this gap is a match.
pub const TOLERANCE: f64 = 0.02;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Match,
    Mismatch,
    /// The relay carried calls of this run but no CLI record was found for them.
    NoClientRecords,
    /// CLI records were tied to this run but the relay metered none in the window.
    NoRelayRecords,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Match => "match",
            Status::Mismatch => "mismatch",
            Status::NoClientRecords => "no_client_records",
            Status::NoRelayRecords => "no_relay_records",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Row {
    pub run: String,
    pub model: String,
    pub client: Counts,
    pub relay: Counts,
    /// 0.0 … 1.0.
    pub gap: f64,
    pub status: Status,
}

/// The figures compared.
fn figures(t: &Tokens, reasoning_in_output: bool) -> [u64; 5] {
    if reasoning_in_output {
        [
            t.input,
            t.output + t.reasoning,
            0,
            t.cache_read,
            t.cache_write,
        ]
    } else {
        [t.input, t.output, t.reasoning, t.cache_read, t.cache_write]
    }
}

#[allow(clippy::cast_precision_loss)]
pub fn gap(client: &Tokens, relay: &Tokens, reasoning_in_output: bool) -> f64 {
    let larger = client.total().max(relay.total());
    if larger == 0 {
        return 0.0;
    }
    let disagree: u64 = figures(client, reasoning_in_output)
        .iter()
        .zip(figures(relay, reasoning_in_output))
        .map(|(c, r)| c.abs_diff(r))
        .sum();
    disagree as f64 / larger as f64
}

pub fn rows(client: &PerRun, relay: &PerRun, reasoning_in_output: bool) -> Vec<Row> {
    let keys: BTreeSet<&str> = client
        .cells
        .keys()
        .chain(relay.cells.keys())
        .map(|key| &**key)
        .collect();
    keys.into_iter()
        .map(|key| {
            let (run, model) = key.split_once(SEP).unwrap_or((key, ""));
            let client = client.cells.get(key).copied().unwrap_or_default();
            let relay = relay.cells.get(key).copied().unwrap_or_default();
            let gap = gap(&client.tokens, &relay.tokens, reasoning_in_output);
            let status = if client.calls == 0 {
                Status::NoClientRecords
            } else if relay.calls == 0 {
                Status::NoRelayRecords
            } else if gap <= TOLERANCE {
                Status::Match
            } else {
                Status::Mismatch
            };
            Row {
                run: run.to_string(),
                model: model.to_string(),
                client,
                relay,
                gap,
                status,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(input: u64, output: u64, reasoning: u64) -> Tokens {
        Tokens {
            input,
            output,
            reasoning,
            cache_read: 1000,
            cache_write: 200,
        }
    }

    #[test]
    fn equal_sides_have_no_gap_and_five_percent_more_is_past_the_tolerance() {
        let client = tokens(100, 50, 0);
        assert!(gap(&client, &client, false).abs() < f64::EPSILON);
        let more = Tokens {
            input: 105,
            output: 53,
            reasoning: 0,
            cache_read: 1050,
            cache_write: 210,
        };
        let g = gap(&client, &more, false);
        assert!(g > TOLERANCE, "{g}");
        assert!((g - 68.0 / 1418.0).abs() < 1e-9, "{g}");
    }

    #[test]
    fn reasoning_counted_inside_output_is_one_figure_with_the_switch() {
        // The CLI saw 60 output tokens, thinking included; the relay split off 20.
        let client = tokens(100, 60, 0);
        let relay = tokens(100, 40, 20);
        assert!(gap(&client, &relay, false) > TOLERANCE);
        assert!(gap(&client, &relay, true).abs() < f64::EPSILON);
    }
}
