//! The dialect engine, run through each CLI's table.

use super::*;
use crate::adapter::{Family, codex, dialects, gemini, opencode};

fn run(dialect: &Dialect, args: &[&str]) -> Result<Translation, Refusal> {
    run_with(dialect, args, None)
}

fn run_with(dialect: &Dialect, args: &[&str], model: Option<&str>) -> Result<Translation, Refusal> {
    let args: Vec<OsString> = args.iter().map(OsString::from).collect();
    let vendor = match dialect.command {
        "codex" => "openai",
        "gemini" => "google",
        _ => "opencode",
    };
    translate(
        Some(dialect),
        &Request {
            args: &args,
            model,
            model_flag: Some("--model"),
            vendor,
            own: [&[], &[]],
            resume: None,
        },
    )
}

fn argv(dialect: &Dialect, args: &[&str]) -> Vec<String> {
    run(dialect, args)
        .unwrap_or_else(|r| panic!("{r}"))
        .argv
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect()
}

/// Every form × every CLI: what the dialect says for each (`None`: passed over).
#[test]
fn every_form_in_every_dialect() {
    type Row = (
        &'static [&'static str],
        [Option<&'static [&'static str]>; 3],
    );
    let rows: &[Row] = &[
        (
            &["-p", "explain this bug"],
            [
                Some(&["exec", "--", "explain this bug"]),
                Some(&["--prompt=explain this bug"]),
                Some(&["run", "--", "explain this bug"]),
            ],
        ),
        (
            &["--print", "a", "b"],
            [
                Some(&["exec", "--", "a b"]),
                Some(&["--prompt=a b"]),
                Some(&["run", "--", "a", "b"]),
            ],
        ),
        (
            &["-c"],
            [
                Some(&["resume", "--last"]),
                Some(&["--resume", "latest"]),
                Some(&["-c"]),
            ],
        ),
        (
            &["-p", "--continue", "go on"],
            [
                Some(&["exec", "resume", "--last", "--", "go on"]),
                Some(&["--resume", "latest", "--prompt=go on"]),
                Some(&["run", "-c", "--", "go on"]),
            ],
        ),
        (&["--resume"], [Some(&["resume"]), None, None]),
        (
            &["-p", "-c", "--permission-mode", "plan", "go on"],
            [
                None,
                Some(&[
                    "--resume",
                    "latest",
                    "--approval-mode",
                    "plan",
                    "--prompt=go on",
                ]),
                Some(&["run", "-c", "--agent", "plan", "--", "go on"]),
            ],
        ),
        (&["fix it", "--resume"], [None, None, None]),
        (&["--resume", "0b7c-session"], [None, None, None]),
        (
            &["-p", "hi", "--model", "gpt-5.1"],
            [
                Some(&["exec", "-m", "gpt-5.1", "--", "hi"]),
                Some(&["--prompt=hi"]),
                Some(&["run", "--", "hi"]),
            ],
        ),
        (
            &["-p", "hi", "--model", "claude-sonnet-5"],
            [
                Some(&["exec", "--", "hi"]),
                Some(&["--prompt=hi"]),
                Some(&["run", "--", "hi"]),
            ],
        ),
        (
            &["-p", "hi", "--model=gemini-3-pro"],
            [
                Some(&["exec", "--", "hi"]),
                Some(&["-m", "gemini-3-pro", "--prompt=hi"]),
                Some(&["run", "--", "hi"]),
            ],
        ),
        (
            &["-p", "hi", "--model", "mock/gpt-x"],
            [
                Some(&["exec", "-m", "mock/gpt-x", "--", "hi"]),
                Some(&["-m", "mock/gpt-x", "--prompt=hi"]),
                Some(&["run", "-m", "mock/gpt-x", "--", "hi"]),
            ],
        ),
        (
            &["-p", "hi", "--output-format", "json"],
            [
                Some(&["exec", "--json", "--", "hi"]),
                Some(&["-o", "json", "--prompt=hi"]),
                Some(&["run", "--format", "json", "--", "hi"]),
            ],
        ),
        (
            &["-p", "hi", "--output-format", "stream-json", "--verbose"],
            [
                Some(&["exec", "--json", "--", "hi"]),
                Some(&["-o", "stream-json", "--prompt=hi"]),
                Some(&["run", "--format", "json", "--", "hi"]),
            ],
        ),
        (
            &["--dangerously-skip-permissions", "fix it"],
            [
                Some(&["--dangerously-bypass-approvals-and-sandbox", "--", "fix it"]),
                Some(&["--yolo", "--prompt-interactive=fix it"]),
                Some(&["--auto", "--prompt=fix it"]),
            ],
        ),
        (
            &["-p", "hi", "--dangerously-skip-permissions"],
            [
                Some(&[
                    "exec",
                    "--dangerously-bypass-approvals-and-sandbox",
                    "--",
                    "hi",
                ]),
                Some(&["--yolo", "--prompt=hi"]),
                Some(&["run", "--auto", "--", "hi"]),
            ],
        ),
        // After `--` every word is the prompt: a flag's name is only text.
        (
            &["-p", "--", "--dangerously-skip-permissions"],
            [
                Some(&["exec", "--", "--dangerously-skip-permissions"]),
                Some(&["--prompt=--dangerously-skip-permissions"]),
                Some(&["run", "--", "--dangerously-skip-permissions"]),
            ],
        ),
        (
            &["-p", "--", "-c", "--model", "x"],
            [
                Some(&["exec", "--", "-c --model x"]),
                Some(&["--prompt=-c --model x"]),
                Some(&["run", "--", "-c", "--model", "x"]),
            ],
        ),
        // A word that names one of the CLI's sub-commands is a prompt too.
        (
            &["logout"],
            [
                Some(&["--", "logout"]),
                Some(&["--prompt-interactive=logout"]),
                Some(&["--prompt=logout"]),
            ],
        ),
        (
            &["-p", "mcp"],
            [
                Some(&["exec", "--", "mcp"]),
                Some(&["--prompt=mcp"]),
                Some(&["run", "--", "mcp"]),
            ],
        ),
        (
            &["--permission-mode", "plan"],
            [
                Some(&["--sandbox", "read-only"]),
                Some(&["--approval-mode", "plan"]),
                Some(&["--agent", "plan"]),
            ],
        ),
        // Codex has no mode that edits without running commands unasked.
        (
            &["--permission-mode", "acceptEdits"],
            [None, Some(&["--approval-mode", "auto_edit"]), None],
        ),
        (
            &["--add-dir", "../lib"],
            [
                Some(&["--add-dir", "../lib"]),
                Some(&["--include-directories", "../lib"]),
                None,
            ],
        ),
        (
            &["fix the tests"],
            [
                Some(&["--", "fix the tests"]),
                Some(&["--prompt-interactive=fix the tests"]),
                Some(&["--prompt=fix the tests"]),
            ],
        ),
        (&[], [Some(&[]), Some(&[]), Some(&[])]),
        (
            &["-p"],
            [Some(&["exec"]), Some(&["--prompt="]), Some(&["run"])],
        ),
        (
            &["--output-format", "json"],
            [Some(&[]), Some(&[]), Some(&[])],
        ),
        (
            &["--permission-mode", "bypassPermissions"],
            [
                Some(&["--dangerously-bypass-approvals-and-sandbox"]),
                Some(&["--yolo"]),
                Some(&["--auto"]),
            ],
        ),
        (&["--permission-mode", "dontAsk"], [None, None, None]),
        (
            &["-p", "hi", "--debug", "api", "--fallback-model", "sonnet"],
            [
                Some(&["exec", "--", "hi"]),
                Some(&["--prompt=hi"]),
                Some(&["run", "--", "hi"]),
            ],
        ),
        (&["--system-prompt", "be brief"], [None, None, None]),
        // A switch given a value is a form Claude Code refuses: never translated.
        (&["--print=hello"], [None, None, None]),
        (&["-p=hello"], [None, None, None]),
        (
            &["-p", "hi", "--dangerously-skip-permissions=false"],
            [None, None, None],
        ),
        (
            &["-p", "hi", "--json"],
            [Some(&["exec", "--json", "--", "hi"]), None, None],
        ),
        (&["--json"], [None, None, None]),
        (&["--bogus-flag"], [None, None, None]),
        (
            &["-p", "hi", "--skip-git-repo-check"],
            [
                Some(&["exec", "--skip-git-repo-check", "--", "hi"]),
                None,
                None,
            ],
        ),
        // Codex's `-i` takes every word after it: the prompt after `--` is not one.
        (
            &["-p", "-i", "shot.png", "what is this"],
            [
                Some(&["exec", "-i", "shot.png", "--", "what is this"]),
                Some(&["-i", "shot.png", "--prompt=what is this"]),
                Some(&["run", "-i", "--", "shot.png", "what is this"]),
            ],
        ),
    ];
    let dialects = [&codex::DIALECT, &gemini::DIALECT, &opencode::DIALECT];
    for (args, expected) in rows {
        for (dialect, expected) in dialects.iter().zip(expected) {
            let got = run(dialect, args);
            match expected {
                Some(words) => {
                    let got = got
                        .unwrap_or_else(|r| panic!("{} {args:?}: refused: {r}", dialect.command));
                    let got: Vec<String> = got
                        .argv
                        .iter()
                        .map(|a| a.to_string_lossy().into_owned())
                        .collect();
                    assert_eq!(got, *words, "{} {args:?}", dialect.command);
                }
                None => assert!(
                    got.is_err(),
                    "{} {args:?}: should be passed over, got {got:?}",
                    dialect.command
                ),
            }
        }
    }
}

