//! Claude Code (`@anthropic-ai/claude-code`, pinned 2.1.197; research §1.1).
//!
//! - **Home**: `$CLAUDE_CONFIG_DIR`, else `~/.claude` (`Zn()` in the binary): one path.
//!   Claude Code joins it with `settings.json`, `projects/` and `.credentials.json` as it
//!   is; a comma in it is part of the directory's name, not a list (the comma lists some
//!   usage tools accept are their own convention). An empty value is taken as unset.
//! - **Credential variables**: `ANTHROPIC_API_KEY`, `ANTHROPIC_AUTH_TOKEN` (a key or a
//!   proxy's token: no subscription login) and `CLAUDE_CODE_OAUTH_TOKEN` (a subscription
//!   token, usually `claude setup-token`'s).
//! - **Login identity**: an `oauth` account's name (agent launched it and tells its
//!   statusline the name); else the configuration directory — one login per directory,
//!   also when Claude Code runs on a subscription token in `CLAUDE_CODE_OAUTH_TOKEN`:
//!   Claude Code hides that variable from its statusLine command (2.1.197 and 2.1.332), so
//!   the directory is the one name a Claude Code started by hand, its statusline and the
//!   next launch on the same token all see. An API key is no login.
//! - **Records**: transcripts under `<home>/projects/<slug>/<session>.jsonl`.
//! - **Model**: `$ANTHROPIC_MODEL`, else `model` in `<home>/settings.json`.
//! - **Trust**: `projects.<folder>.hasTrustDialogAccepted` in its global config,
//!   `$CLAUDE_CONFIG_DIR/.claude.json` else `~/.claude.json` (the interactive trust dialog
//!   writes it). `-p` never asks, so a folder's `.claude/settings.json` (hooks, `env`) runs
//!   unless `--setting-sources` leaves `project` out.
//! - **Dialect**: none: its command line is the one the user writes, the language every
//!   other CLI's dialect translates from; its flags are `dialect::CLAUDE_FLAGS`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::cli::Cli;
use super::endpoint::{EndpointDefaults, KeyVar, OpenAiBase, Scheme, WireApi};
use super::env::{Account, Env};
use super::reading::{count, json_documents, non_empty, read_json, text_of};
use super::self_check::{Said, SelfCheck, Trust, git_root};

/// The variable that moves Claude Code's configuration directory.
pub const CONFIG_DIR_VAR: &str = "CLAUDE_CONFIG_DIR";
pub const HOME_VARS: &[&str] = &[CONFIG_DIR_VAR];
/// Moves only the credentials store (new in 2.1.x): with it set, Claude Code reads its
/// login from there and not from its home.
pub const STORE_VARS: &[&str] = &["CLAUDE_SECURESTORAGE_CONFIG_DIR"];

/// A subscription token Claude Code is given in the environment.
pub const OAUTH_TOKEN_VAR: &str = "CLAUDE_CODE_OAUTH_TOKEN";
pub const CREDENTIAL_VARS: &[&str] =
    &["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", OAUTH_TOKEN_VAR];

/// What it writes to stderr when it refuses its command line (commander.js: `error: unknown option '--bogus'`, exit 1 (2.1.332)),
/// and `-p` with no prompt in its words nor on stdin ("Error: Input must be provided either
/// through stdin or as a prompt argument when using --print", exit 1).
pub const USAGE_WORDS: &[&str] = &[
    "error: unknown option",
    "error: too many arguments",
    "Input must be provided either through stdin or as a prompt argument",
];

pub const MODEL_VAR: Option<&str> = Some("ANTHROPIC_MODEL");

/// The prefix of a token's identity: `token:` and 16 hex digits of its SHA-256.
pub const TOKEN_PREFIX: &str = "token:";
const FINGERPRINT_LEN: usize = 16;

// What it reads to find its API, and where an account's secret reaches it
// (`Family::endpoint_defaults`, `Family::secret_var`).

