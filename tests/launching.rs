//! Running the chosen CLI: arguments untouched, the exit status passed through, the
//! fast-fail second net, signals, and `--use`.

use std::time::{Duration, Instant};

use crate::support::sandbox::{run_command, spawn};
use crate::world::{CLAUDE_THEN_CODEX, world};

#[test]
fn arguments_pass_through_unchanged_and_in_order() {
    let w = world();
    w.sb.write_config(CLAUDE_THEN_CODEX);
    let args = [
        "-p",
        "it's a \"bug\"",
        "--model",
        "x",
        "--verbose",
        "-c",
        "--resume",
        "--",
        "--list",
        "--json",
    ];

    let run = w.sb.run(&args);

    assert_eq!(run.code, Some(0), "{run:?}");
    // Everything but the first `--` (which ends agent's options) reaches the CLI.
    assert_eq!(
        w.sb.calls("claude")[0].argv,
        [
            "-p",
            "it's a \"bug\"",
            "--model",
            "x",
            "--verbose",
            "-c",
            "--resume",
            "--list",
            "--json"
        ]
    );
    assert_eq!(
        run.stdout, "claude answered\n",
        "the CLI's stdout is agent's stdout"
    );
}

#[test]
fn the_top_cli_failing_at_once_runs_the_next_rung_with_identical_arguments() {
    let w = world();
    w.sb.write_config(CLAUDE_THEN_CODEX);
    w.sb.fake_cli("claude")
        .stdout("API Error: Request rejected (429)\n")
        .exit(1)
        .install();

    let run = w.sb.run(&["-p", "explain this bug"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(w.sb.calls("claude")[0].argv, ["-p", "explain this bug"]);
    assert_eq!(w.sb.calls("codex")[0].argv, ["-p", "explain this bug"]);
    assert!(
        run.stderr.contains(
            "[agent] Claude Code (claude-opus-5) exited 1 after 0s — treating as unavailable"
        ),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("[agent] using Codex (gpt-test-codex)"),
        "{}",
        run.stderr
    );
    let events = std::fs::read_to_string(w.sb.state_dir().join("events.jsonl")).unwrap();
    assert!(events.contains("\"event\":\"fastfail\""), "{events}");
}

#[test]
fn a_fast_failure_makes_the_next_launch_probe_again() {
    let w = world();
    w.sb.write_config(CLAUDE_THEN_CODEX);
    w.sb.fake_cli("claude").exit(1).install();
    assert_eq!(w.sb.run(&["-p", "hi"]).code, Some(0));
    let probes = w.api.posts_for_model("claude-opus-5");

    w.sb.run(&["-p", "hi"]);

    assert_eq!(
        w.api.posts_for_model("claude-opus-5"),
        probes + 1,
        "a rung that failed fast is not trusted from cache"
    );
}

#[test]
fn a_child_that_ran_past_fastfail_seconds_keeps_its_code_and_nothing_else_runs() {
    let w = world();
    w.sb.write_config(&format!("fastfail_seconds = 1\n{CLAUDE_THEN_CODEX}"));
    w.sb.fake_cli("claude").sleep_ms(1_300).exit(3).install();

    let run = w.sb.run(&["-p", "hi"]);

    assert_eq!(run.code, Some(3), "{run:?}");
    assert!(
        w.sb.calls("codex").is_empty(),
        "work that really ran is never silently re-run elsewhere"
    );
    assert!(
        !run.stderr.contains("treating as unavailable"),
        "{}",
        run.stderr
    );
}

#[test]
fn exit_130_is_final() {
    let w = world();
    w.sb.write_config(CLAUDE_THEN_CODEX);
    w.sb.fake_cli("claude").exit(130).install();

    let run = w.sb.run(&["-p", "hi"]);

    assert_eq!(run.code, Some(130), "{run:?}");
    assert!(w.sb.calls("codex").is_empty());
}

#[test]
fn the_childs_own_exit_code_passes_through() {
    let w = world();
    w.sb.write_config(&format!("fastfail_seconds = 0\n{CLAUDE_THEN_CODEX}"));
    w.sb.fake_cli("claude").exit(42).install();

    let run = w.sb.run(&["-p", "hi"]);

    assert_eq!(run.code, Some(42), "{run:?}");
    assert!(w.sb.calls("codex").is_empty());
}

#[test]
fn every_rung_failing_fast_exits_69_and_says_so() {
    let w = world();
    w.sb.write_config(CLAUDE_THEN_CODEX);
    w.sb.fake_cli("claude").exit(1).install();
    w.sb.fake_cli("codex").exit(2).install();

    let run = w.sb.run(&["--bogus-flag"]);

    assert_eq!(run.code, Some(69), "{run:?}");
    assert!(
        run.stderr
            .contains("Claude Code (claude-opus-5): exited 1 after 0s"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("Codex (gpt-test-codex): exited 2 after 0s"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("if the arguments are wrong for them"),
        "{}",
        run.stderr
    );
}

#[test]
fn sigterm_sent_to_agent_reaches_the_child_and_nothing_else_runs() {
    let w = world();
    w.sb.write_config(CLAUDE_THEN_CODEX);
    w.sb.fake_cli("claude")
        .record_term()
        .sleep_ms(20_000)
        .install();
    let mut child = spawn(&mut w.sb.command(&["-p", "hi"])).expect("agent starts");

    let started = Instant::now();
    while w.sb.calls("claude").is_empty() {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "claude never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap()),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let status = child.wait().unwrap();

    assert_eq!(w.sb.calls("claude")[0].signal.as_deref(), Some("TERM"));
    assert_eq!(
        status.code(),
        Some(143),
        "the child's own exit after TERM passes through"
    );
    assert!(
        w.sb.calls("codex").is_empty(),
        "a stop asked for is not a rung failing"
    );
}

#[test]
fn use_forces_a_backend_and_model_without_any_probe() {
    let w = world();

    let run = w.sb.run(&["--use", "claude:sonnet", "-p", "hi"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(
        w.sb.calls("claude")[0].argv,
        ["--model", "claude-sonnet-5", "-p", "hi"]
    );
    assert_eq!(w.api.posts(), 0);
    assert!(run.stderr.is_empty(), "{}", run.stderr);
}

#[test]
fn use_passes_the_exit_code_through_and_never_falls_back() {
    let w = world();
    w.sb.fake_cli("gemini").exit(42).install();

    let run = w.sb.run(&["--use", "gemini", "-p", "hi"]);

    assert_eq!(run.code, Some(42), "{run:?}");
    assert_eq!(w.sb.calls("gemini")[0].argv, ["-p", "hi"]);
    assert!(w.sb.calls("claude").is_empty() && w.sb.calls("codex").is_empty());
}

#[test]
fn use_resolves_aliases_per_backend_and_sets_its_environment() {
    let w = world();

    let run = w.sb.run(&["--use=claude-proxy:opus", "hi"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    let call = &w.sb.calls("claude")[0];
    assert_eq!(call.argv, ["--model", "claude-opus-5", "hi"]);
    assert_eq!(call.env.get("ANTHROPIC_BASE_URL"), Some(&w.api.url()));
    assert!(call.env.contains_key("ANTHROPIC_AUTH_TOKEN"));
}

#[test]
fn use_with_an_unknown_backend_is_a_usage_error() {
    let w = world();

    let run = w.sb.run(&["--use", "nope", "-p", "hi"]);

    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(
        run.stderr.contains("unknown backend \"nope\""),
        "{}",
        run.stderr
    );
}

#[test]
fn a_killed_child_kills_agent_by_the_same_signal() {
    let w = world();
    w.sb.write_config(CLAUDE_THEN_CODEX);
    w.sb.fake_cli("claude").script("kill -KILL $$").install();

    let run = run_command(w.sb.command(&["-p", "hi"]), Duration::from_secs(30));

    assert_eq!(run.signal, Some(9), "{run:?}");
    assert!(w.sb.calls("codex").is_empty());
}
