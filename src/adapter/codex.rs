//! Codex (`@openai/codex`, pinned 0.171.0; research §2).
//!
//! - **Home**: `$CODEX_HOME`, else `~/.codex`.
//! - **Credential variables**: `OPENAI_API_KEY` (a custom provider's `env_key` is the
//!   backend's question).
//! - **Login identity**: its home (one ChatGPT login per home), when no account and no
//!   custom provider is in the way; whether `auth.json` holds a ChatGPT login is read by
//!   `login::codex`.
//! - **Records**: rollouts under `<home>/sessions/` and `<home>/archived_sessions/`.
//! - **Model**: `model` in `<home>/config.toml`, which also names its provider.
//! - **Trust**: `[projects."<folder>"] trust_level = "trusted"` in `<home>/config.toml`, for
//!   the folder itself, else for its git repository's root. `codex exec` refuses to start
//!   outside a git repository whatever that says (0.171).
//! - **Dialect**: Claude Code's command line in its words ([`DIALECT`]): `-p` is `codex exec`
//!   (its `-p` is `--profile`), `-c` is `resume --last`, the prompt one word after `--`;
//!   its TUI, `codex resume` and `codex exec` each lack some of the others' flags.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::cli::Cli;
use super::dialect::Mode::{Headless, Interactive};
use super::dialect::Session::{ById, Last, New, Pick};
use super::dialect::{Dialect, Form, Prompt, SESSION_ID, Words, rule, start, start_lacking_both};
use super::endpoint::{
    EndpointDefaults, KeyVar, OpenAiBase, OpenAiForm, Provider, Scheme, WireApi,
};
use super::env::{Account, Env};
use super::reading::{count, json_documents, text_of};
use super::self_check::{Said, SelfCheck, Trust, git_root, has_word};

pub const HOME_VAR: &str = "CODEX_HOME";
pub const HOME_VARS: &[&str] = &[HOME_VAR];
pub const CREDENTIAL_VARS: &[&str] = &["OPENAI_API_KEY"];
/// What it writes to stderr when it refuses its command line (clap: `error: unexpected argument '--bogus' found`, exit 2 (0.171)),
/// and `exec` with no prompt ("No prompt provided. Either specify one as an argument or pipe
/// the prompt into stdin." on a terminal, "No prompt provided via stdin." for an empty one;
/// exit 1).
pub const USAGE_WORDS: &[&str] = &[
    "error: unexpected argument",
    "error: invalid value",
    "No prompt provided",
];

pub const MODEL_VAR: Option<&str> = None;

// What it reads to find its API, and where an account's secret reaches it
// (`Family::endpoint_defaults`, `Family::secret_var`).

/// OpenAI's Responses API where its `config.toml` sends it: the custom provider it names
/// (its base URL, `env_key` and `wire_api`), else OpenAI's own API with `OPENAI_API_KEY`
/// — never `OPENAI_BASE_URL`, which it ignores; given no key, its own login (`auth.json`).
/// Its config is read once, from `env` (the launched CLI's).
pub fn endpoint(env: &Env) -> EndpointDefaults {
    let provider = config(env).and_then(|config| {
        config.custom_provider().map(|(name, provider)| Provider {
            name: name.to_string(),
            base_url: provider.base_url.clone().unwrap_or_default(),
            env_key: provider.env_key.clone(),
            wire_api: provider.wire_api.as_deref().map(|wire| match wire {
                "chat" => OpenAiForm::Chat,
                _ => OpenAiForm::Responses,
            }),
            runs_on_login: provider.runs_on_login(),
        })
    });
    EndpointDefaults {
        api: WireApi::OpenAi(Some(OpenAiForm::Responses)),
        key_vars: CREDENTIAL_VARS
            .iter()
            .map(|var| KeyVar::new(var, Scheme::Bearer))
            .collect(),
        openai_base: OpenAiBase::Settings(provider),
        own_login: true,
    }
}

