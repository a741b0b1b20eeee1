//! Codex's session records (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`): the
//! windows of its `token_count` lines, the rollout of one run, and the model Codex last ran
//! (research §2.4, §2.5).
//!
//! - `token_count` lines carry `payload.rate_limits` = `{limit_id, limit_name, primary,
//!   secondary, credits, plan_type, rate_limit_reached_type}`, each window `{used_percent,
//!   window_minutes, resets_at (epoch s)}` (field names confirmed in the 0.171.0 binary's
//!   strings); builds around 0.41 wrote `resets_in_seconds`, relative to the line's
//!   `timestamp`, instead of `resets_at` (research, from a third-party parser). Both are
//!   read. `rate_limits` sits beside `info`, not in it.
//! - On a usage-limit refusal Codex emits a `token_count` with the snapshot from the error's
//!   `x-codex-*` headers, so the last such line of a fast-failed run shows the full window
//!   and its reset when the refusal carried them (research, from the codex source).
//! - The refusal itself is the run's `task_complete` line: `payload.error` =
//!   `{message, codex_error_info: "usage_limit_exceeded"}` (0.171.0 against the mock). Its
//!   only reset is in the message, "… try again at 9:19 AM." — codex's local rendering of
//!   the 429 body's `error.resets_at` (codex-rs `core/src/api_bridge.rs`, `map_api_error`:
//!   a 429 whose `error.type` is `usage_limit_reached` becomes `UsageLimitReached` with
//!   `resets_at` epoch seconds; `core/src/error.rs`, `UsageLimitReachedError`'s `Display`;
//!   openai/codex at 001cb8e2, one source, and the pinned binary's output). A refusal with
//!   no windows in its `token_count` (a body without those headers) parks the whole login
//!   (the text names no window) until that reset.
//! - `session_meta.payload.cwd` and `turn_context.payload.{cwd, model}` say where and with
//!   what a session ran (research, from kvsankar/agent-history; `model` on `turn_context`
//!   is also what the usage report relies on).
//! - Compressed rollouts (`.jsonl.zst`, 0.171.0) are not read: when Codex compresses old
//!   files is UNCONFIRMED, and a run's own file is fresh.

use std::path::{Path, PathBuf};

use jiff::tz::TimeZone;
use jiff::{SignedDuration, Timestamp};
use serde_json::Value;

use super::window::{self, Scope, Source, Window};
use super::{records, reset_text};

/// The plan-wide bucket's id; any other `limit_id` is a per-model limit.
const PLAN_LIMIT_ID: &str = "codex";

/// The windows of one `token_count` line (`type: event_msg`, `payload.type: token_count`,
/// written by Codex itself); `None` when the line is not one with `rate_limits`, whatever
/// text about token counts a user message or a function's output holds.
pub fn token_count_windows(line: &str) -> Option<Vec<Window>> {
    if !line.contains("token_count") {
        return None;
    }
    let row: Value = serde_json::from_str(line).ok()?;
    // Codex's own event, never a message or a tool's output that quotes one.
    if row.get("type").and_then(Value::as_str) != Some("event_msg")
        || row.pointer("/payload/type").and_then(Value::as_str) != Some("token_count")
    {
        return None;
    }
    let written = records::timestamp(row.get("timestamp")?)?;
    let limits = row.pointer("/payload/rate_limits")?.as_object()?;
    let family = model_limit_family(
        limits.get("limit_id").and_then(Value::as_str),
        limits.get("limit_name").and_then(Value::as_str),
    );
    Some(
        ["primary", "secondary"]
            .iter()
            .filter_map(|slot| limits.get(*slot))
            .filter_map(|w| {
                let used = w.get("used_percent")?.as_f64()?;
                let resets_at = match w.get("resets_at").and_then(Value::as_f64) {
                    Some(epoch) => window::from_epoch_seconds(epoch)?,
                    None => {
                        let after = w.get("resets_in_seconds")?.as_f64()?;
                        written
                            .checked_add(SignedDuration::try_from_secs_f64(after).ok()?)
                            .ok()?
                    }
                };
                let scope = w
                    .get("window_minutes")
                    .and_then(Value::as_u64)
                    .map_or(Scope::Unstated, |m| Scope::from_minutes(m, family.clone()));
                Window::new(scope, used, resets_at, Source::CodexRecord, written)
            })
            .collect(),
    )
}

