//! What Claude Code's transcript says after a refused call: the row it writes when a usage
//! limit stops it, and which window that is until when (research §1.4, DESIGN §12 "after
//! a fast failure"). Also the model Claude Code last ran, from its real answers.
//!
//! Confirmed in the pinned 2.1.197 binary:
//! - Transcripts are `<config dir>/projects/<project>/<session>.jsonl`, `<project>` being
//!   the working directory (`realpath(process.cwd())`) with every UTF-16 unit that is not
//!   an ASCII letter or digit replaced by `-`, cut at 200 characters and followed by `-`
//!   and a base-36 hash when longer (`$E()`, `jCe()`, `rtt = 200`).
//! - A limit row is a synthetic assistant message (`model: "<synthetic>"`) with
//!   `isApiErrorMessage: true`, `error: "rate_limit"`, `apiErrorStatus: 429` and the text
//!   `You've hit your <kind> · resets <time> (<IANA zone>)` (`xfp()`, `kfp()`, `hJ()`),
//!   kind being `session limit` (five_hour), `weekly limit` (seven_day, and seven_day_sonnet
//!   on Pro and Enterprise), `Opus limit`, `Sonnet limit`, `Fable 5 limit`
//!   (seven_day_overage_included), `usage limit` or plain `limit`; or `You're out of usage
//!   credits · resets …`, `Your org is out of usage · …` (no reset).
//! - The reset is written without an epoch: see [`super::reset_text`].
//!
//! Measured with 2.1.332 (the real CLI against the mock answering 429 with the unified
//! rate-limit headers): the same row also carries the limit as data, `"apiError":
//! "usage_limit_reached"`, `"apiErrorParams": {"rate_limit_info": {"status": "rejected",
//! "resetsAt": <epoch s>, "rateLimitType": "five_hour", …}}` and `"quotaLimits"` (the same
//! fields), and its text names the five-hour window `5-hour limit`. The data is read first
//! (its reset is exact to the second), the text where there is no data.
//!
//! Taken from the research doc, not checkable in the binary (older builds, other issues):
//! `Claude AI usage limit reached|<epoch s>` (1.0.x), `Weekly limit reached · resets …` and
//! `5-hour limit reached ∙ resets …` (2.0.x), and "API Error: Server is temporarily
//! limiting requests (not your usage limit)" being a short rate limit, not a window.
//! Whether 1.0.x rows carried `error: "rate_limit"` is UNCONFIRMED: their text alone is
//! accepted.

use std::path::{Path, PathBuf};

use jiff::Timestamp;
use serde_json::Value;

use super::records;
use super::reset_text;
use super::window::{self, Scope, Source, Window};

/// Claude Code's longest project directory name before it adds a hash (`rtt`).
const MAX_PROJECT_NAME: usize = 200;
const OLD_LIMIT_TEXT: &str = "Claude AI usage limit reached|";
/// `apiError` on 2.1.332's limit rows (beside `error: "rate_limit"`).
const USAGE_LIMIT_ERROR: &str = "usage_limit_reached";
/// The model Claude Code names on the rows it writes itself.
const SYNTHETIC_MODEL: &str = "<synthetic>";

/// What a limit row says.
#[derive(Debug, Clone, PartialEq)]
pub enum Limit {
    /// A window is used up until its reset.
    Window(Window),
    /// Refused by a limit whose text names no reset ("Your org is out of usage · add
    /// funds to continue"): the window is known, its end is not.
    NoReset(Scope),
    /// A short rate limit of the service, not of the login ("Server is temporarily
    /// limiting requests (not your usage limit)"): nothing to park.
    Throttled,
}

/// A limit row of a transcript.
#[derive(Debug, Clone, PartialEq)]
pub struct LimitRow {
    /// When Claude Code wrote it.
    pub at: Timestamp,
    pub limit: Limit,
    /// The session it belongs to.
    pub session_id: Option<String>,
}

