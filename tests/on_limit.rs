//! A session that outlives its window (DESIGN §21, issue 30): Claude Code works past
//! `fastfail_seconds`, edits a file, and its window runs out mid-session (its 2.1.332 limit
//! row, the limit as data). What follows is `on_limit`'s: `continue` hands the session to
//! Codex with a brief of it, `stop` (the default off a terminal) passes the code through
//! and says how to go on, `resume` waits for the reset and resumes the same session once,
//! and on a terminal agent asks. Any other late failure stays final. `--outcome` records
//! each way out for scripts.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use jiff::Timestamp;
use serde_json::{Value, json};

use crate::secrets::assert_no_secret;
use crate::support::claude_code::{
    FakeClaude, assistant_row, five_hour_limit_row_332, prompt_row, ran_at, resets,
};
use crate::support::session_id::is_v4_uuid;
use crate::support::tmux::Tmux;
use crate::support::watched::{ctrl_c, finish, start_until};
use crate::support::{Invocation, Sandbox, codex_runs, wait};

/// How long a screen is waited for: [`wait::PATIENCE`], in the seconds `Tmux` takes.
const PATIENCE_SECONDS: u64 = wait::PATIENCE.as_secs();
use crate::world::{CLAUDE_THEN_CODEX, PROXY_KEY, World, world};

/// The night job's prompt: Markdown and more than one line, so "verbatim" means something.
const TASK: &str =
    "Fix the failing tests in src/parser.rs — keep `parse()` public.\n\nThen run `cargo test`.";

/// What the session said it had done before its window ran out.
const DID: &str = "I made the lexer accept empty input; two tests still fail.";

/// How long the fake works: past `fastfail_seconds = 1`, a real run and not a fast failure.
const WORK: &str = "1.3";

/// Claude Code, then Codex, with a one-second fast-failure threshold.
fn config() -> String {
    format!("fastfail_seconds = 1\n{CLAUDE_THEN_CODEX}")
}

/// The file the session edits, relative to its working directory (the sandbox's home):
/// named nowhere in the task or the replies, so only the session's edit can bring it into
/// the brief.
const EDITED: &str = "src/lexer.rs";

/// A fake Claude Code whose session runs out of its 5-hour window, the reset `reset_in`
/// seconds after it ends: it takes the task, answers with text and an `Edit` of
/// [`EDITED`] (and really edits it), quotes the proxy key agent holds (a transcript may
/// hold any secret a tool printed), writes the limit row and exits 1.
fn session_out_of_its_window(sb: &Sandbox, reset_in: i64) {
    session_out_of_its_window_after(sb, reset_in, WORK);
}

/// [`session_out_of_its_window`], working `work` seconds first.
fn session_out_of_its_window_after(sb: &Sandbox, reset_in: i64, work: &str) {
    session_out_of_its_window_printing(sb, reset_in, work, None);
}

/// [`session_out_of_its_window_after`], printing `stdout`'s bytes as it ends.
fn session_out_of_its_window_printing(
    sb: &Sandbox,
    reset_in: i64,
    work: &str,
    stdout: Option<&Path>,
) {
    let edited = sb.write_file(EDITED, "pub fn lex() {}\n");
    let rows = [
        prompt_row(TASK),
        assistant_row(&json!([
            {"type": "text", "text": DID},
            {"type": "tool_use", "id": "t1", "name": "Edit",
             "input": {"file_path": edited.to_string_lossy(), "old_string": "{}", "new_string": "{ todo }"}},
        ])),
        assistant_row(&json!([
            {"type": "text", "text": format!("The proxy answers with AGENT_PROXY_KEY={PROXY_KEY}.")},
        ])),
        five_hour_limit_row_332(),
    ];
    let fake = FakeClaude::new(sb)
        .works(work)
        .reset_in(reset_in)
        .edits(&edited)
        .rows(&rows);
    match stdout {
        Some(file) => fake.prints(file),
        None => fake,
    }
    .install();
}

/// [`world`] on [`config`] with [`session_out_of_its_window`].
fn out_of_its_window(reset_in: i64) -> World {
    let w = world();
    w.sb.write_config(&config());
    session_out_of_its_window(&w.sb, reset_in);
    w
}

/// A fake Codex that works past the threshold too, says so, and exits 3: a code of its
/// own, which agent's must be.
fn codex_working_then_exiting_3(sb: &Sandbox) {
    sb.fake_cli("codex")
        .script("[ \"$1\" = app-server ] && exit 0\nsleep 1.3\necho codex went on\nexit 3")
        .install();
}

/// The session id agent gave Claude Code (`--session-id ID`): a UUID, as Claude Code takes.
fn session_id_given(call: &Invocation) -> String {
    let at = call
        .argv
        .iter()
        .position(|word| word == "--session-id")
        .unwrap_or_else(|| panic!("no --session-id in {:?}", call.argv));
    let id = call.argv[at + 1].clone();
    assert!(is_v4_uuid(&id), "not a UUID: {id}");
    id
}

/// The brief's path, as the hand-off notice names it.
fn brief_named_in(stderr: &str) -> PathBuf {
    let words = "with a brief of the session: ";
    let at = stderr
        .find(words)
        .unwrap_or_else(|| panic!("no hand-off notice: {stderr}"));
    let rest = &stderr[at + words.len()..];
    PathBuf::from(rest.lines().next().unwrap_or_default().trim())
}

/// The briefs agent wrote, by path.
fn briefs(sb: &Sandbox) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(sb.state_dir().join("handoffs")) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries.map(|entry| entry.unwrap().path()).collect();
    paths.sort();
    paths
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// The `--outcome` record agent wrote.
fn outcome(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("no outcome record at {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("the outcome is not JSON ({e}): {text}"))
}

/// An `--outcome` file in the sandbox's temp directory, as the words to pass.
fn outcome_file(sb: &Sandbox) -> (PathBuf, String) {
    let path = sb.tmp_dir().join("outcome.json");
    let word = path.to_string_lossy().into_owned();
    (path, word)
}

/// `agent WORDS --outcome OUTCOME -p TASK`.
fn task_words<'a>(words: &[&'a str], outcome: &'a str) -> Vec<&'a str> {
    let mut all = words.to_vec();
    all.extend(["--outcome", outcome, "-p", TASK]);
    all
}

/// Runs `agent WORDS --outcome FILE -p TASK`; returns the run and the outcome file.
fn launch(sb: &Sandbox, words: &[&str]) -> (crate::support::Run, PathBuf) {
    let (path, word) = outcome_file(sb);
    (sb.run(&task_words(words, &word)), path)
}

/// The rung the record says ran out of its window: ended `limit`, in the session agent
/// named, with the window and the reset the limit row gave (to the second).
fn assert_limit_rung(rung: &Value, session: &str, reset: i64) {
    assert_eq!(rung["ended"], "limit", "{rung}");
    assert_eq!(rung["code"], 1, "{rung}");
    assert_eq!(rung["session"], session, "{rung}");
    assert!(
        rung["window"].as_str().is_some_and(|w| !w.is_empty()),
        "{rung}"
    );
    let at: Timestamp = rung["reset"]
        .as_str()
        .unwrap_or_else(|| panic!("no reset: {rung}"))
        .parse()
        .unwrap();
    assert_eq!(at.as_second(), reset, "{rung}");
}