#[test]
fn the_rungs_own_model_goes_with_the_clis_model_flag_after_the_start() {
    let out = run_with(&codex::DIALECT, &["-p", "hi"], Some("gpt-5-codex")).unwrap();
    assert_eq!(out.argv, os(&["exec", "-m", "gpt-5-codex", "--", "hi"]));
    assert!(
        out.rules.iter().any(|r| r.starts_with("-p → exec")),
        "{out:?}"
    );
}

#[test]
fn another_vendors_model_is_dropped_with_a_notice_and_the_rungs_runs() {
    let out = run_with(
        &codex::DIALECT,
        &["--model", "opus", "-p", "hi"],
        Some("gpt-5"),
    )
    .unwrap();
    assert_eq!(out.argv, os(&["exec", "-m", "gpt-5", "--", "hi"]));
    assert_eq!(
        out.notices,
        ["--model opus is anthropic's model: dropped on Codex, which runs gpt-5"]
    );
}

#[test]
fn a_model_of_the_rungs_vendor_replaces_the_rungs_own() {
    let out = run_with(
        &codex::DIALECT,
        &["-p", "hi", "--model", "o3"],
        Some("gpt-5"),
    )
    .unwrap();
    assert_eq!(out.argv, os(&["exec", "-m", "o3", "--", "hi"]));
}

