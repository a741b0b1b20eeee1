//! What agent knows about opencode (`opencode-ai` on npm, DESIGN §16). Measured with
//! 1.18.33:
//!
//! - **Home.** Its data lives in `$XDG_DATA_HOME/opencode` (default
//!   `~/.local/share/opencode`), its settings in `$XDG_CONFIG_HOME/opencode` (default
//!   `~/.config/opencode`, `opencode.json`). `OPENCODE_CONFIG` names another settings file,
//!   `OPENCODE_CONFIG_DIR` another settings directory, `OPENCODE_CONFIG_CONTENT` is a whole
//!   settings document in a variable, and `OPENCODE_DB` another database.
//! - **Login.** `opencode providers login` (alias `auth`) writes `auth.json` in its data
//!   directory (0600): one entry per provider id, `{"type": "api", "key": …}`,
//!   `{"type": "oauth", "refresh": …, "access": …, "expires": <epoch ms>, "accountId"?}`
//!   or `{"type": "wellknown", "key": <variable>, "token": …}`. `OPENCODE_AUTH_CONTENT`
//!   replaces the file with a document of the same shape. agent reads which providers have
//!   a login, of which kind, and until when — never a key or a token.
//! - **Records.** A SQLite database, `opencode.db` in its data directory (written through
//!   a WAL: the rows may still be in `opencode.db-wal`). Table `message`: `id`,
//!   `session_id`, `time_created` (epoch ms) and `data`, a JSON document; an assistant's is
//!   `{"role": "assistant", "providerID": "mock", "modelID": "gpt-x", "tokens": {"total",
//!   "input", "output", "reasoning", "cache": {"read", "write"}}, "cost", "time":
//!   {"created", "completed"}, "finish": "stop", …}`. agent has no SQLite reader: it asks
//!   the CLI's own `opencode db QUERY --format json` ([`USAGE_QUERY`]), a bounded child.
//! - **Headless.** `opencode run [message..]` prints the answer on stdout and exits 0; a
//!   refused call (401) prints `Error: …` on stderr and exits 1. `-m/--model
//!   provider/model` is taken before or after `run`; `-p` is `--password`, not a prompt.
//!   It honours a `retry-after` however long (an hour's sleeps an hour), so the fast-fail
//!   net does not see it fail: its probe runs it with the probe's timeout.
//! - **Dialect.** Claude Code's command line in its words ([`DIALECT`]): `-p` is `run`, the
//!   TUI's prompt is `--prompt` (its positional is a project path), models are
//!   `provider/model`.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::cli::Cli;
use super::dialect::Mode::{Headless, Interactive};
use super::dialect::Session::{ById, Last, New};
use super::dialect::{Dialect, Form, Prompt, SESSION_ID, Words, rule, start};
use super::reading::{count, json_documents, non_empty, text_of};
use super::self_check::{Said, SelfCheck, never_trusted};

/// Its command.
pub const COMMAND: &str = "opencode";

/// What it writes to stderr when it refuses its command line: an unknown flag prints its
/// help and nothing else; `run` with no message says "Error: You must provide a message or
/// a command" (exit 1, in its own colours).
pub const USAGE_WORDS: &[&str] = &["You must provide a message or a command"];

/// The variable that moves its home (its data directory: login store and records). Its
/// settings move with `XDG_CONFIG_HOME`, `OPENCODE_CONFIG`, `OPENCODE_CONFIG_DIR` and
/// `OPENCODE_CONFIG_CONTENT`, its database alone with `OPENCODE_DB`.
pub const HOME_VARIABLES: &[&str] = &["XDG_DATA_HOME"];

/// The variables that carry a credential for it (besides each provider's own key
/// variable, e.g. `ANTHROPIC_API_KEY`, which it reads too).
pub const CREDENTIAL_VARIABLES: &[&str] = &["OPENCODE_AUTH_CONTENT", "OPENCODE_API_KEY"];

