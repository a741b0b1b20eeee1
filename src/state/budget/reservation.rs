//! What asking the budget for a call answers: a [`Reservation`] the call counts on, or a
//! [`Refusal`] that says why it may not be sent; and a named client's own caps
//! ([`ClientCaps`]), which a request for one of its calls carries.

use std::path::PathBuf;

use crate::config::limits::Limits;
use crate::state::budget::day::Day;

/// A named relay client and its own daily caps (0 = no cap of its own).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientCaps {
    pub name: String,
    pub limits: Limits,
}

/// Why a call may not be sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Today's cap is reached.
    Exhausted { used: Day, limits: Limits },
    /// A named client's own daily cap is reached (the team's may not be).
    ClientExhausted {
        name: String,
        used: Day,
        limits: Limits,
    },
    /// `budget.json` was unreadable: it was kept aside and rebuilt; this one call is refused.
    Corrupt { aside: PathBuf },
    /// The reservation could not be saved.
    Unsaved(String),
    /// The shared store is away and this process may not fall back to its own files
    /// (the relay, unless `on_store_down = "local"`).
    StoreUnavailable(String),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::Exhausted { used, limits } => {
                write!(f, "budget exhausted: {}", spent_words(*used, *limits))
            }
            Refusal::ClientExhausted { name, used, limits } => write!(
                f,
                "{name}'s daily budget exhausted: {}",
                spent_words(*used, *limits)
            ),
            Refusal::Corrupt { aside } => write!(
                f,
                "budget.json was unreadable: kept aside as {}, counts rebuilt from the ledger; this call was not sent",
                aside.display()
            ),
            Refusal::StoreUnavailable(why) => {
                write!(f, "{why}; the call was not sent")
            }
            Refusal::Unsaved(why) => write!(
                f,
                "the budget reservation could not be saved ({why}); the call was not sent"
            ),
        }
    }
}

/// "3 of 3 calls today", or the tokens when those are what ran out.
fn spent_words(used: Day, limits: Limits) -> String {
    if limits.calls > 0 && used.calls >= limits.calls {
        format!("{} of {} calls today", used.calls, limits.calls)
    } else {
        format!("{} of {} tokens today", used.tokens, limits.tokens)
    }
}

/// A saved reservation: the day whose budget the call counts on, the named client whose
/// own counts it also adds to, and the shared store's epoch it was counted in (0: in this
/// machine's `budget.json`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Reservation {
    pub day: String,
    pub client: Option<String>,
    pub epoch: u64,
    /// On the shared store: its id in this home's record of open reservations, which the
    /// call's ledger line names (empty in `budget.json`).
    pub id: String,
}

impl Reservation {
    /// A reservation on `day` for no named client, in `budget.json`.
    pub fn on(day: &str) -> Reservation {
        Reservation {
            day: day.to_string(),
            client: None,
            epoch: 0,
            id: String::new(),
        }
    }
}
