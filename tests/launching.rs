//! Running the chosen CLI: arguments untouched for Claude Code and in its own words for
//! another CLI, the exit status passed through, the fast-fail second net, bad arguments
//! that are not an outage, signals, and `--use`.

use crate::support::sandbox::{run_command, spawn};
use crate::support::session_id::is_v4_uuid;
use crate::support::{launched_words, wait};
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
    // Everything reaches the CLI: a `--` after one of its words is its own.
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
            "--",
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
fn a_session_the_user_names_reaches_claude_code_unchanged_and_each_other_launch_gets_its_own_id() {
    let w = world();
    w.sb.write_config(CLAUDE_THEN_CODEX);
    let own = "0b7e2c1a-5d3f-4e8a-9c6b-1f2e3d4c5b6a";
    let inline = format!("--session-id={own}");
    let named: [&[&str]; 5] = [
        &["--session-id", own, "-p", "hi"],
        &[&inline, "-p", "hi"],
        &["--resume", own, "-p", "hi"],
        &["-r", own],
        &["-c", "-p", "hi"],
    ];
    for (n, words) in named.iter().enumerate() {
        let run = w.sb.run(words);

        assert_eq!(run.code, Some(0), "{words:?}: {run:?}");
        // The user's session is the one that runs: no id of agent's beside it.
        assert_eq!(w.sb.calls("claude")[n].argv, *words);
    }

    // Words that name no session: agent names it, afresh for each launch.
    let ids: Vec<String> = (0..2)
        .map(|_| {
            let run = w.sb.run(&["-p", "hi"]);
            assert_eq!(run.code, Some(0), "{run:?}");
            let argv = w.sb.calls("claude").pop().unwrap().argv;
            assert_eq!(launched_words(&argv), ["-p", "hi"]);
            let at = argv.iter().position(|word| word == "--session-id").unwrap();
            argv[at + 1].clone()
        })
        .collect();
    assert_ne!(ids[0], ids[1], "two launches, two sessions");
    assert!(
        w.sb.calls("codex").is_empty(),
        "Claude Code ran every launch"
    );
}

