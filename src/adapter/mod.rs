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
//! Adding a CLI is one file here and one variant of [`Family`].

pub mod agy;
pub mod claude;
pub mod codex;
pub mod dialect;
pub mod endpoint;
pub mod gemini;
pub mod opencode;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The environment a CLI gets: what is set on top of agent's, what is removed, and whether
/// the rest is inherited from agent's own (tests ask with nothing inherited).
#[derive(Debug, Clone, Copy)]
pub struct Env<'a> {
    pub set: &'a [(String, String)],
    pub removed: &'a [String],
    pub inherit: bool,
}

impl<'a> Env<'a> {
    /// agent's own environment, as a CLI started by hand (or the statusline Claude Code
    /// runs) sees it.
    pub fn process() -> Env<'static> {
        Env {
            set: &[],
            removed: &[],
            inherit: true,
        }
    }

    /// A launched CLI's: `set` and `removed` over agent's own.
    pub fn child(set: &'a [(String, String)], removed: &'a [String]) -> Env<'a> {
        Env {
            set,
            removed,
            inherit: true,
        }
    }

    /// Only `set`: nothing inherited.
    pub fn only(set: &'a [(String, String)]) -> Env<'a> {
        Env {
            set,
            removed: &[],
            inherit: false,
        }
    }

    /// The value the CLI will see, as set (empty or not): of a variable set twice, the last,
    /// as `Command::env` leaves it.
    pub fn raw(&self, name: &str) -> Option<String> {
        if let Some((_, value)) = self.set.iter().rev().find(|(key, _)| key == name) {
            return Some(value.clone());
        }
        if !self.inherit || self.removed.iter().any(|removed| removed == name) {
            return None;
        }
        std::env::var(name).ok()
    }

    /// The value when set and not empty (an empty home variable is taken as unset, and so
    /// is an empty credential).
    pub fn get(&self, name: &str) -> Option<String> {
        self.raw(name).filter(|value| !value.is_empty())
    }

    /// `$HOME` as the CLI sees it, else agent's own idea of home.
    pub fn home(&self) -> Option<PathBuf> {
        match self.get("HOME") {
            Some(home) => Some(PathBuf::from(home)),
            None if self.inherit => crate::paths::home(),
            None => None,
        }
    }
}

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
    /// A program agent has no adapter for: it knows nothing of its home or login.
    Other,
}

/// What an OpenAI-style CLI agent has no adapter for is assumed to read its key from.
const OPENAI_STYLE_CREDENTIAL_VARS: &[&str] = &["OPENAI_API_KEY"];

/// The CLIs agent has an adapter for, in the order tables list them.
pub const ALL: [Family; 5] = [
    Family::Claude,
    Family::Codex,
    Family::Gemini,
    Family::Agy,
    Family::Opencode,
];

/// A pool account a rung runs on: its name, and whether it is a subscription login (an
/// `oauth` account) rather than a key.
#[derive(Debug, Clone, Copy)]
pub struct Account<'a> {
    pub name: &'a str,
    pub is_login: bool,
}

impl Family {
    /// The family of a backend: its command's file name, else the backend's own name.
    pub fn of_backend(name: &str, command: &str) -> Family {
        match Family::of(command) {
            Family::Other => Family::of(name),
            family => family,
        }
    }

    pub fn of(command: &str) -> Family {
        let name = Path::new(command)
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or(command);
        match name {
            "claude" => Family::Claude,
            "codex" => Family::Codex,
            "gemini" => Family::Gemini,
            "agy" => Family::Agy,
            opencode::COMMAND => Family::Opencode,
            _ => Family::Other,
        }
    }

