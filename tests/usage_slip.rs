//! Bad arguments never touch health (issue 32, item 3): `-p` with no prompt and nothing on
//! stdin is agent's own usage error (exit 2) before any CLI runs or any call is made; a
//! CLI's own usage error stops the cascade and marks nothing failed; and when every rung
//! that ran failed the same way, the closing message says so, rungs that never ran aside.

use std::io::Write as _;
use std::process::Stdio;

use crate::world::{CLAUDE_THEN_CODEX, world};

/// Claude Code 2.1.332's refusal of `-p` with no prompt (its stderr, exit 1).
const CLAUDE_NO_INPUT: &str = "Error: Input must be provided either through stdin or as a prompt argument when using --print\n";

#[test]
fn p_with_no_prompt_and_nothing_on_stdin_is_exit_2_with_no_cli_no_call_and_no_health() {
    let w = world();
    w.sb.write_config(CLAUDE_THEN_CODEX);

    let bare = w.sb.run(&["-p"]);
    let flags_only =
        w.sb.run(&["-p", "--output-format", "json", "--model", "opus"]);

    for run in [&bare, &flags_only] {
        assert_eq!(run.code, Some(2), "{run:?}");
        assert!(run.stderr.contains("-p needs a prompt"), "{run:?}");
        assert_eq!(run.stdout, "", "{run:?}");
    }
    for cli in ["claude", "codex", "gemini"] {
        assert!(
            w.sb.calls(cli).is_empty(),
            "{cli} ran: {:?}",
            w.sb.calls(cli)
        );
    }
    assert_eq!(w.api.requests().len(), 0, "a call reached the API");
    let written: Vec<_> =
        w.sb.state_files()
            .into_iter()
            .map(|(path, _)| path)
            .collect();
    assert!(written.is_empty(), "agent wrote state: {written:?}");
}

#[test]
fn stdin_at_its_end_holds_no_prompt_and_a_file_with_one_does() {
    let w = world();
    w.sb.write_config(CLAUDE_THEN_CODEX);
    w.sb.fake_cli("claude").script("cat").install();
    let run_with = |stdin: Stdio| {
        let mut cmd = w.sb.command(&["-p"]);
        cmd.stdin(stdin);
        crate::support::sandbox::run_command(cmd, crate::support::sandbox::RUN_TIMEOUT)
    };

    // A pipe whose writer has gone with nothing in it, as cron's can be.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(writer);
    let closed_pipe = run_with(Stdio::from(reader));
    let empty = w.sb.write_file("empty.txt", "");
    let empty_file = run_with(Stdio::from(std::fs::File::open(&empty).unwrap()));
    assert!(w.sb.calls("claude").is_empty(), "a CLI ran");
    let prompt = w.sb.write_file("prompt.txt", "summarize the log\n");
    let from_file = run_with(Stdio::from(std::fs::File::open(&prompt).unwrap()));

    for run in [&closed_pipe, &empty_file] {
        assert_eq!(run.code, Some(2), "{run:?}");
        assert!(run.stderr.contains("-p needs a prompt"), "{run:?}");
    }
    assert_eq!(from_file.code, Some(0), "{from_file:?}");
    assert_eq!(from_file.stdout, "summarize the log\n", "{from_file:?}");

    // `echo … | agent -p`: the prompt on a pipe reaches the CLI, whenever it is written.
    let mut cmd = w.sb.command(&["-p"]);
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = crate::support::sandbox::spawn(&mut cmd).expect("agent starts");
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"summarize the log\n").unwrap();
    drop(stdin);
    let piped = child.wait_with_output().unwrap();
    assert_eq!(piped.status.code(), Some(0), "{piped:?}");
    assert_eq!(
        String::from_utf8_lossy(&piped.stdout),
        "summarize the log\n"
    );
    let runs = w.sb.calls("claude");
    let argv = &runs.last().unwrap().argv;
    assert_eq!(argv.last().map(String::as_str), Some("-p"), "{argv:?}");
}

#[test]
fn a_clis_own_usage_error_stops_the_cascade_and_marks_nothing_failed() {
    let w = world();
    w.sb.write_config(CLAUDE_THEN_CODEX);
    // `--allowedTools` takes every word after it: Claude Code is left with no prompt.
    w.sb.fake_cli("claude")
        .stderr(CLAUDE_NO_INPUT)
        .exit(1)
        .install();

    let run = w.sb.run(&["-p", "--allowedTools", "Read", "summarize"]);
    let check = w.sb.run(&["--check-fallback"]);
    let status = w.sb.run(&["--status"]);

    assert_eq!(run.code, Some(1), "the CLI's own code: {run:?}");
    assert!(
        run.stderr
            .contains("refused the arguments (exit 1, it said \"Input must be provided"),
        "{run:?}"
    );
    assert!(
        w.sb.calls("codex").is_empty(),
        "the cascade went on: {run:?}"
    );
    assert_eq!(check.code, Some(0), "{check:?}");
    assert!(
        check
            .stdout
            .starts_with("all provider-independent fallbacks OK"),
        "{check:?}"
    );
    for text in [&check.stdout, &status.stdout] {
        assert!(!text.contains("failed at launch"), "{text}");
    }
}

#[test]
fn every_rung_that_ran_failing_the_same_way_is_named_and_a_rung_that_never_ran_does_not_count() {
    let w = world();
    // Gemini CLI between them has no key: passed over, never run.
    w.sb.env_remove("GEMINI_API_KEY");
    w.sb.write_config(
        "[[rungs]]\nbackend = \"claude\"\nprobe_model = \"opus\"\n[[rungs]]\nbackend = \"gemini\"\n[[rungs]]\nbackend = \"codex\"\n",
    );
    w.sb.fake_cli("claude").stderr("boom\n").exit(1).install();
    w.sb.fake_cli("codex").stderr("boom\n").exit(1).install();

    let run = w.sb.run(&["-p", "hi"]);

    assert_eq!(run.code, Some(69), "{run:?}");
    assert!(w.sb.calls("gemini").is_empty(), "{run:?}");
    assert!(
        run.stderr.contains(
            "every rung that ran exited 1 at once, the same way: the likeliest cause is what they share — the arguments or the working directory"
        ),
        "{run:?}"
    );
}

#[test]
fn every_rung_that_ran_refusing_the_folder_is_named_as_the_folder_not_the_vendors() {
    let (sb, _api) = crate::logins::logged_in();
    // Two ways to run Codex, from a home that is no git repository: both refuse it.
    std::fs::remove_dir(sb.home().join(".git")).unwrap();
    sb.fake_cli("codex")
        .stderr("Reading additional input from stdin...\nNot inside a trusted directory and --skip-git-repo-check was not specified.\n")
        .exit(1)
        .install();
    sb.write_config(
        "[backends.codex-fast]\ncommand = \"codex\"\nvendor = \"openai\"\n[[rungs]]\nbackend = \"codex\"\n[[rungs]]\nbackend = \"codex-fast\"\n",
    );

    let run = sb.run(&["-p", "hi"]);

    assert_eq!(run.code, Some(69), "{run:?}");
    let launches = sb
        .calls("codex")
        .iter()
        .filter(|call| {
            call.argv.first().is_some_and(|a| a == "exec")
                && call.argv.iter().all(|a| a != "--json")
        })
        .count();
    assert_eq!(launches, 2, "each rung launched once: {run:?}");
    assert!(
        run.stderr.contains(
            "every rung that ran refused this folder: the cause is the folder, not the vendors"
        ),
        "{run:?}"
    );
}
