//! Antigravity (`agy`; research §4). Where it keeps its login and records is UNCONFIRMED
//! (research §4.1, §4.3): no variable is known to move it, an installed agy is taken as
//! logged in under one identity, and its windows come from its own `/usage`.

use std::path::PathBuf;

use super::{Account, Env};

pub const HOME_VARS: &[&str] = &[];
pub const CREDENTIAL_VARS: &[&str] = &[];
pub const MODEL_VAR: Option<&str> = None;

/// The one identity an agy login is known by.
pub const IDENTITY: &str = "default";

/// Where agy keeps its state is not confirmed: none is claimed.
pub fn home(_env: &Env) -> Option<PathBuf> {
    None
}

pub fn login_identity(_env: &Env, account: Option<Account>) -> Option<String> {
    account.is_none().then(|| IDENTITY.to_string())
}

pub fn records(_env: &Env) -> Vec<PathBuf> {
    Vec::new()
}

pub fn model_settings(_env: &Env) -> Option<PathBuf> {
    None
}
