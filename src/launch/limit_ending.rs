//! A session that outlived its window (DESIGN §21): the run went past `fastfail_seconds`
//! and its own record says its login's usage limit ran out. Such an ending is told apart
//! from every other late ending (which stays final, seed 002's rule) and follows
//! `on_limit`: stop (pass the code through, say how to go on), continue on the next open
//! rung with a brief of the session, wait for the reset and resume the same session once,
//! or ask which — after the CLI has exited, never typing into it.

use std::ffi::OsString;
use std::fmt::Write as _;
use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use jiff::Timestamp;

use crate::adapter::dialect::{self, session_words};
use crate::config::Config;
use crate::config::on_limit::OnLimit;
use crate::login::Window;
use crate::login::session::Session;
use crate::term;

use super::cascade::Cascade;
use super::rung::Rung;
use super::waiting;

/// A limit ending: the window that ran out, in words, and what the session was.
pub struct LimitEnding {
    /// The spent window that resets last.
    pub window: Window,
    /// "5-hour limit, resets 15:00".
    pub spent: String,
    /// The session's own id, when agent gave it or its record says.
    pub session_id: Option<String>,
    /// What the session was, by its record (`None`: the CLI keeps none agent reads).
    pub session: Option<Session>,
}

/// What to do after a limit ending: flag (or `AGENT_ON_LIMIT`), the backend's key, the
/// config's, else `ask` when a person can answer on this terminal and `stop` when not
/// (a cron job must never hang on a question).
pub fn choice(config: &Config, flag: Option<OnLimit>, rung: &Rung) -> OnLimit {
    flag.or_else(|| config.on_limit_for(rung.backend))
        .unwrap_or_else(|| {
            if someone_can_answer() {
                OnLimit::Ask
            } else {
                OnLimit::Stop
            }
        })
}

/// Whether a question on stderr reaches a person whose answer comes on stdin.
fn someone_can_answer() -> bool {
    std::io::stdin().is_terminal() && term::notices_on_terminal()
}

/// The session id of the run about to start: the one the user named, or — for a CLI that
/// starts a session under an id agent chooses, and words that leave it to agent — a new one
/// agent gives it (`claude --session-id UUID …`), so the run's record is found by id. The
/// words to run are returned with it.
pub fn name_the_session(rung: &Rung, args: &[OsString]) -> (Vec<OsString>, Option<String>) {
    if !rung.backend.family.takes_a_session_id() {
        return (args.to_vec(), None);
    }
    if !names_a_new_session(rung, args) {
        return (args.to_vec(), session_words::named_session(args));
    }
    let id = new_session_id();
    let mut named = vec![OsString::from(SESSION_ID_FLAG), OsString::from(&id)];
    named.extend(args.iter().cloned());
    (named, Some(id))
}

/// Claude Code's flag that starts a session under a given id; a dialect says it in its
/// CLI's words.
const SESSION_ID_FLAG: &str = "--session-id";

/// Whether a launch of `rung` with `args` gives the CLI a new session id of agent's.
pub fn names_a_new_session(rung: &Rung, args: &[OsString]) -> bool {
    rung.backend.family.takes_a_session_id() && session_words::leaves_the_session_to_agent(args)
}