/// An account's secret: the variable its custom provider reads (`env_key`) in `env`, else
/// `OPENAI_API_KEY`.
pub fn secret_var(env: &Env) -> String {
    config(env)
        .and_then(|c| c.custom_provider().and_then(|(_, p)| p.env_key.clone()))
        .unwrap_or_else(|| CREDENTIAL_VARS[0].to_string())
}

pub fn home(env: &Env) -> Option<PathBuf> {
    match env.get(HOME_VAR) {
        Some(dir) => Some(PathBuf::from(dir)),
        None => env.home().map(|home| home.join(".codex")),
    }
}

pub fn login_identity(env: &Env, account: Option<Account>) -> Option<String> {
    let elsewhere = config(env).is_some_and(|c| {
        c.custom_provider()
            .is_some_and(|(_, provider)| !provider.runs_on_login())
    });
    if account.is_some() || elsewhere {
        return None;
    }
    home(env).map(|dir| dir.to_string_lossy().into_owned())
}

pub fn records(env: &Env) -> Vec<PathBuf> {
    home(env)
        .map(|home| vec![home.join("sessions"), home.join("archived_sessions")])
        .unwrap_or_default()
}

pub fn model_settings(env: &Env) -> Option<PathBuf> {
    home(env).map(|home| home.join("config.toml"))
}

/// The parts of `<home>/config.toml` that decide where codex sends its calls.
#[derive(Debug, Default, Deserialize)]
pub struct CodexConfig {
    pub model: Option<String>,
    pub model_provider: Option<String>,
    #[serde(default)]
    pub model_providers: BTreeMap<String, CodexProvider>,
    #[serde(default)]
    pub projects: BTreeMap<String, CodexProject>,
}

/// A project's entry: whether the user trusted it.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct CodexProject {
    pub trust_level: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct CodexProvider {
    pub base_url: Option<String>,
    pub env_key: Option<String>,
    pub wire_api: Option<String>,
    /// Whether codex sends the login in its home (`auth.json`) to this provider.
    #[serde(default)]
    pub requires_openai_auth: bool,
}

impl CodexProvider {
    /// Whether its calls run on the login in codex's home: a provider that
    /// `requires_openai_auth` and names no `env_key` of its own is sent that login's token
    /// (codex-rs `model_provider_info.rs`: the provider's key first, else the auth manager's
    /// login), so the login's windows are what refuse it — a gateway in front of ChatGPT.
    pub fn runs_on_login(&self) -> bool {
        self.requires_openai_auth && self.env_key.is_none()
    }
}

/// Codex's config in `env`, when it exists and parses (other keys are ignored).
pub fn config(env: &Env) -> Option<CodexConfig> {
    let text = crate::bounded_read::text(&model_settings(env)?, crate::bounded_read::SETTINGS)?;
    toml::from_str(&text).ok()
}

impl CodexConfig {
    /// The provider codex talks to, when it is a custom one with its own base URL.
    pub fn custom_provider(&self) -> Option<(&str, &CodexProvider)> {
        let name = self.model_provider.as_deref()?;
        if name == "openai" {
            return None;
        }
        self.model_providers
            .get(name)
            .filter(|p| p.base_url.is_some())
            .map(|p| (name, p))
    }
}

/// What agent knows of Codex.
pub const CLI: Cli = Cli {
    name: "codex",
    display_name: "Codex",
    home_vars: HOME_VARS,
    home,
    store_vars: &[],
    credential_vars: CREDENTIAL_VARS,
    withholds_foreign_keys: true,
    provider_key_var: |env| {
        config(env).and_then(|c| c.custom_provider().and_then(|(_, p)| p.env_key.clone()))
    },
    login_identity,
    login_known_by_home: false,
    login_command: Some(login_command),
    // Without a login or key in its store it is not set up by its endpoint (PlanError::not_set_up).
    not_set_up: super::cli::nothing,
    records,
    usage_words: USAGE_WORDS,
    model_var: MODEL_VAR,
    model_settings,
    settings_model: |env| config(env).and_then(|c| c.model),
    endpoint,
    secret_var: |env, _| secret_var(env),
    headers_var: None,
    runs_agents_statusline: false,
    reports_own_quota: false,
    needs_terminal: false,
    self_check: &SELF_CHECK,
    prints_claudes_result: false,
    dialect: Some(&DIALECT),
    takes_a_session_id: false,
};

