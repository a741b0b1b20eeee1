//! `--on-limit` / `on_limit` / `AGENT_ON_LIMIT` as the command line and the configuration take
//! them (agent's own words, never the CLI's; a wrong word is exit 2 naming the choices), and
//! the `--outcome` / `AGENT_OUTCOME` record on the ways out that do not depend on how a
//! session ended (DESIGN.md §21).

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use crate::world::{CLAUDE_THEN_CODEX, world};

/// The record at `path`, parsed, after checking it is the user's alone (0600).
fn outcome_at(path: &Path) -> serde_json::Value {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mode = std::fs::metadata(path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "{} is {mode:o}", path.display());
    serde_json::from_slice(&bytes).unwrap_or_else(|e| {
        panic!(
            "{} is not JSON ({e}): {}",
            path.display(),
            String::from_utf8_lossy(&bytes)
        )
    })
}

/// True when `argv` holds `-p hi` as two neighbouring words.
fn has_prompt(argv: &[String]) -> bool {
    argv.windows(2).any(|pair| pair == ["-p", "hi"])
}

#[test]
fn on_limit_and_its_value_are_agents_and_never_reach_the_cli() {
    let w = world();
    w.sb.write_config(CLAUDE_THEN_CODEX);
    for words in [
        &["--on-limit", "continue", "-p", "hi"][..],
        &["-p", "hi", "--on-limit=resume"],
        &["--on-limit", "stop", "-p", "hi"],
    ] {
        let run = w.sb.run(words);
        assert_eq!(run.code, Some(0), "{words:?}: {run:?}");
    }
    let calls = w.sb.calls("claude");
    assert_eq!(calls.len(), 3, "{calls:?}");
    for call in &calls {
        assert!(has_prompt(&call.argv), "{:?}", call.argv);
        assert!(
            !call.argv.iter().any(|word| word.starts_with("--on-limit")
                || ["continue", "resume", "stop"].contains(&word.as_str())),
            "the CLI got agent's words: {:?}",
            call.argv
        );
    }
    assert!(w.sb.calls("codex").is_empty());
}

#[test]
fn an_on_limit_that_is_none_of_the_four_is_exit_2_naming_them_and_runs_nothing() {
    let w = world();
    w.sb.write_config(CLAUDE_THEN_CODEX);
    for words in [
        &["--on-limit=bogus", "-p", "hi"][..],
        &["--on-limit", "bogus", "-p", "hi"],
    ] {
        let run = w.sb.run(words);
        assert_eq!(run.code, Some(2), "{words:?}: {run:?}");
        assert!(
            run.stderr.contains("'bogus'")
                && run.stderr.contains("--on-limit")
                && run.stderr.contains("ask, continue, resume, stop"),
            "{words:?}: {}",
            run.stderr
        );
    }

    w.sb.env("AGENT_ON_LIMIT", "later");
    let run = w.sb.run(&["-p", "hi"]);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(
        run.stderr.contains(
            "AGENT_ON_LIMIT: expected one of ask, continue, resume, stop (found \"later\")"
        ),
        "{}",
        run.stderr
    );
    // The flag wins over the variable: a good flag is not stopped by a bad variable.
    let run = w.sb.run(&["--on-limit=stop", "-p", "hi"]);
    assert_eq!(run.code, Some(0), "{run:?}");

    assert_eq!(w.sb.calls("claude").len(), 1, "only the last run ran");
    assert!(w.sb.calls("codex").is_empty());
}

#[test]
fn a_bad_on_limit_in_the_config_is_exit_2_naming_the_file_line_and_key() {
    let w = world();
    let file = w.sb.config_path();
    for (toml, at) in [
        (
            format!("on_limit = \"never\"\n{CLAUDE_THEN_CODEX}"),
            "config.toml:1: on_limit",
        ),
        (
            format!("{CLAUDE_THEN_CODEX}\n[backends.codex]\n\non_limit = \"never\"\n"),
            "config.toml:11: backends.codex.on_limit",
        ),
    ] {
        w.sb.write_config(&toml);
        let run = w.sb.run(&["-p", "hi"]);
        assert_eq!(run.code, Some(2), "{toml}: {run:?}");
        let expected = format!(
            "{}: expected one of \"ask\", \"continue\", \"resume\", \"stop\" (found \"never\")",
            at.replace("config.toml", &file.display().to_string())
        );
        assert!(run.stderr.contains(&expected), "{expected}\n{}", run.stderr);
    }
    assert!(w.sb.calls("claude").is_empty());

    w.sb.write_config(&format!(
        "on_limit = \"continue\"\n[backends.claude]\non_limit = \"stop\"\n{CLAUDE_THEN_CODEX}"
    ));
    let run = w.sb.run(&["-p", "hi"]);
    assert_eq!(run.code, Some(0), "every good value is taken: {run:?}");
}

