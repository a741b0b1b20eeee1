//! `agent --install-statusline` / `--uninstall-statusline`: agent's statusline in Claude
//! Code's `settings.json` (`$CLAUDE_CONFIG_DIR/settings.json`, else
//! `~/.claude/settings.json`).
//!
//! The settings are the user's: a timestamped copy (0600) is made before the first change,
//! only the `statusLine` member is edited — in the text, so every other byte, key order and
//! comment-free formatting included, stays as it was — and the write is atomic. A
//! `settings.json` that is a symbolic link (a dotfile manager's) stays one: the change is
//! written to the file it leads to. A
//! `statusLine` already there is kept: agent stores it (in `statusline.json` in its state
//! directory, never in Claude Code's settings, whose schema is not agent's to extend), runs
//! its command beside its own line, and puts it back exactly on uninstall. Whether the
//! `statusLine` there is still agent's is read from its JSON (its `type` and `command`), not
//! its text: Claude Code rewrites the file in its own order and spacing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context as _, bail};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::bounded_read;
use crate::state::file::{self as state_file, Durability};
use crate::state::json_file::JsonFile;

/// How long the previous statusLine command may take before its part is left out.
const PREVIOUS_TIMEOUT: Duration = Duration::from_secs(2);
/// The most of the previous command's output read (a status line is one line): one byte
/// more and it is ended and its part left out.
const PREVIOUS_CAP: usize = 16 * 1024;
/// Set for the previous command: an agent statusline run by another (a previous command that
/// wraps agent's own) never runs one in turn, which would start a chain without end.
const NESTED_VAR: &str = "AGENT_STATUSLINE_NESTED";

/// `statusline.json`: per settings file, what agent installed and what it replaced.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Installs {
    #[serde(default)]
    settings: BTreeMap<String, Install>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Install {
    /// The `statusLine` value before agent's, as its exact JSON text; `None` when absent.
    previous: Option<String>,
    /// agent's own `statusLine` value, as written.
    ours: String,
    /// The copy made before the change.
    backup: PathBuf,
}

fn installs(state_dir: &Path) -> JsonFile<Installs> {
    JsonFile::new(state_dir, "statusline.json")
        .pretty()
        .synced()
}

/// The settings file of the Claude Code configuration in force.
pub fn settings_path() -> Option<PathBuf> {
    crate::login::claude::config_dir().map(|dir| dir.join("settings.json"))
}

/// `--install-statusline`.
pub fn install(dry_run: bool) -> anyhow::Result<ExitCode> {
    let path = settings_path().context("no Claude Code configuration directory: set HOME")?;
    let exe = std::env::current_exe().context("finding agent's own path")?;
    let command = format!(
        "{} --statusline",
        crate::text::shell_quote(&exe.to_string_lossy())
    );
    let ours = serde_json::to_string(&serde_json::json!({
        "type": "command",
        "command": command,
        "padding": 0,
    }))?;
    let store = installs(&crate::paths::state_dir());
    let _lock = store.lock()?;
    let mut records = store.load();
    let key = path.display().to_string();
    let text = read_settings(&path)?;
    let target = write_target(&path)?;
    let current = member(&text, "statusLine").map(|span| text[span.value].to_string());
    let earlier = records.settings.get(&key).cloned();
    if earlier.is_some()
        && current
            .as_deref()
            .is_some_and(|value| same_command(value, &ours))
    {
        println!("agent's statusline is already in {}", path.display());
        return Ok(ExitCode::SUCCESS);
    }
    // agent's own from an earlier install (another path) is not "previous": it would run
    // agent beside itself. What that install replaced stays the one to put back.
    let current = match current {
        Some(value) if is_agents(&value) => earlier.and_then(|record| record.previous),
        other => other,
    };
    let updated = with_member(&text, "statusLine", Some(&ours));
    if dry_run {
        // The statusLine alone: the rest of the settings may hold keys (`env`).
        println!(
            "would set statusLine in {} to {}, keeping {} beside it",
            path.display(),
            crate::redact::redact(&ours),
            crate::redact::redact(current.as_deref().unwrap_or("none"))
        );
        return Ok(ExitCode::SUCCESS);
    }
    let backup = backup_path(&path);
    let backed_up = path.exists();
    if backed_up {
        state_file::write_atomic(&backup, text.as_bytes(), Durability::Synced)?;
    }
    records.settings.insert(
        key,
        Install {
            previous: current.clone(),
            ours,
            backup: backup.clone(),
        },
    );
    store.save(&records)?;
    state_file::write_atomic(&target, updated.as_bytes(), Durability::Synced)?;
    println!(
        "agent's statusline is in {}",
        shown_with_target(&path, &target)
    );
    if backed_up {
        println!("copy of the previous settings: {}", backup.display());
    }
    if current.is_some() {
        println!("the previous statusLine is kept: its output is shown beside agent's");
    }
    Ok(ExitCode::SUCCESS)
}

