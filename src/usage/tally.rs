//! Adding calls up per group (`--by`). Each call is priced as it is added — at its model's
//! price, per million tokens — except the calls of a plan's accounts, whose unit price
//! depends on the whole month's tokens: those are summed per plan and month and priced at
//! the end.

use std::collections::{BTreeSet, HashMap};

use super::clock::Day;
use crate::config::pricing::{ModelPrice, Pricing};
use crate::state::ledger::Tokens;

pub use crate::cli::usage::By;

impl By {
    pub fn as_str(self) -> &'static str {
        match self {
            By::Day => "day",
            By::Model => "model",
            By::Account => "account",
            By::Run => "run",
            By::Backend => "backend",
            By::Client => "client",
        }
    }
}

/// Calls and their tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub calls: u64,
    /// Calls that failed (`error_kind` other than `ok`): calls all the same.
    pub errors: u64,
    /// Calls whose tokens agent estimated.
    pub estimated: u64,
    pub tokens: Tokens,
}

impl Counts {
    pub fn add_call(&mut self, tokens: &Tokens, estimated: bool, error: bool) {
        self.calls += 1;
        self.errors += u64::from(error);
        self.estimated += u64::from(estimated);
        self.tokens += tokens;
    }

    pub fn add(&mut self, other: &Counts) {
        self.calls += other.calls;
        self.errors += other.errors;
        self.estimated += other.estimated;
        self.tokens += &other.tokens;
    }
}

/// One call, as every source presents it to the tally. Empty strings are unknown.
#[derive(Debug, Clone, Copy)]
pub struct View<'a> {
    pub day: Day,
    pub run: &'a str,
    pub backend: &'a str,
    pub model: &'a str,
    pub account: &'a str,
    /// The relay's named client that made the call.
    pub client: &'a str,
    pub tokens: &'a Tokens,
    pub estimated: bool,
    pub error: bool,
    /// The subscription plan the call ran on (a CLI on its own login): paid by the plan,
    /// so it has no per-call price and asks for none.
    pub login: Option<&'a str>,
}

/// What to keep: the grouping and the window (inclusive local days).
#[derive(Debug, Clone, Copy)]
pub struct Rules<'a> {
    pub by: By,
    pub since: Option<Day>,
    pub until: Option<Day>,
    pub pricing: &'a Pricing,
}

impl Rules<'_> {
    pub fn in_window(&self, day: Day) -> bool {
        self.since.is_none_or(|since| day >= since) && self.until.is_none_or(|until| day <= until)
    }
}

/// The separator inside a composite key (never in a model id, plan, run or month).
pub const SEP: char = '\u{1f}';

/// One group's sums.
#[derive(Debug, Clone, Default)]
pub struct Sums {
    pub counts: Counts,
    /// The cost of the calls priced per model, USD.
    pub known_usd: f64,
    /// Some tokens had no price.
    pub incomplete: bool,
    /// The models whose tokens had no price (`""`: calls without a model).
    pub unpriced: BTreeSet<Box<str>>,
    /// Tokens of plan accounts per plan and month (`plan SEP YYYY-MM`), priced at the end.
    pub plan_tokens: Vec<(Box<str>, u64)>,
    /// Calls on a subscription login: no per-call cost.
    pub login_calls: u64,
    /// The plans those calls ran on.
    pub login_plans: BTreeSet<Box<str>>,
}

impl Sums {
    fn merge(&mut self, other: Sums) {
        self.counts.add(&other.counts);
        self.known_usd += other.known_usd;
        self.incomplete |= other.incomplete;
        self.unpriced.extend(other.unpriced);
        self.login_calls += other.login_calls;
        self.login_plans.extend(other.login_plans);
        for (key, tokens) in other.plan_tokens {
            add_plan_tokens(&mut self.plan_tokens, &key, tokens);
        }
    }

    fn unpriced(&mut self, model: &str) {
        self.incomplete = true;
        if !self.unpriced.contains(model) {
            self.unpriced.insert(model.into());
        }
    }
}

fn add_plan_tokens(list: &mut Vec<(Box<str>, u64)>, key: &str, tokens: u64) {
    match list.iter_mut().find(|(k, _)| &**k == key) {
        Some((_, sum)) => *sum = sum.saturating_add(tokens),
        None => list.push((key.into(), tokens)),
    }
}