#[test]
fn a_claude_session_id_never_goes_to_another_cli() {
    for dialect in dialects() {
        let refusal = run(dialect, &["-r", "4f1d2c"]).unwrap_err();
        assert_eq!(refusal.flag, "-r ID");
        assert!(refusal.to_string().ends_with(": passed over"), "{refusal}");
    }
}

#[test]
fn an_untranslatable_flag_is_named() {
    let refusal = run(&codex::DIALECT, &["-p", "hi", "--foo"]).unwrap_err();
    assert_eq!(
        refusal.to_string(),
        "Codex cannot take --foo (no flag of Claude Code's or its own): passed over"
    );
}

#[test]
fn the_clis_own_flags_keep_their_values() {
    assert_eq!(
        argv(&codex::DIALECT, &["-p", "--sandbox", "read-only", "hi"]),
        ["exec", "--sandbox", "read-only", "--", "hi"]
    );
}

#[test]
fn without_a_dialect_the_words_go_unchanged_after_the_model_flag() {
    let args: Vec<OsString> = os(&["-p", "hi", "--foo"]);
    let out = translate(
        Family::Claude.dialect(),
        &Request {
            args: &args,
            model: Some("claude-sonnet-5"),
            model_flag: Some("--model"),
            vendor: "anthropic",
            own: [&[], &[]],
            resume: None,
        },
    )
    .unwrap();
    assert_eq!(
        out.argv,
        os(&["--model", "claude-sonnet-5", "-p", "hi", "--foo"])
    );
    assert!(out.rules.is_empty());
    assert!(Family::Other.dialect().is_none());
}

#[test]
fn words_that_are_not_utf8_keep_their_bytes() {
    use std::os::unix::ffi::OsStrExt as _;
    let args = vec![
        OsString::from("-p"),
        OsStr::from_bytes(b"caf\xe9").to_os_string(),
    ];
    let out = translate(
        Some(&codex::DIALECT),
        &Request {
            args: &args,
            model: None,
            model_flag: None,
            vendor: "openai",
            own: [&[], &[]],
            resume: None,
        },
    )
    .unwrap();
    assert_eq!(out.argv[2].as_bytes(), b"caf\xe9");
}

