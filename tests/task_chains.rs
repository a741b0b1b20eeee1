//! One task across CLIs and back (DESIGN §25, issue 42): Claude Code runs out mid-session
//! and Codex carries the task (it edits a file); `agent -c` in the folder then continues
//! *that task* — in Codex's session while Claude Code is still out, and back up in Claude
//! Code's own session, with a brief of what Codex did since, once its window has reset.
//! `agent --tasks` shows the chain; a new session in the folder closes it.

use std::path::PathBuf;

use jiff::Timestamp;
use serde_json::{Value, json};

use crate::support::claude_code::{
    FakeClaude, assistant_row, five_hour_limit_row_332, prompt_row, resets,
};
use crate::support::codex::{
    CODEX_DID, CODEX_EDITED, CODEX_SESSION, CODEX_WENT_ON,
    carrying_a_task as codex_carrying_the_task,
    carrying_a_task_then_running_out as codex_carrying_the_task_then_running_out,
};
use crate::support::{Sandbox, codex_runs, wait};
use crate::world::{CLAUDE_THEN_CODEX, World, world};

/// The task, more than one line, so "verbatim" means something.
const TASK: &str = "Port the parser to nom 8.\n\nKeep `parse()` public.";

/// The file Claude Code's session edited before its window ran out.
const CLAUDE_EDITED: &str = "src/lexer.rs";

/// Claude Code, then Codex, a one-second fast-failure threshold; Claude Code's session runs
/// out of its window (the reset `reset_in` seconds after it ends) after editing
/// [`CLAUDE_EDITED`]; Codex carries the task, patching [`CODEX_EDITED`] in session
/// [`CODEX_SESSION`], and a resumed Codex run says so.
fn claude_runs_out_and_codex_carries_the_task(reset_in: i64) -> World {
    let w = world();
    w.sb.write_config(&format!("fastfail_seconds = 1\n{CLAUDE_THEN_CODEX}"));
    let edited = w.sb.write_file(CLAUDE_EDITED, "pub fn lex() {}\n");
    let rows = [
        prompt_row(TASK),
        assistant_row(&json!([
            {"type": "text", "text": "Ported the lexer."},
            {"type": "tool_use", "id": "t1", "name": "Edit",
             "input": {"file_path": edited.to_string_lossy(), "old_string": "{}", "new_string": "{ todo }"}},
        ])),
        five_hour_limit_row_332(),
    ];
    FakeClaude::new(&w.sb)
        .works("1.3")
        .reset_in(reset_in)
        .edits(&edited)
        .rows(&rows)
        .install();
    codex_carrying_the_task(&w.sb);
    w
}

/// The session id agent gave Claude Code's first run.
fn claude_session(sb: &Sandbox) -> String {
    let first = &sb.calls("claude")[0].argv;
    let at = first
        .iter()
        .position(|word| word == "--session-id")
        .unwrap();
    first[at + 1].clone()
}

