//! The work of a Claude Code session from its transcript's tool calls ([`super::session_work`]),
//! never from message text: a prompt that says "Edit" is not an edit.
//!
//! An assistant row's `message.content` holds `tool_use` blocks `{id, name, input}`:
//! `TodoWrite` `{todos: [{content, status, activeForm}]}` is the plan; `Edit` `{file_path,
//! old_string, new_string, replace_all}`, `MultiEdit` `{file_path, edits: [{old_string,
//! new_string}]}`, `Write` `{file_path, content}` and `NotebookEdit` `{notebook_path,
//! new_source}` change files; `Bash` `{command, description}` runs a command. The result
//! is a user row's `tool_result` block `{tool_use_id, content, is_error}`: a failed `Bash`
//! says `Exit code N` on its content's first line, and the row's `toolUseResult` holds
//! `{stdout, stderr, interrupted}` (a string `Error: …` when it failed).

use serde_json::Value;

use super::session_work::{Edit, Ended, PlanItem, PlanStatus, Work, line_count};

/// Adds what an assistant row's tool calls did.
pub fn tool_uses(row: &Value, work: &mut Work) {
    let Some(content) = row.pointer("/message/content").and_then(Value::as_array) else {
        return;
    };
    for block in content {
        if block.get("type").and_then(Value::as_str) != Some("tool_use") {
            continue;
        }
        let id = block.get("id").and_then(Value::as_str);
        let input = block.get("input").unwrap_or(&Value::Null);
        match block.get("name").and_then(Value::as_str) {
            Some("TodoWrite") => work.plan(todos(input)),
            Some("Bash") => {
                if let Some(command) = text(input, "command") {
                    work.command(id, command);
                }
            }
            Some(name) => {
                let edits = edits(name, input);
                if !edits.is_empty() {
                    work.edit(id, edits);
                }
            }
            None => {}
        }
    }
}

/// Adds what a user row's tool results say of the calls they answer.
pub fn tool_results(row: &Value, work: &mut Work) {
    let Some(content) = row.pointer("/message/content").and_then(Value::as_array) else {
        return;
    };
    for block in content {
        if block.get("type").and_then(Value::as_str) != Some("tool_result") {
            continue;
        }
        let Some(id) = block.get("tool_use_id").and_then(Value::as_str) else {
            continue;
        };
        let said = result_text(block.get("content"));
        let ended = if block.get("is_error").and_then(Value::as_bool) == Some(true) {
            Ended::Failed(exit_code(&said))
        } else {
            Ended::Ok
        };
        let output = output(row.get("toolUseResult")).unwrap_or(said);
        work.result(id, ended, Some(&output));
    }
}

/// The todo list a `TodoWrite` call sets.
fn todos(input: &Value) -> Vec<PlanItem> {
    let Some(todos) = input.get("todos").and_then(Value::as_array) else {
        return Vec::new();
    };
    todos
        .iter()
        .filter_map(|todo| {
            let status = PlanStatus::parse(text(todo, "status").unwrap_or(""));
            Some(PlanItem::new(text(todo, "content")?, status))
        })
        .collect()
}

/// The changes an edit tool's call makes, by its input alone.
fn edits(name: &str, input: &Value) -> Vec<Edit> {
    let pair = |edit: &Value| {
        let old = text(edit, "old_string").unwrap_or("");
        let new = text(edit, "new_string").unwrap_or("");
        (line_count(old), line_count(new), new.to_string())
    };
    let (path, parts) = match name {
        "Edit" => (text(input, "file_path"), vec![pair(input)]),
        "MultiEdit" => (
            text(input, "file_path"),
            input
                .get("edits")
                .and_then(Value::as_array)
                .map(|edits| edits.iter().map(pair).collect())
                .unwrap_or_default(),
        ),
        "Write" => {
            let content = text(input, "content").unwrap_or("");
            (
                text(input, "file_path"),
                vec![(0, line_count(content), content.to_string())],
            )
        }
        "NotebookEdit" => {
            let source = text(input, "new_source").unwrap_or("");
            (
                text(input, "notebook_path"),
                vec![(0, line_count(source), source.to_string())],
            )
        }
        _ => return Vec::new(),
    };
    let Some(path) = path else {
        return Vec::new();
    };
    let removed = parts.iter().map(|p| p.0).sum();
    let added = parts.iter().map(|p| p.1).sum();
    let new_text = parts.into_iter().last().map(|p| p.2).unwrap_or_default();
    vec![Edit {
        path: path.to_string(),
        added,
        removed,
        new_text,
        deleted: false,
    }]
}

