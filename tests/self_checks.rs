//! A fallback on a login is proven by the CLI itself (issue 4/6): `--status` and
//! `--check-fallback` run each login's CLI headless with its own login, in the directory a
//! launch runs in, and judge it by its answer — never by its login file. Codex and Gemini
//! CLI are logged in by fixture files; the CLIs are fakes that play what the real ones
//! printed against the mock (`tests/fixtures/self_check/`).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::logins::{assert_no_token_sent, assert_no_token_shown, logged_in, login_tokens};
use crate::support::{MockApi, Sandbox};

/// Claude Code first, then the two independent fallbacks on their logins.
const TABLE: &str = r#"
[[rungs]]
backend = "claude"
probe_model = "opus"

[[rungs]]
backend = "codex"

[[rungs]]
backend = "gemini"
"#;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/self_check")
        .join(name)
}

/// A fake `cli` that records the directory it ran in, and plays `play` when it is given
/// its headless check's machine-readable flag (`--json`, `-o json`, `--output-format json`),
/// else `launch` (the launch's `-p hi`). A play is a fixture's name (`codex-401`).
fn install(sb: &Sandbox, cli: &str, play: &str, launch: &str) {
    let part = |name: &str| {
        let stem = fixture(name);
        let file = |ext: &str| stem.with_extension(ext).display().to_string();
        let code = std::fs::read_to_string(file("exit")).unwrap_or_else(|_| "0".into());
        format!(
            "cat '{}'; cat '{}' >&2; exit {}",
            file("stdout"),
            file("stderr"),
            code.trim()
        )
    };
    let launch = match launch {
        "fails" => "echo 'boom' >&2; exit 1".to_string(),
        other => part(other),
    };
    sb.fake_cli(cli)
        .script(&format!(
            "pwd > \"$calls/$n/cwd\"\ncase \" $* \" in *' --json '*|*' -o json '*|*' --output-format json '*) {};; *) {launch};; esac",
            part(play)
        ))
        .install();
}

fn checks_of(sb: &Sandbox, cli: &str) -> usize {
    sb.calls(cli)
        .iter()
        .filter(|run| run.argv.iter().any(|a| a == "--json" || a == "json"))
        .count()
}

/// The line of `--status` or `--check-fallback` naming `rung`.
fn line_of<'a>(text: &'a str, rung: &str) -> &'a str {
    text.lines()
        .filter(|line| {
            let word = line.split_whitespace().next().unwrap_or("");
            ["OK", "FAIL", "UNPROVED", "PARKED", "SKIP"].contains(&word)
        })
        .find(|line| line.contains(&format!(" {rung} ")) || line.contains(&format!(" {rung} /")))
        .unwrap_or_else(|| panic!("no {rung} in {text}"))
}

/// No login token in anything agent printed, wrote or handed a CLI on its command line.
fn assert_no_token_anywhere(sb: &Sandbox, api: &MockApi, outputs: &[&str]) {
    assert_no_token_shown(sb, outputs);
    assert_no_token_sent(api);
    for cli in ["claude", "codex", "gemini"] {
        for run in sb.calls(cli) {
            for token in login_tokens() {
                assert!(
                    run.argv.iter().all(|arg| !arg.contains(&token)),
                    "a login token in {cli}'s argv: {:?}",
                    run.argv
                );
            }
        }
    }
}

#[test]
fn codex_refusing_its_login_makes_check_fallback_degraded_naming_codex_and_its_fix() {
    let (sb, api) = logged_in();
    sb.write_config(TABLE);
    install(&sb, "codex", "codex-401", "codex-answered");
    install(&sb, "gemini", "gemini-answered", "gemini-answered");
    let project = sb.set_cwd("project");

    let check = sb.run(&["--check-fallback"]);

    assert_eq!(check.code, Some(1), "{check:?}");
    assert!(
        check
            .stdout
            .starts_with("DEGRADED: still covered by gemini but a rung died: codex (auth)\n"),
        "{check:?}"
    );
    let codex = line_of(&check.stdout, "codex");
    assert!(codex.trim_start().starts_with("FAIL"), "{codex}");
    assert!(codex.contains("auth: "), "{codex}");
    assert!(codex.contains("codex login"), "the CLI's own fix: {codex}");
    // Each check ran where a launch would: the directory agent was started in.
    for cli in ["codex", "gemini"] {
        let runs = sb.calls(cli);
        assert_eq!(runs.len(), 1, "{cli} checked once");
        let dir = std::fs::read_to_string(sb.calls_dir().join(cli).join("1/cwd")).unwrap();
        assert_eq!(Path::new(dir.trim()), project, "{cli} ran in {dir}");
    }
    let json = sb.run(&["--check-fallback", "--json"]);
    let json: Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(json["state"], "DEGRADED", "{json}");
    assert_eq!(json["rungs"][0]["state"], "failed", "{json}");
    assert_eq!(json["rungs"][0]["class"], "auth", "{json}");
    assert_no_token_anywhere(&sb, &api, &[&check.stdout, &check.stderr]);
}