#[test]
fn on_limit_continue_hands_the_session_to_codex_with_a_brief_and_ends_with_codexs_code() {
    let w = out_of_its_window(2 * 3600);
    let edited = w.sb.home().join(EDITED);
    codex_working_then_exiting_3(&w.sb);

    let (run, outcome_path) = launch(&w.sb, &["--on-limit", "continue"]);

    assert_eq!(run.code, Some(3), "Codex's code is agent's: {run:?}");
    assert_eq!(run.stdout, "codex went on\n", "{run:?}");
    let claude = w.sb.calls("claude");
    assert_eq!(claude.len(), 1, "{}", run.stderr);
    let session = session_id_given(&claude[0]);
    assert!(
        !claude[0]
            .argv
            .iter()
            .any(|word| word.contains("on-limit") || word.contains("outcome")),
        "agent's own words reached Claude Code: {:?}",
        claude[0].argv
    );
    // The fake really did its part (the brief's file list is the product's).
    assert_eq!(
        std::fs::read_to_string(&edited).unwrap(),
        "pub fn lex() {}\n// fixed\n"
    );

    // Codex ran once, headless, with the task verbatim and the brief to read.
    let codex = codex_runs(&w.sb);
    assert_eq!(codex.len(), 1, "{}", run.stderr);
    assert_eq!(codex[0].argv[0], "exec", "{:?}", codex[0].argv);
    let brief = brief_named_in(&run.stderr);
    let prompt = codex[0]
        .argv
        .iter()
        .find(|word| word.contains(TASK))
        .unwrap_or_else(|| panic!("the task is not verbatim in {:?}", codex[0].argv));
    assert!(
        prompt.contains(&*brief.to_string_lossy()),
        "the prompt does not name the brief {}: {prompt}",
        brief.display()
    );
    assert!(
        prompt.contains("[agent] This task began in Claude Code"),
        "{prompt}"
    );
    assert!(
        run.stderr
            .contains("ran out of its window (5-hour limit, resets "),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("— continuing in Codex"),
        "{}",
        run.stderr
    );

    // The brief: in the state directory, private, holding the task, what was done and the
    // file it changed — and not the secret the transcript held.
    assert_eq!(
        briefs(&w.sb),
        std::slice::from_ref(&brief),
        "{}",
        run.stderr
    );
    assert_eq!(mode(&brief), 0o600, "{}", brief.display());
    assert_eq!(mode(&w.sb.state_dir().join("handoffs")), 0o700);
    let text = std::fs::read_to_string(&brief).unwrap();
    assert!(text.contains(TASK), "the task is not verbatim: {text}");
    assert!(text.contains(DID), "what it did is missing: {text}");
    assert!(text.contains(EDITED), "the edited file is missing: {text}");
    assert!(text.contains(&session), "the session id is missing: {text}");
    assert_no_secret(&text, "the brief");
    assert_no_secret(&codex[0].argv.join(" "), "Codex's words");
    assert_no_secret(&run.stderr, "stderr");
    for (path, content) in w.sb.state_files() {
        assert_no_secret(&content, &path.display().to_string());
    }

    let record = outcome(&outcome_path);
    assert_eq!(record["exit"], 3, "{record}");
    let rungs = record["rungs"].as_array().expect("rungs");
    assert_eq!(rungs.len(), 2, "{record}");
    assert_limit_rung(&rungs[0], &session, resets(&w.sb)[0]);
    // The rung passed no model: the one its session answered with, by its own record.
    assert_eq!(rungs[0]["model"], "claude-opus-5", "{record}");
    assert!(
        rungs[1]["ended"] == "error" || rungs[1]["ended"] == "done",
        "{record}"
    );
    assert_eq!(rungs[1]["code"], 3, "{record}");
    assert_ne!(rungs[0]["cli"], rungs[1]["cli"], "{record}");
    assert_eq!(record["handoff"], &*brief.to_string_lossy(), "{record}");
}

