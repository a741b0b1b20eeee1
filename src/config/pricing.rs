//! `[pricing]`: what a token costs. Per-model prices in USD per million tokens, and flat
//! monthly plans whose unit price is their fee ÷ that month's tokens of their accounts.
//! A price that is not written down is unknown — never guessed.

use std::collections::BTreeMap;

use serde::Deserialize;
use toml::Spanned;

use crate::tokens::Tokens;

// ---- the file's shape -------------------------------------------------------------------

/// `[pricing]` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PricingFile {
    #[serde(default)]
    models: BTreeMap<String, ModelPriceFile>,
    #[serde(default)]
    plans: BTreeMap<String, Spanned<PlanFile>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ModelPriceFile {
    input: Spanned<f64>,
    output: Spanned<f64>,
    cache_read: Option<Spanned<f64>>,
    cache_write: Option<Spanned<f64>>,
    reasoning: Option<Spanned<f64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PlanFile {
    monthly_usd: Spanned<f64>,
    accounts: Vec<String>,
}

/// A mistake in `[pricing]`: where (byte offset in the file), which key, and what.
#[derive(Debug)]
pub struct Invalid {
    pub offset: usize,
    pub key: String,
    pub message: String,
}

impl PricingFile {
    /// Checks the prices (finite, not negative) and the plans (accounts named, each in one
    /// plan at most).
    pub fn validate(self) -> Result<Pricing, Invalid> {
        let price = |value: Spanned<f64>, key: String| -> Result<f64, Invalid> {
            let number = *value.get_ref();
            if number.is_finite() && number >= 0.0 {
                Ok(number)
            } else {
                Err(Invalid {
                    offset: value.span().start,
                    key,
                    message: "must be a number of USD, 0 or more".into(),
                })
            }
        };
        let optional = |value: Option<Spanned<f64>>, key: String| -> Result<Option<f64>, Invalid> {
            value.map(|v| price(v, key)).transpose()
        };
        let mut pricing = Pricing::default();
        for (id, file) in self.models {
            let key = format!("pricing.models.\"{id}\"");
            let model = ModelPrice {
                input: price(file.input, format!("{key}.input"))?,
                output: price(file.output, format!("{key}.output"))?,
                cache_read: optional(file.cache_read, format!("{key}.cache_read"))?,
                cache_write: optional(file.cache_write, format!("{key}.cache_write"))?,
                reasoning: optional(file.reasoning, format!("{key}.reasoning"))?,
            };
            pricing.models.insert(id, model);
        }
        for (name, spanned) in self.plans {
            let start = spanned.span().start;
            let file = spanned.into_inner();
            let key = format!("pricing.plans.{name}");
            let monthly_usd = price(file.monthly_usd, format!("{key}.monthly_usd"))?;
            if file.accounts.is_empty() {
                return Err(Invalid {
                    offset: start,
                    key: format!("{key}.accounts"),
                    message: "name the accounts whose tokens the fee pays for".into(),
                });
            }
            for account in &file.accounts {
                if let Some(other) = pricing.plan_of(account) {
                    return Err(Invalid {
                        offset: start,
                        key: format!("{key}.accounts"),
                        message: format!("account \"{account}\" is already in plan \"{other}\""),
                    });
                }
                pricing.accounts.insert(account.clone(), name.clone());
            }
            pricing.plans.insert(
                name,
                Plan {
                    monthly_usd,
                    accounts: file.accounts,
                },
            );
        }
        Ok(pricing)
    }
}

// ---- prices -----------------------------------------------------------------------------

/// The prices in force.
#[derive(Debug, Clone, Default)]
pub struct Pricing {
    models: BTreeMap<String, ModelPrice>,
    pub plans: BTreeMap<String, Plan>,
    /// Account → its plan.
    accounts: BTreeMap<String, String>,
}

/// USD per million tokens. A missing cache price is unknown; reasoning defaults to output
/// (every provider bills reasoning as output).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModelPrice {
    pub input: f64,
    pub output: f64,
    pub cache_read: Option<f64>,
    pub cache_write: Option<f64>,
    pub reasoning: Option<f64>,
}

/// A flat monthly fee for the tokens of some accounts.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub monthly_usd: f64,
    pub accounts: Vec<String>,
}

impl Pricing {
    pub fn is_empty(&self) -> bool {
        self.models.is_empty() && self.plans.is_empty()
    }

