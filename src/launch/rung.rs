//! A rung made concrete: backend, models with aliases resolved, the binary found, the
//! launch environment expanded and the probe planned — or the local reason it cannot run.
//! What a rung is, and what it says of itself; how one is resolved from the table is
//! `resolve.rs`.

use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::PathBuf;

use crate::adapter::dialect::{Refusal, Translation};
use crate::config::Backend;
use crate::error_class::ErrorClass;
use crate::probe::login::LoginRung;
use crate::probe::{PlanError, ProbePlan};

#[derive(Debug, Clone)]
pub struct Rung<'a> {
    /// 1-based position in the table.
    pub index: usize,
    pub backend: &'a Backend,
    pub probe_model: Option<String>,
    /// `None`: pass no model flag, so the CLI keeps its own default.
    pub run_model: Option<String>,
    /// The table's word for the run model when it is an alias of the backend's that names
    /// another id (`sonnet` for `claude-sonnet-5`): rows say both.
    pub run_alias: Option<String>,
    /// What the rows call the model it runs, worked out once when first asked (the CLI's
    /// own default is read from its settings or records).
    pub runs_words: std::sync::OnceLock<Option<String>>,
    /// The account this row uses, when its backend has a pool.
    pub account: Option<String>,
    /// A row of a pool of logins: how its login was chosen among them.
    pub pool: Option<LoginPool>,
    pub state: Result<Ready, Unusable>,
}

/// How a rung on a pool of logins chose the one it runs on (DESIGN.md §18: account before
/// model before vendor): the first, in rotation order, whose windows leave this rung open.
#[derive(Debug, Clone, PartialEq)]
pub struct LoginPool {
    /// The pool's rotation: `soonest-reset`, `priority`…
    pub rotation: crate::accounts::Rotation,
    /// The figures behind the order (`5h resets 14:10 (work 15:00); weekly 40% used at
    /// 55% of the week`), for `soonest-reset`.
    pub figures: Option<String>,
    /// The logins passed over, in order, with why: the window that parks each for this
    /// rung's model, or why it cannot run.
    pub passed: Vec<(String, String)>,
    /// Every login is parked: the rung stands on the one whose park ends soonest, and the
    /// cascade parks the rung (or runs it, when no rung below could run).
    pub all_parked: bool,
}

/// Everything needed to probe and launch.
#[derive(Debug, Clone)]
pub struct Ready {
    pub binary: PathBuf,
    pub env: Vec<(String, String)>,
    /// Variables removed from the CLI's environment: the backend's `env_remove`, and with
    /// an account every other credential variable, so no other account's secret leaks in.
    pub env_remove: Vec<String>,
    /// How it is probed; `plan.login` is the subscription login it runs on unprobed, when
    /// its store or a token shows one.
    pub plan: ProbePlan,
    /// The login its windows are filed under, with where its CLI records each run: the
    /// plan's own login when it has one, else the one its adapter names from `env` alone
    /// (Claude Code's directory, its store unseen). Parking, the login windows and the
    /// statusline read it. See [`runs_on`].
    pub login: Option<LoginRung>,
}

/// A rung that cannot run, known without a call.
#[derive(Debug, Clone)]
pub struct Unusable {
    pub class: ErrorClass,
    pub reason: String,
    /// No option here, neither alive nor dead: a built-in rung whose CLI is not installed,
    /// a CLI not set up (no login, no key), a backend turned off, no proxy set.
    pub skip: bool,
}

impl From<PlanError> for Unusable {
    fn from(err: PlanError) -> Unusable {
        Unusable {
            // Not set up here: no option, neither alive nor dead.
            skip: err.class == ErrorClass::NotSetUp,
            class: err.class,
            reason: err.reason,
        }
    }
}

impl Rung<'_> {
    /// "Claude Code (claude-sonnet-5)", as the notices name it: the model the launch
    /// passes, or "its default model" when it passes none (the CLI runs its own default,
    /// whatever model the probe asked about).
    pub fn label(&self) -> String {
        self.label_on(self.account.as_deref())
    }

    /// The label this rung would have on `account`: "Claude Code (its default model,
    /// login work)" for a login of a pool.
    pub fn label_on(&self, account: Option<&str>) -> String {
        let model = self.run_model.as_deref().unwrap_or(DEFAULT_MODEL_WORDS);
        let word = if self.pool.is_some() {
            "login"
        } else {
            "account"
        };
        match account {
            Some(account) => format!("{} ({model}, {word} {account})", self.backend.label),
            None => format!("{} ({model})", self.backend.label),
        }
    }

    /// `login personal: soonest-reset — 5h resets 14:10 (work 15:00); weekly 40% used at
    /// 55% of the week`: the login this rung runs on, the rule and the figures behind it.
    pub fn login_rule(&self) -> Option<String> {
        let (pool, chosen) = (self.pool.as_ref()?, self.account.as_ref()?);
        let mut line = format!("login {chosen}: {}", pool.rotation.as_str());
        if let Some(figures) = &pool.figures {
            let _ = write!(line, " — {figures}");
        }
        if pool.all_parked {
            line.push_str(" (every login of the pool is parked: this one is back soonest)");
        }
        Some(line)
    }

    /// The notices a launch prints when this rung runs on another login than its pool's
    /// first: `Claude Code (claude-opus-5, login work) — 5-hour limit, resets 15:00 —
    /// using login personal`.
    pub fn login_notices(&self) -> Vec<String> {
        let (Some(pool), Some(chosen)) = (&self.pool, &self.account) else {
            return Vec::new();
        };
        if pool.all_parked {
            return Vec::new();
        }
        pool.passed
            .iter()
            .map(|(name, reason)| {
                format!(
                    "{} — {reason} — using login {chosen}",
                    self.label_on(Some(name))
                )
            })
            .collect()
    }

    /// The words the launch gives its binary: the user's (Claude Code's command line) in
    /// this rung's CLI's dialect, with the rung's model — or the flag it cannot take.
    pub fn translate(&self, args: &[OsString]) -> Result<Translation, Refusal> {
        self.translate_resuming(args, None)
    }

    /// [`Rung::translate`], resuming the CLI's own session `resume` when given.
    pub fn translate_resuming(
        &self,
        args: &[OsString],
        resume: Option<&str>,
    ) -> Result<Translation, Refusal> {
        self.backend
            .in_own_words_resuming(self.run_model.as_deref(), args, resume)
    }
}

/// A session a launch resumes after its reset: the rung it ran on (0-based) — the only
/// one that can take it, its CLI's and its login's — and the id its CLI gave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resuming {
    pub index: usize,
    pub id: String,
    /// The login it ran on (`CLI:identity`), when the rung ran on one: the session is in
    /// that login's home, so the rung must run on it again, not on another of its pool.
    pub login: Option<String>,
}

/// What a label says of a rung that passes no model: the CLI runs its own default.
pub const DEFAULT_MODEL_WORDS: &str = "its default model";
