//! What agent reads of opencode's files: the calls in its own database, for `--usage`
//! (`opencode_calls`). Its logins are per provider and none reports a window agent parks
//! by, so every other question about it answers "don't know".

use super::{Readers, serves_every_login};

/// What agent reads of opencode's files.
pub const READERS: Readers = Readers {
    cli: &crate::adapter::opencode::CLI,
    own_store: |_env| None,
    refused_login: serves_every_login,
    last_model: |_env| None,
    run_actions: super::no_run_actions,
    run_windows: None,
    run_session: Some(super::opencode_session::read),
    session_costs_a_run: true,
    session_in_output: None,
    limit_in_output: None,
    ask_windows: None,
    // Only where this machine has its database and the binary that reads it.
    calls: Some(|into| {
        let records = super::opencode_calls::find()?;
        Some(super::opencode_calls::read(&records, into))
    }),
};