/// A random (version 4) UUID, the form Claude Code's `--session-id` takes.
fn new_session_id() -> String {
    let mut bytes: [u8; 16] = std::array::from_fn(|_| fastrand::u8(..));
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex = bytes.iter().fold(String::new(), |mut hex, b| {
        let _ = write!(hex, "{b:02x}");
        hex
    });
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

/// What the session that ran on `rung` from `start` in `cwd` was, by its CLI's record in
/// the home the rung's CLI had (a login's or a key's: a session is one either way).
pub fn read_session(
    rung: &Rung,
    cwd: &Path,
    start: Timestamp,
    id: Option<&str>,
) -> Option<Session> {
    let ready = rung.state.as_ref().ok()?;
    let family = rung.backend.family;
    let home = family.home(&crate::adapter::Env::child(&ready.env, &ready.env_remove))?;
    crate::login::readers::run_session(family, &home, cwd, start, id)
}

/// The words that resume `ending`'s session on `rung` once — the user's flags and, headless,
/// a short prompt to go on (interactive, the session opens and the user goes on) — and the
/// session to resume, which the rung's CLI says in its own words (`--resume ID`, `codex exec
/// resume ID`). `None`: agent cannot resume it (its CLI has no way agent knows, or the
/// session's id is unknown).
pub fn resume_words(
    rung: &Rung,
    args: &[OsString],
    ending: &LimitEnding,
) -> Option<(Vec<OsString>, String)> {
    let id = ending.session_id.as_deref()?;
    let headless = dialect::runs_headless(args);
    rung.backend.family.resume_words(id, headless)?;
    let prompt = headless.then_some(RESUME_PROMPT);
    Some((
        session_words::with_prompt(args, &[], prompt),
        id.to_string(),
    ))
}

/// The prompt a resumed headless session goes on with.
const RESUME_PROMPT: &str = "[agent] Your usage window ran out in the middle of this task and has now reset. Continue the task from where you stopped.";

/// The words the next rung starts with after a hand-off: the user's flags, and a first
/// prompt naming the brief — headless, after the original prompt verbatim.
pub fn continue_words(args: &[OsString], label: &str, brief: &Path) -> Vec<OsString> {
    let note = format!(
        "[agent] This task began in {label}, which ran out of its usage window mid-session. A brief of that session — what was asked, what was done, the files it changed, where it stopped — is at {}. Read it first, then continue the task from where it stopped.",
        brief.display()
    );
    let prompt = match session_words::prompt_of(args) {
        Some(original) if dialect::runs_headless(args) => format!("{original}\n\n{note}"),
        _ => note,
    };
    session_words::with_prompt(args, &[], Some(&prompt))
}

/// Writes the hand-off brief of `ending`'s session; `None` (with the reason told) when it
/// cannot be written — the next rung then starts with the original words only.
pub fn write_brief(
    state_dir: &Path,
    cwd: &Path,
    rung: &Rung,
    ending: &LimitEnding,
) -> Option<PathBuf> {
    let session = ending.session.clone().unwrap_or_default();
    let model = session.model.clone().or_else(|| rung.run_model.clone());
    let label = rung.label();
    let source = crate::handoff::Source {
        label: &label,
        cli: &rung.backend.label,
        model: model.as_deref(),
        session: ending.session_id.as_deref(),
        limit: &ending.spent,
        returning_to: None,
    };
    match crate::handoff::write(state_dir, cwd, &source, &session, Timestamp::now()) {
        Ok(path) => Some(path),
        Err(err) => {
            term::notice(&format!("the hand-off brief was not written: {err:#}"));
            None
        }
    }
}

/// Where a launch's chain of sessions stands when one of them ends on a limit.
pub struct Chain<'a> {
    /// The rung that ran out (0-based).
    pub index: usize,
    /// Its login.
    pub login: Option<&'a String>,
    /// The rungs (and logins) the session was handed off from already: never again.
    pub handed_from: &'a [(usize, Option<String>)],
    /// Whether this session was already resumed once after a reset.
    pub resumed: bool,
}

/// What the launch was asked to do at a limit: `--on-limit` (or `AGENT_ON_LIMIT`), and the
/// longest wait (`--wait=MAX`, else [`waiting::DEFAULT_MAX`]) a resume waits for its reset.
pub struct Asked {
    pub on_limit: Option<OnLimit>,
    pub wait: Option<Duration>,
}

/// What the launch does after a limit ending.
pub enum Next {
    /// End with this code.
    Exit(u8),
    /// Hand the session to the next open rung from the one that ran out down, with these
    /// words (a first prompt naming the brief).
    HandOff {
        words: Vec<OsString>,
        brief: Option<PathBuf>,
    },
    /// Run the same rung once more with these words, resuming its session `id` in its CLI's
    /// own words; the reset has come.
    Resume { words: Vec<OsString>, id: String },
}

