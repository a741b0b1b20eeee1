//! The command line and the configuration: help, list, dry-run, errors that name the file,
//! line and key, and the generated man page and completions.

use crate::support::{Reply, Rule, Sandbox, launched_words};
use crate::world::world;

#[test]
fn with_no_config_file_list_shows_the_builtin_table() {
    let sb = Sandbox::new();
    sb.fake_cli("claude").install();

    let run = sb.run(&["--list"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.stdout
            .contains("config: built-in (no configuration file)"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("rungs (built-in table):"),
        "{}",
        run.stdout
    );
    let rows: Vec<&str> = run
        .stdout
        .lines()
        .skip_while(|l| !l.starts_with("rungs"))
        .skip(2)
        // The table ends at the blank line before what explains its order.
        .take_while(|l| !l.is_empty())
        .collect();
    let backends: Vec<&str> = rows
        .iter()
        .map(|r| r.split_whitespace().nth(1).unwrap())
        .collect();
    assert_eq!(
        backends,
        [
            "claude",
            "claude",
            "claude-proxy",
            "claude-proxy",
            "codex",
            "agy",
            "gemini",
            "opencode"
        ]
    );
    assert!(
        rows[0].contains("claude-opus-5") && rows[0].contains("its default model"),
        "{}",
        rows[0]
    );
    assert!(
        rows[1].contains("claude-sonnet-5  claude-sonnet-5"),
        "{}",
        rows[1]
    );
    assert!(
        rows[4].contains("SKIP not installed"),
        "codex is not installed: {}",
        rows[4]
    );
    assert!(
        !rows[0].contains("SKIP"),
        "claude is installed: {}",
        rows[0]
    );
}

#[test]
fn list_json_is_machine_readable() {
    let sb = Sandbox::new();

    let run = sb.run(&["--list", "--json"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    let json: serde_json::Value = serde_json::from_str(&run.stdout).expect("valid JSON");
    assert_eq!(json["rungs"].as_array().unwrap().len(), 8);
    assert_eq!(json["rungs"][6]["backend"], "gemini");
    assert_eq!(json["rungs"][6]["state"], "skip");
    assert_eq!(json["rungs"][7]["backend"], "opencode");
    assert_eq!(json["rungs"][7]["state"], "skip");
}

#[test]
fn dry_run_names_the_cli_arguments_and_reason_and_runs_nothing() {
    let w = world();
    w.api
        .on(Rule::model("claude-opus-5").reply(Reply::anthropic_error(
            429,
            "rate_limit_error",
            "capped",
        )));

    let run = w.sb.run(&["--dry-run", "-p", "hi"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    let claude = w.sb.bin_dir().join("claude");
    assert!(
        run.stdout
            .contains("would run: Claude Code (claude-sonnet-5) — rung 2 of 8"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(&format!(
            "command:   {} --model claude-sonnet-5 -p hi",
            claude.display()
        )),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("why:       127.0.0.1"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("claude-sonnet-5 answered — probed now"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("passed:    rung 1 claude: rate_limited: claude-opus-5 unavailable"),
        "{}",
        run.stdout
    );
    assert!(w.sb.calls("claude").is_empty(), "a dry run runs nothing");
}

#[test]
fn dry_run_json_lists_argv_env_names_and_the_passed_rungs() {
    let w = world();
    w.sb.env_remove("AGENT_PROXY_URL");
    w.sb.write_config("[[rungs]]\nbackend = \"claude-proxy\"\nprobe_model = \"sonnet\"\nrun_model = \"sonnet\"\n\n[[rungs]]\nbackend = \"gemini\"\n");

    let run = w.sb.run(&["--dry-run", "--json", "-p", "hi"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    let json: serde_json::Value = serde_json::from_str(&run.stdout).expect("valid JSON");
    assert_eq!(json["backend"], "gemini");
    assert_eq!(json["argv"][1], "--prompt=hi");
    assert_eq!(json["passed"][0]["class"], "misconfigured");
    // No proxy is no option, like a CLI not installed: skipped, not failed.
    assert_eq!(
        json["passed"][0]["reason"],
        "no proxy (AGENT_PROXY_URL unset)"
    );
}

#[test]
fn dry_run_on_each_rung_shows_the_command_line_in_its_clis_words_and_the_rule() {
    let w = world();
    w.sb.fake_cli("opencode").install();
    let cases = [
        ("claude", "claude -p hi", None),
        (
            "codex",
            "codex exec -- hi",
            Some("dialect:   -p → exec (its headless run; codex's -p is --profile)"),
        ),
        (
            "gemini",
            "gemini --prompt=hi",
            Some(
                "dialect:   -p → --prompt=PROMPT (its headless run takes the prompt as the flag's value)",
            ),
        ),
        (
            "opencode",
            "opencode run -- hi",
            Some("dialect:   -p → run (its headless run; opencode's -p is --password)"),
        ),
    ];
    for (backend, command, rule) in cases {
        let probe = if backend == "claude" {
            "probe_model = \"opus\"\n"
        } else {
            ""
        };
        w.sb.write_config(&format!(
            "[backends.opencode]\nlabel = \"opencode\"\ncommand = \"opencode\"\nvendor = \"opencode\"\nprobe = {{ kind = \"none\" }}\n\n[[rungs]]\nbackend = \"{backend}\"\n{probe}"
        ));

        let run = w.sb.run(&["--dry-run", "-p", "hi"]);

        assert_eq!(run.code, Some(0), "{backend}: {run:?}");
        let bin = w.sb.bin_dir().display().to_string();
        assert!(
            run.stdout
                .contains(&format!("command:   {bin}/{command}\n")),
            "{backend}: {}",
            run.stdout
        );
        match rule {
            Some(rule) => assert!(run.stdout.contains(rule), "{backend}: {}", run.stdout),
            None => assert!(!run.stdout.contains("dialect:"), "{}", run.stdout),
        }
        let json = w.sb.run(&["--dry-run", "--json", "-p", "hi"]);
        let json: serde_json::Value = serde_json::from_str(&json.stdout).expect("valid JSON");
        // Codex and opencode also say where the prompt went: after their own `--`.
        let after_their_double_dash = matches!(backend, "codex" | "opencode");
        if after_their_double_dash {
            assert!(
                run.stdout.contains("dialect:   PROMPT → -- PROMPT (after its end of options: no word of it is a flag or a sub-command)"),
                "{backend}: {}",
                run.stdout
            );
        }
        assert_eq!(
            json["dialect"].as_array().map(Vec::len),
            Some(usize::from(rule.is_some()) + usize::from(after_their_double_dash)),
            "{backend}: {json}"
        );
    }
    for cli in ["claude", "codex", "gemini", "opencode"] {
        assert!(w.sb.calls(cli).is_empty(), "a dry run runs nothing");
    }
}

#[test]
fn a_slip_of_agents_own_option_is_a_usage_error_with_a_suggestion_and_nothing_runs() {
    let w = world();

    let run = w.sb.run(&["--stauts"]);

    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(
        run.stderr
            .contains("unknown option --stauts: did you mean --status?"),
        "{}",
        run.stderr
    );
    assert!(w.sb.calls("claude").is_empty());
    assert_eq!(w.api.posts(), 0, "nothing probed either");
    // After `--` it is the CLI's word.
    let run = w.sb.run(&["--", "--stauts"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(launched_words(&w.sb.calls("claude")[0].argv), ["--stauts"]);
}

#[test]
fn help_lists_only_what_works_today() {
    let run = Sandbox::new().run(&["--help"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    for flag in [
        "--use",
        "--dry-run",
        "--list",
        "--config",
        "--json",
        "--color",
        "--quiet",
        "--version",
        "--status",
        "--check-fallback",
        "--budget",
        "--doctor",
        "--install-watchdog",
        "--uninstall-watchdog",
        "--relay",
        "--accounts",
        "--usage",
    ] {
        assert!(run.stdout.contains(flag), "--help lacks {flag}");
    }
    assert!(
        !run.stdout.contains("--generate-man"),
        "--help offers the packagers' hidden --generate-man"
    );
}

fn config_error(toml: &str) -> String {
    let sb = Sandbox::new();
    sb.write_config(toml);
    let run = sb.run(&["--list"]);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(run.stdout.is_empty());
    let path = sb.config_path().display().to_string();
    assert!(
        run.stderr.starts_with(&format!("agent: {path}:")),
        "{}",
        run.stderr
    );
    run.stderr.replace(&path, "CONFIG")
}

#[test]
fn bad_toml_names_the_file_and_line() {
    let err = config_error("fastfail_seconds = 3\nhedge_ms = \n");
    assert!(err.starts_with("agent: CONFIG:2:"), "{err}");
}

/// A typo of a key is a warning, not a stop (see tests/config_errors.rs): the report runs.
#[test]
fn an_unknown_key_is_a_warning_naming_the_file_line_and_key() {
    let sb = Sandbox::new();
    sb.write_config("[backends.claude]\ncommand = \"claude\"\nmodle_flag = \"-m\"\n");
    let run = sb.run(&["--list"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let path = sb.config_path().display().to_string();
    assert!(
        run.stderr.contains(&format!(
            "[agent] config: unknown key \"backends.claude.modle_flag\" in {path}:3 — did you mean backends.claude.model_flag? (ignored)"
        )),
        "{}",
        run.stderr
    );
}

#[test]
fn an_unknown_backend_names_the_file_line_and_key() {
    let err = config_error("[[rungs]]\nbackend = \"claude\"\n\n[[rungs]]\nbackend = \"gemeni\"\n");
    assert!(
        err.starts_with("agent: CONFIG:5: rungs[2].backend: unknown backend \"gemeni\""),
        "{err}"
    );
}

#[test]
fn an_alias_that_resolves_to_nothing_names_the_file_line_and_key() {
    let err = config_error("[backends.claude]\nmodels = { opus = \"\" }\n");
    assert!(
        err.starts_with(
            "agent: CONFIG:2: backends.claude.models.opus: the alias resolves to nothing"
        ),
        "{err}"
    );
}

#[test]
fn a_config_named_on_the_command_line_must_exist() {
    let sb = Sandbox::new();
    let run = sb.run(&["--config", "/nonexistent/agent.toml", "--list"]);
    assert_ne!(run.code, Some(0));
    assert!(
        run.stderr.contains("/nonexistent/agent.toml"),
        "{}",
        run.stderr
    );
}

#[test]
fn environment_overrides_win_over_the_file() {
    let sb = Sandbox::new();
    sb.write_config("probe_timeout_seconds = 10\n");
    sb.env("AGENT_PROBE_TIMEOUT", "soon");
    let run = sb.run(&["--list"]);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(
        run.stderr.contains("AGENT_PROBE_TIMEOUT=soon"),
        "{}",
        run.stderr
    );
}

#[test]
fn man_page_and_completions_match_the_command_line() {
    let sb = Sandbox::new();
    let out = sb.root().join("generated");
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));

    assert_eq!(
        sb.run(&["--generate-man", out.join("man").to_str().unwrap()])
            .code,
        Some(0)
    );
    assert_eq!(
        sb.run(&[
            "--generate-completions",
            out.join("completions").to_str().unwrap()
        ])
        .code,
        Some(0)
    );

    for file in [
        "man/agent.1",
        "completions/agent.bash",
        "completions/_agent",
        "completions/agent.fish",
    ] {
        let fresh = std::fs::read_to_string(out.join(file)).unwrap();
        let committed = std::fs::read_to_string(repo.join(file)).unwrap_or_default();
        assert!(
            fresh == committed,
            "{file} is stale: run `cargo run -- --generate-man man --generate-completions completions`"
        );
    }
}

/// What a management flag's own definition holds, as the words a reader types: its
/// sub-commands' names, every long flag and every value of a closed set.
fn words_of(command: &clap::Command) -> Vec<String> {
    let mut words = Vec::new();
    let mut commands = vec![command.clone()];
    while let Some(command) = commands.pop() {
        for arg in command.get_arguments().filter(|arg| !arg.is_hide_set()) {
            if let Some(long) = arg
                .get_long()
                .filter(|long| !["help", "version"].contains(long))
            {
                words.push(format!("--{long}"));
            }
            let takes_value = matches!(
                arg.get_action(),
                clap::ArgAction::Set | clap::ArgAction::Append
            );
            for value in arg.get_possible_values().iter().filter(|_| takes_value) {
                words.push(value.get_name().to_string());
            }
        }
        for sub in command.get_subcommands() {
            words.push(sub.get_name().to_string());
            commands.push(sub.clone());
        }
    }
    words
}

/// `text` cut into words at spaces and the listing's punctuation (`[`, `]`, `|`, `,`, a
/// Markdown `\|`, backticks, the man page's `\fB`).
fn tokens(text: &str) -> std::collections::HashSet<String> {
    text.replace("\\-", "-")
        .replace("\\fB", " ")
        .replace("\\fR", " ")
        .replace("\\fI", " ")
        .split(|c: char| c.is_whitespace() || "[]|,`\\:;()<>".contains(c))
        .map(|word| word.trim_end_matches(['.', '…']).to_string())
        .filter(|word| !word.is_empty())
        .collect()
}

/// The lines of `text` from the first that `starts` matches up to the next that `next`
/// matches.
fn section(text: &str, starts: impl Fn(&str) -> bool, next: impl Fn(&str) -> bool) -> String {
    let mut lines = text.lines().skip_while(|line| !starts(line));
    let first = lines.next().unwrap_or_default();
    std::iter::once(first)
        .chain(lines.take_while(|line| !next(line)))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_flag_a_management_flag_takes_is_in_help_the_man_page_the_completions_and_the_options_table()
 {
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let read = |file: &str| std::fs::read_to_string(repo.join(file)).unwrap();
    let help = Sandbox::new().run(&["--help"]);
    assert_eq!(help.code, Some(0), "{help:?}");
    let (man, zsh, fish, options) = (
        read("man/agent.1"),
        read("completions/_agent"),
        read("completions/agent.fish"),
        read("docs/command-line.md"),
    );
    for (name, command) in agent::cli::management() {
        let flag = format!("--{name}");
        let places = [
            (
                "--help",
                section(
                    &help.stdout,
                    |line| line.trim_start().starts_with(&format!("{flag} ")),
                    |line| {
                        line.starts_with("      -") || line.starts_with("  -") || line.is_empty()
                    },
                ),
            ),
            (
                "man/agent.1",
                section(
                    &man,
                    |line| line.starts_with(&format!("\\fB{}\\fR", flag.replace('-', "\\-"))),
                    |line| line.starts_with(".TP") || line.starts_with(".SH"),
                ),
            ),
            (
                "completions/_agent",
                section(&zsh, |line| line.contains(&format!("{flag}=[")), |_| true),
            ),
            (
                "completions/agent.fish",
                section(
                    &fish,
                    |line| line.contains(&format!(" -l {name} ")),
                    |_| true,
                ),
            ),
            (
                "docs/command-line.md's options table",
                section(
                    &options,
                    |line| line.starts_with(&format!("| `{flag}")),
                    |_| true,
                ),
            ),
        ];
        for (place, text) in places {
            assert!(!text.is_empty(), "{place} has no entry for {flag}");
            let found = tokens(&text);
            for word in words_of(&command) {
                assert!(
                    found.contains(&word),
                    "{place} does not say that {flag} takes {word}:\n{text}"
                );
            }
        }
    }
}

#[test]
fn a_sub_commands_help_names_the_whole_command_to_type() {
    let sb = Sandbox::new();
    for (args, usage) in [
        (
            &["--relay", "serve", "--help"][..],
            "Usage: agent --relay serve",
        ),
        (
            &["--relay", "tokens", "add", "--help"][..],
            "Usage: agent --relay tokens add",
        ),
        (
            &["--budget", "set", "--help"][..],
            "Usage: agent --budget set",
        ),
        (
            &["--accounts", "add", "--help"][..],
            "Usage: agent --accounts add",
        ),
    ] {
        let run = sb.run(args);
        assert_eq!(run.code, Some(0), "{args:?}: {run:?}");
        assert!(run.stdout.contains(usage), "{args:?}: {}", run.stdout);
    }
}

#[test]
fn with_no_model_passed_the_labels_name_the_clis_default_and_not_the_probe_model() {
    let w = world();
    // Claude Code last ran Opus 4.8: the model it reported, not agent's probe model.
    w.sb.write_file(
        ".claude/projects/-home-me/5f0c1e9a-1111-4222-8333-944455556666.jsonl",
        &format!(
            "{}\n",
            serde_json::json!({"type": "assistant", "timestamp": "2026-11-30T10:00:00Z",
                "message": {"id": "msg_1", "role": "assistant", "model": "claude-opus-4-8",
                    "content": [{"type": "text", "text": "hi"}],
                    "usage": {"input_tokens": 1, "output_tokens": 1}}})
        ),
    );

    let run = w.sb.run(&["--dry-run", "-p", "hi"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    let would_run = run
        .stdout
        .lines()
        .find(|l| l.starts_with("would run:"))
        .unwrap_or_else(|| panic!("{}", run.stdout));
    assert_eq!(
        would_run, "would run: Claude Code (its default model) — rung 1 of 8",
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(
            "model:     its default model (last ran claude-opus-4-8): agent passes no model"
        ),
        "{}",
        run.stdout
    );
    let json: serde_json::Value =
        serde_json::from_str(&w.sb.run(&["--dry-run", "--json", "-p", "hi"]).stdout).unwrap();
    assert_eq!(json["label"], "Claude Code (its default model)");
    assert_eq!(json["runs"]["cli_default"], true);
    assert_eq!(json["runs"]["reported_model"], "claude-opus-4-8");

    let list = w.sb.run(&["--list"]).stdout;
    let rung1 = list
        .lines()
        .find(|l| l.trim_start().starts_with("1  claude "))
        .unwrap_or_else(|| panic!("{list}"));
    assert!(
        rung1.contains("its default model (last ran claude-opus-4-8)"),
        "{list}"
    );
    assert!(!rung1.contains("(CLI default)"), "{list}");
}

/// `text` with every fenced code block's lines blanked (a `# comment` in a shell block is
/// no heading, a `](x)` in one no link); the line count stays.
fn outside_fences(text: &str) -> String {
    let mut fenced = false;
    text.lines()
        .map(|line| {
            let fence = line.trim_start().starts_with("```");
            let keep = !fenced && !fence;
            if fence {
                fenced = !fenced;
            }
            if keep { line } else { "" }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The anchors GitHub gives `markdown`'s headings: lower case, letters, digits, `-` and
/// `_` kept, spaces as `-`, the rest dropped; a repeated one gets `-1`, `-2`, ….
fn anchors(markdown: &str) -> std::collections::HashSet<String> {
    let mut seen = std::collections::HashMap::<String, usize>::new();
    let mut anchors = std::collections::HashSet::new();
    for line in outside_fences(markdown).lines() {
        let hashes = line.chars().take_while(|&c| c == '#').count();
        let Some(title) = line[hashes..]
            .strip_prefix(' ')
            .filter(|_| (1..=6).contains(&hashes))
        else {
            continue;
        };
        let slug: String = title
            .trim()
            .to_lowercase()
            .chars()
            .filter(|&c| c.is_alphanumeric() || c == '-' || c == '_' || c == ' ')
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let count = seen.entry(slug.clone()).or_default();
        anchors.insert(if *count == 0 {
            slug
        } else {
            format!("{slug}-{count}")
        });
        *count += 1;
    }
    anchors
}

#[test]
fn every_relative_link_in_the_readme_and_docs_names_a_file_and_an_anchor_that_exist() {
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages = vec![repo.join("README.md")];
    for entry in std::fs::read_dir(repo.join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|ext| ext == "md") {
            pages.push(path);
        }
    }
    let mut broken = Vec::new();
    let mut checked = 0;
    for page in &pages {
        let text = outside_fences(&std::fs::read_to_string(page).unwrap());
        for (at, _) in text.match_indices("](") {
            let rest = &text[at + 2..];
            let target = &rest[..rest.find(')').unwrap_or(rest.len())];
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (file, anchor) = target.split_once('#').unwrap_or((target, ""));
            let file = if file.is_empty() {
                page.clone()
            } else {
                page.parent().unwrap().join(file)
            };
            let name = page.strip_prefix(repo).unwrap().display();
            if !file.exists() {
                broken.push(format!("{name}: ]({target}): no such file"));
            } else if !anchor.is_empty()
                && !anchors(&std::fs::read_to_string(&file).unwrap()).contains(anchor)
            {
                broken.push(format!("{name}: ]({target}): no such heading"));
            }
        }
    }
    assert!(
        checked > 50,
        "only {checked} links found: is the search right?"
    );
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// Issue 43, item 6: `agent --config-template` prints a configuration with every key at its
/// default; saved as the configuration file, it changes nothing, and with its defaults
/// uncommented it still changes nothing.
#[test]
fn the_config_template_saved_as_the_file_changes_nothing() {
    let w = world();
    let template = w.sb.run(&["--config-template"]);
    assert_eq!(template.code, Some(0), "{template:?}");
    assert!(
        template.stdout.contains("\n# fastfail_seconds = 25\n"),
        "{}",
        template.stdout
    );
    assert!(
        template.stdout.contains("\n# [backends.claude]\n"),
        "{}",
        template.stdout
    );
    let without = w.sb.run(&["--list", "--json"]);

    let live: String = template
        .stdout
        .lines()
        .map(|line| line.strip_prefix("# ").unwrap_or(line))
        .collect::<Vec<_>>()
        .join("\n");
    w.sb.write_config(&live);
    let with = w.sb.run(&["--list", "--json"]);
    let doctor = w.sb.run(&["--doctor"]);

    assert_eq!(with.code, Some(0), "{with:?}");
    let mut with: serde_json::Value = serde_json::from_str(&with.stdout).unwrap();
    let mut without: serde_json::Value = serde_json::from_str(&without.stdout).unwrap();
    with["config"] = serde_json::Value::Null;
    without["config"] = serde_json::Value::Null;
    assert_eq!(with, without);
    assert!(
        !doctor.stdout.contains("unknown key"),
        "every key is one agent reads: {}",
        doctor.stdout
    );
}