// What it reads to find its API, and where an account's secret reaches it
// (`Family::endpoint_defaults`, `Family::secret_var`).

/// It calls whichever provider its own settings name; agent takes it as an OpenAI-style
/// CLI (`OPENAI_BASE_URL`, `OPENAI_API_KEY`) when a check must reach its vendor's API.
pub fn endpoint() -> super::endpoint::EndpointDefaults {
    super::endpoint::EndpointDefaults::openai_style()
}

/// An account's secret: the OpenAI-style key, one of the provider variables it reads.
pub const SECRET_VAR: &str = "OPENAI_API_KEY";

/// The query `--usage` asks `opencode db` for: every assistant message with its time and
/// data (tokens, provider, model).
pub const USAGE_QUERY: &str = "SELECT id, session_id, time_created, data FROM message \
     WHERE json_extract(data, '$.role') = 'assistant'";

/// Its data directory in `env` (its home: login store and records).
pub fn home(env: &super::env::Env) -> Option<PathBuf> {
    data_dir_from(env.get("XDG_DATA_HOME").map(PathBuf::from), env.home())
}

/// Its data directory: `$XDG_DATA_HOME/opencode`, else `~/.local/share/opencode`.
pub fn data_dir() -> Option<PathBuf> {
    data_dir_from(
        std::env::var_os("XDG_DATA_HOME").map(PathBuf::from),
        crate::paths::home(),
    )
}

/// Its settings directory: `$XDG_CONFIG_HOME/opencode`, else `~/.config/opencode`.
pub fn config_dir() -> Option<PathBuf> {
    xdg_dir(
        std::env::var_os("XDG_CONFIG_HOME").map(PathBuf::from),
        crate::paths::home(),
        ".config",
    )
}

fn data_dir_from(xdg: Option<PathBuf>, home: Option<PathBuf>) -> Option<PathBuf> {
    xdg_dir(xdg, home, ".local/share")
}

/// `$XDG_…/opencode` when the variable is an absolute path (the XDG rule), else
/// `~/<fallback>/opencode`.
fn xdg_dir(xdg: Option<PathBuf>, home: Option<PathBuf>, fallback: &str) -> Option<PathBuf> {
    match xdg.filter(|dir| dir.is_absolute()) {
        Some(dir) => Some(dir.join(COMMAND)),
        None => Some(home?.join(fallback).join(COMMAND)),
    }
}

/// Its login store, `auth.json` in its data directory.
pub fn auth_path(data_dir: &Path) -> PathBuf {
    data_dir.join("auth.json")
}

/// Its records, `opencode.db` in its data directory (or `OPENCODE_DB`).
pub fn database(data_dir: &Path) -> PathBuf {
    match std::env::var_os("OPENCODE_DB").filter(|db| !db.is_empty()) {
        Some(db) => PathBuf::from(db),
        None => data_dir.join("opencode.db"),
    }
}

/// How a provider is logged in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoginKind {
    /// An API key kept in the store.
    ApiKey,
    /// A subscription or account login (OAuth), with when its access token expires.
    OAuth { expires_ms: Option<i64> },
    /// A token from an organisation's well-known endpoint, exported as a variable.
    WellKnown,
}

/// One provider's login: its id and kind. The key or token itself is never read out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Login {
    pub provider: String,
    pub kind: LoginKind,
}

/// The logins in `auth.json` under `data_dir` (or in `OPENCODE_AUTH_CONTENT` when set, as
/// opencode itself prefers it), by provider id; entries of unknown shape are left out. The
/// store is read as every CLI's login store is ([`crate::bounded_read`]): a regular file
/// within its cap, else none.
pub fn logins(data_dir: &Path) -> Vec<Login> {
    let store = match std::env::var("OPENCODE_AUTH_CONTENT") {
        Ok(content) if !content.trim().is_empty() => serde_json::from_str(&content).ok(),
        _ => crate::bounded_read::json(&auth_path(data_dir), crate::bounded_read::LOGIN),
    };
    store.as_ref().map(logins_in).unwrap_or_default()
}

