//! Where the budget's counts live on the shared store, and how long they are kept: the
//! day's counts, each named client's on that day, and the caps set with `agent --budget
//! set`. The reservation script, the epoch's rejoin and the relay's outbox all write them.

use crate::state::store::Shared;

/// Counts are kept as long as `budget.json` keeps its days.
pub(crate) const KEEP_SECONDS: u64 = 40 * 24 * 3600;

/// The team's counts on `day`.
pub(crate) fn day_key(shared: &Shared, day: &str) -> String {
    shared.key(&format!("budget:{day}"))
}

/// A named client's own counts on `day`.
pub(crate) fn client_key(shared: &Shared, day: &str, name: &str) -> String {
    shared.key(&format!("budget:{day}:client:{name}"))
}

/// The caps set with `agent --budget set`, which win over the configured ones.
pub(crate) fn limits_key(shared: &Shared) -> String {
    shared.key("budget:limits")
}
