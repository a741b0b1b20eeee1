//! One adapter per CLI agent can run (DESIGN §16, STYLE "One adapter per external
//! program"): the one place that knows each program agent did not write — its home
//! directory and the variables that move it, the variables that carry its credential, the
//! identity its login's windows are filed under, where its records and its model setting
//! live. Like zoxide's `Shell` and starship's modules: one file per CLI, each answering the
//! same questions, and one enum that dispatches; nothing else in the code reads
//! `CLAUDE_CONFIG_DIR`, `CODEX_HOME` or Gemini CLI's home variable.
//!
//! Every question is asked of an [`Env`]: the environment the CLI itself gets — the
//! backend's `env` and `env_remove` over agent's own — so a launch, its parking, its
//! `--status` line and the statusline Claude Code runs all answer from the same values.
//!
//! Each CLI's file fills in one static description of it, a [`Cli`] (its facts, and the
//! functions that answer from its environment); [`Family::cli`] registers them, and every
//! question below is asked of that description. Adding a CLI is one file here, its
//! variant of [`Family`] and one line in [`Family::cli`] (docs/development.md walks
//! through it).

pub mod agy;
pub mod claude;
pub mod cli;
pub mod codex;
pub mod dialect;
pub mod endpoint;
pub mod env;
pub mod gemini;
pub mod opencode;
mod reading;
pub mod self_check;
#[cfg(test)]
pub mod stand_in;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

pub use cli::Cli;
use dialect::Dialect;
pub use env::{Account, Env};
pub use self_check::{CheckDir, Meaning, Said, SelfCheck, Trust, git_root, never_trusted};

/// Which real program a backend's command is, judged by its file name (a wrapper script
/// configured as `[backends.codex] command = "…"` is still codex by the backend's name).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    Claude,
    Codex,
    Gemini,
    Agy,
    Opencode,
    /// The stand-in sixth CLI of the unit tests (`stand_in`), registered as any CLI is.
    #[cfg(test)]
    StandIn,
    /// A program agent has no adapter for: it knows nothing of its home or login.
    Other,
}

/// What an OpenAI-style CLI agent has no adapter for is assumed to read its key from.
const OPENAI_STYLE_CREDENTIAL_VARS: &[&str] = &["OPENAI_API_KEY"];

/// How many CLIs agent has an adapter for (a test build counts its stand-in too).
const CLIS: usize = if cfg!(test) { 6 } else { 5 };

/// The CLIs agent has an adapter for, in the order tables list them.
pub const ALL: [Family; CLIS] = [
    Family::Claude,
    Family::Codex,
    Family::Gemini,
    Family::Agy,
    Family::Opencode,
    #[cfg(test)]
    Family::StandIn,
];