    /// The price of a model id: an exact entry, else the longest `prefix*` entry.
    pub fn model(&self, id: &str) -> Option<&ModelPrice> {
        if let Some(price) = self.models.get(id) {
            return Some(price);
        }
        self.models
            .iter()
            .filter_map(|(key, price)| {
                let prefix = key.strip_suffix('*')?;
                id.starts_with(prefix).then_some((prefix.len(), price))
            })
            .max_by_key(|(len, _)| *len)
            .map(|(_, price)| price)
    }

    /// The plan an account's tokens are paid by, if any.
    pub fn plan_of(&self, account: &str) -> Option<&str> {
        self.accounts.get(account).map(String::as_str)
    }
}

/// What some tokens cost: the part whose price is known, and whether any part is not.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Priced {
    pub known_usd: f64,
    pub complete: bool,
}

impl ModelPrice {
    pub fn cost(&self, tokens: &Tokens) -> Priced {
        let mut priced = Priced {
            known_usd: 0.0,
            complete: true,
        };
        for (count, price) in [
            (tokens.input, Some(self.input)),
            (tokens.output, Some(self.output)),
            (
                tokens.reasoning,
                Some(self.reasoning.unwrap_or(self.output)),
            ),
            (tokens.cache_read, self.cache_read),
            (tokens.cache_write, self.cache_write),
        ] {
            if count == 0 {
                continue;
            }
            match price {
                #[allow(clippy::cast_precision_loss)]
                Some(price) => priced.known_usd += count as f64 * price / 1_000_000.0,
                None => priced.complete = false,
            }
        }
        priced
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pricing(text: &str) -> Result<Pricing, Invalid> {
        #[derive(Deserialize)]
        struct Wrap {
            pricing: PricingFile,
        }
        toml::from_str::<Wrap>(text).unwrap().pricing.validate()
    }

    #[test]
    fn a_model_is_priced_per_million_tokens_and_reasoning_as_output() {
        let p = pricing(
            "[pricing.models.\"claude-opus-5\"]\ninput = 15\noutput = 75\ncache_read = 1.5\ncache_write = 18.75\n",
        )
        .unwrap();
        let cost = p.model("claude-opus-5").unwrap().cost(&Tokens {
            input: 1_000_000,
            output: 100_000,
            reasoning: 100_000,
            cache_read: 2_000_000,
            cache_write: 0,
        });
        assert!(cost.complete);
        assert!(
            (cost.known_usd - (15.0 + 7.5 + 7.5 + 3.0)).abs() < 1e-9,
            "{cost:?}"
        );
    }

    #[test]
    fn an_unwritten_cache_price_is_unknown_only_when_such_tokens_exist() {
        let p = pricing("[pricing.models.m]\ninput = 1\noutput = 2\n").unwrap();
        let price = p.model("m").unwrap();
        assert!(
            price
                .cost(&Tokens {
                    input: 5,
                    ..Tokens::default()
                })
                .complete
        );
        let partial = price.cost(&Tokens {
            input: 1_000_000,
            cache_read: 10,
            ..Tokens::default()
        });
        assert!(!partial.complete);
        assert!((partial.known_usd - 1.0).abs() < 1e-9);
    }

    #[test]
    fn a_star_entry_prices_a_family_and_the_exact_id_wins() {
        let p = pricing(
            "[pricing.models.\"claude-*\"]\ninput = 1\noutput = 1\n[pricing.models.\"claude-opus-*\"]\ninput = 2\noutput = 2\n[pricing.models.\"claude-opus-5\"]\ninput = 3\noutput = 3\n",
        )
        .unwrap();
        assert!((p.model("claude-haiku-4").unwrap().input - 1.0).abs() < 1e-9);
        assert!((p.model("claude-opus-4-8").unwrap().input - 2.0).abs() < 1e-9);
        assert!((p.model("claude-opus-5").unwrap().input - 3.0).abs() < 1e-9);
        assert!(p.model("gpt-5").is_none());
    }

    #[test]
    fn mistakes_name_their_key() {
        let err = pricing("[pricing.models.m]\ninput = -1\noutput = 2\n").unwrap_err();
        assert_eq!(err.key, "pricing.models.\"m\".input");
        let err = pricing(
            "[pricing.plans.a]\nmonthly_usd = 20\naccounts = [\"x\"]\n[pricing.plans.b]\nmonthly_usd = 20\naccounts = [\"x\"]\n",
        )
        .unwrap_err();
        assert_eq!(err.key, "pricing.plans.b.accounts");
        assert!(
            err.message.contains("already in plan \"a\""),
            "{}",
            err.message
        );
    }
}
