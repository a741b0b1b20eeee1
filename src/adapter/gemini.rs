//! Gemini CLI (`@google/gemini-cli`, pinned 0.61.0; research §3).
//!
//! - **Home**: `$GEMINI_CLI_HOME/.gemini`, else `~/.gemini` (the variable replaces the home
//!   directory, `homedir()` in the bundle): login, settings and chats all live there.
//! - **Credential variables**: `GEMINI_API_KEY`, `GOOGLE_API_KEY`.
//! - **Login identity**: its home (one Google login per home).
//! - **Records**: chats under `<home>/tmp/<project>/chats/`.
//! - **Model**: `$GEMINI_MODEL`, else `model.name` (older: `model`) in
//!   `<home>/settings.json`.
//! - **Trust**: `<home>/trustedFolders.json` (or `$GEMINI_CLI_TRUSTED_FOLDERS_PATH`), a map
//!   of folder to `TRUST_FOLDER`, `TRUST_PARENT` or `DO_NOT_TRUST`; headless, it refuses
//!   (exit 55) a folder no rule trusts while `security.folderTrust.enabled` (default true).
//! - **Dialect**: Claude Code's command line in its words ([`DIALECT`]): the prompt is the
//!   value of `--prompt` (headless) or `--prompt-interactive`, `-c` is `--resume latest`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::cli::Cli;
use super::dialect::Mode::{Headless, Interactive};
use super::dialect::Session::{ById, Last, New};
use super::dialect::{Dialect, Form, Prompt, SESSION_ID, Words, rule, start};
use super::endpoint::{EndpointDefaults, KeyVar, OpenAiBase, Scheme, WireApi};
use super::env::{Account, Env};
use super::reading::{count, non_empty, read_json, text_of};
use super::self_check::{Said, SelfCheck, Trust, has_word};

pub const HOME_VAR: &str = "GEMINI_CLI_HOME";
pub const HOME_VARS: &[&str] = &[HOME_VAR];
pub const CREDENTIAL_VARS: &[&str] = &["GEMINI_API_KEY", "GOOGLE_API_KEY"];
/// What it writes to stderr when it refuses its command line (yargs: `Unknown arguments:
/// bogus`, `Invalid values:` for a value it does not take; exit 1 (0.61)).
pub const USAGE_WORDS: &[&str] = &[
    "Unknown argument",
    "Invalid values:",
    "Not enough arguments following",
    // A headless run with no prompt: "No input provided via stdin. Input can be provided by
    // piping data into gemini or using the --prompt option." (exit 1).
    "No input provided via stdin",
];

pub const MODEL_VAR: Option<&str> = Some("GEMINI_MODEL");

/// Why a personal Google login is not a rung any more. Google stopped serving Gemini CLI's
/// "Login with Google" for individual accounts (free, Google AI Pro, Ultra) on 2026-06-18:
/// the login fails with "This client is no longer supported for Gemini Code Assist for
/// individuals … migrate to the Antigravity suite" (research §3: gemini-cli#28229, #29279,
/// PR #28905; developers.google.com/gemini-code-assist/docs/deprecations/code-assist-individuals).
/// API keys, Vertex AI and Code Assist Standard/Enterprise licences still work.
pub const PERSONAL_LOGIN_GONE: &str = "Gemini CLI no longer serves personal Google logins (since 2026-06-18); a Google AI subscription runs in Antigravity: install agy";

/// The variables that name the Google Cloud project a Google login runs in
/// (`GOOGLE_CLOUD_PROJECT`, else `GOOGLE_CLOUD_PROJECT_ID`, research §3.1). A personal
/// login and a Code Assist licence both select `oauth-personal` and keep the same
/// `oauth_creds.json` (it names no plan): no local file tells them apart. Only the tier
/// `loadCodeAssist` answers would, and agent does not call Google with the CLI's token
/// (research §3.3). The documented rule decides: an organisation's login (Workspace, Code
/// Assist Standard/Enterprise) needs a project set, an individual's does not
/// (geminicli.com/docs/get-started/authentication, "Google Cloud Project Required": "Yes"
/// for organisation users; the CLI refuses such an account without it: "This account
/// requires setting the GOOGLE_CLOUD_PROJECT env var"). So a Google login with a project
/// set is a licence, one without is personal.
pub const PROJECT_VARS: &[&str] = &["GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_PROJECT_ID"];

// What it reads to find its API, and where an account's secret reaches it
// (`Family::endpoint_defaults`, `Family::secret_var`).