/// The logins one store document names.
pub fn logins_in(store: &Value) -> Vec<Login> {
    let Some(entries) = store.as_object() else {
        return Vec::new();
    };
    entries
        .iter()
        .filter_map(|(provider, entry)| {
            let has = |field: &str| entry.get(field).is_some_and(Value::is_string);
            let kind = match entry.get("type").and_then(Value::as_str)? {
                "api" if has("key") => LoginKind::ApiKey,
                "oauth" if has("access") || has("refresh") => LoginKind::OAuth {
                    expires_ms: entry.get("expires").and_then(Value::as_i64),
                },
                "wellknown" if has("token") => LoginKind::WellKnown,
                _ => return None,
            };
            Some(Login {
                provider: crate::text::printable(provider.trim_end_matches('/')),
                kind,
            })
        })
        .collect()
}

/// Variables other than a provider's `…_API_KEY` that give opencode a provider to run on
/// (Amazon Bedrock's and Google Vertex AI's own).
const OTHER_PROVIDER_VARIABLES: &[&str] = &[
    "AWS_BEARER_TOKEN_BEDROCK",
    "AWS_ACCESS_KEY_ID",
    "AWS_PROFILE",
    "GOOGLE_APPLICATION_CREDENTIALS",
];

/// Its settings files in `env`, in the order it reads them: the global ones in its settings
/// directory, `OPENCODE_CONFIG_DIR`'s, and `OPENCODE_CONFIG`.
fn settings_files(env: &super::env::Env) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = xdg_dir(
        env.get("XDG_CONFIG_HOME").map(PathBuf::from),
        env.home(),
        ".config",
    )
    .into_iter()
    .collect();
    dirs.extend(env.get("OPENCODE_CONFIG_DIR").map(PathBuf::from));
    let mut files: Vec<PathBuf> = dirs
        .iter()
        .flat_map(|dir| {
            ["config.json", "opencode.json", "opencode.jsonc"]
                .into_iter()
                .map(move |name| dir.join(name))
        })
        .collect();
    files.extend(env.get("OPENCODE_CONFIG").map(PathBuf::from));
    files
}

/// Whether one settings document gives it something to run: a provider, or a model. A
/// document that is not plain JSON (`opencode.jsonc` with comments) is taken as one that
/// does — agent does not claim "not set up" over what it cannot read.
fn settings_name_a_provider(text: &str) -> bool {
    let Ok(settings) = serde_json::from_str::<Value>(text) else {
        return !text.trim().is_empty();
    };
    let has_provider = settings
        .get("provider")
        .and_then(Value::as_object)
        .is_some_and(|providers| !providers.is_empty());
    let has_model = settings
        .get("model")
        .and_then(Value::as_str)
        .is_some_and(|model| !model.trim().is_empty());
    has_provider || has_model
}

/// What opencode lacks to run in `env`, read from its own files and the environment and never
/// by running it: a provider logged in (`auth.json` in its data directory, or
/// `OPENCODE_AUTH_CONTENT`), a provider's key in a variable it reads, or a provider or model in
/// its settings. With none of them it is not set up — started, it sleeps out its default
/// provider's retries until the check's timeout (10 s a `--status`, issue 43).
pub fn not_set_up(env: &super::env::Env) -> Option<String> {
    let logged_in = match env.get("OPENCODE_AUTH_CONTENT") {
        Some(content) => serde_json::from_str(&content)
            .ok()
            .is_none_or(|store: Value| !logins_in(&store).is_empty()),
        None => home(env)
            .and_then(|dir| crate::bounded_read::json(&auth_path(&dir), crate::bounded_read::LOGIN))
            .is_some_and(|store| !logins_in(&store).is_empty()),
    };
    let has_key = env.names().iter().any(|name| {
        name.ends_with("_API_KEY") || OTHER_PROVIDER_VARIABLES.contains(&name.as_str())
    });
    let configured = env
        .get("OPENCODE_CONFIG_CONTENT")
        .is_some_and(|content| settings_name_a_provider(&content))
        || settings_files(env).iter().any(|file| {
            crate::bounded_read::text(file, crate::bounded_read::SETTINGS)
                .is_some_and(|text| settings_name_a_provider(&text))
        });
    (!(logged_in || has_key || configured)).then(|| NOT_SET_UP.to_string())
}