/// `--uninstall-statusline`: the previous `statusLine` back exactly as it was, or none.
pub fn uninstall(dry_run: bool) -> anyhow::Result<ExitCode> {
    let path = settings_path().context("no Claude Code configuration directory: set HOME")?;
    let store = installs(&crate::paths::state_dir());
    let _lock = store.lock()?;
    let mut records = store.load();
    let key = path.display().to_string();
    let Some(record) = records.settings.get(&key).cloned() else {
        println!("agent installed no statusline in {}", path.display());
        return Ok(ExitCode::SUCCESS);
    };
    let text = read_settings(&path)?;
    let current = member(&text, "statusLine").map(|span| text[span.value].to_string());
    // Claude Code rewrites its settings (keys reordered, `env` added, its own spacing): what
    // makes the statusLine agent's is what it runs, not how it is spelled.
    match current.as_deref() {
        Some(value) if same_command(value, &record.ours) => {}
        Some(value) => bail!(
            "the statusLine in {} is no longer agent's: it runs {} where agent installed {}; \
             left as it is (the one agent replaced was {}). Edit statusLine by hand if you \
             want another",
            path.display(),
            command_of(value),
            command_of(&record.ours),
            crate::redact::redact(record.previous.as_deref().unwrap_or("none"))
        ),
        None => bail!(
            "there is no statusLine in {} any more: nothing of agent's to remove, left as it is \
             (the one agent replaced was {})",
            path.display(),
            crate::redact::redact(record.previous.as_deref().unwrap_or("none"))
        ),
    }
    let restored = with_member(&text, "statusLine", record.previous.as_deref());
    if dry_run {
        println!(
            "would set statusLine in {} back to {}",
            path.display(),
            crate::redact::redact(record.previous.as_deref().unwrap_or("none"))
        );
        return Ok(ExitCode::SUCCESS);
    }
    state_file::write_atomic(
        &write_target(&path)?,
        restored.as_bytes(),
        Durability::Synced,
    )?;
    records.settings.remove(&key);
    store.save(&records)?;
    match record.previous {
        Some(_) => println!("the previous statusLine is back in {}", path.display()),
        None => println!("agent's statusline is removed from {}", path.display()),
    }
    Ok(ExitCode::SUCCESS)
}