/// The model family of a per-model Codex limit: its name (`GPT-5.3-Codex-Spark`), else
/// its id; `None` for the plan's own bucket.
pub fn model_limit_family(limit_id: Option<&str>, limit_name: Option<&str>) -> Option<String> {
    let id = limit_id.filter(|id| !id.is_empty() && *id != PLAN_LIMIT_ID)?;
    Some(
        limit_name
            .filter(|n| !n.trim().is_empty())
            .unwrap_or(id)
            .to_lowercase(),
    )
}

/// What one run left in its rollout.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRecord {
    pub path: PathBuf,
    /// The windows of the run's last `token_count` line (empty when it wrote none), or,
    /// when none of them is spent and the run ended on Codex's usage-limit refusal, the
    /// login-wide window its message names.
    pub windows: Vec<Window>,
    /// The run's model, from its last `turn_context`.
    pub model: Option<String>,
}

/// The rollout of the run that started at `start` in `cwd`, under `sessions`
/// (`$CODEX_HOME/sessions`), and of it only lines written at or after `start` — never an
/// older run's, and never another session's: with the session's `id` (the one Codex
/// printed), that session's rollout; without it, the one session for that directory that
/// *began* since `start` (the run agent started), else the one session written to since
/// `start` (a session the run resumed). Two candidates and no id: agent cannot tell which is
/// its own (the user's own Codex in the same folder), and says nothing rather than read
/// another session.
pub fn find_run(
    sessions: &Path,
    cwd: &Path,
    start: Timestamp,
    id: Option<&str>,
) -> Option<RunRecord> {
    let cwd = cwd.to_string_lossy();
    if let Some(id) = id {
        let path = find_session(sessions, id, start)?;
        return read_run(&path, &cwd, start).map(|(run, _)| run);
    }
    let candidates: Vec<(RunRecord, bool)> = rollouts_newest_first(sessions, Some(start))
        .into_iter()
        .filter_map(|path| read_run(&path, &cwd, start))
        .collect();
    let began: Vec<&RunRecord> = candidates
        .iter()
        .filter(|(_, began)| *began)
        .map(|(run, _)| run)
        .collect();
    match (began.as_slice(), candidates.as_slice()) {
        ([one], _) => Some((*one).clone()),
        ([], [(one, _)]) => Some(one.clone()),
        _ => None,
    }
}

/// The rollout of the session `id` (the id its `session_meta` line names), written since
/// `since`. Every day's directory is looked in: a session resumed by its id keeps writing
/// to its own rollout, in the directory of the day it began.
pub fn find_session(sessions: &Path, id: &str, since: Timestamp) -> Option<PathBuf> {
    let cutoff = records::slack(since);
    rollouts_newest_first(sessions, None)
        .into_iter()
        .take_while(|path| records::modified(path).is_some_and(|at| at >= cutoff))
        .find(|path| session_id(path).as_deref() == Some(id))
}

/// The id of the session a rollout holds: its first `session_meta` line's.
pub fn session_id(path: &Path) -> Option<String> {
    records::lines(path)
        .filter(|line| line.contains("\"session_meta\""))
        .find_map(|line| {
            let row: Value = serde_json::from_str(&line).ok()?;
            if row.get("type").and_then(Value::as_str) != Some("session_meta") {
                return None;
            }
            Some(row.pointer("/payload/id")?.as_str()?.to_string())
        })
}

/// The run in the rollout at `path` for `cwd` since `start`, and whether its session
/// began since `start` (its `session_meta` line was written then).
fn read_run(path: &Path, cwd: &str, start: Timestamp) -> Option<(RunRecord, bool)> {
    let mut same_dir = false;
    let mut ran_since_start = false;
    let mut began_since_start = false;
    let mut windows = Vec::new();
    let mut refusal = None;
    let mut model = None;
    for line in records::lines(path) {
        let Ok(row) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let kind = row.get("type").and_then(Value::as_str);
        if matches!(kind, Some("session_meta" | "turn_context"))
            && row.pointer("/payload/cwd").and_then(Value::as_str) == Some(cwd)
        {
            same_dir = true;
        }
        let Some(at) = row.get("timestamp").and_then(records::timestamp) else {
            continue;
        };
        if at < start {
            continue;
        }
        ran_since_start = true;
        began_since_start |= kind == Some("session_meta");
        if kind == Some("turn_context")
            && let Some(m) = row.pointer("/payload/model").and_then(Value::as_str)
        {
            model = Some(m.to_string());
        }
        if let Some(found) = token_count_windows(&line) {
            windows = found;
        }
        if let Some(found) = refusal_window(&row, at, &TimeZone::system()) {
            refusal = Some(found);
        }
    }
    // The windows the refusal's headers named say more (which window, how full); the text
    // only stands in when they name no spent one.
    if !windows.iter().any(Window::is_full) {
        windows.extend(refusal);
    }
    (same_dir && ran_since_start).then(|| {
        (
            RunRecord {
                path: path.to_path_buf(),
                windows,
                model,
            },
            began_since_start,
        )
    })
}

