//! The work of a Codex session from its rollout's tool calls ([`super::session_work`]), never
//! from message text.
//!
//! `response_item` payloads: a `function_call` `{name, arguments, call_id}` whose
//! `arguments` is JSON text — `update_plan` `{explanation, plan: [{step, status}]}` is the
//! plan; `shell`, `exec_command`, `unified_exec` `{command: [..]}` or `{cmd: "…"}` run a
//! command, as a `local_shell_call` `{call_id, action: {command: [..]}}` does; `apply_patch`
//! (or the freeform `custom_tool_call` of that name, its `input` the patch itself) changes
//! the files its patch names. Its `function_call_output` / `custom_tool_call_output`
//! `{call_id, output}` is JSON text `{"output": …, "metadata": {"exit_code": N}}` in older
//! versions, else plain text (`Exit code: N` first, or 0.171's unified exec `Process exited
//! with code N`). 0.171 also writes the structured ending as an `event_msg` `item_completed`
//! whose item is a `CommandExecution` `{id, exit_code, status, aggregated_output}`; older
//! versions persisted `exec_command_end` `{call_id, exit_code, aggregated_output}`.

use serde_json::Value;

use super::session_work::{Edit, Ended, PlanItem, PlanStatus, Work};

/// The shells Codex has offered its model, by version.
const SHELLS: &[&str] = &[
    "shell",
    "exec_command",
    "local_shell",
    "unified_exec",
    "container.exec",
];

/// Adds what one `response_item` payload did or said of a call.
pub fn item(payload: &Value, work: &mut Work) {
    let kind = payload.get("type").and_then(Value::as_str);
    let call = payload.get("call_id").and_then(Value::as_str);
    let name = payload.get("name").and_then(Value::as_str);
    match (kind, name) {
        (Some("function_call_output" | "custom_tool_call_output"), _) => {
            if let Some(id) = call {
                output(id, payload.get("output"), work);
            }
        }
        (Some("local_shell_call"), _) => {
            if let Some(argv) = payload.pointer("/action/command") {
                work.command(call, &command_line(argv));
            }
        }
        (Some("function_call" | "custom_tool_call"), Some(name)) => {
            let raw = payload
                .get("arguments")
                .or_else(|| payload.get("input"))
                .and_then(Value::as_str)
                .unwrap_or("");
            let args = serde_json::from_str::<Value>(raw).unwrap_or(Value::Null);
            call_of(name, raw, &args, call, work);
        }
        _ => {}
    }
}

fn call_of(name: &str, raw: &str, args: &Value, call: Option<&str>, work: &mut Work) {
    match name {
        "update_plan" => work.plan(plan(args)),
        "apply_patch" => {
            // Function-call arguments are JSON text holding the patch; the freeform
            // tool's input is the patch itself.
            let patch = args.get("input").and_then(Value::as_str).unwrap_or(raw);
            work.edit(call, patch_edits(patch));
        }
        name if SHELLS.contains(&name) => {
            let command = args
                .get("cmd")
                .filter(|c| c.is_string())
                .or_else(|| args.get("command"));
            if let Some(command) = command {
                work.command(call, &command_line(command));
            }
        }
        _ => {}
    }
}

/// Adds what one `event_msg` payload says of a command's ending.
pub fn event(payload: &Value, work: &mut Work) {
    let (id, ended) = match payload.get("type").and_then(Value::as_str) {
        Some("item_completed") => {
            let Some(item) = payload.get("item") else {
                return;
            };
            if item.get("type").and_then(Value::as_str) != Some("CommandExecution") {
                return;
            }
            (item.get("id"), item)
        }
        Some("exec_command_end") => (payload.get("call_id"), payload),
        _ => return,
    };
    let Some(id) = id.and_then(Value::as_str) else {
        return;
    };
    let code = ended.get("exit_code").and_then(Value::as_i64);
    let failed = ended.get("status").and_then(Value::as_str) == Some("failed");
    let outcome = match code {
        Some(0) if !failed => Ended::Ok,
        Some(0) => Ended::Failed(None),
        Some(code) => Ended::Failed(Some(code)),
        None if failed => Ended::Failed(None),
        None => Ended::Unknown,
    };
    let field = |name: &str| ended.get(name).and_then(Value::as_str);
    let output = field("aggregated_output")
        .or_else(|| field("stderr").filter(|s| !s.trim().is_empty()))
        .or_else(|| field("stdout"));
    work.result(id, outcome, output);
}

/// What a call's output says of its ending.
fn output(id: &str, output: Option<&Value>, work: &mut Work) {
    let Some(text) = output.and_then(Value::as_str) else {
        return;
    };
    if let Ok(doc) = serde_json::from_str::<Value>(text)
        && let Some(code) = doc.pointer("/metadata/exit_code").and_then(Value::as_i64)
    {
        let said = doc.get("output").and_then(Value::as_str);
        let ended = if code == 0 {
            Ended::Ok
        } else {
            Ended::Failed(Some(code))
        };
        work.result(id, ended, said);
        return;
    }
    let ended = match text_exit_code(text) {
        Some(0) => Ended::Ok,
        Some(code) => Ended::Failed(Some(code)),
        None if text.starts_with("apply_patch verification failed") => Ended::Failed(None),
        None => Ended::Unknown,
    };
    // 0.171's output is a header, then `Output:` and what the command printed.
    let said = text.split_once("\nOutput:\n").map_or(text, |(_, out)| out);
    work.result(id, ended, Some(said));
}