/// Google's Gemini API, with its key from the first of [`CREDENTIAL_VARS`] that is set
/// (`x-goog-api-key`); given none, its own Google login.
pub fn endpoint(_env: &Env) -> EndpointDefaults {
    EndpointDefaults {
        api: WireApi::Gemini,
        key_vars: CREDENTIAL_VARS
            .iter()
            .map(|var| KeyVar::new(var, Scheme::GoogApiKey))
            .collect(),
        openai_base: OpenAiBase::Variable,
        own_login: true,
    }
}

/// An account's secret (a key, whatever the account's kind).
pub const SECRET_VAR: &str = "GEMINI_API_KEY";

pub fn home(env: &Env) -> Option<PathBuf> {
    let home = match env.get(HOME_VAR) {
        Some(home) => PathBuf::from(home),
        None => env.home()?,
    };
    Some(home.join(".gemini"))
}

pub fn login_identity(env: &Env, account: Option<Account>) -> Option<String> {
    if account.is_some() || CREDENTIAL_VARS.iter().any(|var| env.get(var).is_some()) {
        return None;
    }
    home(env).map(|dir| dir.to_string_lossy().into_owned())
}

pub fn records(env: &Env) -> Vec<PathBuf> {
    home(env).map(|dir| dir.join("tmp")).into_iter().collect()
}

pub fn model_settings(env: &Env) -> Option<PathBuf> {
    home(env).map(|dir| dir.join("settings.json"))
}

pub fn settings_model(env: &Env) -> Option<String> {
    let settings = read_json(&model_settings(env)?)?;
    // Current releases nest it as model.name; older ones kept a plain string.
    match settings.get("model")? {
        serde_json::Value::String(name) => non_empty(name),
        value => non_empty(value.get("name")?.as_str()?),
    }
}

/// What agent knows of Gemini CLI.
pub const CLI: Cli = Cli {
    name: "gemini",
    display_name: "Gemini CLI",
    home_vars: HOME_VARS,
    home,
    store_vars: &[],
    credential_vars: CREDENTIAL_VARS,
    withholds_foreign_keys: true,
    provider_key_var: super::cli::nothing,
    login_identity,
    login_known_by_home: false,
    login_command: Some(login_command),
    // Without a login or key in its store it is not set up by its endpoint (PlanError::not_set_up).
    not_set_up: super::cli::nothing,
    records,
    usage_words: USAGE_WORDS,
    model_var: MODEL_VAR,
    model_settings,
    settings_model,
    endpoint,
    secret_var: |_, _| SECRET_VAR.to_string(),
    headers_var: None,
    runs_agents_statusline: false,
    reports_own_quota: false,
    needs_terminal: false,
    self_check: &SELF_CHECK,
    prints_claudes_result: false,
    dialect: Some(&DIALECT),
    // 0.61 `--help`: "--session-id  Start a new session with a manually provided UUID."
    takes_a_session_id: true,
};

/// Its own check (DESIGN §17), measured with 0.61.0 against the mock
/// (`tests/fixtures/self_check/gemini-*`): `gemini -m M -o json -p PROMPT` prints one JSON
/// document — `session_id`, `response`, `stats.models.<model>.tokens` — on stdout and exits
/// 0; a failure prints a stack trace and then `{"session_id", "error": {"message", "code"}}`
/// on **stderr**, and exits 128 + the HTTP status it got (144 for a 400 "API key not valid",
/// 173 for a 429 quota); in a folder it does not trust it exits 55 at once (41 is its bad
/// auth setup).
pub const SELF_CHECK: SelfCheck = SelfCheck {
    args: &["-p", "PROMPT", "--output-format", "json"],
    read: read_self_check,
    limit: &[
        "quota exceeded",
        "resource_exhausted",
        "terminalquotaerror",
        "exhausted your",
        "usage limit",
    ],
    rate_limited: &[],
    auth: &[
        "api key not valid",
        "api_key_invalid",
        "unauthenticated",
        "permission_denied",
        "please set an auth method",
        "login with google",
        "invalid_grant",
    ],
    auth_fix: "sign Gemini CLI in again: run `gemini` and choose /auth (or give the backend a GEMINI_API_KEY)",
    untrusted: &["not running in a trusted directory"],
    untrusted_exit: Some(55),
    untrusted_fix: "trust {dir} in Gemini CLI: run `gemini` in it and choose to trust the folder (Gemini CLI adds it to its trustedFolders.json)",
    failure: &[
        "error when talking to gemini api",
        "an unexpected critical error occurred",
    ],
    trust,
    // `gemini --help` (0.61) names no flag that turns its tools off; what an empty
    // `--allowed-mcp-server-names` does is not measured, so nothing is passed.
    no_tools_args: &[],
    scratch_args: &[],
    scratch_env: &[],
    one_call_args: &[],
    warm_scratch: false,
};

