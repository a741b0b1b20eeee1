//! One task across the real CLIs and back (issue 42), against the mock: the real `codex
//! exec` runs out mid-session (its own `usage_limit_reached`) and the real Claude Code
//! continues with a brief, or the real `codex exec resume ID` picks the same session up
//! after the reset; the real Claude Code runs out, the real codex carries the task, and
//! once Claude Code's window resets `agent -c` takes the task back to the real Claude
//! Code's own session (`--resume ID`) with a brief of Codex's work; and the real Gemini CLI
//! carries a task in the session agent named (`--session-id`) and `agent -c` resumes it.

use super::*;

/// The task every test here gives.
const TASK: &str = "Write the release notes for 0.2, then check the changelog";
/// What the real codex answers when it carries the task.
const CODEX_DID: &str = "Codex wrote the release notes; the changelog is next.";
/// What the real Claude Code answers when the task comes back to it.
const CLAUDE_DONE: &str = "Checked the changelog against Codex's notes.";

/// `cli`'s real binary behind a fake of the same name that records its argv and execs it:
/// the words agent gave it are asserted, the real CLI still does all the work.
fn recording_argv_of(w: &E2e, cli: &str) {
    let link = w.sb.bin_dir().join(cli);
    let real = fs::read_link(&link).unwrap_or_else(|e| panic!("the {cli} symlink: {e}"));
    fs::remove_file(&link).expect("replace the symlink");
    w.sb.fake_cli(cli)
        .script(&format!("exec '{}' \"$@\"", real.display()))
        .install();
}

/// The words of `cli`'s runs that were launches (not agent's asking of `codex app-server`).
fn launches_of(w: &E2e, cli: &str) -> Vec<Vec<String>> {
    w.sb.calls(cli)
        .into_iter()
        .map(|call| call.argv)
        .filter(|argv| argv.first().map(String::as_str) != Some("app-server"))
        .collect()
}

/// The value after `flag` in `argv`.
fn after<'a>(argv: &'a [String], flag: &str) -> Option<&'a str> {
    let at = argv.iter().position(|word| word == flag)?;
    argv.get(at + 1).map(String::as_str)
}

/// The brief a hand-off notice names.
fn brief_in_notice(stderr: &str) -> PathBuf {
    let words = "with a brief of the session: ";
    let line = agent_notices(stderr)
        .into_iter()
        .find(|line| line.contains(words))
        .unwrap_or_else(|| panic!("no hand-off notice: {stderr}"));
    PathBuf::from(&line[line.find(words).unwrap() + words.len()..])
}

/// The id of the session codex's rollout under the sandbox's home names (its one rollout).
fn codex_session(w: &E2e) -> String {
    let rollouts = support::sandbox::files_under(&w.sb.home().join(".codex/sessions"));
    let ids: std::collections::BTreeSet<String> = rollouts
        .iter()
        .flat_map(|(_, text)| text.lines())
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|row| row["type"] == "session_meta")
        .filter_map(|row| row["payload"]["id"].as_str().map(str::to_string))
        .collect();
    assert_eq!(ids.len(), 1, "one codex session: {ids:?}");
    ids.into_iter().next().unwrap()
}

/// Codex on a ChatGPT login first (run unprobed; a one-second fast-failure threshold), then
/// Claude Code on the e2e API key.
fn codex_then_claude(w: &E2e) {
    w.sb.write_config(
        r#"fastfail_seconds = 1
probe_timeout_seconds = 60

[backends.codex]
probe = { kind = "none" }

[[rungs]]
backend = "codex"

[[rungs]]
backend = "claude"
probe_model = "opus"
run_model = "opus"
"#,
    );
}

#[test]
fn a_real_codex_session_out_of_its_window_continues_in_the_real_claude_code_with_a_brief() {
    let w = e2e();
    let reset = (jiff::Timestamp::now().as_second() + 2 * 3600) / 60 * 60;
    codex_refused_at_its_limit_until(
        &w,
        reset,
        Rule::path_contains("/backend-api/codex/responses").reply(
            Reply::codex_usage_limit("plus", reset).delay(std::time::Duration::from_secs(3)),
        ),
    );
    codex_then_claude(&w);
    w.api
        .on(Rule::path_contains("/v1/messages?beta=true").reply(Reply::ok_text(CLAUDE_DONE)));

    let run = w.run(&["--on-limit", "continue", "-p", TASK]);

    assert_eq!(run.code, Some(0), "Claude Code's code: {run:?}");
    assert!(run.stdout.contains(CLAUDE_DONE), "{run:?}");
    assert_eq!(
        w.posts_to("/backend-api/codex/responses").len(),
        1,
        "codex asked its backend once, and was refused"
    );
    let brief = brief_in_notice(&run.stderr);
    assert!(
        agent_notices(&run.stderr)
            .iter()
            .any(|line| line.starts_with(
                "[agent] Codex (its default model) ran out of its window (usage limit, resets "
            ) && line.contains("— continuing in Claude Code")),
        "{}",
        run.stderr
    );
    let text = fs::read_to_string(&brief).expect("the brief");
    let session = codex_session(&w);
    assert!(text.starts_with("# Hand-off from Codex"), "{text}");
    assert!(section(&text, "## The task").contains(TASK), "{text}");
    assert!(section(&text, "## Source").contains(&session), "{text}");
    // The real Claude Code was given the task and the brief, in its own session.
    let turns = w.claude_code_calls();
    assert_eq!(turns.len(), 1, "one turn of Claude Code's");
    assert!(turns[0].body.contains(TASK), "{}", turns[0].body);
    assert!(
        turns[0].body.contains(&brief.display().to_string()),
        "the brief's path: {}",
        turns[0].body
    );
    assert!(
        turns[0].body.contains("[agent] This task began in Codex"),
        "{}",
        turns[0].body
    );
}

