//! The launch as a state machine (DESIGN §24): choose a rung, run it, judge once how the
//! run ended ([`ending::judge`]), and let one small function per ending say what comes
//! next — exit, the next rung, a hand-off, a resume, a wait. The chain a launch carries
//! from run to run (its words, the rungs handed from, whether it resumed, why rungs were
//! passed over, the one wait it may take) lives in [`Launch`]; the cascade is built once
//! and re-targeted or started over, never built again.

use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use jiff::Timestamp;

use super::cascade::{Cascade, Choice, Good, Status};
use super::child::{self, Ended};
use super::ending::{self, Ending, Seen, Spent};
use super::options::Options;
use super::run_record::RunRecord;
use super::{
    acted, claude_result, dry_run, held, limit_ending, outcome, quota_ending, rung, same_way,
    task_chain, waiting,
};
use crate::config::Config;
use crate::error_class::ErrorClass;
use crate::exit_codes::{UnavailableError, usage};
use crate::state::health::Store;
use crate::state::{events, tasks};
use crate::term;

/// Chooses, runs, and follows each ending until one ends the launch; returns agent's code.
pub fn run_cascade(config: &Config, options: &Options) -> anyhow::Result<u8> {
    let state_dir = crate::paths::state_dir();
    if state_dir.as_os_str().is_empty() || state_dir.exists() {
        // Every state file refuses it too: nothing is read from it or written to it, and
        // probes cannot reserve their call, so the top rung runs unprobed.
        if let Err(err) = crate::state::file::check_dir(&state_dir) {
            term::notice(&format!(
                "{err:#} — running without agent's state (rungs unprobed, nothing recorded)"
            ));
        }
    }
    let mut launch = Launch::new(config, options, state_dir);
    launch.continue_the_task();
    loop {
        let next = match launch.choose()? {
            Chosen::Rung(winner) => launch.run(winner)?,
            Chosen::Again => Next::Choose,
            Chosen::Exit(code) => Next::Exit(code),
        };
        if let Next::Exit(code) = next {
            return Ok(code);
        }
    }
}

/// What a choice came to.
enum Chosen {
    Rung(usize),
    /// Choose again (from where the launch now stands).
    Again,
    Exit(u8),
}

/// What comes after a run.
enum Next {
    Choose,
    Exit(u8),
}

/// A hand-off waiting for the rung it goes to: announced once that rung is chosen.
#[derive(Clone)]
struct Handoff {
    from: String,
    spent: String,
    brief: Option<PathBuf>,
}

/// One launch's chain of runs.
struct Launch<'c, 'o> {
    config: &'c Config,
    options: &'o Options<'o>,
    state_dir: PathBuf,
    cascade: Cascade<'c>,
    /// Claude Code's words for the CLI: the user's, until a hand-off or a resume says others.
    args: Vec<OsString>,
    /// The first rung the next choice may take.
    start: usize,
    /// Why each rung was passed over, for the final message if none is left.
    why_not: Vec<(String, String)>,
    /// How each rung that ran failed at once, for the same.
    ran_failed: Vec<same_way::How>,
    /// A launch waits for a parked rung at most once.
    wait: Option<Duration>,
    handoff: Option<Handoff>,
    /// The hand-off last announced: waiting again for the next rung when the one it went to
    /// did not take it up (refused the folder or the words, or failed fast).
    announced: Option<Handoff>,
    /// The hand-off the session went through, as the final result document names it
    /// (`agent_handoff`: the brief and the rungs handed from); set when it is announced.
    handed_on: Option<serde_json::Value>,
    /// The rungs (and logins) a session was handed off from: never again, never back up.
    handed_from: Vec<(usize, Option<String>)>,
    /// The session the words resume, after its reset — at most once a launch, and only on
    /// the rung it ran on.
    resuming: Option<rung::Resuming>,
    /// The task this launch carries across CLIs, once a hand-off made it one (or `agent -c`
    /// continues one): where its chain stands.
    task: Option<tasks::Place>,
    /// The brief the next run that carries the task starts with, for its link.
    brief_given: Option<PathBuf>,
}

