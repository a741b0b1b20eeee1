//! `--status`'s rows as a person reads them (issue 32, item 8): fitted to the terminal's
//! width (`COLUMNS`), the facts of a login two rungs share said once, and a parked row's
//! reset said once; off a terminal with no `COLUMNS` a row stays one line, and `--json`
//! keeps every fact on every row.

use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};

use crate::support::mock_api::oauth_usage_body;
use crate::support::{Reply, Rule, Run};
use crate::world::{World, world};

/// Claude Code logged in to Max, its 5-hour window full (read from the usage endpoint),
/// two Claude rungs on that login, and Codex on a key below them.
fn two_rungs_on_one_full_login() -> World {
    let w = world();
    w.sb.env_remove("AGENT_PROXY_URL");
    w.sb.env_remove("AGENT_PROXY_KEY");
    let expires_ms = (Timestamp::now() + SignedDuration::from_hours(24)).as_millisecond();
    w.sb.write_file(
        ".claude/.credentials.json",
        &json!({"claudeAiOauth": {
            "accessToken": "sk-ant-oat01-ROWSfixtureACCESS-0123456789abcdef",
            "refreshToken": "sk-ant-ort01-ROWSfixtureREFRESH-0123456789abcdef",
            "expiresAt": expires_ms,
            "scopes": ["user:profile", "user:inference"], "subscriptionType": "max"}})
        .to_string(),
    );
    w.sb.write_config(
        r#"
[backends.claude]
login_usage = true

[[rungs]]
backend = "claude"
probe_model = "opus"

[[rungs]]
backend = "claude"
probe_model = "sonnet"
run_model = "sonnet"

[[rungs]]
backend = "codex"
"#,
    );
    w.api.on(Rule::path_contains("/api/oauth/usage")
        .reply(Reply::status(200).json(oauth_usage_body(100.0, 40.0))));
    w
}

/// Each row with the lines it continues on (they start with a space).
fn rows(stdout: &str) -> Vec<String> {
    let mut rows: Vec<String> = Vec::new();
    for line in stdout.lines() {
        match rows.last_mut() {
            Some(row) if line.starts_with(' ') => {
                row.push(' ');
                row.push_str(line.trim_start());
            }
            _ => rows.push(line.to_string()),
        }
    }
    rows
}

fn status_rows(run: &Run) -> Vec<String> {
    assert_eq!(run.code, Some(0), "{run:?}");
    rows(&run.stdout)
        .into_iter()
        .filter(|row| row.starts_with("OK") || row.starts_with("PARKED"))
        .collect()
}

/// The login both Claude rows share is described on the first and named on the second;
/// each parked row says its reset once.
fn said_once(run: &Run) {
    let rows = status_rows(run);
    assert_eq!(rows.len(), 3, "{}", run.stdout);
    let claude: Vec<&String> = rows
        .iter()
        .filter(|r| r.split_whitespace().nth(1) == Some("claude"))
        .collect();
    assert_eq!(claude.len(), 2, "{}", run.stdout);
    let joined = rows.join("\n");
    for fact in ["token expires", "weekly 40%"] {
        assert_eq!(
            joined.matches(fact).count(),
            1,
            "the login's {fact:?} is said once: {}",
            run.stdout
        );
    }
    assert!(
        claude[0].contains("login (max), token expires"),
        "{}",
        run.stdout
    );
    assert!(
        claude[1].contains("login (max) as above"),
        "the second row names the login it shares: {}",
        run.stdout
    );
    for row in &claude {
        assert!(row.starts_with("PARKED "), "{row}");
        let reset = row
            .split("parked: 5-hour limit, resets ")
            .nth(1)
            .and_then(|rest| rest.split(" · ").next())
            .unwrap_or_else(|| panic!("no reset in {row}"));
        assert_eq!(row.matches(reset).count(), 1, "{reset:?} twice in {row}");
    }
}

#[test]
fn status_rows_fit_columns_and_say_a_shared_login_and_a_reset_once() {
    let w = two_rungs_on_one_full_login();
    w.sb.env("COLUMNS", "100");
    let run = w.sb.run(&["--status"]);

    for line in run.stdout.lines() {
        assert!(
            line.chars().count() <= 100,
            "a line of {} characters with COLUMNS=100: {line:?}\n{}",
            line.chars().count(),
            run.stdout
        );
    }
    said_once(&run);
}