/// The tables name only flags the CLIs have: each dialect's words for a form are its
/// own flags, or start words.
#[test]
fn every_word_a_dialect_says_is_one_of_its_clis_flags() {
    for dialect in dialects() {
        for rule in dialect.rules {
            let words: Vec<&str> = match rule.words {
                Words::Say(words) => words.to_vec(),
                Words::Values(table) => table.iter().flat_map(|(_, w)| w.to_vec()).collect(),
                Words::Drop => Vec::new(),
            };
            for word in words.iter().filter(|w| w.starts_with('-')) {
                assert!(
                    dialect.own_flag(word).is_some(),
                    "{}: {word} is not in its flags",
                    dialect.command
                );
            }
        }
        assert!(dialect.own_flag(dialect.model_flag) == Some(true));
    }
}

/// Each CLI's `--help` at the version its table names, as captured from the npm
/// registry's release (`tests/fixtures/help/`).
fn help_of(command: &str) -> &'static str {
    match command {
        "claude" => include_str!("../../../tests/fixtures/help/claude-2.1.332.txt"),
        "codex" => include_str!("../../../tests/fixtures/help/codex-0.171.0.txt"),
        "gemini" => include_str!("../../../tests/fixtures/help/gemini-0.61.0.txt"),
        "opencode" => include_str!("../../../tests/fixtures/help/opencode-1.18.33.txt"),
        "stand-in" => include_str!("../../../tests/fixtures/help/stand-in-1.0.0.txt"),
        _ => panic!("no help captured for {command}"),
    }
}

/// Every flag a help text defines, with what follows it: `Some(true)` a value
/// (`<X>`, yargs' `[string]`), `None` an optional one (`[X]`), `Some(false)` none.
fn defined_flags(help: &str) -> Vec<(String, Option<bool>)> {
    let lines: Vec<&str> = help.lines().collect();
    let mut flags = Vec::new();
    for (at, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        // A definition is indented a little; a description's wrapped line, far.
        let indent = line.len() - trimmed.len();
        if !trimmed.starts_with('-') || indent == 0 || indent > 8 {
            continue;
        }
        let definition = trimmed.split("  ").next().unwrap_or(trimmed);
        let tokens: Vec<&str> = definition
            .split([' ', ','])
            .filter(|t| !t.is_empty())
            .collect();
        let typed = |kinds: &[&str]| {
            // A type wrapped onto the next line, unless that line is the next flag.
            let next = lines
                .get(at + 1)
                .copied()
                .filter(|l| !l.trim_start().starts_with('-'))
                .unwrap_or("");
            kinds.iter().any(|k| line.contains(k) || next.contains(k))
        };
        for (i, token) in tokens.iter().enumerate() {
            if !token.starts_with('-') {
                continue;
            }
            let after = tokens[i + 1..].iter().find(|t| !t.starts_with('-'));
            let arity = match after {
                Some(t) if t.starts_with('<') => Some(true),
                Some(t) if t.starts_with('[') => None,
                _ => Some(typed(&["[string]", "[array]", "[number]"])),
            };
            let name = token.split('=').next().unwrap_or(token);
            flags.push((name.to_string(), arity));
        }
    }
    flags
}