/// One run of a rung, as agent started it.
struct Run<'c> {
    index: usize,
    rung: rung::Rung<'c>,
    login_key: Option<String>,
    /// Claude Code's words it was given (with agent's session id).
    args: Vec<OsString>,
    /// The same in its CLI's own words.
    argv: Vec<OsString>,
    session_id: Option<String>,
    started: Timestamp,
    plan: held::Plan,
    ended: Ended,
    elapsed: Duration,
    stderr_head: String,
    printed: Option<bool>,
    /// The hand-off that led to this run, as its result document names it (`agent_handoff`).
    handoff: Option<serde_json::Value>,
}

impl Run<'_> {
    /// The outcome record's line for this run.
    fn recorded(&self, ended: outcome::Ended, code: Option<i32>) -> outcome::RungRun {
        let mut model = self.rung.run_model.clone();
        let mut session = self.session_id.clone();
        // A script asked for the record: a rung that passed no model, or a session agent
        // did not name, is told by the run's own record (the model it answered with, the id
        // its CLI gave the session). Read only then: a launch without one reads nothing.
        // A session whose reading starts its CLI is read only after a failure.
        let costly = crate::login::readers::session_costs_a_run(self.rung.backend.family);
        if outcome::wanted()
            && (model.is_none() || session.is_none())
            && !(costly && code == Some(0))
            && let Some(read) = std::env::current_dir().ok().and_then(|cwd| {
                limit_ending::read_session(
                    &self.rung,
                    &cwd,
                    self.started,
                    self.session_id.as_deref(),
                )
            })
        {
            model = model.or(read.model);
            session = session.or(read.id);
        }
        outcome::RungRun {
            rung: self.index + 1,
            cli: self.rung.backend.family.name().to_string(),
            label: self.rung.label(),
            model,
            session,
            seconds: self.elapsed.as_secs_f64(),
            code,
            ended,
            window: None,
            reset: None,
        }
    }

    fn target(&self) -> &str {
        &self
            .rung
            .state
            .as_ref()
            .expect("a run is of a ready rung")
            .plan
            .target
    }

    /// Writes what it printed and agent held to stdout (it counted).
    fn deliver(&self, held: Option<held::Spool>, code: i32) {
        deliver(
            held,
            self.plan,
            &self.rung,
            &self.stderr_head,
            code,
            self.elapsed,
            self.handoff.as_ref(),
        );
    }

    /// Shows on stderr what it printed (its words must not reach stdout).
    fn show_words(&self, held: Option<held::Spool>) {
        show_words(held, &self.rung, &self.stderr_head);
    }
}

impl<'c, 'o> Launch<'c, 'o> {
    fn new(config: &'c Config, options: &'o Options<'o>, state_dir: PathBuf) -> Self {
        let args = options.args.to_vec();
        let cascade = Cascade::new(
            config,
            Store::new(&state_dir),
            crate::state::meter::Meter::new(&state_dir, config.budget),
        )
        .for_args(&args);
        Launch {
            config,
            options,
            state_dir,
            cascade,
            args,
            start: 0,
            why_not: Vec::new(),
            ran_failed: Vec::new(),
            wait: options.wait,
            handoff: None,
            announced: None,
            handed_on: None,
            handed_from: Vec::new(),
            resuming: None,
            task: None,
            brief_given: None,
        }
    }

    /// `agent -c` in a folder whose task crossed CLIs continues that task where it lives,
    /// or back up where a window reset ([`task_chain`]); a launch that starts a new session
    /// closes the folder's chain, so a later `-c` continues the new one.
    fn continue_the_task(&mut self) {
        let Ok(cwd) = std::env::current_dir() else {
            return;
        };
        if crate::adapter::dialect::session_words::leaves_the_session_to_agent(&self.args) {
            if !self.options.dry_run {
                tasks::new_session_in(&self.state_dir, &cwd, Timestamp::now());
            }
            return;
        }
        let Some(continuation) = task_chain::continuation(
            self.config,
            &mut self.cascade,
            &self.state_dir,
            &cwd,
            &self.args,
            self.options.dry_run,
        ) else {
            // Asking which rung above answers may have pointed the cascade at other words.
            self.cascade.retarget(&self.args, None);
            return;
        };
        self.args = continuation.args;
        self.start = continuation.resuming.index;
        self.resuming = Some(continuation.resuming);
        self.handed_from = continuation.handed_from;
        self.task = Some(continuation.place);
        self.brief_given = continuation.brief;
        self.cascade.retarget(&self.args, self.resuming.clone());
    }