#[test]
fn a_real_codex_session_out_of_its_window_is_resumed_by_id_in_codex_exec_resume_after_the_reset() {
    let w = e2e();
    // Seconds ahead: agent waits for it.
    let reset = jiff::Timestamp::now().as_second() + 12;
    let responses = || Rule::path_contains("/backend-api/codex/responses");
    w.api.on(responses().reply(Reply::ok_text(CODEX_DID)));
    // With the window headers the ChatGPT backend sends, codex records the window with its
    // reset to the second (its refusal's text names only the minute).
    codex_refused_at_its_limit_until(
        &w,
        reset,
        responses().times(1).reply(
            Reply::codex_usage_limit("plus", reset)
                .header("x-codex-primary-used-percent", "100")
                .header("x-codex-primary-window-minutes", "300")
                .header("x-codex-primary-reset-at", &reset.to_string())
                .delay(std::time::Duration::from_secs(3)),
        ),
    );
    codex_then_claude(&w);
    recording_argv_of(&w, "codex");

    let run = w.run(&["--on-limit", "resume", "-p", TASK]);

    assert_eq!(run.code, Some(0), "the resumed codex's code: {run:?}");
    assert!(run.stdout.contains(CODEX_DID), "{run:?}");
    assert!(w.claude_code_calls().is_empty(), "Claude Code ran");
    let session = codex_session(&w);
    let runs = launches_of(&w, "codex");
    assert_eq!(runs.len(), 2, "{runs:?}");
    assert_eq!(
        &runs[1][..3],
        ["exec", "resume", session.as_str()],
        "{runs:?}"
    );
    // The same session, after the reset: the resumed turn carries the first one's task.
    let turns = w.posts_to("/backend-api/codex/responses");
    assert_eq!(turns.len(), 2, "the refused turn and the resumed one");
    assert!(turns[1].body.contains(TASK), "{}", turns[1].body);
    assert!(
        turns[1].body.contains("Your usage window ran out"),
        "{}",
        turns[1].body
    );
    assert!(
        jiff::Timestamp::now().as_second() >= reset,
        "agent ended before the reset it waited for"
    );
    assert!(
        agent_notices(&run.stderr)
            .iter()
            .any(|line| line.ends_with(&format!(
                "— waiting for the reset to resume session {session}"
            ))),
        "{}",
        run.stderr
    );
}

