//! Which calls of the report ran on a subscription login: paid by the plan, so they get no
//! per-call cost and no call for a price (DESIGN §12). The CLIs' records do not say how a
//! call was paid for, so a CLI's recorded calls are taken as on its login when agent sees
//! that CLI logged in by subscription now (Claude Code's login, Codex on ChatGPT, Gemini CLI
//! on a Google login) — read as `--doctor` reads it: presence and plan, never a token. A
//! self-check in agent's ledger ran its CLI on that CLI's login too. agent's own probes and
//! relayed calls use keys, and keep their prices.

use std::collections::HashMap;

use crate::adapter::Env;
use crate::config::Config;

/// The plan each logged-in CLI's calls are paid by (`max`, `plus`; `gemini login` when the
/// store names no plan), by CLI and by the backends that run it.
#[derive(Debug, Clone, Default)]
pub struct Logins {
    by_cli: HashMap<&'static str, String>,
    by_backend: HashMap<String, String>,
}

impl Logins {
    /// The logins agent sees on this machine now, and the backends of `config` on them.
    pub fn seen(config: &Config) -> Logins {
        let mut logins = Logins::default();
        for family in crate::adapter::ALL {
            if let Some(login) = crate::launch::own_login::login_in(family, &Env::process()) {
                let plan = login
                    .plan
                    .filter(|plan| !plan.is_empty())
                    .unwrap_or_else(|| format!("{} login", family.name()));
                logins.by_cli.insert(family.name(), plan);
            }
        }
        for backend in config.backends.values() {
            let family = backend.family;
            if let Some(plan) = logins.by_cli.get(family.name()) {
                logins.by_backend.insert(backend.name.clone(), plan.clone());
            }
        }
        logins
    }

    /// The plan the records of `cli` (`claude`, `codex`, `gemini`) are paid by.
    pub fn of_cli(&self, cli: &str) -> Option<&str> {
        self.by_cli.get(cli).map(String::as_str)
    }

    /// The plan a self-check of `backend` ran on.
    pub fn of_backend(&self, backend: &str) -> Option<&str> {
        self.by_backend.get(backend).map(String::as_str)
    }
}