/// `agent --tasks --json`'s only task.
fn the_task(sb: &Sandbox) -> Value {
    let run = sb.run(&["--tasks", "--json"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    let tasks = report["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 1, "{report}");
    tasks[0].clone()
}

/// Each link's CLI, session and parent.
fn chain(task: &Value) -> Vec<(String, String, Value)> {
    task["links"]
        .as_array()
        .unwrap()
        .iter()
        .map(|link| {
            (
                link["cli"].as_str().unwrap().to_string(),
                link["session"].as_str().unwrap_or("?").to_string(),
                link["parent"].clone(),
            )
        })
        .collect()
}

/// The hand-off: Claude Code runs out, Codex carries the task.
fn hand_off(sb: &Sandbox) {
    let run = sb.run(&["--on-limit", "continue", "-p", TASK]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(run.stdout, format!("{CODEX_DID}\n"), "{run:?}");
    assert!(
        run.stderr.contains("— continuing in Codex"),
        "{}",
        run.stderr
    );
}

#[test]
fn with_claude_still_out_agent_c_continues_the_task_in_codexs_session() {
    let w = claude_runs_out_and_codex_carries_the_task(2 * 3600);
    hand_off(&w.sb);
    let claude = claude_session(&w.sb);

    let task = the_task(&w.sb);
    assert_eq!(
        chain(&task),
        [
            ("claude".to_string(), claude.clone(), Value::Null),
            ("codex".to_string(), CODEX_SESSION.to_string(), json!(0)),
        ],
        "{task}"
    );
    assert_eq!(task["task"], "Port the parser to nom 8.", "{task}");
    assert_eq!(task["continue"]["back_up"], false, "{task}");

    // A dry run shows the same choice and runs nothing.
    let dry = w.sb.run(&["--dry-run", "-c", "-p", "go on"]);
    assert_eq!(dry.code, Some(0), "{dry:?}");
    assert!(
        dry.stdout.contains(&format!("exec resume {CODEX_SESSION}")),
        "{}",
        dry.stdout
    );
    assert_eq!(codex_runs(&w.sb).len(), 1, "the dry run ran codex");

    let run = w.sb.run(&["-c", "-p", "go on"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(run.stdout, format!("{CODEX_WENT_ON}\n"), "{run:?}");
    assert_eq!(
        w.sb.calls("claude").len(),
        1,
        "Claude Code is still out: {}",
        run.stderr
    );
    let codex = codex_runs(&w.sb);
    assert_eq!(codex.len(), 2, "{}", run.stderr);
    let resumed = &codex[1].argv;
    assert_eq!(
        &resumed[..3],
        ["exec", "resume", CODEX_SESSION],
        "{resumed:?}"
    );
    assert_eq!(
        resumed.last().map(String::as_str),
        Some("go on"),
        "{resumed:?}"
    );
    assert!(
        run.stderr.contains(&format!(
            "[agent] continuing this folder's task in Codex (its default model) session {CODEX_SESSION} (Claude Code (its default model) is out until "
        )),
        "{}",
        run.stderr
    );

    let text = w.sb.run(&["--tasks"]);
    assert_eq!(text.code, Some(0), "{text:?}");
    for words in [
        "Tasks that crossed CLIs in ",
        " · Port the parser to nom 8.",
        "  1. Claude Code (its default model) · session ",
        " · ran out (5-hour limit, resets ",
        &format!("  2. Codex (its default model) · from 1 · session {CODEX_SESSION}"),
        &format!(
            "`agent -c` here continues it in Codex (its default model) session {CODEX_SESSION} (Claude Code (its default model) is out until "
        ),
    ] {
        assert!(
            text.stdout.contains(words),
            "no {words:?} in:\n{}",
            text.stdout
        );
    }
    // Going on in Codex's session added no link.
    assert_eq!(chain(&the_task(&w.sb)).len(), 2);

    // A new session in the folder closes the chain: `-c` is then the CLI's own again.
    let fresh = w.sb.run(&["-p", "something else"]);
    assert_eq!(fresh.code, Some(0), "{fresh:?}");
    let closed = the_task(&w.sb);
    assert!(closed["closed"].is_string(), "{closed}");
    assert_eq!(closed["continue"], Value::Null, "{closed}");
    let plain = w.sb.run(&["-c", "-p", "go on"]);
    assert_eq!(plain.code, Some(0), "{plain:?}");
    assert!(!plain.stderr.contains("continuing in"), "{}", plain.stderr);
    let last = codex_runs(&w.sb).pop().unwrap().argv;
    assert!(
        !last.iter().any(|word| word == CODEX_SESSION),
        "a closed chain was continued: {last:?}"
    );
}

#[test]
fn once_claudes_window_resets_agent_c_takes_the_task_back_up_with_a_brief_of_codexs_work() {
    let w = claude_runs_out_and_codex_carries_the_task(3);
    hand_off(&w.sb);
    let claude = claude_session(&w.sb);
    let reset = resets(&w.sb)[0];
    wait::until("Claude Code's window to reset", || {
        Timestamp::now().as_second() >= reset
    });

    let run = w.sb.run(&["-c", "-p", "now add the docs"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(codex_runs(&w.sb).len(), 1, "{}", run.stderr);
    let calls = w.sb.calls("claude");
    assert_eq!(calls.len(), 2, "{}", run.stderr);
    let back = &calls[1].argv;
    let at = back
        .iter()
        .position(|word| word == "--resume")
        .unwrap_or_else(|| panic!("not resumed: {back:?}"));
    assert_eq!(back[at + 1], claude, "{back:?}");
    assert!(!back.iter().any(|word| word == "--session-id"), "{back:?}");
    let prompt = back.last().unwrap();
    assert!(
        prompt.starts_with(
            "now add the docs\n\n[agent] While your usage window was out, this task went on in Codex (its default model)."
        ),
        "{prompt}"
    );
    let brief = brief_in(prompt);
    assert!(
        run.stderr.contains(&format!(
            "'s window has reset — taking this folder's task back up to it, resuming session {claude} with a brief of what Codex (its default model) did since: {}",
            brief.display()
        )),
        "{}",
        run.stderr
    );
    let text = std::fs::read_to_string(&brief).unwrap();
    assert!(
        text.contains("While Claude Code (its default model) was out of its usage window, this task went on in Codex (its default model)."),
        "{text}"
    );
    assert!(
        text.contains(&format!("- {CODEX_EDITED}: +1 −1 (1 edit)")),
        "{text}"
    );
    assert!(text.contains(CODEX_DID), "{text}");
    assert!(text.contains(CODEX_SESSION), "{text}");

    let task = the_task(&w.sb);
    assert_eq!(
        chain(&task),
        [
            ("claude".to_string(), claude.clone(), Value::Null),
            ("codex".to_string(), CODEX_SESSION.to_string(), json!(0)),
            ("claude".to_string(), claude.clone(), json!(1)),
        ],
        "{task}"
    );
    assert_eq!(
        task["links"][2]["brief"],
        *brief.to_string_lossy(),
        "{task}"
    );

    // Back where it began, the task lives in Claude Code's session: the next `-c` goes on
    // there, with no brief and nothing of Codex's.
    let again = w.sb.run(&["-c", "-p", "and the changelog"]);
    assert_eq!(again.code, Some(0), "{again:?}");
    let third = &w.sb.calls("claude")[2].argv;
    let at = third.iter().position(|word| word == "--resume").unwrap();
    assert_eq!(third[at + 1], claude, "{third:?}");
    assert_eq!(third.last().map(String::as_str), Some("and the changelog"));
    assert_eq!(codex_runs(&w.sb).len(), 1);
}

/// The brief a back-up prompt names (`… is at PATH. Read it first …`).
fn brief_in(prompt: &str) -> PathBuf {
    let at = prompt.find(" is at ").unwrap_or_else(|| panic!("{prompt}")) + 7;
    let rest = &prompt[at..];
    PathBuf::from(&rest[..rest.find(". Read it first").unwrap()])
}

#[test]
fn a_chain_never_loops_the_carrier_that_runs_out_hands_on_down_never_back_to_a_rung_still_out() {
    let w = claude_runs_out_and_codex_carries_the_task(2 * 3600);
    // Codex on a ChatGPT login (run unprobed), whose windows run out as a plan's do.
    w.sb.write_file(".codex/config.toml", "model = \"gpt-test-codex\"\n");
    w.sb.write_file(
        ".codex/auth.json",
        r#"{"auth_mode": "chatgpt", "tokens": {"id_token": "x", "access_token": "y", "refresh_token": "z", "account_id": "a"}}"#,
    );
    w.sb.write_config(&format!(
        "fastfail_seconds = 1\n[backends.codex]\nprobe = {{ kind = \"none\" }}\n{CLAUDE_THEN_CODEX}\n[[rungs]]\nbackend = \"gemini\"\n"
    ));
    codex_carrying_the_task_then_running_out(&w.sb);
    hand_off(&w.sb);
    let claude = claude_session(&w.sb);

    let run = w.sb.run(&["-c", "--on-limit", "continue", "-p", "go on"]);

    assert_eq!(run.code, Some(0), "Gemini CLI's code: {run:?}");
    assert_eq!(run.stdout, "gemini answered\n", "{run:?}");
    assert_eq!(
        w.sb.calls("claude").len(),
        1,
        "handed back to a rung still out: {}",
        run.stderr
    );
    assert_eq!(codex_runs(&w.sb).len(), 2, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "[agent] Codex (its default model) ran out of its window (5-hour limit, resets "
        ) && run.stderr.contains("— continuing in Gemini CLI"),
        "{}",
        run.stderr
    );
    let gemini = &w.sb.calls("gemini")[0].argv;
    let at = gemini
        .iter()
        .position(|word| word == "--session-id")
        .unwrap();
    let task = the_task(&w.sb);
    assert_eq!(
        chain(&task),
        [
            ("claude".to_string(), claude, Value::Null),
            ("codex".to_string(), CODEX_SESSION.to_string(), json!(0)),
            ("gemini".to_string(), gemini[at + 1].clone(), json!(1)),
        ],
        "{task}"
    );
    assert!(
        task["links"][1]["spent"]
            .as_str()
            .is_some_and(|s| s.starts_with("5-hour limit")),
        "Codex's link says its window ran out: {task}"
    );
}