/// A spent limit reaches agent only as words: `codex exec --json` prints it as the text of an
/// `error` event (no code; "You’ve hit your usage limit. … try again at 9:19 AM."), matched by
/// `limit` below, and its rollout keeps it with the reset (read by `login::codex_rollout`).
/// Codex's model-switch nudge near the limit is never answered: agent never writes to a
/// CLI's stdin — a launch inherits agent's own (`launch::child::run` leaves it), a check
/// gets `/dev/null` (`child::Job` without `stdin`), and agent reads only what the CLI left
/// after it exited (DESIGN §22).
///
/// Its own check (DESIGN §17), measured with 0.171.0 against the mock
/// (`tests/fixtures/self_check/codex-*`): `codex exec --json -m M PROMPT` prints JSONL events
/// on stdout — `thread.started` (`thread_id`), `item.completed` (an `agent_message` is the
/// answer; an `error` item is a warning, such as a model it has no metadata for),
/// `turn.completed` (`usage`), or `error` and `turn.failed` — and exits 1 on any failure.
/// Outside a git repository it refuses to start ("Not inside a trusted directory and
/// --skip-git-repo-check was not specified."): a trust guard agent does not lift for the
/// user's folder — only in its own empty scratch directory, where there is nothing to guard.
pub const SELF_CHECK: SelfCheck = SelfCheck {
    args: &["-p", "PROMPT", "--output-format", "json"],
    read: read_self_check,
    limit: &[
        "you've hit your usage limit",
        "usage limit",
        "usage_limit_reached",
        "insufficient_quota",
        "purchase more credits",
    ],
    rate_limited: &["rate limit reached", "rate_limit_exceeded"],
    auth: &[
        "401 unauthorized",
        "403 forbidden",
        "incorrect api key",
        "invalid_api_key",
        "not logged in",
        "codex login",
        "refresh token",
        "token_expired",
    ],
    auth_fix: "log Codex in again: run `codex login`",
    untrusted: &["not inside a trusted directory"],
    untrusted_exit: None,
    untrusted_fix: "run agent from inside a git repository (`codex exec` starts only in one; trust the folder in Codex by running `codex` in it once); agent does not add --skip-git-repo-check to your launches unless its backend's `headless_args` says it",
    failure: &["\"type\":\"turn.failed\"", "\nerror:", "unexpected status"],
    trust,
    // `codex exec --help` (0.171) names no flag that turns its tools or MCP servers off.
    no_tools_args: &[],
    scratch_args: &["--skip-git-repo-check"],
    scratch_env: &[],
    one_call_args: &[],
    warm_scratch: false,
};

/// `codex exec`'s words that start it outside a git repository.
const OUTSIDE_GIT_WORDS: &[&str] = &[
    "--skip-git-repo-check",
    "--dangerously-bypass-approvals-and-sandbox",
    "--yolo",
];

/// Codex's rule (0.171, `run_exec_session`): `exec` refuses a folder in no git repository
/// (`.git` at or above it) unless told to skip that check; its project's trust is the
/// folder's own entry, else its repository root's.
fn trust(env: &Env, dir: &Path, args: &[OsString]) -> Trust {
    let root = git_root(dir);
    if root.is_none() && !has_word(args, OUTSIDE_GIT_WORDS) {
        return Trust::Refused(format!(
            "codex exec starts only inside a git repository and {} is in none",
            dir.display()
        ));
    }
    let projects = config(env)
        .map(|config| config.projects)
        .unwrap_or_default();
    let level = |folder: &Path| {
        folder
            .to_str()
            .and_then(|key| projects.get(key))
            .map(|project| project.trust_level.as_deref() == Some("trusted"))
    };
    let trusted = level(dir).or_else(|| root.and_then(level)).unwrap_or(false);
    if trusted {
        Trust::Trusted
    } else {
        Trust::Untrusted
    }
}