#[test]
fn off_a_terminal_a_row_is_one_line_and_json_keeps_every_fact_on_every_row() {
    let w = two_rungs_on_one_full_login();
    let run = w.sb.run(&["--status"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        !run.stdout.lines().any(|line| line.starts_with(' ')),
        "a pipe with no COLUMNS gets whole rows: {}",
        run.stdout
    );
    said_once(&run);

    let json = w.sb.run(&["--status", "--json"]);
    let rows: Value = serde_json::from_str(&json.stdout).expect("valid JSON");
    for row in rows.as_array().unwrap().iter().take(2) {
        assert_eq!(row["state"], "parked", "{row}");
        assert_eq!(row["login"]["plan"], "max", "{row}");
        assert_eq!(
            row["login"]["windows"].as_array().unwrap().len(),
            2,
            "{row}"
        );
    }
}

#[test]
fn check_fallback_rows_fit_columns_and_say_a_shared_login_once() {
    let w = two_rungs_on_one_full_login();
    w.sb.env("COLUMNS", "100");
    let run = w.sb.run(&["--check-fallback"]);
    assert!(
        run.stdout.lines().all(|line| line.chars().count() <= 100),
        "{}",
        run.stdout
    );
    let joined = rows(&run.stdout).join("\n");
    assert_eq!(joined.matches("token expires").count(), 1, "{}", run.stdout);
    assert!(joined.contains("login (max) as above"), "{}", run.stdout);
}

/// Issue 43, item 4: a row names the model a launch runs — the one it passes, with the
/// table's alias when that named another id, else the CLI's own default as its settings
/// say it — never the model a probe asks about (rows said `claude-opus-5` while the launch
/// and the check ran the CLI's default).
#[test]
fn a_row_names_the_model_the_launch_runs_with_its_alias_not_the_probes() {
    let w = crate::world::world();
    std::fs::set_permissions(
        w.sb.state_dir(),
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .unwrap();
    // Claude Code's own settings name its default, which rung 1 runs (it passes no model).
    w.sb.write_file(".claude/settings.json", r#"{"model": "claude-opus-5-5"}"#);
    w.sb.write_config(
        "[[rungs]]\nbackend = \"claude\"\nprobe_model = \"opus\"\n\n[[rungs]]\nbackend = \"claude\"\nprobe_model = \"sonnet\"\nrun_model = \"sonnet\"\n",
    );

    let status = w.sb.run(&["--status"]);
    let json = w.sb.run(&["--status", "--json"]);
    let doctor = w.sb.run(&["--doctor"]);

    let lines: Vec<&str> = status.stdout.lines().collect();
    assert!(
        lines[0].starts_with("OK       claude / claude-opus-5-5   "),
        "{}",
        status.stdout
    );
    assert!(
        lines[1].starts_with("OK       claude / claude-sonnet-5 (sonnet)   "),
        "{}",
        status.stdout
    );
    let rows: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(rows[0]["name"], "claude / claude-opus-5-5", "{rows}");
    assert_eq!(rows[0]["runs"]["cli_default"], true, "{rows}");
    assert_eq!(
        rows[0]["runs"]["reported_model"], "claude-opus-5-5",
        "{rows}"
    );
    assert_eq!(rows[1]["runs"]["model"], "claude-sonnet-5", "{rows}");
    assert_eq!(rows[1]["runs"]["alias"], "sonnet", "{rows}");
    // The doctor's row says what runs, and what its probe asks about beside it.
    assert!(
        doctor.stdout.lines().any(
            |line| line.starts_with("ok   rung 1 claude / claude-opus-5-5 ")
                && line.contains("anthropic probe of claude-opus-5;")
        ),
        "{}",
        doctor.stdout
    );
}

/// The model a CLI's own settings name is theirs to write: it names a row, never drives the
/// terminal, and is a name, not a paragraph.
#[test]
fn a_model_named_by_the_clis_settings_names_a_row_without_its_control_characters() {
    let w = crate::world::world();
    let hostile = format!("claude-\u{1b}]0;pwned\u{7}x{}", "y".repeat(500));
    w.sb.write_file(
        ".claude/settings.json",
        &serde_json::json!({"model": hostile}).to_string(),
    );
    w.sb.write_config(
        "[[rungs]]\nbackend = \"claude\"\nprobe_model = \"opus\"\n\n[[rungs]]\nbackend = \"codex\"\n",
    );
    w.api
        .on(crate::support::Rule::model("claude-opus-5").reply(crate::support::Reply::status(500)));

    let status = w.sb.run(&["--status"]);
    let dry = w.sb.run(&["--dry-run", "-p", "hi"]);

    for out in [&status.stdout, &dry.stdout] {
        assert!(!out.contains('\u{1b}') && !out.contains('\u{7}'), "{out:?}");
        assert!(!out.contains(&"y".repeat(100)), "{out}");
    }
    assert!(
        status.stdout.starts_with("FAIL     claude / claude-xyyy"),
        "{}",
        status.stdout
    );
}
