//! The one HTTP client agent's own blocking calls use (probes, credential checks, alert
//! deliveries): an honest `User-Agent`, a whole-call timeout, and error statuses returned
//! as answers, because a 429's or 401's body is what tells agent why.

use std::time::Duration;

/// agent's `User-Agent`: `agent/VERSION`.
pub const USER_AGENT: &str = concat!("agent/", env!("CARGO_PKG_VERSION"));

/// A client whose every call ends within `timeout` (connect, send and read together).
pub fn client(timeout: Duration) -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        .http_status_as_error(false)
        .user_agent(USER_AGENT)
        .build()
        .new_agent()
}