    /// Records that `run` carried the task: a link of its chain (the chain starts with it
    /// when a hand-off makes the launch's session a task), with the window it ran out of.
    fn record_link(&mut self, run: &Run, record: &RunRecord, spent: Option<&Spent>) {
        let Ok(cwd) = std::env::current_dir() else {
            return;
        };
        let session = run
            .session_id
            .clone()
            .or_else(|| record.session().and_then(|session| session.id.clone()));
        let link = tasks::Link {
            rung: run.index + 1,
            label: run.rung.label(),
            cli: run.rung.backend.family.name().to_string(),
            login: run.login_key.clone(),
            session,
            at: run.started,
            last: Timestamp::now(),
            resets_at: spent.map(|spent| spent.window.resets_at),
            spent: spent.map(|spent| spent.words.clone()),
            brief: self.brief_given.take(),
            parent: None,
        };
        if let Some(place) = tasks::carried(&self.state_dir, &cwd, self.task.as_ref(), link) {
            self.task = Some(place);
        }
    }

    /// Chooses the rung to run from where the launch stands, saying why rungs above it were
    /// passed over; with none left, waits (once) or ends.
    fn choose(&mut self) -> anyhow::Result<Chosen> {
        let mut choice = self.cascade.choose(self.start);
        if self.options.dry_run {
            let resume = self
                .resuming
                .as_ref()
                .filter(|resuming| choice.winner == Some(resuming.index))
                .map(|resuming| resuming.id.as_str());
            dry_run::print(
                &mut self.cascade,
                &choice,
                &self.args,
                resume,
                self.options.json,
            )?;
            return Ok(Chosen::Exit(0));
        }
        // The rung a session was just handed off from, and every rung on the login that ran
        // out (its other models), are passed over as parked: the hand-off notice says so
        // once — not "(claude-sonnet-5) unavailable — 5-hour limit" above the line saying
        // Opus ran out.
        let said: Vec<usize> = match self.handoff {
            Some(_) => {
                let spent: Vec<String> = self
                    .handed_from
                    .iter()
                    .filter_map(|(_, login)| login.clone())
                    .collect();
                let mut said = Vec::new();
                for index in 0..self.cascade.len() {
                    let handed_from = self.handed_from.iter().any(|(from, _)| *from == index);
                    if handed_from || self.login_of(index).is_some_and(|key| spent.contains(&key)) {
                        said.push(index);
                    }
                }
                said
            }
            None => Vec::new(),
        };
        announce_passed(&mut self.cascade, &choice, &said, &mut self.why_not);
        if choice.winner.is_none()
            && self.start > 0
            && let Some(again) = reopened_above(&mut self.cascade)
        {
            choice = again;
        }
        let Some(winner) = choice.winner else {
            return self.none_left();
        };
        let login = self.login_of(winner);
        if self.handed_from.contains(&(winner, login)) {
            // Its window was filed when it handed off; a state dir agent cannot write
            // would offer it again. It is never handed the session back.
            self.cascade
                .tried(winner, "the session was handed off from it");
            self.start = winner + 1;
            return Ok(Chosen::Again);
        }
        if let Some(Status::Good {
            how: Good::BudgetUnprobed,
            reason,
            ..
        }) = &choice.winner_status
        {
            term::notice(&format!(
                "{reason} — running {} unprobed; the fast-fail net still guards it",
                self.cascade.rung(winner).label()
            ));
        }
        Ok(Chosen::Rung(winner))
    }

    /// The login rung `index` runs on, if it is a login's.
    fn login_of(&mut self, index: usize) -> Option<String> {
        let rung = self.cascade.rung(index);
        let ready = rung.state.as_ref().ok()?;
        ready.login.as_ref().map(|login| login.key.clone())
    }

    /// No rung is left to run: every one that could is parked (wait once, or end 75), or
    /// none could (69, each named).
    fn none_left(&mut self) -> anyhow::Result<Chosen> {
        if let Some(handoff) = &self.handoff {
            term::notice(&format!(
                "{} ran out of its window ({}) — no other rung is open to continue on",
                handoff.from, handoff.spent
            ));
        }
        match waiting::every_rung_parked(self.config, &mut self.cascade, self.wait.take()) {
            None => Err(no_rung_left(&self.why_not, &self.ran_failed)),
            Some(waiting::Parked::Exit(code)) => Ok(Chosen::Exit(code)),
            Some(waiting::Parked::Reopened) => {
                self.start_again_at_the_top();
                Ok(Chosen::Again)
            }
        }
    }

