//! The outcome record (DESIGN.md §21): with `--outcome FILE` (or `AGENT_OUTCOME=FILE`), one
//! JSON object written to FILE when agent ends — its exit code, each rung it started and how
//! that run ended, the hand-off brief, the time it waited — for the script that ran it:
//!
//! ```json
//! {"exit": 0, "rungs": [{"rung": 1, "cli": "Claude Code", "label": "Claude Code (opus)",
//!   "model": "claude-opus-5", "session": "…", "seconds": 3612.5, "code": 1, "ended": "limit",
//!   "window": "5-hour", "reset": "2026-12-02T15:00:00Z"}, …],
//!  "handoff": "/home/me/.local/state/agent/handoffs/….md", "waited_seconds": 0}
//! ```
//!
//! The recorder is process-global (a `Mutex` static), not a value the launch carries: agent
//! ends in places no launch value reaches — `main`'s error path (a usage error, exit 69 or
//! 75 from deep in the cascade) and [`crate::signals::die_by`], a leaf that may not know
//! about the launch (it calls back through [`crate::signals::before_dying`]). The file is
//! written once, by the first [`finish`]; every later call is a no-op, so the innermost way
//! out that knows the code wins and an outer one cannot overwrite it.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use serde::Serialize;

use crate::state::file::{check_given, write_given};

/// How one started rung's run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Ended {
    /// It ran and ended on its own (any exit code not told apart below).
    Done,
    /// It failed before `fastfail_seconds`: it never really started.
    FastFail,
    /// It ran out of its usage window mid-session (`window`, `reset` say which).
    Limit,
    /// agent could not run it, or it ended in an error agent knows.
    Error,
    /// It was killed by a signal.
    Signal,
    /// It refused its command line.
    UsageError,
}

/// One started rung, as the record lists it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RungRun {
    pub rung: usize,
    /// The CLI's name ("Claude Code").
    pub cli: String,
    /// The rung as notices name it ("Claude Code (opus) via work").
    pub label: String,
    pub model: Option<String>,
    /// The CLI's own session id, when agent gave or learnt it.
    pub session: Option<String>,
    pub seconds: f64,
    /// Its exit code; `None` when killed by a signal or never started.
    pub code: Option<i32>,
    pub ended: Ended,
    /// For a limit: which window ran out ("5-hour").
    pub window: Option<String>,
    /// For a limit: when that window resets.
    #[serde(serialize_with = "timestamp")]
    pub reset: Option<jiff::Timestamp>,
}

/// RFC 3339 in UTC (`2026-12-02T15:00:00Z`), what `date -d` and every JSON reader take.
#[allow(
    clippy::ref_option,
    reason = "serde's serialize_with hands over the field by reference"
)]
fn timestamp<S: serde::Serializer>(
    value: &Option<jiff::Timestamp>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match value {
        Some(at) => serializer.serialize_str(&at.to_string()),
        None => serializer.serialize_none(),
    }
}

/// What the record will say, gathered as the launch goes.
#[derive(Debug, Default)]
struct Recorder {
    /// Where to write it; `None`: nowhere (no `--outcome`, or not a launch).
    path: Option<PathBuf>,
    rungs: Vec<RungRun>,
    handoff: Option<PathBuf>,
    waited: Duration,
    /// The file was written (or its writing was tried): later ways out leave it be.
    finished: bool,
}

impl Recorder {
    const fn new() -> Recorder {
        Recorder {
            path: None,
            rungs: Vec::new(),
            handoff: None,
            waited: Duration::ZERO,
            finished: false,
        }
    }

    fn document(&self, exit: i32) -> serde_json::Value {
        serde_json::json!({
            "exit": exit,
            "rungs": self.rungs,
            "handoff": self.handoff.as_ref().map(|path| path.to_string_lossy()),
            // Milliseconds are as fine as a script needs; the float noise of more is not.
            "waited_seconds": (self.waited.as_secs_f64() * 1000.0).round() / 1000.0,
        })
    }

    /// Writes the record the first time it is asked to; `Ok(None)` when there is nothing
    /// to write (no path, or written already).
    fn finish(&mut self, exit: i32) -> anyhow::Result<Option<PathBuf>> {
        if self.finished {
            return Ok(None);
        }
        let Some(path) = self.path.clone() else {
            return Ok(None);
        };
        self.finished = true;
        let mut bytes = serde_json::to_vec(&self.document(exit))?;
        bytes.push(b'\n');
        // No lock: the file is this run's own, not state other runs read and update. The
        // path is the user's: only a regular file there is replaced (a device or a FIFO is
        // written through, a link refused).
        write_given(&path, &bytes)?;
        Ok(Some(path))
    }
}

/// The variable that says `--outcome FILE` for every launch (for scripts).
pub const ENV_VAR: &str = "AGENT_OUTCOME";

/// Where the record goes: `--outcome FILE` (`flag`), else `AGENT_OUTCOME` (empty: unset).
pub fn path_from(flag: Option<&Path>) -> Option<PathBuf> {
    flag.map(Path::to_path_buf).or_else(|| {
        std::env::var_os(ENV_VAR)
            .filter(|value| !value.is_empty())
            .map(PathBuf::from)
    })
}

static RECORD: Mutex<Recorder> = Mutex::new(Recorder::new());