/// The project directory Claude Code keeps the transcripts of `cwd` in, under its
/// configuration directory. `cwd` must be resolved as Claude Code resolves it
/// (`realpath`): see [`project_dir_for`].
pub fn project_dir(config_dir: &Path, cwd: &str) -> PathBuf {
    config_dir.join("projects").join(project_dir_name(cwd))
}

/// [`project_dir`] for a working directory as the process sees it: resolved to its real
/// path first, as Claude Code does.
pub fn project_dir_for(config_dir: &Path, cwd: &Path) -> PathBuf {
    let real = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
    project_dir(config_dir, &real.to_string_lossy())
}

/// `$E()`: the directory name of a working directory.
pub fn project_dir_name(cwd: &str) -> String {
    let munged: String = cwd
        .encode_utf16()
        .map(|unit| match u8::try_from(unit) {
            Ok(byte) if byte.is_ascii_alphanumeric() => char::from(byte),
            _ => '-',
        })
        .collect();
    if munged.len() <= MAX_PROJECT_NAME {
        return munged;
    }
    format!(
        "{}-{}",
        &munged[..MAX_PROJECT_NAME],
        base36(java_hash(cwd).unsigned_abs())
    )
}

/// `jCe()`: Java's `String.hashCode` over UTF-16 units, in 32-bit arithmetic.
fn java_hash(text: &str) -> i32 {
    text.encode_utf16().fold(0i32, |hash, unit| {
        hash.wrapping_shl(5)
            .wrapping_sub(hash)
            .wrapping_add(i32::from(unit))
    })
}