/// The Anthropic API, with its key from the first of [`CREDENTIAL_VARS`] that is set: an
/// API key as `x-api-key`, `ANTHROPIC_AUTH_TOKEN` as a bearer, a subscription token with
/// the OAuth header; given none, its own login store.
pub fn endpoint(_env: &Env) -> EndpointDefaults {
    EndpointDefaults {
        api: WireApi::Anthropic,
        key_vars: CREDENTIAL_VARS
            .iter()
            .map(|var| KeyVar::new(var, key_scheme(var)))
            .collect(),
        openai_base: OpenAiBase::Variable,
        own_login: true,
    }
}

/// How it sends the key it reads from `var`.
fn key_scheme(var: &str) -> Scheme {
    match var {
        "ANTHROPIC_API_KEY" => Scheme::XApiKey,
        OAUTH_TOKEN_VAR => Scheme::OAuth,
        _ => Scheme::Bearer,
    }
}

/// An account's secret: a subscription token in its own variable, a key in
/// `ANTHROPIC_API_KEY`.
pub fn secret_var(is_subscription_token: bool) -> &'static str {
    if is_subscription_token {
        OAUTH_TOKEN_VAR
    } else {
        "ANTHROPIC_API_KEY"
    }
}

/// Claude Code's configuration directory in `env`.
pub fn home(env: &Env) -> Option<PathBuf> {
    match env.get(CONFIG_DIR_VAR) {
        Some(dir) => Some(PathBuf::from(dir)),
        None => env.home().map(|home| home.join(".claude")),
    }
}

/// The identity of the login Claude Code runs on in `env` (see the module's doc).
pub fn login_identity(env: &Env, account: Option<Account>) -> Option<String> {
    match account {
        Some(account) if account.is_login => return Some(format!("account:{}", account.name)),
        Some(_) => return None,
        None => {}
    }
    // The first credential variable set is what Claude Code sends: a key is no login; a
    // subscription token (in its own variable, or `sk-ant-oat…` in another) is a login
    // named, like a stored one, by the directory it runs in — the name its statusline can
    // see (the token it cannot).
    let given = CREDENTIAL_VARS
        .iter()
        .find_map(|var| env.get(var).map(|value| (*var, value)));
    match given {
        Some((var, token)) if var != OAUTH_TOKEN_VAR && !is_subscription_token(&token) => None,
        _ => home(env).map(|dir| dir.to_string_lossy().into_owned()),
    }
}

/// A token's identity: `token:` and the first 16 hex digits of its SHA-256 — the same
/// token always gives the same name, and the name gives nothing of the token away.
pub fn token_identity(token: &str) -> String {
    let digest = crate::digest::sha256_hex(token.trim().as_bytes());
    format!("{TOKEN_PREFIX}{}", &digest[..FINGERPRINT_LEN])
}

/// A Claude subscription token (`claude setup-token`'s or a login's access token).
pub fn is_subscription_token(value: &str) -> bool {
    value.trim().starts_with("sk-ant-oat")
}

/// Whether `identity` is a token's fingerprint as [`token_identity`] spells it.
pub fn is_token_identity(identity: &str) -> bool {
    identity.strip_prefix(TOKEN_PREFIX).is_some_and(|hex| {
        hex.len() == FINGERPRINT_LEN && hex.bytes().all(|b| b.is_ascii_hexdigit())
    })
}

/// Where Claude Code writes its transcripts.
pub fn records(env: &Env) -> Vec<PathBuf> {
    home(env)
        .map(|dir| dir.join("projects"))
        .into_iter()
        .collect()
}

pub fn model_settings(env: &Env) -> Option<PathBuf> {
    home(env).map(|dir| dir.join("settings.json"))
}

pub fn settings_model(env: &Env) -> Option<String> {
    let settings = read_json(&model_settings(env)?)?;
    non_empty(settings.get("model")?.as_str()?)
}

