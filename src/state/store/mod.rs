//! Where state shared by several processes lives (DESIGN.md §14). Files in the state
//! directory by default — nothing to start. With `[store] kind = "redis"` the budget,
//! every shared JSON document (health, cooldowns and breakers, parked logins, rotation
//! turns, account health, alert transitions, relay clients) and the ledger and events
//! streams live on one Redis server, so relay replicas and one person's machines see the
//! same state. Each process still keeps its local JSONL, and falls back to its files while
//! the server is away: a launch with a notice; the relay only if `on_store_down = "local"`,
//! else it refuses calls (the budget is the gate, see [`crate::state::budget`]).
//!
//! This folder is the generic store, and knows no record kept in it: the connection and
//! its outage rule ([`server`]), JSON documents ([`document`]), their lock ([`lease`]) and
//! the streams ([`stream`]). What the budget keeps here (its counts, the epoch, the
//! relay's outbox) is the budget's own, in [`crate::state::budget`], built on these.
//!
//! The store is chosen once per process, after the configuration is read
//! ([`install`]): the records reach it through [`shared`] instead of being handed a
//! store through every call chain.

pub mod document;
pub mod lease;
pub mod server;
pub mod stream;

use std::sync::OnceLock;

pub use server::{Down, Role, Shared};

use crate::config::store::{OnStoreDown, RedisStore};

static SHARED: OnceLock<Shared> = OnceLock::new();

/// Uses the Redis store for the rest of this process. Connects lazily: nothing is sent
/// until a record needs the store. A second call is ignored (the first configuration
/// read wins).
pub fn install(store: &RedisStore, role: Role) -> anyhow::Result<()> {
    let on_down = match role {
        Role::Relay => store.on_store_down,
        Role::Local => OnStoreDown::Local,
    };
    let mut shared = Shared::new(store, on_down)?;
    shared.role = role;
    let _ = SHARED.set(shared);
    Ok(())
}

/// The Redis store, when one is configured for this process.
pub fn shared() -> Option<&'static Shared> {
    SHARED.get()
}

/// What `op` answered from the shared store; `None` when no store is configured or it is
/// away (said once per outage): the caller goes on with this machine's files.
pub fn answered<T>(op: impl FnOnce(&'static Shared) -> Result<T, Down>) -> Option<T> {
    let shared = shared()?;
    op(shared).map_err(|down| shared.tell_fallback(&down)).ok()
}
