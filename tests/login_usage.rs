//! The opt-in read of a Claude login's windows from `/api/oauth/usage` (issue 13 "Opt-in
//! read-only endpoint", DESIGN §12): never asked unless `login_usage = true`; when on,
//! asked with an unexpired token only, at most once every few minutes per login, never
//! before its own 429's `retry-after`, and what it says parks the login.

use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};

use crate::support::mock_api::oauth_usage_body;
use crate::support::{MockApi, Reply, Rule, Sandbox};
use crate::world::world;

const ACCESS: &str = "sk-ant-oat01-USAGEfixtureACCESS-0123456789abcdef";
const REFRESH: &str = "sk-ant-ort01-USAGEfixtureREFRESH-0123456789abcdef";

const RUNGS: &str = r#"
[[rungs]]
backend = "claude"
probe_model = "opus"

[[rungs]]
backend = "codex"
"#;

const ON: &str = "[backends.claude]\nlogin_usage = true\n";

/// A sandbox whose Claude Code is logged in (token valid for `expires_in`), with no proxy
/// and no key: the Claude rung runs on that login. Codex below it runs on a key.
fn logged_in(expires_in: SignedDuration, login_usage: bool) -> (Sandbox, MockApi) {
    let w = world();
    w.sb.env_remove("AGENT_PROXY_URL");
    w.sb.env_remove("AGENT_PROXY_KEY");
    let expires_ms = (Timestamp::now() + expires_in).as_millisecond();
    w.sb.write_file(
        ".claude/.credentials.json",
        &json!({"claudeAiOauth": {
            "accessToken": ACCESS, "refreshToken": REFRESH, "expiresAt": expires_ms,
            "scopes": ["user:profile", "user:inference"], "subscriptionType": "max"}})
        .to_string(),
    );
    let config = if login_usage {
        format!("{ON}{RUNGS}")
    } else {
        RUNGS.to_string()
    };
    w.sb.write_config(&config);
    (w.sb, w.api)
}

fn usage_calls(api: &MockApi) -> usize {
    api.requests()
        .iter()
        .filter(|r| r.path == "/api/oauth/usage")
        .count()
}

fn claude_login(sb: &Sandbox) -> String {
    format!("claude:{}", sb.home().join(".claude").display())
}

fn day() -> SignedDuration {
    SignedDuration::from_hours(24)
}

/// Every file under the state directory, as text.
fn state_text(sb: &Sandbox) -> String {
    let mut text = String::new();
    for entry in std::fs::read_dir(sb.state_dir()).unwrap().flatten() {
        if let Ok(content) = std::fs::read_to_string(entry.path()) {
            text.push_str(&content);
        }
    }
    text
}

#[test]
fn off_by_default_no_command_ever_asks_the_usage_endpoint() {
    let (sb, api) = logged_in(day(), false);
    for args in [&["--status"][..], &["--check-fallback"], &["--doctor"]] {
        let run = sb.run(args);
        assert_eq!(usage_calls(&api), 0, "{args:?} asked: {run:?}");
    }
    let launch = sb.run(&["-p", "hi"]);
    assert_eq!(usage_calls(&api), 0, "the launch asked: {launch:?}");
    assert!(launch.stdout.contains("claude answered"), "{launch:?}");
}

