//! A prompt stays a prompt (DESIGN.md §23): the user's `--` after a word of the CLI's is kept
//! and every word after it is data; on another CLI's rung the prompt goes where that CLI reads
//! only a prompt, so no word of it becomes one of its flags or sub-commands; a form Claude Code
//! itself refuses runs nowhere.

use crate::support::{Reply, Rule, launched_words};
use crate::world::{World, world};

/// Claude Code's opus rung, capped (a usage limit), then `next`'s rung.
fn claude_capped_then(next: &str) -> World {
    let w = world();
    w.sb.fake_cli("opencode")
        .stdout("opencode answered\n")
        .install();
    w.sb.write_config(&format!(
        "[backends.opencode]\nprobe = {{ kind = \"none\" }}\n\n[[rungs]]\nbackend = \"claude\"\nprobe_model = \"opus\"\n\n[[rungs]]\nbackend = \"{next}\"\n"
    ));
    w.api
        .on(Rule::model("claude-opus-5").reply(Reply::anthropic_error(
            429,
            "rate_limit_error",
            "You have reached your usage limit",
        )));
    w
}

/// The argv of the one run of `cli`.
fn argv_of(w: &World, cli: &str) -> Vec<String> {
    let calls = w.sb.calls(cli);
    assert_eq!(calls.len(), 1, "{cli} runs once: {calls:?}");
    let argv = &calls[0].argv;
    // Gemini CLI starts a session under agent's id (`--session-id UUID`), as Claude Code
    // does, unless the words name a session or a sub-command of their own.
    let flags = argv.iter().position(|w| w == "--").unwrap_or(argv.len());
    if cli == "gemini" && argv[..flags].iter().any(|w| w == "--session-id") {
        return crate::support::launched_words(argv);
    }
    argv.clone()
}

#[test]
fn text_after_the_users_double_dash_reaches_each_cli_as_its_prompt_never_its_flag() {
    for (cli, expected) in [
        (
            "codex",
            &["exec", "--", "--dangerously-skip-permissions"][..],
        ),
        ("gemini", &["--prompt=--dangerously-skip-permissions"]),
        ("opencode", &["run", "--", "--dangerously-skip-permissions"]),
    ] {
        let w = claude_capped_then(cli);

        let run = w.sb.run(&["-p", "--", "--dangerously-skip-permissions"]);

        assert_eq!(run.code, Some(0), "{cli}: {run:?}");
        assert_eq!(argv_of(&w, cli), expected, "{cli}");
        assert!(w.sb.calls("claude").is_empty());
    }
}

#[test]
fn a_flag_shaped_word_with_the_prompt_on_stdin_is_the_prompt_after_codexs_double_dash() {
    let w = claude_capped_then("codex");
    let word = r#"--config=mcp_servers.x={command="sh",args=["-c","touch pwned"]}"#;

    let run = w.sb.run(&["-p", "--", word]);

    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(argv_of(&w, "codex"), ["exec", "--", word]);
}