    /// Health, probes and windows as they are now, from the top.
    fn start_again_at_the_top(&mut self) {
        self.cascade.start_over();
        self.start = 0;
        self.why_not.clear();
        self.ran_failed.clear();
    }

    /// Runs rung `winner` with the launch's words, and follows how it ended.
    fn run(&mut self, winner: usize) -> anyhow::Result<Next> {
        let rung = self.cascade.rung(winner).clone();
        let Ok(ready) = &rung.state else {
            unreachable!("a winner is always ready")
        };
        let login_key = ready.login.as_ref().map(|login| login.key.clone());
        self.announce_start(winner, &rung);
        // A resume runs the session it names; any other run may get a new one of agent's.
        let resume = self
            .resuming
            .as_ref()
            .filter(|resuming| resuming.index == winner)
            .map(|resuming| resuming.id.clone());
        let (args, session_id) = match &resume {
            Some(id) => (self.args.clone(), Some(id.clone())),
            None => limit_ending::name_the_session(&rung, &self.args),
        };
        // The cascade passed over every rung whose CLI cannot take the words.
        let translation = rung
            .translate_resuming(&args, resume.as_deref())
            .map_err(|refusal| usage(refusal.to_string()))?;
        for notice in &translation.notices {
            term::notice(notice);
        }
        let family = rung.backend.family;
        let mut command = child::command(
            family,
            &[ready.binary.to_string_lossy().into_owned()],
            &translation.argv,
            &ready.env,
            &ready.env_remove,
        );
        let started = Timestamp::now();
        child::tell_the_statusline(&mut command, family, &rung.label(), login_key.as_deref());
        let plan = stdout_plan(self.config, family, &args);
        let outcome = match child::run(command, family.needs_terminal(), plan) {
            Ok(outcome) => outcome,
            Err(err) if too_long_to_start(&err) => {
                // The system refused the words before the CLI ran: nothing ran, nothing
                // is unhealthy, and another rung (another CLI's words) may fit.
                let reason = format!("{err:#} — its command line is too long to start");
                term::notice(&format!("{} cannot start: {reason}", rung.label()));
                self.passed_over(winner, rung.label(), reason);
                return Ok(Next::Choose);
            }
            Err(err) => return Err(err),
        };
        // A CLI agent cannot name a session for may name its own in what it printed.
        let session_id = session_id
            .or_else(|| crate::login::readers::session_in_output(family, &outcome.stderr_head));
        let run = Run {
            handoff: self.handed_on.clone(),
            index: winner,
            rung,
            login_key,
            args,
            argv: translation.argv,
            session_id,
            started,
            plan,
            ended: outcome.ended,
            elapsed: outcome.elapsed,
            stderr_head: outcome.stderr_head,
            printed: outcome.printed,
        };
        Ok(self.follow(&run, outcome.held))
    }

    /// What is said and recorded as rung `winner` starts: its rotation turn, its login
    /// passed on within it, and the hand-off or the descent that led to it.
    fn announce_start(&mut self, winner: usize, rung: &rung::Rung) {
        if let Some(account) = &rung.account {
            crate::accounts::rotation::ran_on(rung.backend, account, &self.state_dir);
        }
        // Account before model before vendor: the rung's login was passed on within it.
        for notice in rung.login_notices() {
            term::notice(&notice);
        }
        if let Some(handoff) = self.handoff.take() {
            self.announced = Some(handoff.clone());
            let from: Vec<String> = self
                .handed_from
                .iter()
                .map(|(index, _)| self.cascade.rung(*index).label())
                .collect();
            self.handed_on = Some(serde_json::json!({
                "brief": handoff.brief.as_ref().map(|path| path.to_string_lossy()),
                "from": from,
            }));
            announce_handoff(&self.state_dir, &handoff, &rung.label());
        } else if winner > 0
            && self
                .resuming
                .as_ref()
                .is_none_or(|resuming| resuming.index != winner)
        {
            // A resumed session's own notice said which rung runs it.
            term::notice(&format!("using {}", rung.label()));
            if self.start == 0 {
                let first = self.cascade.rung(0).label();
                let reason = self
                    .why_not
                    .first()
                    .map_or("", |(_, reason)| reason.as_str());
                events::record(
                    &self.state_dir,
                    events::Kind::Fallback,
                    &first,
                    &rung.label(),
                    reason,
                );
            }
        }
    }