/// The variable that trusts (`true`) or distrusts (`false`) every folder.
const TRUST_WORKSPACE_VAR: &str = "GEMINI_CLI_TRUST_WORKSPACE";

/// Gemini CLI's rule (0.61, `checkPathTrust` and `folderTrustCheck` in its bundle), in its
/// order: restricted mode distrusts everything; the variable trusts everything; folder trust
/// turned off trusts everything; else the longest rule of `trustedFolders.json` that holds
/// the folder decides, and a headless run in a folder no rule trusts is refused. Only a rule
/// naming the folder lets agent's check run there.
fn trust(env: &Env, dir: &Path, args: &[OsString]) -> Trust {
    let refused = || {
        Trust::Refused(format!(
            "gemini does not trust this folder ({})",
            dir.display()
        ))
    };
    let variable = env.get(TRUST_WORKSPACE_VAR);
    if env.get("GEMINI_RESTRICTED_MODE").as_deref() == Some("true")
        || variable.as_deref() == Some("false")
    {
        return refused();
    }
    if folder_rule(env, dir) == Some(true) {
        return Trust::Trusted;
    }
    let trusted_anyway = variable.as_deref() == Some("true")
        || has_word(args, &["--skip-trust"])
        || !folder_trust_enabled(env);
    if trusted_anyway {
        Trust::Untrusted
    } else {
        refused()
    }
}

/// Where Gemini CLI keeps its trusted folders.
fn trusted_folders(env: &Env) -> Option<PathBuf> {
    match env.get("GEMINI_CLI_TRUSTED_FOLDERS_PATH") {
        Some(path) => Some(PathBuf::from(path)),
        None => home(env).map(|dir| dir.join("trustedFolders.json")),
    }
}

/// What the longest rule holding `dir` says: trusted, distrusted, or `None` (no rule, or a
/// file Gemini CLI itself would refuse).
fn folder_rule(env: &Env, dir: &Path) -> Option<bool> {
    let rules = read_json(&trusted_folders(env)?)?;
    let real = |path: &Path| std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let dir = real(dir);
    let mut longest: Option<(usize, bool)> = None;
    for (rule, level) in rules.as_object()? {
        let (folder, trusted) = match level.as_str()? {
            "TRUST_FOLDER" => (PathBuf::from(rule), true),
            "TRUST_PARENT" => (Path::new(rule).parent()?.to_path_buf(), true),
            "DO_NOT_TRUST" => (PathBuf::from(rule), false),
            _ => return None,
        };
        if folder.is_absolute()
            && dir.starts_with(real(&folder))
            && longest.is_none_or(|(length, _)| rule.len() > length)
        {
            longest = Some((rule.len(), trusted));
        }
    }
    longest.map(|(_, trusted)| trusted)
}

/// `security.folderTrust.enabled` in the user's settings (default true).
fn folder_trust_enabled(env: &Env) -> bool {
    model_settings(env)
        .and_then(|path| read_json(&path))
        .and_then(|settings| {
            settings
                .pointer("/security/folderTrust/enabled")
                .and_then(serde_json::Value::as_bool)
        })
        .unwrap_or(true)
}

