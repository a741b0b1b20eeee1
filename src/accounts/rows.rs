//! The rung table with a row per account: a rung whose backend draws from a pool becomes one
//! row per usable account, in the backend's rotation order, so every part of agent that walks
//! the table walks the accounts too. Its own file because it reads [`super::rotation`]'s
//! order, and the rotation reads the pool's functions in [`super`]: beside them it would
//! close a circle.

use std::path::Path;

use super::{AccountDef, rotation};
use crate::config::{Config, RungDef};

/// Expands the rung table: a rung whose backend has accounts becomes one row per usable
/// account, in the backend's rotation order. `advance` moves round-robin on by one (a
/// launch); reports leave it where it is.
pub fn expand(config: &mut Config, state_dir: &Path, advance: bool) {
    if config.accounts.is_empty() {
        return;
    }
    let mut orders: std::collections::BTreeMap<String, (Vec<String>, Vec<String>)> =
        std::collections::BTreeMap::new();
    for backend in config.backends.values() {
        let accounts: Vec<&AccountDef> = config
            .accounts
            .iter()
            .filter(|a| a.backend == backend.name)
            .collect();
        if accounts.is_empty() {
            continue;
        }
        let in_rungs = config.rungs.iter().any(|r| r.backend == backend.name);
        let order = rotation::order(
            backend,
            &accounts,
            &config.pricing,
            state_dir,
            advance && in_rungs,
        );
        let logins: Vec<String> = order
            .iter()
            .filter(|name| accounts.iter().any(|a| &a.name == *name && a.is_login()))
            .cloned()
            .collect();
        orders.insert(backend.name.clone(), (order, logins));
    }
    let mut rows = Vec::with_capacity(config.rungs.len());
    for def in config.rungs.drain(..) {
        match orders.get(&def.backend) {
            Some((order, logins)) => {
                // The logins of a pool share one row, where the first of them stands in
                // the order: which of them runs is the rung's own choice (account before
                // model before vendor). Keys and tokens keep a row each.
                let mut logins_placed = false;
                for name in order {
                    let is_login = logins.contains(name);
                    if is_login && logins_placed {
                        continue;
                    }
                    logins_placed |= is_login;
                    rows.push(RungDef {
                        account: Some(name.clone()),
                        logins: if is_login { logins.clone() } else { Vec::new() },
                        ..def.clone()
                    });
                }
            }
            None => rows.push(def),
        }
    }
    config.rungs = rows;
}