    /// Judges how `run` ended, once, and does what that ending calls for.
    fn follow(&mut self, run: &Run, held: Option<held::Spool>) -> Next {
        // A headless prompt that a CLI printing nothing off a terminal answered with
        // nothing, even on agent's own (DESIGN §22): it did not answer, whatever its code.
        let silent =
            run.printed == Some(false) && crate::adapter::dialect::runs_headless(&run.args);
        let seen = Seen {
            ended: run.ended,
            elapsed: run.elapsed,
            silent,
            told_to_stop: crate::signals::was_told_to_stop(),
        };
        let record = RunRecord::new(
            self.config,
            &run.rung,
            &run.argv,
            &run.stderr_head,
            run.started,
            run.session_id.as_deref(),
        )
        .ended(run.ended);
        let ending = ending::judge(&seen, self.config.fastfail, &record);
        // A hand-off this run did not take up is said so wherever the hand-off is shown.
        if run.handoff.is_some()
            && let Some(why) = ending.refused()
        {
            events::record(
                &self.state_dir,
                events::Kind::HandoffRefused,
                &run.rung.label(),
                "",
                &why,
            );
            // The next rung chosen takes it up, and is announced (and recorded) as the
            // hand-off's, so the last hand-off shown is where the session went on.
            self.handoff = self.announced.clone();
        }
        if record.read_windows() {
            record.file_windows(self.cascade.parking(), self.cascade.store());
        }
        if matches!(
            ending,
            Ending::Done(_) | Ending::Limit(..) | Ending::Quota(..)
        ) && (run.ended == Ended::Code(0) || run.elapsed >= self.config.fastfail)
        {
            // It really started: a failure at an earlier launch is no longer news.
            self.cascade.store().launched(run.target());
        }
        let carried_the_task = !matches!(
            ending,
            Ending::FastFail(..)
                | Ending::FolderRefused(..)
                | Ending::UsageError(..)
                | Ending::Limit(..)
        );
        if carried_the_task && self.task.is_some() {
            self.record_link(run, &record, None);
        }
        match ending {
            Ending::Signal(signal) => on_signal(run, held, signal),
            Ending::Done(code) => on_done(run, held, code),
            Ending::Limit(code, spent) => self.on_limit(run, held, &record, code, spent),
            Ending::Quota(code, said) => self.on_quota(run, held, code, &said),
            Ending::UsageError(code, why) => on_usage_error(run, held, code, &why),
            Ending::FolderRefused(code, fact) => self.on_folder_refused(run, code, fact),
            Ending::Acted(code, actions) => self.on_acted(run, held, &record, code, &actions),
            Ending::FastFail(code, reason) => {
                self.on_fast_fail(run, held, &record, code, reason, silent)
            }
        }
    }

    /// A session that ran out of its window mid-work: its window is filed, then `on_limit`
    /// says what follows — stop, hand off with a brief, wait and resume, or ask.
    fn on_limit(
        &mut self,
        run: &Run,
        held: Option<held::Spool>,
        record: &RunRecord,
        code: i32,
        spent: Spent,
    ) -> Next {
        let session = record.session().cloned();
        let ending = limit_ending::LimitEnding {
            window: spent.window,
            spent: spent.words,
            session_id: run
                .session_id
                .clone()
                .or_else(|| session.as_ref().and_then(|s| s.id.clone())),
            session,
        };
        outcome::rung_ran(outcome::RungRun {
            window: Some(ending.window.scope.describe()),
            reset: Some(ending.window.resets_at),
            ..run.recorded(outcome::Ended::Limit, Some(code))
        });
        let chain = limit_ending::Chain {
            index: run.index,
            login: run.login_key.as_ref(),
            handed_from: &self.handed_from,
            resumed: self.resuming.is_some(),
        };
        let asked = limit_ending::Asked {
            on_limit: self.options.on_limit,
            wait: self.options.wait,
        };
        let next = limit_ending::follow(
            self.config,
            &asked,
            &chain,
            &run.rung,
            &self.args,
            &ending,
            code,
            &mut self.cascade,
        );
        let spent = Spent {
            window: ending.window.clone(),
            words: ending.spent.clone(),
        };
        // A hand-off makes the session a task across CLIs (or adds to the one it carries);
        // a chain's link that stops or waits here records that its window is out.
        if self.task.is_some() || matches!(next, limit_ending::Next::HandOff { .. }) {
            self.record_link(run, record, Some(&spent));
        }
        match next {
            limit_ending::Next::Exit(exit) => {
                run.deliver(held, code);
                return Next::Exit(exit);
            }
            limit_ending::Next::HandOff { words, brief } => {
                // The session goes on elsewhere: what this run printed was its last word.
                run.show_words(held);
                self.brief_given.clone_from(&brief);
                self.handed_from.push((run.index, run.login_key.clone()));
                self.handoff = Some(Handoff {
                    from: run.rung.label(),
                    spent: ending.spent.clone(),
                    brief,
                });
                self.args = words;
                self.resuming = None;
            }
            limit_ending::Next::Resume { words, id } => {
                run.show_words(held);
                self.resuming = Some(rung::Resuming {
                    index: run.index,
                    id,
                    login: run.login_key.clone(),
                });
                self.args = words;
            }
        }
        // From the rung that ran out down (its other logins first), with health, probes
        // and windows as they are now. `--wait` is still the launch's.
        self.cascade.retarget(&self.args, self.resuming.clone());
        self.cascade.start_over();
        self.start = run.index;
        self.why_not.clear();
        self.ran_failed.clear();
        Next::Choose
    }

