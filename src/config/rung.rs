//! A rung: one row of the table, a backend and the models it probes and runs, as written.

/// One row of the table, as written (aliases and variables not yet resolved).
#[derive(Debug, Clone, PartialEq)]
pub struct RungDef {
    pub backend: String,
    pub probe_model: String,
    pub run_model: String,
    /// The account this row uses, when its backend draws from a pool: the table has one
    /// row per account, in rotation order (see `accounts::expand`).
    pub account: Option<String>,
    /// A row of a pool of logins: every login of the pool, in rotation order. The rung runs
    /// on the first whose windows leave it open (`launch::resolve::resolve`), so a parked login hands
    /// its rung to the next before any descent; `account` is then the first of them.
    pub logins: Vec<String>,
}