/// What the statusLine command agent replaced prints for the same `input`, when there was
/// one and it ends within [`PREVIOUS_TIMEOUT`] having printed at most [`PREVIOUS_CAP`] bytes.
/// Never an error: the line goes on without it.
pub fn previous_output(state_dir: &Path, input: &str) -> Option<String> {
    let path = settings_path()?;
    let record = installs(state_dir)
        .load()
        .settings
        .remove(&path.display().to_string())?;
    if std::env::var_os(NESTED_VAR).is_some() {
        return None;
    }
    let previous: Value = serde_json::from_str(record.previous.as_deref()?).ok()?;
    let command = previous.get("command")?.as_str()?;
    // On the same stdin, as Claude Code would have run it.
    let job = crate::child::Job::new(PREVIOUS_TIMEOUT, crate::child::Group::Own)
        .stdin(input.as_bytes())
        .cap(PREVIOUS_CAP);
    let output = crate::child::run(
        crate::child_env::command("/bin/sh")
            .args(["-c", command])
            .env(NESTED_VAR, "1"),
        &job,
    )
    .ok()?
    .output()
    .ok()?;
    Some(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// Whether two `statusLine` values (JSON text) are the same statusline: the same `type` and
/// `command`, however their keys are ordered or spaced and whatever else sits beside them.
fn same_command(value: &str, ours: &str) -> bool {
    let parse = |text: &str| serde_json::from_str::<Value>(text).ok();
    let (Some(value), Some(ours)) = (parse(value), parse(ours)) else {
        return false;
    };
    let command = |v: &Value| v.get("command").and_then(Value::as_str).map(str::to_string);
    value.get("type") == ours.get("type")
        && command(&value).is_some()
        && command(&value) == command(&ours)
}

/// A `statusLine` value's command for a message (quoted, redacted), else the value itself.
fn command_of(value: &str) -> String {
    let command = serde_json::from_str::<Value>(value)
        .ok()
        .and_then(|v| v.get("command")?.as_str().map(str::to_string));
    match command {
        Some(command) => format!("`{}`", crate::redact::redact(&command)),
        None => crate::redact::redact(value),
    }
}

/// Whether a `statusLine` value (JSON text) runs an agent statusline.
fn is_agents(value: &str) -> bool {
    serde_json::from_str::<Value>(value)
        .ok()
        .and_then(|v| v.get("command")?.as_str().map(str::to_string))
        .is_some_and(|command| command.trim_end().ends_with(" --statusline"))
}

/// The settings text: `{}` when there is no file yet; an error when it is not a JSON object
/// (agent does not rewrite what it cannot read).
fn read_settings(path: &Path) -> anyhow::Result<String> {
    let bytes = match bounded_read::read(path, bounded_read::SETTINGS) {
        Ok(bytes) => bytes,
        Err(bounded_read::Skipped::Missing) => return Ok("{}".to_string()),
        Err(why) => bail!("reading {}: {why}", path.display()),
    };
    let Ok(text) = String::from_utf8(bytes) else {
        bail!(
            "{} is not UTF-8: fix it first (agent changes nothing it cannot read)",
            path.display()
        );
    };
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(_)) => Ok(text),
        _ => bail!(
            "{} is not a JSON object: fix it first (agent changes nothing it cannot read)",
            path.display()
        ),
    }
}

/// The file a change to the settings at `path` is written to: `path` itself, or — when it is
/// a symbolic link, as a dotfile manager makes it — the file the link leads to, so the link
/// stays a link (an atomic replace of `path` would put a plain file in its place). A link to
/// nothing is refused: agent does not guess where the user keeps the file.
fn write_target(path: &Path) -> anyhow::Result<PathBuf> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => std::fs::canonicalize(path).map_err(|err| {
            let to = std::fs::read_link(path).unwrap_or_default();
            anyhow::anyhow!(
                "{} is a link to {}, which cannot be reached ({err}): agent writes through a \
                 link only to a file that is there; create it or remove the link, then run this \
                 again. Nothing changed",
                path.display(),
                to.display()
            )
        }),
        _ => Ok(path.to_path_buf()),
    }
}

/// `path`, and where it leads when that is elsewhere.
fn shown_with_target(path: &Path, target: &Path) -> String {
    if path == target {
        path.display().to_string()
    } else {
        format!(
            "{} (through the link, in {})",
            path.display(),
            target.display()
        )
    }
}

/// `settings.json.agent-backup-20260914T120000Z`.
fn backup_path(path: &Path) -> PathBuf {
    let stamp = jiff::Timestamp::now().strftime("%Y%m%dT%H%M%SZ");
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    path.with_file_name(format!("{name}.agent-backup-{stamp}"))
}

/// Where a top-level member sits in the text of a JSON object.
#[derive(Debug, Clone, PartialEq)]
struct Span {
    /// From the key's opening quote to the value's end.
    whole: std::ops::Range<usize>,
    value: std::ops::Range<usize>,
}