#[test]
fn a_task_goes_from_the_real_claude_code_to_the_real_codex_and_back_with_a_brief_of_codexs_work() {
    let w = e2e();
    // Far enough ahead that Claude Code's run and Codex's end before it.
    let reset = jiff::Timestamp::now().as_second() + 20;
    let project = a_window_that_runs_out_mid_session(&w, reset);
    w.api
        .on(Rule::path_contains("/v1/responses").reply(Reply::ok_text(CODEX_DID)));
    recording_argv_of(&w, "claude");

    let first = w.run(&["--on-limit", "continue", "-p", NIGHT_TASK]);
    assert_eq!(first.code, Some(0), "{first:?}");
    assert!(first.stdout.contains(CODEX_DID), "{first:?}");
    let claude = night_session(&night_turns(&w));
    let codex = codex_session(&w);

    // Claude Code still out: the task lives in Codex's session.
    let tasks = w.run(&["--tasks", "--json"]);
    let report: Value = serde_json::from_str(&tasks.stdout).expect("JSON");
    let links = report["tasks"][0]["links"]
        .as_array()
        .expect("links")
        .clone();
    let sessions: Vec<&str> = links
        .iter()
        .map(|l| l["session"].as_str().unwrap_or("?"))
        .collect();
    assert_eq!(sessions, [claude.as_str(), codex.as_str()], "{report}");

    support::wait::until("Claude Code's window to reset", || {
        jiff::Timestamp::now().as_second() > reset
    });
    let back = w.run(&["-c", "-p", "now check the changelog"]);

    assert_eq!(back.code, Some(0), "{back:?}");
    assert!(back.stdout.contains(NIGHT_DONE), "{back:?}");
    let runs = launches_of(&w, "claude");
    let last = runs.last().expect("claude ran");
    assert_eq!(after(last, "--resume"), Some(claude.as_str()), "{runs:?}");
    assert!(!last.iter().any(|word| word == "--session-id"), "{last:?}");
    // The real Claude Code resumed its own session: the turn carries what it did before
    // (its Write's result) and the brief of what Codex did since.
    let turns = night_turns(&w);
    let resumed = turns.last().expect("a resumed turn");
    assert_eq!(night_session(&turns), claude, "one session throughout");
    assert!(resumed.body.contains("tool_result"), "{}", resumed.body);
    assert!(
        resumed
            .body
            .contains("this task went on in Codex (its default model)"),
        "{}",
        resumed.body
    );
    let line = agent_notices(&back.stderr)
        .into_iter()
        .find(|line| line.contains("'s window has reset — taking this folder's task back up to it"))
        .unwrap_or_else(|| panic!("no going-back notice: {}", back.stderr));
    let brief = PathBuf::from(&line[line.rfind(": ").unwrap() + 2..]);
    assert!(
        resumed.body.contains(&brief.display().to_string()),
        "{}",
        resumed.body
    );
    let text = fs::read_to_string(&brief).expect("the brief");
    assert!(
        section(&text, "## Where it stopped").contains(CODEX_DID),
        "{text}"
    );
    assert!(section(&text, "## Source").contains(&codex), "{text}");
    assert!(fs::read_to_string(project.join("notes.txt")).is_ok());

    let tasks = w.run(&["--tasks"]);
    assert!(
        tasks.stdout.contains(&format!(
            "  3. Claude Code ({CLAUDE_MODEL}) · from 2 · session {claude}"
        )),
        "{}",
        tasks.stdout
    );
}

#[test]
fn the_real_gemini_cli_carries_a_task_in_the_session_agent_named_and_agent_c_resumes_it() {
    let w = e2e();
    let reset = (jiff::Timestamp::now().as_second() + 3600) / 60 * 60;
    a_window_that_runs_out_mid_session_above(
        &w,
        reset,
        &format!("[[rungs]]\nbackend = \"gemini\"\nrun_model = \"{GEMINI_MODEL}\"\n"),
    );
    let gemini_turn = || Rule::path_contains(":streamGenerateContent");
    w.api.on(gemini_turn().reply(Reply::ok_text(CODEX_DID)));
    recording_argv_of(&w, "gemini");

    let first = w.run(&["--on-limit", "continue", "-p", NIGHT_TASK]);
    assert_eq!(first.code, Some(0), "{first:?}");
    let runs = launches_of(&w, "gemini");
    assert_eq!(runs.len(), 1, "{runs:?}");
    let named = after(&runs[0], "--session-id")
        .unwrap_or_else(|| panic!("no session named: {runs:?}"))
        .to_string();
    assert!(support::session_id::is_v4_uuid(&named), "{named}");

    let again = w.run(&["-c", "-p", "go on with the notes"]);

    assert_eq!(again.code, Some(0), "{again:?}");
    let runs = launches_of(&w, "gemini");
    assert_eq!(runs.len(), 2, "{runs:?}");
    assert_eq!(
        after(&runs[1], "--resume"),
        Some(named.as_str()),
        "{runs:?}"
    );
    assert!(
        !runs[1].iter().any(|word| word == "--session-id"),
        "{runs:?}"
    );
    // The real Gemini CLI found its session by that id: the resumed turn carries the first.
    let turns: Vec<Request> = w
        .api
        .post_requests()
        .into_iter()
        .filter(|r| {
            r.path.contains(":streamGenerateContent") || r.path.contains(":generateContent")
        })
        .filter(|r| r.body.contains("go on with the notes"))
        .collect();
    assert_eq!(turns.len(), 1, "one resumed turn");
    assert!(turns[0].body.contains(NIGHT_TASK), "{}", turns[0].body);
    assert!(turns[0].body.contains(CODEX_DID), "{}", turns[0].body);
    assert!(
        agent_notices(&again.stderr)
            .iter()
            .any(|line| line.contains(&format!(
                "continuing this folder's task in Gemini CLI ({GEMINI_MODEL}) session {named}"
            ))),
        "{}",
        again.stderr
    );
    assert!(
        !again.stderr.contains("[agent] using "),
        "the continuation was announced twice: {}",
        again.stderr
    );
}