    /// A late run its CLI ended on a refused quota that names no window: skipped until it
    /// clears; with no rung below that could run, the launch ends (or waits) as a parked one.
    fn on_quota(&mut self, run: &Run, held: Option<held::Spool>, code: i32, said: &str) -> Next {
        quota_ending::skip(
            self.config,
            self.cascade.store(),
            &run.rung,
            code,
            run.elapsed,
            said,
        );
        if self.cascade.below_could_run(run.index) {
            return on_done(run, held, code);
        }
        outcome::rung_ran(run.recorded(outcome::Ended::Limit, Some(code)));
        match waiting::every_rung_parked(self.config, &mut self.cascade, self.wait.take()) {
            Some(waiting::Parked::Exit(parked)) => {
                run.deliver(held, code);
                Next::Exit(parked)
            }
            Some(waiting::Parked::Reopened) => {
                // Another rung answers now: this run's words were its last.
                run.show_words(held);
                self.start_again_at_the_top();
                Next::Choose
            }
            None => {
                run.deliver(held, code);
                Next::Exit(exit_byte(code))
            }
        }
    }

    /// The CLI will not run in this folder: a fact about the folder, not a dead rung, so
    /// nothing is recorded against it, and the next rung is tried.
    fn on_folder_refused(&mut self, run: &Run, code: i32, fact: String) -> Next {
        term::notice(&format!(
            "{} refused this folder (exit {code}): {fact}",
            run.rung.label()
        ));
        outcome::rung_ran(run.recorded(outcome::Ended::FastFail, Some(code)));
        self.ran_failed.push(same_way::How::Folder);
        self.passed_over(run.index, run.rung.label(), fact);
        Next::Choose
    }

    /// It failed fast after it had acted: the next CLI handed the same prompt from scratch
    /// would redo or fight the half-done work, so the launch ends with its code. Its
    /// windows are still learnt, so a limit it hit parks it.
    fn on_acted(
        &mut self,
        run: &Run,
        held: Option<held::Spool>,
        record: &RunRecord,
        code: i32,
        actions: &acted::Actions,
    ) -> Next {
        let reason = format!(
            "exited {code} after {}s, after it had {}",
            run.elapsed.as_secs(),
            actions.describe()
        );
        term::notice(&format!(
            "{} {reason} — not re-run from scratch on another rung; look at what it left, then run agent again",
            run.rung.label()
        ));
        self.file_fast_failure(run, record, &reason);
        run.deliver(held, code);
        outcome::rung_ran(run.recorded(outcome::Ended::Error, Some(code)));
        Next::Exit(exit_byte(code))
    }

    /// It never really started: distrusted, its windows learnt, and the next rung tried
    /// with the same words. What it printed never reaches stdout above the next answer.
    fn on_fast_fail(
        &mut self,
        run: &Run,
        held: Option<held::Spool>,
        record: &RunRecord,
        code: i32,
        reason: String,
        silent: bool,
    ) -> Next {
        run.show_words(held);
        term::notice(&format!(
            "{} {reason} — treating as unavailable",
            run.rung.label()
        ));
        self.cascade.store().distrust(run.target(), &reason);
        self.file_fast_failure(run, record, &reason);
        outcome::rung_ran(run.recorded(outcome::Ended::FastFail, Some(code)));
        self.ran_failed
            .push(same_way::How::of(&run.rung, code, &run.stderr_head, silent));
        self.passed_over(run.index, run.rung.label(), reason);
        Next::Choose
    }