fn base36(mut n: u32) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    loop {
        out.push(DIGITS[(n % 36) as usize]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8(out).expect("ASCII digits")
}

/// The limit row one transcript line is, if it is one. Only a row Claude Code wrote itself
/// counts — an assistant row of its `<synthetic>` model — never text a person or a tool put
/// in the transcript: a prompt quoting `Claude AI usage limit reached|253370764800`, a tool's
/// output, or a real model's answer saying the same are message content, not a refusal.
pub fn parse_row(line: &str) -> Option<LimitRow> {
    let row: Value = serde_json::from_str(line).ok()?;
    if !written_by_the_cli(&row) {
        return None;
    }
    let text = message_text(&row).unwrap_or_default();
    let flagged = row.get("isApiErrorMessage").and_then(Value::as_bool) == Some(true)
        && (row.get("error").and_then(Value::as_str) == Some("rate_limit")
            || row.get("apiError").and_then(Value::as_str) == Some(USAGE_LIMIT_ERROR));
    if !flagged && !text.trim_start().starts_with(OLD_LIMIT_TEXT) {
        return None;
    }
    let at = records::timestamp(row.get("timestamp")?)?;
    // The data first (2.1.332 and later), the text where the data is missing or says
    // nothing agent knows (2.1.197 and older wrote only the text).
    let limit = match (
        flagged.then(|| from_data(&row, &text, at)).flatten(),
        text.is_empty(),
    ) {
        (Some(limit), _) => limit,
        (None, false) => classify(&text, at)?,
        (None, true) => return None,
    };
    Some(LimitRow {
        at,
        limit,
        session_id: row
            .get("sessionId")
            .and_then(Value::as_str)
            .map(str::to_string),
    })
}

/// What the row's data says (2.1.332: `apiErrorParams.rate_limit_info`, else
/// `quotaLimits`): `{"status": "rejected", "resetsAt": <epoch s>, "rateLimitType":
/// "five_hour", …}`. A window whose type agent does not know takes its kind from the
/// text (its reset still from the data); a status other than `rejected`, or no plausible
/// reset, leaves the row to its text.
fn from_data(row: &Value, text: &str, written: Timestamp) -> Option<Limit> {
    let info = ["/apiErrorParams/rate_limit_info", "/quotaLimits"]
        .iter()
        .filter_map(|pointer| row.pointer(pointer))
        .find(|info| info.get("resetsAt").is_some_and(Value::is_number))?;
    if info.get("status").and_then(Value::as_str) != Some("rejected") {
        return None;
    }
    let resets_at = window::from_epoch_seconds(info.get("resetsAt")?.as_f64()?)?;
    let scope = match info.get("rateLimitType").and_then(Value::as_str) {
        Some(kind) => match data_scope(kind) {
            Some(scope) => scope,
            None => text_scope(text)?,
        },
        None => text_scope(text).unwrap_or(Scope::Unstated),
    };
    full(scope, resets_at, written)
}

/// `rateLimitType` as Claude Code names its windows (`hJ()`): `five_hour`, `seven_day`,
/// `seven_day_opus`, `seven_day_sonnet`. Others (`overage`, `seven_day_overage_included`
/// …) are named by the text.
fn data_scope(kind: &str) -> Option<Scope> {
    let family = |name: &str| Scope::ModelWeekly {
        family: name.to_string(),
    };
    match kind {
        "five_hour" => Some(Scope::FiveHour),
        "seven_day" => Some(Scope::Weekly),
        "seven_day_opus" => Some(family("opus")),
        "seven_day_sonnet" => Some(family("sonnet")),
        _ => None,
    }
}

/// The window the text names, whatever its reset says.
fn text_scope(text: &str) -> Option<Scope> {
    let lower = text.trim().to_lowercase().replace('’', "'");
    if let Some(rest) = lower.strip_prefix("you've hit your ") {
        Some(kind_scope(until_separator(rest)))
    } else if lower.starts_with("you're out of usage credits")
        || lower.starts_with("your org is out of usage")
    {
        Some(Scope::Credits)
    } else {
        lower
            .find(" limit reached")
            .map(|at| kind_scope(&lower[..at]))
    }
}

/// Whether a row is Claude Code's own: an assistant row whose model is `<synthetic>` (what
/// it writes for an error no model answered), not a user row (prompts and tool results)
/// nor a real model's answer.
fn written_by_the_cli(row: &Value) -> bool {
    row.get("type").and_then(Value::as_str) == Some("assistant")
        && row.pointer("/message/model").and_then(Value::as_str) == Some(SYNTHETIC_MODEL)
}

/// The text of a row's message (`message.content`, a string or text blocks; a block of
/// another type — a tool's use or result, an image — is no text).
pub fn message_text(row: &Value) -> Option<String> {
    match row.pointer("/message/content")? {
        Value::String(text) => Some(text.clone()),
        Value::Array(blocks) => {
            let text: Vec<&str> = blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect();
            (!text.is_empty()).then(|| text.join("\n"))
        }
        _ => None,
    }
}

/// What a limit text says, for a row written at `written`; `None` when it is no limit
/// text agent knows.
pub fn classify(text: &str, written: Timestamp) -> Option<Limit> {
    let text = text.trim();
    let lower = text.to_lowercase().replace('’', "'");
    if lower.contains("not your usage limit") || lower.contains("temporarily limiting requests") {
        return Some(Limit::Throttled);
    }
    if let Some(epoch) = text.strip_prefix(OLD_LIMIT_TEXT) {
        let resets_at = window::from_epoch_seconds(epoch.trim().parse().ok()?)?;
        return full(Scope::Unstated, resets_at, written);
    }
    let scope = if let Some(rest) = lower.strip_prefix("you've hit your ") {
        kind_scope(until_separator(rest))
    } else if lower.starts_with("you're out of usage credits")
        || lower.starts_with("your org is out of usage")
    {
        Scope::Credits
    } else if let Some(at) = lower.find(" limit reached") {
        // 2.0.x: "Weekly limit reached · resets …", "5-hour limit reached ∙ resets …".
        kind_scope(&lower[..at])
    } else {
        return None;
    };
    // Found in the text itself: lowercasing may change the length of other characters.
    match text.find("resets ").or_else(|| text.find("Resets ")) {
        Some(at) => {
            let resets_at = reset_text::reset_after(&text[at + "resets ".len()..], written)?;
            full(scope, resets_at, written)
        }
        None => Some(Limit::NoReset(scope)),
    }
}

fn full(scope: Scope, resets_at: Timestamp, written: Timestamp) -> Option<Limit> {
    Window::new(scope, 100.0, resets_at, Source::Transcript, written).map(Limit::Window)
}

/// The kind before ` · ` (Claude Code's separator; older builds also used `∙`).
fn until_separator(text: &str) -> &str {
    let end = [" · ", " ∙ "]
        .iter()
        .filter_map(|sep| text.find(sep))
        .min()
        .unwrap_or(text.len());
    text[..end].trim()
}

/// `session limit`, `weekly limit`, `Opus limit`, `usage limit`, `Fable 5 limit`, `5-hour`…
fn kind_scope(kind: &str) -> Scope {
    let kind = kind.trim().trim_end_matches("limit").trim();
    match kind {
        "session" | "5-hour" | "5 hour" | "five-hour" => Scope::FiveHour,
        "weekly" | "7-day" => Scope::Weekly,
        "" | "usage" => Scope::Unstated,
        _ if kind.contains("credit") || kind.contains("spend") || kind.contains("monthly") => {
            Scope::Credits
        }
        model => {
            let family = model
                .trim_start_matches("weekly ")
                .trim_end_matches(" weekly")
                .trim();
            Scope::ModelWeekly {
                family: family.to_string(),
            }
        }
    }
}

/// The newest limit row of the run that started at `start` in the project directory
/// `project_dir` — only rows written at or after `start`, never an older one (an old row
/// would park a login for a window that has long been reset or was another session's).
pub fn find_run_limit(project_dir: &Path, start: Timestamp) -> Option<LimitRow> {
    records::files_newest_first(project_dir, Some(start), |name| {
        records::has_extension(name, "jsonl")
    })
    .into_iter()
    .flat_map(|(path, _)| records::lines(&path))
    .filter(|line| {
        line.contains("\"rate_limit\"")
            || line.contains(USAGE_LIMIT_ERROR)
            || line.contains(OLD_LIMIT_TEXT)
    })
    .filter_map(|line| parse_row(&line))
    .filter(|row| row.at >= start)
    .max_by_key(|row| row.at)
}

/// The model of the newest real answer (not a synthetic error row) in the newest
/// transcript under `projects` (`<config dir>/projects`): the model Claude Code last ran.
pub fn last_model(projects: &Path) -> Option<String> {
    let Ok(dirs) = std::fs::read_dir(projects) else {
        return None;
    };
    let mut files: Vec<(PathBuf, Timestamp)> = dirs
        .flatten()
        .filter(|d| d.file_type().is_ok_and(|t| t.is_dir()))
        .flat_map(|d| {
            records::files_newest_first(&d.path(), None, |n| records::has_extension(n, "jsonl"))
        })
        .collect();
    files.sort_by_key(|(_, at)| std::cmp::Reverse(*at));
    files.iter().find_map(|(path, _)| last_model_in(path))
}

/// The model of the last real answer in one transcript.
pub fn last_model_in(path: &Path) -> Option<String> {
    records::lines(path)
        .filter(|line| line.contains("\"assistant\""))
        .filter_map(|line| {
            let row: Value = serde_json::from_str(&line).ok()?;
            if row.get("type").and_then(Value::as_str) != Some("assistant")
                || row.get("isApiErrorMessage").and_then(Value::as_bool) == Some(true)
            {
                return None;
            }
            let model = row.pointer("/message/model")?.as_str()?.trim();
            (!model.is_empty() && !model.starts_with('<')).then(|| model.to_string())
        })
        .last()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    /// The row 2.1.197 writes (research §1.4), with `text` and `timestamp` filled in.
    fn row(text: &str, timestamp: &str) -> String {
        serde_json::json!({
            "parentUuid": "p", "isSidechain": false, "userType": "external", "cwd": "/home/u/proj",
            "sessionId": "s-1", "version": "2.1.197", "gitBranch": "main", "entrypoint": "cli",
            "type": "assistant", "uuid": "u", "timestamp": timestamp,
            "message": {"id": "m", "container": null, "model": "<synthetic>", "role": "assistant",
                "stop_reason": "stop_sequence", "stop_sequence": "", "type": "message",
                "usage": {"input_tokens": 0, "output_tokens": 0},
                "content": [{"type": "text", "text": text}], "context_management": null},
            "error": "rate_limit", "isApiErrorMessage": true, "apiErrorStatus": 429, "requestId": "req_011"
        })
        .to_string()
    }

    fn answer(model: &str, timestamp: &str) -> String {
        serde_json::json!({"type": "assistant", "timestamp": timestamp, "sessionId": "s-1",
            "message": {"model": model, "role": "assistant", "content": [{"type": "text", "text": "hi"}]}})
        .to_string()
    }

    fn answer_saying(text: &str, timestamp: &str) -> String {
        serde_json::json!({"type": "assistant", "timestamp": timestamp, "sessionId": "s-1",
            "message": {"model": "claude-opus-4-8", "role": "assistant", "content": [{"type": "text", "text": text}]}})
        .to_string()
    }

    fn window_of(line: &str) -> Window {
        match parse_row(line).unwrap().limit {
            Limit::Window(w) => w,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_session_limit_row_is_the_five_hour_window_until_the_next_such_local_time() {
        let w = window_of(&row(
            "You've hit your session limit · resets 3pm (Europe/Berlin)",
            "2026-09-14T12:03:11.204Z",
        ));
        assert_eq!(w.scope, Scope::FiveHour);
        assert!(w.is_full());
        assert_eq!(w.resets_at, at("2026-09-14T13:01:00Z"));
        assert_eq!(w.source, Source::Transcript);
        assert_eq!(w.observed_at, at("2026-09-14T12:03:11.204Z"));
    }

    #[test]
    fn each_kind_names_its_window() {
        let written = "2026-09-14T12:00:00Z";
        let cases = [
            (
                "You've hit your weekly limit · resets Sep 18, 9am (UTC)",
                Scope::Weekly,
            ),
            (
                "You've hit your Opus limit · resets Sep 18, 9am (UTC)",
                Scope::ModelWeekly {
                    family: "opus".into(),
                },
            ),
            (
                "You've hit your Sonnet limit · resets 3pm (UTC) · /upgrade to Max",
                Scope::ModelWeekly {
                    family: "sonnet".into(),
                },
            ),
            (
                "You've hit your Fable 5 limit · resets Sep 18, 9am (UTC)",
                Scope::ModelWeekly {
                    family: "fable 5".into(),
                },
            ),
            (
                "You've hit your usage limit · resets 3pm (UTC)",
                Scope::Unstated,
            ),
            (
                "You've hit your limit · resets 1:20am (Europe/Berlin)",
                Scope::Unstated,
            ),
            (
                "You're out of usage credits · resets 3pm (UTC)",
                Scope::Credits,
            ),
            (
                "Weekly limit reached · resets 10am (Asia/Seoul) · /upgrade to Max or turn on /extra-usage",
                Scope::Weekly,
            ),
            ("5-hour limit reached ∙ resets 3pm (UTC)", Scope::FiveHour),
        ];
        for (text, scope) in cases {
            assert_eq!(window_of(&row(text, written)).scope, scope, "{text}");
        }
    }

    /// The row 2.1.332 writes on a usage limit (measured against the mock answering 429
    /// with the unified rate-limit headers): the text, and the same limit as data.
    fn row_332(text: &str, timestamp: &str, kind: &str, resets_at: i64) -> String {
        let info = serde_json::json!({"status": "rejected", "resetsAt": resets_at,
            "rateLimitType": kind, "overageStatus": "rejected",
            "overageDisabledReason": "org_level_disabled", "isUsingOverage": false});
        let mut quota = info.clone();
        quota["unifiedRateLimitFallbackAvailable"] = false.into();
        let mut row: Value = serde_json::from_str(&row(text, timestamp)).unwrap();
        row["version"] = "2.1.332".into();
        row["apiError"] = "usage_limit_reached".into();
        row["apiErrorParams"] = serde_json::json!({ "rate_limit_info": info });
        row["quotaLimits"] = quota;
        row["apiErrorType"] = "rate_limit_error".into();
        row["madeBy"] = "model".into();
        row.to_string()
    }

    #[test]
    fn the_data_comes_first_and_names_the_exact_reset() {
        let written = "2026-12-01T10:18:04.456Z";
        // The text says 10:19am, to the minute; the data says the second.
        let w = window_of(&row_332(
            "You've hit your 5-hour limit · resets 10:19am (UTC)",
            written,
            "five_hour",
            1_796_120_340,
        ));
        assert_eq!(w.scope, Scope::FiveHour);
        assert!(w.is_full());
        assert_eq!(w.resets_at.as_second(), 1_796_120_340);
        // The data wins where the two differ, and needs no text agent knows.
        let w = window_of(&row_332(
            "Something new · soon",
            written,
            "seven_day",
            1_796_500_000,
        ));
        assert_eq!(w.scope, Scope::Weekly);
        assert_eq!(w.resets_at.as_second(), 1_796_500_000);
        let w = window_of(&row_332(
            "You've hit your Opus limit · resets Dec 3, 9am (UTC)",
            written,
            "seven_day_opus",
            1_796_374_800,
        ));
        assert_eq!(
            w.scope,
            Scope::ModelWeekly {
                family: "opus".into()
            }
        );
        // A type agent does not know: the kind from the text, the reset from the data.
        let w = window_of(&row_332(
            "You've hit your Fable 5 limit · resets Dec 3, 9am (UTC)",
            written,
            "seven_day_overage_included",
            1_796_374_801,
        ));
        assert_eq!(
            w.scope,
            Scope::ModelWeekly {
                family: "fable 5".into()
            }
        );
        assert_eq!(w.resets_at.as_second(), 1_796_374_801);
        // quotaLimits alone is data too.
        let mut only_quota: Value = serde_json::from_str(&row_332(
            "You've hit your 5-hour limit · resets 10:19am (UTC)",
            written,
            "five_hour",
            1_796_120_340,
        ))
        .unwrap();
        only_quota.as_object_mut().unwrap().remove("apiErrorParams");
        assert_eq!(
            window_of(&only_quota.to_string()).resets_at.as_second(),
            1_796_120_340
        );
    }

    #[test]
    fn data_that_is_no_refusal_or_no_plausible_reset_leaves_the_row_to_its_text() {
        let written = "2026-12-01T10:18:04Z";
        // Not rejected: the text decides (to the end of its minute).
        let warned = row_332(
            "You've hit your 5-hour limit · resets 10:19am (UTC)",
            written,
            "five_hour",
            1_796_120_340,
        )
        .replace(r#""status":"rejected""#, r#""status":"allowed_warning""#);
        assert_eq!(
            window_of(&warned).resets_at,
            at("2026-12-01T10:20:00Z"),
            "{warned}"
        );
        // A reset a year away is no 5-hour window: the text's is used.
        let far = row_332(
            "You've hit your 5-hour limit · resets 10:19am (UTC)",
            written,
            "five_hour",
            1_796_120_340 + 365 * 86_400,
        );
        assert_eq!(window_of(&far).resets_at, at("2026-12-01T10:20:00Z"));
        // Only the CLI's own rows, data or not.
        let said = row_332("x", written, "five_hour", 1_796_120_340)
            .replace("<synthetic>", "claude-opus-4-8");
        assert_eq!(parse_row(&said), None);
        // Found in a transcript by its apiError alone, too.
        let home = tempfile::tempdir().unwrap();
        let dir = project_dir(home.path(), "/p");
        std::fs::create_dir_all(&dir).unwrap();
        let line = row_332("x", written, "five_hour", 1_796_120_340)
            .replace(r#""error":"rate_limit","#, "");
        assert!(!line.contains("\"rate_limit\""), "{line}");
        std::fs::write(dir.join("s.jsonl"), format!("{line}\n")).unwrap();
        let found = find_run_limit(&dir, at("2026-12-01T10:18:00Z")).unwrap();
        assert!(
            matches!(found.limit, Limit::Window(ref w) if w.resets_at.as_second() == 1_796_120_340)
        );
    }

    #[test]
    fn the_old_epoch_text_is_exact_and_needs_no_flag() {
        let old = serde_json::json!({"type": "assistant", "timestamp": "2025-09-01T10:00:00Z",
            "message": {"model": "<synthetic>", "content": [{"type": "text",
            "text": "Claude AI usage limit reached|1756728000"}]}})
        .to_string();
        let w = window_of(&old);
        assert_eq!(w.scope, Scope::Unstated);
        assert_eq!(w.resets_at.as_second(), 1_756_728_000);
    }

    #[test]
    fn a_server_side_throttle_is_not_a_window_and_a_text_without_reset_has_none() {
        let throttled = row(
            "API Error: Server is temporarily limiting requests (not your usage limit) · Rate limited",
            "2026-09-14T12:00:00Z",
        );
        assert_eq!(parse_row(&throttled).unwrap().limit, Limit::Throttled);
        let org = row(
            "Your org is out of usage · contact your admin",
            "2026-09-14T12:00:00Z",
        );
        assert_eq!(
            parse_row(&org).unwrap().limit,
            Limit::NoReset(Scope::Credits)
        );
    }

    #[test]
    fn rows_that_are_not_limits_are_nothing() {
        let overloaded = row("API Error: Overloaded", "2026-09-14T12:00:00Z")
            .replace("\"rate_limit\"", "\"server_error\"");
        assert_eq!(parse_row(&overloaded), None);
        assert_eq!(
            parse_row(&answer("claude-opus-4-8", "2026-09-14T12:00:00Z")),
            None
        );
        // Flagged, but a text agent does not know: not guessed at.
        assert_eq!(
            parse_row(&row("Something new", "2026-09-14T12:00:00Z")),
            None
        );
        // A reset it cannot read is no window either (unknown, not dead).
        assert_eq!(
            parse_row(&row(
                "You've hit your session limit · resets whenever (Nowhere/Land)",
                "2026-09-14T12:00:00Z"
            )),
            None
        );
        assert_eq!(parse_row("{"), None);
    }

    #[test]
    fn only_claude_codes_own_rows_are_limit_rows_never_message_content() {
        let written = "2026-09-14T12:00:00Z";
        let old_text = "Claude AI usage limit reached|1789400000";
        let new_text = "You've hit your session limit · resets 3pm (UTC)";
        // The CLI's own rows, for both texts: limit rows.
        assert!(parse_row(&row(new_text, written)).is_some());
        assert!(parse_row(&row(old_text, written)).is_some());
        // A prompt quoting the text, as a string or a text block.
        let prompt = serde_json::json!({"type": "user", "timestamp": written, "sessionId": "s-1",
            "message": {"role": "user", "content": old_text}})
        .to_string();
        assert_eq!(parse_row(&prompt), None);
        let blocks = serde_json::json!({"type": "user", "timestamp": written,
            "message": {"role": "user", "content": [{"type": "text", "text": old_text}]}})
        .to_string();
        assert_eq!(parse_row(&blocks), None);
        // A tool's output carrying the text.
        let tool = serde_json::json!({"type": "user", "timestamp": written,
            "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t",
                "content": [{"type": "text", "text": old_text}]}]}})
        .to_string();
        assert_eq!(parse_row(&tool), None);
        // A real model's answer saying it, even with the row's flags copied.
        for text in [old_text, new_text] {
            let said = row(text, written).replace("<synthetic>", "claude-opus-4-8");
            assert_eq!(parse_row(&said), None, "{said}");
            assert_eq!(parse_row(&answer_saying(text, written)), None, "{text}");
        }
        // A user row with the flags copied is still a user row.
        let flagged_user =
            row(new_text, written).replace(r#""type":"assistant""#, r#""type":"user""#);
        assert_ne!(flagged_user, row(new_text, written));
        assert_eq!(parse_row(&flagged_user), None);
    }

    #[test]
    fn project_names_follow_claude_code() {
        assert_eq!(project_dir_name("/home/u/my proj.v2"), "-home-u-my-proj-v2");
        // One UTF-16 unit each: é is one dash, an emoji (two units) is two.
        assert_eq!(project_dir_name("/tmp/é😀"), "-tmp----");
        // Longer than 200: cut, then the base-36 of |Java hashCode|.
        let long = format!("/{}", "a".repeat(250));
        let name = project_dir_name(&long);
        assert_eq!(&name[..200], &format!("-{}", "a".repeat(199)) as &str);
        assert_eq!(name[200..].chars().next(), Some('-'));
        // Java: "/"+"a"*250 hashCode, worked out independently below.
        let mut h: i64 = 0;
        for c in long.chars() {
            h = (h * 31 + c as i64) & 0xffff_ffff;
        }
        let h = if h >= 1 << 31 { h - (1 << 32) } else { h };
        assert_eq!(&name[201..], base36(u32::try_from(h.abs()).unwrap()));
        assert_eq!(base36(0), "0");
        assert_eq!(base36(35), "z");
        assert_eq!(base36(36), "10");
    }

    #[test]
    fn this_runs_row_is_found_and_an_older_one_never() {
        let home = tempfile::tempdir().unwrap();
        let dir = project_dir(home.path(), "/home/u/proj");
        std::fs::create_dir_all(&dir).unwrap();
        let old = row(
            "You've hit your weekly limit · resets Sep 18, 9am (UTC)",
            "2026-09-14T11:00:00Z",
        );
        let mine = row(
            "You've hit your session limit · resets 3pm (UTC)",
            "2026-09-14T12:00:05Z",
        );
        let start = at("2026-09-14T12:00:00Z");
        std::fs::write(dir.join("a.jsonl"), format!("{old}\n")).unwrap();
        assert_eq!(
            find_run_limit(&dir, start),
            None,
            "an older row is not this run's"
        );
        std::fs::write(
            dir.join("b.jsonl"),
            format!(
                "{}\n{mine}\n",
                answer("claude-opus-4-8", "2026-09-14T12:00:01Z")
            ),
        )
        .unwrap();
        let found = find_run_limit(&dir, start).unwrap();
        assert_eq!(found.at, at("2026-09-14T12:00:05Z"));
        assert!(matches!(found.limit, Limit::Window(ref w) if w.scope == Scope::FiveHour));
        assert_eq!(found.session_id.as_deref(), Some("s-1"));
        assert_eq!(find_run_limit(&dir.join("missing"), start), None);
    }

    #[test]
    fn the_last_model_is_the_newest_real_answer() {
        let home = tempfile::tempdir().unwrap();
        let dir = project_dir(home.path(), "/p");
        std::fs::create_dir_all(&dir).unwrap();
        let text = [
            answer("claude-sonnet-5", "2026-09-14T10:00:00Z"),
            answer("claude-opus-4-8", "2026-09-14T11:00:00Z"),
            row(
                "You've hit your session limit · resets 3pm (UTC)",
                "2026-09-14T12:00:00Z",
            ),
        ]
        .join("\n");
        std::fs::write(dir.join("s.jsonl"), text).unwrap();
        assert_eq!(
            last_model(&home.path().join("projects")).as_deref(),
            Some("claude-opus-4-8")
        );
        assert_eq!(last_model(&home.path().join("nothing")), None);
    }
}