/// The tables against the CLIs' own `--help`: every flag a dialect names is one its CLI
/// defines, taking a value exactly when the help says it does; and every flag Claude
/// Code's help defines is in [`CLAUDE_FLAGS`] with its arity, so its values are never
/// read as a prompt.
#[test]
fn the_tables_match_each_clis_help_at_the_version_named() {
    for dialect in dialects() {
        let defined = defined_flags(help_of(dialect.command));
        for (flag, takes_value) in dialect.flags {
            let found = defined.iter().find(|(name, _)| name == flag);
            let Some((_, arity)) = found else {
                panic!(
                    "{} {}: no {flag} in its --help",
                    dialect.command, dialect.checked
                );
            };
            assert_eq!(
                *arity,
                Some(*takes_value),
                "{} {}: {flag} takes a value?",
                dialect.command,
                dialect.checked
            );
        }
    }
    // Where a help is captured per sub-command, each start takes exactly the flags its
    // sub-command's help defines, less those it says it lacks.
    for dialect in dialects() {
        let help = help_of(dialect.command);
        for start in dialect.starts {
            let mut heading = vec!["###", dialect.command];
            heading.extend(
                start
                    .words
                    .iter()
                    .take_while(|w| !w.starts_with('-') && **w != SESSION_ID),
            );
            heading.push("--help");
            let heading = heading.join(" ");
            let Some(section) = help.split(&format!("{heading}\n")).nth(1) else {
                assert!(!help.contains("### "), "no {heading} captured");
                continue;
            };
            let section = section.split("### ").next().unwrap_or(section);
            let defined = defined_flags(section);
            for word in start.lacking() {
                assert!(
                    !defined.iter().any(|(name, _)| name == word),
                    "{heading}: defines {word}"
                );
            }
            for (flag, _) in dialect.flags {
                assert!(
                    start.lacking().any(|w| w == *flag)
                        || defined.iter().any(|(name, _)| name == flag),
                    "{heading}: has no {flag}, and `without` does not say so"
                );
            }
        }
    }
    let defined = defined_flags(help_of("claude"));
    for (name, arity) in &defined {
        let flag = claude_flag(name).unwrap_or_else(|| panic!("Claude Code's {name}"));
        let expected = match flag.arity {
            Arity::Flag => Some(false),
            Arity::Value => Some(true),
            Arity::Optional => None,
        };
        assert_eq!(*arity, expected, "Claude Code's {name} takes a value?");
    }
    for flag in CLAUDE_FLAGS {
        for name in flag.names {
            assert!(
                defined.iter().any(|(defined, _)| defined == name),
                "Claude Code 2.1.332 has no {name}"
            );
        }
    }
}

#[test]
fn a_switch_given_a_value_is_what_claude_code_refuses() {
    let refused = |args: &[&str]| refused_by_claude(&os(args));
    for args in [
        &["--print=hello"][..],
        &["-p=hello"],
        &["-p", "hi", "--dangerously-skip-permissions=false"],
        &["--verbose=1", "-p", "hi"],
        &["-c=yes"],
    ] {
        assert!(refused(args).is_some(), "{args:?}");
    }
    assert_eq!(
        refused(&["--print=hello"]).unwrap(),
        "--print=hello — --print takes no value, and Claude Code refuses it (\"unknown option\"); write --print alone"
    );
    // A value of a flag that takes one, a prompt, and anything after `--` are words.
    for args in [
        &["-p", "--append-system-prompt", "--print=x", "hi"][..],
        &["-p", "--", "--print=hello"],
        &["--model=opus", "--resume=4f1d", "-p", "--verbose"],
    ] {
        assert_eq!(refused(args), None, "{args:?}");
    }
}

#[test]
fn a_prompt_too_long_for_one_argument_passes_the_rung_over_before_it_runs() {
    let words: Vec<String> = (0..20_000).map(|i| format!("w{i:05}")).collect();
    let mut args = vec!["-p"];
    args.extend(words.iter().map(String::as_str));
    // Joined for Codex and Gemini CLI: one word over the limit.
    for dialect in [&codex::DIALECT, &gemini::DIALECT] {
        let refusal = run(dialect, &args).unwrap_err();
        assert!(
            refusal.flag.starts_with("a prompt of 1")
                && refusal.flag.ends_with(" bytes in one argument"),
            "{}: {refusal}",
            dialect.command
        );
    }
    // opencode run takes the words one by one.
    assert_eq!(
        run(&opencode::DIALECT, &args).unwrap().argv.len(),
        2 + words.len()
    );
}

#[test]
fn vendors_of_models() {
    assert_eq!(vendor_of_model("claude-opus-5"), Some("anthropic"));
    assert_eq!(vendor_of_model("sonnet[1m]"), Some("anthropic"));
    assert_eq!(vendor_of_model("gpt-5-codex"), Some("openai"));
    assert_eq!(vendor_of_model("gemini-3-pro"), Some("google"));
    assert_eq!(vendor_of_model("anthropic/claude-sonnet-5"), None);
    assert_eq!(vendor_of_model("my-model"), None);
}