    /// What every fast failure leaves: the windows its run's record names (a limit it hit
    /// parks the login until the reset, said), and an event.
    fn file_fast_failure(&self, run: &Run, record: &RunRecord, reason: &str) {
        if let Some(spent) = record.file_windows(self.cascade.parking(), self.cascade.store()) {
            term::notice(&format!(
                "{}: {} — parked until then",
                run.rung.label(),
                spent.words
            ));
        }
        events::record(
            &self.state_dir,
            events::Kind::Fastfail,
            &run.rung.label(),
            "",
            reason,
        );
    }

    /// Rung `index` ran (or could not start) and is passed over from now on, for `reason`.
    fn passed_over(&mut self, index: usize, label: String, reason: String) {
        self.cascade.tried(index, &reason);
        self.why_not.push((label, reason));
        self.start = index + 1;
    }
}

/// Killed by a signal: agent dies by the same one, once what it held is out.
fn on_signal(run: &Run, held: Option<held::Spool>, signal: i32) -> ! {
    run.deliver(held, signal + 128);
    outcome::rung_ran(run.recorded(outcome::Ended::Signal, None));
    crate::signals::die_by(signal)
}

/// It answered, or ran long enough to count: its code is agent's.
fn on_done(run: &Run, held: Option<held::Spool>, code: i32) -> Next {
    run.deliver(held, code);
    let ended = if code == 0 {
        outcome::Ended::Done
    } else {
        outcome::Ended::Error
    };
    outcome::rung_ran(run.recorded(ended, Some(code)));
    Next::Exit(exit_byte(code))
}

/// Bad arguments are not an outage: another rung would be handed the same.
fn on_usage_error(run: &Run, held: Option<held::Spool>, code: i32, why: &str) -> Next {
    term::notice(&format!(
        "{} refused the arguments (exit {code}, {why}) — not an outage, so no other rung is tried; `agent --dry-run ARGS` shows the command line it was given",
        run.rung.label()
    ));
    run.deliver(held, code);
    outcome::rung_ran(run.recorded(outcome::Ended::UsageError, Some(code)));
    Next::Exit(exit_byte(code))
}

/// What becomes of the stdout of a run of `family` with `args` (Claude Code's words, as
/// the rung is given them): a headless run's is held while its run may still fail fast,
/// when agent's stdout is not a terminal; one whose `--output-format json` is not Claude
/// Code's result document is kept whole, for agent to write that document.
fn stdout_plan(config: &Config, family: crate::adapter::Family, args: &[OsString]) -> held::Plan {
    use crate::adapter::dialect;
    let mode = if dialect::runs_headless(args) {
        dialect::Mode::Headless
    } else {
        dialect::Mode::Interactive
    };
    // Kept whole for every CLI, Claude Code's too: its document reaches stdout only if its
    // run is the launch's last — a session handed on leaves one result, the final one.
    held::Plan::for_launch(
        mode,
        dialect::asks_json_result(args),
        family.needs_terminal(),
        std::io::IsTerminal::is_terminal(&std::io::stdout()),
        config.fastfail,
    )
}

/// Writes what a run that counted printed and agent still held to stdout, in order — as
/// Claude Code's result document when the launch asked for one of a CLI that prints
/// another shape (`claude_result`).
fn deliver(
    held: Option<held::Spool>,
    plan: held::Plan,
    rung: &rung::Rung,
    stderr: &str,
    code: i32,
    elapsed: Duration,
    handoff: Option<&serde_json::Value>,
) {
    use std::io::Write as _;
    let Some(held) = held else { return };
    let mut stdout = std::io::stdout();
    if plan == held::Plan::Whole {
        let family = rung.backend.family;
        // Claude Code's own document is its own, byte for byte; only a hand-off is added to
        // it. Another CLI's output becomes one.
        let doc = if family.prints_claudes_result() {
            let Some(handoff) = handoff else {
                let _ = held.write_to(&mut stdout);
                return;
            };
            let text = held.text();
            match serde_json::from_str::<serde_json::Value>(text.trim()) {
                Ok(mut doc) if doc.is_object() => {
                    doc["agent_handoff"] = handoff.clone();
                    doc.to_string()
                }
                _ => {
                    let _ = stdout
                        .write_all(text.as_bytes())
                        .and_then(|()| stdout.flush());
                    return;
                }
            }
        } else {
            let text = held.text();
            let mut doc =
                claude_result::document(family, &rung.label(), &text, stderr, code, elapsed);
            if let Some(handoff) = handoff {
                doc["agent_handoff"] = handoff.clone();
            }
            doc.to_string()
        };
        let _ = writeln!(stdout, "{doc}").and_then(|()| stdout.flush());
    } else {
        let _ = held.write_to(&mut stdout);
    }
}