/// What its rows say when it is not set up, with its way in.
pub const NOT_SET_UP: &str = "not set up: no provider logged in, no provider key and none in its settings — log in (opencode auth login) or set a provider's key (ANTHROPIC_API_KEY, OPENAI_API_KEY, …)";

/// What agent knows of opencode.
pub const CLI: Cli = Cli {
    name: COMMAND,
    display_name: "opencode",
    home_vars: HOME_VARIABLES,
    home,
    store_vars: &[],
    credential_vars: CREDENTIAL_VARIABLES,
    // It reads every provider's own variable.
    withholds_foreign_keys: false,
    provider_key_var: super::cli::nothing,
    // Its logins are per provider, and none reports a window agent parks by.
    login_identity: |_, _| None,
    login_known_by_home: false,
    login_command: None,
    not_set_up,
    records: |env| home(env).map(|dir| database(&dir)).into_iter().collect(),
    usage_words: USAGE_WORDS,
    model_var: None,
    model_settings: super::cli::nothing,
    settings_model: super::cli::nothing,
    endpoint: |_| endpoint(),
    secret_var: |_, _| SECRET_VAR.to_string(),
    headers_var: None,
    runs_agents_statusline: false,
    reports_own_quota: false,
    needs_terminal: false,
    self_check: &SELF_CHECK,
    prints_claudes_result: false,
    dialect: Some(&DIALECT),
    takes_a_session_id: false,
};

/// Its own check (DESIGN §17), measured with 1.18.33 against the mock
/// (`tests/fixtures/self_check/opencode-*`): `opencode run --format json -m provider/model
/// PROMPT` prints JSONL events on stdout, each with its `sessionID` — `text` (`part.text`,
/// the answer), `step_finish` (`part.tokens`: `input`, `output`, `reasoning`, `cache.read`,
/// `cache.write`), or `error` (`error.data.message`, `statusCode`) — and exits 1 on a
/// refused call.
pub const SELF_CHECK: SelfCheck = SelfCheck {
    args: &["-p", "PROMPT", "--output-format", "json"],
    read: read_self_check,
    limit: &[
        "insufficient_quota",
        "usage limit",
        "quota exceeded",
        // The provider's own words, which opencode prints as they are (`Error: You
        // exceeded your current quota, please check your plan and billing details.`).
        "exceeded your current quota",
        "credit balance is too low",
    ],
    rate_limited: &["rate_limit_exceeded", "rate limit reached"],
    auth: &[
        "\"statuscode\":401",
        "\"statuscode\":403",
        "incorrect api key",
        "invalid_api_key",
        "invalid api key",
        "unauthorized",
    ],
    auth_fix: "log opencode in again: run `opencode auth login` for the rung's provider",
    untrusted: &[],
    untrusted_exit: None,
    untrusted_fix: "",
    failure: &["\"type\":\"error\"", "apierror"],
    // It keeps no record of trust: every folder's `opencode.json` (its MCP commands, its
    // plugins) would run, so its check always runs in agent's scratch directory.
    trust: never_trusted,
    // No words of its own are known to turn its tools off.
    no_tools_args: &[],
    scratch_args: &[],
    // Its project settings off (`opencode.json`, `.opencode/` found from the folder up, and
    // the folder's instructions); the user's own settings, which name the rung's provider,
    // stay.
    scratch_env: &[("OPENCODE_DISABLE_PROJECT_CONFIG", "true")],
    // A session with no title makes `opencode run` ask its model for one first: two calls
    // for every check (1.18.33 against the mock). Given a title, it makes the one.
    one_call_args: &["--title", ONE_CALL_TITLE],
    // Each new folder it starts in is a project of its own to open (its instance, its
    // watcher, a session per folder in its database): one kept folder per home.
    warm_scratch: true,
};