/// Follows `on_limit` after `ending` of the run on `rung` with Claude Code's words `args`
/// that exited `code`: stops, hands off, waits for the reset to resume, or asks which. The
/// launch's own cascade answers the question's "which rung would continue it", targeted
/// for a moment at the words a hand-off would give.
#[allow(clippy::too_many_arguments)]
pub fn follow<'c>(
    config: &'c Config,
    asked: &Asked,
    chain: &Chain,
    rung: &Rung,
    args: &[OsString],
    ending: &LimitEnding,
    code: i32,
    cascade: &mut Cascade<'c>,
) -> Next {
    let label = rung.label();
    let passed_through = u8::try_from(code & 0xff).unwrap_or(1);
    // Once only: a session resumed after one reset is not resumed after the next.
    let resume = if chain.resumed {
        None
    } else {
        resume_words(rung, args, ending)
    };
    let mut choice = choice(config, asked.on_limit, rung);
    if choice == OnLimit::Ask {
        // The next open rung, by the one rule, so the question can name it.
        cascade.retarget(&continue_words(args, &label, Path::new("BRIEF")), None);
        let next = next_open_rung(cascade, chain);
        cascade.retarget(args, None);
        choice = ask(&label, &ending.spent, next.as_deref(), resume.is_some());
        if choice == OnLimit::Stop {
            // The question said what ran out; the stop says only the way back.
            let back = way_back(rung, ending)
                .map(|command| format!("; the session itself, after the reset: `{command}`"))
                .unwrap_or_default();
            term::notice(&format!(
                "stopped — its exit code is passed through and the next launch skips this login until the reset{back}"
            ));
            return Next::Exit(passed_through);
        }
    }
    match choice {
        OnLimit::Continue => {
            let state_dir = cascade.store().state_dir().to_path_buf();
            let cwd = std::env::current_dir().unwrap_or_default();
            let brief = write_brief(&state_dir, &cwd, rung, ending);
            let words = match &brief {
                Some(brief) => continue_words(args, &label, brief),
                None => args.to_vec(),
            };
            Next::HandOff { words, brief }
        }
        OnLimit::Resume if let Some((words, id)) = resume => {
            wait_to_resume(config, asked, chain, rung, ending, cascade, words, id)
        }
        OnLimit::Resume => {
            term::notice(&format!(
                "{label} ran out of its window ({}) — agent cannot resume this session (its CLI's resume form or the session id is unknown, or it was resumed once already); its exit code is passed through",
                ending.spent
            ));
            Next::Exit(passed_through)
        }
        OnLimit::Stop | OnLimit::Ask => {
            let back = way_back(rung, ending);
            term::notice(&stopped(&label, &ending.spent, back.as_deref()));
            Next::Exit(passed_through)
        }
    }
}

/// Waits for `ending`'s reset, as `--wait` does, then resumes session `id` on `rung` with
/// `words` — or says why not (a reset beyond the wait, a Ctrl-C: nothing ran).
#[allow(clippy::too_many_arguments)]
fn wait_to_resume(
    config: &Config,
    asked: &Asked,
    chain: &Chain,
    rung: &Rung,
    ending: &LimitEnding,
    cascade: &mut Cascade,
    words: Vec<OsString>,
    id: String,
) -> Next {
    let label = rung.label();
    // From this line on a Ctrl-C means "do not resume": noted, so the wait ends as
    // it says (130, nothing run) and the outcome record is written.
    crate::signals::note_interrupts();
    let max = asked.wait.unwrap_or(waiting::DEFAULT_MAX);
    // Said only once the wait is sure to begin: a reset beyond `max` is said instead.
    let announce = || {
        term::notice(&format!(
            "{label} ran out of its window ({}) — waiting for the reset to resume session {id}",
            ending.spent
        ));
    };
    let waited = waiting::until_reopens(
        config,
        cascade,
        chain.index,
        ending.window.resets_at,
        max,
        &announce,
    );
    let stopped = crate::signals::interrupted();
    crate::signals::stop_noting_interrupts();
    let back = way_back(rung, ending)
        .map(|command| format!("; the session itself, after the reset: `{command}`"))
        .unwrap_or_default();
    match waited {
        waiting::Parked::Exit(code) => {
            term::notice(&format!("{label} was not resumed{back}"));
            Next::Exit(code)
        }
        waiting::Parked::Reopened if stopped => {
            term::notice(&format!("stopped waiting — nothing ran{back}"));
            Next::Exit(130)
        }
        waiting::Parked::Reopened => {
            term::notice(&format!("resuming {label} session {id}"));
            Next::Resume { words, id }
        }
    }
}