#[test]
fn with_both_clis_answering_the_check_passes_and_each_row_says_how_it_was_proved() {
    let (sb, api) = logged_in();
    sb.write_config(TABLE);
    install(&sb, "codex", "codex-answered", "codex-answered");
    install(&sb, "gemini", "gemini-answered", "gemini-answered");

    let check = sb.run(&["--check-fallback"]);
    let again = sb.run(&["--check-fallback"]);
    let status = sb.run(&["--status"]);

    assert_eq!(check.code, Some(0), "{check:?}");
    assert!(
        check
            .stdout
            .starts_with("all provider-independent fallbacks OK: codex, gemini\n"),
        "{check:?}"
    );
    for rung in ["codex", "gemini"] {
        let line = line_of(&check.stdout, rung);
        assert!(line.trim_start().starts_with("OK"), "{line}");
        assert!(line.contains("answered the CLI's own check, "), "{line}");
        assert!(line.contains("· login ("), "its login beside: {line}");
    }
    // Its cost is bounded: within self_check_cache_seconds the answer is reused.
    assert_eq!(again.code, Some(0), "{again:?}");
    assert_eq!(checks_of(&sb, "codex"), 1, "{again:?}");
    assert_eq!(checks_of(&sb, "gemini"), 1, "{again:?}");
    assert!(
        line_of(&status.stdout, "codex").contains(" ago"),
        "a cached proof says when: {status:?}"
    );
    // The tokens each check spent are on the ledger with their source.
    let ledger = std::fs::read_to_string(sb.state_dir().join("usage.jsonl")).unwrap();
    let checks: Vec<Value> = ledger
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|line| line["role"] == "self_check" && line["backend"] != "claude")
        .collect();
    assert_eq!(checks.len(), 2, "{ledger}");
    assert!(
        checks
            .iter()
            .all(|line| line["estimated"] == false
                && line["tokens"]["output"].as_u64().unwrap_or(0) > 0),
        "the CLIs' own counts: {ledger}"
    );
    assert_no_token_anywhere(
        &sb,
        &api,
        &[&check.stdout, &check.stderr, &status.stdout, &status.stderr],
    );
}

#[test]
fn self_check_false_is_not_proved_and_is_no_cover() {
    let (sb, _api) = logged_in();
    sb.write_config(&format!("[backends.gemini]\nself_check = false\n{TABLE}"));
    install(&sb, "codex", "codex-answered", "codex-answered");
    install(&sb, "gemini", "gemini-answered", "gemini-answered");

    let check = sb.run(&["--check-fallback"]);
    let status = sb.run(&["--status", "--json"]);

    assert_eq!(check.code, Some(1), "{check:?}");
    assert!(
        check.stdout.starts_with(
            "DEGRADED: still covered by codex but not proved: gemini (self_check = false)\n"
        ),
        "{check:?}"
    );
    let gemini = line_of(&check.stdout, "gemini");
    assert!(gemini.trim_start().starts_with("UNPROVED"), "{gemini}");
    assert_eq!(checks_of(&sb, "gemini"), 0, "gemini was not run");
    let rows: Value = serde_json::from_str(&status.stdout).unwrap();
    let gemini = crate::support::status_row(&rows, "gemini");
    assert_eq!(gemini["state"], "not_proved", "{rows}");
}