/// The recorder, even after a thread panicked holding it: the record is still wanted.
fn record() -> MutexGuard<'static, Recorder> {
    RECORD
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// From now on, [`finish`] writes the record to `path` (`None`: to nowhere). Called as soon
/// as the command line says where (before it is even parsed, from `AGENT_OUTCOME`, so a
/// usage error in it is recorded too); calling it again changes only where. A path the
/// record could never be written to (a symbolic link, a directory) is refused here, before
/// anything runs — a usage error (exit 2) — and nothing is armed.
pub fn record_to(path: Option<PathBuf>) -> anyhow::Result<()> {
    // Absolute now: the file is written beside the path first, and a bare `out.json` has no
    // directory to put it in.
    let path = path.map(|path| std::path::absolute(&path).unwrap_or(path));
    let refused = path.as_deref().map(check_given).transpose();
    let path = path.filter(|_| refused.is_ok());
    let armed = path.is_some();
    record().path = path;
    if armed {
        crate::signals::before_dying(finish);
    }
    refused
        .map(|_| ())
        .map_err(|err| crate::exit_codes::usage(format!("the outcome record: {err:#}")))
}

/// Whether a record is to be written (`--outcome` or `AGENT_OUTCOME`): what only the record
/// needs is read only then.
pub fn wanted() -> bool {
    record().path.is_some()
}

/// A rung was started and its run has ended.
pub fn rung_ran(run: RungRun) {
    record().rungs.push(run);
}

/// The session was handed on with the brief at `brief`.
pub fn handed_off(brief: &Path) {
    record().handoff = Some(brief.to_path_buf());
}

/// agent waited `d` for a reset (every wait of the launch adds up).
pub fn waited(d: Duration) {
    record().waited += d;
}

/// Writes the record with agent's exit code `exit`, once: later calls do nothing. A record
/// that cannot be written is said on stderr and changes nothing else — agent's own exit
/// code is what the caller sees either way.
pub fn finish(exit: i32) {
    if let Err(err) = record().finish(exit) {
        crate::term::error(&format!("the outcome record: {err:#}"));
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    fn limit_run() -> RungRun {
        RungRun {
            rung: 1,
            cli: "Claude Code".into(),
            label: "Claude Code (opus)".into(),
            model: Some("claude-opus-5".into()),
            session: Some("5f0c1e9a-1111-4222-8333-944455556666".into()),
            seconds: 3612.5,
            code: Some(1),
            ended: Ended::Limit,
            window: Some("5-hour".into()),
            reset: Some("2026-12-02T15:00:00Z".parse().unwrap()),
        }
    }

    #[test]
    fn the_record_has_the_documented_shape() {
        let mut recorder = Recorder::new();
        recorder.rungs.push(limit_run());
        recorder.rungs.push(RungRun {
            rung: 5,
            cli: "Codex".into(),
            label: "Codex".into(),
            model: None,
            session: None,
            seconds: 2.0,
            code: Some(0),
            ended: Ended::Done,
            window: None,
            reset: None,
        });
        recorder.handoff = Some(PathBuf::from("/state/handoffs/b.md"));
        recorder.waited = Duration::from_millis(1500) + Duration::from_nanos(7);
        assert_eq!(
            recorder.document(0),
            serde_json::json!({
                "exit": 0,
                "rungs": [
                    {"rung": 1, "cli": "Claude Code", "label": "Claude Code (opus)",
                     "model": "claude-opus-5", "session": "5f0c1e9a-1111-4222-8333-944455556666",
                     "seconds": 3612.5, "code": 1, "ended": "limit", "window": "5-hour",
                     "reset": "2026-12-02T15:00:00Z"},
                    {"rung": 5, "cli": "Codex", "label": "Codex", "model": null,
                     "session": null, "seconds": 2.0, "code": 0, "ended": "done",
                     "window": null, "reset": null},
                ],
                "handoff": "/state/handoffs/b.md",
                "waited_seconds": 1.5,
            })
        );
        assert_eq!(
            Recorder::new().document(69),
            serde_json::json!({"exit": 69, "rungs": [], "handoff": null, "waited_seconds": 0.0})
        );
    }

    #[test]
    fn every_ending_has_its_documented_word() {
        let words: Vec<serde_json::Value> = [
            Ended::Done,
            Ended::FastFail,
            Ended::Limit,
            Ended::Error,
            Ended::Signal,
            Ended::UsageError,
        ]
        .iter()
        .map(|ended| serde_json::to_value(ended).unwrap())
        .collect();
        assert_eq!(
            words,
            [
                "done",
                "fast_fail",
                "limit",
                "error",
                "signal",
                "usage_error"
            ]
        );
    }

    #[test]
    fn the_first_finish_writes_the_file_0600_and_later_ones_leave_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("outcome.json");
        let mut recorder = Recorder {
            path: Some(path.clone()),
            ..Recorder::new()
        };
        assert_eq!(recorder.finish(75).unwrap(), Some(path.clone()));
        recorder.rungs.push(limit_run());
        assert_eq!(recorder.finish(1).unwrap(), None);
        let written: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(written["exit"], 75);
        assert_eq!(written["rungs"], serde_json::json!([]));
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        // Nothing but the file itself is left in the directory (no temporary file).
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn with_nowhere_to_write_finish_writes_nothing_and_stays_ready() {
        let mut recorder = Recorder::new();
        assert_eq!(recorder.finish(2).unwrap(), None);
        let dir = tempfile::tempdir().unwrap();
        recorder.path = Some(dir.path().join("late.json"));
        assert!(recorder.finish(2).unwrap().is_some());
    }
}
