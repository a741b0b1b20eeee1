//! The door every probe goes through: reserve a call against the daily budget (refused:
//! the call is not sent), make it, then write one ledger line and add its tokens to the day
//! it reserved. Failures and retries are calls too. The relay keeps the same rule through
//! its own batched door (`relay::accounting`), which reserves calls in blocks.

use std::path::Path;
use std::time::Duration;

use crate::error_class::ErrorClass;
use crate::state::budget::{Budget, Limits, Refusal, Reservation};
use crate::state::ledger::{CallRecord, Ledger, Tokens};

#[derive(Debug, Clone)]
pub struct Meter {
    pub budget: Budget,
    pub ledger: Ledger,
}

/// Who made a call and where it went: the ledger's "who and where" columns.
#[derive(Debug, Clone, Default)]
pub struct CallInfo {
    pub rung: Option<usize>,
    pub backend: Option<String>,
    pub model: Option<String>,
    pub account: Option<String>,
    pub upstream: String,
    pub role: &'static str,
}

/// What one call cost and returned.
#[derive(Debug, Clone, Default)]
pub struct Spent {
    pub status: Option<u16>,
    pub class: Option<ErrorClass>,
    pub tokens: Tokens,
    pub estimated: bool,
    pub ttfb: Option<Duration>,
    pub duration: Duration,
    pub request_id: Option<String>,
    /// The CLI's own session id, when the call was a CLI run agent made (a self-check):
    /// `--usage` ties it to the CLI's record of the same run, to count it once.
    pub session: Option<String>,
}

impl Meter {
    pub fn new(state_dir: &Path, limits: Limits) -> Meter {
        Meter {
            budget: Budget::new(state_dir, limits),
            ledger: Ledger::new(state_dir),
        }
    }

    pub fn reserve(&self) -> Result<Reservation, Refusal> {
        self.budget.reserve()
    }

    /// Gives back a reservation whose call was never made (the CLI could not be started):
    /// nothing ran, so nothing is counted and no ledger line is written.
    pub fn release(&self, reservation: &Reservation) {
        if let Err(err) = self.budget.release(&reservation.day, 1) {
            crate::term::debug(&format!("could not give back a reserved call: {err:#}"));
        }
        self.budget.written(reservation);
    }

    /// Writes the ledger line and the tokens. A failure here is reported, never fatal: the
    /// call has already been counted by its reservation.
    pub fn record(&self, reservation: &Reservation, info: &CallInfo, spent: &Spent) {
        let record = CallRecord {
            time: jiff::Timestamp::now().to_string(),
            run: crate::state::ledger::run_id().to_string(),
            rung: info.rung,
            backend: info.backend.clone(),
            model: info.model.clone(),
            account: info.account.clone(),
            upstream: crate::redact::redact(&info.upstream),
            role: info.role.to_string(),
            status: spent.status,
            error_kind: spent.class.map_or("ok", ErrorClass::as_str).to_string(),
            tokens: spent.tokens,
            estimated: spent.estimated,
            ttfb_s: spent.ttfb.map(|d| round_ms(d.as_secs_f64())),
            duration_s: round_ms(spent.duration.as_secs_f64()),
            request_id: spent.request_id.clone(),
            session: spent.session.clone(),
            day: reservation.day.clone(),
            reservation: (!reservation.id.is_empty()).then(|| reservation.id.clone()),
            ..CallRecord::default()
        };
        match self.ledger.append(&record) {
            Ok(()) => self.budget.written(reservation),
            Err(err) => crate::term::warn(&format!("could not write the ledger: {err:#}")),
        }
        if let Err(err) = self.budget.record(reservation, &spent.tokens) {
            crate::term::warn(&format!("could not record tokens in the budget: {err:#}"));
        }
    }
}

fn round_ms(seconds: f64) -> f64 {
    (seconds * 1000.0).round() / 1000.0
}

/// A rough token count for text the provider did not count for us: about four bytes a
/// token, over everything sent (tools and parameters included, not only message text).
pub fn estimate_tokens(bytes: usize) -> u64 {
    u64::try_from(bytes.div_ceil(4)).unwrap_or(u64::MAX)
}