/// The last top-level member named `key` (the one a JSON reader keeps) of `text`, a JSON
/// object already checked to parse.
fn member(text: &str, key: &str) -> Option<Span> {
    let bytes = text.as_bytes();
    let mut at = skip_space(bytes, 0);
    if bytes.get(at) != Some(&b'{') {
        return None;
    }
    at += 1;
    let mut found = None;
    loop {
        at = skip_space(bytes, at);
        if bytes.get(at) != Some(&b'"') {
            return found;
        }
        let key_start = at;
        let key_end = value_end(bytes, at);
        let name: String = serde_json::from_str(&text[key_start..key_end]).ok()?;
        at = skip_space(bytes, key_end);
        if bytes.get(at) != Some(&b':') {
            return found;
        }
        let value_start = skip_space(bytes, at + 1);
        let end = value_end(bytes, value_start);
        if name == key {
            found = Some(Span {
                whole: key_start..end,
                value: value_start..end,
            });
        }
        at = skip_space(bytes, end);
        if bytes.get(at) != Some(&b',') {
            return found;
        }
        at += 1;
    }
}

fn skip_space(bytes: &[u8], mut at: usize) -> usize {
    while bytes.get(at).is_some_and(u8::is_ascii_whitespace) {
        at += 1;
    }
    at
}

/// The end of the JSON value starting at `at` (valid JSON assumed).
fn value_end(bytes: &[u8], mut at: usize) -> usize {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    while let Some(&byte) = bytes.get(at) {
        at += 1;
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => {
                    in_string = false;
                    if depth == 0 {
                        return at;
                    }
                }
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'{' | b'[' => depth += 1,
            // A scalar ends at a delimiter, or where its container closes.
            b',' | b' ' | b'\t' | b'\n' | b'\r' | b'}' | b']' if depth == 0 => return at - 1,
            b'}' | b']' => {
                depth -= 1;
                if depth == 0 {
                    return at;
                }
            }
            _ => {}
        }
    }
    at
}

/// `text` with the top-level member `key` set to the JSON text `value`, or removed when
/// `None`. Everything else is kept byte for byte.
fn with_member(text: &str, key: &str, value: Option<&str>) -> String {
    let span = member(text, key);
    match (span, value) {
        (Some(span), Some(value)) => {
            format!(
                "{}{value}{}",
                &text[..span.value.start],
                &text[span.value.end..]
            )
        }
        (Some(span), None) => remove(text, &span.whole),
        (None, Some(value)) => insert(text, key, value),
        (None, None) => text.to_string(),
    }
}

/// The member first in the object, indented like the next one.
fn insert(text: &str, key: &str, value: &str) -> String {
    let bytes = text.as_bytes();
    let open = skip_space(bytes, 0) + 1;
    let next = skip_space(bytes, open);
    let quoted = serde_json::to_string(key).unwrap_or_default();
    if bytes.get(next) == Some(&b'}') {
        return format!("{}\n  {quoted}: {value}\n{}", &text[..open], &text[next..]);
    }
    let indent = &text[open..next];
    format!(
        "{}{indent}{quoted}: {value},{}",
        &text[..open],
        &text[open..]
    )
}

/// The member at `whole` gone with one comma: the one after it, or else the one before.
fn remove(text: &str, whole: &std::ops::Range<usize>) -> String {
    let bytes = text.as_bytes();
    let after = skip_space(bytes, whole.end);
    if bytes.get(after) == Some(&b',') {
        // Up to the next member, so the indentation before ours serves it.
        let next = skip_space(bytes, after + 1);
        return format!("{}{}", &text[..whole.start], &text[next..]);
    }
    let before = text[..whole.start].trim_end();
    if let Some(stripped) = before.strip_suffix(',') {
        return format!("{stripped}{}", &text[whole.end..]);
    }
    // The only member: back to an empty object.
    let open = text[..whole.start].rfind('{').map_or(0, |at| at + 1);
    let close = text[whole.end..]
        .find('}')
        .map_or(text.len(), |at| whole.end + at);
    format!("{}{}", &text[..open], &text[close..])
}

#[cfg(test)]
mod tests {
    use super::*;

    const OURS: &str = r#"{"type":"command","command":"agent --statusline","padding":0}"#;

