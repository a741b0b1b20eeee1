//! The order in which a backend's accounts are tried (DESIGN.md §7): `priority`,
//! `least-cost` (subscription before pay-per-token, then the most monthly budget left),
//! `round-robin` (a turn shared by every agent process) and `failover` (stay on the account
//! that last worked until it fails).

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{AccountDef, Kind};
use crate::config::Backend;
use crate::state::json_file::JsonFile;

pub use crate::config::accounts::Rotation;

/// `rotation.json`: the shared turn of round-robin backends, the current account of
/// failover ones.
#[derive(Debug, Default, Serialize, Deserialize)]
struct RotationState {
    #[serde(default)]
    turns: BTreeMap<String, u64>,
    #[serde(default)]
    current: BTreeMap<String, String>,
}

/// Lost, it starts again at the first turn: worth no `fsync`.
fn file(state_dir: &Path) -> JsonFile<RotationState> {
    JsonFile::new(state_dir, "rotation.json").shared()
}

fn read(state_dir: &Path) -> RotationState {
    file(state_dir).load()
}

/// Changes `rotation.json` under its lock.
fn update<T>(state_dir: &Path, change: impl FnOnce(&mut RotationState) -> T) -> Option<T> {
    match file(state_dir).update(change) {
        Ok(result) => Some(result),
        Err(err) => {
            crate::term::debug(&format!("could not record the rotation: {err:#}"));
            None
        }
    }
}

/// The accounts of `backend` in the order they are tried. `advance`: this is a launch, and
/// a round-robin backend moves on to its next turn (under the lock, so concurrent launches
/// each get their own turn).
pub fn order(
    backend: &Backend,
    accounts: &[&AccountDef],
    pricing: &crate::config::pricing::Pricing,
    state_dir: &Path,
    advance: bool,
) -> Vec<String> {
    let mut sorted: Vec<&AccountDef> = accounts.to_vec();
    sorted.sort_by(|a, b| {
        a.priority
            .cmp(&b.priority)
            .then_with(|| a.name.cmp(&b.name))
    });
    let mut names: Vec<String> = sorted.iter().map(|a| a.name.clone()).collect();
    match backend.rotation {
        Rotation::Priority => {}
        Rotation::LeastCost => {
            // Subscriptions first (already paid for), then the most monthly budget left;
            // an account without a cap has the most.
            let capped: Vec<&str> = sorted
                .iter()
                .filter(|a| a.monthly_budget_usd > 0.0)
                .map(|a| a.name.as_str())
                .collect();
            let spent = crate::state::account_health::monthly_spends(state_dir, pricing, &capped);
            let remaining = |a: &AccountDef| match spent.get(&a.name) {
                Some(spent) => a.monthly_budget_usd - spent,
                None => f64::INFINITY,
            };
            sorted.sort_by(|a, b| {
                let kind = |k: Kind| u8::from(k != Kind::Oauth);
                kind(a.kind)
                    .cmp(&kind(b.kind))
                    .then_with(|| remaining(b).total_cmp(&remaining(a)))
                    .then_with(|| a.priority.cmp(&b.priority))
            });
            names = sorted.iter().map(|a| a.name.clone()).collect();
        }
        Rotation::RoundRobin => {
            let turn = if advance {
                update(state_dir, |state| {
                    let turn = state.turns.entry(backend.name.clone()).or_insert(0);
                    let now = *turn;
                    *turn += 1;
                    now
                })
                .unwrap_or(0)
            } else {
                read(state_dir)
                    .turns
                    .get(&backend.name)
                    .copied()
                    .unwrap_or(0)
            };
            let len = names.len() as u64;
            if len > 0 {
                names.rotate_left(usize::try_from(turn % len).unwrap_or(0));
            }
        }
        Rotation::Failover => {
            if let Some(current) = read(state_dir).current.get(&backend.name)
                && let Some(at) = names.iter().position(|n| n == current)
            {
                let name = names.remove(at);
                names.insert(0, name);
            }
        }
    }
    names
}

/// A launch ran on `account`: a failover backend stays on it from now on.
pub fn ran_on(backend: &Backend, account: &str, state_dir: &Path) {
    if backend.rotation != Rotation::Failover {
        return;
    }
    let current = read(state_dir).current.get(&backend.name).cloned();
    if current.as_deref() != Some(account) {
        update(state_dir, |state| {
            state
                .current
                .insert(backend.name.clone(), account.to_string());
        });
    }
}