/// The window a `task_complete` line that ended on Codex's usage-limit refusal names: the
/// whole login, spent, until the time its message gives ("try again at …", read in `zone`,
/// Codex's own). `None` for any other line, and for a refusal that names no time ("Try again
/// later.", or Codex's other `usage_limit_exceeded` errors: no quota, plan without Codex).
fn refusal_window(row: &Value, written: Timestamp, zone: &TimeZone) -> Option<Window> {
    if row.get("type").and_then(Value::as_str) != Some("event_msg")
        || row.pointer("/payload/type").and_then(Value::as_str) != Some("task_complete")
        || row
            .pointer("/payload/error/codex_error_info")
            .and_then(Value::as_str)
            != Some(USAGE_LIMIT_EXCEEDED)
    {
        return None;
    }
    let message = row.pointer("/payload/error/message")?.as_str()?;
    let lower = message.to_lowercase();
    let at = lower.rfind(TRY_AGAIN_AT)? + TRY_AGAIN_AT.len();
    let when = message[at..].trim().trim_end_matches('.');
    let resets_at = reset_text::local_reset_after(when, zone, written)?;
    Window::new(
        Scope::Unstated,
        100.0,
        resets_at,
        Source::CodexRecord,
        written,
    )
}

/// `CodexErrorInfo::UsageLimitExceeded` as the rollout writes it (0.171.0).
const USAGE_LIMIT_EXCEEDED: &str = "usage_limit_exceeded";
/// What comes before the reset in Codex's refusal (`retry_suffix`, `retry_suffix_after_or`:
/// " Try again at …" or " or try again at …"), lowercase.
const TRY_AGAIN_AT: &str = "try again at ";

/// The model of the last `turn_context` of the newest rollout under `sessions`.
pub fn last_model(sessions: &Path) -> Option<String> {
    rollouts_newest_first(sessions, None)
        .iter()
        .find_map(|path| {
            records::lines(path)
                .filter(|line| line.contains("turn_context"))
                .filter_map(|line| {
                    let row: Value = serde_json::from_str(&line).ok()?;
                    if row.get("type").and_then(Value::as_str) != Some("turn_context") {
                        return None;
                    }
                    let model = row.pointer("/payload/model")?.as_str()?.trim();
                    (!model.is_empty()).then(|| model.to_string())
                })
                .last()
        })
}

/// Rollout files under `sessions/YYYY/MM/DD/`, newest first; with `since`, only day
/// directories from the day before it on (by name, so a zone difference between Codex's
/// day and UTC costs nothing) and files written since it.
fn rollouts_newest_first(sessions: &Path, since: Option<Timestamp>) -> Vec<PathBuf> {
    let first_day = since.map(|at| {
        let day = records::slack(at)
            .to_zoned_datetime(jiff::tz::TimeZone::UTC)
            .date();
        let day = day.yesterday().unwrap_or(day);
        format!("{:04}/{:02}/{:02}", day.year(), day.month(), day.day())
    });
    let mut files = Vec::new();
    for year in sorted_dirs(sessions) {
        for month in sorted_dirs(&year) {
            for day in sorted_dirs(&month) {
                let name = day
                    .strip_prefix(sessions)
                    .map(|p| p.to_string_lossy().replace('\\', "/"))
                    .unwrap_or_default();
                if first_day.as_ref().is_some_and(|first| name < *first) {
                    continue;
                }
                files.extend(records::files_newest_first(&day, since, |n| {
                    n.starts_with("rollout-") && records::has_extension(n, "jsonl")
                }));
            }
        }
    }
    files.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| b.0.cmp(&a.0)));
    files.into_iter().map(|(path, _)| path).collect()
}