impl Family {
    /// What agent knows of the CLI: its own file's description. `None` for a program agent
    /// has no adapter for. The one registration of each CLI.
    pub fn cli(self) -> Option<&'static Cli> {
        match self {
            Family::Claude => Some(&claude::CLI),
            Family::Codex => Some(&codex::CLI),
            Family::Gemini => Some(&gemini::CLI),
            Family::Agy => Some(&agy::CLI),
            Family::Opencode => Some(&opencode::CLI),
            #[cfg(test)]
            Family::StandIn => Some(&stand_in::CLI),
            Family::Other => None,
        }
    }

    /// The family of a backend: its command's file name, else the backend's own name.
    pub fn of_backend(name: &str, command: &str) -> Family {
        match Family::of(command) {
            Family::Other => Family::of(name),
            family => family,
        }
    }

    /// The CLI whose command name is `command`'s file name.
    pub fn of(command: &str) -> Family {
        let name = Path::new(command)
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or(command);
        Family::named(name).unwrap_or(Family::Other)
    }

    /// The CLI a stored name names (a login key's `claude:`, a row's `"cli"`): the inverse of
    /// [`Family::name`], never a judgement of a command.
    pub fn named(name: &str) -> Option<Family> {
        ALL.into_iter().find(|family| family.name() == name)
    }

    /// The CLI's command name, as login keys (`claude:…`) and sources name it.
    pub fn name(self) -> &'static str {
        self.cli().map_or("other", |cli| cli.name)
    }

    /// What a person calls the CLI (`Claude Code`); a program agent has no adapter for is
    /// called by what it is.
    pub fn display_name(self) -> &'static str {
        self.cli()
            .map_or("a program agent has no adapter for", |cli| cli.display_name)
    }

    /// The variables that move the CLI's home.
    pub fn home_vars(self) -> &'static [&'static str] {
        self.cli().map_or(&[], |cli| cli.home_vars)
    }

    /// Where the CLI keeps its login, settings and records in `env`.
    pub fn home(self, env: &Env) -> Option<PathBuf> {
        (self.cli()?.home)(env)
    }

    /// What the CLI lacks to run at all in `env` (no login, no key, no provider), with its
    /// way in; `None` when it has something to run on or agent cannot tell.
    pub fn not_set_up(self, env: &Env) -> Option<String> {
        (self.cli()?.not_set_up)(env)
    }

    /// Variables that move only where the CLI keeps its login (not its home): removed for a
    /// `login` account, whose login is the one in its home.
    pub fn store_vars(self) -> &'static [&'static str] {
        self.cli().map_or(&[], |cli| cli.store_vars)
    }

    /// The command a person runs to log the CLI in with its home at `dir` (a `login`
    /// account's directory), `dir` quoted for a shell — `None` for its default home, which
    /// is logged in as typing the CLI does; `None` for a CLI whose home agent cannot move.
    pub fn login_command(self, dir: Option<&Path>) -> Option<String> {
        let command = self.cli()?.login_command?;
        let dir = dir.map(|dir| reading::shell_word(&dir.to_string_lossy()));
        Some(command(dir.as_deref()))
    }

    /// Other vendors' key variables, which this CLI never reads in `env`: removed from its
    /// environment (DESIGN §23), so a repository's hook or MCP server it runs cannot take
    /// them. Empty for opencode, which reads every provider's own variable, and for a
    /// program agent has no adapter for, which may read any; never the variable Codex's
    /// own provider names as its `env_key`.
    pub fn foreign_credential_vars(self, env: &Env) -> Vec<&'static str> {
        let Some(cli) = self.cli().filter(|cli| cli.withholds_foreign_keys) else {
            return Vec::new();
        };
        let provider_key = (cli.provider_key_var)(env);
        let mut foreign: Vec<&'static str> = Vec::new();
        for var in ALL.iter().flat_map(|family| family.credential_vars()) {
            if !cli.credential_vars.contains(var)
                && !foreign.contains(var)
                && provider_key.as_deref() != Some(var)
            {
                foreign.push(var);
            }
        }
        foreign
    }

    /// The variables that carry a credential for the CLI: removed from a launched CLI's
    /// environment so it uses the chosen account and no other.
    pub fn credential_vars(self) -> &'static [&'static str] {
        self.cli()
            .map_or(OPENAI_STYLE_CREDENTIAL_VARS, |cli| cli.credential_vars)
    }

    /// The identity the CLI's login is known by in `env` (its windows are filed under
    /// [`Family::login_key`]), or `None` when it runs on no subscription login there. Never
    /// a token: a token given in a variable is named by its fingerprint. Whether the login
    /// store really holds a login is the login readers' question, not this one.
    pub fn login_identity(self, env: &Env, account: Option<Account>) -> Option<String> {
        (self.cli()?.login_identity)(env, account)
    }

    /// `CLI:identity`: the key a login's windows are kept under in `windows.json`.
    pub fn login_key(self, env: &Env, account: Option<Account>) -> Option<String> {
        self.cli()?.login_key(env, account)
    }

    /// The variable whose `Name: value` lines the CLI sends as headers on each API call
    /// (Claude Code's `ANTHROPIC_CUSTOM_HEADERS`), when it has one.
    pub fn headers_var(self) -> Option<&'static str> {
        self.cli()?.headers_var
    }

    /// Whether the CLI runs a statusline command agent can be (Claude Code's `statusLine`,
    /// `agent --statusline`), which is told the rung and the login.
    pub fn runs_agents_statusline(self) -> bool {
        self.cli().is_some_and(|cli| cli.runs_agents_statusline)
    }

    /// Whether the CLI's login is known by its home alone, when agent cannot see its store.
    pub fn login_known_by_home(self) -> bool {
        self.cli().is_some_and(|cli| cli.login_known_by_home)
    }

    /// `CLI:identity` for an identity already known.
    pub fn key(self, identity: &str) -> String {
        format!("{}:{identity}", self.name())
    }

    /// Where the CLI writes the records of its runs (transcripts, rollouts, chats).
    pub fn records(self, env: &Env) -> Vec<PathBuf> {
        self.cli().map_or_else(Vec::new, |cli| (cli.records)(env))
    }

    /// The words on the CLI's stderr that mean it refused its command line (a usage error,
    /// not an outage). opencode prints its help and nothing else; Antigravity is unknown.
    pub fn usage_words(self) -> &'static [&'static str] {
        self.cli().map_or(&[], |cli| cli.usage_words)
    }

    /// The variable that names the CLI's model, when it has one.
    pub fn model_var(self) -> Option<&'static str> {
        self.cli()?.model_var
    }

    /// The settings file that names the CLI's model.
    pub fn model_settings(self, env: &Env) -> Option<PathBuf> {
        (self.cli()?.model_settings)(env)
    }

    /// The model the CLI runs when given no `--model`: its variable, else its settings.
    pub fn configured_model(self, env: &Env) -> Option<String> {
        let cli = self.cli()?;
        cli.model_var
            .and_then(|var| env.get(var))
            .and_then(|model| reading::non_empty(&model))
            .or_else(|| (cli.settings_model)(env))
    }

    /// What the CLI reads in `env` to find the API it calls — `configured`, when agent's
    /// configuration names one (a probe of that kind), else its own; on another API than
    /// its own, as that API's own CLI reads it (Claude Code's variables for Anthropic's,
    /// Gemini CLI's for Google's).
    pub fn endpoint_defaults(
        self,
        configured: Option<endpoint::WireApi>,
        env: &Env,
    ) -> endpoint::EndpointDefaults {
        let own = self
            .cli()
            .map_or_else(endpoint::EndpointDefaults::openai_style, |cli| {
                (cli.endpoint)(env)
            });
        own.on(configured, |api| match api {
            endpoint::WireApi::Anthropic => (claude::CLI.endpoint)(env),
            endpoint::WireApi::Gemini => (gemini::CLI.endpoint)(env),
            endpoint::WireApi::OpenAi(_) => endpoint::EndpointDefaults::openai_style(),
        })
    }

    /// The variable the CLI reads an account's secret from in `env` (the launched CLI's):
    /// a subscription token's own variable where it has one.
    pub fn secret_var(self, env: &Env, is_subscription_token: bool) -> String {
        match self.cli() {
            Some(cli) => (cli.secret_var)(env, is_subscription_token),
            None => OPENAI_STYLE_CREDENTIAL_VARS[0].to_string(),
        }
    }

    /// Whether the CLI is asked about its own quota instead of being probed (Antigravity).
    pub fn reports_own_quota(self) -> bool {
        self.cli().is_some_and(|cli| cli.reports_own_quota)
    }

    /// Whether it prints nothing off a terminal (`Cli::needs_terminal`).
    pub fn needs_terminal(self) -> bool {
        self.cli().is_some_and(|cli| cli.needs_terminal)
    }

    /// Whether the CLI's headless `--output-format json` is Claude Code's result document
    /// (`Cli::prints_claudes_result`); a program agent has no adapter for is given Claude
    /// Code's words unchanged, and what it prints is its own.
    pub fn prints_claudes_result(self) -> bool {
        self.cli().is_none_or(|cli| cli.prints_claudes_result)
    }

    /// How the CLI is checked by running it; `None` for a program agent has no adapter for.
    pub fn self_check(self) -> Option<&'static SelfCheck> {
        Some(self.cli()?.self_check)
    }

    /// Whether it starts a new session under an id agent chooses (`Cli::takes_a_session_id`).
    pub fn takes_a_session_id(self) -> bool {
        self.cli().is_some_and(|cli| cli.takes_a_session_id)
    }

    /// The CLI's own words that resume its session `id` (`resume ID`, `--session ID`),
    /// headless or with a screen: its dialect's start for a session by id, or Claude Code's
    /// `--resume ID` for a CLI that takes Claude Code's words and names its sessions. `None`
    /// when agent knows no way, or the id is not a plain name.
    pub fn resume_words(self, id: &str, headless: bool) -> Option<Vec<String>> {
        let cli = self.cli()?;
        let id = dialect::plain_session_id(id)?;
        match cli.dialect {
            Some(dialect) => dialect.resume_words(id, headless),
            None if cli.takes_a_session_id => Some(vec!["--resume".to_string(), id.to_string()]),
            None => None,
        }
    }

    /// The CLI's dialect; `None`: the words go unchanged (Claude Code itself, Antigravity,
    /// any other command).
    pub fn dialect(self) -> Option<&'static Dialect> {
        self.cli()?.dialect
    }

    /// Whether `name` (`--stauts`) is a flag of the CLI, by what agent knows of it.
    pub fn is_flag(self, name: &str) -> bool {
        let claudes = dialect::claude_flag(name).is_some();
        match self.dialect() {
            Some(dialect) => dialect.own_flag(name).is_some() || claudes,
            // Claude Code's own table; any other CLI's flags are unknown, so all are its own.
            None if self == Family::Claude => claudes,
            None => true,
        }
    }
}

