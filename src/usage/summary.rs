//! From the tally to the report: one row per group with its calls, tokens, cost and cache
//! efficiency, and the total. A plan's accounts cost the plan's unit price that month (its
//! fee ÷ the month's tokens of its accounts), everything else its model's price; a token
//! without a price leaves the cost unknown, never guessed.

use std::collections::{BTreeMap, BTreeSet};

use super::tally::{By, Counts, SEP, Tally};
use crate::config::pricing::Pricing;

/// Under this share of input read from the cache, a group gets a hint.
pub const CACHE_HINT_BELOW: f64 = 0.30;
/// Groups reading fewer input tokens than this get no hint (probes, one-off calls).
pub const CACHE_HINT_MIN_INPUT: u64 = 10_000;

/// What some calls cost.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Cost {
    /// The part whose price is known, USD.
    pub known_usd: f64,
    /// Some tokens have no price: the cost is unknown (at least `known_usd`).
    pub incomplete: bool,
    /// Models whose tokens had no price (`""` is a call without a model).
    pub unpriced: BTreeSet<String>,
    /// Calls on a subscription login, paid by the plan: no per-call cost, none asked for.
    pub login_calls: u64,
    /// The plans those calls ran on (`max`, `plus`, `gemini login`).
    pub login_plans: BTreeSet<String>,
}

impl Cost {
    /// The cost, when every token had a price.
    pub fn usd(&self) -> Option<f64> {
        (!self.incomplete).then_some(self.known_usd)
    }

    fn add(&mut self, other: &Cost) {
        self.known_usd += other.known_usd;
        self.incomplete |= other.incomplete;
        self.unpriced.extend(other.unpriced.iter().cloned());
        self.login_calls += other.login_calls;
        self.login_plans.extend(other.login_plans.iter().cloned());
    }
}

/// One row of the report.
#[derive(Debug, Clone, Default)]
pub struct Group {
    /// The day, model, account, run or backend; `""` when the calls did not say.
    pub key: String,
    pub counts: Counts,
    pub cost: Cost,
    /// With `--by day`: the day's tokens per backend (`""` when the calls did not say).
    pub backends: BTreeMap<String, u64>,
}

impl Group {
    /// cache_read / (input + cache_read + cache_write); `None` without input.
    pub fn cache_efficiency(&self) -> Option<f64> {
        cache_efficiency(&self.counts)
    }

    /// Whether the group reads so little from the cache that it is worth a word.
    pub fn wants_cache_hint(&self) -> bool {
        let t = &self.counts.tokens;
        t.input + t.cache_read + t.cache_write >= CACHE_HINT_MIN_INPUT
            && self
                .cache_efficiency()
                .is_some_and(|e| e < CACHE_HINT_BELOW)
    }
}

#[allow(clippy::cast_precision_loss)]
pub fn cache_efficiency(counts: &Counts) -> Option<f64> {
    let t = &counts.tokens;
    let input_side = t
        .input
        .saturating_add(t.cache_read)
        .saturating_add(t.cache_write);
    (input_side > 0).then(|| t.cache_read as f64 / input_side as f64)
}

/// A plan's month: its fee spread over its accounts' tokens.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanMonth {
    pub plan: String,
    pub month: String,
    pub monthly_usd: f64,
    pub tokens: u64,
}

impl PlanMonth {
    /// USD per million tokens that month.
    #[allow(clippy::cast_precision_loss)]
    pub fn usd_per_million(&self) -> Option<f64> {
        (self.tokens > 0).then(|| self.monthly_usd / self.tokens as f64 * 1_000_000.0)
    }
}

/// The report's numbers.
#[derive(Debug, Clone)]
pub struct Summary {
    pub by: By,
    pub groups: Vec<Group>,
    pub total: Group,
    /// The plan months the report's calls fall in.
    pub plans: Vec<PlanMonth>,
}

