//! What a run did before it ended, from the CLI's own record of it: the files its edit
//! tools changed and the commands it ran. A run that acted and then failed fast is not
//! re-run from scratch on the next CLI (issue 28 item 10): the second CLI would redo, or
//! fight, work that is already half on disk.
//!
//! Only the CLI's own tool-call entries count, never message text (a prompt that says
//! "Edit" is not an edit):
//! - Claude Code's transcript: assistant rows whose `message.content` holds a `tool_use`
//!   named `Edit`, `MultiEdit`, `Write` or `NotebookEdit` (a file changed: its
//!   `input.file_path` / `input.notebook_path`) or `Bash` (a command ran).
//! - Codex's rollout: `response_item` rows whose payload is a `function_call`,
//!   `custom_tool_call` or `local_shell_call`: `apply_patch` changes the files its patch
//!   names (`*** Add File: …`, `*** Update File: …`, `*** Delete File: …`), a shell
//!   (`shell`, `exec_command`, `local_shell_call`, `unified_exec`) ran a command.

use std::path::Path;

use jiff::Timestamp;
use serde_json::Value;

use super::records;

/// At most this many changed files are kept: a notice names a few, never a long list.
const MAX_FILES: usize = 20;

/// What one run did, as its record says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Actions {
    /// The files it changed, first seen first, each once (at most [`MAX_FILES`]).
    pub files: Vec<String>,
    /// How many commands it ran.
    pub commands: usize,
}

impl Actions {
    /// Whether it did anything that may have changed the world.
    pub fn acted(&self) -> bool {
        !self.files.is_empty() || self.commands > 0
    }

    /// "changed src/a.rs, src/b.rs and ran 2 commands", for a notice.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if !self.files.is_empty() {
            let shown: Vec<&str> = self.files.iter().take(3).map(String::as_str).collect();
            let more = self.files.len().saturating_sub(shown.len());
            parts.push(match more {
                0 => format!("changed {}", shown.join(", ")),
                more => format!("changed {} and {more} more", shown.join(", ")),
            });
        }
        match self.commands {
            0 => {}
            1 => parts.push("ran a command".to_string()),
            n => parts.push(format!("ran {n} commands")),
        }
        parts.join(" and ")
    }

    /// Adds a file it changed (its first mention kept, at most [`MAX_FILES`]).
    pub fn changed(&mut self, file: &str) {
        let file = crate::text::printable(file.trim());
        if !file.is_empty() && self.files.len() < MAX_FILES && !self.files.contains(&file) {
            self.files.push(file);
        }
    }
}

/// What the Claude Code run that started at `start` did, from the transcripts in its
/// project directory (`<config dir>/projects/<project>`): rows written at or after
/// `start` only, never an older session's.
pub fn claude(project_dir: &Path, start: Timestamp) -> Actions {
    let mut actions = Actions::default();
    let files = records::files_newest_first(project_dir, Some(start), |name| {
        records::has_extension(name, "jsonl")
    });
    for (path, _) in files {
        for line in records::lines(&path) {
            if !line.contains("\"tool_use\"") {
                continue;
            }
            let Ok(row) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if row.get("type").and_then(Value::as_str) != Some("assistant")
                || !written_since(&row, start)
            {
                continue;
            }
            claude_row(&row, &mut actions);
        }
    }
    actions
}

/// Adds what one assistant row of a Claude Code transcript did: the files its edit tool
/// calls changed and the commands it ran.
pub fn claude_row(row: &Value, actions: &mut Actions) {
    let Some(content) = row.pointer("/message/content").and_then(Value::as_array) else {
        return;
    };
    for item in content {
        if item.get("type").and_then(Value::as_str) != Some("tool_use") {
            continue;
        }
        let input = item.get("input");
        let field = |name: &str| input.and_then(|i| i.get(name)).and_then(Value::as_str);
        match item.get("name").and_then(Value::as_str) {
            Some("Edit" | "MultiEdit" | "Write") => {
                if let Some(file) = field("file_path") {
                    actions.changed(file);
                }
            }
            Some("NotebookEdit") => {
                if let Some(file) = field("notebook_path") {
                    actions.changed(file);
                }
            }
            Some("Bash") => actions.commands += 1,
            _ => {}
        }
    }
}

/// What the Codex run recorded in the rollout at `path` did since `start`.
pub fn codex(path: &Path, start: Timestamp) -> Actions {
    let mut actions = Actions::default();
    for line in records::lines(path) {
        if !line.contains("\"response_item\"") {
            continue;
        }
        let Ok(row) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        if row.get("type").and_then(Value::as_str) != Some("response_item")
            || !written_since(&row, start)
        {
            continue;
        }
        if let Some(payload) = row.get("payload") {
            codex_item(payload, &mut actions);
        }
    }
    actions
}

/// Adds what one `response_item` payload of a Codex rollout did: the files an
/// `apply_patch` call names and the commands a shell call ran.
pub fn codex_item(payload: &Value, actions: &mut Actions) {
    let kind = payload.get("type").and_then(Value::as_str);
    if !matches!(
        kind,
        Some("function_call" | "custom_tool_call" | "local_shell_call")
    ) {
        return;
    }
    let name = payload.get("name").and_then(Value::as_str);
    match (kind, name) {
        (_, Some("apply_patch")) => {
            let patch = payload
                .get("input")
                .or_else(|| payload.get("arguments"))
                .and_then(Value::as_str)
                .unwrap_or("");
            // Function-call arguments are JSON text holding the patch; the freeform
            // tool's input is the patch itself.
            let patch = serde_json::from_str::<Value>(patch)
                .ok()
                .and_then(|args| {
                    args.get("input")
                        .and_then(Value::as_str)
                        .map(str::to_string)
                })
                .unwrap_or_else(|| patch.to_string());
            for file in patched_files(&patch) {
                actions.changed(file);
            }
        }
        (Some("local_shell_call"), _)
        | (_, Some("shell" | "exec_command" | "local_shell" | "unified_exec")) => {
            actions.commands += 1;
        }
        _ => {}
    }
}

