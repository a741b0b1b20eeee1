//! State on disk under faults and hostile neighbours: a torn or undecodable ledger line
//! costs that line only, every corrupt JSON state file is kept aside and rebuilt, a stuck
//! lock holder does not hang a launch, links and untrusted directories are refused, and
//! `--doctor` finds what would break state.

use std::fs;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use crate::support::Sandbox;
use crate::world::{CLAUDE_THEN_CODEX, World, world};

const KEY_A: &str = "sk-ant-api03-account-A-SECRET-111111";
const KEY_B: &str = "sk-ant-api03-account-B-SECRET-222222";

/// One claude rung over two accounts with `rotation`.
fn pool(w: &World, rotation: &str) {
    w.sb.env("KEY_A", KEY_A);
    w.sb.env("KEY_B", KEY_B);
    w.sb.env_remove("AGENT_PROXY_URL");
    w.sb.write_config(&format!(
        r#"
[backends.claude]
rotation = "{rotation}"

[[rungs]]
backend = "claude"
probe_model = "opus"

[[accounts]]
name = "a"
backend = "claude"
kind = "api_key"
secret_env = "KEY_A"

[[accounts]]
name = "b"
backend = "claude"
kind = "api_key"
secret_env = "KEY_B"
"#
    ));
}

/// The copies of `name` kept aside in the state directory, with their contents.
fn kept_aside(sb: &Sandbox, name: &str) -> Vec<String> {
    let prefix = format!("{name}.corrupt-");
    sb.state_files()
        .into_iter()
        .filter(|(path, _)| path.to_string_lossy().starts_with(&prefix))
        .map(|(_, content)| content)
        .collect()
}