fn sorted_dirs(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect();
    dirs.sort();
    dirs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    /// A 0.171.0-shaped `token_count` line (research §2.4).
    fn token_count(timestamp: &str, primary: &str, secondary: &str) -> String {
        format!(
            r#"{{"timestamp":"{timestamp}","type":"event_msg","payload":{{"type":"token_count","info":null,"rate_limits":{{"limit_id":"codex","limit_name":null,"primary":{primary},"secondary":{secondary},"credits":{{"has_credits":false,"unlimited":false,"balance":"0"}},"plan_type":"plus","rate_limit_reached_type":"rate_limit_reached"}}}}}}"#
        )
    }

    fn meta(timestamp: &str, cwd: &str) -> String {
        format!(
            r#"{{"timestamp":"{timestamp}","type":"session_meta","payload":{{"id":"x","cwd":"{cwd}","cli_version":"0.171.0","source":"exec"}}}}"#
        )
    }

    fn turn(timestamp: &str, cwd: &str, model: &str) -> String {
        format!(
            r#"{{"timestamp":"{timestamp}","type":"turn_context","payload":{{"cwd":"{cwd}","model":"{model}","approval_policy":"never"}}}}"#
        )
    }

    #[test]
    fn windows_are_classified_by_minutes_whatever_the_slot() {
        let line = token_count(
            "2026-09-14T12:03:11.204Z",
            r#"{"used_percent":100.0,"window_minutes":10080,"resets_at":1789900000}"#,
            "null",
        );
        let windows = token_count_windows(&line).unwrap();
        assert_eq!(windows.len(), 1);
        assert_eq!(windows[0].scope, Scope::Weekly);
        assert!(windows[0].is_full());
        assert_eq!(windows[0].resets_at.as_second(), 1_789_900_000);
        assert_eq!(windows[0].source, Source::CodexRecord);
        assert_eq!(windows[0].observed_at, at("2026-09-14T12:03:11.204Z"));
        let both = token_count(
            "2026-09-14T12:03:11Z",
            r#"{"used_percent":42,"window_minutes":300,"resets_at":1789400000}"#,
            r#"{"used_percent":62.5,"window_minutes":10080,"resets_at":1789900000}"#,
        );
        let scopes: Vec<Scope> = token_count_windows(&both)
            .unwrap()
            .into_iter()
            .map(|w| w.scope)
            .collect();
        assert_eq!(scopes, [Scope::FiveHour, Scope::Weekly]);
    }

    #[test]
    fn old_relative_resets_count_from_the_line() {
        let line = token_count(
            "2025-09-14T12:00:00Z",
            r#"{"used_percent":100,"window_minutes":300,"resets_in_seconds":3600}"#,
            r#"{"used_percent":10,"window_minutes":10080}"#,
        );
        let windows = token_count_windows(&line).unwrap();
        assert_eq!(windows.len(), 1, "a window with no reset at all is skipped");
        assert_eq!(windows[0].resets_at, at("2025-09-14T13:00:00Z"));
    }

    #[test]
    fn a_per_model_limit_is_scoped_to_its_model() {
        let line = token_count(
            "2026-09-14T12:00:00Z",
            r#"{"used_percent":100,"window_minutes":10080,"resets_at":1789900000}"#,
            "null",
        )
        .replace(
            r#""limit_id":"codex","limit_name":null"#,
            r#""limit_id":"codex_spark","limit_name":"GPT-5.3-Codex-Spark""#,
        );
        let w = &token_count_windows(&line).unwrap()[0];
        assert!(w.scope.applies_to_model("gpt-5.3-codex-spark"));
        assert!(!w.scope.applies_to_model("gpt-6.2-sol"));
    }

    #[test]
    fn lines_that_are_not_token_counts_with_limits_are_nothing() {
        assert_eq!(
            token_count_windows(&meta("2026-09-14T12:00:00Z", "/p")),
            None
        );
        let no_limits = r#"{"timestamp":"2026-09-14T12:00:00Z","type":"event_msg","payload":{"type":"token_count","info":{}}}"#;
        assert_eq!(token_count_windows(no_limits), None);
        assert_eq!(token_count_windows("token_count {"), None);
    }

    #[test]
    fn only_codexs_own_token_count_events_count_never_text_quoting_one() {
        let full = r#"{"used_percent":100,"window_minutes":300,"resets_at":1789400000}"#;
        let real = token_count("2026-09-14T12:00:00Z", full, "null");
        assert_eq!(token_count_windows(&real).unwrap().len(), 1);
        // A function's output and a user message holding that very line as text.
        let output =
            serde_json::json!({"timestamp": "2026-09-14T12:00:00Z", "type": "response_item",
            "payload": {"type": "function_call_output", "call_id": "c", "output": real}})
            .to_string();
        assert_eq!(token_count_windows(&output), None);
        let said = serde_json::json!({"timestamp": "2026-09-14T12:00:00Z", "type": "event_msg",
            "payload": {"type": "user_message", "message": real}})
        .to_string();
        assert_eq!(token_count_windows(&said), None);
        // The payload's shape under any other kind of line is not Codex's event either.
        let other = real.replace(r#""type":"event_msg""#, r#""type":"response_item""#);
        assert_ne!(other, real);
        assert_eq!(token_count_windows(&other), None);
    }

    fn write_rollout(sessions: &Path, day: &str, name: &str, lines: &[String]) -> PathBuf {
        let dir = sessions.join(day);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, lines.join("\n")).unwrap();
        // Written now by the test's clock (the file system stamps the machine's).
        std::fs::File::options()
            .append(true)
            .open(&path)
            .and_then(|file| file.set_modified(std::time::SystemTime::now()))
            .unwrap();
        path
    }

    #[test]
    fn this_runs_rollout_is_found_by_directory_and_start_and_an_older_run_never() {
        let home = tempfile::tempdir().unwrap();
        let sessions = home.path().join("sessions");
        let start = Timestamp::now();
        let before = (start - SignedDuration::from_mins(30)).to_string();
        let after = (start + SignedDuration::from_secs(2)).to_string();
        let full = r#"{"used_percent":100,"window_minutes":300,"resets_at":1789400000}"#;
        let today = start.to_zoned_datetime(jiff::tz::TimeZone::UTC).date();
        let day = format!(
            "{:04}/{:02}/{:02}",
            today.year(),
            today.month(),
            today.day()
        );
        // An older run in the same directory, written today (only its lines' times tell
        // it apart), and a new run elsewhere.
        write_rollout(
            &sessions,
            &day,
            "rollout-old.jsonl",
            &[meta(&before, "/work/p"), token_count(&before, full, "null")],
        );
        write_rollout(
            &sessions,
            &day,
            "rollout-other.jsonl",
            &[meta(&after, "/work/q"), token_count(&after, full, "null")],
        );
        assert_eq!(find_run(&sessions, Path::new("/work/p"), start, None), None);
        let mine = write_rollout(
            &sessions,
            &day,
            "rollout-mine.jsonl",
            &[
                meta(&after, "/work/p"),
                turn(&after, "/work/p", "gpt-6.2-sol"),
                token_count(&after, full, "null"),
            ],
        );
        let run = find_run(&sessions, Path::new("/work/p"), start, None).unwrap();
        assert_eq!(run.path, mine);
        assert_eq!(run.model.as_deref(), Some("gpt-6.2-sol"));
        assert_eq!(run.windows.len(), 1);
        assert!(run.windows[0].is_full());
    }

    /// The two lines 0.171.0 wrote for a turn the mock refused with the usage-limit 429
    /// body and no `x-codex-*` headers (copied from its rollout, ids shortened).
    fn refused_turn(timestamp: &str, message: &str) -> [String; 2] {
        [
            format!(
                r#"{{"timestamp":"{timestamp}","type":"event_msg","payload":{{"type":"token_count","info":null,"rate_limits":{{"limit_id":"codex","limit_name":null,"primary":null,"secondary":null,"credits":null,"individual_limit":null,"spend_control_reached":null,"plan_type":null,"rate_limit_reached_type":null}}}}}}"#
            ),
            format!(
                r#"{{"timestamp":"{timestamp}","type":"event_msg","payload":{{"type":"task_complete","turn_id":"t","last_agent_message":null,"error":{{"message":"{message}","codex_error_info":"usage_limit_exceeded"}},"duration_ms":76}}}}"#
            ),
        ]
    }

    const PLUS_REFUSAL: &str = "You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/settings/usage to purchase more credits or try again at ";

    #[test]
    fn a_refused_turn_names_the_whole_login_spent_until_the_time_its_message_gives() {
        let written = Timestamp::now();
        let reset = written + SignedDuration::from_hours(3);
        let local = reset.to_zoned_datetime(TimeZone::UTC);
        let clock = format!(
            "{}:{:02} {}",
            (local.hour() + 11) % 12 + 1,
            local.minute(),
            if local.hour() < 12 { "AM" } else { "PM" }
        );
        let date = format!(
            "{} {}th, {} ",
            local.strftime("%b"),
            local.day(),
            local.year()
        );
        let [_, line] = refused_turn(
            &written.to_string(),
            &format!("{PLUS_REFUSAL}{date}{clock}."),
        );
        let row: Value = serde_json::from_str(&line).unwrap();
        let window = refusal_window(&row, written, &TimeZone::UTC).unwrap();
        assert_eq!(window.scope, Scope::Unstated);
        assert!(window.is_full());
        // The end of the minute shown: never tried before the reset.
        let shown = reset.as_second() / 60 * 60;
        assert_eq!(window.resets_at.as_second(), shown + 60);
        // Codex's other usage errors name no time; other lines are not refusals.
        let later = line.replace(
            &format!("or try again at {date}{clock}."),
            "or try again later.",
        );
        let row: Value = serde_json::from_str(&later).unwrap();
        assert_eq!(refusal_window(&row, written, &TimeZone::UTC), None);
        let other = line.replace("usage_limit_exceeded", "other");
        let row: Value = serde_json::from_str(&other).unwrap();
        assert_eq!(refusal_window(&row, written, &TimeZone::UTC), None);
    }

    #[test]
    fn a_refused_run_parks_by_its_message_only_when_its_headers_named_no_spent_window() {
        let home = tempfile::tempdir().unwrap();
        let sessions = home.path().join("sessions");
        let start = Timestamp::now();
        let after = (start + SignedDuration::from_secs(2)).to_string();
        let today = start.to_zoned_datetime(TimeZone::UTC).date();
        let day = format!(
            "{:04}/{:02}/{:02}",
            today.year(),
            today.month(),
            today.day()
        );
        // Written as Codex writes it: in this process's own zone, with the date.
        let reset = start.to_zoned_datetime(TimeZone::system()) + SignedDuration::from_hours(2);
        let message = format!(
            "{PLUS_REFUSAL}{} {}th, {} {}:{:02} {}.",
            reset.strftime("%b"),
            reset.day(),
            reset.year(),
            (reset.hour() + 11) % 12 + 1,
            reset.minute(),
            if reset.hour() < 12 { "AM" } else { "PM" }
        );
        let [counted, refused] = refused_turn(&after, &message);
        write_rollout(
            &sessions,
            &day,
            "rollout-refused.jsonl",
            &[meta(&after, "/work/p"), counted, refused.clone()],
        );
        let run = find_run(&sessions, Path::new("/work/p"), start, None).unwrap();
        assert_eq!(run.windows.len(), 1, "{:?}", run.windows);
        assert_eq!(run.windows[0].scope, Scope::Unstated);
        assert_eq!(
            run.windows[0].resets_at.as_second(),
            reset.timestamp().as_second() / 60 * 60 + 60
        );
        // With the headers' spent 5-hour window, that window is the run's.
        let full = r#"{"used_percent":100,"window_minutes":300,"resets_at":1789400000}"#;
        let headed = token_count(&after, full, "null");
        write_rollout(
            &sessions,
            &day,
            "rollout-refused.jsonl",
            &[meta(&after, "/work/p"), headed, refused],
        );
        let run = find_run(&sessions, Path::new("/work/p"), start, None).unwrap();
        assert_eq!(run.windows.len(), 1, "{:?}", run.windows);
        assert_eq!(run.windows[0].scope, Scope::FiveHour);
    }

    #[test]
    fn the_last_model_is_the_newest_rollouts_last_turn() {
        let home = tempfile::tempdir().unwrap();
        let sessions = home.path().join("sessions");
        write_rollout(
            &sessions,
            "2026/09/14",
            "rollout-a.jsonl",
            &[
                turn("2026-09-14T10:00:00Z", "/p", "gpt-5.5"),
                turn("2026-09-14T10:01:00Z", "/p", "gpt-6.2-sol"),
            ],
        );
        assert_eq!(last_model(&sessions).as_deref(), Some("gpt-6.2-sol"));
        assert_eq!(last_model(&home.path().join("none")), None);
    }
}