/// The label of the rung a hand-off from rung `from` would go to: the first open one from
/// there down, never one already handed from, nor the spent login itself.
fn next_open_rung(cascade: &mut Cascade, chain: &Chain) -> Option<String> {
    let mut start = chain.index;
    loop {
        let winner = cascade.choose(start).winner?;
        let rung = cascade.rung(winner);
        let key = rung
            .state
            .as_ref()
            .ok()
            .and_then(|ready| ready.login.as_ref())
            .map(|login| login.key.clone());
        let is_spent =
            winner == chain.index && chain.login.is_some() && key.as_ref() == chain.login;
        if !is_spent && !chain.handed_from.contains(&(winner, key)) {
            return Some(rung.label());
        }
        start = winner + 1;
    }
}

/// The one line a stopped limit ending prints.
pub fn stopped(label: &str, spent: &str, way_back: Option<&str>) -> String {
    let back = way_back.map_or_else(String::new, |command| {
        format!("; the session itself, after the reset: `{command}`")
    });
    format!(
        "{label} ran out of its window mid-session ({spent}) — its exit code is passed through and the next launch skips this login until then; --on-limit=continue hands the session to the next open rung, --on-limit=resume resumes it after the reset{back}"
    )
}

/// The command that takes the user back into `ending`'s session, in its CLI's own words
/// (`claude --resume ID`): running agent's command again starts a new session. `None` when
/// its CLI has no resume form agent knows, or the session's id is unknown.
/// A rung on another home than the user's own (a pool account's) names it first, as the
/// CLI must be given it: `CLAUDE_CONFIG_DIR=~/.claude-work claude --resume ID`.
pub fn way_back(rung: &Rung, ending: &LimitEnding) -> Option<String> {
    let family = rung.backend.family;
    let id = ending.session_id.as_deref()?;
    let words = family.resume_words(id, false)?;
    let home = super::parking::login_of(rung)
        .and_then(|login| login.records)
        .filter(|home| family.home(&crate::adapter::Env::process()).as_ref() != Some(home))
        .zip(family.home_vars().first())
        .map(|(home, var)| {
            format!(
                "{var}={} ",
                crate::text::shell_quote(&home.to_string_lossy())
            )
        })
        .unwrap_or_default();
    Some(format!(
        "{home}{} {}",
        family.name(),
        crate::text::shell_join(&words)
    ))
}

/// How often the question looks for an answer or a Ctrl-C.
const TICK: Duration = Duration::from_millis(200);
/// An answer that is none of the choices is asked again this many times, then it stops.
const ASKS: usize = 3;

/// Asks on the terminal what to do: continue on `next` (when one is open), wait for the
/// reset and resume (when `resume` is possible), or stop. Empty, end of input, Ctrl-C or
/// no answer after [`ASKS`] questions: stop — nothing more runs.
pub fn ask(label: &str, spent: &str, next: Option<&str>, resume: bool) -> OnLimit {
    let mut options = Vec::new();
    if let Some(next) = next {
        options.push(format!("continue in {next} with a brief [c]"));
    }
    if resume {
        options.push("wait for the reset and resume [r]".to_string());
    }
    options.push("stop [s, Enter]".to_string());
    let question = format!(
        "{label} ran out of its window ({spent}). {}? ",
        capitalized(&or_list(&options))
    );
    crate::signals::note_interrupts();
    let answer = (0..ASKS).find_map(|_| {
        term::prompt(&question);
        match read_answer() {
            Answer::Line(line) => match line.trim().to_ascii_lowercase().as_str() {
                "c" | "continue" if next.is_some() => Some(OnLimit::Continue),
                "r" | "resume" if resume => Some(OnLimit::Resume),
                "" | "s" | "stop" => Some(OnLimit::Stop),
                _ => None,
            },
            Answer::Closed => Some(OnLimit::Stop),
        }
    });
    crate::signals::stop_noting_interrupts();
    answer.unwrap_or(OnLimit::Stop)
}