/// Every dialect agent translates into, each kept with its CLI's adapter.
pub fn dialects() -> impl Iterator<Item = &'static Dialect> {
    ALL.into_iter().filter_map(Family::dialect)
}

impl Family {
    /// Where the CLI's check runs for a launch in `dir`, run with `args` in `env`, read
    /// from its own trust record; a scratch directory is made under `scratch_parent`.
    pub fn check_dir(
        self,
        env: &Env,
        dir: &Path,
        args: &[OsString],
        scratch_parent: &Path,
    ) -> std::io::Result<CheckDir> {
        let Some(check) = self.self_check() else {
            return Ok(CheckDir::Here);
        };
        Ok(match (check.trust)(env, dir, args) {
            Trust::Trusted => CheckDir::Here,
            Trust::Untrusted => CheckDir::Scratch {
                dir: self.scratch_for(check, env, scratch_parent)?,
                args: check.scratch_args,
                env: check.scratch_env,
            },
            Trust::Refused(why) => {
                CheckDir::Refused(would_be_refused(&check.refusal_with_fix(&why, dir)))
            }
        })
    }

    /// The scratch directory a check of the CLI runs in, under `parent`: a new one, or —
    /// for a CLI whose checks start warm only in a folder it knows — one kept per CLI home
    /// (`check-opencode-<digest of its home>`), so two homes never share one.
    fn scratch_for(
        self,
        check: &SelfCheck,
        env: &Env,
        parent: &Path,
    ) -> std::io::Result<crate::scratch::Scratch> {
        match self.home(env).filter(|_| check.warm_scratch) {
            Some(home) => {
                let digest = crate::digest::sha256_hex(home.as_os_str().as_encoded_bytes());
                crate::scratch::Scratch::kept_in(
                    parent,
                    &format!("check-{}-{}", self.name(), &digest[..16]),
                )
            }
            None => crate::scratch::Scratch::new_in(parent, "check"),
        }
    }

    /// Why a launch in `dir` with `args` is refused by the CLI's own trust rule, with the
    /// fix — the words `--status` says of that folder (after [`would_be_refused`]) — when
    /// its rule refuses it.
    pub fn refusal_in(self, env: &Env, dir: &Path, args: &[OsString]) -> Option<String> {
        let check = self.self_check()?;
        match (check.trust)(env, dir, args) {
            Trust::Refused(why) => Some(check.refusal_with_fix(&why, dir)),
            Trust::Trusted | Trust::Untrusted => None,
        }
    }
}

/// A refusal of the folder (`why — fix`), said of a launch not yet made: `--status` and
/// `--install-watchdog` name it so.
pub fn would_be_refused(refusal: &str) -> String {
    format!("a launch here would be refused: {refusal}")
}

#[cfg(test)]
mod tests;