/// Its `--json` events: the session, the last agent message, the turn's usage (cached input
/// and reasoning kept apart, as `--usage` reads its rollouts), or the turn's failure.
fn read_self_check(stdout: &str, _stderr: &str) -> Said {
    let mut said = Said::default();
    for event in json_documents(stdout) {
        match event.get("type").and_then(|t| t.as_str()) {
            Some("thread.started") => said.session = text_of(event.get("thread_id")),
            Some("item.completed") => {
                let item = event.get("item");
                if item.and_then(|i| i.get("type")).and_then(|t| t.as_str())
                    == Some("agent_message")
                {
                    said.answer = text_of(item.and_then(|i| i.get("text")));
                }
            }
            Some("turn.completed") => {
                if let Some(usage) = event.get("usage") {
                    let cached = count(usage.get("cached_input_tokens"));
                    let reasoning = count(usage.get("reasoning_output_tokens"));
                    said.tokens = Some(crate::tokens::Tokens {
                        input: count(usage.get("input_tokens")).saturating_sub(cached),
                        output: count(usage.get("output_tokens")).saturating_sub(reasoning),
                        reasoning,
                        cache_read: cached,
                        cache_write: count(usage.get("cache_write_input_tokens")),
                    });
                }
            }
            Some("turn.failed") => {
                said.error = text_of(event.get("error").and_then(|e| e.get("message")))
                    .or(said.error.take())
                    .or_else(|| Some("turn.failed".to_string()));
            }
            Some("error") if said.error.is_none() => {
                said.error = text_of(event.get("message"));
            }
            _ => {}
        }
    }
    said
}

/// The command that logs Codex in in `dir` (which must exist; `None`: its default home).
pub fn login_command(dir: Option<&str>) -> String {
    match dir {
        Some(dir) => format!("mkdir -p {dir} && {HOME_VAR}={dir} codex login"),
        None => "codex login".to_string(),
    }
}

/// `codex exec`'s flags, which its TUI (`codex`, `codex resume`) does not take.
const EXEC_ONLY: &[&str] = &[
    "--skip-git-repo-check",
    "--trust",
    "--ephemeral",
    "--ignore-user-config",
    "--ignore-rules",
    "--output-schema",
    "--color",
    "--json",
    "-o",
    "--output-last-message",
];
/// `codex resume`'s flags, which its TUI without the sub-command does not take.
const RESUME_ONLY: &[&str] = &["--last", "--all"];
/// The TUI's flags `codex exec` does not take.
const EXEC_LACKS: &[&str] = &[
    "-a",
    "--ask-for-approval",
    "--search",
    "--no-alt-screen",
    "--no-daemon",
    "--last",
    "--all",
];

/// `codex exec`'s flags that `codex exec resume` does not take (0.171 `--help`).
const EXEC_RESUME_LACKS: &[&str] = &[
    "--oss",
    "--local-provider",
    "--profile",
    "-s",
    "--sandbox",
    "--approve-for-me",
    "-C",
    "--cd",
    "--add-dir",
    "-a",
    "--ask-for-approval",
    "--search",
    "--no-alt-screen",
    "--no-daemon",
    "--color",
    "-V",
];

