//! The work of an opencode session, from its tool parts (1.18: `{"type": "tool", "callID",
//! "tool", "state": {"status", "input", "output", "metadata"}}`, `status` `completed` or
//! `error` once it ran): `edit` (`filePath`, `oldString`, `newString`) and `write`
//! (`filePath`, `content`) change a file, `bash` (`command`) runs one, `todowrite`
//! (`todos: [{"content", "status"}]`) is the plan.

use serde_json::Value;

use super::session_work::{Ended, PlanItem, PlanStatus, Work};

/// Adds one tool part to `work`.
pub fn tool_part(part: &Value, work: &mut Work) {
    let id = part.get("callID").and_then(Value::as_str);
    let input = |name: &str| {
        part.pointer(&format!("/state/input/{name}"))
            .and_then(Value::as_str)
    };
    let ended = match part.pointer("/state/status").and_then(Value::as_str) {
        Some("completed") => match part.pointer("/state/metadata/exit").and_then(Value::as_i64) {
            Some(code) if code != 0 => Ended::Failed(Some(code)),
            _ => Ended::Ok,
        },
        Some("error") => Ended::Failed(None),
        _ => return,
    };
    let output = part.pointer("/state/output").and_then(Value::as_str);
    match part.get("tool").and_then(Value::as_str) {
        Some(tool @ ("edit" | "write")) => {
            let Some(path) = input("filePath") else {
                return;
            };
            let (old, new) = match tool {
                "edit" => (input("oldString"), input("newString")),
                _ => (None, input("content")),
            };
            work.edit_that_ended(id, ended, path, old.unwrap_or(""), new.unwrap_or(""));
        }
        Some("bash") => {
            if let Some(command) = input("command") {
                work.command(id, command);
                if let Some(id) = id {
                    work.result(id, ended, output);
                }
            }
        }
        Some("todowrite") => {
            let todos = part.pointer("/state/input/todos").and_then(Value::as_array);
            work.plan(todos.into_iter().flatten().map(|todo| {
                let text = todo.get("content").and_then(Value::as_str).unwrap_or("");
                let status = todo.get("status").and_then(Value::as_str).unwrap_or("");
                PlanItem::new(text, PlanStatus::parse(status))
            }));
        }
        _ => {}
    }
}