/// The directories of past transcripts the usage report reads: the home's `projects/`,
/// and with no `CLAUDE_CONFIG_DIR` also `$XDG_CONFIG_HOME/claude/projects` (else
/// `~/.config/claude/projects`), where releases before 1.0.30 kept them.
pub fn transcript_history(env: &Env) -> Vec<PathBuf> {
    if env.get(CONFIG_DIR_VAR).is_some() {
        return records(env);
    }
    let Some(home) = env.home() else {
        return Vec::new();
    };
    let xdg = env
        .get("XDG_CONFIG_HOME")
        .map_or_else(|| home.join(".config"), PathBuf::from);
    let mut roots = vec![xdg.join("claude/projects")];
    roots.extend(records(env));
    roots
}

/// What agent knows of Claude Code.
pub const CLI: Cli = Cli {
    name: "claude",
    display_name: "Claude Code",
    home_vars: HOME_VARS,
    home,
    store_vars: STORE_VARS,
    credential_vars: CREDENTIAL_VARS,
    withholds_foreign_keys: true,
    provider_key_var: super::cli::nothing,
    login_identity,
    login_known_by_home: true,
    login_command: Some(login_command),
    // It may run on what agent cannot see (a Keychain item, an apiKeyHelper): never guessed.
    not_set_up: super::cli::nothing,
    records,
    usage_words: USAGE_WORDS,
    model_var: MODEL_VAR,
    model_settings,
    settings_model,
    endpoint,
    secret_var: |_env, is_subscription_token| secret_var(is_subscription_token).to_string(),
    headers_var: Some(HEADERS_VAR),
    runs_agents_statusline: true,
    reports_own_quota: false,
    needs_terminal: false,
    self_check: &SELF_CHECK,
    prints_claudes_result: true,
    // Its words are the source language.
    dialect: None,
    // 2.1.332 `--help`: `--session-id <uuid>`, `-r, --resume [value]`.
    takes_a_session_id: true,
};

/// Its own check (DESIGN §17), measured with 2.1.332 against the mock
/// (`tests/fixtures/self_check/claude-*`): `claude -p PROMPT --output-format json` prints one
/// JSON `result` document on stdout — `result` (the answer, or its error text), `is_error`,
/// `api_error_status`, `session_id` and `usage` — and exits 1 on any failure; stderr holds
/// only its own notes (`[claude-code:unrecognized_model] …` for a model it does not know).
pub const SELF_CHECK: SelfCheck = SelfCheck {
    args: &["-p", "PROMPT", "--output-format", "json"],
    read: read_self_check,
    limit: &[
        "you've hit your",
        "usage limit",
        "usage_limit_reached",
        "out of usage",
        "out of extra usage",
        "credit balance is too low",
    ],
    rate_limited: &["not your usage limit", "temporarily limiting requests"],
    auth: &[
        "not logged in",
        "please run /login",
        "invalid api key",
        "authentication_error",
        "authentication_failed",
        "oauth token has expired",
        "token has been revoked",
    ],
    auth_fix: "log Claude Code in again: run `claude` and type /login (for a token: `claude setup-token`)",
    untrusted: &[],
    untrusted_exit: None,
    untrusted_fix: "",
    failure: &["api error", "\"is_error\":true"],
    trust,
    // No built-in tool (`--tools ""`), and only the MCP servers of a `--mcp-config`, of
    // which there is none: every server of the user's, the project's and claude.ai's is off.
    no_tools_args: &["--tools", "", "--strict-mcp-config"],
    // The user's own settings (their login, their hooks) stay; the folder's do not (its MCP
    // servers are off in every check).
    scratch_args: &["--setting-sources", "user"],
    scratch_env: &[],
    one_call_args: &[],
    warm_scratch: false,
};

/// Set, no record of trust counts (Claude Code's own rule).
const IGNORE_TRUST_VAR: &str = "CLAUDE_CODE_IGNORE_PERSISTED_TRUST";

/// Its global config, where the trust dialog's answers are kept.
fn global_config(env: &Env) -> Option<PathBuf> {
    match env.get(CONFIG_DIR_VAR) {
        Some(dir) => Some(PathBuf::from(dir).join(".claude.json")),
        None => env.home().map(|home| home.join(".claude.json")),
    }
}