/// Shows on stderr, as one line, what a run whose output must not reach stdout (it failed
/// fast, or its session went on elsewhere) printed there, so the user still sees why: its
/// own error when its output is machine-readable, else its words.
fn show_words(held: Option<held::Spool>, rung: &rung::Rung, stderr: &str) {
    let Some(held) = held else { return };
    if let Some(words) = claude_result::failure_words(rung.backend.family, &held.text(), stderr) {
        term::notice(&format!("{} said: {words}", rung.label()));
    }
}

/// Says where the session went and records it: an event (the dashboard and `--status`
/// show the last one) and the outcome's hand-off.
fn announce_handoff(state_dir: &Path, handoff: &Handoff, to: &str) {
    let brief = match &handoff.brief {
        Some(brief) => {
            outcome::handed_off(brief);
            format!(" with a brief of the session: {}", brief.display())
        }
        None => " with its original words (no brief)".to_string(),
    };
    term::notice(&format!(
        "{} ran out of its window ({}) — continuing in {to}{brief}",
        handoff.from, handoff.spent
    ));
    let reason = match &handoff.brief {
        Some(path) => format!("{} — brief {}", handoff.spent, path.display()),
        None => handoff.spent.clone(),
    };
    events::record(state_dir, events::Kind::Handoff, &handoff.from, to, &reason);
}

/// Whether starting the CLI failed because its words and environment are more than the
/// system takes (`E2BIG`).
fn too_long_to_start(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::ArgumentListTooLong)
    })
}

/// A child's exit code as agent's own (its low byte).
pub fn exit_byte(code: i32) -> u8 {
    u8::try_from(code & 0xff).unwrap_or(1)
}

/// Prints `[agent] X unavailable — reason` for each rung passed over (not for CLIs that are
/// simply not installed: they were never an option; nor for the rungs in `said`, whose
/// reason another notice gave).
fn announce_passed(
    cascade: &mut Cascade,
    choice: &Choice,
    said: &[usize],
    why_not: &mut Vec<(String, String)>,
) {
    for (index, status) in &choice.passed {
        if cascade.was_tried(*index) {
            // Its failure was said, and counted, when it ran.
            continue;
        }
        let label = cascade.rung(*index).label();
        if let Status::Failed {
            reason,
            skip,
            class,
        } = status
        {
            if *class == ErrorClass::BadArguments {
                term::notice(reason);
            } else if !skip && !said.contains(index) {
                term::notice(&format!("{label} unavailable — {reason}"));
            }
            why_not.push((label, reason.clone()));
        }
    }
}

/// With every rung from the last one tried down used up: a rung above that this launch
/// passed over, open by now (a statusline feed reopened its login while the rungs below
/// were tried), as the launch's own choice finds it. Its notice says so.
fn reopened_above(cascade: &mut Cascade) -> Option<Choice> {
    let again = cascade.choose(0);
    let winner = again.winner?;
    term::notice(&format!(
        "{} reopened while the rungs below it were tried — running it",
        cascade.rung(winner).label()
    ));
    Some(Choice {
        passed: Vec::new(),
        ..again
    })
}

fn no_rung_left(why_not: &[(String, String)], ran: &[same_way::How]) -> anyhow::Error {
    let mut message = String::from("no rung is available:");
    for (label, reason) in why_not {
        let _ = write!(message, "\n  {label}: {reason}");
    }
    // The rungs passed over for the arguments point at them; rungs that never ran do not count.
    let refused: Vec<&str> = why_not
        .iter()
        .filter_map(|(_, reason)| reason.split_once(": passed over").map(|(flag, _)| flag))
        .collect();
    if let Some(cause) = same_way::summary(ran, &refused) {
        let _ = write!(message, "\n  {cause}");
    }
    anyhow::Error::new(UnavailableError(message))
}
