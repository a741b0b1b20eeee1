//! A CLI's default home in a login pool (issue 5/5 item 1): the README's "yours included",
//! `--dir ~/.claude`, is launched exactly as typing `claude` would — no
//! `CLAUDE_CONFIG_DIR` in its environment, since Claude Code given one reads
//! `~/.claude/.claude.json` instead of `~/.claude.json`. Only another directory sets the
//! variable. The login keeps one key either way: its windows park it, its statusline
//! files under it. The check (`--check-fallback`) runs the CLI the same way.

use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};

use crate::support::Sandbox;
use crate::world::{World, world};

fn credentials(access: &str) -> String {
    json!({"claudeAiOauth": {
        "accessToken": access, "refreshToken": "sk-ant-ort01-DEFAULThomeREFRESH-0000",
        "expiresAt": 1_789_387_200_000_u64, "scopes": ["user:inference"],
        "subscriptionType": "max", "rateLimitTier": "default_claude_max_20x"}})
    .to_string()
}

fn dir(sb: &Sandbox, name: &str) -> String {
    sb.home().join(name).display().to_string()
}

fn add_login(sb: &Sandbox, name: &str, backend: &str, dir: &str) -> crate::support::Run {
    sb.run(&[
        "--accounts",
        "add",
        name,
        "--backend",
        backend,
        "--kind",
        "login",
        "--dir",
        dir,
    ])
}

/// What the `n`th run of `cli` had in `var`, if anything.
fn var_of_run(sb: &Sandbox, cli: &str, n: usize, var: &str) -> Option<String> {
    sb.calls(cli)[n].env.get(var).cloned()
}

/// Claude Code's own login in `~/.claude` and a second in `~/.claude-work`, both added to
/// the pool as the README says (yours first), over a Claude rung then Codex. agent itself
/// runs with a `CLAUDE_CONFIG_DIR` exported elsewhere: the default home must not inherit it.
fn yours_and_work() -> World {
    let w = world();
    // A subscription user's machine: no proxy in front of Claude.
    w.sb.env_remove("AGENT_PROXY_URL");
    w.sb.env_remove("AGENT_PROXY_KEY");
    w.sb.write_file(
        ".claude/.credentials.json",
        &credentials("sk-ant-oat01-YOURSaccess-1111"),
    );
    w.sb.write_file(
        ".claude-work/.credentials.json",
        &credentials("sk-ant-oat01-WORKaccess-2222"),
    );
    w.sb.write_config(
        r#"
[backends.claude]
rotation = "priority"

[[rungs]]
backend = "claude"

[[rungs]]
backend = "codex"
"#,
    );
    let added = add_login(&w.sb, "personal", "claude", &dir(&w.sb, ".claude"));
    assert_eq!(added.code, Some(0), "{added:?}");
    let added = add_login(&w.sb, "work", "claude", &dir(&w.sb, ".claude-work"));
    assert_eq!(added.code, Some(0), "{added:?}");
    w.sb.env("CLAUDE_CONFIG_DIR", dir(&w.sb, "somewhere-else"));
    w
}

#[test]
fn the_default_home_in_a_pool_runs_claude_as_typed_and_another_dir_sets_its_variable() {
    let w = yours_and_work();

    let first = w.sb.run(&["-p", "hi"]);
    assert_eq!(first.code, Some(0), "{first:?}");
    assert_eq!(w.sb.calls("claude").len(), 1, "{first:?}");
    assert_eq!(
        var_of_run(&w.sb, "claude", 0, "CLAUDE_CONFIG_DIR"),
        None,
        "the default home is launched with no CLAUDE_CONFIG_DIR: {first:?}"
    );

    // Its own key is the one a Claude Code typed by hand files under: a full window filed
    // there parks it, and the launch moves to the other login, which is given its dir.
    let resets = Timestamp::now() + SignedDuration::from_hours(2);
    let key = crate::support::claude_dir_login(w.sb.home());
    std::fs::write(
        w.sb.state_dir().join("windows.json"),
        json!({"logins": {key: [{"scope": {"kind": "five_hour"}, "used_percent": 100.0,
            "resets_at": resets.to_string(), "source": "statusline",
            "observed_at": Timestamp::now().to_string()}]}})
        .to_string(),
    )
    .unwrap();
    let second = w.sb.run(&["-p", "hi"]);
    assert_eq!(second.code, Some(0), "{second:?}");
    assert_eq!(w.sb.calls("claude").len(), 2, "{second:?}");
    assert_eq!(
        var_of_run(&w.sb, "claude", 1, "CLAUDE_CONFIG_DIR").as_deref(),
        Some(dir(&w.sb, ".claude-work").as_str()),
        "{second:?}"
    );
}

#[test]
fn adding_the_default_home_says_it_runs_as_typing_the_cli_would() {
    let w = world();
    // Not logged in yet: the way to log in there is the plain command.
    let empty = add_login(&w.sb, "personal", "claude", &dir(&w.sb, ".claude"));
    assert_eq!(empty.code, Some(1), "{empty:?}");
    assert!(
        empty
            .stderr
            .contains("Log in there first: claude, then /login"),
        "{}",
        empty.stderr
    );
    assert!(
        !empty.stderr.contains("CLAUDE_CONFIG_DIR="),
        "{}",
        empty.stderr
    );

    w.sb.write_file(
        ".claude/.credentials.json",
        &credentials("sk-ant-oat01-YOURSaccess-1111"),
    );
    let added = add_login(&w.sb, "personal", "claude", &dir(&w.sb, ".claude"));
    assert_eq!(added.code, Some(0), "{added:?}");
    let home = dir(&w.sb, ".claude");
    assert!(
        added.stdout.contains(&format!(
            "{home} is Claude Code's default home: it runs Claude Code as typing `claude` would, with no CLAUDE_CONFIG_DIR set"
        )),
        "{}",
        added.stdout
    );
    let work = dir(&w.sb, ".claude-work");
    w.sb.write_file(
        ".claude-work/.credentials.json",
        &credentials("sk-ant-oat01-WORKaccess-2222"),
    );
    let added = add_login(&w.sb, "work", "claude", &work);
    assert_eq!(added.code, Some(0), "{added:?}");
    assert!(
        added
            .stdout
            .contains(&format!("it runs Claude Code with its home at {work}")),
        "{}",
        added.stdout
    );
    let list = w.sb.run(&["--accounts", "list", "--json"]);
    let rows: Value = serde_json::from_str(&list.stdout).unwrap();
    assert_eq!(rows[0]["login"]["present"], true, "{rows}");
    assert_eq!(rows[0]["login"]["plan"], "max", "{rows}");
}

#[test]
fn the_check_runs_a_default_home_login_as_typed_too() {
    let (sb, _api) = crate::logins::logged_in();
    sb.write_config(
        r#"
[[rungs]]
backend = "claude"

[[rungs]]
backend = "codex"
"#,
    );
    let added = add_login(&sb, "mine", "codex", &dir(&sb, ".codex"));
    assert_eq!(added.code, Some(0), "{added:?}");
    sb.env("CODEX_HOME", dir(&sb, "somewhere-else"));

    let check = sb.run(&["--check-fallback"]);
    let runs = sb.calls("codex");
    assert!(!runs.is_empty(), "the check ran codex: {check:?}");
    for run in &runs {
        assert_eq!(run.env.get("CODEX_HOME"), None, "{check:?}");
    }
    assert!(
        !check.stdout.contains("no login in"),
        "the login is found where codex finds it: {check:?}"
    );
    assert!(added.stdout.contains("with no CODEX_HOME set"), "{added:?}");
}
