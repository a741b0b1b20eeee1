//! How one run of a CLI ended, judged once (DESIGN §24): a pure function of what agent saw
//! of the run — how it exited, how long it ran, whether it printed anything for a headless
//! prompt, whether the user asked agent to stop — and of what the run's own record says,
//! asked through [`Record`] only when the judgement needs it. What happens next is the
//! launch's, one small function per ending (`launch::machine`); the outcome record, the
//! notices and the exit code are all read from this one value.

use std::time::Duration;

use super::acted::Actions;
use super::child::Ended;
use super::fastfail::{self, Verdict};

/// A window the run's record says it spent: the one that resets last, and its words
/// ("5-hour limit, resets 15:00").
#[derive(Debug, Clone)]
pub struct Spent {
    pub window: crate::login::Window,
    pub words: String,
}

/// How a run ended.
#[derive(Debug, Clone)]
pub enum Ending {
    /// Killed by this signal.
    Signal(i32),
    /// Over, with the CLI's own code: it answered (0 or 130) and its session did not end
    /// on its limit, ran past `fastfail_seconds`, or agent was told to stop.
    Done(i32),
    /// Its own record says its usage window ran out: its session's last turn was refused
    /// for it (whatever the code), or it failed after running past `fastfail_seconds` or
    /// after it acted (changed files, ran commands) however soon.
    Limit(i32, Spent),
    /// It ran past `fastfail_seconds` and ended on a refused quota its record names no
    /// window for (opencode's provider error), in its own words.
    Quota(i32, String),
    /// It failed fast refusing the arguments: bad words are no outage.
    UsageError(i32, String),
    /// It failed fast because its CLI will not run in this folder: a fact of the folder.
    FolderRefused(i32, String),
    /// It failed fast after it had acted (changed files, ran commands).
    Acted(i32, Actions),
    /// It failed fast: it never really started; the reason says how.
    FastFail(i32, String),
}

impl Ending {
    /// Why the run did not take up what it was given, in words, when it did not: it
    /// refused the arguments or the folder, or failed before it really started. `None` for
    /// a run that went on with it (answered, ran out, acted, was stopped).
    pub fn refused(&self) -> Option<String> {
        match self {
            Ending::UsageError(code, why) => {
                Some(format!("refused the arguments (exit {code}, {why})"))
            }
            Ending::FolderRefused(code, fact) => {
                Some(format!("refused this folder (exit {code}): {fact}"))
            }
            Ending::FastFail(_, reason) => Some(reason.clone()),
            Ending::Signal(_)
            | Ending::Done(_)
            | Ending::Limit(..)
            | Ending::Quota(..)
            | Ending::Acted(..) => None,
        }
    }

    /// The word the outcome record says of it.
    pub fn recorded_as(&self) -> super::outcome::Ended {
        use super::outcome::Ended as Word;
        match self {
            Ending::Signal(_) => Word::Signal,
            Ending::Done(0) => Word::Done,
            Ending::Done(_) | Ending::Acted(..) => Word::Error,
            Ending::Limit(..) | Ending::Quota(..) => Word::Limit,
            Ending::UsageError(..) => Word::UsageError,
            Ending::FolderRefused(..) | Ending::FastFail(..) => Word::FastFail,
        }
    }
}

/// What agent saw of a run with no record read.
#[derive(Debug, Clone, Copy)]
pub struct Seen {
    pub ended: Ended,
    pub elapsed: Duration,
    /// A headless prompt that a CLI printing nothing off a terminal answered with nothing.
    pub silent: bool,
    /// The user's Ctrl-C, TERM or HUP came during the run: nothing more is tried.
    pub told_to_stop: bool,
}

/// What the run's own record and words say, asked only as the judgement needs it (each
/// answer may read a file the CLI wrote).
pub trait Record {
    /// The spent window its record names, if any.
    fn spent(&self) -> Option<Spent>;
    /// Its CLI's words for a refused quota on its last line, for a CLI whose record names
    /// no window.
    fn quota_words(&self) -> Option<String>;
    /// How it refused the arguments, exiting `code`.
    fn refused_arguments(&self, code: i32) -> Option<String>;
    /// How its CLI refused this folder, exiting `code`.
    fn refused_folder(&self, code: i32) -> Option<String>;
    /// What it did before it failed, when it did anything.
    fn acted(&self) -> Option<Actions>;
    /// Its session's last turn was refused for its usage limit and nothing answered after
    /// it (the CLI's own record; a session that waited for the reset and went on is not).
    fn ended_on_its_limit(&self) -> bool;
}

