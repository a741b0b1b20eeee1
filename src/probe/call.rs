//! The call a probe makes, resolved from a rung: what to call ([`Call`]) and everything
//! around it ([`ProbePlan`]). [`super::plan()`] builds them; [`super::run`] makes the call.

use std::time::Duration;

use super::login;
use crate::config::{Auth, OpenAiApi};
use crate::state::health::Outcome;
use crate::state::meter::CallInfo;

/// Everything a probe needs, resolved: no variables, no aliases left.
#[derive(Debug, Clone)]
pub struct ProbePlan {
    /// The health key: endpoint × model × credential source (never the credential).
    pub target: String,
    pub call: Call,
    pub model: Option<String>,
    pub timeout: Duration,
    /// The ledger's columns for this probe's calls.
    pub info: CallInfo,
    /// The subscription login the rung runs on, when it does: never probed with a prompt.
    pub login: Option<login::LoginRung>,
    /// The API, base and credential the rung's CLI will use, resolved once here
    /// (`backend::resolve`) for the launch floor to read (the login windows ask there);
    /// `None` when it cannot be resolved.
    pub endpoint: Option<crate::backend::Endpoint>,
}

impl ProbePlan {
    /// Why a rung that is not probed runs anyway, as `--status` says it.
    pub fn unprobed_reason(&self) -> String {
        match &self.login {
            Some(login) => {
                let now = jiff::Timestamp::now();
                login.describe(&login.windows(&crate::paths::state_dir(), now), now)
            }
            None => "not probed (probe kind none): the fast-fail net guards the launch".into(),
        }
    }
}

#[derive(Debug, Clone)]
pub enum Call {
    Anthropic {
        base: String,
        key: String,
        auth: Auth,
        oauth: bool,
    },
    /// No credential to call with: only whether the API host answers at all.
    Reach {
        base: String,
    },
    OpenAi {
        base: String,
        key: Option<String>,
        api: OpenAiApi,
    },
    Gemini {
        base: String,
        key: String,
    },
    Command {
        /// The backend's CLI, judged when the configuration was read: a backend whose
        /// `command` is a wrapper (`/opt/wrap`) is still the CLI it names, and its check
        /// keeps that CLI's trust rule.
        family: crate::adapter::Family,
        argv: Vec<String>,
        env: Vec<(String, String)>,
        env_remove: Vec<String>,
    },
    /// `probe = { kind = "none" }`, or a subscription login: unprobed; the fast-fail net
    /// alone guards the launch.
    None,
    /// A CLI asked about its own quota with no prompt and no model call (Antigravity's
    /// `agy --print /usage`), by a judge the launch floor supplies (it asks through the
    /// login readers' `ask_windows`, which this floor may not name).
    SelfReport {
        asked: Box<OwnQuota>,
        judge: fn(&OwnQuota, Duration) -> Outcome,
    },
}

/// A CLI that reports its own quota, as the rung runs it.
#[derive(Debug, Clone)]
pub struct OwnQuota {
    pub family: crate::adapter::Family,
    pub binary: std::path::PathBuf,
    /// What the rung adds to the CLI's environment, and removes (other vendors' keys).
    pub env: Vec<(String, String)>,
    pub env_remove: Vec<String>,
    /// The key its login's windows are filed under.
    pub login_key: String,
}
