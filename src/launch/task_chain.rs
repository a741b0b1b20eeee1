//! `agent -c` in a folder whose task crossed CLIs (DESIGN §25): the task is continued where
//! it lives now — the session its last link ran, resumed by id in that CLI's own words —
//! or, when a rung above has reopened (its window reset), it goes back up: that rung's CLI
//! resumes its own session with a brief of what the rungs below did since, read from their
//! own records. A rung whose window is still out is never handed the task.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use jiff::Timestamp;

use super::cascade::Cascade;
use super::limit_ending;
use super::resolve;
use super::rung::{Resuming, Rung};
use crate::adapter::dialect::{self, session_words};
use crate::config::Config;
use crate::state::tasks::{self, Link, Place, Task};
use crate::term;

/// What a launch of `agent -c` does instead of its CLI's own `-c`.
pub struct Continuation {
    /// Where the chain stands: the next run comes from its last link.
    pub place: Place,
    /// The session the run resumes, on its own rung and login.
    pub resuming: Resuming,
    /// Claude Code's words for it: the user's flags, and a prompt when there is one to give.
    pub args: Vec<OsString>,
    /// The rungs (and logins) whose window is still out: never handed the task.
    pub handed_from: Vec<(usize, Option<String>)>,
    /// The brief the run is started with (going back up), for the chain's record.
    pub brief: Option<PathBuf>,
}

/// The continuation of the task `args` (`-c`, `--continue`) ask for in `cwd`, when the
/// folder's newest task crossed CLIs and is open; `None`: the CLI's own `-c` is meant.
/// `dry_run`: nothing is written (no brief); the words name where it would be.
pub fn continuation(
    config: &Config,
    cascade: &mut Cascade,
    state_dir: &Path,
    cwd: &Path,
    args: &[OsString],
    dry_run: bool,
) -> Option<Continuation> {
    if !session_words::continues_the_last(args) {
        return None;
    }
    let task = tasks::open_in(state_dir, cwd)?;
    let current_at = task.links.len() - 1;
    let current_index = index_of(config, &task.links[current_at])?;
    let headless = dialect::runs_headless(args);
    let chain = Chain {
        place: Place {
            task: task.id.clone(),
            link: current_at,
        },
        handed_from: still_out(config, &task, Timestamp::now()),
        task,
    };
    match reopened_above(config, cascade, &chain.task, current_index, headless) {
        Some((back, index)) => {
            let briefs = if dry_run {
                vec![PathBuf::from("(a brief written as it starts)")]
            } else {
                let lower = chain.below(back);
                say_reading(&lower);
                briefs_of(
                    config,
                    state_dir,
                    cwd,
                    &lower,
                    &chain.task.links[back].label,
                )
            };
            chain.back_up(back, index, args, headless, briefs)
        }
        None => chain.where_it_lives(config, current_index, args, headless),
    }
}

/// The folder's open chain, as `agent -c` found it.
struct Chain {
    task: Task,
    /// Where it stands: its last link.
    place: Place,
    /// The rungs (and logins) of its links whose window is still out.
    handed_from: Vec<(usize, Option<String>)>,
}

impl Chain {
    /// The links after link `back` that are not its session: what went on below it.
    fn below(&self, back: usize) -> Vec<&Link> {
        let link = &self.task.links[back];
        self.task.links[back + 1..]
            .iter()
            .filter(|lower| !lower.is_the_same_session(link))
            .collect()
    }

    /// The continuation that resumes `link`'s session on rung `index` with `args`.
    fn resuming(
        self,
        index: usize,
        link: &Link,
        id: String,
        args: Vec<OsString>,
        brief: Option<PathBuf>,
    ) -> Continuation {
        Continuation {
            place: self.place,
            resuming: Resuming {
                index,
                id,
                login: link.login.clone(),
            },
            args,
            handed_from: self
                .handed_from
                .into_iter()
                .filter(|(at, _)| *at != index)
                .collect(),
            brief,
        }
    }

