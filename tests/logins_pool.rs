//! Several logins of one CLI (DESIGN §18): two Claude Code logins in two directories as
//! accounts of `claude`. A full window parks that login and not its neighbour, the rung
//! passes to the next login before any descent and says so, `soonest-reset` spends the
//! window that resets first, the weekly pace orders logins at equal resets, and `--dry-run`
//! shows why. agent never reads or passes on a login's token.

use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};

use crate::support::{Sandbox, launched_words};
use crate::world::{World, world};

const WORK_ACCESS: &str = "sk-ant-oat01-WORKloginACCESS-1111111111aaaa";
const WORK_REFRESH: &str = "sk-ant-ort01-WORKloginREFRESH-2222222222bbbb";
const PERSONAL_ACCESS: &str = "sk-ant-oat01-PERSONALloginACCESS-3333333333cccc";
const PERSONAL_REFRESH: &str = "sk-ant-ort01-PERSONALloginREFRESH-4444444444dddd";
/// Credentials in agent's own environment that must never reach a login's run.
const STRAY_TOKEN: &str = "sk-ant-oat01-STRAYenvTOKEN-5555555555eeee";
const STRAY_KEY: &str = "sk-ant-api03-STRAYenvKEY-6666666666ffff";

fn tokens() -> [&'static str; 6] {
    [
        WORK_ACCESS,
        WORK_REFRESH,
        PERSONAL_ACCESS,
        PERSONAL_REFRESH,
        STRAY_TOKEN,
        STRAY_KEY,
    ]
}

fn credentials(access: &str, refresh: &str) -> String {
    json!({"claudeAiOauth": {
        "accessToken": access, "refreshToken": refresh,
        "expiresAt": 1_789_387_200_000_u64, "scopes": ["user:inference"],
        "subscriptionType": "max", "rateLimitTier": "default_claude_max_20x"}})
    .to_string()
}

fn dir(sb: &Sandbox, name: &str) -> String {
    sb.home().join(name).display().to_string()
}

pub(crate) fn key(sb: &Sandbox, name: &str) -> String {
    format!("claude:{}", dir(sb, name))
}

/// Two logged-in Claude Code directories, accounts `work` (priority 1) and `personal` of
/// `claude`, with `rotation` (none: the default), over a Claude rung then Codex.
pub(crate) fn two_logins(rotation: Option<&str>) -> World {
    let w = world();
    w.sb.write_file(
        "claude-work/.credentials.json",
        &credentials(WORK_ACCESS, WORK_REFRESH),
    );
    w.sb.write_file(
        "claude-personal/.credentials.json",
        &credentials(PERSONAL_ACCESS, PERSONAL_REFRESH),
    );
    w.sb.env("CLAUDE_CODE_OAUTH_TOKEN", STRAY_TOKEN);
    w.sb.env("ANTHROPIC_API_KEY", STRAY_KEY);
    let rotation = rotation.map_or(String::new(), |r| {
        format!("[backends.claude]\nrotation = \"{r}\"\n")
    });
    w.sb.write_config(&format!(
        r#"{rotation}
[[rungs]]
backend = "claude"
probe_model = "opus"

[[rungs]]
backend = "codex"

[[accounts]]
name = "work"
backend = "claude"
kind = "login"
dir = "~/claude-work"
priority = 1

[[accounts]]
name = "personal"
backend = "claude"
kind = "login"
dir = "{}"
priority = 2
"#,
        dir(&w.sb, "claude-personal")
    ));
    w
}

fn in_mins(minutes: i64) -> Timestamp {
    // Whole minutes, so a notice's HH:MM is exact.
    let at = Timestamp::now() + SignedDuration::from_mins(minutes);
    Timestamp::from_second(at.as_second() / 60 * 60).unwrap()
}

/// A reset as parking notices name it: `Tue 14:10`.
fn day_hh_mm(at: Timestamp) -> String {
    at.to_zoned_datetime(jiff::tz::TimeZone::system())
        .strftime("%a %H:%M")
        .to_string()
}

fn hh_mm(at: Timestamp) -> String {
    at.to_zoned_datetime(jiff::tz::TimeZone::system())
        .strftime("%H:%M")
        .to_string()
}

/// Claude Code's statusline feed with these windows.
fn feed(five_percent: f64, five_resets: Timestamp) -> String {
    let week = in_mins(3 * 24 * 60);
    format!(
        r#"{{"session_id":"s","cwd":"/tmp","model":{{"id":"claude-opus-5","display_name":"Opus"}},
           "rate_limits":{{"five_hour":{{"used_percentage":{five_percent},"resets_at":{}}},
           "seven_day":{{"used_percentage":10.0,"resets_at":{}}}}}}}"#,
        five_resets.as_second(),
        week.as_second()
    )
}

