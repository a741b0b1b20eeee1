//! A stand-in sixth CLI, in test builds only: a program no one ships, registered exactly as
//! a new CLI is (docs/development.md, "Adding a CLI") — this file, its line in [`Family`]
//! and `ALL`, its readers in `login/stand_in.rs` and their line in `login/readers.rs` — so
//! that the table tests ask it every question, and `dashboard::every_cli_tests` sees it in
//! every face that lists the CLIs with nothing else changed.
//!
//! [`Family`]: super::Family

use std::path::PathBuf;

use super::cli::Cli;
use super::dialect::Mode::{Headless, Interactive};
use super::dialect::Session::New;
use super::dialect::{Dialect, Prompt, start};
use super::endpoint::{EndpointDefaults, WireApi};
use super::env::{Account, Env};
use super::reading::non_empty;
use super::self_check::{Said, SelfCheck, never_trusted};

/// Its command.
pub const COMMAND: &str = "stand-in";

/// The variable that moves its home.
pub const HOME_VAR: &str = "STAND_IN_HOME";

/// Its home: [`HOME_VAR`], else `~/.stand-in`.
pub fn home(env: &Env) -> Option<PathBuf> {
    env.get(HOME_VAR)
        .and_then(|dir| non_empty(&dir))
        .map(PathBuf::from)
        .or_else(|| Some(env.home()?.join(".stand-in")))
}

/// What agent knows of the stand-in: it runs on a login of its own, known by one identity,
/// and nothing it answers depends on the machine's environment but its home variable.
pub const CLI: Cli = Cli {
    name: COMMAND,
    display_name: "Stand-in CLI",
    home_vars: &[HOME_VAR],
    home,
    store_vars: &[],
    // It reads no key: its API is its own login's.
    credential_vars: &[],
    withholds_foreign_keys: true,
    provider_key_var: super::cli::nothing,
    login_identity: |_env: &Env, account: Option<Account>| {
        account.is_none().then(|| "default".to_string())
    },
    login_known_by_home: false,
    login_command: None,
    // Nothing to tell.
    not_set_up: super::cli::nothing,
    records: |env| home(env).map(|dir| dir.join("calls")).into_iter().collect(),
    usage_words: &["unknown option"],
    model_var: None,
    model_settings: super::cli::nothing,
    settings_model: super::cli::nothing,
    // A Gemini-style API on its own login: given no key (it reads none), its login's.
    endpoint: |_| EndpointDefaults {
        api: WireApi::Gemini,
        key_vars: Vec::new(),
        own_login: true,
        ..EndpointDefaults::openai_style()
    },
    secret_var: |_, _| "OPENAI_API_KEY".to_string(),
    headers_var: None,
    runs_agents_statusline: false,
    reports_own_quota: false,
    needs_terminal: false,
    self_check: &SELF_CHECK,
    prints_claudes_result: false,
    dialect: Some(&DIALECT),
    takes_a_session_id: false,
};

/// Its own check: it prints its answer, and says so when its login is refused or spent.
pub const SELF_CHECK: SelfCheck = SelfCheck {
    args: &["-p", "PROMPT"],
    read: |stdout, _stderr| Said {
        answer: non_empty(stdout),
        ..Said::default()
    },
    limit: &["usage limit reached"],
    rate_limited: &[],
    auth: &["not logged in"],
    auth_fix: "log the stand-in in again: run `stand-in login`",
    untrusted: &[],
    untrusted_exit: None,
    untrusted_fix: "",
    failure: &[],
    trust: never_trusted,
    no_tools_args: &[],
    scratch_args: &[],
    scratch_env: &[],
    one_call_args: &[],
    warm_scratch: false,
};

/// Its dialect, as its `--help` says it (`tests/fixtures/help/stand-in-1.0.0.txt`): a
/// headless prompt is `stand-in ask PROMPT`; no other form of Claude Code's is taken.
pub const DIALECT: Dialect = Dialect {
    command: COMMAND,
    label: "Stand-in CLI",
    checked: "1.0.0",
    starts: &[
        start(Interactive, New, &[], &[]),
        start(Headless, New, &["ask"], &[]),
    ],
    prompt: [Prompt::Words, Prompt::Words],
    model_flag: "--model",
    model_needs_provider: false,
    rules: &[],
    flags: &[("--model", true)],
    headless_why: "its headless run",
    usage_exit: None,
};