/// Its JSON document: the answer (stdout) or its error (the last document on stderr), the
/// session, and the tokens of every model it called (the prompt count includes the cached
/// part, thoughts are apart from candidates).
fn read_self_check(stdout: &str, stderr: &str) -> Said {
    let mut said = Said::default();
    let last_document = |text: &str| {
        text.match_indices("\n{")
            .map(|(at, _)| at + 1)
            .chain(text.starts_with('{').then_some(0))
            .find_map(|at| serde_json::from_str::<serde_json::Value>(text[at..].trim()).ok())
    };
    if let Some(doc) = last_document(stdout) {
        said.answer = text_of(doc.get("response"));
        said.session = text_of(doc.get("session_id"));
        if let Some(models) = doc.pointer("/stats/models").and_then(|m| m.as_object()) {
            let mut tokens = crate::tokens::Tokens::default();
            for model in models.values() {
                let count = |name: &str| count(model.pointer(&format!("/tokens/{name}")));
                let cached = count("cached");
                tokens += &crate::tokens::Tokens {
                    input: (count("prompt") + count("tool")).saturating_sub(cached),
                    output: count("candidates"),
                    reasoning: count("thoughts"),
                    cache_read: cached,
                    cache_write: 0,
                };
            }
            said.tokens = Some(tokens);
        }
        if let Some(error) = doc.get("error") {
            said.error = text_of(error.get("message")).or(Some("error".into()));
        }
    }
    if said.error.is_none()
        && let Some(doc) = last_document(stderr)
        && let Some(error) = doc.get("error")
    {
        said.error = text_of(error.get("message")).or(Some("error".into()));
        said.session = said.session.or_else(|| text_of(doc.get("session_id")));
    }
    said
}

/// The command that logs Gemini CLI in with a Google login kept under `dir` (`None`: its
/// default home).
pub fn login_command(dir: Option<&str>) -> String {
    match dir {
        Some(dir) => format!("{HOME_VAR}={dir} gemini, then type /auth"),
        None => "gemini, then type /auth".to_string(),
    }
}

/// Its dialect: Claude Code's command line in Gemini CLI's words, as its `--help` says them
/// at the version named (`tests/fixtures/help/gemini-*.txt`).
pub const DIALECT: Dialect = Dialect {
    command: "gemini",
    label: "Gemini CLI",
    checked: "0.61.0",
    starts: &[
        start(Interactive, New, &[], &[]),
        start(Interactive, Last, &["--resume", "latest"], &[]),
        start(Headless, New, &[], &[]),
        start(Headless, Last, &["--resume", "latest"], &[]),
        start(Interactive, ById, &["--resume", SESSION_ID], &[]),
        start(Headless, ById, &["--resume", SESSION_ID], &[]),
    ],
    // Gemini CLI 0.61 drops the words after its `--`, refuses a positional prompt beside
    // -p, and reads a lone positional word as a sub-command (`mcp`, `hooks`): the prompt
    // is the value of its prompt flags, in one word.
    prompt: [
        Prompt::Flag("--prompt-interactive"),
        Prompt::Flag("--prompt"),
    ],
    model_flag: "-m",
    model_needs_provider: false,
    rules: &[
        rule(
            Form::SessionId,
            Words::Say(&["--session-id"]),
            "the same: a new session under this id",
        ),
        rule(
            Form::OutputFormat,
            Words::Say(&["-o"]),
            "for json agent writes Claude Code's result document from its own",
        ),
        rule(Form::SkipPermissions, Words::Say(&["--yolo"]), ""),
        rule(
            Form::PermissionMode,
            Words::Values(&[
                ("default", &["--approval-mode", "default"]),
                ("acceptEdits", &["--approval-mode", "auto_edit"]),
                ("plan", &["--approval-mode", "plan"]),
                ("bypassPermissions", &["--yolo"]),
            ]),
            "",
        ),
        rule(Form::AddDir, Words::Say(&["--include-directories"]), ""),
        rule(Form::Verbose, Words::Drop, "Gemini CLI has no such switch"),
        rule(
            Form::Debug,
            Words::Drop,
            "Gemini CLI's --debug opens a debug console",
        ),
        rule(Form::FallbackModel, Words::Drop, "a Claude model"),
    ],
    flags: &[
        ("--debug", false),
        ("-m", true),
        ("--prompt", true),
        ("-i", true),
        ("--prompt-interactive", true),
        ("--skip-trust", false),
        ("--worktree", true),
        ("-s", false),
        ("--sandbox", false),
        ("-y", false),
        ("--yolo", false),
        ("--approval-mode", true),
        ("--policy", true),
        ("--admin-policy", true),
        ("--acp", false),
        ("--experimental-acp", false),
        ("--allowed-mcp-server-names", true),
        ("-e", true),
        ("--extensions", true),
        ("-l", false),
        ("--list-extensions", false),
        ("--session-file", true),
        ("--session-id", true),
        ("--list-sessions", false),
        ("--delete-session", true),
        ("--include-directories", true),
        ("--screen-reader", false),
        ("-o", true),
        ("--raw-output", false),
        ("--accept-raw-output-risk", false),
    ],
    headless_why: "",
    // yargs exits 1 ("Unknown argument: …"), as Gemini CLI's own failures do.
    usage_exit: None,
};