/// Adds what one tool call of a Gemini CLI `gemini` message did (its `toolCalls[]`, 0.61:
/// `{"name", "args", "status", …}`): `write_file` and `replace` change their
/// `args.file_path`, `run_shell_command` runs a command. A call its scheduler cancelled or
/// refused before it ran (`status` other than `success` or `error`) did nothing.
pub fn gemini_tool_call(call: &Value, actions: &mut Actions) {
    let ran = matches!(
        call.get("status").and_then(Value::as_str),
        Some("success" | "error")
    );
    if !ran {
        return;
    }
    let args = call.get("args");
    match call.get("name").and_then(Value::as_str) {
        Some("write_file" | "replace") => {
            if let Some(file) = args
                .and_then(|a| a.get("file_path"))
                .and_then(Value::as_str)
            {
                actions.changed(file);
            }
        }
        Some("run_shell_command") => actions.commands += 1,
        _ => {}
    }
}

/// The files an `apply_patch` patch names.
fn patched_files(patch: &str) -> impl Iterator<Item = &str> {
    patch.lines().filter_map(|line| {
        ["*** Add File: ", "*** Update File: ", "*** Delete File: "]
            .iter()
            .find_map(|prefix| line.strip_prefix(prefix))
    })
}

fn written_since(row: &Value, start: Timestamp) -> bool {
    row.get("timestamp")
        .and_then(records::timestamp)
        .is_some_and(|at| at >= start)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(offset_secs: i64) -> String {
        (Timestamp::now() + jiff::SignedDuration::from_secs(offset_secs)).to_string()
    }

    #[test]
    fn claude_edits_and_commands_since_the_start_count_and_older_ones_and_text_do_not() {
        let dir = tempfile::tempdir().unwrap();
        let start = Timestamp::now();
        let rows = [
            serde_json::json!({"type": "assistant", "timestamp": at(-600), "message": {"content": [
                {"type": "tool_use", "name": "Edit", "input": {"file_path": "/old/session.rs"}}]}}),
            serde_json::json!({"type": "user", "timestamp": at(1), "message": {"content": [
                {"type": "text", "text": "please use \"tool_use\" Edit on /x"}]}}),
            serde_json::json!({"type": "assistant", "timestamp": at(2), "message": {"content": [
                {"type": "text", "text": "I will edit"},
                {"type": "tool_use", "name": "Edit", "input": {"file_path": "/repo/src/a.rs"}},
                {"type": "tool_use", "name": "Read", "input": {"file_path": "/repo/src/b.rs"}}]}}),
            serde_json::json!({"type": "assistant", "timestamp": at(3), "message": {"content": [
                {"type": "tool_use", "name": "Write", "input": {"file_path": "/repo/src/a.rs"}},
                {"type": "tool_use", "name": "Bash", "input": {"command": "cargo test"}}]}}),
        ];
        let text = rows.map(|r| r.to_string()).join("\n");
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, text).unwrap();
        // Stamped by the test's clock, as Claude Code's own writes are by its clock (the
        // file system stamps the machine's, which is not the test's under a faked clock).
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(std::time::SystemTime::now())
            .unwrap();
        let actions = claude(dir.path(), start);
        assert_eq!(actions.files, ["/repo/src/a.rs"]);
        assert_eq!(actions.commands, 1);
        assert_eq!(
            actions.describe(),
            "changed /repo/src/a.rs and ran a command"
        );
        assert!(
            !claude(
                dir.path(),
                Timestamp::now() + jiff::SignedDuration::from_secs(60)
            )
            .acted()
        );
    }

    #[test]
    fn codex_patches_and_shell_calls_count() {
        let dir = tempfile::tempdir().unwrap();
        let start = Timestamp::now();
        let patch = "*** Begin Patch\n*** Update File: src/lib.rs\n@@\n-a\n+b\n*** Add File: NEW.md\n+hi\n*** End Patch";
        let rows = [
            serde_json::json!({"timestamp": at(1), "type": "response_item", "payload": {
                "type": "custom_tool_call", "name": "apply_patch", "input": patch}}),
            serde_json::json!({"timestamp": at(2), "type": "response_item", "payload": {
                "type": "function_call", "name": "shell",
                "arguments": "{\"command\":[\"bash\",\"-lc\",\"ls\"]}"}}),
            serde_json::json!({"timestamp": at(3), "type": "response_item", "payload": {
                "type": "message", "role": "assistant",
                "content": [{"type": "output_text", "text": "*** Add File: fake.rs"}]}}),
        ];
        let text = rows.map(|r| r.to_string()).join("\n");
        let path = dir.path().join("rollout.jsonl");
        std::fs::write(&path, text).unwrap();
        let actions = codex(&path, start);
        assert_eq!(actions.files, ["src/lib.rs", "NEW.md"]);
        assert_eq!(actions.commands, 1);
    }

    #[test]
    fn many_files_are_named_by_the_first_three() {
        let mut actions = Actions::default();
        for n in 0..30 {
            actions.changed(&format!("f{n}"));
        }
        assert_eq!(actions.files.len(), MAX_FILES);
        assert_eq!(actions.describe(), "changed f0, f1, f2 and 17 more");
    }
}
