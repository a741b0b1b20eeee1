//! Which of agent's parsers reads which CLI's own files: one set of readers per CLI — what
//! its login store holds, the model it last ran, what one of its runs did, the calls its
//! records hold. Where each CLI keeps those files is its adapter's (`crate::adapter`); the
//! parsers of their formats are the files beside this one. [`ALL`] registers each CLI's
//! readers once, each naming the adapter it reads for, so no question here is a `match` on
//! the CLI. A CLI agent reads nothing of (a program with no adapter) has no entry, and
//! every question about it answers "don't know".

use std::path::Path;

use jiff::Timestamp;

use super::asking::AskWindows;
use super::calls::{SourceStats, Transcripts};
use super::run_actions::Actions;
use super::said_limit::SaidLimit;
use super::session::Session;
use super::{OwnStore, Readers, Window};
use crate::adapter::{Env, Family};

/// Every CLI's readers: the one registration of what agent reads of each CLI.
pub static ALL: &[&Readers] = &[
    &super::claude::READERS,
    &super::codex::READERS,
    &super::gemini::READERS,
    &super::agy::READERS,
    &super::opencode::READERS,
    #[cfg(test)]
    &super::stand_in::READERS,
];

/// The readers of `family`'s files; `None` for a CLI agent reads nothing of.
pub fn of(family: Family) -> Option<&'static Readers> {
    let name = family.cli()?.name;
    ALL.iter().copied().find(|readers| readers.cli.name == name)
}

/// What `family`'s login store holds in `env`; `None` when nothing agent can see.
pub fn own_store(family: Family, env: &Env) -> Option<OwnStore> {
    (of(family)?.own_store)(env)
}

/// Why a CLI of `family` no longer serves the login its store holds in `env`, if it
/// refuses that kind of login.
pub fn refused_login(family: Family, env: &Env) -> Option<&'static str> {
    (of(family)?.refused_login)(env)
}

/// The model a CLI of `family` last ran, from its records where its adapter finds them in
/// `env` (the environment the launched CLI gets) — what a probe that needs a model uses when
/// the CLI's settings name none (DESIGN §12 "out of the box"): the CLIs' built-in defaults
/// move with their releases and plans; what they last ran is a fact.
pub fn last_model(family: Family, env: &Env) -> Option<String> {
    (of(family)?.last_model)(env)
}

/// What the run of a CLI of `family` with its home at `home`, started at `start` in `cwd`,
/// did by its own record.
pub fn run_actions(
    family: Family,
    home: &Path,
    cwd: &Path,
    start: Timestamp,
    id: Option<&str>,
) -> Actions {
    of(family).map_or_else(Actions::default, |readers| {
        (readers.run_actions)(home, cwd, start, id)
    })
}

/// Whether a CLI of `family` names its windows in the record of each run.
pub fn reads_run_windows(family: Family) -> bool {
    of(family).is_some_and(|readers| readers.run_windows.is_some())
}

/// The windows the run of a CLI of `family` with its home at `home`, started at `start` in
/// `cwd`, names in its own record (never an older run's, nor another session's: `id` is the
/// session's when agent knows it).
pub fn run_windows(
    family: Family,
    home: &Path,
    cwd: &Path,
    start: Timestamp,
    id: Option<&str>,
) -> Vec<Window> {
    match of(family).and_then(|readers| readers.run_windows) {
        Some(read) => read(home, cwd, start, id),
        None => Vec::new(),
    }
}

/// What the session of a CLI of `family` with its home at `home` was, for the run that
/// started at `start` in `cwd`: the session `id` when agent knows it, else this run's own
/// record. `None` for a CLI whose records name no session agent reads, or no record found.
pub fn run_session(
    family: Family,
    home: &Path,
    cwd: &Path,
    start: Timestamp,
    id: Option<&str>,
) -> Option<Session> {
    (of(family)?.run_session?)(home, cwd, start, id)
}

/// Whether reading a session of a CLI of `family` starts the CLI itself
/// (`Readers::session_costs_a_run`).
pub fn session_costs_a_run(family: Family) -> bool {
    of(family).is_some_and(|readers| readers.session_costs_a_run)
}

/// The id of the session a run of a CLI of `family` was, from what it printed on stderr
/// (`stderr_head`); `None` for a CLI that names none there, or when it did not.
pub fn session_in_output(family: Family, stderr_head: &str) -> Option<String> {
    (of(family)?.session_in_output?)(stderr_head)
}

/// The usage limit a run of a CLI of `family` named in its final error on stderr
/// (`stderr_head`); `None` for a CLI that names none there, or when it did not.
pub fn limit_in_output(family: Family, stderr_head: &str) -> Option<SaidLimit> {
    (of(family)?.limit_in_output?)(stderr_head)
}

/// How a CLI of `family`'s login is asked for its windows, when it can be.
pub fn ask_windows(family: Family) -> Option<&'static AskWindows> {
    of(family)?.ask_windows.as_ref()
}

/// Whether agent counts the calls in a CLI of `family`'s own records (`--usage`).
pub fn reads_calls(family: Family) -> bool {
    of(family).is_some_and(|readers| readers.calls.is_some())
}

/// The calls a CLI of `family`'s records on this machine hold, each once into `into`, and
/// what was read; `None` when agent reads none of its records, or this machine has none.
pub fn calls(family: Family, into: &mut Transcripts) -> Option<SourceStats> {
    (of(family)?.calls?)(into)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cli_has_one_set_of_readers_found_by_its_adapter() {
        for readers in ALL {
            let family = Family::named(readers.cli.name).unwrap_or_else(|| {
                panic!("{}: readers of a CLI with no adapter", readers.cli.name)
            });
            assert!(
                std::ptr::eq(of(family).unwrap(), *readers),
                "{}: registered twice",
                readers.cli.name
            );
        }
        for family in crate::adapter::ALL {
            assert!(of(family).is_some(), "{}: no readers", family.name());
        }
        assert!(of(Family::Other).is_none());
    }
}
