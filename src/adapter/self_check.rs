//! How a CLI is checked by running it (DESIGN §17 "the CLI's own check"), and what its own
//! trust record says of a folder (§23): the shape of each CLI's table, which its own file
//! fills in.

use std::ffi::OsString;
use std::path::Path;

use super::env::Env;

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
    /// Its own words (passed as they are by its dialect) that leave its tools and MCP servers
    /// out of every check, wherever it runs: a one-word answer needs neither, and they are
    /// most of the request (Claude Code 2.1.332 sends 12 tool definitions, about 49 KB, with
    /// none of these words; 9 KB with them). The login, the home, the endpoint and the model
    /// stay the launch's, so the check still proves what a launch will run.
    pub no_tools_args: &'static [&'static str],
    /// Its own words (passed as they are by its dialect) that turn off a project's
    /// settings, hooks and MCP servers, for a check run in agent's scratch directory.
    pub scratch_args: &'static [&'static str],
    /// The variables that do the same.
    pub scratch_env: &'static [(&'static str, &'static str)],
    /// Its own words (passed as they are by its dialect) that keep a check — its own check,
    /// or a `command` probe — to the one model call it asks for: opencode, given no session
    /// title, first asks its model for one.
    pub one_call_args: &'static [&'static str],
    /// Whether its checks in agent's scratch directory run in one kept directory per CLI
    /// home rather than a new one each time: a CLI that sets up each new folder it is
    /// started in (opencode) otherwise starts cold for every check.
    pub warm_scratch: bool,
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
pub(super) fn has_word(args: &[OsString], words: &[&str]) -> bool {
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

    /// `why` a launch in `dir` is refused, then what to do about it.
    pub fn refusal_with_fix(&self, why: &str, dir: &Path) -> String {
        let fix = self.untrusted_fix_for(dir);
        if fix.is_empty() {
            why.to_string()
        } else {
            format!("{why} — {fix}")
        }
    }

    /// Whether the CLI's exit `code` and output `text` say it refused to run in the folder.
    pub fn refused_the_folder(&self, code: i32, text: &str) -> bool {
        self.untrusted_exit == Some(code)
            || matches!(self.meaning(text), Some((Meaning::Untrusted, _)))
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