/// The title its checks give their session (so it asks its model for none).
pub const ONE_CALL_TITLE: &str = "agent check";

/// Its `--format json` events: the session, the answer's text, every step's tokens, or the
/// error it stopped on.
fn read_self_check(stdout: &str, _stderr: &str) -> Said {
    let mut said = Said::default();
    let mut answer = String::new();
    for event in json_documents(stdout) {
        if said.session.is_none() {
            said.session = text_of(event.get("sessionID"));
        }
        let part = event.get("part");
        match event.get("type").and_then(|t| t.as_str()) {
            Some("text") => {
                if let Some(text) = part.and_then(|p| p.get("text")).and_then(|t| t.as_str()) {
                    answer.push_str(text);
                }
            }
            Some("step_finish") => {
                if let Some(tokens) = part.and_then(|p| p.get("tokens")) {
                    let mut sum = said.tokens.unwrap_or_default();
                    sum += &crate::tokens::Tokens {
                        input: count(tokens.get("input")),
                        output: count(tokens.get("output")),
                        reasoning: count(tokens.get("reasoning")),
                        cache_read: count(tokens.pointer("/cache/read")),
                        cache_write: count(tokens.pointer("/cache/write")),
                    };
                    said.tokens = Some(sum);
                }
            }
            Some("error") => {
                let error = event.get("error");
                said.error = text_of(error.and_then(|e| e.pointer("/data/message")))
                    .or_else(|| text_of(error.and_then(|e| e.get("name"))))
                    .or(Some("error".into()));
            }
            _ => {}
        }
    }
    said.answer = non_empty(&answer);
    said
}

/// `opencode run`'s flags, which its TUI does not take.
const RUN_ONLY: &[&str] = &[
    "--command",
    "--share",
    "--format",
    "-f",
    "--file",
    "--title",
    "--attach",
    "--password",
    "-u",
    "--username",
    "--dir",
    "--variant",
    "--thinking",
    "-i",
    "--interactive",
];
/// The TUI's flags `opencode run` does not take.
const TUI_ONLY: &[&str] = &["--hostname", "--mini"];