/// The exit code a plain-text output names: `Exit code: N` on its first line, or a line
/// `Process exited with code N` in its header.
fn text_exit_code(text: &str) -> Option<i64> {
    let first = text.lines().next().unwrap_or("");
    if let Some(code) = first.strip_prefix("Exit code: ") {
        return code.trim().parse().ok();
    }
    text.lines()
        .take_while(|line| *line != "Output:")
        .find_map(|line| line.strip_prefix("Process exited with code "))
        .and_then(|code| code.trim().parse().ok())
}

/// The plan an `update_plan` call sets.
fn plan(args: &Value) -> Vec<PlanItem> {
    let Some(steps) = args.get("plan").and_then(Value::as_array) else {
        return Vec::new();
    };
    steps
        .iter()
        .filter_map(|step| {
            let status = step.get("status").and_then(Value::as_str).unwrap_or("");
            let text = step.get("step").and_then(Value::as_str)?;
            Some(PlanItem::new(text, PlanStatus::parse(status)))
        })
        .collect()
}

/// A command as its call gives it: a string, or an argv whose `bash -lc SCRIPT` form is
/// shown as the script the model wrote.
fn command_line(command: &Value) -> String {
    if let Some(line) = command.as_str() {
        return line.to_string();
    }
    let argv: Vec<String> = command
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    match argv.as_slice() {
        [shell, flag, script] if matches!(flag.as_str(), "-lc" | "-c") && is_shell(shell) => {
            script.clone()
        }
        _ => crate::text::shell_join(&argv),
    }
}

fn is_shell(program: &str) -> bool {
    let name = program.rsplit('/').next().unwrap_or(program);
    matches!(name, "bash" | "sh" | "zsh" | "dash")
}

/// The changes an `apply_patch` patch makes, a file each section.
fn patch_edits(patch: &str) -> Vec<Edit> {
    let mut edits: Vec<Edit> = Vec::new();
    for line in patch.lines() {
        let header = [
            ("*** Add File: ", false),
            ("*** Update File: ", false),
            ("*** Delete File: ", true),
        ]
        .into_iter()
        .find_map(|(prefix, deleted)| line.strip_prefix(prefix).map(|path| (path, deleted)));
        if let Some((path, deleted)) = header {
            edits.push(Edit {
                path: path.to_string(),
                added: 0,
                removed: 0,
                new_text: String::new(),
                deleted,
            });
            continue;
        }
        let Some(edit) = edits.last_mut() else {
            continue;
        };
        if let Some(to) = line.strip_prefix("*** Move to: ") {
            edit.path = to.to_string();
        } else if line.starts_with("@@") {
            // A new hunk: the last edit's new text is the last hunk's.
            edit.new_text.clear();
        } else if let Some(added) = line.strip_prefix('+') {
            edit.added += 1;
            // Bounded: the session keeps only its first lines.
            if edit.new_text.len() < 4096 {
                edit.new_text.push_str(added);
                edit.new_text.push('\n');
            }
        } else if line.starts_with('-') {
            edit.removed += 1;
        }
    }
    edits
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_patch_counts_each_files_lines_and_keeps_its_last_hunks_new_text() {
        let patch = "*** Begin Patch\n*** Update File: src/lib.rs\n@@ fn a\n-old\n+new one\n \
                     ctx\n@@ fn b\n-x\n-y\n+z\n*** Add File: NEW.md\n+hi\n+there\n\
                     *** Delete File: gone.rs\n*** End Patch";
        let edits = patch_edits(patch);
        let summary: Vec<_> = edits
            .iter()
            .map(|e| {
                (
                    e.path.as_str(),
                    e.added,
                    e.removed,
                    e.new_text.as_str(),
                    e.deleted,
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                ("src/lib.rs", 2, 3, "z\n", false),
                ("NEW.md", 2, 0, "hi\nthere\n", false),
                ("gone.rs", 0, 0, "", true),
            ]
        );
    }

    #[test]
    fn every_telling_of_a_commands_ending_is_read() {
        for (output, ended) in [
            (
                r#"{"output":"boom\n","metadata":{"exit_code":3,"duration_seconds":0.1}}"#,
                Ended::Failed(Some(3)),
            ),
            (
                "Exit code: 0\nWall time: 0.1 seconds\nOutput:\nok",
                Ended::Ok,
            ),
            (
                "Chunk ID: 4620df\nWall time: 0.0000 seconds\nProcess exited with code 2\n\
                 Original token count: 16\nOutput:\nls: cannot access\n",
                Ended::Failed(Some(2)),
            ),
        ] {
            let mut work = Work::default();
            item(
                &json!({"type": "function_call", "name": "exec_command", "call_id": "c",
                    "arguments": "{\"cmd\": \"ls /nonexistent-dir\"}"}),
                &mut work,
            );
            item(
                &json!({"type": "function_call_output", "call_id": "c", "output": output}),
                &mut work,
            );
            let done = work.finish();
            assert_eq!(done.commands[0].command, "ls /nonexistent-dir");
            assert_eq!(done.commands[0].ended, ended, "{output}");
        }
        let mut work = Work::default();
        item(
            &json!({"type": "local_shell_call", "call_id": "l",
                "action": {"type": "exec", "command": ["bash", "-lc", "make test"]}}),
            &mut work,
        );
        event(
            &json!({"type": "exec_command_end", "call_id": "l", "exit_code": 2,
                "stdout": "", "stderr": "make: *** [test] Error 2"}),
            &mut work,
        );
        let failed = work.finish().last_failure.unwrap();
        assert_eq!(failed.command, "make test");
        assert_eq!(failed.ended, Ended::Failed(Some(2)));
        assert_eq!(
            failed.output_tail.as_deref(),
            Some("make: *** [test] Error 2")
        );
    }
}