    /// The CLI's command name, as login keys (`claude:…`) and sources name it.
    pub fn name(self) -> &'static str {
        match self {
            Family::Claude => "claude",
            Family::Codex => "codex",
            Family::Gemini => "gemini",
            Family::Agy => "agy",
            Family::Opencode => opencode::COMMAND,
            Family::Other => "other",
        }
    }

    /// The variables that move the CLI's home.
    pub fn home_vars(self) -> &'static [&'static str] {
        match self {
            Family::Claude => claude::HOME_VARS,
            Family::Codex => codex::HOME_VARS,
            Family::Gemini => gemini::HOME_VARS,
            Family::Agy => agy::HOME_VARS,
            Family::Opencode => opencode::HOME_VARIABLES,
            Family::Other => &[],
        }
    }

    /// Where the CLI keeps its login, settings and records in `env`.
    pub fn home(self, env: &Env) -> Option<PathBuf> {
        match self {
            Family::Claude => claude::home(env),
            Family::Codex => codex::home(env),
            Family::Gemini => gemini::home(env),
            Family::Agy => agy::home(env),
            Family::Opencode => opencode::home(env),
            Family::Other => None,
        }
    }

    /// Variables that move only where the CLI keeps its login (not its home): removed for a
    /// `login` account, whose login is the one in its home.
    pub fn store_vars(self) -> &'static [&'static str] {
        match self {
            Family::Claude => claude::STORE_VARS,
            _ => &[],
        }
    }

    /// The command a person runs to log the CLI in with its home at `dir` (a `login`
    /// account's directory), `dir` quoted for a shell; `None` for a CLI whose home agent
    /// cannot move.
    pub fn login_command(self, dir: &Path) -> Option<String> {
        let dir = shell_word(&dir.to_string_lossy());
        match self {
            Family::Claude => Some(claude::login_command(&dir)),
            Family::Codex => Some(codex::login_command(&dir)),
            Family::Gemini => Some(gemini::login_command(&dir)),
            Family::Agy | Family::Opencode | Family::Other => None,
        }
    }

    /// Other vendors' key variables, which this CLI never reads in `env`: removed from its
    /// environment (DESIGN §23), so a repository's hook or MCP server it runs cannot take
    /// them. Empty for opencode, which reads every provider's own variable, and for a
    /// program agent has no adapter for, which may read any; never the variable Codex's
    /// own provider names as its `env_key`.
    pub fn foreign_credential_vars(self, env: &Env) -> Vec<&'static str> {
        if matches!(self, Family::Opencode | Family::Other) {
            return Vec::new();
        }
        let own = self.credential_vars();
        let provider_key = match self {
            Family::Codex => codex::config(env)
                .and_then(|c| c.custom_provider().and_then(|(_, p)| p.env_key.clone())),
            _ => None,
        };
        let mut foreign: Vec<&'static str> = Vec::new();
        for var in ALL.iter().flat_map(|family| family.credential_vars()) {
            if !own.contains(var) && !foreign.contains(var) && provider_key.as_deref() != Some(var)
            {
                foreign.push(var);
            }
        }
        foreign
    }

    /// The variables that carry a credential for the CLI: removed from a launched CLI's
    /// environment so it uses the chosen account and no other.
    pub fn credential_vars(self) -> &'static [&'static str] {
        match self {
            Family::Claude => claude::CREDENTIAL_VARS,
            Family::Codex => codex::CREDENTIAL_VARS,
            Family::Gemini => gemini::CREDENTIAL_VARS,
            Family::Agy => agy::CREDENTIAL_VARS,
            Family::Opencode => opencode::CREDENTIAL_VARIABLES,
            Family::Other => OPENAI_STYLE_CREDENTIAL_VARS,
        }
    }

    /// The identity the CLI's login is known by in `env` (its windows are filed under
    /// [`Family::login_key`]), or `None` when it runs on no subscription login there. Never
    /// a token: a token given in a variable is named by its fingerprint. Whether the login
    /// store really holds a login is the login readers' question, not this one.
    pub fn login_identity(self, env: &Env, account: Option<Account>) -> Option<String> {
        match self {
            Family::Claude => claude::login_identity(env, account),
            Family::Codex => codex::login_identity(env, account),
            Family::Gemini => gemini::login_identity(env, account),
            Family::Agy => agy::login_identity(env, account),
            // Its logins are per provider, and none reports a window agent parks by.
            Family::Opencode | Family::Other => None,
        }
    }

    /// `CLI:identity`: the key a login's windows are kept under in `windows.json`.
    pub fn login_key(self, env: &Env, account: Option<Account>) -> Option<String> {
        self.login_identity(env, account)
            .map(|identity| self.key(&identity))
    }

    /// The variable whose `Name: value` lines the CLI sends as headers on each API call
    /// (Claude Code's `ANTHROPIC_CUSTOM_HEADERS`), when it has one.
    pub fn headers_var(self) -> Option<&'static str> {
        (self == Family::Claude).then_some(claude::HEADERS_VAR)
    }

    /// Whether the CLI runs a statusline command agent can be (Claude Code's `statusLine`,
    /// `agent --statusline`), which is told the rung and the login.
    pub fn runs_agents_statusline(self) -> bool {
        self == Family::Claude
    }

    /// Whether the CLI's login is known by its home alone, when agent cannot see its store
    /// (Claude Code's is named by its configuration directory, and its store may be a
    /// Keychain item agent does not read): its windows are still filed and parked under it.
    pub fn login_known_by_home(self) -> bool {
        self == Family::Claude
    }

    /// `CLI:identity` for an identity already known.
    pub fn key(self, identity: &str) -> String {
        format!("{}:{identity}", self.name())
    }

    /// Where the CLI writes the records of its runs (transcripts, rollouts, chats).
    pub fn records(self, env: &Env) -> Vec<PathBuf> {
        match self {
            Family::Claude => claude::records(env),
            Family::Codex => codex::records(env),
            Family::Gemini => gemini::records(env),
            Family::Agy => agy::records(env),
            Family::Opencode => opencode::home(env)
                .map(|dir| opencode::database(&dir))
                .into_iter()
                .collect(),
            Family::Other => Vec::new(),
        }
    }

    /// The words on the CLI's stderr that mean it refused its command line (a usage error,
    /// not an outage). opencode prints its help and nothing else; Antigravity is unknown.
    pub fn usage_words(self) -> &'static [&'static str] {
        match self {
            Family::Claude => claude::USAGE_WORDS,
            Family::Codex => codex::USAGE_WORDS,
            Family::Gemini => gemini::USAGE_WORDS,
            Family::Agy | Family::Opencode | Family::Other => &[],
        }
    }

    /// The variable that names the CLI's model, when it has one.
    pub fn model_var(self) -> Option<&'static str> {
        match self {
            Family::Claude => claude::MODEL_VAR,
            Family::Codex => codex::MODEL_VAR,
            Family::Gemini => gemini::MODEL_VAR,
            Family::Agy => agy::MODEL_VAR,
            Family::Opencode | Family::Other => None,
        }
    }

    /// The settings file that names the CLI's model.
    pub fn model_settings(self, env: &Env) -> Option<PathBuf> {
        match self {
            Family::Claude => claude::model_settings(env),
            Family::Codex => codex::model_settings(env),
            Family::Gemini => gemini::model_settings(env),
            Family::Agy => agy::model_settings(env),
            Family::Opencode | Family::Other => None,
        }
    }

    /// The model the CLI runs when given no `--model`: its variable, else its settings.
    pub fn configured_model(self, env: &Env) -> Option<String> {
        if let Some(model) = self
            .model_var()
            .and_then(|var| env.get(var))
            .and_then(|model| non_empty(&model))
        {
            return Some(model);
        }
        match self {
            Family::Claude => claude::settings_model(env),
            Family::Codex => codex::config(env).and_then(|c| c.model),
            Family::Gemini => gemini::settings_model(env),
            Family::Agy | Family::Opencode | Family::Other => None,
        }
    }

    /// What the CLI reads in `env` to find the API it calls — `configured`, when agent's
    /// configuration names one (a probe of that kind), else its own.
    pub fn endpoint_defaults(
        self,
        configured: Option<endpoint::WireApi>,
        env: &Env,
    ) -> endpoint::EndpointDefaults {
        let own = match self {
            Family::Claude => claude::endpoint(env),
            Family::Codex => codex::endpoint(env),
            Family::Gemini => gemini::endpoint(env),
            Family::Agy => agy::endpoint(),
            Family::Opencode => opencode::endpoint(),
            Family::Other => endpoint::EndpointDefaults::openai_style(),
        };
        own.on(configured, env)
    }

    /// The variable the CLI reads an account's secret from in `env` (the launched CLI's):
    /// a subscription token's own variable where it has one.
    pub fn secret_var(self, env: &Env, is_subscription_token: bool) -> String {
        match self {
            Family::Claude => claude::secret_var(is_subscription_token).to_string(),
            Family::Codex => codex::secret_var(env),
            Family::Gemini => gemini::SECRET_VAR.to_string(),
            Family::Agy => agy::SECRET_VAR.to_string(),
            Family::Opencode => opencode::SECRET_VAR.to_string(),
            Family::Other => OPENAI_STYLE_CREDENTIAL_VARS[0].to_string(),
        }
    }
}

