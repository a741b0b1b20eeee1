//! Antigravity (`agy`; research §4). Where it keeps its login and records is UNCONFIRMED
//! (research §4.1, §4.3): no variable is known to move it, an installed agy is taken as
//! logged in under one identity, and its windows come from its own `/usage`. It has no
//! dialect: its flags are not checked (it is not on the npm registry), so Claude Code's
//! words go to it as given (`Family::dialect`).

use std::path::PathBuf;

use super::cli::Cli;
use super::endpoint::EndpointDefaults;
use super::env::{Account, Env};
use super::reading::{count, json_documents, non_empty, text_of};
use super::self_check::{Said, SelfCheck, never_trusted};

pub const HOME_VARS: &[&str] = &[];
pub const CREDENTIAL_VARS: &[&str] = &[];
pub const MODEL_VAR: Option<&str> = None;

// What it reads to find its API, and where an account's secret reaches it
// (`Family::endpoint_defaults`, `Family::secret_var`).

/// Whatever API it calls is not confirmed: taken as an OpenAI-style CLI, on its own login.
pub fn endpoint() -> EndpointDefaults {
    EndpointDefaults {
        own_login: true,
        ..EndpointDefaults::openai_style()
    }
}

/// An account's secret: no variable of its own is known, so an OpenAI-style key's.
pub const SECRET_VAR: &str = "OPENAI_API_KEY";

/// The one identity an agy login is known by.
pub const IDENTITY: &str = "default";

/// Where agy keeps its state is not confirmed: none is claimed.
pub fn home(_env: &Env) -> Option<PathBuf> {
    None
}

pub fn login_identity(_env: &Env, account: Option<Account>) -> Option<String> {
    account.is_none().then(|| IDENTITY.to_string())
}

pub fn records(_env: &Env) -> Vec<PathBuf> {
    Vec::new()
}

pub fn model_settings(_env: &Env) -> Option<PathBuf> {
    None
}

/// What agent knows of Antigravity.
pub const CLI: Cli = Cli {
    name: "agy",
    display_name: "Antigravity",
    home_vars: HOME_VARS,
    home,
    store_vars: &[],
    credential_vars: CREDENTIAL_VARS,
    withholds_foreign_keys: true,
    provider_key_var: super::cli::nothing,
    login_identity,
    login_known_by_home: false,
    // agent cannot move its home.
    login_command: None,
    // Its own quota report says whether its login answers.
    not_set_up: super::cli::nothing,
    records,
    // Unknown.
    usage_words: &[],
    model_var: MODEL_VAR,
    model_settings,
    settings_model: super::cli::nothing,
    endpoint: |_| endpoint(),
    secret_var: |_, _| SECRET_VAR.to_string(),
    headers_var: None,
    runs_agents_statusline: false,
    reports_own_quota: true,
    // From public reports only, no agy binary (research addendum "agy off a terminal"):
    // antigravity-cli #76 — agy 1.0.0 `agy -p …` through a pipe, subprocess or redirect
    // exits 0 with zero bytes on stdout and stderr, the same command on a terminal prints
    // the answer; PyPI agy-headless-bridge works around it with a pseudo-terminal.
    needs_terminal: true,
    self_check: &SELF_CHECK,
    prints_claudes_result: false,
    // Its words go to it as given.
    dialect: None,
    takes_a_session_id: false,
};

/// Its own check (DESIGN §17). No agy binary was available: the form is the one its
/// `/usage` report takes (`agy --print … --output-format json`), and what it prints is read
/// from public reports (research §4.3): on a spent quota agy retries for its whole
/// `--print-timeout` and then **exits 0**, saying `[agy] print timeout after 23s with turn in
/// progress` on stderr and, in its result, `"status": "ERROR"` with `RESOURCE_EXHAUSTED …
/// Individual quota reached … Resets in 2h39m52s.` So its exit code says nothing; its words
/// do.
pub const SELF_CHECK: SelfCheck = SelfCheck {
    args: &["-p", "PROMPT", "--output-format", "json"],
    read: read_self_check,
    limit: &[
        "resource_exhausted",
        "quota reached",
        "individual quota",
        "quota exceeded",
        "upgrade your subscription",
    ],
    rate_limited: &[],
    auth: &[
        "unauthenticated",
        "not logged in",
        "please log in",
        "sign in",
        "invalid_grant",
    ],
    auth_fix: "sign Antigravity in again: run `agy` and log in",
    untrusted: &[],
    untrusted_exit: None,
    untrusted_fix: "",
    failure: &[
        "print timeout after",
        "returning partial output",
        "\"status\":\"error\"",
        "api error",
    ],
    // No trust record of its is known: its check runs in agent's scratch directory.
    trust: never_trusted,
    // No words of its own are known to turn its tools off.
    no_tools_args: &[],
    scratch_args: &[],
    scratch_env: &[],
    one_call_args: &[],
    warm_scratch: false,
};

/// Its JSON result, plain or in a `{"event": "result", "result": {…}}` event: `status`,
/// `response`, `error`, `usage`.
fn read_self_check(stdout: &str, _stderr: &str) -> Said {
    let mut said = Said::default();
    for doc in json_documents(stdout) {
        let result = match doc.get("result") {
            Some(inner) if inner.is_object() => inner.clone(),
            _ => doc.clone(),
        };
        let failed = result
            .get("status")
            .and_then(|s| s.as_str())
            .is_some_and(|s| s.eq_ignore_ascii_case("error"));
        if let Some(error) = text_of(result.get("error")) {
            said.error = Some(error);
        } else if failed {
            said.error = Some("status ERROR".into());
        }
        if !failed {
            said.answer = text_of(result.get("response"))
                .or_else(|| text_of(doc.get("result")))
                .or(said.answer.take());
        }
        said.session = text_of(doc.get("session_id"))
            .or_else(|| text_of(result.get("session_id")))
            .or(said.session.take());
        if let Some(usage) = result.get("usage") {
            let input = count(usage.get("input_tokens"));
            let output = count(usage.get("output_tokens"));
            said.tokens = Some(crate::tokens::Tokens {
                input,
                output: if input + output == 0 {
                    count(usage.get("total_tokens"))
                } else {
                    output
                },
                ..crate::tokens::Tokens::default()
            });
        }
    }
    if said.answer.is_none() && said.error.is_none() && !stdout.trim_start().starts_with('{') {
        said.answer = non_empty(stdout);
    }
    said
}
