//! Reports: what agent prints on stdout for a person (aligned text) or a script (`--json`).

pub mod accounts;
pub mod budget;
pub mod check_fallback;
pub mod doctor;
pub mod launchable;
pub mod list;
pub mod rows;
pub mod status;
pub mod statusline;
pub mod statusline_install;
pub mod tasks;
pub mod unpark;
pub mod watchdog;

pub use crate::term::{emit, emit_json};
pub use crate::text::{shell_join, shell_quote};

/// The 30- and 7-day warnings of accounts whose token expires soon (on stderr: a verdict
/// line stays one line).
pub fn warn_expiring(config: &crate::config::Config) {
    for account in &config.accounts {
        if let Some(warning) = account.expiry_warning() {
            crate::term::warn(&warning);
        }
    }
}