/// How a CLI is checked by running it (DESIGN §17 "the CLI's own check"): its headless words
/// for a machine-readable answer, how its output reads, and the words in its output that
/// mean it did not really answer. One table per CLI, in its own file.
pub struct SelfCheck {
    /// Claude Code's words for a headless run with a machine-readable answer, the prompt
    /// after `-p` (`PROMPT` stands for it); the CLI's dialect says them in its own words.
    pub args: &'static [&'static str],
    /// Reads its stdout and stderr: the answer, its own failure, its tokens, its session.
    pub read: fn(stdout: &str, stderr: &str) -> Said,
    /// Words (lowercase; `’` read as `'`) that mean a usage limit or quota.
    pub limit: &'static [&'static str],
    /// Words that mean a short rate limit of the service, not the login's quota (read
    /// before [`SelfCheck::limit`]: "not your usage limit").
    pub rate_limited: &'static [&'static str],
    /// Words that mean the login or key was refused.
    pub auth: &'static [&'static str],
    /// What the user does about a refused login, in the CLI's own words.
    pub auth_fix: &'static str,
    /// Words, and the exit code, that mean it will not run in this folder.
    pub untrusted: &'static [&'static str],
    pub untrusted_exit: Option<i32>,
    /// What the user does about an untrusted folder (`{dir}` stands for the folder): trust
    /// that folder in the CLI's own way, never a switch that trusts every folder.
    pub untrusted_fix: &'static str,
    /// Other words that mean it failed although it may exit 0.
    pub failure: &'static [&'static str],
    /// What the CLI's own trust record says of a folder, read without running anything: its
    /// check runs there only when the record trusts it ([`Trust`]).
    pub trust: fn(env: &Env, dir: &Path, args: &[OsString]) -> Trust,
    /// Its own words (passed as they are by its dialect) that turn off a project's
    /// settings, hooks and MCP servers, for a check run in agent's scratch directory.
    pub scratch_args: &'static [&'static str],
    /// The variables that do the same.
    pub scratch_env: &'static [(&'static str, &'static str)],
}