#[test]
fn on_the_windows_are_recorded_from_the_endpoint_and_the_token_goes_nowhere_else() {
    let (sb, api) = logged_in(day(), true);
    api.on(Rule::path_contains("/api/oauth/usage")
        .reply(Reply::status(200).json(oauth_usage_body(37.0, 88.0))));
    let run = sb.run(&["--status"]);

    assert_eq!(usage_calls(&api), 1, "{run:?}");
    let request = api
        .requests()
        .into_iter()
        .find(|r| r.path == "/api/oauth/usage")
        .unwrap();
    assert!(
        request
            .header("user-agent")
            .is_some_and(|ua| ua.starts_with("agent/")),
        "{:?}",
        request.headers
    );
    assert_eq!(request.header("anthropic-beta"), Some("oauth-2025-04-20"));
    assert_eq!(request.credential.as_deref(), Some(ACCESS));
    let windows: Value = serde_json::from_str(
        &std::fs::read_to_string(sb.state_dir().join("windows.json")).unwrap(),
    )
    .unwrap();
    let rows = windows["logins"][claude_login(&sb)].as_array().unwrap();
    let seen: Vec<(&str, f64, &str)> = rows
        .iter()
        .map(|w| {
            (
                w["scope"]["kind"].as_str().unwrap(),
                w["used_percent"].as_f64().unwrap(),
                w["source"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        vec![
            ("five_hour", 37.0, "usage_endpoint"),
            ("weekly", 88.0, "usage_endpoint")
        ],
        "{windows}"
    );
    // --status shows what was learnt, and the token appears in no output or state file.
    let again = sb.run(&["--status"]);
    assert!(again.stdout.contains("37"), "{again:?}");
    for text in [
        run.stdout,
        run.stderr,
        again.stdout,
        again.stderr,
        state_text(&sb),
    ] {
        assert!(!text.contains("USAGEfixture"), "{text}");
    }
    // Only the usage call carried the token: no prompt was sent with it.
    assert!(
        api.requests()
            .iter()
            .filter(|r| r.credential.as_deref() == Some(ACCESS))
            .all(|r| r.path == "/api/oauth/usage")
    );
}

#[test]
fn a_full_five_hour_window_from_the_endpoint_parks_the_login_with_no_call() {
    let (sb, api) = logged_in(day(), true);
    api.on(Rule::path_contains("/api/oauth/usage")
        .reply(Reply::status(200).json(oauth_usage_body(100.0, 40.0))));
    let run = sb.run(&["-p", "hi"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(usage_calls(&api), 1, "{run:?}");
    assert!(sb.calls("claude").is_empty(), "the parked login ran");
    assert_eq!(sb.calls("codex").len(), 1, "{}", run.stderr);
    assert!(
        api.requests().iter().all(|r| r.path != "/v1/messages"),
        "a prompt was sent"
    );
    assert!(
        run.stderr.contains("unavailable — 5-hour limit, resets "),
        "{}",
        run.stderr
    );
}

/// Claude Code's launches on `-p hi` (not the CLI's own checks `--status` runs).
fn launches(sb: &Sandbox) -> usize {
    sb.calls("claude")
        .iter()
        .filter(|call| call.argv.iter().any(|arg| arg == "hi"))
        .count()
}

#[test]
fn the_endpoint_is_asked_at_most_once_within_the_throttle() {
    let (sb, api) = logged_in(day(), true);
    // An answer with no figures: nothing fresh is learnt, so only the throttle holds.
    api.on(
        Rule::path_contains("/api/oauth/usage").reply(Reply::status(200).json(json!({
            "five_hour": null, "seven_day": null, "limits": []
        }))),
    );
    let first = sb.run(&["-p", "hi"]);
    assert_eq!(usage_calls(&api), 1, "{first:?}");
    let second = sb.run(&["-p", "hi"]);
    let status = sb.run(&["--status"]);
    assert_eq!(usage_calls(&api), 1, "{second:?} {status:?}");
    assert_eq!(
        launches(&sb),
        2,
        "--status runs Claude Code's own check besides"
    );
}

#[test]
fn a_429_is_honoured_until_its_retry_after() {
    let (sb, api) = logged_in(day(), true);
    api.on(Rule::path_contains("/api/oauth/usage").reply(
        Reply::anthropic_error(429, "rate_limit_error", "Rate limited")
            .header("retry-after", "3600"),
    ));
    let first = sb.run(&["--status"]);
    assert_eq!(usage_calls(&api), 1, "{first:?}");
    let path = sb.state_dir().join("login_usage.json");
    let mut state: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let until: Timestamp = state["refused_until"][claude_login(&sb)]["at"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        until > Timestamp::now() + SignedDuration::from_mins(55),
        "the retry-after was not kept: {state}"
    );
    // Past the throttle (its mark moved back), still inside the retry-after: no call.
    let long_ago = (Timestamp::now() - SignedDuration::from_hours(1)).to_string();
    state["asked"][claude_login(&sb)]["at"] = json!(long_ago);
    std::fs::write(&path, state.to_string()).unwrap();
    api.clear_rules();
    let second = sb.run(&["--status"]);
    let launch = sb.run(&["-p", "hi"]);
    assert_eq!(usage_calls(&api), 1, "{second:?} {launch:?}");
    assert_eq!(
        launches(&sb),
        1,
        "a 429 of the endpoint is not the login's wall"
    );
}

#[test]
fn an_expired_token_is_never_used() {
    let (sb, api) = logged_in(-SignedDuration::from_mins(1), true);
    sb.run(&["--status"]);
    sb.run(&["-p", "hi"]);
    assert_eq!(usage_calls(&api), 0);
    // About to expire (inside Claude Code's own 5-minute margin): not used either.
    let (sb, api) = logged_in(SignedDuration::from_mins(2), true);
    sb.run(&["--status"]);
    assert_eq!(usage_calls(&api), 0);
}

#[test]
fn a_token_given_in_claude_code_oauth_token_is_asked_with_that_token_under_its_own_key() {
    const ENV_TOKEN: &str = "sk-ant-oat01-USAGEfixtureENV-0123456789abcdef";
    let (sb, api) = logged_in(day(), true);
    std::fs::remove_file(sb.home().join(".claude/.credentials.json")).unwrap();
    sb.env("CLAUDE_CODE_OAUTH_TOKEN", ENV_TOKEN);
    api.on(Rule::path_contains("/api/oauth/usage")
        .reply(Reply::status(200).json(oauth_usage_body(100.0, 40.0))));
    let run = sb.run(&["-p", "hi"]);
    let calls: Vec<_> = api
        .requests()
        .into_iter()
        .filter(|r| r.path == "/api/oauth/usage")
        .collect();
    assert_eq!(calls.len(), 1, "{run:?}");
    assert_eq!(calls[0].credential.as_deref(), Some(ENV_TOKEN));
    assert!(sb.calls("claude").is_empty(), "{run:?}");
    let windows = std::fs::read_to_string(sb.state_dir().join("windows.json")).unwrap();
    assert!(
        windows.contains(&crate::support::claude_dir_login(sb.home())),
        "{windows}"
    );
    for text in [run.stdout, run.stderr, state_text(&sb)] {
        assert!(!text.contains("USAGEfixture"), "{text}");
    }
}

#[test]
fn windows_seen_freshly_elsewhere_are_not_asked_again() {
    let (sb, api) = logged_in(day(), true);
    let now = Timestamp::now();
    let row = json!({
        "scope": {"kind": "five_hour"}, "used_percent": 10.0,
        "resets_at": (now + SignedDuration::from_hours(2)).to_string(),
        "source": "statusline", "observed_at": now.to_string(),
    });
    std::fs::write(
        sb.state_dir().join("windows.json"),
        json!({"logins": {claude_login(&sb): [row]}}).to_string(),
    )
    .unwrap();
    let run = sb.run(&["--status"]);
    let launch = sb.run(&["-p", "hi"]);
    assert_eq!(usage_calls(&api), 0, "{run:?} {launch:?}");
}

/// Moves the last ask and every reading of the login back an hour, as if they were made
/// long ago: the readings are no longer fresh and the throttle lets the next ask through.
fn asked_long_ago(sb: &Sandbox) {
    let long_ago = json!((Timestamp::now() - SignedDuration::from_hours(1)).to_string());
    let path = sb.state_dir().join("login_usage.json");
    let mut state: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    state["asked"][claude_login(sb)]["at"] = long_ago.clone();
    std::fs::write(&path, state.to_string()).unwrap();
    let path = sb.state_dir().join("windows.json");
    let mut windows: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    for row in windows["logins"][claude_login(sb)].as_array_mut().unwrap() {
        row["observed_at"] = long_ago.clone();
    }
    std::fs::write(&path, windows.to_string()).unwrap();
}

#[test]
fn a_full_window_read_after_a_passing_check_parks_the_next_launch() {
    let (sb, api) = logged_in(day(), true);
    api.on(Rule::path_contains("/api/oauth/usage")
        .reply(Reply::status(200).json(oauth_usage_body(37.0, 40.0))));
    let status = sb.run(&["--status"]);
    assert_eq!(usage_calls(&api), 1, "{status:?}");
    assert!(status.stdout.contains("OK"), "{status:?}");

    // The window fills after the check passed; the next read says so.
    asked_long_ago(&sb);
    api.clear_rules();
    api.on(Rule::path_contains("/api/oauth/usage")
        .reply(Reply::status(200).json(oauth_usage_body(100.0, 40.0))));
    let launch = sb.run(&["-p", "hi"]);
    assert_eq!(
        usage_calls(&api),
        2,
        "the newer reading was not asked: {launch:?}"
    );
    assert_eq!(launches(&sb), 0, "the full login ran: {launch:?}");
    assert_eq!(sb.calls("codex").len(), 1, "{}", launch.stderr);
    assert!(
        launch.stderr.contains("5-hour limit, resets "),
        "{}",
        launch.stderr
    );
}

#[test]
fn a_full_window_read_after_a_launch_parks_the_next_launch() {
    let (sb, api) = logged_in(day(), true);
    api.on(Rule::path_contains("/api/oauth/usage")
        .reply(Reply::status(200).json(oauth_usage_body(37.0, 40.0))));
    let first = sb.run(&["-p", "hi"]);
    assert_eq!(launches(&sb), 1, "{first:?}");

    asked_long_ago(&sb);
    api.clear_rules();
    api.on(Rule::path_contains("/api/oauth/usage")
        .reply(Reply::status(200).json(oauth_usage_body(100.0, 40.0))));
    let second = sb.run(&["-p", "hi"]);
    assert_eq!(
        usage_calls(&api),
        2,
        "the newer reading was not asked: {second:?}"
    );
    assert_eq!(launches(&sb), 1, "the full login ran again: {second:?}");
    assert_eq!(sb.calls("codex").len(), 1, "{}", second.stderr);
}

#[test]
fn a_full_window_read_by_status_parks_the_launch_after_it() {
    let (sb, api) = logged_in(day(), true);
    api.on(Rule::path_contains("/api/oauth/usage")
        .reply(Reply::status(200).json(oauth_usage_body(100.0, 40.0))));
    let status = sb.run(&["--status"]);
    assert!(status.stdout.contains("PARKED"), "{status:?}");
    let launch = sb.run(&["-p", "hi"]);
    assert_eq!(launches(&sb), 0, "the full login ran: {launch:?}");
    assert_eq!(sb.calls("codex").len(), 1, "{}", launch.stderr);
}
