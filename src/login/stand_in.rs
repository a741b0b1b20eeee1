//! What agent reads of the stand-in sixth CLI's files (`adapter::stand_in`, test builds
//! only): a login in its store, always, and the calls its records hold — one, always, so a
//! test sees that call counted under the stand-in and under no other CLI.

use super::calls::{Call, SourceStats};
use super::{Login, OwnStore, Readers, serves_every_login};
use crate::state::ledger::Tokens;

/// The model of the one call its records hold.
pub const MODEL: &str = "stand-in-model-1";

/// What agent reads of the stand-in's files.
pub const READERS: Readers = Readers {
    cli: &crate::adapter::stand_in::CLI,
    own_store: |_env| {
        Some(OwnStore::Login(Login {
            plan: None,
            tier: None,
            expires_at: None,
            token_present: true,
        }))
    },
    refused_login: serves_every_login,
    last_model: |_env| Some(MODEL.to_string()),
    run_actions: super::no_run_actions,
    run_windows: None,
    run_session: None,
    session_costs_a_run: false,
    session_in_output: None,
    limit_in_output: None,
    ask_windows: None,
    calls: Some(|into| {
        let call = Call {
            cli: crate::adapter::stand_in::CLI.name,
            time: "2026-12-01T10:00:00Z".to_string(),
            model: MODEL.to_string(),
            session: "stand-in-session".to_string(),
            request_id: None,
            message_id: Some("stand-in-call-1".to_string()),
            tokens: Tokens {
                input: 10,
                output: 5,
                ..Tokens::default()
            },
        };
        let added = into.add("stand-in-call-1".to_string(), call);
        Some(SourceStats {
            files: 1,
            records: 1,
            duplicates: u64::from(!added),
            unreadable: 0,
        })
    }),
};