/// Its dialect: Claude Code's command line in opencode's words, as its `--help` says them
/// at the version named (`tests/fixtures/help/opencode-*.txt`).
pub const DIALECT: Dialect = Dialect {
    command: "opencode",
    label: "opencode",
    checked: "1.18.33",
    starts: &[
        start(Interactive, New, &[], RUN_ONLY),
        start(Interactive, Last, &["-c"], RUN_ONLY),
        start(Headless, New, &["run"], TUI_ONLY),
        start(Headless, Last, &["run", "-c"], TUI_ONLY),
        // 1.18 `--help`: `-s, --session  session id to continue`, the TUI's and `run`'s.
        start(Interactive, ById, &["--session", SESSION_ID], RUN_ONLY),
        start(Headless, ById, &["run", "--session", SESSION_ID], TUI_ONLY),
    ],
    // Its TUI's positional is a project path; the prompt is --prompt.
    prompt: [Prompt::Flag("--prompt"), Prompt::Words],
    model_flag: "-m",
    model_needs_provider: true,
    rules: &[
        rule(
            Form::OutputFormat,
            Words::Values(&[
                ("text", &["--format", "default"]),
                ("json", &["--format", "json"]),
                ("stream-json", &["--format", "json"]),
            ]),
            "opencode run prints its JSON events; for json agent writes Claude Code's result document from them",
        ),
        rule(Form::SkipPermissions, Words::Say(&["--auto"]), ""),
        rule(
            Form::PermissionMode,
            Words::Values(&[
                ("default", &[]),
                ("plan", &["--agent", "plan"]),
                ("bypassPermissions", &["--auto"]),
            ]),
            "opencode's plan agent",
        ),
        rule(Form::Verbose, Words::Drop, "opencode has no such switch"),
        rule(Form::Debug, Words::Drop, "opencode has no such switch"),
        rule(Form::FallbackModel, Words::Drop, "a Claude model"),
    ],
    flags: &[
        ("--print-logs", false),
        ("--log-level", true),
        ("--pure", false),
        ("--port", true),
        ("--hostname", true),
        ("--command", true),
        ("-s", true),
        ("--session", true),
        ("--fork", false),
        ("--share", false),
        ("-m", true),
        ("--agent", true),
        ("--format", true),
        ("-f", true),
        ("--file", true),
        ("--title", true),
        ("--attach", true),
        ("--password", true),
        ("-u", true),
        ("--username", true),
        ("--dir", true),
        ("--variant", true),
        ("--thinking", false),
        ("-i", false),
        ("--interactive", false),
        ("--auto", false),
        ("--mini", false),
    ],
    headless_why: "its headless run; opencode's -p is --password",
    usage_exit: None,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opencode_keeps_its_data_and_settings_in_the_xdg_directories() {
        let home = Some(PathBuf::from("/home/u"));
        assert_eq!(
            data_dir_from(None, home.clone()),
            Some(PathBuf::from("/home/u/.local/share/opencode"))
        );
        assert_eq!(
            data_dir_from(Some("/data".into()), home.clone()),
            Some(PathBuf::from("/data/opencode"))
        );
        // A relative XDG directory is ignored, as the XDG rule says.
        assert_eq!(
            data_dir_from(Some("rel".into()), home.clone()),
            Some(PathBuf::from("/home/u/.local/share/opencode"))
        );
        assert_eq!(
            xdg_dir(None, home, ".config"),
            Some(PathBuf::from("/home/u/.config/opencode"))
        );
        assert_eq!(data_dir_from(None, None), None);
        assert_eq!(
            auth_path(Path::new("/d/opencode")),
            PathBuf::from("/d/opencode/auth.json")
        );
    }

    #[test]
    fn opencode_logins_are_read_by_kind_never_by_secret() {
        let store = serde_json::json!({
            "anthropic": {"type": "oauth", "refresh": "rt-secret", "access": "at-secret", "expires": 1_796_120_340_000_i64},
            "openai": {"type": "api", "key": "sk-secret"},
            "https://corp.example/": {"type": "wellknown", "key": "CORP_TOKEN", "token": "tok-secret"},
            "broken": {"type": "api"},
            "odd": {"type": "magic", "key": "x"},
        });
        let found = logins_in(&store);
        assert_eq!(
            found,
            [
                Login {
                    provider: "anthropic".into(),
                    kind: LoginKind::OAuth {
                        expires_ms: Some(1_796_120_340_000)
                    }
                },
                Login {
                    provider: "https://corp.example".into(),
                    kind: LoginKind::WellKnown
                },
                Login {
                    provider: "openai".into(),
                    kind: LoginKind::ApiKey
                },
            ]
        );
        let shown = format!("{found:?}");
        for secret in ["rt-secret", "at-secret", "sk-secret", "tok-secret"] {
            assert!(!shown.contains(secret), "{shown}");
        }
        assert!(logins_in(&serde_json::json!([1, 2])).is_empty());

        let dir = tempfile::tempdir().unwrap();
        assert!(logins(dir.path()).is_empty(), "no store, no login");
        std::fs::write(auth_path(dir.path()), store.to_string()).unwrap();
        if std::env::var_os("OPENCODE_AUTH_CONTENT").is_none() {
            assert_eq!(logins(dir.path()).len(), 3);
        }
    }

    #[test]
    fn opencode_is_not_set_up_with_no_provider_login_key_or_settings_and_is_with_any() {
        let home = tempfile::tempdir().unwrap();
        let at = |rel: &str| home.path().join(rel);
        let home_var = ("HOME".to_string(), home.path().display().to_string());
        let judge = |extra: &[(&str, &str)]| {
            let mut set = vec![home_var.clone()];
            set.extend(
                extra
                    .iter()
                    .map(|(k, v)| ((*k).to_string(), (*v).to_string())),
            );
            not_set_up(&super::super::env::Env::only(&set))
        };
        assert_eq!(judge(&[]).as_deref(), Some(NOT_SET_UP));
        // A key in a variable it reads; an empty one is none.
        assert_eq!(judge(&[("ANTHROPIC_API_KEY", "sk-x")]), None);
        assert_eq!(judge(&[("OPENROUTER_API_KEY", "or-x")]), None);
        assert_eq!(judge(&[("AWS_BEARER_TOKEN_BEDROCK", "t")]), None);
        assert!(judge(&[("ANTHROPIC_API_KEY", "")]).is_some());
        assert!(judge(&[("GOOGLE_CLOUD_PROJECT", "p")]).is_some());
        // Its settings: a provider or a model; nothing else in them is a way to run.
        assert!(judge(&[("OPENCODE_CONFIG_CONTENT", r#"{"autoupdate": false}"#)]).is_some());
        assert_eq!(
            judge(&[("OPENCODE_CONFIG_CONTENT", r#"{"model": "mock/gpt-x"}"#)]),
            None
        );
        std::fs::create_dir_all(at(".config/opencode")).unwrap();
        std::fs::write(
            at(".config/opencode/opencode.json"),
            r#"{"share": "disabled"}"#,
        )
        .unwrap();
        assert!(judge(&[]).is_some());
        std::fs::write(
            at(".config/opencode/opencode.json"),
            r#"{"provider": {"mock": {"options": {"baseURL": "http://127.0.0.1:9/v1"}}}}"#,
        )
        .unwrap();
        assert_eq!(judge(&[]), None);
        // Where XDG_CONFIG_HOME moves them, and only there.
        let moved = at("elsewhere").display().to_string();
        assert!(judge(&[("XDG_CONFIG_HOME", &moved)]).is_some());
        std::fs::remove_file(at(".config/opencode/opencode.json")).unwrap();
        // A settings file agent cannot read as JSON (comments) is not called empty.
        std::fs::write(
            at(".config/opencode/opencode.jsonc"),
            "// mine\n{\"model\": \"x/y\"}",
        )
        .unwrap();
        assert_eq!(judge(&[]), None);
        std::fs::remove_file(at(".config/opencode/opencode.jsonc")).unwrap();
        // A provider logged in, in its store or in the variable that replaces it.
        std::fs::create_dir_all(at(".local/share/opencode")).unwrap();
        std::fs::write(
            at(".local/share/opencode/auth.json"),
            r#"{"x": {"type": "api"}}"#,
        )
        .unwrap();
        assert!(judge(&[]).is_some(), "an entry with no key is no login");
        std::fs::write(
            at(".local/share/opencode/auth.json"),
            r#"{"anthropic": {"type": "oauth", "refresh": "r", "access": "a", "expires": 1}}"#,
        )
        .unwrap();
        assert_eq!(judge(&[]), None);
        assert!(
            judge(&[("OPENCODE_AUTH_CONTENT", "{}")]).is_some(),
            "the variable wins"
        );
        assert_eq!(
            judge(&[(
                "OPENCODE_AUTH_CONTENT",
                r#"{"openai": {"type": "api", "key": "k"}}"#
            )]),
            None
        );
    }

    #[test]
    fn an_opencode_login_store_that_is_no_regular_file_is_no_login() {
        if std::env::var_os("OPENCODE_AUTH_CONTENT").is_some() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        // A FIFO with no writer: opened blocking, it would hang the read.
        nix::unistd::mkfifo(&auth_path(dir.path()), nix::sys::stat::Mode::S_IRWXU).unwrap();
        assert!(logins(dir.path()).is_empty());
    }
}
