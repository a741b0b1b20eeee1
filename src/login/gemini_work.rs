//! The work of a Gemini CLI session, from the tool calls of its `gemini` messages (0.61:
//! `toolCalls: [{"id", "name", "args", "status", "result"}]`, `status` `success` or
//! `error` once it ran): `replace` (`file_path`, `old_string`, `new_string`) and
//! `write_file` (`file_path`, `content`) change a file, `run_shell_command` (`command`)
//! runs one, `write_todos` (`todos: [{"description", "status"}]`) is the plan.

use serde_json::Value;

use super::session_work::{Ended, PlanItem, PlanStatus, Work};

/// Adds one tool call of a `gemini` message to `work`.
pub fn tool_call(call: &Value, work: &mut Work) {
    let id = call.get("id").and_then(Value::as_str);
    let arg = |name: &str| {
        call.pointer(&format!("/args/{name}"))
            .and_then(Value::as_str)
    };
    let ended = match call.get("status").and_then(Value::as_str) {
        Some("success") => Ended::Ok,
        Some("error") => Ended::Failed(None),
        // Cancelled, or still waiting for the user: it changed nothing.
        _ => return,
    };
    match call.get("name").and_then(Value::as_str) {
        Some(tool @ ("replace" | "write_file")) => {
            let Some(path) = arg("file_path") else { return };
            let (old, new) = match tool {
                "replace" => (arg("old_string"), arg("new_string")),
                _ => (None, arg("content")),
            };
            work.edit_that_ended(id, ended, path, old.unwrap_or(""), new.unwrap_or(""));
        }
        Some("run_shell_command") => {
            if let Some(command) = arg("command") {
                work.command(id, command);
                if let Some(id) = id {
                    work.result(id, ended, output_of(call).as_deref());
                }
            }
        }
        Some("write_todos") => {
            let todos = call.pointer("/args/todos").and_then(Value::as_array);
            work.plan(todos.into_iter().flatten().map(|todo| {
                let text = todo
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                let status = todo.get("status").and_then(Value::as_str).unwrap_or("");
                PlanItem::new(text, PlanStatus::parse(status))
            }));
        }
        _ => {}
    }
}

/// What a call's result says it printed (`functionResponse.response.output`).
fn output_of(call: &Value) -> Option<String> {
    call.get("result")
        .and_then(Value::as_array)?
        .iter()
        .find_map(|part| part.pointer("/functionResponse/response/output"))
        .and_then(Value::as_str)
        .map(str::to_string)
}