/// `agent --statusline` as the Claude Code started with `CLAUDE_CONFIG_DIR=dir` runs it.
fn statusline_under(sb: &Sandbox, config_dir: &str, input: &str) {
    use std::io::Write as _;
    let mut cmd = sb.command(&["--statusline"]);
    cmd.env("CLAUDE_CONFIG_DIR", config_dir)
        .env_remove("CLAUDE_CODE_OAUTH_TOKEN")
        .env_remove("ANTHROPIC_API_KEY")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    assert!(child.wait_with_output().unwrap().status.success());
}

/// One window as `windows.json` keeps it: its scope's kind, percent used and reset.
type Row<'a> = (&'a str, f64, Timestamp);

/// `windows.json` with these logins' windows: `(key, rows)`.
fn write_windows(sb: &Sandbox, logins: &[(String, Vec<Row>)]) {
    let now = Timestamp::now();
    let mut map = serde_json::Map::new();
    for (key, windows) in logins {
        let rows: Vec<Value> = windows
            .iter()
            .map(|(kind, percent, resets)| {
                json!({"scope": {"kind": kind}, "used_percent": percent,
                       "resets_at": resets.to_string(), "source": "statusline",
                       "observed_at": now.to_string()})
            })
            .collect();
        map.insert(key.clone(), Value::Array(rows));
    }
    std::fs::write(
        sb.state_dir().join("windows.json"),
        json!({ "logins": map }).to_string(),
    )
    .unwrap();
}

fn config_dir_of_launch(w: &World, n: usize) -> String {
    w.sb.calls("claude")[n]
        .env
        .get("CLAUDE_CONFIG_DIR")
        .cloned()
        .unwrap_or_default()
}

fn assert_no_token_in_launch(w: &World, n: usize) {
    let call = &w.sb.calls("claude")[n];
    for token in tokens() {
        for (name, value) in &call.env {
            assert!(!value.contains(token), "a token reached the CLI in {name}");
        }
        assert!(
            call.argv.iter().all(|arg| !arg.contains(token)),
            "{:?}",
            call.argv
        );
    }
    assert!(
        !call.env.contains_key("AGENT_CLAUDE_LOGIN"),
        "a login named by its directory is not told by name"
    );
}

