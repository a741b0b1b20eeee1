//! What one run's own record and words say, for the judgement of how it ended
//! ([`super::ending::Record`]) and for what follows it: each source read at most once
//! per run — the windows its record names are read once, whether the judgement or a fast
//! failure asks first, and filed once.

use std::cell::OnceCell;
use std::ffi::OsString;
use std::path::PathBuf;

use jiff::Timestamp;

use super::acted::{self, Actions};
use super::ending::{Record, Spent};
use super::parking::{self, Parking};
use super::rung::Rung;
use crate::config::Config;
use crate::error_class::ErrorClass;
use crate::login::Window;
use crate::login::session::Session;
use crate::state::health::{Outcome, Store};
use crate::state::window::Source;

pub struct RunRecord<'r, 'c> {
    config: &'c Config,
    rung: &'r Rung<'c>,
    /// The words the CLI was given, in its own dialect.
    argv: &'r [OsString],
    stderr_head: &'r str,
    started: Timestamp,
    /// Its session's id when agent knows it (gave it, or the CLI printed it): its record
    /// is that session's, never another's in the same folder.
    session_id: Option<&'r str>,
    /// Where it ran (agent's own directory); `None` when that cannot be named.
    cwd: Option<PathBuf>,
    /// Whether it ended in failure (a code other than 0, or a signal).
    failed: bool,
    windows: OnceCell<Vec<Window>>,
    filed: OnceCell<()>,
    session: OnceCell<Option<Session>>,
}

impl<'r, 'c> RunRecord<'r, 'c> {
    pub fn new(
        config: &'c Config,
        rung: &'r Rung<'c>,
        argv: &'r [OsString],
        stderr_head: &'r str,
        started: Timestamp,
        session_id: Option<&'r str>,
    ) -> RunRecord<'r, 'c> {
        RunRecord {
            config,
            rung,
            argv,
            stderr_head,
            started,
            session_id,
            cwd: std::env::current_dir().ok(),
            failed: true,
            windows: OnceCell::new(),
            filed: OnceCell::new(),
            session: OnceCell::new(),
        }
    }

    /// The same record of a run that `ended` so: a CLI whose session costs a run of it to
    /// read is asked only after a failure.
    #[must_use]
    pub fn ended(mut self, ended: super::child::Ended) -> Self {
        self.failed = !matches!(ended, super::child::Ended::Code(0));
        self
    }

    /// Where the run ran.
    pub fn cwd(&self) -> Option<&std::path::Path> {
        self.cwd.as_deref()
    }

    /// The windows its record names, read on first use — else the limit its CLI's final
    /// error named, as a window of its own.
    fn windows(&self) -> &[Window] {
        self.windows.get_or_init(|| {
            let recorded = match &self.cwd {
                Some(cwd) => parking::run_windows(self.rung, cwd, self.started, self.session_id),
                None => Vec::new(),
            };
            if !recorded.is_empty() {
                return recorded;
            }
            self.said_limit().into_iter().collect()
        })
    }

    /// The usage limit the CLI's final error named — or, for a CLI whose records name no
    /// window, the session's own record said its last turn was refused for — as a window:
    /// login-wide (the CLI did not say which), full, resetting when it said or after
    /// `quota_minutes`.
    fn said_limit(&self) -> Option<Window> {
        let family = self.rung.backend.family;
        let said = crate::login::readers::limit_in_output(family, self.stderr_head)
            .map(|said| said.resets_in)
            .or_else(|| {
                // A CLI whose records name windows said the limit there, if anywhere.
                if crate::login::readers::reads_run_windows(family) {
                    return None;
                }
                let session = self.session().filter(|s| s.ended_on_its_limit)?;
                Some(session.limit_resets_in)
            })?;
        let now = Timestamp::now();
        let wait = said.unwrap_or(self.config.quota_cooldown);
        let resets_at = now
            .checked_add(jiff::SignedDuration::try_from(wait).ok()?)
            .ok()?;
        Window::new(
            crate::state::window::Scope::Unstated,
            100.0,
            resets_at,
            Source::CliError,
            now,
        )
    }

    /// Files the windows its record names under its login (once), and returns the spent
    /// one that resets last — so the next launch parks the login until the reset instead
    /// of running it into the same wall.
    ///
    /// A limit only the CLI's final error named is no window of a login agent knows (the
    /// CLI's records name none): the rung's target is skipped until its reset instead, as a
    /// spent quota is, whatever login or key it runs on.
    pub fn file_windows(&self, parking: &Parking, store: &Store) -> Option<Spent> {
        self.filed.get_or_init(|| {
            let windows = self.windows();
            parking.file(self.rung, windows, Timestamp::now());
            let said = windows.iter().find(|w| w.source == Source::CliError);
            if let (Some(said), Ok(ready)) = (said, &self.rung.state) {
                let refused = Outcome {
                    class: ErrorClass::Quota,
                    reason: format!(
                        "its final error named its usage limit, resetting {}",
                        said.resets_at
                    ),
                    latency: std::time::Duration::ZERO,
                    clears_at: std::time::SystemTime::try_from(said.resets_at).ok(),
                };
                store.record(&ready.plan.target, &refused, &self.config.policy());
            }
        });
        self.spent()
    }

    /// The run's session by its CLI's own record, read on first use (the judgement and a
    /// limit ending share it).
    pub fn session(&self) -> Option<&Session> {
        self.session
            .get_or_init(|| {
                let family = self.rung.backend.family;
                if !self.failed && crate::login::readers::session_costs_a_run(family) {
                    return None;
                }
                let cwd = self.cwd.as_deref()?;
                super::limit_ending::read_session(self.rung, cwd, self.started, self.session_id)
            })
            .as_ref()
    }

    /// Whether the windows were read (and so are to be filed whatever the ending).
    pub fn read_windows(&self) -> bool {
        self.windows.get().is_some()
    }
}

impl Record for RunRecord<'_, '_> {
    fn spent(&self) -> Option<Spent> {
        let full = self
            .windows()
            .iter()
            .filter(|w| w.is_full())
            .max_by_key(|w| w.resets_at)?;
        let words = parking::describe(full, self.config.park_at_percent(self.rung.backend));
        Some(Spent {
            window: full.clone(),
            words,
        })
    }

    fn quota_words(&self) -> Option<String> {
        super::quota_ending::refused(self.rung, self.stderr_head)
    }

    fn refused_arguments(&self, code: i32) -> Option<String> {
        let family = self.rung.backend.family;
        if family.dialect().is_some_and(|d| d.usage_exit == Some(code)) {
            return Some("its usage error".to_string());
        }
        family
            .usage_words()
            .iter()
            .find(|words| self.stderr_head.contains(*words))
            .map(|words| format!("it said \"{words}\""))
    }

    fn refused_folder(&self, code: i32) -> Option<String> {
        let cwd = self.cwd.as_deref()?;
        super::folder::refused(self.rung, self.argv, cwd, code, self.stderr_head)
    }

    fn acted(&self) -> Option<Actions> {
        let cwd = self.cwd.as_deref()?;
        Some(acted::by_run(self.rung, cwd, self.started, self.session_id)).filter(Actions::acted)
    }

    fn ended_on_its_limit(&self) -> bool {
        self.session()
            .is_some_and(|session| session.ended_on_its_limit)
    }
}
