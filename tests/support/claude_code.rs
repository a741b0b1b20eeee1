//! A fake Claude Code that keeps its transcript as the real one does: rows appended to
//! `~/.claude/projects/<project>/<session id>.jsonl`, the session id being the one given in
//! `--session-id ID` (a new session) or `--resume ID` (the same session, appended to),
//! else `s-1`. It may work a while first (past `fastfail_seconds`: a session an hour in)
//! and really edit a file, then writes its rows and exits — as a session its usage window
//! stopped does. Also the rows Claude Code writes (its limit row, in the text and in the
//! data form of 2.1.332).
//!
//! In the rows, `@NOW@` stands for the instant the fake writes them, `@SID@` for the
//! session id and `"@RESET@"` (a string, quotes included) for a reset that many seconds
//! after the run as a number of epoch seconds, so no test names a fixed date (`@RESET_AT@`:
//! the same reset as Claude Code's text gives it, `3:04pm`, in UTC). Each run
//! appends the reset it wrote (epoch s) to `tmp/claude-resets` and when it ran (epoch ms)
//! to `tmp/claude-ran-at`, both on the clock the test runs on.

use std::path::{Path, PathBuf};

use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};

use super::Sandbox;

/// The project directory Claude Code keeps the transcripts of `cwd` in.
pub fn project_dir(sb: &Sandbox, cwd: &Path) -> PathBuf {
    let real = std::fs::canonicalize(cwd).unwrap();
    let name: String = real
        .to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    sb.home().join(".claude/projects").join(name)
}

/// A fake `claude` that writes `rows` into the transcript of the working directory and
/// exits 1 at once. The file's time is set from the clock the rows' time came from (the
/// file system stamps the machine's, which is not the test's under
/// `scripts/test-at-dates.sh`).
pub fn claude_failing_with_rows(sb: &Sandbox, rows: &[Value]) {
    claude_failing_with_rows_after(sb, "0", rows);
}

/// The same, after working `seconds` first.
pub fn claude_failing_with_rows_after(sb: &Sandbox, seconds: &str, rows: &[Value]) {
    FakeClaude::new(sb).works(seconds).rows(rows).install();
}

/// A fake `claude` being described; [`FakeClaude::install`] writes it.
#[must_use = "call .install() to write the fake"]
pub struct FakeClaude<'a> {
    sb: &'a Sandbox,
    seconds: String,
    rows: Vec<Value>,
    reset_in: i64,
    edits: Option<PathBuf>,
    prints: Option<PathBuf>,
    interactive: bool,
}

impl<'a> FakeClaude<'a> {
    /// At once, no rows, a reset two hours after the run, no edit; exits 1.
    pub fn new(sb: &'a Sandbox) -> Self {
        FakeClaude {
            sb,
            seconds: "0".to_string(),
            rows: Vec::new(),
            reset_in: 2 * 3600,
            edits: None,
            prints: None,
            interactive: false,
        }
    }

    /// Works `seconds` (as `sleep` takes them: `1.3`) before it writes its rows.
    pub fn works(mut self, seconds: &str) -> Self {
        seconds.clone_into(&mut self.seconds);
        self
    }

    /// The rows a new session writes before it exits 1.
    pub fn rows(mut self, rows: &[Value]) -> Self {
        self.rows = rows.to_vec();
        self
    }

    /// `"@RESET@"` in the rows is this many seconds after the run.
    pub fn reset_in(mut self, seconds: i64) -> Self {
        self.reset_in = seconds;
        self
    }

    /// While it works it appends a line to `file`, as its `Edit` would.
    pub fn edits(mut self, file: &Path) -> Self {
        self.edits = Some(file.to_path_buf());
        self
    }

    /// What a new session prints on stdout before it exits (as `--output-format json`'s
    /// result document): the bytes of `file`.
    pub fn prints(mut self, file: &Path) -> Self {
        self.prints = Some(file.to_path_buf());
        self
    }

    /// As an interactive session at a terminal: once its rows are written it shows the
    /// limit, as 2.1.332 does, and waits for the user — `/exit` ends it with 0.
    pub fn interactive(mut self) -> Self {
        self.interactive = true;
        self
    }