#[test]
fn a_codex_launch_that_failed_fast_is_degraded_everywhere_until_something_answers() {
    let (sb, _api) = logged_in();
    // Codex is not run by the check here: only the launch's failure can speak of it.
    sb.write_config(&format!("[backends.codex]\nself_check = false\n{TABLE}"));
    sb.fake_cli("claude").exit(1).install();
    install(&sb, "codex", "codex-answered", "fails");
    install(&sb, "gemini", "gemini-answered", "gemini-answered");

    let launch = sb.run(&["-p", "hi"]);
    let check = sb.run(&["--check-fallback"]);
    let status = sb.run(&["--status"]);
    let feed = json!({"model": {"display_name": "Opus"}}).to_string();
    let (_, statusline, _) = crate::statusline::statusline(&sb, &feed);

    assert_eq!(launch.code, Some(0), "gemini ran: {launch:?}");
    assert_eq!(check.code, Some(1), "{check:?}");
    assert!(check.stdout.starts_with("DEGRADED: "), "{check:?}");
    let codex = line_of(&check.stdout, "codex");
    assert!(codex.trim_start().starts_with("FAIL"), "{codex}");
    assert!(codex.contains("failed at launch "), "{codex}");
    assert!(codex.contains("exited 1"), "{codex}");
    assert!(
        line_of(&status.stdout, "codex").contains("failed at launch "),
        "{status:?}"
    );
    assert!(statusline.contains("fallbacks DEGRADED"), "{statusline}");
    // The dashboard's rung table says the same.
    let dashboard = crate::dashboard::Dashboard::start(&sb);
    let session = dashboard.log_in();
    let rows = crate::dashboard::get(&dashboard.addr, "/status.json", &session).json();
    let codex = crate::support::status_row(&rows, "codex");
    assert_eq!(codex["state"], "failed", "{rows}");
    assert_eq!(codex["failed_at"], "launch", "{rows}");
}

#[test]
fn a_codex_launch_that_failed_fast_is_proved_again_by_its_own_check() {
    let (sb, _api) = logged_in();
    sb.write_config(TABLE);
    sb.fake_cli("claude").exit(1).install();
    install(&sb, "codex", "codex-answered", "fails");
    install(&sb, "gemini", "gemini-answered", "gemini-answered");
    // A check before the launch: codex's answer is cached…
    let before = sb.run(&["--check-fallback"]);
    assert_eq!(before.code, Some(0), "{before:?}");

    let launch = sb.run(&["-p", "hi"]);
    let check = sb.run(&["--check-fallback"]);

    assert_eq!(launch.code, Some(0), "{launch:?}");
    // …but the failed launch is newer: codex is asked again, and answers.
    assert_eq!(checks_of(&sb, "codex"), 2, "{check:?}");
    assert_eq!(check.code, Some(0), "{check:?}");
    assert!(
        line_of(&check.stdout, "codex").contains("answered the CLI's own check, "),
        "{check:?}"
    );
}

#[test]
fn a_full_five_hour_window_makes_both_claude_rows_parked_on_every_face_never_ok() {
    let (sb, _api) = logged_in();
    sb.write_config(
        "[[rungs]]\nbackend = \"claude\"\nprobe_model = \"opus\"\n\n[[rungs]]\nbackend = \"claude\"\nprobe_model = \"sonnet\"\nrun_model = \"sonnet\"\n\n[[rungs]]\nbackend = \"codex\"\n",
    );
    install(&sb, "codex", "codex-answered", "codex-answered");
    let key = format!("claude:{}", sb.home().join(".claude").display());
    let observed = jiff::Timestamp::now() - jiff::SignedDuration::from_mins(3);
    let reset = observed + jiff::SignedDuration::from_hours(2);
    std::fs::write(
        sb.state_dir().join("windows.json"),
        json!({"logins": {key: [{
            "scope": {"kind": "five_hour"}, "used_percent": 100.0,
            "resets_at": reset.to_string(), "source": "statusline",
            "observed_at": observed.to_string()}]}})
        .to_string(),
    )
    .unwrap();

    let status = sb.run(&["--status"]);
    let json = sb.run(&["--status", "--json"]);
    let check = sb.run(&["--check-fallback"]);
    let dashboard = crate::dashboard::Dashboard::start(&sb);
    let session = dashboard.log_in();
    let known = crate::dashboard::get(&dashboard.addr, "/status.json", &session).json();

    let claude: Vec<&str> = status
        .stdout
        .lines()
        .filter(|l| l.split_whitespace().nth(1) == Some("claude"))
        .collect();
    assert_eq!(claude.len(), 2, "{status:?}");
    for line in &claude {
        assert!(line.starts_with("PARKED"), "{line}");
        assert!(line.contains("resets "), "{line}");
    }
    assert_eq!(
        sb.calls("claude").len(),
        0,
        "a parked login is not run into its wall"
    );
    let rows: Value = serde_json::from_str(&json.stdout).unwrap();
    for rows in [&rows, &known] {
        let claude: Vec<&Value> = rows
            .as_array()
            .unwrap()
            .iter()
            .filter(|row| row["backend"] == "claude")
            .collect();
        assert_eq!(claude.len(), 2, "{rows}");
        for row in claude {
            assert_eq!(row["state"], "parked", "{rows}");
            let until: jiff::Timestamp = row["until"].as_str().unwrap().parse().unwrap();
            assert_eq!(until.as_millisecond(), reset.as_millisecond(), "{rows}");
        }
    }
    let primary: Vec<&str> = check
        .stdout
        .lines()
        .skip_while(|l| !l.starts_with("primary vendor"))
        .filter(|l| l.split_whitespace().nth(1) == Some("claude"))
        .collect();
    assert_eq!(primary.len(), 2, "{check:?}");
    assert!(
        primary.iter().all(|l| l.trim_start().starts_with("PARKED")),
        "{check:?}"
    );
    assert!(!check.stdout.contains("OK       claude"), "{check:?}");
}