/// The text of a `tool_result`'s content: a string, or `text` blocks.
fn result_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The exit code a failed `Bash` result names on its first line (`Exit code 2`).
fn exit_code(said: &str) -> Option<i64> {
    let first = said.lines().next()?.trim();
    let first = first.strip_prefix("Error: ").unwrap_or(first);
    first.strip_prefix("Exit code ")?.trim().parse().ok()
}

/// A `Bash` result's own output, stdout then stderr, when the row holds it as data.
fn output(result: Option<&Value>) -> Option<String> {
    let result = result?.as_object()?;
    let field = |name: &str| result.get(name).and_then(Value::as_str).unwrap_or("");
    let (stdout, stderr) = (field("stdout"), field("stderr"));
    let mut both = [stdout, stderr]
        .into_iter()
        .filter(|s| !s.trim().is_empty())
        .collect::<Vec<_>>()
        .join("\n");
    if result.get("interrupted").and_then(Value::as_bool) == Some(true) {
        both.push_str("\n[interrupted]");
    }
    (!both.trim().is_empty()).then_some(both)
}

fn text<'v>(value: &'v Value, name: &str) -> Option<&'v str> {
    value.get(name).and_then(Value::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_last_todo_list_edits_and_a_failed_command_are_read_from_tool_calls() {
        let mut work = Work::default();
        tool_uses(
            &json!({"message": {"content": [
                {"type": "tool_use", "id": "t0", "name": "TodoWrite", "input": {"todos": [
                    {"content": "old", "status": "pending", "activeForm": "Old"}]}},
                {"type": "tool_use", "id": "t1", "name": "TodoWrite", "input": {"todos": [
                    {"content": "Read the tests", "status": "completed", "activeForm": "Reading"},
                    {"content": "Fix parse", "status": "in_progress", "activeForm": "Fixing"}]}},
                {"type": "tool_use", "id": "t2", "name": "MultiEdit", "input": {
                    "file_path": "/p/a.rs", "edits": [
                        {"old_string": "a\nb", "new_string": "c"},
                        {"old_string": "d", "new_string": "e\nf\ng"}]}},
                {"type": "tool_use", "id": "t3", "name": "Bash",
                    "input": {"command": "cargo test", "description": "Run the tests"}},
                {"type": "text", "text": "Edit /p/fake.rs"}]}}),
            &mut work,
        );
        tool_results(
            &json!({"message": {"content": [
                {"type": "tool_result", "tool_use_id": "t2", "content": "updated"},
                {"type": "tool_result", "tool_use_id": "t3", "is_error": true,
                    "content": "Exit code 101\nerror: test failed"}]},
                "toolUseResult": "Error: Exit code 101\nerror: test failed"}),
            &mut work,
        );
        let done = work.finish();
        assert_eq!(done.plan.len(), 2);
        assert_eq!(done.plan[1].status, PlanStatus::InProgress);
        assert_eq!(done.changes.len(), 1);
        assert_eq!((done.changes[0].added, done.changes[0].removed), (4, 3));
        assert_eq!(done.changes[0].last_new_text, "e\nf\ng");
        let failed = done.last_failure.unwrap();
        assert_eq!(failed.ended, Ended::Failed(Some(101)));
        assert_eq!(
            failed.output_tail.as_deref(),
            Some("Exit code 101\nerror: test failed")
        );
    }

    #[test]
    fn a_commands_output_is_its_stdout_and_stderr_when_the_row_has_them() {
        let result = json!({"stdout": "ran 3", "stderr": "warning: x", "interrupted": true});
        assert_eq!(
            output(Some(&result)).as_deref(),
            Some("ran 3\nwarning: x\n[interrupted]")
        );
        assert_eq!(exit_code("Exit code 2\nls: nope"), Some(2));
        assert_eq!(exit_code("Error: Exit code 7"), Some(7));
        assert_eq!(exit_code("Command timed out"), None);
    }
}