/// Sums per group, and what plans need to be priced.
#[derive(Debug, Clone, Default)]
pub struct Tally {
    pub groups: HashMap<Box<str>, Sums>,
    /// Tokens per `plan SEP month`, over every call of the plan's accounts, whatever the
    /// window: a plan's unit price is its fee ÷ the whole month's tokens.
    pub plan_months: HashMap<Box<str>, u64>,
    /// With `--by day`: tokens per `day SEP backend`, for the day's stacked bar.
    pub day_backends: HashMap<Box<str>, u64>,
    /// Model id → its price (looked up once per model).
    prices: HashMap<Box<str>, Option<ModelPrice>>,
    key: String,
}

impl Tally {
    pub fn add(&mut self, rules: &Rules, call: &View) {
        let total = call.tokens.total();
        let plan = (!call.account.is_empty())
            .then(|| rules.pricing.plan_of(call.account))
            .flatten();
        if let Some(plan) = plan {
            self.key.clear();
            self.key.push_str(plan);
            self.key.push(SEP);
            self.key.push_str(call.day.month());
            match self.plan_months.get_mut(self.key.as_str()) {
                Some(sum) => *sum += total,
                None => {
                    self.plan_months.insert(self.key.as_str().into(), total);
                }
            }
        }
        if !rules.in_window(call.day) {
            return;
        }
        let login = call.login.filter(|_| plan.is_none());
        let price = if plan.is_none() && login.is_none() && total > 0 {
            match self.prices.get(call.model) {
                Some(price) => *price,
                None => {
                    let price = rules.pricing.model(call.model).copied();
                    self.prices.insert(call.model.into(), price);
                    price
                }
            }
        } else {
            None
        };
        let group = match rules.by {
            By::Day => call.day.as_str(),
            By::Model => call.model,
            By::Account => call.account,
            By::Run => call.run,
            By::Backend => call.backend,
            By::Client => call.client,
        };
        if !self.groups.contains_key(group) {
            self.groups.insert(group.into(), Sums::default());
        }
        let Some(sums) = self.groups.get_mut(group) else {
            return;
        };
        sums.counts
            .add_call(call.tokens, call.estimated, call.error);
        if plan.is_some() {
            // `self.key` still holds `plan SEP month`.
            add_plan_tokens(&mut sums.plan_tokens, &self.key, total);
        } else if let Some(login) = login {
            sums.login_calls += 1;
            if !sums.login_plans.contains(login) {
                sums.login_plans.insert(login.into());
            }
        } else if total > 0 {
            match price {
                Some(price) => {
                    let priced = price.cost(call.tokens);
                    sums.known_usd += priced.known_usd;
                    if !priced.complete {
                        sums.unpriced(call.model);
                    }
                }
                None => sums.unpriced(call.model),
            }
        }
        if rules.by == By::Day {
            self.key.clear();
            self.key.push_str(call.day.as_str());
            self.key.push(SEP);
            self.key.push_str(call.backend);
            match self.day_backends.get_mut(self.key.as_str()) {
                Some(sum) => *sum = sum.saturating_add(total),
                None => {
                    self.day_backends.insert(self.key.as_str().into(), total);
                }
            }
        }
    }

    pub fn merge(&mut self, other: Tally) {
        for (key, sums) in other.groups {
            self.groups.entry(key).or_default().merge(sums);
        }
        for (key, tokens) in other.plan_months {
            let sum = self.plan_months.entry(key).or_default();
            *sum = sum.saturating_add(tokens);
        }
        for (key, tokens) in other.day_backends {
            let sum = self.day_backends.entry(key).or_default();
            *sum = sum.saturating_add(tokens);
        }
    }
}

/// Sums per `run SEP model`, for `--reconcile`.
#[derive(Debug, Default)]
pub struct PerRun {
    pub cells: HashMap<Box<str>, Counts>,
    key: String,
}

impl PerRun {
    pub fn add(&mut self, run: &str, model: &str, tokens: &Tokens, error: bool) {
        self.key.clear();
        self.key.push_str(run);
        self.key.push(SEP);
        self.key.push_str(model);
        if let Some(counts) = self.cells.get_mut(self.key.as_str()) {
            counts.add_call(tokens, false, error);
            return;
        }
        self.cells
            .entry(self.key.as_str().into())
            .or_default()
            .add_call(tokens, false, error);
    }

    pub fn merge(&mut self, other: PerRun) {
        for (key, counts) in other.cells {
            self.cells.entry(key).or_default().add(&counts);
        }
    }
}