/// What a CLI's own trust record says of a folder (DESIGN §17, §23).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trust {
    /// The record trusts it: the user let the CLI run the folder's settings there.
    Trusted,
    /// No record trusts it, and a launch there would still run.
    Untrusted,
    /// A launch there would be refused, because (a line naming the folder)…
    Refused(String),
}

/// Where a check of a CLI (its own check, or a `command` probe) runs for a launch in a
/// folder (DESIGN §23: a report never runs a folder's code).
pub enum CheckDir {
    /// In the folder: the CLI's own record trusts it (or agent knows nothing of the
    /// program).
    Here,
    /// In a scratch directory of agent's own, with the CLI's own words and variables that
    /// turn a project's settings, hooks and MCP servers off.
    Scratch {
        dir: crate::scratch::Scratch,
        args: &'static [&'static str],
        env: &'static [(&'static str, &'static str)],
    },
    /// Nowhere: a launch there would be refused (the fact and its fix, one line).
    Refused(String),
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
                dir: crate::scratch::Scratch::new_in(scratch_parent, "check")?,
                args: check.scratch_args,
                env: check.scratch_env,
            },
            Trust::Refused(why) => {
                let fix = check.untrusted_fix_for(dir);
                CheckDir::Refused(if fix.is_empty() {
                    format!("a launch here would be refused: {why}")
                } else {
                    format!("a launch here would be refused: {why} — {fix}")
                })
            }
        })
    }
}

/// For a CLI that keeps no trust record: no folder is trusted, none refused.
pub fn never_trusted(_env: &Env, _dir: &Path, _args: &[OsString]) -> Trust {
    Trust::Untrusted
}