#[test]
fn claude_code_itself_receives_the_double_dash_and_the_text_unchanged() {
    let w = world();

    let run = w.sb.run(&["-p", "--", "--dangerously-skip-permissions"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(
        launched_words(&argv_of(&w, "claude")),
        ["-p", "--", "--dangerously-skip-permissions"]
    );
}

#[test]
fn agents_double_dash_then_the_clis_own_passes_a_dash_leading_prompt() {
    let w = claude_capped_then("codex");

    let run = w.sb.run(&["--", "-p", "--", "-c"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(argv_of(&w, "codex"), ["exec", "--", "-c"]);
}

#[test]
fn a_one_word_prompt_naming_a_sub_command_stays_a_prompt() {
    for (cli, args, expected) in [
        ("codex", &["logout"][..], &["--", "logout"][..]),
        ("codex", &["-p", "review"], &["exec", "--", "review"]),
        (
            "codex",
            &["-p", "-c", "apply"],
            &["exec", "resume", "--last", "--", "apply"],
        ),
        ("gemini", &["mcp"], &["--prompt-interactive=mcp"]),
        ("gemini", &["-p", "hooks"], &["--prompt=hooks"]),
    ] {
        let w = claude_capped_then(cli);

        let run = w.sb.run(args);

        assert_eq!(run.code, Some(0), "{cli} {args:?}: {run:?}");
        assert_eq!(argv_of(&w, cli), expected, "{cli} {args:?}");
    }
}

#[test]
fn codexs_image_flag_cannot_swallow_the_prompt() {
    let w = claude_capped_then("codex");

    let run = w.sb.run(&["-p", "-i", "shot.png", "what is this"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(
        argv_of(&w, "codex"),
        ["exec", "-i", "shot.png", "--", "what is this"]
    );
}

#[test]
fn accept_edits_passes_codex_over_and_runs_a_cli_that_has_that_mode() {
    let w = world();
    w.sb.write_config(
        "[[rungs]]\nbackend = \"claude\"\nprobe_model = \"opus\"\n\n[[rungs]]\nbackend = \"codex\"\n\n[[rungs]]\nbackend = \"gemini\"\n",
    );
    w.api
        .on(Rule::model("claude-opus-5").reply(Reply::anthropic_error(
            429,
            "rate_limit_error",
            "You have reached your usage limit",
        )));

    let run =
        w.sb.run(&["-p", "--permission-mode", "acceptEdits", "fix the typo"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        w.sb.calls("codex").is_empty(),
        "codex's workspace-write runs commands unasked: more than acceptEdits"
    );
    assert!(
        run.stderr
            .contains("[agent] Codex cannot take --permission-mode acceptEdits"),
        "{}",
        run.stderr
    );
    assert_eq!(
        argv_of(&w, "gemini"),
        ["--approval-mode", "auto_edit", "--prompt=fix the typo"]
    );
}

#[test]
fn a_switch_given_a_value_is_a_usage_error_and_nothing_runs() {
    for args in [
        &["--print=hello"][..],
        &["-p", "hi", "--dangerously-skip-permissions=false"],
        &["-p=hello"],
    ] {
        let w = claude_capped_then("codex");

        let run = w.sb.run(args);

        assert_eq!(run.code, Some(2), "{args:?}: {run:?}");
        assert!(
            run.stderr
                .contains("takes no value, and Claude Code refuses it"),
            "{args:?}: {}",
            run.stderr
        );
        assert!(w.sb.calls("claude").is_empty() && w.sb.calls("codex").is_empty());
        assert_eq!(w.api.posts(), 0, "{args:?}: nothing probed either");
    }
}

#[test]
fn a_prompt_too_long_for_one_argument_passes_the_rung_over_and_the_next_runs() {
    let w = world();
    w.sb.fake_cli("opencode")
        .stdout("opencode answered\n")
        .install();
    w.sb.write_config(
        "[backends.opencode]\nprobe = { kind = \"none\" }\n\n[[rungs]]\nbackend = \"claude\"\nprobe_model = \"opus\"\n\n[[rungs]]\nbackend = \"codex\"\n\n[[rungs]]\nbackend = \"opencode\"\n",
    );
    w.api
        .on(Rule::model("claude-opus-5").reply(Reply::anthropic_error(
            429,
            "rate_limit_error",
            "You have reached your usage limit",
        )));
    // 140,000 bytes in 20,000 words: each fits an argument; joined (as codex takes one
    // prompt) they do not.
    let words: Vec<String> = (0..20_000).map(|i| format!("w{i:05}")).collect();
    let mut args = vec!["-p"];
    args.extend(words.iter().map(String::as_str));

    let run = w.sb.run(&args);

    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(w.sb.calls("codex").is_empty());
    assert!(
        run.stderr
            .contains("[agent] Codex cannot take a prompt of 139999 bytes in one argument"),
        "{}",
        run.stderr
    );
    let opencode = argv_of(&w, "opencode");
    assert_eq!(opencode[..2], ["run", "--"]);
    assert_eq!(opencode[2..], words[..]);
}

#[test]
fn a_cli_the_system_cannot_start_passes_to_the_next_rung_with_a_notice() {
    let w = claude_capped_then("codex");
    // One variable longer than an argument may be: starting codex fails with E2BIG.
    let big = "x".repeat(140_000);
    w.sb.write_config(&format!(
        "[backends.codex]\nenv = {{ AGENT_TEST_BIG = \"{big}\" }}\n\n[[rungs]]\nbackend = \"claude\"\nprobe_model = \"opus\"\n\n[[rungs]]\nbackend = \"codex\"\n\n[[rungs]]\nbackend = \"gemini\"\n"
    ));

    let run = w.sb.run(&["-p", "hi"]);

    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(w.sb.calls("codex").is_empty());
    assert!(
        run.stderr
            .contains("[agent] Codex (its default model) cannot start: starting ")
            && run.stderr.contains("its command line is too long to start"),
        "{}",
        run.stderr
    );
    assert_eq!(argv_of(&w, "gemini"), ["--prompt=hi"]);
}