    /// Back up to link `back`, on rung `index`, whose window reset: its CLI resumes its own
    /// session with `briefs` of what the links below it did.
    fn back_up(
        self,
        back: usize,
        index: usize,
        args: &[OsString],
        headless: bool,
        briefs: Vec<PathBuf>,
    ) -> Option<Continuation> {
        let link = self.task.links[back].clone();
        let id = link.session.clone()?;
        let did = self
            .below(back)
            .iter()
            .map(|lower| lower.label.as_str())
            .collect::<Vec<_>>()
            .join(", then ");
        let note = back_up_note(&did, &briefs);
        let prompt = match session_words::prompt_of(args) {
            Some(own) if headless => format!("{own}\n\n{note}"),
            _ => note,
        };
        term::notice(&format!(
            "{}'s window has reset — taking this folder's task back up to it, resuming session {id} with a brief of what {did} did since{}",
            link.label,
            match briefs.as_slice() {
                [] => String::new(),
                [one] => format!(": {}", one.display()),
                _ => format!(" ({} briefs)", briefs.len()),
            }
        ));
        let words = session_words::with_prompt(args, &[], Some(&prompt));
        Some(self.resuming(index, &link, id, words, briefs.into_iter().next()))
    }

    /// Where the task lives: its last link's session, on rung `index`, with the user's
    /// prompt (headless without one, a word to go on).
    fn where_it_lives(
        self,
        config: &Config,
        index: usize,
        args: &[OsString],
        headless: bool,
    ) -> Option<Continuation> {
        let current = self.task.links[self.place.link].clone();
        let Some(id) = current.session.clone().filter(|id| {
            family_at(config, index)
                .is_some_and(|family| family.resume_words(id, headless).is_some())
        }) else {
            term::notice(&format!(
                "this folder's task lives in {}, whose session agent cannot resume by id — its CLI's own -c runs",
                current.label
            ));
            return None;
        };
        let now = Timestamp::now();
        let above: Vec<String> = self.task.links[..self.place.link]
            .iter()
            .filter(|link| link.still_out(now))
            .map(|link| {
                let until = link.resets_at.map_or_else(String::new, |at| {
                    format!(" until {}", crate::when::short(at, now))
                });
                format!("{} is out{until}", link.label)
            })
            .collect();
        let why = if above.is_empty() {
            String::new()
        } else {
            format!(" ({})", above.join("; "))
        };
        term::notice(&format!(
            "continuing this folder's task in {} session {id}{why}",
            current.label
        ));
        let prompt = session_words::prompt_of(args).or_else(|| headless.then(|| GO_ON.to_string()));
        let words = session_words::with_prompt(args, &[], prompt.as_deref());
        Some(self.resuming(index, &current, id, words, None))
    }
}

/// The prompt a headless `agent -c -p` without words of its own goes on with.
const GO_ON: &str = "[agent] Continue the task from where you stopped.";

/// The rung (0-based) a link ran on, if the table still has it: the same position and CLI,
/// else the first rung of the same label.
fn index_of(config: &Config, link: &Link) -> Option<usize> {
    let same_cli =
        |index: usize| family_at(config, index).is_some_and(|family| family.name() == link.cli);
    if let Some(index) = link.rung.checked_sub(1).filter(|&index| same_cli(index)) {
        return Some(index);
    }
    (0..config.rungs.len()).find(|&index| {
        same_cli(index)
            && resolve::resolve(config, index + 1, &config.rungs[index]).label() == link.label
    })
}

/// The CLI of rung `index` (0-based).
fn family_at(config: &Config, index: usize) -> Option<crate::adapter::Family> {
    let def = config.rungs.get(index)?;
    config
        .backends
        .get(&def.backend)
        .map(|backend| backend.family)
}

/// The links whose window is still out at `now`, as the launch's "handed from".
fn still_out(config: &Config, task: &Task, now: Timestamp) -> Vec<(usize, Option<String>)> {
    task.links
        .iter()
        .filter(|link| link.still_out(now))
        .filter_map(|link| Some((index_of(config, link)?, link.login.clone())))
        .collect()
}