    #[test]
    fn install_then_uninstall_gives_back_the_same_bytes() {
        let cases = [
            "{}",
            "{}\n",
            "{\n  \"zeta\": 1,\n  \"alpha\": {\"x\": [1, \"}\"]}\n}\n",
            "{\"model\":\"opus\"}",
            "{\n  \"statusLine\": {\"type\": \"command\", \"command\": \"echo \\\"hi\\\" }\"},\n  \"b\": 2\n}",
            "{\"a\": 1, \"statusLine\": {\"type\":\"command\",\"command\":\"x\"}}",
            "{\"a\": \"\\\\\", \"statusLine\": null , \"c\": [ ] }",
        ];
        for original in cases {
            let previous =
                member(original, "statusLine").map(|span| original[span.value].to_string());
            let installed = with_member(original, "statusLine", Some(OURS));
            let parsed: Value = serde_json::from_str(&installed)
                .unwrap_or_else(|err| panic!("{original:?} gave {installed:?}: {err}"));
            assert_eq!(
                parsed["statusLine"]["command"], "agent --statusline",
                "{installed}"
            );
            let mut expected: Value = serde_json::from_str(original).unwrap();
            expected.as_object_mut().unwrap().remove("statusLine");
            let mut got = parsed.clone();
            got.as_object_mut().unwrap().remove("statusLine");
            assert_eq!(got, expected, "other keys kept: {installed}");
            let restored = with_member(&installed, "statusLine", previous.as_deref());
            if previous.is_some() || original.trim() != "{}" {
                assert_eq!(restored, original, "from {installed:?}");
            } else {
                assert_eq!(serde_json::from_str::<Value>(&restored).unwrap(), expected);
            }
        }
    }

    #[test]
    fn the_same_command_respelled_is_still_agents() {
        let respelled = "{\n    \"padding\": 0,\n    \"command\": \"agent --statusline\",\n    \"type\": \"command\"\n  }";
        assert!(same_command(respelled, OURS));
        assert!(same_command(
            r#"{"command":"agent --statusline","type":"command"}"#,
            OURS
        ));
        assert!(!same_command(
            r#"{"type":"command","command":"agent --statusline | cat"}"#,
            OURS
        ));
        assert!(!same_command(
            r#"{"type":"static","command":"agent --statusline"}"#,
            OURS
        ));
        assert!(!same_command(
            r#"{"type":"command"}"#,
            r#"{"type":"command"}"#
        ));
        assert!(!same_command("null", OURS));
    }

    #[test]
    fn random_objects_keep_their_other_members() {
        let mut rng = fastrand::Rng::with_seed(13);
        for case in 0..2000 {
            let mut object = serde_json::Map::new();
            for _ in 0..rng.usize(0..5) {
                let key = ["a", "statusLine", "b\"q", "}", "env"][rng.usize(0..5)];
                let value = match rng.u8(0..4) {
                    0 => Value::from(rng.i32(..)),
                    1 => Value::from(format!("{{[\\\"{}", rng.u8(..))),
                    2 => serde_json::json!({"x": [1, {"y": "]"}]}),
                    _ => Value::Null,
                };
                object.insert(key.to_string(), value);
            }
            let text = if rng.bool() {
                serde_json::to_string(&object).unwrap()
            } else {
                serde_json::to_string_pretty(&object).unwrap()
            };
            let previous = member(&text, "statusLine").map(|span| text[span.value].to_string());
            let installed = with_member(&text, "statusLine", Some(OURS));
            let parsed: Value = serde_json::from_str(&installed)
                .unwrap_or_else(|err| panic!("case {case}: {text:?} gave {installed:?}: {err}"));
            assert_eq!(parsed["statusLine"]["type"], "command", "case {case}");
            let restored = with_member(&installed, "statusLine", previous.as_deref());
            let back: Value = serde_json::from_str(&restored).unwrap_or_else(|err| {
                panic!("case {case}: {installed:?} gave {restored:?}: {err}")
            });
            assert_eq!(back, Value::Object(object), "case {case}: {text:?}");
        }
    }
}