fn events(sb: &Sandbox) -> Vec<serde_json::Value> {
    fs::read_to_string(sb.state_dir().join("events.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

/// Corrupts `name`, runs `args`, and checks DESIGN.md §6's rule: the command works, the
/// bad copy is kept aside, a `corrupt_state` event names the file, and the file is
/// rebuilt as valid JSON.
fn corrupt_then_run(w: &World, name: &str, args: &[&str], expect_code: i32) {
    let garbage = format!("{{\"{name}\": [1, 2,");
    fs::write(w.sb.state_dir().join(name), &garbage).unwrap();

    let run = w.sb.run(args);

    assert_eq!(run.code, Some(expect_code), "{name}: {run:?}");
    assert!(
        run.stderr.contains("kept aside as"),
        "{name}: {}",
        run.stderr
    );
    assert_eq!(kept_aside(&w.sb, name), [garbage], "{name}");
    assert!(
        events(&w.sb)
            .iter()
            .any(|e| e["event"] == "corrupt_state" && e["from"] == name),
        "{name}: {:?}",
        events(&w.sb)
    );
    let rebuilt = fs::read_to_string(w.sb.state_dir().join(name))
        .unwrap_or_else(|e| panic!("{name} was not rebuilt: {e}"));
    serde_json::from_str::<serde_json::Value>(&rebuilt)
        .unwrap_or_else(|e| panic!("{name} rebuilt unreadable: {e}: {rebuilt}"));
}

#[test]
fn a_corrupt_health_file_is_kept_aside_and_rebuilt_by_the_launch() {
    let w = world();
    w.sb.write_config(CLAUDE_THEN_CODEX);
    corrupt_then_run(&w, "health.json", &["-p", "hi"], 0);
    assert_eq!(w.sb.calls("claude").len(), 1);
}

#[test]
fn a_corrupt_budget_file_is_kept_aside_and_rebuilt_by_budget_status() {
    let w = world();
    corrupt_then_run(&w, "budget.json", &["--budget", "status"], 0);
}

#[test]
fn a_corrupt_account_health_file_is_kept_aside_and_rebuilt_by_a_check() {
    let w = world();
    pool(&w, "priority");
    corrupt_then_run(&w, "accounts.json", &["--accounts", "test", "a"], 0);
}

#[test]
fn a_corrupt_rotation_file_is_kept_aside_and_rebuilt_by_the_launch() {
    let w = world();
    pool(&w, "round-robin");
    corrupt_then_run(&w, "rotation.json", &["-p", "hi"], 0);
    assert_eq!(w.sb.calls("claude").len(), 1);
}

#[test]
fn a_corrupt_watchdog_file_is_kept_aside_and_rebuilt_by_check_fallback() {
    let w = world();
    corrupt_then_run(&w, "watchdog.json", &["--check-fallback"], 0);
}

/// A ledger line as agent writes it, made now, for `model`.
fn ledger_line(model: &str) -> String {
    serde_json::json!({
        "time": jiff::Timestamp::now().to_string(),
        "run": "r",
        "backend": "claude",
        "model": model,
        "upstream": "127.0.0.1",
        "role": "probe",
        "status": 200,
        "error_kind": "ok",
        "tokens": {"input": 10, "output": 5},
        "duration_s": 0.1,
        "day": jiff::ZonedDateTime::now().date().to_string(),
    })
    .to_string()
}

#[test]
fn a_torn_ledger_tail_stays_alone_and_the_next_record_is_a_line_of_its_own() {
    let w = world();
    w.sb.write_config(CLAUDE_THEN_CODEX);
    let ledger = w.sb.state_dir().join("usage.jsonl");
    // What a failed append leaves: part of a line, no newline.
    let torn = &ledger_line("torn-model")[..40];
    fs::write(&ledger, format!("{}\n{torn}", ledger_line("before-model"))).unwrap();

    assert_eq!(w.sb.run(&["-p", "hi"]).code, Some(0));

    let text = fs::read_to_string(&ledger).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert_eq!(lines[1], torn, "the torn piece is left alone on its line");
    let next: serde_json::Value = serde_json::from_str(lines[2])
        .unwrap_or_else(|e| panic!("the next record is glued to the torn one: {e}: {text}"));
    assert_eq!(next["model"], "claude-opus-5");
}

#[test]
fn a_ledger_line_that_is_not_utf8_costs_only_that_line() {
    let w = world();
    let mut bytes = format!("{}\n", ledger_line("before-model")).into_bytes();
    // Latin-1 where UTF-8 belongs.
    bytes.extend_from_slice(b"{\"model\": \"caf\xe9\"}\n");
    bytes.extend_from_slice(format!("{}\n", ledger_line("after-model")).as_bytes());
    fs::write(w.sb.state_dir().join("usage.jsonl"), &bytes).unwrap();
    // The budget is rebuilt from the ledger.
    fs::write(w.sb.state_dir().join("budget.json"), "{").unwrap();

    let status = w.sb.run(&["--budget", "status", "--json"]);
    let recent = w.sb.run(&["--budget", "recent"]);
    let usage = w.sb.run(&["--usage", "--source", "agent"]);

    assert_eq!(status.code, Some(0), "{status:?}");
    let status: serde_json::Value = serde_json::from_str(&status.stdout).unwrap();
    assert_eq!(
        status["calls"], 2,
        "both good lines counted, before and after"
    );
    assert_eq!(status["tokens"], 30);
    assert!(recent.stdout.contains("before-model"), "{}", recent.stdout);
    assert!(recent.stdout.contains("after-model"), "{}", recent.stdout);
    assert!(usage.stdout.contains("after-model"), "{}", usage.stdout);
    assert!(
        usage.stdout.contains("1 unreadable line skipped"),
        "{}",
        usage.stdout
    );
}

#[test]
fn a_launch_whose_state_lock_is_held_runs_unprobed_and_names_the_lock() {
    let w = world();
    w.sb.write_config(CLAUDE_THEN_CODEX);
    // A process stopped inside its critical section: the lock is never let go.
    let lock = w.sb.state_dir().join("budget.json.lock");
    let holder = fs::File::create(&lock).unwrap();
    holder.lock().unwrap();

    let run = w.sb.run(&["-p", "hi"]);

    assert!(!run.timed_out, "{run:?}");
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(w.sb.calls("claude").len(), 1);
    assert_eq!(w.api.posts(), 0, "no probe without a saved reservation");
    assert!(
        run.stderr
            .contains(&format!("{} is held by another process", lock.display())),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("unprobed"), "{}", run.stderr);
    drop(holder);
}

/// A file outside the state directory that a planted link points to.
fn victim(sb: &Sandbox) -> PathBuf {
    let path = sb.root().join("victim");
    fs::write(&path, "precious\n").unwrap();
    path
}

fn plant_link(sb: &Sandbox, name: &str, target: &Path) {
    std::os::unix::fs::symlink(target, sb.state_dir().join(name)).unwrap();
}

#[test]
fn a_link_planted_as_the_ledger_or_events_file_is_not_written_through() {
    let w = world();
    w.sb.write_config(CLAUDE_THEN_CODEX);
    let target = victim(&w.sb);
    plant_link(&w.sb, "usage.jsonl", &target);
    plant_link(&w.sb, "events.jsonl", &target);

    let run = w.sb.run(&["-p", "hi"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(w.api.posts(), 1, "the probe was made");
    assert_eq!(fs::read_to_string(&target).unwrap(), "precious\n");
    assert!(
        run.stderr.contains("usage.jsonl is a symbolic link"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_link_planted_as_a_lock_file_creates_nothing_where_it_points() {
    let w = world();
    w.sb.write_config(CLAUDE_THEN_CODEX);
    // Opening a lock file creates it: through a link, anywhere the link points.
    let absent = w.sb.root().join("created-through-a-link");
    plant_link(&w.sb, "budget.json.lock", &absent);

    let run = w.sb.run(&["-p", "hi"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(w.sb.calls("claude").len(), 1);
    assert!(!absent.exists(), "a file was created through the link");
    assert!(
        run.stderr.contains("budget.json.lock is a symbolic link"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_state_directory_others_can_write_is_refused_by_reports_with_the_fix() {
    let sb = Sandbox::new();
    let dir = sb.state_dir();
    fs::set_permissions(dir, fs::Permissions::from_mode(0o777)).unwrap();

    let run = sb.run(&["--budget", "status"]);

    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(
        run.stderr
            .contains(&format!("{} is 777: other users can write", dir.display())),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains(&format!("chmod 700 {}", dir.display())),
        "{}",
        run.stderr
    );
}

#[test]
fn a_launch_in_a_state_directory_others_can_write_runs_unprobed_and_touches_nothing() {
    let w = world();
    w.sb.write_config(CLAUDE_THEN_CODEX);
    let dir = w.sb.state_dir();
    fs::set_permissions(dir, fs::Permissions::from_mode(0o777)).unwrap();
    // Planted by another user. Read, it would be moved aside as corrupt.
    fs::write(dir.join("health.json"), "{").unwrap();

    let run = w.sb.run(&["-p", "hi"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(w.sb.calls("claude").len(), 1);
    assert_eq!(
        w.api.posts(),
        0,
        "no probe: its reservation cannot be saved"
    );
    assert!(
        run.stderr.contains(&format!("chmod 700 {}", dir.display())),
        "{}",
        run.stderr
    );
    let names: Vec<String> =
        w.sb.state_files()
            .into_iter()
            .map(|(path, _)| path.to_string_lossy().into_owned())
            .collect();
    assert_eq!(names, ["health.json"], "nothing written, nothing moved");
}

#[test]
fn doctor_finds_a_state_directory_that_cannot_be_made() {
    let sb = Sandbox::new();
    let blocker = sb.write_file("not-a-dir", "a file where a directory should be\n");
    let dir = blocker.join("state");
    sb.env("AGENT_STATE_DIR", dir.to_string_lossy());

    let run = sb.run(&["--doctor"]);

    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(
        run.stdout.contains(&format!(
            "{} cannot be created: {} is not a directory agent may write in",
            dir.display(),
            blocker.display()
        )),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains(&format!("fix: mkdir -m 700 -p {}", dir.display())),
        "{}",
        run.stdout
    );
}

#[test]
fn doctor_finds_a_relay_token_others_can_read() {
    let sb = Sandbox::new();
    assert_eq!(sb.run(&["--relay", "init"]).code, Some(0));
    let token = sb.home().join(".config/agent/relay-token");
    fs::set_permissions(&token, fs::Permissions::from_mode(0o644)).unwrap();

    let run = sb.run(&["--doctor"]);

    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(
        run.stdout.contains(&format!(
            "{} is 644: other users can read the relay token",
            token.display()
        )),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains(&format!("fix: chmod 600 {}", token.display())),
        "{}",
        run.stdout
    );
}