/// Its dialect: Claude Code's command line in Codex's words, as its `--help` says them at
/// the version named (`tests/fixtures/help/codex-*.txt`). Its TUI, `codex resume` and
/// `codex exec` take different flags, so each start lists the ones it lacks.
pub const DIALECT: Dialect = Dialect {
    command: "codex",
    label: "Codex",
    checked: "0.171.0",
    starts: &[
        // `codex` (its TUI, no sub-command) takes neither `exec`'s flags nor `resume`'s.
        start_lacking_both(Interactive, New, &[], EXEC_ONLY, RESUME_ONLY),
        start(Interactive, Last, &["resume", "--last"], EXEC_ONLY),
        start(Interactive, Pick, &["resume"], EXEC_ONLY),
        start(Headless, New, &["exec"], EXEC_LACKS),
        start(
            Headless,
            Last,
            &["exec", "resume", "--last"],
            EXEC_RESUME_LACKS,
        ),
        // `codex resume ID`, `codex exec resume ID` (0.171 `--help`: `[SESSION_ID] [PROMPT]`,
        // "Session id (UUID) or session name"): the id before the flags, the prompt after
        // the end of options.
        start(Interactive, ById, &["resume", SESSION_ID], EXEC_ONLY),
        start(
            Headless,
            ById,
            &["exec", "resume", SESSION_ID],
            EXEC_RESUME_LACKS,
        ),
    ],
    prompt: [Prompt::Joined, Prompt::Joined],
    model_flag: "-m",
    model_needs_provider: false,
    rules: &[
        rule(
            Form::OutputFormat,
            Words::Values(&[
                ("text", &[]),
                ("json", &["--json"]),
                ("stream-json", &["--json"]),
            ]),
            "codex exec prints its JSONL events; for json agent writes Claude Code's result document from them",
        ),
        rule(
            Form::SkipPermissions,
            Words::Say(&["--dangerously-bypass-approvals-and-sandbox"]),
            "",
        ),
        rule(
            Form::PermissionMode,
            // No acceptEdits: codex's workspace-write sandbox runs shell commands without
            // asking (exec never asks), more than Claude Code's acceptEdits grants, and
            // read-only would refuse the edits asked for.
            Words::Values(&[
                ("default", &[]),
                ("plan", &["--sandbox", "read-only"]),
                (
                    "bypassPermissions",
                    &["--dangerously-bypass-approvals-and-sandbox"],
                ),
            ]),
            "codex's sandbox policy",
        ),
        rule(Form::AddDir, Words::Say(&["--add-dir"]), ""),
        rule(Form::Verbose, Words::Drop, "codex has no such switch"),
        rule(Form::Debug, Words::Drop, "codex has no such switch"),
        rule(Form::FallbackModel, Words::Drop, "a Claude model"),
    ],
    flags: &[
        ("--config", true),
        ("--enable", true),
        ("--disable", true),
        ("--remote", true),
        ("--remote-auth-token-env", true),
        ("--strict-config", false),
        ("-i", true),
        ("--image", true),
        ("-m", true),
        ("--oss", false),
        ("--local-provider", true),
        ("--profile", true),
        ("-s", true),
        ("--sandbox", true),
        ("--approve-for-me", false),
        ("--dangerously-bypass-approvals-and-sandbox", false),
        ("--dangerously-bypass-hook-trust", false),
        ("-C", true),
        ("--cd", true),
        ("--add-dir", true),
        ("-a", true),
        ("--ask-for-approval", true),
        ("--search", false),
        ("--no-alt-screen", false),
        ("--no-daemon", false),
        ("--skip-git-repo-check", false),
        ("--trust", false),
        ("--ephemeral", false),
        ("--ignore-user-config", false),
        ("--ignore-rules", false),
        ("--output-schema", true),
        ("--color", true),
        ("--json", false),
        ("-o", true),
        ("--output-last-message", true),
        ("--last", false),
        ("--all", false),
        ("-V", false),
    ],
    headless_why: "its headless run; codex's -p is --profile",
    // clap's usage error; codex's own failures exit 1.
    usage_exit: Some(2),
};