#[test]
fn a_full_login_hands_its_rung_to_the_next_login_and_with_both_full_the_next_vendor_runs() {
    let w = two_logins(None);
    let reset = in_mins(90);
    statusline_under(&w.sb, &dir(&w.sb, "claude-work"), &feed(100.0, reset));

    let run = w.sb.run(&["-p", "hi"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(w.sb.calls("claude").len(), 1, "{}", run.stderr);
    assert!(w.sb.calls("codex").is_empty(), "{}", run.stderr);
    assert_eq!(config_dir_of_launch(&w, 0), dir(&w.sb, "claude-personal"));
    assert_eq!(launched_words(&w.sb.calls("claude")[0].argv), ["-p", "hi"]);
    assert_no_token_in_launch(&w, 0);
    let notice = format!(
        "[agent] Claude Code (its default model, login work) — 5-hour limit, resets {} — using login personal",
        day_hh_mm(reset)
    );
    assert!(run.stderr.contains(&notice), "{}", run.stderr);
    assert!(
        !run.stderr.contains("unavailable"),
        "no descent: {}",
        run.stderr
    );
    for token in tokens() {
        assert!(!run.stderr.contains(token) && !run.stdout.contains(token));
    }

    // The second login full too: the rung is parked, and the next vendor's runs.
    statusline_under(&w.sb, &dir(&w.sb, "claude-personal"), &feed(100.0, reset));
    let run = w.sb.run(&["-p", "hi"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(w.sb.calls("claude").len(), 1, "{}", run.stderr);
    assert_eq!(w.sb.calls("codex").len(), 1, "{}", run.stderr);
    assert!(run.stderr.contains("[agent] using Codex"), "{}", run.stderr);
}

#[test]
fn the_statusline_of_a_claude_code_run_on_a_login_files_its_windows_under_that_login() {
    let w = two_logins(Some("priority"));
    let reset = in_mins(120);
    // A Claude Code that, like the real one, runs its statusLine command (agent) with the
    // environment agent gave it, and reports the 5-hour window full.
    w.sb.env("POOL_FEED", feed(100.0, reset));
    w.sb.fake_cli("claude")
        .script(&format!(
            "printf '%s' \"$POOL_FEED\" | {} --statusline >/dev/null\necho claude answered",
            env!("CARGO_BIN_EXE_agent")
        ))
        .install();

    let run = w.sb.run(&["-p", "hi"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(config_dir_of_launch(&w, 0), dir(&w.sb, "claude-work"));

    let text = std::fs::read_to_string(w.sb.state_dir().join("windows.json")).unwrap();
    let windows: Value = serde_json::from_str(&text).unwrap();
    assert!(
        windows["logins"][key(&w.sb, "claude-work")].is_array(),
        "{text}"
    );
    assert!(
        windows["logins"][key(&w.sb, "claude-personal")].is_null(),
        "{text}"
    );

    // The next launch parks work, not its neighbour.
    let run = w.sb.run(&["-p", "hi"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(config_dir_of_launch(&w, 1), dir(&w.sb, "claude-personal"));
    assert!(
        run.stderr
            .contains("(its default model, login work) — 5-hour limit, resets "),
        "{}",
        run.stderr
    );
}

#[test]
fn soonest_reset_spends_the_login_whose_window_resets_first_and_dry_run_says_why() {
    let w = two_logins(None);
    let (soon, late) = (in_mins(60), in_mins(200));
    write_windows(
        &w.sb,
        &[
            (key(&w.sb, "claude-work"), vec![("five_hour", 30.0, late)]),
            (
                key(&w.sb, "claude-personal"),
                vec![("five_hour", 60.0, soon)],
            ),
        ],
    );

    let dry = w.sb.run(&["--dry-run", "-p", "hi"]);
    assert_eq!(dry.code, Some(0), "{dry:?}");
    let line = format!(
        "login:     login personal: soonest-reset — 5h resets {} (work {})",
        hh_mm(soon),
        hh_mm(late)
    );
    assert!(dry.stdout.contains(&line), "{}", dry.stdout);
    let json = w.sb.run(&["--dry-run", "--json", "-p", "hi"]);
    let value: Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(value["login"]["name"], "personal", "{value}");
    assert_eq!(value["login"]["rotation"], "soonest-reset", "{value}");

    let run = w.sb.run(&["-p", "hi"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(config_dir_of_launch(&w, 0), dir(&w.sb, "claude-personal"));
    assert_no_token_in_launch(&w, 0);
    assert!(!run.stderr.contains("using login"), "{}", run.stderr);

    // The other way round, the other login.
    write_windows(
        &w.sb,
        &[
            (key(&w.sb, "claude-work"), vec![("five_hour", 30.0, soon)]),
            (
                key(&w.sb, "claude-personal"),
                vec![("five_hour", 60.0, late)],
            ),
        ],
    );
    let run = w.sb.run(&["-p", "hi"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(config_dir_of_launch(&w, 1), dir(&w.sb, "claude-work"));
}

#[test]
fn at_equal_resets_a_login_ahead_of_its_weekly_pace_waits_behind_one_behind_it() {
    let w = two_logins(None);
    let five = in_mins(120);
    // Three days of the week left: 57 % of it gone.
    let week = in_mins(3 * 24 * 60);
    write_windows(
        &w.sb,
        &[
            (
                key(&w.sb, "claude-work"),
                vec![("five_hour", 10.0, five), ("weekly", 80.0, week)],
            ),
            (
                key(&w.sb, "claude-personal"),
                vec![("five_hour", 10.0, five), ("weekly", 20.0, week)],
            ),
        ],
    );

    let dry = w.sb.run(&["--dry-run", "-p", "hi"]);
    assert_eq!(dry.code, Some(0), "{dry:?}");
    assert!(
        dry.stdout
            .contains("login:     login personal: soonest-reset — 5h resets "),
        "{}",
        dry.stdout
    );
    assert!(
        dry.stdout.contains(
            "weekly 20% used at 57% of the week; work ahead of its weekly pace (80% used at 57%)"
        ),
        "{}",
        dry.stdout
    );
    let run = w.sb.run(&["-p", "hi"]);
    assert_eq!(config_dir_of_launch(&w, 0), dir(&w.sb, "claude-personal"));
    assert_eq!(run.code, Some(0));

    // Paces swapped: work is behind, and it runs.
    write_windows(
        &w.sb,
        &[
            (
                key(&w.sb, "claude-work"),
                vec![("five_hour", 10.0, five), ("weekly", 20.0, week)],
            ),
            (
                key(&w.sb, "claude-personal"),
                vec![("five_hour", 10.0, five), ("weekly", 80.0, week)],
            ),
        ],
    );
    let run = w.sb.run(&["-p", "hi"]);
    assert_eq!(run.code, Some(0));
    assert_eq!(config_dir_of_launch(&w, 1), dir(&w.sb, "claude-work"));
}

#[test]
fn adding_a_login_checks_its_directory_and_says_how_to_log_in_there() {
    let w = world();
    let empty = dir(&w.sb, "claude-new");
    let run = w.sb.run(&[
        "--accounts",
        "add",
        "new",
        "--backend",
        "claude",
        "--kind",
        "login",
        "--dir",
        &empty,
    ]);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(
        run.stderr
            .contains(&format!("CLAUDE_CONFIG_DIR={empty} claude, then /login")),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("Nothing stored"), "{}", run.stderr);
    assert!(!w.sb.home().join(".config/agent/credentials.toml").exists());

    w.sb.write_file(
        "claude-new/.credentials.json",
        &credentials(WORK_ACCESS, WORK_REFRESH),
    );
    let run = w.sb.run(&[
        "--accounts",
        "add",
        "new",
        "--backend",
        "claude",
        "--kind",
        "login",
        "--dir",
        &empty,
    ]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(run.stdout.contains("stored login new"), "{}", run.stdout);
    let stored =
        std::fs::read_to_string(w.sb.home().join(".config/agent/credentials.toml")).unwrap();
    assert!(stored.contains("kind = \"login\""), "{stored}");
    assert!(!stored.contains(WORK_ACCESS), "{stored}");

    let reset = in_mins(90);
    statusline_under(&w.sb, &empty, &feed(42.0, reset));
    let list = w.sb.run(&["--accounts", "list"]);
    assert_eq!(list.code, Some(0), "{list:?}");
    assert!(
        list.stdout.contains("new  claude (soonest-reset)  login"),
        "{}",
        list.stdout
    );
    assert!(list.stdout.contains("login (max)"), "{}", list.stdout);
    assert!(list.stdout.contains("5-hour 42%"), "{}", list.stdout);
    let json = w.sb.run(&["--accounts", "list", "--json"]);
    let rows: Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(rows[0]["login"]["plan"], "max", "{rows}");
    for out in [&run.stdout, &list.stdout, &json.stdout] {
        assert!(!out.contains(WORK_ACCESS) && !out.contains(WORK_REFRESH));
    }
}

/// A task that ran out on one login of a pool goes back up on *that* login — its session is
/// in that login's home — even when the pool would now choose another: the session on
/// `personal` (work was full) runs out and Codex carries the task; once personal's window
/// reset and work's is open again (the pool's first by priority), `agent -c` resumes the
/// session on personal, where it lives.
#[test]
fn a_task_goes_back_up_on_the_login_its_session_ran_on_not_the_pools_first() {
    use crate::support::claude_code::{
        FakeClaude, assistant_row, five_hour_limit_row_332, prompt_row, resets,
    };
    let w = two_logins(Some("priority"));
    let config = std::fs::read_to_string(w.sb.config_path()).unwrap();
    w.sb.write_config(&format!("fastfail_seconds = 1\n{config}"));
    write_windows(
        &w.sb,
        &[(
            key(&w.sb, "claude-work"),
            vec![("five_hour", 100.0, in_mins(120))],
        )],
    );
    FakeClaude::new(&w.sb)
        .works("1.3")
        .reset_in(3)
        .rows(&[
            prompt_row("port the parser"),
            assistant_row(&json!([{"type": "text", "text": "Ported the lexer."}])),
            five_hour_limit_row_332(),
        ])
        .install();

    let first =
        w.sb.run(&["--on-limit", "continue", "-p", "port the parser"]);
    assert_eq!(first.code, Some(0), "{first:?}");
    assert_eq!(config_dir_of_launch(&w, 0), dir(&w.sb, "claude-personal"));
    assert_eq!(
        crate::support::codex_runs(&w.sb).len(),
        1,
        "{}",
        first.stderr
    );
    let at = w.sb.calls("claude")[0]
        .argv
        .iter()
        .position(|word| word == "--session-id")
        .unwrap();
    let session = w.sb.calls("claude")[0].argv[at + 1].clone();

    // Work's window is open again, and personal's has reset.
    let windows_path = w.sb.state_dir().join("windows.json");
    let mut windows: Value =
        serde_json::from_str(&std::fs::read_to_string(&windows_path).unwrap()).unwrap();
    windows["logins"]
        .as_object_mut()
        .unwrap()
        .remove(&key(&w.sb, "claude-work"));
    std::fs::write(&windows_path, windows.to_string()).unwrap();
    let reset = resets(&w.sb)[0];
    crate::support::wait::until("personal's window to reset", || {
        Timestamp::now().as_second() >= reset
    });

    let back = w.sb.run(&["-c", "-p", "go on"]);

    assert_eq!(back.code, Some(0), "{back:?}");
    assert_eq!(w.sb.calls("claude").len(), 2, "{}", back.stderr);
    assert_eq!(
        config_dir_of_launch(&w, 1),
        dir(&w.sb, "claude-personal"),
        "the session's own login: {}",
        back.stderr
    );
    let argv = &w.sb.calls("claude")[1].argv;
    let at = argv.iter().position(|word| word == "--resume").unwrap();
    assert_eq!(argv[at + 1], session, "{argv:?}");
    assert_eq!(
        crate::support::codex_runs(&w.sb).len(),
        1,
        "{}",
        back.stderr
    );
    assert_no_token_in_launch(&w, 1);
}