#[test]
fn the_top_cli_failing_at_once_runs_the_next_rung_with_the_same_request_in_its_words() {
    let w = world();
    w.sb.write_config(CLAUDE_THEN_CODEX);
    w.sb.fake_cli("claude")
        .stdout("API Error: Request rejected (429)\n")
        .exit(1)
        .install();

    let run = w.sb.run(&["-p", "explain this bug"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(
        launched_words(&w.sb.calls("claude")[0].argv),
        ["-p", "explain this bug"]
    );
    // Codex's -p is --profile: headless is `codex exec PROMPT`.
    assert_eq!(
        w.sb.calls("codex")[0].argv,
        ["exec", "--", "explain this bug"]
    );
    assert!(
        says_seconds(
            &run.stderr,
            "[agent] Claude Code (its default model) exited 1 after ",
            "s — treating as unavailable"
        ),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("[agent] using Codex (its default model)"),
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
fn every_rung_failing_fast_exits_69_and_names_the_likeliest_cause() {
    let w = world();
    w.sb.write_config(CLAUDE_THEN_CODEX);
    w.sb.fake_cli("claude").exit(1).install();
    w.sb.fake_cli("codex").exit(1).install();

    let run = w.sb.run(&["-p", "hi"]);

    assert_eq!(run.code, Some(69), "{run:?}");
    assert!(
        says_seconds(
            &run.stderr,
            "Claude Code (its default model): exited 1 after ",
            "s"
        ),
        "{}",
        run.stderr
    );
    assert!(
        says_seconds(
            &run.stderr,
            "Codex (its default model): exited 1 after ",
            "s"
        ),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains(
            "every rung that ran exited 1 at once, the same way: the likeliest cause is what they share"
        ),
        "{}",
        run.stderr
    );
}

#[test]
fn a_flag_no_other_cli_takes_passes_those_rungs_over_before_running_them() {
    let w = world();
    w.sb.write_config(CLAUDE_THEN_CODEX);
    w.sb.fake_cli("claude").exit(1).install();

    let run = w.sb.run(&["--bogus-flag"]);

    assert_eq!(run.code, Some(69), "{run:?}");
    assert!(w.sb.calls("codex").is_empty(), "never run to fail");
    assert!(
        run.stderr.contains(
            "[agent] Codex cannot take --bogus-flag (no flag of Claude Code's or its own): passed over"
        ),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains(
            "the one rung that ran exited 1 at once: the likeliest cause is the arguments, not an outage (Codex cannot take --bogus-flag"
        ),
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

    wait::until("claude starting", || !w.sb.calls("claude").is_empty());
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
    assert_eq!(w.sb.calls("gemini")[0].argv, ["--prompt=hi"]);
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

    let run = run_command(
        w.sb.command(&["-p", "hi"]),
        crate::support::sandbox::RUN_TIMEOUT,
    );

    assert_eq!(run.signal, Some(9), "{run:?}");
    assert!(w.sb.calls("codex").is_empty());
}

/// Waits until the fake CLI has written `ready` into the sandbox's temp dir.
fn wait_until_ready(w: &crate::world::World) {
    let ready = w.sb.tmp_dir().join("ready");
    wait::until("the CLI starting", || ready.exists());
}

fn signal_group(child: &std::process::Child, signal: nix::sys::signal::Signal) {
    nix::sys::signal::killpg(
        nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap()),
        signal,
    )
    .unwrap();
}

#[test]
fn ctrl_c_ends_the_cascade_even_when_the_cli_exits_1() {
    use std::os::unix::process::CommandExt as _;
    let w = world();
    w.sb.write_config(CLAUDE_THEN_CODEX);
    // Like a CLI that catches Ctrl-C and exits 1 rather than 130.
    w.sb.fake_cli("claude")
        .script("trap 'exit 1' INT QUIT\ntouch \"$TMPDIR/ready\"\nwhile :; do sleep 0.05; done")
        .install();
    let mut command = w.sb.command(&["-p", "hi"]);
    command.process_group(0);
    let mut child = spawn(&mut command).expect("agent starts");
    wait_until_ready(&w);

    // What the terminal does on Ctrl-C: INT to the whole foreground group.
    signal_group(&child, nix::sys::signal::Signal::SIGINT);
    let status = child.wait().unwrap();

    assert_eq!(status.code(), Some(1), "the CLI's own code passes through");
    assert!(
        w.sb.calls("codex").is_empty(),
        "an interrupt is the user's stop, not a rung failing fast"
    );
}

#[test]
fn a_hangup_ignored_by_nohup_stays_ignored_for_agent_and_the_cli() {
    use std::os::unix::process::CommandExt as _;
    let w = world();
    w.sb.write_config(&format!("fastfail_seconds = 0\n{CLAUDE_THEN_CODEX}"));
    // Records its ignored-signal mask, says it is ready, waits for `go`, exits 7.
    w.sb.fake_cli("claude")
        .script(
            "grep SigIgn /proc/$$/status > \"$TMPDIR/sigign\"\ntouch \"$TMPDIR/ready\"\nwhile [ ! -f \"$TMPDIR/go\" ]; do sleep 0.05; done\nexit 7",
        )
        .install();
    let mut command = w.sb.command(&["-p", "hi"]);
    command.process_group(0);
    // What `nohup` does before it execs agent.
    // SAFETY: signal(2) is async-signal-safe, as pre_exec requires.
    unsafe {
        command.pre_exec(|| {
            nix::sys::signal::signal(
                nix::sys::signal::Signal::SIGHUP,
                nix::sys::signal::SigHandler::SigIgn,
            )
            .map(|_| ())
            .map_err(std::io::Error::from)
        });
    }
    let mut child = spawn(&mut command).expect("agent starts");
    wait_until_ready(&w);

    // The terminal closing: HUP to agent and the CLI.
    signal_group(&child, nix::sys::signal::Signal::SIGHUP);
    std::fs::write(w.sb.tmp_dir().join("go"), "").unwrap();
    let status = child.wait().unwrap();

    let sigign = std::fs::read_to_string(w.sb.tmp_dir().join("sigign")).unwrap();
    let mask = u64::from_str_radix(sigign.trim().trim_start_matches("SigIgn:").trim(), 16)
        .expect("a hex mask");
    assert_ne!(mask & 1, 0, "the CLI inherits HUP ignored: {sigign}");
    assert_eq!(
        status.code(),
        Some(7),
        "agent and the CLI both outlive the hangup"
    );
    assert!(w.sb.calls("codex").is_empty());
}

/// The raw bytes a fake CLI recorded as its arguments (NUL after each).
fn recorded_argv_bytes(w: &crate::world::World, cli: &str, run: usize) -> Vec<u8> {
    std::fs::read(
        w.sb.calls_dir()
            .join(cli)
            .join(run.to_string())
            .join("argv"),
    )
    .unwrap()
}

#[test]
fn arguments_that_are_not_utf8_pass_through_byte_for_byte() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt as _;
    let w = world();
    w.sb.write_config(CLAUDE_THEN_CODEX);
    // claude fails fast, so the words also travel on to the next rung.
    w.sb.fake_cli("claude").exit(1).install();
    let words: [&[u8]; 4] = [b"-p", b"\xff\xfe caf\xe9", b"--model=\x80", b"ok"];
    let expected: Vec<u8> = words.iter().flat_map(|w| [*w, b"\0"].concat()).collect();

    let mut command = w.sb.command(&[]);
    command.args(words.iter().map(|word| OsStr::from_bytes(word)));
    let run = run_command(command, crate::support::sandbox::RUN_TIMEOUT);
    assert_eq!(run.code, Some(0), "{run:?}");
    // Claude Code gets agent's session id (ASCII) first, then the bytes as given.
    let claude = recorded_argv_bytes(&w, "claude", 1);
    let named = claude
        .strip_prefix(b"--session-id\0")
        .unwrap_or_else(|| panic!("no session id first: {claude:?}"));
    let (id, given) = named.split_at(named.iter().position(|b| *b == 0).unwrap());
    assert!(is_v4_uuid(&String::from_utf8_lossy(id)), "{claude:?}");
    assert_eq!(&given[1..], expected);
    // In Codex's words, the bytes kept: headless is `exec`, the prompt one word.
    assert_eq!(
        recorded_argv_bytes(&w, "codex", 1),
        b"exec\0-m\0\x80\0--\0\xff\xfe caf\xe9 ok\0"
    );

    // `--use` execs the CLI in agent's place, in its words: the same bytes again.
    let mut command = w.sb.command(&["--use", "gemini"]);
    command.args(words.iter().map(|word| OsStr::from_bytes(word)));
    let run = run_command(command, crate::support::sandbox::RUN_TIMEOUT);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(
        recorded_argv_bytes(&w, "gemini", 1),
        b"-m\0\x80\0--prompt=\xff\xfe caf\xe9 ok\0"
    );
}

/// Whether `text` says `before`, a whole number of seconds, then `after` (how long a fake
/// took to fail depends on the machine's load, not on agent).
fn says_seconds(text: &str, before: &str, after: &str) -> bool {
    text.match_indices(before).any(|(at, _)| {
        let rest = &text[at + before.len()..];
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        digits > 0 && rest[digits..].starts_with(after)
    })
}

/// Claude Code, then Codex, then Gemini CLI.
const CLAUDE_CODEX_GEMINI: &str = r#"
[[rungs]]
backend = "claude"
probe_model = "opus"

[[rungs]]
backend = "codex"

[[rungs]]
backend = "gemini"
"#;

#[test]
fn a_headless_prompt_falls_to_codex_exec_then_gemini_p() {
    let w = world();
    w.sb.write_config(CLAUDE_CODEX_GEMINI);
    w.sb.fake_cli("claude").exit(1).install();
    w.sb.fake_cli("codex").exit(1).install();

    let run = w.sb.run(&["-p", "hi"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(launched_words(&w.sb.calls("claude")[0].argv), ["-p", "hi"]);
    assert_eq!(w.sb.calls("codex")[0].argv, ["exec", "--", "hi"]);
    assert_eq!(
        launched_words(&w.sb.calls("gemini")[0].argv),
        ["--prompt=hi"]
    );
}

#[test]
fn continue_on_a_codex_rung_resumes_its_last_session() {
    let w = world();
    w.sb.write_config(CLAUDE_THEN_CODEX);
    w.sb.fake_cli("claude").exit(1).install();

    let run = w.sb.run(&["-c"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(w.sb.calls("claude")[0].argv, ["-c"]);
    // Codex's -c is --config key=value.
    assert_eq!(w.sb.calls("codex")[0].argv, ["resume", "--last"]);
}

#[test]
fn a_claude_model_is_dropped_on_another_vendors_rung_with_a_notice() {
    let w = world();
    w.sb.write_config(
        "[[rungs]]\nbackend = \"claude\"\nprobe_model = \"opus\"\n\n[[rungs]]\nbackend = \"codex\"\nrun_model = \"gpt-5-codex\"\n",
    );
    w.sb.fake_cli("claude").exit(1).install();

    let run = w.sb.run(&["--model", "sonnet", "-p", "hi"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(
        launched_words(&w.sb.calls("claude")[0].argv),
        ["--model", "sonnet", "-p", "hi"]
    );
    // The rung's own model, with Codex's model flag.
    assert_eq!(
        w.sb.calls("codex")[0].argv,
        ["exec", "-m", "gpt-5-codex", "--", "hi"]
    );
    assert!(
        run.stderr.contains(
            "[agent] --model sonnet is anthropic's model: dropped on Codex, which runs gpt-5-codex"
        ),
        "{}",
        run.stderr
    );
}

#[test]
fn a_cli_refusing_the_arguments_stops_the_cascade_and_says_who() {
    let w = world();
    w.sb.write_config(CLAUDE_CODEX_GEMINI);
    w.sb.fake_cli("claude").exit(1).install();
    // clap's usage error, as codex 0.171 exits on a word it does not know.
    w.sb.fake_cli("codex")
        .stderr("error: unexpected argument '--sandbox' found\n")
        .exit(2)
        .install();

    let run = w.sb.run(&["-p", "hi", "--sandbox", "nope"]);

    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(
        w.sb.calls("gemini").is_empty(),
        "bad arguments are not an outage"
    );
    assert!(
        run.stderr.contains(
            "[agent] Codex (its default model) refused the arguments (exit 2, its usage error) — not an outage, so no other rung is tried"
        ),
        "{}",
        run.stderr
    );
    assert!(
        !run.stderr.contains("Codex (its default model) exited 2"),
        "not counted as the rung failing: {}",
        run.stderr
    );
}

#[test]
fn a_cli_refusing_the_arguments_in_words_with_exit_1_stops_the_cascade_too() {
    // Claude Code (commander.js) and Gemini CLI (yargs) refuse a command line with exit 1,
    // as they fail for any other reason: their words tell it apart.
    let gemini_first = "[[rungs]]\nbackend = \"gemini\"\n\n[[rungs]]\nbackend = \"codex\"\n";
    for (cli, config, args, words, label) in [
        (
            "claude",
            CLAUDE_CODEX_GEMINI,
            &["--", "--frobnicate"][..],
            "error: unknown option '--frobnicate'\n",
            "Claude Code (its default model)",
        ),
        (
            // A value yargs does not take reaches it (`-o xml`); a flag it lacks never does.
            "gemini",
            gemini_first,
            &["-p", "hi", "--output-format", "xml"][..],
            "Invalid values:\n  Argument: output-format, Given: \"xml\"\n",
            "Gemini CLI",
        ),
    ] {
        let w = world();
        w.sb.write_config(config);
        w.sb.fake_cli(cli).stderr(words).exit(1).install();

        let run = w.sb.run(args);

        assert_eq!(run.code, Some(1), "{cli}: {run:?}");
        assert!(
            run.stderr.contains(words),
            "{cli}: its own words pass through: {}",
            run.stderr
        );
        assert!(
            run.stderr.contains(&format!("[agent] {label}"))
                && run
                    .stderr
                    .contains("refused the arguments (exit 1, it said"),
            "{cli}: {}",
            run.stderr
        );
        assert!(
            w.sb.calls("codex").is_empty(),
            "{cli}: bad arguments are not an outage: {}",
            run.stderr
        );
    }
    // The same exit with no usage words is a failure like any other: the next rung runs.
    let w = world();
    w.sb.write_config(CLAUDE_CODEX_GEMINI);
    w.sb.fake_cli("claude")
        .stderr("API Error: 500\n")
        .exit(1)
        .install();
    let run = w.sb.run(&["-p", "hi"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(w.sb.calls("codex").len(), 1, "{}", run.stderr);
}

#[test]
fn translate_false_passes_the_words_unchanged() {
    let w = world();
    w.sb.write_config(&format!(
        "[backends.codex]\ntranslate = false\n{CLAUDE_THEN_CODEX}"
    ));
    w.sb.fake_cli("claude").exit(1).install();

    let run = w.sb.run(&["-p", "hi", "--system-prompt", "be brief"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(
        w.sb.calls("codex")[0].argv,
        ["-p", "hi", "--system-prompt", "be brief"]
    );
}

#[test]
fn a_flag_codex_cannot_take_passes_it_over_unprobed_and_unrun() {
    let w = world();
    w.sb.write_config(CLAUDE_CODEX_GEMINI);
    w.sb.fake_cli("claude").exit(1).install();

    let run = w.sb.run(&["-p", "hi", "--resume", "0b7c5e2a-session"]);

    assert_eq!(run.code, Some(69), "{run:?}");
    assert!(w.sb.calls("codex").is_empty() && w.sb.calls("gemini").is_empty());
    assert_eq!(
        w.api.posts_for_model(crate::world::CODEX_MODEL),
        0,
        "a rung passed over for its arguments is not probed"
    );
    assert!(
        run.stderr.contains(
            "[agent] Codex cannot take --resume ID (a Claude Code session id never goes to another CLI): passed over"
        ),
        "{}",
        run.stderr
    );
}