#[test]
fn the_outcome_record_is_written_on_a_usage_error_in_the_command_line_and_in_the_config() {
    let w = world();
    w.sb.write_config(CLAUDE_THEN_CODEX);
    let by_env = w.sb.root().join("records/by-env.json");
    w.sb.env("AGENT_OUTCOME", by_env.to_string_lossy());

    // Refused while the command line is read: nothing of the launch has begun.
    let run = w.sb.run(&["--on-limit=bogus", "-p", "hi"]);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert_eq!(
        outcome_at(&by_env),
        serde_json::json!({"exit": 2, "rungs": [], "handoff": null, "waited_seconds": 0.0})
    );

    // Refused by the configuration, through main's error path; `--outcome` wins over the
    // variable, and a bare name is a file in the current directory.
    std::fs::remove_file(&by_env).unwrap();
    w.sb.write_config(&format!("on_limit = \"never\"\n{CLAUDE_THEN_CODEX}"));
    let run = w.sb.run(&["--outcome", "by-flag.json", "-p", "hi"]);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert_eq!(outcome_at(&w.sb.home().join("by-flag.json"))["exit"], 2);
    assert!(
        !by_env.exists(),
        "the flag won, the variable's file is not written"
    );
    assert!(w.sb.calls("claude").is_empty());
}

#[test]
fn the_outcome_record_says_69_when_every_rung_failed_fast() {
    let w = world();
    w.sb.write_config(CLAUDE_THEN_CODEX);
    w.sb.fake_cli("claude").exit(1).install();
    w.sb.fake_cli("codex").exit(1).install();
    let record = w.sb.root().join("outcome.json");

    let run =
        w.sb.run(&["--outcome", record.to_str().unwrap(), "-p", "hi"]);

    assert_eq!(run.code, Some(69), "{run:?}");
    let outcome = outcome_at(&record);
    assert_eq!(outcome["exit"], 69, "{outcome}");
    assert_eq!(outcome["handoff"], serde_json::Value::Null, "{outcome}");
    // Each rung the launch records ran and failed fast.
    let rungs = outcome["rungs"].as_array().expect("rungs is a list");
    for rung in rungs {
        assert_eq!(rung["ended"], "fast_fail", "{outcome}");
    }
    // No temporary file is left beside it.
    let left: Vec<_> = std::fs::read_dir(w.sb.root())
        .unwrap()
        .filter_map(Result::ok)
        .map(|entry| entry.file_name())
        .filter(|name| name.to_string_lossy().contains("outcome.json."))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn the_outcome_record_says_128_plus_n_when_the_cli_was_killed_by_a_signal() {
    let w = world();
    w.sb.write_config(CLAUDE_THEN_CODEX);
    // Dies by SIGTERM (its trap re-raises it): agent dies by the same signal.
    w.sb.fake_cli("claude")
        .script("kill -TERM $$\nsleep 5")
        .install();
    let record = w.sb.root().join("outcome.json");

    let run =
        w.sb.run(&["--outcome", record.to_str().unwrap(), "-p", "hi"]);

    assert_eq!(run.signal, Some(15), "{run:?}");
    assert_eq!(outcome_at(&record)["exit"], 128 + 15);
    assert!(w.sb.calls("codex").is_empty());
}

#[test]
fn a_report_writes_no_outcome_record() {
    let w = world();
    let record = w.sb.root().join("outcome.json");
    w.sb.env("AGENT_OUTCOME", record.to_string_lossy());
    for words in [&["--list"][..], &["--dry-run", "-p", "hi"], &["--version"]] {
        let run = w.sb.run(words);
        assert_eq!(run.code, Some(0), "{words:?}: {run:?}");
    }
    // A report that fails (through main's error path) is not a launch either.
    let run =
        w.sb.run(&["--config", "/nonexistent/config.toml", "--list"]);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(!record.exists(), "a report wrote {}", record.display());
}
