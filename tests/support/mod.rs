//! The test harness: an in-process mock of the vendors' HTTP APIs ([`mock_api`]) and a
//! sandbox that runs the `agent` binary with a temp `HOME` and fake CLIs ([`sandbox`]).

// Not every helper is used by every test file yet.
#![allow(dead_code, unused_imports)]

pub mod clock;
pub mod held;
pub mod mock_api;
pub mod python;
pub mod redis;
pub mod relay;
pub mod sandbox;

pub use mock_api::{MockApi, Reply, Request, Rule, Usage};
pub use sandbox::{FakeCli, Invocation, Run, Sandbox};

/// The key a Claude login on `token` (given in `CLAUDE_CODE_OAUTH_TOKEN`) is filed under:
/// `claude:token:` and the token's fingerprint, never the token.
pub fn claude_token_login(token: &str) -> String {
    let key = agent::adapter::Family::Claude.key(&agent::adapter::claude::token_identity(token));
    assert!(!key.contains(token), "{key}");
    key
}