/// The highest link above the one the task lives in whose rung answers now (its window
/// reset): its index in the chain and its rung's. Each is asked as the launch would ask it
/// (windows, health, a probe where the rung is probed), resuming its own session.
fn reopened_above(
    config: &Config,
    cascade: &mut Cascade,
    task: &Task,
    current_index: usize,
    headless: bool,
) -> Option<(usize, usize)> {
    let now = Timestamp::now();
    let mut above: Vec<(usize, usize)> = task.links[..task.links.len() - 1]
        .iter()
        .enumerate()
        .filter(|(_, link)| !link.still_out(now))
        .filter_map(|(at, link)| {
            let index = index_of(config, link)?;
            let id = link.session.as_deref()?;
            let family = family_at(config, index)?;
            (index < current_index && family.resume_words(id, headless).is_some())
                .then_some((at, index))
        })
        .collect();
    above.sort_by_key(|&(at, index)| (index, std::cmp::Reverse(at)));
    above.dedup_by_key(|&mut (_, index)| index);
    let words: Vec<OsString> = vec!["-p".into(), "--".into(), "x".into()];
    let words = if headless { words } else { Vec::new() };
    let found = above.into_iter().find(|&(at, index)| {
        let link = &task.links[at];
        let resuming = Resuming {
            index,
            id: link.session.clone().unwrap_or_default(),
            login: link.login.clone(),
        };
        cascade.retarget(&words, Some(resuming));
        // Parked is out, even where the cascade would run the last rung standing: every
        // other rung is passed over for a resume, so this one always looks the last.
        !cascade.parked_now(index) && cascade.choose(index).winner == Some(index)
    });
    cascade.retarget(&words, None);
    found
}

/// Reading opencode's record starts opencode (seconds): said before, so the wait is not a
/// silence.
fn say_reading(lower: &[&Link]) {
    for link in lower {
        term::notice(&format!("reading what {} did…", link.label));
    }
}

/// One brief per link below the one the task goes back to, each of what that session did,
/// read from its own record; a link whose record cannot be read still gets the brief of the
/// folder's changes.
fn briefs_of(
    config: &Config,
    state_dir: &Path,
    cwd: &Path,
    lower: &[&Link],
    returning_to: &str,
) -> Vec<PathBuf> {
    lower
        .iter()
        .filter_map(|link| {
            let index = index_of(config, link)?;
            let rung: Rung = resolve::resolve(config, index + 1, &config.rungs[index]);
            let session = limit_ending::read_session(&rung, cwd, link.at, link.session.as_deref())
                .unwrap_or_default();
            let model = session.model.clone().or_else(|| rung.run_model.clone());
            let source = crate::handoff::Source {
                label: &link.label,
                cli: &rung.backend.label,
                model: model.as_deref(),
                session: link.session.as_deref(),
                limit: "",
                returning_to: Some(returning_to),
            };
            match crate::handoff::write(state_dir, cwd, &source, &session, Timestamp::now()) {
                Ok(path) => Some(path),
                Err(err) => {
                    term::notice(&format!(
                        "the brief of {} was not written: {err:#}",
                        link.label
                    ));
                    None
                }
            }
        })
        .collect()
}

/// The first prompt of a session the task went back up to.
fn back_up_note(did: &str, briefs: &[PathBuf]) -> String {
    let paths = briefs
        .iter()
        .map(|path| path.display().to_string())
        .collect::<Vec<_>>();
    let brief = match paths.as_slice() {
        [] => "No brief could be written; look at the folder's changes".to_string(),
        [one] => format!(
            "A brief of what it did since — the plan, the files it changed, the commands it ran, where it stopped — is at {one}. Read it first"
        ),
        many => format!(
            "Briefs of what each did since — the plan, the files changed, the commands run, where each stopped — are at {}. Read them first, in that order",
            many.join(", ")
        ),
    };
    format!(
        "[agent] While your usage window was out, this task went on in {did}. Your window has reset and the task is back with you. {brief}, then continue the task from where it stopped."
    )
}