/// The one judgement of how a run ended.
pub fn judge(seen: &Seen, fastfail: Duration, record: &impl Record) -> Ending {
    let code = match seen.ended {
        Ended::Signal(signal) => return Ending::Signal(signal),
        Ended::Code(code) => code,
    };
    let verdict = if seen.told_to_stop {
        Verdict::Final
    } else {
        fastfail::judge(seen.ended, seen.elapsed, fastfail, seen.silent)
    };
    // However it exited and however long it ran — an interactive session the user quit
    // after the CLI said the limit exits 0 — a session whose last turn was refused for its
    // limit ran out. Not when the user told agent to stop: nothing more is to happen.
    if matches!(verdict, Verdict::Final)
        && !seen.told_to_stop
        && record.ended_on_its_limit()
        && let Some(spent) = record.spent()
    {
        return Ending::Limit(code, spent);
    }
    match verdict {
        Verdict::Final if code != 0 && seen.elapsed >= fastfail => {
            if let Some(spent) = record.spent() {
                Ending::Limit(code, spent)
            } else if let Some(said) = record.quota_words() {
                Ending::Quota(code, said)
            } else {
                Ending::Done(code)
            }
        }
        Verdict::Final => Ending::Done(code),
        Verdict::FastFail => {
            if let Some(why) = record.refused_arguments(code) {
                Ending::UsageError(code, why)
            } else if let Some(fact) = record.refused_folder(code) {
                Ending::FolderRefused(code, fact)
            } else if let Some(actions) = record.acted() {
                // A run that acted and then ran out of its window is a session cut short,
                // however soon: exactly what a brief is for, not an error to leave alone.
                match record.spent() {
                    Some(spent) => Ending::Limit(code, spent),
                    None => Ending::Acted(code, actions),
                }
            } else if seen.silent {
                Ending::FastFail(code, "printed nothing for a headless prompt".into())
            } else {
                Ending::FastFail(
                    code,
                    format!("exited {code} after {}s", seen.elapsed.as_secs()),
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;

    /// A record that answers as told and counts what it was asked.
    #[derive(Default)]
    struct Told {
        spent: Option<Spent>,
        quota: Option<String>,
        arguments: Option<String>,
        folder: Option<String>,
        acted: Option<Actions>,
        ran_out: bool,
        asked: Cell<usize>,
    }

    impl Record for Told {
        fn spent(&self) -> Option<Spent> {
            self.asked.set(self.asked.get() + 1);
            self.spent.clone()
        }
        fn quota_words(&self) -> Option<String> {
            self.asked.set(self.asked.get() + 1);
            self.quota.clone()
        }
        fn refused_arguments(&self, _: i32) -> Option<String> {
            self.asked.set(self.asked.get() + 1);
            self.arguments.clone()
        }
        fn refused_folder(&self, _: i32) -> Option<String> {
            self.asked.set(self.asked.get() + 1);
            self.folder.clone()
        }
        fn acted(&self) -> Option<Actions> {
            self.asked.set(self.asked.get() + 1);
            self.acted.clone()
        }
        fn ended_on_its_limit(&self) -> bool {
            self.ran_out
        }
    }

    const NET: Duration = Duration::from_secs(25);

    fn seen(ended: Ended, secs: u64) -> Seen {
        Seen {
            ended,
            elapsed: Duration::from_secs(secs),
            silent: false,
            told_to_stop: false,
        }
    }

    fn spent() -> Spent {
        let now = jiff::Timestamp::now();
        Spent {
            window: crate::login::Window::new(
                crate::login::window::Scope::FiveHour,
                100.0,
                now + jiff::SignedDuration::from_hours(2),
                crate::login::window::Source::Transcript,
                now,
            )
            .unwrap(),
            words: "5-hour limit, resets 15:00".into(),
        }
    }

    #[test]
    fn an_answer_asks_only_whether_its_session_ran_out_and_a_signal_asks_nothing() {
        let record = Told::default();
        assert!(matches!(
            judge(&seen(Ended::Code(0), 1), NET, &record),
            Ending::Done(0)
        ));
        assert!(matches!(
            judge(&seen(Ended::Signal(15), 1), NET, &record),
            Ending::Signal(15)
        ));
        assert_eq!(record.asked.get(), 0);
    }

    #[test]
    fn a_session_that_ended_on_its_limit_is_a_limit_whatever_its_code_and_length() {
        let ran_out = Told {
            ran_out: true,
            spent: Some(spent()),
            ..Told::default()
        };
        // The user quit an interactive session after the limit (/exit: 0, Ctrl-C: 130).
        for (code, secs) in [(0, 600), (130, 600), (0, 2), (1, 60)] {
            assert!(
                matches!(
                    judge(&seen(Ended::Code(code), secs), NET, &ran_out),
                    Ending::Limit(c, _) if c == code
                ),
                "{code} after {secs}s"
            );
        }
        // Told to stop: nothing more is to happen.
        let stopped = Seen {
            told_to_stop: true,
            ..seen(Ended::Code(0), 600)
        };
        assert!(matches!(judge(&stopped, NET, &ran_out), Ending::Done(0)));
        // A full window its record names but a session that answered after it: done.
        let answered_after = Told {
            spent: Some(spent()),
            ..Told::default()
        };
        assert!(matches!(
            judge(&seen(Ended::Code(0), 600), NET, &answered_after),
            Ending::Done(0)
        ));
    }

    #[test]
    fn a_late_failure_is_a_limit_by_its_record_else_a_quota_by_its_words_else_final() {
        let limit = Told {
            spent: Some(spent()),
            ..Told::default()
        };
        assert!(matches!(
            judge(&seen(Ended::Code(1), 60), NET, &limit),
            Ending::Limit(1, _)
        ));
        let quota = Told {
            quota: Some("Error: quota".into()),
            ..Told::default()
        };
        assert!(matches!(
            judge(&seen(Ended::Code(1), 60), NET, &quota),
            Ending::Quota(1, _)
        ));
        assert!(matches!(
            judge(&seen(Ended::Code(2), 60), NET, &Told::default()),
            Ending::Done(2)
        ));
    }

    #[test]
    fn a_fast_failure_is_bad_words_then_the_folder_then_what_it_did_then_unavailable() {
        let all = Told {
            arguments: Some("its usage error".into()),
            folder: Some("untrusted".into()),
            ..Told::default()
        };
        assert!(matches!(
            judge(&seen(Ended::Code(2), 1), NET, &all),
            Ending::UsageError(2, _)
        ));
        let folder = Told {
            folder: Some("untrusted".into()),
            ..Told::default()
        };
        assert!(matches!(
            judge(&seen(Ended::Code(1), 1), NET, &folder),
            Ending::FolderRefused(1, _)
        ));
        match judge(&seen(Ended::Code(1), 3), NET, &Told::default()) {
            Ending::FastFail(1, reason) => assert_eq!(reason, "exited 1 after 3s"),
            other => panic!("{other:?}"),
        }
        let silent = Seen {
            silent: true,
            ..seen(Ended::Code(0), 1)
        };
        match judge(&silent, NET, &Told::default()) {
            Ending::FastFail(0, reason) => {
                assert_eq!(reason, "printed nothing for a headless prompt");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_fast_failure_that_acted_is_a_limit_when_its_record_says_the_window_ran_out() {
        let acted = Actions {
            files: vec!["notes.txt".into()],
            commands: 0,
        };
        let ran_out = Told {
            acted: Some(acted.clone()),
            spent: Some(spent()),
            ..Told::default()
        };
        assert!(matches!(
            judge(&seen(Ended::Code(1), 3), NET, &ran_out),
            Ending::Limit(1, _)
        ));
        let only_acted = Told {
            acted: Some(acted),
            ..Told::default()
        };
        assert!(matches!(
            judge(&seen(Ended::Code(1), 3), NET, &only_acted),
            Ending::Acted(1, _)
        ));
        // Ran out without having done anything: nothing to hand on, the next rung runs the
        // same words from scratch (the window is filed all the same).
        let spent_only = Told {
            spent: Some(spent()),
            ..Told::default()
        };
        assert!(matches!(
            judge(&seen(Ended::Code(1), 3), NET, &spent_only),
            Ending::FastFail(1, _)
        ));
    }

    #[test]
    fn told_to_stop_a_fast_failure_is_final_and_tries_nothing_more() {
        let stopped = Seen {
            told_to_stop: true,
            ..seen(Ended::Code(1), 1)
        };
        let record = Told::default();
        assert!(matches!(judge(&stopped, NET, &record), Ending::Done(1)));
    }
}
