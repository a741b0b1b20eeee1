//! Releasing a parked login by hand (issue 43, item 3): `agent --unpark NAME` forgets what
//! parks a rung (its number, or a backend's every rung) or a login (an account), says what
//! it forgot — or that there was nothing — and a name it does not know is a usage error
//! with the nearest name. Before, the only way was deleting `parked.json` and
//! `windows.json`.

use serde_json::{Value, json};

use crate::logins_pool::{key, two_logins};
use crate::parking::{claude_login, five_hour, in_hours, write_logins, write_windows};
use crate::support::Sandbox;
use crate::world::{CLAUDE_THEN_CODEX, world};

/// The windows `windows.json` keeps for `login`.
fn windows_of(sb: &Sandbox, login: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(sb.state_dir().join("windows.json")).unwrap();
    let file: Value = serde_json::from_str(&text).unwrap();
    file["logins"][login]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// The events `--unpark` recorded.
fn unparked_events(sb: &Sandbox) -> Vec<Value> {
    std::fs::read_to_string(sb.state_dir().join("events.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|event| event["event"] == "unparked")
        .collect()
}

#[test]
fn a_rung_parked_by_a_full_window_is_released_by_its_number_and_runs_again() {
    let w = world();
    w.sb.write_config(CLAUDE_THEN_CODEX);
    write_windows(
        &w.sb,
        &claude_login(&w.sb),
        &[(five_hour(), 100.0, in_hours(3))],
    );
    let parked = w.sb.run(&["-p", "hi"]);
    assert!(w.sb.calls("claude").is_empty(), "parked: {parked:?}");

    let unpark = w.sb.run(&["--unpark", "1"]);
    let launch = w.sb.run(&["-p", "hi"]);
    let again = w.sb.run(&["--unpark", "1"]);

    assert_eq!(unpark.code, Some(0), "{unpark:?}");
    assert!(
        unpark
            .stdout
            .starts_with("forgot for rung 1 claude: 5-hour limit, resets "),
        "{}",
        unpark.stdout
    );
    assert!(windows_of(&w.sb, &claude_login(&w.sb)).is_empty());
    assert_eq!(launch.code, Some(0), "{launch:?}");
    assert_eq!(w.sb.calls("claude").len(), 1, "it ran: {}", launch.stderr);
    assert_eq!(again.code, Some(0), "{again:?}");
    assert_eq!(
        again.stdout,
        "nothing to forget: rung 1 claude — no window parks it, no quota cooldown holds it\n"
    );
    let events = unparked_events(&w.sb);
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["from"], "rung 1 claude");
}

#[test]
fn a_rung_forgets_only_the_window_of_its_own_model() {
    let w = world();
    w.sb.write_config(
        "[[rungs]]\nbackend = \"claude\"\nprobe_model = \"opus\"\nrun_model = \"opus\"\n\n[[rungs]]\nbackend = \"claude\"\nprobe_model = \"sonnet\"\nrun_model = \"sonnet\"\n",
    );
    let opus_week = json!({"kind": "model_weekly", "family": "opus"});
    write_windows(
        &w.sb,
        &claude_login(&w.sb),
        &[(opus_week, 100.0, in_hours(30))],
    );

    let sonnet = w.sb.run(&["--unpark", "2"]);
    let opus = w.sb.run(&["--unpark", "rung 1"]);

    assert!(
        sonnet
            .stdout
            .starts_with("nothing to forget: rung 2 claude / claude-sonnet-5"),
        "a weekly Opus limit parks no Sonnet rung: {sonnet:?}"
    );
    assert!(
        opus.stdout.starts_with(
            "forgot for rung 1 claude / claude-opus-5 (opus): weekly Opus limit, resets "
        ),
        "{opus:?}"
    );
    assert!(windows_of(&w.sb, &claude_login(&w.sb)).is_empty());
}

#[test]
fn a_login_of_a_pool_is_released_by_its_account_and_its_neighbour_keeps_its_window() {
    let w = two_logins(None);
    let (work, personal) = (key(&w.sb, "claude-work"), key(&w.sb, "claude-personal"));
    write_logins(
        &w.sb,
        &[
            (&work, &[(five_hour(), 100.0, in_hours(2))]),
            (&personal, &[(five_hour(), 100.0, in_hours(4))]),
        ],
    );
    std::fs::write(w.sb.state_dir().join("parked.json"), "{\"logins\": {}}").unwrap();

    let unpark = w.sb.run(&["--unpark", "work", "--json"]);

    assert_eq!(unpark.code, Some(0), "{unpark:?}");
    let said: Value = serde_json::from_str(&unpark.stdout).unwrap();
    assert_eq!(
        said["forgot"][0]["whose"],
        format!("login {work}"),
        "{said}"
    );
    assert!(
        said["forgot"][0]["forgot"]
            .as_str()
            .unwrap()
            .starts_with("5-hour limit, resets "),
        "{said}"
    );
    assert!(windows_of(&w.sb, &work).is_empty());
    assert_eq!(
        windows_of(&w.sb, &personal).len(),
        1,
        "the neighbour is still parked"
    );
}

#[test]
fn a_name_agent_does_not_know_is_a_usage_error_with_the_nearest_name() {
    let w = world();
    w.sb.write_config(CLAUDE_THEN_CODEX);

    let slip = w.sb.run(&["--unpark", "cluade"]);
    let too_far = w.sb.run(&["--unpark", "9"]);

    assert_eq!(slip.code, Some(2), "{slip:?}");
    assert!(
        slip.stderr
            .contains("--unpark: no rung, backend, login account or login named \"cluade\" — did you mean claude?"),
        "{}",
        slip.stderr
    );
    assert_eq!(too_far.code, Some(2), "{too_far:?}");
    assert!(
        too_far.stderr.contains("--unpark 9: the table has 2 rungs"),
        "{}",
        too_far.stderr
    );
    assert!(
        !w.sb.state_dir().join("windows.json").exists(),
        "nothing written"
    );
}

/// Forgetting a login's window releases every rung on that login, and the report says so —
/// not only the rung the window was forgotten through.
#[test]
fn a_backends_window_released_names_every_rung_it_held() {
    let w = world();
    write_windows(
        &w.sb,
        &claude_login(&w.sb),
        &[(five_hour(), 100.0, in_hours(3))],
    );

    let unpark = w.sb.run(&["--unpark", "claude"]);

    assert_eq!(unpark.code, Some(0), "{unpark:?}");
    assert!(
        unpark.stdout.contains(
            "no longer parked: rung 1 claude, rung 2 claude / claude-sonnet-5 (sonnet)\n"
        ),
        "{}",
        unpark.stdout
    );
}