#[test]
fn a_run_that_acted_and_ran_out_before_the_fast_failure_threshold_is_handed_off_too() {
    // The default threshold (25 s) and a session that edits a file and runs out at once:
    // it acted, then its window ran out — a session cut short, not an error to leave alone.
    let w = world();
    w.sb.write_config(CLAUDE_THEN_CODEX);
    session_out_of_its_window_after(&w.sb, 2 * 3600, "0");
    w.sb.fake_cli("codex")
        .script("[ \"$1\" = app-server ] && exit 0\necho codex went on")
        .install();

    let (run, outcome_path) = launch(&w.sb, &["--on-limit", "continue"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(run.stdout, "codex went on\n", "{run:?}");
    assert!(!run.stderr.contains("not re-run"), "{}", run.stderr);
    let session = session_id_given(&w.sb.calls("claude")[0]);
    let codex = codex_runs(&w.sb);
    assert_eq!(codex.len(), 1, "{}", run.stderr);
    let brief = brief_named_in(&run.stderr);
    assert!(
        codex[0]
            .argv
            .iter()
            .any(|word| word.contains(TASK) && word.contains(&*brief.to_string_lossy())),
        "{:?}",
        codex[0].argv
    );
    let text = std::fs::read_to_string(&brief).unwrap();
    assert!(text.contains(EDITED), "the edited file is missing: {text}");
    let record = outcome(&outcome_path);
    let rungs = record["rungs"].as_array().expect("rungs");
    assert_limit_rung(&rungs[0], &session, resets(&w.sb)[0]);
    assert_eq!(record["handoff"], &*brief.to_string_lossy(), "{record}");
    // The login is parked until the reset, as every limit ending parks it.
    let status = w.sb.run(&["--status"]);
    assert!(status.stdout.contains("parked"), "{}", status.stdout);
}

/// A recorded reply of a real CLI (`tests/fixtures/self_check/NAME.stdout`), replayed with
/// its exit code, as a fake's script.
fn replay(name: &str) -> String {
    let fixture = |ext: &str| {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(format!("tests/fixtures/self_check/{name}.{ext}"))
    };
    format!(
        "[ \"$1\" = app-server ] && exit 0\ncat '{}'; exit {}",
        fixture("stdout").display(),
        std::fs::read_to_string(fixture("exit")).unwrap().trim()
    )
}

#[test]
fn a_night_jobs_output_file_holds_the_next_rungs_answer_and_not_the_limit_line_above_it() {
    let w = world();
    w.sb.write_config(&config());
    // Past the hold (`fastfail_seconds = 1`), Claude Code prints its limit line as it ends,
    // as 2.1.332 does in `-p` text mode.
    let limit_line = w.sb.tmp_dir().join("limit-line.txt");
    std::fs::write(
        &limit_line,
        "You've hit your 5-hour limit · resets 7:59pm (UTC)\n",
    )
    .unwrap();
    session_out_of_its_window_printing(&w.sb, 2 * 3600, WORK, Some(&limit_line));
    codex_working_then_exiting_3(&w.sb);

    let (run, _) = launch(&w.sb, &["--on-limit", "continue"]);

    assert_eq!(run.code, Some(3), "{run:?}");
    assert_eq!(run.stdout, "codex went on\n", "only the answer: {run:?}");
    assert!(
        run.stderr
            .contains("Claude Code (its default model) said: You've hit your 5-hour limit"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_json_launch_handed_off_prints_one_result_document_the_last_rungs_naming_the_brief() {
    let w = world();
    w.sb.write_config(&config());
    // Claude Code prints its own result document as its window runs out (2.1.332's words),
    // after working past the threshold; Codex answers "ok" in its `exec --json` events.
    let limit_doc =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/self_check/claude-limit.stdout");
    session_out_of_its_window_printing(&w.sb, 2 * 3600, WORK, Some(&limit_doc));
    w.sb.fake_cli("codex")
        .script(&replay("codex-answered"))
        .install();

    let (run, _) = launch(
        &w.sb,
        &["--on-limit", "continue", "--output-format", "json"],
    );

    assert_eq!(run.code, Some(0), "{run:?}");
    let doc: Value = serde_json::from_str(run.stdout.trim())
        .unwrap_or_else(|e| panic!("stdout is not one JSON document ({e}): {}", run.stdout));
    assert_eq!(doc["result"], "ok", "Codex's answer: {doc}");
    assert_eq!(doc["is_error"], false, "{doc}");
    assert_eq!(doc["agent_cli"], "codex", "{doc}");
    let brief = brief_named_in(&run.stderr);
    assert_eq!(
        doc["agent_handoff"]["brief"],
        &*brief.to_string_lossy(),
        "{doc}"
    );
    assert_eq!(
        doc["agent_handoff"]["from"],
        json!(["Claude Code (its default model)"]),
        "{doc}"
    );
    // Claude Code's refused document went to stderr, in its own words.
    assert!(
        run.stderr
            .contains("Claude Code (its default model) said: "),
        "{}",
        run.stderr
    );
}

#[test]
fn off_a_terminal_a_session_out_of_its_window_stops_with_its_code_and_says_how_to_go_on() {
    let w = out_of_its_window(2 * 3600);

    let (run, outcome_path) = launch(&w.sb, &[]);

    assert_eq!(
        run.code,
        Some(1),
        "Claude Code's code passes through: {run:?}"
    );
    assert_only_claude_ran(&w.sb, &run.stderr);
    assert!(
        run.stderr
            .contains("ran out of its window mid-session (5-hour limit, resets "),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("--on-limit=continue") && run.stderr.contains("--on-limit=resume"),
        "{}",
        run.stderr
    );

    let session = session_id_given(&w.sb.calls("claude")[0]);
    // The way back to that session, in Claude Code's own words: agent's command run again
    // would start a new one.
    assert!(
        run.stderr.contains(&format!(
            "the session itself, after the reset: `claude --resume {session}`"
        )),
        "{}",
        run.stderr
    );
    let rung = the_one_rung(&outcome_path, 1);
    assert_limit_rung(&rung, &session, resets(&w.sb)[0]);
}

#[test]
fn a_late_failure_naming_no_limit_stays_final_even_with_on_limit_continue() {
    let w = world();
    w.sb.write_config(&config());
    FakeClaude::new(&w.sb)
        .works(WORK)
        .rows(&[
            prompt_row(TASK),
            assistant_row(&json!([{"type": "text", "text": "The tests still fail."}])),
        ])
        .install();

    let (run, outcome_path) = launch(&w.sb, &["--on-limit=continue"]);

    assert_eq!(run.code, Some(1), "{run:?}");
    assert_only_claude_ran(&w.sb, &run.stderr);
    assert!(
        !run.stderr.contains("ran out of its window"),
        "{}",
        run.stderr
    );
    let rung = the_one_rung(&outcome_path, 1);
    assert_eq!(rung["ended"], "error", "{rung}");
    assert_eq!(rung["code"], 1, "{rung}");
}

/// Only Claude Code's first run ran (no Codex, no resumed run) and no brief was written;
/// `context` (what agent said) is shown if not.
fn assert_only_claude_ran(sb: &Sandbox, context: &str) {
    assert_eq!(sb.calls("claude").len(), 1, "{context}");
    assert!(codex_runs(sb).is_empty(), "{context}");
    assert!(briefs(sb).is_empty(), "a brief with no hand-off: {context}");
}

/// The one rung the `--outcome` record at `path` names, which says agent ended with
/// `exit` and no hand-off.
fn the_one_rung(path: &Path, exit: i32) -> Value {
    let record = outcome(path);
    assert_eq!(record["exit"], exit, "{record}");
    assert_eq!(record["handoff"], Value::Null, "{record}");
    let rungs = record["rungs"].as_array().expect("rungs");
    assert_eq!(rungs.len(), 1, "{record}");
    rungs[0].clone()
}

/// The words of a resumed run: `--resume ID` with the session agent named the first time,
/// and no new session.
fn assert_resumes(call: &Invocation, session: &str) {
    let at = call
        .argv
        .iter()
        .position(|word| word == "--resume")
        .unwrap_or_else(|| panic!("not resumed: {:?}", call.argv));
    assert_eq!(call.argv.get(at + 1).map(String::as_str), Some(session));
    assert!(
        !call.argv.iter().any(|word| word == "--session-id"),
        "{:?}",
        call.argv
    );
}

#[test]
fn on_limit_resume_waits_for_the_reset_and_resumes_the_same_session_once() {
    let w = out_of_its_window(3);

    let (run, outcome_path) = launch(&w.sb, &["--on-limit", "resume"]);

    assert_eq!(run.code, Some(0), "the resumed run's code: {run:?}");
    let claude = w.sb.calls("claude");
    assert_eq!(claude.len(), 2, "{}", run.stderr);
    let session = session_id_given(&claude[0]);
    assert_resumes(&claude[1], &session);
    assert!(codex_runs(&w.sb).is_empty(), "{}", run.stderr);
    let reset = resets(&w.sb)[0];
    let resumed_at = ran_at(&w.sb)[1];
    assert!(
        resumed_at >= reset * 1000,
        "resumed {} ms before the reset",
        reset * 1000 - resumed_at
    );
    assert!(
        run.stderr.contains(&format!(
            "— waiting for the reset to resume session {session}"
        )),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("[agent] resuming ")
            && run.stderr.contains(&format!(" session {session}")),
        "{}",
        run.stderr
    );

    let record = outcome(&outcome_path);
    assert_eq!(record["exit"], 0, "{record}");
    let rungs = record["rungs"].as_array().expect("rungs");
    assert_eq!(rungs.len(), 2, "{record}");
    assert_limit_rung(&rungs[0], &session, reset);
    assert_eq!(rungs[1]["ended"], "done", "{record}");
    assert_eq!(rungs[1]["session"], &*session, "{record}");
    assert!(
        record["waited_seconds"].as_f64().is_some_and(|s| s > 0.0),
        "{record}"
    );
    assert_eq!(record["handoff"], Value::Null, "{record}");
}

#[test]
fn ctrl_c_while_waiting_to_resume_exits_130_and_runs_nothing_more() {
    let w = out_of_its_window(120);
    let (outcome_path, outcome_word) = outcome_file(&w.sb);
    // The wait (and its Ctrl-C) begins with `--wait`'s own line, after the one that says
    // why it waits.
    let (child, seen, rx) = start_until(
        &w.sb,
        &task_words(&["--on-limit", "resume"], &outcome_word),
        |line| line.contains("[agent] waiting for "),
    );
    assert!(
        seen.iter()
            .any(|line| line.contains("— waiting for the reset to resume session ")),
        "{seen:?}"
    );

    ctrl_c(&child);
    let (code, stderr) = finish(child, &rx);

    assert_eq!(code, Some(130), "{stderr}");
    assert_eq!(
        w.sb.calls("claude").len(),
        1,
        "resumed after Ctrl-C: {stderr}"
    );
    assert!(codex_runs(&w.sb).is_empty(), "{stderr}");
    assert_eq!(outcome(&outcome_path)["exit"], 130);
    let session = session_id_given(&w.sb.calls("claude")[0]);
    assert!(stderr.contains("stopped waiting — nothing ran"), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "the session itself, after the reset: `claude --resume {session}`"
        )),
        "{stderr}"
    );
}

#[test]
fn a_resume_whose_reset_is_beyond_the_wait_announces_no_wait_and_names_the_way_back() {
    let w = out_of_its_window(2 * 3600);

    let (run, _) = launch(&w.sb, &["--on-limit", "resume", "--wait=30s"]);

    assert_eq!(run.code, Some(75), "{run:?}");
    assert_eq!(w.sb.calls("claude").len(), 1, "{}", run.stderr);
    assert!(
        !run.stderr.contains("waiting for the reset"),
        "a wait announced that never began: {}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("beyond the 30 s a wait takes — not waiting"),
        "{}",
        run.stderr
    );
    let session = session_id_given(&w.sb.calls("claude")[0]);
    assert!(
        run.stderr.contains(&format!(
            "was not resumed; the session itself, after the reset: `claude --resume {session}`"
        )),
        "{}",
        run.stderr
    );
}

#[test]
fn with_every_rung_parked_by_the_limit_the_next_launch_exits_75_and_records_it() {
    let w = out_of_its_window(2 * 3600);
    assert_eq!(w.sb.run(&["-p", TASK]).code, Some(1));
    // Only the rung whose window ran out is left.
    w.sb.write_config(
        "fastfail_seconds = 1\n[[rungs]]\nbackend = \"claude\"\nprobe_model = \"opus\"\n",
    );
    let (outcome_path, outcome_word) = outcome_file(&w.sb);

    let run = w.sb.run(&["--outcome", &outcome_word, "-p", "hi"]);

    assert_eq!(run.code, Some(75), "{run:?}");
    assert_eq!(w.sb.calls("claude").len(), 1, "{}", run.stderr);
    let record = outcome(&outcome_path);
    assert_eq!(record["exit"], 75, "{record}");
    assert_eq!(record["rungs"], json!([]), "{record}");
    assert_eq!(record["handoff"], Value::Null, "{record}");
}

/// `agent --outcome FILE -p TASK` on a terminal (a tmux pane of the test's own, no
/// `on_limit` said anywhere), stopped at its question after Claude Code's window ran out.
struct Asked {
    w: World,
    pane: Tmux,
    /// Where the `--outcome` record goes.
    outcome: PathBuf,
    /// agent's exit code, written when it ends (the pane then stays, so the screen can
    /// still be read).
    exit: PathBuf,
}

impl Asked {
    /// The world of the headless cases, the limit's reset `reset_in` seconds after the
    /// session ends; `None` (and a message) where tmux is not installed.
    fn start(reset_in: i64) -> Option<Asked> {
        if std::process::Command::new("tmux")
            .arg("-V")
            .output()
            .is_err()
        {
            eprintln!("skipped: tmux is not installed (apt-get install tmux)");
            return None;
        }
        let w = out_of_its_window(reset_in);
        codex_working_then_exiting_3(&w.sb);
        let (outcome, outcome_word) = outcome_file(&w.sb);
        let exit = w.sb.tmp_dir().join("exit-code");
        // The shell outlives a Ctrl-C to the pane to write the code (a trap with a command
        // is reset in the child, so agent gets INT as from any shell).
        let script = format!(
            "trap : INT; \"$@\"; echo $? > '{}'; sleep 600",
            exit.display()
        );
        let pane = Tmux::start(
            &w.sb,
            w.sb.home(),
            &["/bin/sh", "-c", &script, "sh", env!("CARGO_BIN_EXE_agent")]
                .into_iter()
                .chain(task_words(&[], &outcome_word))
                .collect::<Vec<_>>(),
        );
        let asked = Asked {
            w,
            pane,
            outcome,
            exit,
        };
        let screen = asked.pane.wait_for_joined(
            |screen| screen.contains("or stop [s, Enter]?"),
            PATIENCE_SECONDS,
        );
        assert!(
            screen.contains("ran out of its window (5-hour limit, resets ")
                && screen.contains("Continue in Codex")
                && screen.contains(
                    "with a brief [c], wait for the reset and resume [r], or stop [s, Enter]?"
                ),
            "{screen}"
        );
        // Until it is answered, nothing else runs and agent does not end.
        std::thread::sleep(Duration::from_millis(1500));
        assert_eq!(asked.w.sb.calls("claude").len(), 1, "{}", asked.screen());
        assert!(codex_runs(&asked.w.sb).is_empty(), "{}", asked.screen());
        assert!(!asked.exit.exists(), "{}", asked.screen());
        Some(asked)
    }

    fn screen(&self) -> String {
        self.pane.joined_screen()
    }

    /// agent's exit code once it has ended.
    fn exit_code(&self) -> i32 {
        let ended = wait::eventually(|| self.exit.exists());
        assert!(ended, "agent never ended:\n{}", self.screen());
        wait::for_some("agent's exit code", || {
            std::fs::read_to_string(&self.exit)
                .ok()?
                .trim()
                .parse()
                .ok()
        })
    }
}

/// `agent --outcome FILE` at a terminal, no `-p`: an interactive Claude Code session that
/// edits a file, runs out of its window and says so, and waits for the user, who quits it
/// with `/exit` (0). With `answered_after`, the session waited for the reset and answered
/// after it before the user quit.
fn interactive_session(answered_after: bool) -> Option<Asked> {
    if std::process::Command::new("tmux")
        .arg("-V")
        .output()
        .is_err()
    {
        eprintln!("skipped: tmux is not installed (apt-get install tmux)");
        return None;
    }
    let w = world();
    w.sb.write_config(&config());
    let edited = w.sb.write_file(EDITED, "pub fn lex() {}\n");
    let mut rows = vec![
        prompt_row(TASK),
        assistant_row(&json!([
            {"type": "text", "text": DID},
            {"type": "tool_use", "id": "t1", "name": "Edit",
             "input": {"file_path": edited.to_string_lossy(), "old_string": "{}", "new_string": "{ todo }"}},
        ])),
        five_hour_limit_row_332(),
    ];
    if answered_after {
        rows.push(assistant_row(
            &json!([{"type": "text", "text": "Continuing: the tests pass now."}]),
        ));
    }
    FakeClaude::new(&w.sb)
        .reset_in(2 * 3600)
        .edits(&edited)
        .rows(&rows)
        .interactive()
        .install();
    codex_working_then_exiting_3(&w.sb);
    let (outcome, outcome_word) = outcome_file(&w.sb);
    let exit = w.sb.tmp_dir().join("exit-code");
    let script = format!(
        "trap : INT; \"$@\"; echo $? > '{}'; sleep 600",
        exit.display()
    );
    let pane = Tmux::start(
        &w.sb,
        w.sb.home(),
        &[
            "/bin/sh",
            "-c",
            &script,
            "sh",
            env!("CARGO_BIN_EXE_agent"),
            "--outcome",
            &outcome_word,
        ],
    );
    let asked = Asked {
        w,
        pane,
        outcome,
        exit,
    };
    asked.pane.wait_for_joined(
        |screen| screen.contains("You've hit your 5-hour limit"),
        PATIENCE_SECONDS,
    );
    asked.pane.send_line("/exit");
    Some(asked)
}

/// The login is parked until the reset: a launch now passes Claude Code over, saying why.
fn assert_parked(sb: &Sandbox) {
    let dry = sb.run(&["--dry-run", "-p", "hi"]);
    assert!(dry.stdout.contains("5-hour limit, resets"), "{dry:?}");
}

#[test]
fn an_interactive_session_that_ran_out_asks_after_the_user_quits_and_c_continues_in_codex() {
    let Some(asked) = interactive_session(false) else {
        return;
    };
    let screen = asked.pane.wait_for_joined(
        |screen| screen.contains("or stop [s, Enter]?"),
        PATIENCE_SECONDS,
    );
    assert!(screen.contains("Continue in Codex"), "{screen}");

    asked.pane.send_line("c");

    assert_eq!(asked.exit_code(), 3, "Codex's code: {}", asked.screen());
    let codex = codex_runs(&asked.w.sb);
    assert_eq!(codex.len(), 1, "{}", asked.screen());
    let brief = briefs(&asked.w.sb);
    assert_eq!(brief.len(), 1, "{}", asked.screen());
    let text = std::fs::read_to_string(&brief[0]).unwrap();
    assert!(text.contains(TASK) && text.contains(EDITED), "{text}");
    assert!(
        codex[0]
            .argv
            .iter()
            .any(|word| word.contains(&*brief[0].to_string_lossy())),
        "{:?}",
        codex[0].argv
    );
    let record = outcome(&asked.outcome);
    assert_eq!(record["rungs"][0]["ended"], "limit", "{record}");
    assert_eq!(record["rungs"][0]["code"], 0, "{record}");
    assert_parked(&asked.w.sb);
}

#[test]
fn an_interactive_session_that_ran_out_and_s_stops_naming_the_way_back() {
    let Some(asked) = interactive_session(false) else {
        return;
    };
    asked.pane.wait_for_joined(
        |screen| screen.contains("or stop [s, Enter]?"),
        PATIENCE_SECONDS,
    );

    asked.pane.send_line("s");

    assert_eq!(
        asked.exit_code(),
        0,
        "Claude Code's code: {}",
        asked.screen()
    );
    assert!(codex_runs(&asked.w.sb).is_empty(), "{}", asked.screen());
    let session = session_id_given(&asked.w.sb.calls("claude")[0]);
    let screen = asked.screen();
    assert!(
        screen.contains(&format!("`claude --resume {session}`")),
        "{screen}"
    );
    // The question said what ran out; the stop does not say it again.
    assert_eq!(
        screen.matches("ran out of its window").count(),
        1,
        "{screen}"
    );
    assert_eq!(the_one_rung(&asked.outcome, 0)["ended"], "limit");
    assert_parked(&asked.w.sb);
}

#[test]
fn an_interactive_session_that_waited_for_the_reset_and_answered_is_done_and_nothing_is_asked() {
    let Some(asked) = interactive_session(true) else {
        return;
    };

    assert_eq!(asked.exit_code(), 0, "{}", asked.screen());
    let screen = asked.screen();
    assert!(!screen.contains("or stop [s"), "{screen}");
    assert!(codex_runs(&asked.w.sb).is_empty(), "{screen}");
    assert_eq!(the_one_rung(&asked.outcome, 0)["ended"], "done");
}

#[test]
fn on_a_terminal_agent_asks_and_c_continues_in_codex() {
    let Some(asked) = Asked::start(2 * 3600) else {
        return;
    };

    asked.pane.send_line("c");

    assert_eq!(asked.exit_code(), 3, "{}", asked.screen());
    let codex = codex_runs(&asked.w.sb);
    assert_eq!(codex.len(), 1, "{}", asked.screen());
    assert_eq!(codex[0].argv[0], "exec");
    let brief = briefs(&asked.w.sb);
    assert_eq!(brief.len(), 1, "{}", asked.screen());
    let brief = brief[0].to_string_lossy();
    assert!(
        codex[0]
            .argv
            .iter()
            .any(|word| word.contains(TASK) && word.contains(&*brief)),
        "{:?}",
        codex[0].argv
    );
    assert_eq!(outcome(&asked.outcome)["handoff"], &*brief);
}

#[test]
fn on_a_terminal_agent_asks_and_r_resumes_the_session_after_the_reset() {
    let Some(asked) = Asked::start(4) else {
        return;
    };

    asked.pane.send_line("r");

    assert_eq!(asked.exit_code(), 0, "{}", asked.screen());
    let sb = &asked.w.sb;
    let claude = sb.calls("claude");
    assert_eq!(claude.len(), 2, "{}", asked.screen());
    assert_resumes(&claude[1], &session_id_given(&claude[0]));
    assert!(ran_at(sb)[1] >= resets(sb)[0] * 1000);
    assert!(codex_runs(sb).is_empty());
}

#[test]
fn on_a_terminal_agent_asks_again_on_an_unknown_answer_and_s_stops_running_nothing() {
    let Some(asked) = Asked::start(2 * 3600) else {
        return;
    };

    asked.pane.send_line("maybe");
    asked.pane.wait_for_joined(
        |screen| screen.matches("or stop [s, Enter]?").count() == 2,
        PATIENCE_SECONDS,
    );
    assert!(codex_runs(&asked.w.sb).is_empty(), "{}", asked.screen());
    asked.pane.send_line("s");

    assert_eq!(asked.exit_code(), 1, "{}", asked.screen());
    assert_only_claude_ran(&asked.w.sb, &asked.screen());
    assert_eq!(the_one_rung(&asked.outcome, 1)["ended"], "limit");
}

#[test]
fn on_a_terminal_ctrl_c_at_the_question_runs_nothing() {
    let Some(asked) = Asked::start(2 * 3600) else {
        return;
    };

    asked.pane.tmux(&["send-keys", "-t", "0", "C-c"]);

    // Ctrl-C is "stop": Claude Code's code passes through, or agent ends by the signal
    // (130) — either way nothing more runs.
    let code = asked.exit_code();
    assert!(code == 1 || code == 130, "{code}: {}", asked.screen());
    assert_only_claude_ran(&asked.w.sb, &asked.screen());
}

/// A `handoffs` link planted in the state directory is refused, never followed (issue 39):
/// the brief of the session — its task, its replies — never lands where the link points,
/// and the hand-off still goes on, without a brief, saying why.
#[test]
fn a_handoffs_link_in_the_state_directory_is_refused_and_nothing_lands_where_it_points() {
    let w = out_of_its_window(2 * 3600);
    codex_working_then_exiting_3(&w.sb);
    let elsewhere = w.sb.root().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    std::fs::create_dir_all(w.sb.state_dir()).unwrap();
    std::os::unix::fs::symlink(&elsewhere, w.sb.state_dir().join("handoffs")).unwrap();

    let (run, _outcome) = launch(&w.sb, &["--on-limit", "continue"]);

    assert_eq!(
        std::fs::read_dir(&elsewhere).unwrap().count(),
        0,
        "a brief landed through the link: {run:?}"
    );
    assert!(
        run.stderr.contains("the hand-off brief was not written")
            && run.stderr.contains("is a symbolic link"),
        "{run:?}"
    );
    assert_eq!(run.code, Some(3), "the hand-off still went on: {run:?}");
}

/// A prompt after `--` that is the name of a Claude Code sub-command is a prompt (issue 39):
/// `agent -p -- update` names its session like any other, so the session that runs out is
/// found and handed on.
#[test]
fn a_prompt_after_the_marker_that_names_a_sub_command_still_gets_a_session_of_agents() {
    let w = out_of_its_window(2 * 3600);
    codex_working_then_exiting_3(&w.sb);

    let run = w.sb.run(&["--on-limit", "continue", "-p", "--", "update"]);

    let claude = w.sb.calls("claude");
    assert_eq!(claude.len(), 1, "{run:?}");
    session_id_given(&claude[0]);
    assert_eq!(run.code, Some(3), "handed on to Codex: {run:?}");
    assert_eq!(codex_runs(&w.sb).len(), 1, "{run:?}");
}

/// A trap script outside the sandbox's repository: leaves `marker` when anything runs it;
/// as a filter it passes its input through, as ssh it fails at once.
fn trap_script(sb: &Sandbox, marker: &Path) -> PathBuf {
    let script = sb.write_file(
        "trap.sh",
        &format!(
            "#!/bin/sh\ntouch '{}'\n[ \"$#\" -eq 0 ] || exit 1\ncat\n",
            marker.display()
        ),
    );
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

fn git_in(dir: &Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

/// A session out of its window in a hostile repository, armed by `arm` (given the repository
/// and a trap script), handed on with `--on-limit continue`: the brief must run nothing the
/// repository configures (issue 39, item 2) and still list the file the session left changed;
/// then `proof`, a plain `git` run there, must spring the trap, or the test proves nothing.
fn a_hostile_repositorys_brief_runs_nothing(arm: impl FnOnce(&Path, &str), proof: &[&str]) {
    let w = world();
    w.sb.write_config(&config());
    // The session works in the sandbox's home, made a repository of its own.
    let repo = w.sb.home().to_path_buf();
    let _ = std::fs::remove_dir(repo.join(".git"));
    let marker = w.sb.root().join("trap-ran");
    let script = trap_script(&w.sb, &marker);
    git_in(&repo, &["init", "-q"]);
    std::fs::write(repo.join(".gitattributes"), "*.txt filter=a=b\n").unwrap();
    std::fs::write(repo.join("notes.txt"), "one\n").unwrap();
    std::fs::write(repo.join("other.txt"), "other\n").unwrap();
    git_in(&repo, &["add", ".gitattributes", "notes.txt", "other.txt"]);
    git_in(&repo, &["commit", "-qm", "one"]);
    arm(&repo, &script.display().to_string());
    // Same size, a later time: only a read of its content can tell it changed.
    std::fs::write(repo.join("notes.txt"), "two\n").unwrap();
    std::fs::File::options()
        .write(true)
        .open(repo.join("notes.txt"))
        .unwrap()
        .set_modified(std::time::SystemTime::now() + Duration::from_secs(5))
        .unwrap();
    session_out_of_its_window(&w.sb, 2 * 3600);
    codex_working_then_exiting_3(&w.sb);

    let (run, _outcome) = launch(&w.sb, &["--on-limit", "continue"]);

    assert_eq!(run.code, Some(3), "{run:?}");
    assert!(
        !marker.exists(),
        "the repository's configuration ran: {run:?}"
    );
    let brief = std::fs::read_to_string(brief_named_in(&run.stderr)).unwrap();
    assert!(brief.contains(" M notes.txt"), "{brief}");
    let _ = std::process::Command::new("git")
        .current_dir(&repo)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_TERMINAL_PROMPT", "0")
        .args(proof)
        .stdin(std::process::Stdio::null())
        .output();
    assert!(
        marker.exists(),
        "the trap never ran: the test proves nothing"
    );
}

/// A clean filter whose name holds `=`: no `-c filter.NAME.clean=` can switch it off.
#[test]
fn the_brief_never_runs_a_filter_whose_name_holds_an_equals_sign() {
    a_hostile_repositorys_brief_runs_nothing(
        |repo, script| git_in(repo, &["config", "filter.a=b.clean", script]),
        &["status", "--porcelain"],
    );
}

/// The evil filter behind an included configuration of 80,000 lines: a listing of the
/// filters cut at 1 MiB never reached it.
#[test]
fn the_brief_never_runs_a_filter_behind_a_huge_included_configuration() {
    a_hostile_repositorys_brief_runs_nothing(
        |repo, script| {
            let mut text = String::from("[filter \"noise\"]\n");
            for _ in 0..80_000 {
                text.push_str("\tclean = x\n");
            }
            text.push_str("[filter \"a=b\"]\n\tclean = ");
            text.push_str(script);
            text.push('\n');
            std::fs::write(repo.join(".git/big.inc"), text).unwrap();
            git_in(repo, &["config", "include.path", "big.inc"]);
        },
        &["status", "--porcelain"],
    );
}

/// A partial clone with a missing blob: anything that reads it fetches it through the
/// repository's own `core.sshCommand`.
#[test]
fn the_brief_never_runs_a_partial_clones_ssh_command() {
    a_hostile_repositorys_brief_runs_nothing(
        |repo, script| {
            for (key, value) in [
                ("core.repositoryformatversion", "1"),
                ("extensions.partialClone", "origin"),
                ("remote.origin.url", "ssh://example.invalid/x"),
                ("remote.origin.promisor", "true"),
                ("core.sshCommand", script),
            ] {
                git_in(repo, &["config", key, value]);
            }
            let id = std::process::Command::new("git")
                .current_dir(repo)
                .args(["rev-parse", "HEAD:other.txt"])
                .output()
                .unwrap();
            let id = String::from_utf8(id.stdout).unwrap();
            let id = id.trim();
            std::fs::remove_file(repo.join(format!(".git/objects/{}/{}", &id[..2], &id[2..])))
                .unwrap();
            // Moved and changed, staged: a status's rename detection must read the missing
            // blob to compare them.
            std::fs::remove_file(repo.join("other.txt")).unwrap();
            std::fs::write(repo.join("moved.txt"), "other\nand more\n").unwrap();
            git_in(repo, &["rm", "-q", "--cached", "other.txt"]);
            git_in(repo, &["add", "moved.txt"]);
        },
        &["status", "--porcelain"],
    );
}

/// A Telegram bot token written literally in the configuration.
const LITERAL_BOT_TOKEN: &str = "7012345678:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw";

/// Secrets agent never saw, in their well-known shapes, and what the brief says instead.
const SHAPED: [(&str, &str); 5] = [
    (
        "sk-ant-api03-Zx81kQ_w2Lr0pTn5Yv7cBd9eFg3HiJkLmNoPqRsTuVwX",
        "[redacted: Anthropic key]",
    ),
    (
        "sk-proj-Q1w2E3r4T5y6U7i8O9p0AaSsDdFfGgHhJjKkLl",
        "[redacted: OpenAI key]",
    ),
    (
        "ghp_R8mT2vX9qL4nB7cK1zW5yH3jF6dS0aP2eG4u",
        "[redacted: GitHub token]",
    ),
    ("AKIAJ7QW3ERT5YUI9OPA", "[redacted: AWS access key id]"),
    (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7x\nq9Lk2==\n-----END RSA PRIVATE KEY-----",
        "[redacted: PEM private key]",
    ),
];

/// Secrets a session quoted never reach the next vendor's brief (issue 39, items 4 and 8):
/// a bot token written literally in agent's configuration, and keys agent never saw, by
/// their shape — each replaced by a placeholder that says what it was. The doctor warns of
/// the literal token without showing it.
#[test]
fn a_literal_config_secret_and_key_shaped_text_never_reach_the_brief() {
    let w = world();
    w.sb.write_config(&format!(
        "{}\n[alerts.telegram]\nbot_token = \"{LITERAL_BOT_TOKEN}\"\nchat_id = \"42\"\n",
        config()
    ));
    let quoted: Vec<&str> = std::iter::once(LITERAL_BOT_TOKEN)
        .chain(SHAPED.iter().map(|(secret, _)| *secret))
        .collect();
    let rows = [
        prompt_row(TASK),
        assistant_row(&json!([
            {"type": "text", "text": format!("The config and the keys I found:\n{}", quoted.join("\n"))},
        ])),
        five_hour_limit_row_332(),
    ];
    FakeClaude::new(&w.sb)
        .works(WORK)
        .reset_in(2 * 3600)
        .rows(&rows)
        .install();
    codex_working_then_exiting_3(&w.sb);

    let (run, _outcome) = launch(&w.sb, &["--on-limit", "continue"]);

    assert_eq!(run.code, Some(3), "{run:?}");
    let brief = std::fs::read_to_string(brief_named_in(&run.stderr)).unwrap();
    for secret in &quoted {
        let head: String = secret.chars().take(24).collect();
        assert!(!brief.contains(&head), "{head} reached the brief:\n{brief}");
    }
    for (_, placeholder) in SHAPED {
        assert!(
            brief.contains(placeholder),
            "{placeholder} missing:\n{brief}"
        );
    }
    assert!(brief.contains(TASK), "{brief}");

    let doctor = w.sb.run(&["--doctor"]);
    assert!(
        doctor
            .stdout
            .contains("alerts.telegram.bot_token holds a secret written in the configuration file"),
        "{doctor:?}"
    );
    assert!(!doctor.stdout.contains("AAHdqTcv"), "{doctor:?}");
}

/// A key written in the `env` of a backend no rung runs (issue 39, item 4): registered as the
/// file is read, so the session that quoted it hands none of it on — though the launch never
/// built that backend's environment. `--doctor` names the file and the key in a warning,
/// never a problem, and never the value.
#[test]
fn a_literal_key_of_a_backend_that_never_ran_never_reaches_the_brief() {
    const ROUTER_KEY: &str = "rk-live-7Qm2Vx9Lp4Zt8Wn3Kc6Hj1Rb5Ys0Fd";
    let w = world();
    w.sb.write_config(&format!(
        "{}\n[backends.router]\ncommand = \"codex\"\nenv = {{ ROUTER_API_KEY = \"{ROUTER_KEY}\" }}\n",
        config()
    ));
    let rows = [
        prompt_row(TASK),
        assistant_row(&json!([
            {"type": "text", "text": format!("The router's key is {ROUTER_KEY}.")},
        ])),
        five_hour_limit_row_332(),
    ];
    FakeClaude::new(&w.sb)
        .works(WORK)
        .reset_in(2 * 3600)
        .rows(&rows)
        .install();
    codex_working_then_exiting_3(&w.sb);

    let (run, _outcome) = launch(&w.sb, &["--on-limit", "continue"]);

    assert_eq!(run.code, Some(3), "{run:?}");
    let brief = std::fs::read_to_string(brief_named_in(&run.stderr)).unwrap();
    assert!(
        !brief.contains("7Qm2Vx9Lp4Zt"),
        "the key reached the brief:\n{brief}"
    );
    assert!(brief.contains("The router's key is [redacted]."), "{brief}");

    let doctor = w.sb.run(&["--doctor", "--json"]);
    assert!(!doctor.stdout.contains("7Qm2Vx9Lp4Zt"), "{doctor:?}");
    let report: Value = serde_json::from_str(&doctor.stdout).unwrap();
    let row = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|row| {
            row["detail"]
                .as_str()
                .is_some_and(|d| d.contains("backends.router.env.ROUTER_API_KEY"))
        })
        .unwrap_or_else(|| panic!("no row names the key: {doctor:?}"));
    let detail = row["detail"].as_str().unwrap();
    assert!(
        detail.contains(&*w.sb.config_path().to_string_lossy()),
        "{row}"
    );
    assert_eq!(
        (row["ok"].as_bool(), row["warning"].as_bool()),
        (Some(true), Some(true)),
        "{row}"
    );
}

/// Every token of every CLI's login store agent can read is known before a brief is written
/// (issue 39, item 8), whether or not the launch had read that login: a session that quoted
/// Codex's refresh token and Gemini CLI's, in no shape agent knows, hands neither on.
#[test]
fn the_tokens_of_every_login_store_never_reach_the_brief() {
    const CODEX_REFRESH: &str = "cdxRefresh.Zr7pQ2mX9vL4kT8wN3cJ6hB1yF5dS0aG";
    const GEMINI_REFRESH: &str = "gemRefresh.Hq3Lw8Nx2Vb7Kp5Tz9Mc4Rj6Yd1Fs0Ga";
    let w = world();
    w.sb.write_config(&config());
    w.sb.write_file(
        ".codex/auth.json",
        &json!({"auth_mode": "chatgpt", "OPENAI_API_KEY": null, "tokens": {
            "id_token": "x", "access_token": "y", "refresh_token": CODEX_REFRESH,
            "account_id": "acct-1"}})
        .to_string(),
    );
    w.sb.write_file(
        ".gemini/oauth_creds.json",
        &json!({"access_token": "a", "refresh_token": GEMINI_REFRESH, "token_type": "Bearer"})
            .to_string(),
    );
    let rows = [
        prompt_row(TASK),
        assistant_row(&json!([
            {"type": "text", "text": format!("Found {CODEX_REFRESH} and {GEMINI_REFRESH}.")},
        ])),
        five_hour_limit_row_332(),
    ];
    FakeClaude::new(&w.sb)
        .works(WORK)
        .reset_in(2 * 3600)
        .rows(&rows)
        .install();
    codex_working_then_exiting_3(&w.sb);

    let (run, _outcome) = launch(&w.sb, &["--on-limit", "continue"]);

    assert_eq!(run.code, Some(3), "{run:?}");
    let brief = std::fs::read_to_string(brief_named_in(&run.stderr)).unwrap();
    for token in [CODEX_REFRESH, GEMINI_REFRESH] {
        assert!(
            !brief.contains(&token[11..23]),
            "{token} reached the brief:\n{brief}"
        );
    }
    assert!(
        brief.contains("Found [redacted] and [redacted]."),
        "{brief}"
    );
}

#[test]
fn a_handoff_names_the_spent_login_once_and_not_its_other_models_above_it() {
    // Two rungs on the one Claude login (Opus, then Sonnet), then Codex: the window that ran
    // out is the login's, so Sonnet is passed over for it — said once, by the hand-off line,
    // not as "(claude-sonnet-5) unavailable" printed above the line saying Opus ran out.
    let w = world();
    w.sb.write_config(&format!(
        "fastfail_seconds = 1\n{}",
        r#"
[[rungs]]
backend = "claude"
probe_model = "opus"

[[rungs]]
backend = "claude"
probe_model = "sonnet"

[[rungs]]
backend = "codex"
"#
    ));
    session_out_of_its_window(&w.sb, 2 * 3600);
    codex_working_then_exiting_3(&w.sb);

    let (run, _) = launch(&w.sb, &["--on-limit", "continue"]);

    assert_eq!(run.code, Some(3), "Codex's code is agent's: {run:?}");
    assert_eq!(w.sb.calls("claude").len(), 1, "{}", run.stderr);
    assert_eq!(codex_runs(&w.sb).len(), 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("— continuing in Codex"),
        "{}",
        run.stderr
    );
    assert!(
        !run.stderr.contains("unavailable"),
        "a rung on the spent login was announced apart from the hand-off:\n{}",
        run.stderr
    );
}

/// A fake Codex that refuses the folder it is started in, as 0.171 does an untrusted one.
fn codex_refusing_the_folder(sb: &Sandbox) {
    sb.fake_cli("codex")
        .script("[ \"$1\" = app-server ] && exit 0\necho 'Not inside a trusted directory and --skip-git-repo-check was not specified.' >&2\nexit 1")
        .install();
}

/// Issue 43, item 6: a hand-off the next CLI refused was listed as a plain hand-off. Codex
/// given the session refuses the folder: `--status`, `--status --json` and the dashboard say
/// the hand-off was refused, and why.
#[test]
fn a_hand_off_the_next_cli_refused_is_shown_as_refused() {
    let w = out_of_its_window(2 * 3600);
    codex_refusing_the_folder(&w.sb);

    let (run, _) = launch(&w.sb, &["--on-limit", "continue"]);
    assert!(
        run.stderr.contains("— continuing in Codex"),
        "{}",
        run.stderr
    );
    let status = w.sb.run(&["--status"]);
    let json = w.sb.run(&["--status", "--json"]);
    let dashboard = crate::dashboard::Dashboard::start(&w.sb);
    let session = dashboard.log_in();
    let page = crate::dashboard::get(&dashboard.addr, "/", &session).body;

    let line = status
        .stdout
        .lines()
        .find(|line| line.starts_with("last hand-off: "))
        .unwrap_or_else(|| panic!("{status:?}"));
    assert!(
        line.contains(" → Codex (its default model): refused — Codex (its default model) refused this folder (exit 1): "),
        "{line}"
    );
    let rows: Value = serde_json::from_str(&json.stdout).unwrap();
    let said = rows[0]["last_handoff"]["refused"]
        .as_str()
        .unwrap_or_default();
    assert!(said.starts_with("refused this folder (exit 1)"), "{rows}");
    let handed = page
        .split("<p data-last-handoff>")
        .nth(1)
        .and_then(|rest| rest.split("</p>").next())
        .unwrap_or_else(|| panic!("{page}"));
    assert!(
        handed.contains("<strong class=\"refused\">refused</strong>"),
        "{handed}"
    );
    assert!(
        page.contains("<td>handoff (refused)</td>"),
        "the events list it as refused: {page}"
    );
}

/// The hand-off Codex refused goes on to the next rung, which is announced as the session's
/// hand-off: the last hand-off `--status` shows is where the session went on, and the task's
/// chain names it, not the rung that refused.
#[test]
fn a_hand_off_the_next_cli_refused_goes_on_to_the_rung_below_and_says_so() {
    let w = out_of_its_window(2 * 3600);
    w.sb.write_config(&format!("{}\n[[rungs]]\nbackend = \"gemini\"\n", config()));
    codex_refusing_the_folder(&w.sb);

    let (run, _) = launch(&w.sb, &["--on-limit", "continue"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(run.stdout, "gemini answered\n", "{run:?}");
    let brief = brief_named_in(&run.stderr);
    assert!(
        run.stderr.contains(&format!(
            "— continuing in Gemini CLI (its default model) with a brief of the session: {}",
            brief.display()
        )),
        "{}",
        run.stderr
    );
    let gemini = &w.sb.calls("gemini")[0].argv;
    assert!(
        gemini
            .iter()
            .any(|word| word.contains(&*brief.to_string_lossy())),
        "Gemini CLI was not given the brief: {gemini:?}"
    );
    let status = w.sb.run(&["--status"]);
    let line = status
        .stdout
        .lines()
        .find(|line| line.starts_with("last hand-off: "))
        .unwrap_or_else(|| panic!("{status:?}"));
    assert!(
        line.contains(" → Gemini CLI (its default model): "),
        "{line}"
    );
    assert!(!line.contains("refused"), "{line}");
    let tasks: Value = serde_json::from_str(&w.sb.run(&["--tasks", "--json"]).stdout).unwrap();
    let clis: Vec<&str> = tasks["tasks"][0]["links"]
        .as_array()
        .unwrap()
        .iter()
        .map(|link| link["cli"].as_str().unwrap())
        .collect();
    assert_eq!(clis, ["claude", "gemini"], "{tasks}");
}