    /// Writes `bin/claude`. A run with `--resume ID` does no work: it appends
    /// [`resumed_row`] to that session's transcript and exits 0, the session done.
    pub fn install(self) -> PathBuf {
        // Where the real one keeps it: under `CLAUDE_CONFIG_DIR` when agent runs it on a
        // login of a pool, else `~/.claude`.
        let project = project_dir(self.sb, self.sb.home());
        let dir = format!(
            "${{CLAUDE_CONFIG_DIR:-{}}}/projects/{}",
            self.sb.home().join(".claude").display(),
            project.file_name().unwrap().to_string_lossy()
        );
        let template = self.sb.tmp_dir().join("transcript-rows.jsonl");
        std::fs::write(&template, jsonl(&self.rows)).unwrap();
        let resumed = self.sb.tmp_dir().join("transcript-resumed.jsonl");
        std::fs::write(&resumed, jsonl(&[resumed_row()])).unwrap();
        let edit = self.edits.map_or_else(String::new, |file| {
            format!("printf '// fixed\\n' >> '{}'\n", file.display())
        });
        let prints = self
            .prints
            .map_or_else(String::new, |file| format!("cat '{}'\n", file.display()));
        self.sb
            .fake_cli("claude")
            .script(&format!(
                r#"sid=s-1
resumed=
prev=
for word in "$@"; do
  case "$prev" in
    --session-id) sid=$word ;;
    --resume|-r) sid=$word; resumed=1 ;;
  esac
  case "$word" in
    --session-id=*) sid=${{word#--session-id=}} ;;
    --resume=*) sid=${{word#--resume=}}; resumed=1 ;;
  esac
  prev=$word
done
date -u +%s%3N >> "$TMPDIR/claude-ran-at"
if [ -n "$resumed" ]; then
  rows='{resumed}'
  code=0
else
  sleep {seconds}
  {edit}{prints}rows='{template}'
  code=1
fi
mkdir -p "{dir}"
now=$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)
reset=$(( $(date -u +%s) + {reset_in} ))
at=$(date -u -d "@$reset" +%-l:%M%P)
echo "$reset" >> "$TMPDIR/claude-resets"
f="{dir}/$sid.jsonl"
sed "s/@NOW@/$now/g; s/@SID@/$sid/g; s/\"@RESET@\"/$reset/g; s/@RESET_AT@/$at/g" "$rows" >> "$f"
touch -d "$now" "$f"
if [ -n "{interactive}" ] && [ -z "$resumed" ]; then
  echo "You've hit your 5-hour limit · resets $at (UTC)"
  while IFS= read -r line; do [ "$line" = /exit ] && break; done
  exit 0
fi
exit $code"#,
                template = template.display(),
                resumed = resumed.display(),
                seconds = self.seconds,
                reset_in = self.reset_in,
                interactive = if self.interactive { "1" } else { "" },
            ))
            .install()
    }
}

fn jsonl(rows: &[Value]) -> String {
    let lines: Vec<String> = rows.iter().map(ToString::to_string).collect();
    format!("{}\n", lines.join("\n"))
}

/// What a resumed session writes before it exits 0.
pub fn resumed_row() -> Value {
    assistant_row(&json!([{"type": "text", "text": "Picked up where I stopped: done."}]))
}

/// The resets the fake's runs wrote, oldest first (epoch seconds).
pub fn resets(sb: &Sandbox) -> Vec<i64> {
    numbers_in(&sb.tmp_dir().join("claude-resets"))
}

/// When the fake's runs started, oldest first (epoch milliseconds).
pub fn ran_at(sb: &Sandbox) -> Vec<i64> {
    numbers_in(&sb.tmp_dir().join("claude-ran-at"))
}

fn numbers_in(path: &Path) -> Vec<i64> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|line| line.trim().parse().unwrap())
        .collect()
}

/// A user's prompt as Claude Code records it.
pub fn prompt_row(text: &str) -> Value {
    json!({
        "type": "user",
        "sessionId": "@SID@",
        "timestamp": "@NOW@",
        "message": {"role": "user", "content": text},
    })
}

/// An answer of the model with this `content` (text and tool calls).
pub fn assistant_row(content: &Value) -> Value {
    json!({
        "type": "assistant",
        "sessionId": "@SID@",
        "timestamp": "@NOW@",
        "message": {"model": "claude-opus-5", "role": "assistant", "content": content},
    })
}

/// Claude Code's synthetic error row for a refusal saying `text`.
pub fn limit_row(text: &str) -> Value {
    json!({
        "type": "assistant",
        "sessionId": "@SID@",
        "timestamp": "@NOW@",
        "message": {"model": "<synthetic>", "role": "assistant",
                    "content": [{"type": "text", "text": text}]},
        "error": "rate_limit",
        "isApiErrorMessage": true,
        "apiErrorStatus": 429,
    })
}

/// The row 2.1.332 writes when its 5-hour window runs out: the text, and the same limit
/// as data (`apiError`, `apiErrorParams.rate_limit_info`, `quotaLimits`), its reset the
/// fake's `"@RESET@"`.
pub fn five_hour_limit_row_332() -> Value {
    let info = json!({"status": "rejected", "resetsAt": "@RESET@", "rateLimitType": "five_hour",
        "overageStatus": "rejected", "overageDisabledReason": "org_level_disabled",
        "isUsingOverage": false});
    let mut quota = info.clone();
    quota["unifiedRateLimitFallbackAvailable"] = false.into();
    // The text names the reset to the minute; the data, which agent reads first, to the
    // second.
    let mut row = limit_row("You've hit your 5-hour limit · resets @RESET_AT@ (UTC)");
    row["version"] = "2.1.332".into();
    row["apiError"] = "usage_limit_reached".into();
    row["apiErrorParams"] = json!({ "rate_limit_info": info });
    row["quotaLimits"] = quota;
    row["apiErrorType"] = "rate_limit_error".into();
    row
}

/// Claude Code's session-limit text with a reset an hour or two ahead, on the clock the test
/// runs on, in the zone Claude Code names ("resets 3pm (Europe/Berlin)" is 20 hours ahead,
/// and no 5-hour window, at 19:00 in Berlin).
pub fn session_limit_text() -> String {
    let berlin = jiff::tz::TimeZone::get("Europe/Berlin").unwrap();
    let hour = (Timestamp::now() + SignedDuration::from_hours(2))
        .to_zoned_datetime(berlin)
        .hour();
    let (twelve, half) = match hour {
        0 => (12, "am"),
        1..=11 => (hour, "am"),
        12 => (12, "pm"),
        _ => (hour - 12, "pm"),
    };
    format!("You've hit your session limit · resets {twelve}{half} (Europe/Berlin)")
}
