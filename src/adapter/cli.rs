//! What agent knows of one CLI, as one static description: its facts, and the functions that
//! answer from the environment the CLI gets — as ripgrep's flags and starship's modules are
//! each one value. Each CLI's file fills in its [`Cli`]; `Family::cli` registers them, and
//! every `Family` question is asked of it, so a new CLI is one file and one registration.

use std::path::PathBuf;

use super::dialect::Dialect;
use super::endpoint::EndpointDefaults;
use super::env::{Account, Env};
use super::self_check::SelfCheck;

/// One CLI, as agent knows it.
pub struct Cli {
    /// Its command name, as backends' commands, login keys (`claude:…`) and sources name it.
    pub name: &'static str,
    /// What a person calls it — in `--usage`'s sources, a login's name on `--status` and the
    /// dashboard (`Claude Code Max login`): the one place each CLI's name is written for people.
    pub display_name: &'static str,
    /// The variables that move its home.
    pub home_vars: &'static [&'static str],
    /// Where it keeps its login, settings and records in `env`.
    pub home: fn(&Env) -> Option<PathBuf>,
    /// Variables that move only where it keeps its login (not its home): removed for a
    /// `login` account, whose login is the one in its home.
    pub store_vars: &'static [&'static str],
    /// The variables that carry a credential for it: removed from a launched CLI's
    /// environment so it uses the chosen account and no other.
    pub credential_vars: &'static [&'static str],
    /// Whether other vendors' key variables are withheld from it (DESIGN §23); not for a CLI
    /// that reads every provider's own variable (opencode).
    pub withholds_foreign_keys: bool,
    /// The variable its own settings in `env` name for a provider's key, which is then its
    /// own and never withheld (Codex's `env_key`).
    pub provider_key_var: fn(&Env) -> Option<String>,
    /// The identity its login is known by in `env`, or `None` when it runs on no
    /// subscription login there. Never a token: a token is named by its fingerprint.
    pub login_identity: fn(&Env, Option<Account>) -> Option<String>,
    /// Whether its login is known by its home alone, when agent cannot see its store
    /// (Claude Code's is named by its configuration directory, and its store may be a
    /// Keychain item agent does not read): its windows are still filed and parked under it.
    pub login_known_by_home: bool,
    /// The command a person runs to log it in with its home at a directory (the directory
    /// already quoted for a shell; none: its default home, as typing the CLI logs it in);
    /// `None` when agent cannot move its home.
    pub login_command: Option<fn(Option<&str>) -> String>,
    /// What it lacks to run at all in `env`, read from its own files and the environment
    /// without running it — no login, no key, no provider in its settings — said with its way
    /// in (`not set up: … — log in: …`); `None` when it has something to run on, or agent
    /// cannot tell. A CLI not set up is never started to find that out (opencode with
    /// nothing to run on sleeps out its provider's retries: every check a timeout).
    pub not_set_up: fn(&Env) -> Option<String>,
    /// Where it writes the records of its runs (transcripts, rollouts, chats).
    pub records: fn(&Env) -> Vec<PathBuf>,
    /// The words on its stderr that mean it refused its command line (a usage error, not
    /// an outage).
    pub usage_words: &'static [&'static str],
    /// The variable that names its model, when it has one.
    pub model_var: Option<&'static str>,
    /// The settings file that names its model.
    pub model_settings: fn(&Env) -> Option<PathBuf>,
    /// The model its settings name.
    pub settings_model: fn(&Env) -> Option<String>,
    /// What it reads in `env` to find the API it calls.
    pub endpoint: fn(&Env) -> EndpointDefaults,
    /// The variable it reads an account's secret from in `env`; the flag says the secret
    /// is a subscription token.
    pub secret_var: fn(&Env, bool) -> String,
    /// The variable whose `Name: value` lines it sends as headers on each API call.
    pub headers_var: Option<&'static str>,
    /// Whether it runs a statusline command agent can be (`agent --statusline`), which is
    /// told the rung and the login.
    pub runs_agents_statusline: bool,
    /// Whether it is asked about its own quota with no prompt and no model call
    /// (Antigravity's `agy --print /usage`) instead of being probed: it reads no key agent
    /// knows of, its API is its own login's.
    pub reports_own_quota: bool,
    /// Whether it prints nothing when its stdout is not a terminal: agent then runs it —
    /// its quota read, its own check, and a launch whose stdout is not a terminal — with
    /// its stdout a pseudo-terminal of agent's own (DESIGN §22, `crate::pty`), and a
    /// headless run of it that printed nothing did not answer.
    pub needs_terminal: bool,
    /// How it is checked by running it.
    pub self_check: &'static SelfCheck,
    /// Whether its headless `--output-format json` prints Claude Code's result document
    /// itself; otherwise agent writes that document for a launch that asks for it, from
    /// the CLI's own machine-readable output read as [`SelfCheck::read`] reads it.
    pub prints_claudes_result: bool,
    /// Claude Code's command line in its words; `None`: the words go unchanged.
    pub dialect: Option<&'static Dialect>,
    /// Whether it starts a new session under an id agent chooses (Claude Code's
    /// `--session-id UUID`, said in its own words by its dialect), so the record of the run
    /// agent started is found by id, never mistaken for another session in the same folder.
    /// Otherwise it names its own, and agent reads the id from what it printed or its record.
    /// How it resumes a session by id is its dialect's (a start for [`Session::ById`]), or
    /// Claude Code's own `--resume ID` for a CLI that takes Claude Code's words unchanged.
    ///
    /// [`Session::ById`]: super::dialect::Session::ById
    pub takes_a_session_id: bool,
}

impl Cli {
    /// `CLI:identity`: the key a login's windows are kept under in `windows.json`.
    pub fn key(&self, identity: &str) -> String {
        format!("{}:{identity}", self.name)
    }

    /// The key of its login in `env`, with the pool `account`.
    pub fn login_key(&self, env: &Env, account: Option<Account>) -> Option<String> {
        (self.login_identity)(env, account).map(|identity| self.key(&identity))
    }
}

/// For a CLI with no such settings.
pub fn nothing<T>(_env: &Env) -> Option<T> {
    None
}