/// Issue 32, item 7 (seed 002's first mistake): the check proves what the launch runs. Two
/// Claude rungs on one login that run Claude Code's default model (whatever model each
/// would probe) are one check, run with no `--model` — exactly as the launch runs them —
/// and a rung that runs a named model is checked with that model. Each check is Claude
/// Code's one-word turn with its tools and MCP servers off, in the launch's environment.
#[test]
fn claude_rungs_are_checked_once_per_model_the_launch_runs_with_tools_and_mcp_servers_off() {
    let (sb, api) = logged_in();
    sb.write_config(
        r#"
[[rungs]]
backend = "claude"
probe_model = "opus"

[[rungs]]
backend = "claude"
probe_model = "haiku"

[[rungs]]
backend = "claude"
probe_model = "sonnet"
run_model = "sonnet"
"#,
    );
    let prompt = "Reply with the single word ok.";
    let checks = || -> Vec<crate::support::Invocation> {
        sb.calls("claude")
            .into_iter()
            .filter(|run| run.argv.iter().any(|a| a == prompt))
            .collect()
    };

    let status = sb.run(&["--status"]);

    assert_eq!(status.code, Some(0), "{status:?}");
    let rows: Vec<&str> = status
        .stdout
        .lines()
        .filter(|l| l.split_whitespace().nth(1) == Some("claude"))
        .collect();
    assert_eq!(rows.len(), 3, "{status:?}");
    for row in &rows {
        assert!(
            row.starts_with("OK") && row.contains("answered the CLI's own check"),
            "{row}"
        );
    }
    let runs = checks();
    assert_eq!(
        runs.len(),
        2,
        "one check per model the launch runs on this login: {:?}",
        runs.iter().map(|r| &r.argv).collect::<Vec<_>>()
    );
    let model_of = |run: &crate::support::Invocation| {
        run.argv
            .iter()
            .position(|a| a == "--model")
            .map(|at| run.argv[at + 1].clone())
    };
    let mut models: Vec<Option<String>> = runs.iter().map(model_of).collect();
    models.sort();
    assert_eq!(
        models,
        [None, Some("claude-sonnet-5".to_string())],
        "the default is checked with no --model, a named model with that model"
    );
    for run in &runs {
        let words: Vec<&str> = run.argv.iter().map(String::as_str).collect();
        assert!(
            words.windows(2).any(|w| w == ["--tools", ""])
                && words.contains(&"--strict-mcp-config"),
            "tools and MCP servers off: {words:?}"
        );
    }
    // The one check of the default model proved both of its rungs: within the cache no
    // rung is checked again.
    let again = sb.run(&["--status"]);
    assert_eq!(again.code, Some(0), "{again:?}");
    assert_eq!(
        checks().len(),
        2,
        "checked again within the cache: {again:?}"
    );

    // The launch runs the default as the check did: no --model, the same home.
    let launch = sb.run(&["-p", "hi"]);
    assert_eq!(launch.code, Some(0), "{launch:?}");
    let launched = sb
        .calls("claude")
        .into_iter()
        .find(|run| run.argv.iter().any(|a| a == "hi"))
        .expect("the launch ran claude");
    assert!(
        !launched.argv.contains(&"--model".to_string()),
        "{:?}",
        launched.argv
    );
    let default_check = runs.iter().find(|run| model_of(run).is_none()).unwrap();
    for var in [
        "HOME",
        "CLAUDE_CONFIG_DIR",
        "ANTHROPIC_BASE_URL",
        "CLAUDE_CODE_OAUTH_TOKEN",
    ] {
        assert_eq!(
            default_check.env.get(var),
            launched.env.get(var),
            "{var}: the check's environment is the launch's"
        );
    }
    let ledger = std::fs::read_to_string(sb.state_dir().join("usage.jsonl")).unwrap();
    let claude_checks = ledger
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|line| line["role"] == "self_check" && line["backend"] == "claude")
        .count();
    assert_eq!(claude_checks, 2, "{ledger}");
    assert_no_token_anywhere(&sb, &api, &[&status.stdout, &status.stderr]);
}