#[test]
fn a_backends_own_words_go_before_the_prompts_end_of_options_for_their_form_only() {
    let headless = ["--skip-git-repo-check".to_string()];
    let screen = ["--search".to_string()];
    let say = |args: &[&str]| {
        let args = os(args);
        translate(
            Some(&codex::DIALECT),
            &Request {
                args: &args,
                model: None,
                model_flag: None,
                vendor: "openai",
                own: [&screen, &headless],
                resume: None,
            },
        )
        .unwrap()
        .argv
    };
    assert_eq!(
        say(&["-p", "--", "--not-a-flag"]),
        os(&["exec", "--skip-git-repo-check", "--", "--not-a-flag"])
    );
    assert_eq!(say(&["hi"]), os(&["--search", "--", "hi"]));
}

fn resuming(dialect: Option<&Dialect>, args: &[&str], id: &str) -> Result<Vec<String>, Refusal> {
    let args: Vec<OsString> = args.iter().map(OsString::from).collect();
    let out = translate(
        dialect,
        &Request {
            args: &args,
            model: None,
            model_flag: None,
            vendor: "any",
            own: [&[], &[]],
            resume: Some(id),
        },
    )?;
    Ok(out
        .argv
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect())
}

#[test]
fn agents_resume_of_a_session_by_id_is_said_in_each_clis_own_words() {
    type Row<'a> = (&'a [&'a str], [&'a [&'a str]; 3]);
    let id = "0199a7c2-5e1b-7d30-9f4e-3c2b1a0f9e8d";
    let rows: &[Row<'_>] = &[
        (
            &["-p", "--", "go on"],
            [
                &["exec", "resume", id, "--", "go on"],
                &["--resume", id, "--prompt=go on"],
                &["run", "--session", id, "--", "go on"],
            ],
        ),
        (
            &[],
            [&["resume", id], &["--resume", id], &["--session", id]],
        ),
        (
            &["-p", "--dangerously-skip-permissions", "--", "go on"],
            [
                &[
                    "exec",
                    "resume",
                    id,
                    "--dangerously-bypass-approvals-and-sandbox",
                    "--",
                    "go on",
                ],
                &["--resume", id, "--yolo", "--prompt=go on"],
                &["run", "--session", id, "--auto", "--", "go on"],
            ],
        ),
    ];
    for (args, expected) in rows {
        for (dialect, want) in [&codex::DIALECT, &gemini::DIALECT, &opencode::DIALECT]
            .into_iter()
            .zip(expected)
        {
            let got = resuming(Some(dialect), args, id)
                .unwrap_or_else(|r| panic!("{} {args:?}: {r}", dialect.command));
            assert_eq!(&got, want, "{} {args:?}", dialect.command);
        }
    }
    // Claude Code's own words, for a CLI that takes them unchanged.
    assert_eq!(
        resuming(None, &["-p", "--", "go on"], id).unwrap(),
        ["--resume", id, "-p", "--", "go on"]
    );
}

#[test]
fn a_resume_refuses_an_id_that_is_not_a_plain_name_and_a_session_of_the_users() {
    for id in [
        "--yolo",
        "",
        "a b",
        "x;rm -rf ~",
        "ses\u{1b}[2J",
        &"a".repeat(200),
        // A selector of the CLI's, never an id.
        "5",
        "latest",
    ] {
        for dialect in [Some(&codex::DIALECT), Some(&gemini::DIALECT), None] {
            let refused = resuming(dialect, &["-p", "--", "go on"], id)
                .expect_err(&format!("{id:?} was taken"));
            assert!(refused.why.contains("not a plain name"), "{refused}");
        }
    }
    // The user's own session words beside agent's resume: which session would run?
    for args in [&["-p", "-c", "--", "go on"][..], &["--resume"][..]] {
        let refused = resuming(Some(&codex::DIALECT), args, "ses_1").unwrap_err();
        assert!(
            refused.why.contains("resumes a session of its own"),
            "{refused}"
        );
    }
}

#[test]
fn a_new_session_under_agents_id_is_said_by_the_clis_that_take_one() {
    let args = ["-p", "--session-id", "5f0c", "--", "hi"];
    assert_eq!(
        argv(&gemini::DIALECT, &args),
        ["--session-id", "5f0c", "--prompt=hi"]
    );
    for dialect in [&codex::DIALECT, &opencode::DIALECT] {
        assert!(run(dialect, &args).is_err(), "{}", dialect.command);
    }
}
