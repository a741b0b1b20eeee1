//! The test harness: an in-process mock of the vendors' HTTP APIs ([`mock_api`]) and a
//! sandbox that runs the `agent` binary with a temp `HOME` and fake CLIs ([`sandbox`]).

// Not every helper is used by every test file yet.
#![allow(dead_code, unused_imports)]

pub mod cdp;
pub mod claude_code;
pub mod clock;
pub mod codex;
pub mod held;
pub mod lingering;
pub mod mock_api;
pub mod python;
pub mod redis;
pub mod relay;
pub mod sandbox;
pub mod session_id;
pub mod tmux;
pub mod wait;
pub mod watched;

pub use mock_api::{MockApi, Reply, Request, Rule, Usage};
pub use sandbox::{FakeCli, Invocation, Run, Sandbox};
pub use session_id::launched_words;

/// The row of `backend` in a `--status --json` (or the dashboard's `/status.json`) report.
pub fn status_row<'a>(rows: &'a serde_json::Value, backend: &str) -> &'a serde_json::Value {
    rows.as_array()
        .and_then(|rows| rows.iter().find(|row| row["backend"] == backend))
        .unwrap_or_else(|| panic!("no {backend} row in {rows:#}"))
}

/// The key the Claude login of a sandbox whose home is `home` is filed under — on a
/// token in `CLAUDE_CODE_OAUTH_TOKEN` too: Claude Code hides the token from its
/// statusline, so the login is named by its configuration directory.
pub fn claude_dir_login(home: &std::path::Path) -> String {
    format!("claude:{}", home.join(".claude").display())
}

/// The runs of a sandbox's fake Codex that were launches, not `codex app-server` asked for
/// its login's windows.
pub fn codex_runs(sb: &Sandbox) -> Vec<Invocation> {
    sb.calls("codex")
        .into_iter()
        .filter(|call| call.argv.first().map(String::as_str) != Some("app-server"))
        .collect()
}