enum Answer {
    Line(String),
    /// End of input or Ctrl-C.
    Closed,
}

/// One line from stdin, polled so that a Ctrl-C (noted, not fatal, while agent has no
/// child) ends the question at once.
fn read_answer() -> Answer {
    use std::os::fd::AsRawFd as _;
    let stdin = std::io::stdin();
    let fd = stdin.as_raw_fd();
    let mut line = Vec::new();
    loop {
        if crate::signals::interrupted() {
            eprintln!();
            return Answer::Closed;
        }
        let mut poll = nix::libc::pollfd {
            fd,
            events: nix::libc::POLLIN,
            revents: 0,
        };
        let tick = i32::try_from(TICK.as_millis()).unwrap_or(200);
        // SAFETY: one valid pollfd for the length given.
        let ready = unsafe { nix::libc::poll(&raw mut poll, 1, tick) };
        if ready <= 0 {
            continue;
        }
        let mut byte = [0u8; 1];
        // SAFETY: reads at most one byte into a buffer of one.
        let read = unsafe { nix::libc::read(fd, byte.as_mut_ptr().cast(), 1) };
        match read {
            1 if byte[0] == b'\n' => {
                return Answer::Line(String::from_utf8_lossy(&line).into_owned());
            }
            1 => line.push(byte[0]),
            0 => return Answer::Closed,
            _ if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted => {}
            _ => return Answer::Closed,
        }
    }
}

/// "a or b", "a, b, or c": with three choices, the comma keeps "resume [r]" from reading as
/// part of the last one.
fn or_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [first, last] => format!("{first} or {last}"),
        [rest @ .., last] => format!("{}, or {last}", rest.join(", ")),
    }
}

fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_uppercase().chain(chars).collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(words: &[&str]) -> Vec<OsString> {
        words.iter().map(OsString::from).collect()
    }

    #[test]
    fn a_headless_hand_off_carries_the_original_prompt_verbatim_then_the_brief() {
        let brief = Path::new("/state/handoffs/b.md");
        let words = continue_words(
            &os(&["--session-id", "s-1", "-p", "fix the failing tests"]),
            "Claude Code (opus)",
            brief,
        );
        assert_eq!(words[..2], os(&["-p", "--"])[..]);
        let prompt = words[2].to_string_lossy();
        assert!(
            prompt.starts_with(
                "fix the failing tests\n\n[agent] This task began in Claude Code (opus)"
            ),
            "{prompt}"
        );
        assert!(prompt.contains("/state/handoffs/b.md"), "{prompt}");
    }

    #[test]
    fn an_interactive_hand_off_starts_with_the_brief_alone() {
        let words = continue_words(&os(&["fix it"]), "Claude Code", Path::new("/b.md"));
        assert_eq!(words.len(), 2, "{words:?}");
        assert!(
            words[1]
                .to_string_lossy()
                .starts_with("[agent] This task began in")
        );
    }

    #[test]
    fn a_session_id_is_a_version_4_uuid() {
        let id = new_session_id();
        let parts: Vec<&str> = id.split('-').collect();
        assert_eq!(
            parts.iter().map(|p| p.len()).collect::<Vec<_>>(),
            [8, 4, 4, 4, 12]
        );
        assert!(parts[2].starts_with('4'), "{id}");
        assert!("89ab".contains(&parts[3][..1]), "{id}");
        assert_ne!(id, new_session_id());
    }

    #[test]
    fn the_choices_read_as_a_sentence() {
        let items = ["a".to_string(), "b".to_string(), "c".to_string()];
        assert_eq!(or_list(&items), "a, b, or c");
        assert_eq!(or_list(&items[..2]), "a or b");
        assert_eq!(or_list(&items[..1]), "a");
        assert_eq!(capitalized("continue in X"), "Continue in X");
    }
}
