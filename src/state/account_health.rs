//! Each account's own health (DESIGN.md §7), in `accounts.json`: auth-dead after a 401/403
//! (15 minutes, doubling to 6 hours; revived early only by a passing credential check with
//! its own credential), and the result of its last check. Rate limits are per target and
//! live in `health.json`; a broken secret is found at load; an exhausted monthly budget is
//! computed from the ledger.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error_class::ErrorClass;
use crate::state::file as state_file;
use crate::state::health::now_ms;
use crate::state::json_file::JsonFile;

const DEAD_FIRST: Duration = Duration::from_secs(15 * 60);
const DEAD_CAP: Duration = Duration::from_secs(6 * 60 * 60);
const CHECK_BACKOFF_FIRST: Duration = Duration::from_secs(60);
const CHECK_BACKOFF_CAP: Duration = Duration::from_secs(30 * 60);

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct AccountHealth {
    /// Skipped until then (unix ms) after an auth failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dead_until_ms: Option<u64>,
    #[serde(default)]
    pub auth_failures: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// `valid`, `invalid`, `disabled` or `unknown`, with when.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_check: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_check_time: Option<String>,
    /// A failed check is not repeated before this (1, 2, 4 … 30 minutes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_check_ms: Option<u64>,
    #[serde(default)]
    pub check_failures: u32,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct AccountsFile {
    #[serde(default)]
    accounts: BTreeMap<String, AccountHealth>,
}

/// `accounts.json`: rebuilt by the next probe or check if ever lost.
fn file(state_dir: &Path) -> JsonFile<AccountsFile> {
    JsonFile::new(state_dir, "accounts.json").pretty().shared()
}

fn read(state_dir: &Path) -> AccountsFile {
    file(state_dir).load()
}

fn update(state_dir: &Path, name: &str, change: impl FnOnce(&mut AccountHealth)) {
    let result = file(state_dir).update(|all| {
        let health = all.accounts.entry(name.to_string()).or_default();
        change(health);
        if let Some(reason) = &mut health.reason {
            *reason = state_file::capped(reason).into_owned();
        }
    });
    if let Err(err) = result {
        crate::term::debug(&format!("could not record account health: {err:#}"));
    }
}

pub fn get(state_dir: &Path, name: &str) -> AccountHealth {
    read(state_dir).accounts.remove(name).unwrap_or_default()
}

/// Why the account must be skipped now, if it must.
pub fn skip_reason(state_dir: &Path, name: &str, now: u64) -> Option<String> {
    let health = get(state_dir, name);
    match health.dead_until_ms {
        Some(until) if until > now => Some(format!(
            "account {name} is auth-dead for {}s more ({}); `agent --accounts test {name}` revives it if it passes",
            until.saturating_sub(now).div_ceil(1000),
            health.reason.as_deref().unwrap_or("401/403")
        )),
        _ => None,
    }
}

fn dead_for(failures: u32) -> Duration {
    (DEAD_FIRST * 2u32.pow(failures.saturating_sub(1).min(16))).min(DEAD_CAP)
}

/// A probe with this account's credential answered `class`.
pub fn after_probe(state_dir: &Path, name: &str, class: ErrorClass, reason: &str) {
    match class {
        ErrorClass::Auth => update(state_dir, name, |h| {
            h.auth_failures += 1;
            h.dead_until_ms = Some(
                now_ms() + u64::try_from(dead_for(h.auth_failures).as_millis()).unwrap_or(u64::MAX),
            );
            h.reason = Some(crate::redact::redact(reason));
        }),
        ErrorClass::Ok if get(state_dir, name).auth_failures > 0 => update(state_dir, name, |h| {
            h.auth_failures = 0;
            h.dead_until_ms = None;
            h.reason = None;
        }),
        _ => {}
    }
}

/// A credential check's result: valid revives the account at once; 401/403 make it
/// auth-dead and back the next check off; unknown (429, network) changes nothing.
pub fn after_check(state_dir: &Path, name: &str, result: &CheckResult) {
    let time = jiff::Timestamp::now().to_string();
    let mut revived = false;
    update(state_dir, name, |h| {
        h.last_check = Some(result.word().to_string());
        h.last_check_time = Some(time);
        match result {
            CheckResult::Valid => {
                revived = h.dead_until_ms.is_some();
                h.auth_failures = 0;
                h.dead_until_ms = None;
                h.reason = None;
                h.check_failures = 0;
                h.next_check_ms = None;
            }
            CheckResult::Invalid(_) | CheckResult::Disabled(_) => {
                h.auth_failures += 1;
                h.check_failures += 1;
                let now = now_ms();
                h.dead_until_ms = Some(
                    now + u64::try_from(dead_for(h.auth_failures).as_millis()).unwrap_or(u64::MAX),
                );
                let backoff = (CHECK_BACKOFF_FIRST
                    * 2u32.pow(h.check_failures.saturating_sub(1).min(16)))
                .min(CHECK_BACKOFF_CAP);
                h.next_check_ms =
                    Some(now + u64::try_from(backoff.as_millis()).unwrap_or(u64::MAX));
                h.reason = Some(result.describe());
            }
            CheckResult::Unknown(_) => {}
        }
    });
    if revived {
        // Its targets' auth cooldowns go too: the account's own check proved the key.
        crate::state::health::Store::new(state_dir).forget_account(name);
    }
}

/// This calendar month's spend of each account named: the ledger's calls made with its
/// credential (probes, relayed calls) priced by `[pricing]`. Calls of a model without a
/// price add nothing — the cap is enforced on what the ledger knows and can price (see
/// docs/accounts.md). One pass over the ledger, however many accounts: it grows with every call.
pub fn monthly_spends(
    state_dir: &Path,
    pricing: &crate::config::pricing::Pricing,
    names: &[&str],
) -> BTreeMap<String, f64> {
    let mut spent: BTreeMap<String, f64> = names
        .iter()
        .map(|name| ((*name).to_string(), 0.0))
        .collect();
    if names.is_empty() {
        return spent;
    }
    let month = jiff::ZonedDateTime::now().date().first_of_month();
    for record in crate::state::ledger::Ledger::new(state_dir).read_all() {
        let Some(total) = record
            .account
            .as_deref()
            .and_then(|name| spent.get_mut(name))
        else {
            continue;
        };
        let this_month = crate::state::budget::local_day(&record.time)
            .and_then(|day| day.parse::<jiff::civil::Date>().ok())
            .is_some_and(|day| day.first_of_month() == month);
        if let Some(model) = record.model.as_deref().filter(|_| this_month)
            && let Some(price) = pricing.model(model)
        {
            *total += price.cost(&record.tokens).known_usd;
        }
    }
    spent
}

/// Dollars as a person reads them: cents, or four decimals below a dollar.
fn usd(amount: f64) -> String {
    if amount >= 1.0 {
        format!("{amount:.2}")
    } else {
        format!("{amount:.4}")
    }
}

/// Why a capped account is out for the rest of the month, if it is.
pub fn budget_exhausted(
    state_dir: &Path,
    pricing: &crate::config::pricing::Pricing,
    account: &crate::config::accounts::AccountDef,
) -> Option<String> {
    if account.monthly_budget_usd <= 0.0 {
        return None;
    }
    let spent = monthly_spends(state_dir, pricing, &[&account.name])[&account.name];
    (spent >= account.monthly_budget_usd).then(|| {
        format!(
            "account {} spent ${} of its ${} monthly budget: skipped until next month",
            account.name,
            usd(spent),
            usd(account.monthly_budget_usd)
        )
    })
}

/// What a zero-cost credential check found (`accounts::check`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckResult {
    Valid,
    /// 401, with the answer's snippet.
    Invalid(String),
    /// 403: the organisation is disabled.
    Disabled(String),
    /// 429, a 5xx or no answer: nothing is known, nothing changes.
    Unknown(String),
}

impl CheckResult {
    pub fn word(&self) -> &'static str {
        match self {
            CheckResult::Valid => "valid",
            CheckResult::Invalid(_) => "invalid",
            CheckResult::Disabled(_) => "disabled",
            CheckResult::Unknown(_) => "unknown",
        }
    }

    pub fn describe(&self) -> String {
        match self {
            CheckResult::Valid => "valid".into(),
            CheckResult::Invalid(why) => format!("invalid (401): {why}"),
            CheckResult::Disabled(why) => format!("organisation disabled (403): {why}"),
            CheckResult::Unknown(why) => format!("unreachable or unknown: {why}"),
        }
    }
}