/// The nearest folder at or above `dir` holding a `.git` (a directory, or a worktree's
/// file): the repository the CLIs' trust rules name. Read, never `git`.
pub fn git_root(dir: &Path) -> Option<&Path> {
    dir.ancestors()
        .find(|folder| std::fs::symlink_metadata(folder.join(".git")).is_ok())
}

/// Whether `args` holds one of `words` (a flag given alone or as `--flag=value`).
fn has_word(args: &[OsString], words: &[&str]) -> bool {
    args.iter().any(|arg| {
        let arg = arg.to_string_lossy();
        let name = arg.split('=').next().unwrap_or_default();
        words.contains(&name)
    })
}

/// What a CLI's headless output says of its run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Said {
    /// Its answer, when it gave one.
    pub answer: Option<String>,
    /// Its own account of a failure (`is_error`, `turn.failed`, an `error` object).
    pub error: Option<String>,
    /// What the run spent, as the CLI counted it.
    pub tokens: Option<crate::tokens::Tokens>,
    /// Its session (thread) id.
    pub session: Option<String>,
}

/// What the words of a CLI's output mean, in the order they are looked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Meaning {
    Untrusted,
    Auth,
    RateLimited,
    Limit,
    Failure,
}

impl SelfCheck {
    /// What the user does about the untrusted folder `dir`.
    pub fn untrusted_fix_for(&self, dir: &Path) -> String {
        self.untrusted_fix
            .replace("{dir}", &dir.display().to_string())
    }

    /// What `text` (the CLI's output) says, and the words that said it: untrusted folder,
    /// then a refused login, then a rate limit, a usage limit, any other failure.
    pub fn meaning(&self, text: &str) -> Option<(Meaning, &'static str)> {
        let lower = text.to_lowercase().replace('’', "'");
        let tables = [
            (Meaning::Untrusted, self.untrusted),
            (Meaning::Auth, self.auth),
            (Meaning::RateLimited, self.rate_limited),
            (Meaning::Limit, self.limit),
            (Meaning::Failure, self.failure),
        ];
        tables.iter().find_map(|(meaning, words)| {
            words
                .iter()
                .find(|word| lower.contains(*word))
                .map(|word| (*meaning, *word))
        })
    }
}

impl Family {
    /// How the CLI is checked by running it; `None` for a program agent has no adapter for.
    pub fn self_check(self) -> Option<&'static SelfCheck> {
        match self {
            Family::Claude => Some(&claude::SELF_CHECK),
            Family::Codex => Some(&codex::SELF_CHECK),
            Family::Gemini => Some(&gemini::SELF_CHECK),
            Family::Agy => Some(&agy::SELF_CHECK),
            Family::Opencode => Some(&opencode::SELF_CHECK),
            Family::Other => None,
        }
    }
}

/// The JSON documents in `text`: the whole of it when it is one, else each line that is one.
fn json_documents(text: &str) -> Vec<serde_json::Value> {
    if let Ok(whole) = serde_json::from_str::<serde_json::Value>(text.trim()) {
        return vec![whole];
    }
    text.lines()
        .filter_map(|line| serde_json::from_str(line.trim()).ok())
        .collect()
}

/// A JSON value as a token count, when it is a non-negative integer (bounded: a CLI's
/// output is another program's word).
fn count(value: Option<&serde_json::Value>) -> u64 {
    value.and_then(crate::tokens::count).unwrap_or(0)
}

/// A JSON string, trimmed, when it is not empty.
fn text_of(value: Option<&serde_json::Value>) -> Option<String> {
    non_empty(value?.as_str()?)
}

/// A settings file's JSON, when it exists, fits its cap and parses (read bounded: another
/// program's file).
fn read_json(path: &Path) -> Option<serde_json::Value> {
    crate::bounded_read::json(path, crate::bounded_read::SETTINGS)
}

/// `text` as one word of a POSIX shell: as it is when it holds nothing the shell reads,
/// else in single quotes.
fn shell_word(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+@%:,".contains(c));
    if plain {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

/// A non-empty string, trimmed.
fn non_empty(text: &str) -> Option<String> {
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

#[cfg(test)]
mod tests;