pub fn build(tally: &Tally, by: By, pricing: &Pricing) -> Summary {
    let mut plans: BTreeMap<String, PlanMonth> = BTreeMap::new();
    let mut total = Group::default();
    let mut groups: Vec<Group> = tally
        .groups
        .iter()
        .map(|(key, sums)| {
            let mut cost = Cost {
                known_usd: sums.known_usd,
                incomplete: sums.incomplete,
                unpriced: sums.unpriced.iter().map(ToString::to_string).collect(),
                login_calls: sums.login_calls,
                login_plans: sums.login_plans.iter().map(ToString::to_string).collect(),
            };
            for (plan_month, tokens) in &sums.plan_tokens {
                let plan = plans
                    .entry(plan_month.to_string())
                    .or_insert_with(|| plan_month_of(tally, pricing, plan_month));
                if let Some(unit) = plan.usd_per_million() {
                    #[allow(clippy::cast_precision_loss)]
                    let usd = *tokens as f64 * unit / 1_000_000.0;
                    cost.known_usd += usd;
                }
            }
            let group = Group {
                key: key.to_string(),
                counts: sums.counts,
                cost,
                backends: BTreeMap::new(),
            };
            total.counts.add(&group.counts);
            total.cost.add(&group.cost);
            group
        })
        .collect();
    if by == By::Day {
        groups.sort_by(|a, b| a.key.cmp(&b.key));
        for (key, tokens) in &tally.day_backends {
            let (day, backend) = key.split_once(SEP).unwrap_or((key, ""));
            if let Ok(at) = groups.binary_search_by(|g| g.key.as_str().cmp(day)) {
                groups[at].backends.insert(backend.to_string(), *tokens);
            }
        }
    } else {
        groups.sort_by(|a, b| {
            b.counts
                .tokens
                .total()
                .cmp(&a.counts.tokens.total())
                .then_with(|| b.counts.calls.cmp(&a.counts.calls))
                .then_with(|| a.key.cmp(&b.key))
        });
    }
    Summary {
        by,
        groups,
        total,
        plans: plans.into_values().collect(),
    }
}

/// A plan's fee and the tokens of its accounts in the month of `plan SEP month`.
fn plan_month_of(tally: &Tally, pricing: &Pricing, plan_month: &str) -> PlanMonth {
    let (plan, month) = plan_month.split_once(SEP).unwrap_or((plan_month, ""));
    PlanMonth {
        plan: plan.to_string(),
        month: month.to_string(),
        monthly_usd: pricing.plans.get(plan).map_or(0.0, |p| p.monthly_usd),
        tokens: tally.plan_months.get(plan_month).copied().unwrap_or(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::ledger::Tokens;
    use crate::usage::clock::Day;
    use crate::usage::tally::{Rules, View};

    #[test]
    fn by_day_each_day_knows_its_tokens_per_backend() {
        let pricing = Pricing::default();
        let rules = Rules {
            by: By::Day,
            since: None,
            until: None,
            pricing: &pricing,
        };
        let mut first = Tally::default();
        let mut second = Tally::default();
        // Two tallies (the scan's parts), merged.
        for (part, day, backend, input) in [
            (0, "2026-11-29", "claude", 100),
            (0, "2026-11-29", "codex", 30),
            (1, "2026-11-29", "claude", 5),
            (1, "2026-11-30", "gemini", 7),
        ] {
            let tally = if part == 0 { &mut first } else { &mut second };
            tally.add(
                &rules,
                &View {
                    day: Day::parse(day).unwrap(),
                    run: "",
                    backend,
                    model: "m",
                    account: "",
                    client: "",
                    tokens: &Tokens {
                        input,
                        ..Tokens::default()
                    },
                    estimated: false,
                    error: false,
                    login: None,
                },
            );
        }
        first.merge(second);
        let summary = build(&first, By::Day, &pricing);
        let backends: Vec<Vec<(&str, u64)>> = summary
            .groups
            .iter()
            .map(|g| g.backends.iter().map(|(b, t)| (b.as_str(), *t)).collect())
            .collect();
        assert_eq!(
            backends,
            [vec![("claude", 105), ("codex", 30)], vec![("gemini", 7)]]
        );
    }
}