/// Claude Code's rule (2.1.332, `sD`/`xh` in its bundle): a folder is trusted when its
/// project's entry (the git repository's root) says so, or the folder's own or any parent's
/// up to that root (up to `/` outside a repository). It never refuses a folder headless.
fn trust(env: &Env, dir: &Path, _args: &[OsString]) -> Trust {
    if env.get(IGNORE_TRUST_VAR).is_some() {
        return Trust::Untrusted;
    }
    let Some(config) = global_config(env).and_then(|path| read_json(&path)) else {
        return Trust::Untrusted;
    };
    let accepted = |folder: &Path| {
        folder.to_str().is_some_and(|key| {
            config
                .pointer("/projects")
                .and_then(|projects| projects.get(key))
                .and_then(|project| project.get("hasTrustDialogAccepted"))
                .and_then(serde_json::Value::as_bool)
                == Some(true)
        })
    };
    let root = git_root(dir);
    let within_root = |folder: &&Path| root.is_none_or(|root| folder.starts_with(root));
    if root.is_some_and(accepted) || dir.ancestors().take_while(within_root).any(accepted) {
        Trust::Trusted
    } else {
        Trust::Untrusted
    }
}

/// Its `--output-format json` document: the answer or its error in `result`, the session
/// and the usage of the run.
fn read_self_check(stdout: &str, _stderr: &str) -> Said {
    let mut said = Said::default();
    let Some(doc) = json_documents(stdout)
        .into_iter()
        .rfind(|doc| doc.get("type").and_then(|t| t.as_str()) == Some("result"))
    else {
        return said;
    };
    let result = text_of(doc.get("result"));
    if doc.get("is_error").and_then(serde_json::Value::as_bool) == Some(true) {
        said.error = Some(result.unwrap_or_else(|| "is_error".to_string()));
    } else {
        said.answer = result;
    }
    said.session = text_of(doc.get("session_id"));
    said.tokens = doc.get("usage").map(|usage| crate::tokens::Tokens {
        input: count(usage.get("input_tokens")),
        output: count(usage.get("output_tokens")),
        reasoning: 0,
        cache_read: count(usage.get("cache_read_input_tokens")),
        cache_write: count(usage.get("cache_creation_input_tokens")),
    });
    said
}

/// The command that logs Claude Code in in `dir`: it keeps that login there. `None`: its
/// default home, logged in as typing `claude` does (a `CLAUDE_CONFIG_DIR` naming the
/// default would make it read another `.claude.json` and another Keychain item).
pub fn login_command(dir: Option<&str>) -> String {
    match dir {
        Some(dir) => format!("{CONFIG_DIR_VAR}={dir} claude, then /login"),
        None => "claude, then /login".to_string(),
    }
}

/// Strips Claude Code's context suffix (`opus[1m]` → `opus`): the API knows the bare model.
pub fn bare_model(model: &str) -> &str {
    model.split_once('[').map_or(model, |(bare, _)| bare)
}

/// Claude Code sends every `Name: value` line of this variable as a header on each API call.
pub const HEADERS_VAR: &str = "ANTHROPIC_CUSTOM_HEADERS";

/// The key a Claude Code's login is known by from inside it (its statusline command, whose
/// environment `env` is Claude Code's own): the login agent `told` it by name when it
/// launched it on a token (Claude Code hides the token from that command), else its
/// adapter's key of `env` — the token's fingerprint when the token is seen, else its
/// configuration directory, which a key in the environment does not change: the feed
/// still speaks of that directory's login.
pub fn login_key_from_inside(told: Option<&str>, env: &Env) -> String {
    if let Some(identity) = told {
        return CLI.key(identity);
    }
    CLI.login_key(env, None).unwrap_or_else(|| {
        let dir = home(env).unwrap_or_default();
        CLI.key(&dir.to_string_lossy())
    })
}

/// The key of a subscription `token` given to Claude Code in a variable or by the pool
/// `account`: the login `env` names it by, else the token's own fingerprint.
pub fn token_login_key(env: &Env, account: Option<Account>, token: &str) -> String {
    CLI.login_key(env, account)
        .unwrap_or_else(|| CLI.key(&token_identity(token)))
}
