//! Parking a subscription login's rungs by its usage windows (DESIGN §12 "Decisions"): a
//! full window skips the login's rungs with no call until its reset, the notice names the
//! window and the reset, and a fast-failed run's own record parks the login next time.

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use serde_json::json;

use crate::support::claude_code::{
    claude_failing_with_rows, claude_failing_with_rows_after, limit_row, session_limit_text,
};
use crate::support::{Sandbox, launched_words};
use crate::world::{CLAUDE_THEN_CODEX, world};

/// The key `windows.json` keeps the sandbox's Claude Code login under.
pub(crate) fn claude_login(sb: &Sandbox) -> String {
    format!("claude:{}", sb.home().join(".claude").display())
}

pub(crate) fn codex_login(sb: &Sandbox) -> String {
    format!("codex:{}", sb.home().join(".codex").display())
}

/// One window of a login: its scope, how full (percent), and its reset.
pub(crate) type Window = (serde_json::Value, f64, Timestamp);

/// Writes `windows.json` as the store keeps it: one login, these windows.
pub(crate) fn write_windows(sb: &Sandbox, login: &str, windows: &[Window]) {
    write_logins(sb, &[(login, windows)]);
}

/// Writes `windows.json` as the store keeps it: each login with its windows, all seen now
/// by the statusline.
pub(crate) fn write_logins(sb: &Sandbox, logins: &[(&str, &[Window])]) {
    let now = Timestamp::now();
    let logins: serde_json::Map<String, serde_json::Value> = logins
        .iter()
        .map(|(login, windows)| {
            let rows: Vec<serde_json::Value> = windows
                .iter()
                .map(|(scope, percent, resets_at)| {
                    json!({
                        "scope": scope,
                        "used_percent": percent,
                        "resets_at": resets_at.to_string(),
                        "source": "statusline",
                        "observed_at": now.to_string(),
                    })
                })
                .collect();
            ((*login).to_string(), json!(rows))
        })
        .collect();
    std::fs::write(
        sb.state_dir().join("windows.json"),
        json!({ "logins": logins }).to_string(),
    )
    .unwrap();
}

pub(crate) fn five_hour() -> serde_json::Value {
    json!({"kind": "five_hour"})
}

pub(crate) fn in_hours(hours: i64) -> Timestamp {
    Timestamp::now() + SignedDuration::from_hours(hours)
}

#[test]
fn a_full_window_parks_the_login_with_no_call_and_after_its_reset_it_runs_again() {
    let w = world();
    w.sb.write_config(CLAUDE_THEN_CODEX);
    let reset = Timestamp::now() + SignedDuration::from_secs(3);
    write_windows(&w.sb, &claude_login(&w.sb), &[(five_hour(), 100.0, reset)]);

    let run = w.sb.run(&["-p", "hi"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(w.sb.calls("claude").is_empty(), "the parked login ran");
    assert_eq!(
        w.api.posts_for_model("claude-opus-5"),
        0,
        "the parked rung was probed"
    );
    assert_eq!(w.sb.calls("codex").len(), 1);
    assert!(
        run.stderr.contains(
            "[agent] Claude Code (its default model) unavailable — 5-hour limit, resets "
        ),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("[agent] using Codex"), "{}", run.stderr);
    let dry = w.sb.run(&["--dry-run", "-p", "hi"]);
    assert!(dry.stdout.contains("5-hour limit, resets"), "{dry:?}");

    // After the reset instant the login is used again, with no manual step.
    while Timestamp::now() <= reset {
        std::thread::sleep(Duration::from_millis(200));
    }
    let run = w.sb.run(&["-p", "hi"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(w.sb.calls("claude").len(), 1, "{}", run.stderr);
    assert_eq!(w.sb.calls("codex").len(), 1, "{}", run.stderr);
}

/// A fake `claude` that, like Claude Code refused by a usage limit, writes its synthetic
/// error row into the transcript of the working directory and exits 1 at once.
fn claude_refused_with(sb: &Sandbox, text: &str) {
    claude_failing_with_rows(sb, &[limit_row(text)]);
}

#[test]
fn a_limit_row_left_by_a_fast_failed_claude_parks_its_login_on_the_next_launch() {
    let w = world();
    w.sb.write_config(CLAUDE_THEN_CODEX);
    claude_refused_with(&w.sb, &session_limit_text());

    let first = w.sb.run(&["-p", "hi"]);
    assert_eq!(first.code, Some(0), "{first:?}");
    assert_eq!(w.sb.calls("claude").len(), 1);
    assert!(
        first
            .stderr
            .contains("Claude Code (its default model): 5-hour limit, resets "),
        "{}",
        first.stderr
    );
    let probes = w.api.posts_for_model("claude-opus-5");

    let second = w.sb.run(&["-p", "hi"]);

    assert_eq!(second.code, Some(0), "{second:?}");
    assert_eq!(w.sb.calls("claude").len(), 1, "the parked login ran again");
    assert_eq!(w.api.posts_for_model("claude-opus-5"), probes, "probed");
    assert_eq!(w.sb.calls("codex").len(), 2);
    assert!(
        second
            .stderr
            .contains("Claude Code (its default model) unavailable — 5-hour limit, resets "),
        "{}",
        second.stderr
    );
}

#[test]
fn a_short_rate_limit_of_the_service_parks_nothing() {
    let w = world();
    w.sb.write_config(CLAUDE_THEN_CODEX);
    claude_refused_with(
        &w.sb,
        "API Error: Server is temporarily limiting requests (not your usage limit) · Rate limited",
    );
    assert_eq!(w.sb.run(&["-p", "hi"]).code, Some(0));

    let second = w.sb.run(&["-p", "hi"]);

    assert_eq!(w.sb.calls("claude").len(), 2, "{}", second.stderr);
    assert!(
        !second.stderr.contains("limit, resets"),
        "{}",
        second.stderr
    );
}

#[test]
fn a_prompt_or_an_answer_quoting_a_limit_text_parks_nothing() {
    let w = world();
    w.sb.write_config(CLAUDE_THEN_CODEX);
    // A plausible reset: only who wrote the row keeps it from parking the login.
    let text = format!("Claude AI usage limit reached|{}", in_hours(2).as_second());
    let session = session_limit_text();
    claude_failing_with_rows(
        &w.sb,
        &[
            json!({"type": "user", "sessionId": "s-1", "timestamp": "@NOW@",
                   "message": {"role": "user", "content": text}}),
            json!({"type": "user", "sessionId": "s-1", "timestamp": "@NOW@",
                   "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t",
                               "content": [{"type": "text", "text": text}]}]}}),
            json!({"type": "assistant", "sessionId": "s-1", "timestamp": "@NOW@",
                   "message": {"model": "claude-opus-5", "role": "assistant",
                               "content": [{"type": "text", "text": text}, {"type": "text", "text": session}]},
                   "error": "rate_limit", "isApiErrorMessage": true}),
        ],
    );

    let first = w.sb.run(&["-p", "hi"]);
    assert_eq!(first.code, Some(0), "{first:?}");
    assert!(!first.stderr.contains("parked until"), "{}", first.stderr);
    let second = w.sb.run(&["-p", "hi"]);

    assert_eq!(w.sb.calls("claude").len(), 2, "parked: {}", second.stderr);
    assert!(
        !second.stderr.contains("limit, resets"),
        "{}",
        second.stderr
    );
    assert!(!w.sb.state_dir().join("windows.json").exists());
}

#[test]
fn a_function_output_quoting_a_token_count_in_the_rollout_parks_nothing() {
    let w = world();
    codex_on_chatgpt(&w.sb);
    let token_count = json!({"timestamp": "@NOW@", "type": "event_msg", "payload": {
        "type": "token_count", "info": null, "rate_limits": {"limit_id": "codex",
        "primary": {"used_percent": 100.0, "window_minutes": 300, "resets_at": in_hours(2).as_second()}}}})
    .to_string();
    let lines = [
        json!({"timestamp": "@NOW@", "type": "session_meta", "payload": {"cwd": "@CWD@"}}),
        json!({"timestamp": "@NOW@", "type": "response_item", "payload": {
            "type": "function_call_output", "call_id": "c", "output": token_count}}),
        json!({"timestamp": "@NOW@", "type": "event_msg", "payload": {
            "type": "user_message", "message": token_count}}),
    ];
    codex_failing_with_rollout(&w.sb, &lines);

    let first = w.sb.run(&["-p", "hi"]);
    assert_eq!(first.code, Some(0), "{first:?}");
    let second = w.sb.run(&["-p", "hi"]);

    assert_eq!(launches(&w.sb, "codex"), 2, "parked: {}", second.stderr);
    assert!(
        !second.stderr.contains("limit, resets"),
        "{}",
        second.stderr
    );
    let windows =
        std::fs::read_to_string(w.sb.state_dir().join("windows.json")).unwrap_or_default();
    assert!(!windows.contains(&codex_login(&w.sb)), "{windows}");
}

/// A fake `codex` that appends `lines` to a rollout of the day it runs, in its working
/// directory (`@NOW@` and `@CWD@` standing for the time and the directory it runs in,
/// the file stamped with that time), and exits 1 at once.
pub(crate) fn codex_failing_with_rollout(sb: &Sandbox, lines: &[serde_json::Value]) {
    let template = sb.tmp_dir().join("rollout-lines.jsonl");
    let text: Vec<String> = lines.iter().map(ToString::to_string).collect();
    std::fs::write(&template, format!("{}\n", text.join("\n"))).unwrap();
    let day = Timestamp::now().strftime("%Y/%m/%d").to_string();
    let dir = sb.home().join(".codex/sessions").join(day);
    sb.fake_cli("codex")
        .script(&format!(
            r#"[ "$1" = app-server ] && exit 0
mkdir -p '{dir}'
now=$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)
cwd=$(pwd -P)
f='{dir}/rollout-2026-01-01T00-00-00-run.jsonl'
sed "s|@NOW@|$now|g; s|@CWD@|$cwd|g" '{template}' >> "$f"
touch -d "$now" "$f"
exit 1"#,
            dir = dir.display(),
            template = template.display(),
        ))
        .install();
}

/// 9999-01-01, a reset no window has (and within any clock's range).
fn year_9999() -> Timestamp {
    Timestamp::from_second(253_370_764_800).unwrap()
}

/// How many times `stderr` says a window was refused.
fn refusals(stderr: &str) -> usize {
    stderr.matches("[agent] ignored a ").count()
}

#[test]
fn a_stored_window_resetting_in_year_9999_parks_nothing() {
    let w = world();
    w.sb.write_config(CLAUDE_THEN_CODEX);
    // What an older agent believed and kept.
    write_windows(
        &w.sb,
        &claude_login(&w.sb),
        &[(five_hour(), 100.0, year_9999())],
    );

    let run = w.sb.run(&["-p", "hi"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(w.sb.calls("claude").len(), 1, "parked: {}", run.stderr);
    assert!(!run.stderr.contains("limit, resets"), "{}", run.stderr);
    assert_eq!(refusals(&run.stderr), 1, "{}", run.stderr);
}

#[test]
fn a_limit_row_naming_a_reset_in_year_9999_parks_nothing() {
    let w = world();
    w.sb.write_config(CLAUDE_THEN_CODEX);
    claude_refused_with(
        &w.sb,
        &format!("Claude AI usage limit reached|{}", year_9999().as_second()),
    );

    let first = w.sb.run(&["-p", "hi"]);
    assert_eq!(first.code, Some(0), "{first:?}");
    assert_eq!(refusals(&first.stderr), 1, "{}", first.stderr);
    let second = w.sb.run(&["-p", "hi"]);

    assert_eq!(w.sb.calls("claude").len(), 2, "parked: {}", second.stderr);
    assert!(
        !second.stderr.contains("limit, resets"),
        "{}",
        second.stderr
    );
}

#[test]
fn an_app_server_naming_a_reset_in_year_9999_parks_nothing() {
    let w = world();
    codex_on_chatgpt(&w.sb);
    codex_app_server_answering(&w.sb, year_9999());

    let run = w.sb.run(&["-p", "hi"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(launches(&w.sb, "codex"), 1, "parked: {}", run.stderr);
    assert_eq!(w.sb.calls("gemini").len(), 0);
    assert_eq!(refusals(&run.stderr), 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("ignored a weekly window from codex app-server: it resets 9999-01-01"),
        "{}",
        run.stderr
    );
}

/// The runs of fake `name` that were launches (not `codex app-server` asked for windows).
pub(crate) fn launches(sb: &Sandbox, name: &str) -> usize {
    sb.calls(name)
        .iter()
        .filter(|call| call.argv.first().map(String::as_str) != Some("app-server"))
        .count()
}

/// Codex logged in with ChatGPT (no provider of its own, no key), then Gemini CLI.
pub(crate) fn codex_on_chatgpt(sb: &Sandbox) {
    sb.write_file(".codex/config.toml", "model = \"gpt-test-codex\"\n");
    sb.write_file(
        ".codex/auth.json",
        r#"{"auth_mode": "chatgpt", "tokens": {"id_token": "x", "access_token": "y", "refresh_token": "z", "account_id": "a"}}"#,
    );
    // The probe of a ChatGPT login is not this test's business: the rung runs unprobed.
    sb.write_config(
        "[backends.codex]\nprobe = { kind = \"none\" }\n\n[[rungs]]\nbackend = \"codex\"\n\n[[rungs]]\nbackend = \"gemini\"\n",
    );
}

#[test]
fn a_full_window_in_a_fast_failed_codex_runs_rollout_parks_the_codex_rung() {
    let w = world();
    codex_on_chatgpt(&w.sb);
    let reset = in_hours(4).as_second();
    // Codex files a rollout under the day it ran, stamped by the clock it ran on.
    let day = Timestamp::now().strftime("%Y/%m/%d").to_string();
    let dir = w.sb.home().join(".codex/sessions").join(day);
    w.sb.fake_cli("codex")
        .script(&format!(
            r#"[ "$1" = app-server ] && exit 0
mkdir -p '{dir}'
now=$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)
cwd=$(pwd -P)
f='{dir}/rollout-2026-01-01T00-00-00-run.jsonl'
printf '{{"timestamp":"%s","type":"session_meta","payload":{{"cwd":"%s"}}}}\n' "$now" "$cwd" >> "$f"
printf '{{"timestamp":"%s","type":"event_msg","payload":{{"type":"token_count","info":null,"rate_limits":{{"limit_id":"codex","primary":{{"used_percent":100.0,"window_minutes":300,"resets_at":{reset}}},"secondary":{{"used_percent":40.0,"window_minutes":10080,"resets_at":{later}}}}}}}}}\n' "$now" >> "$f"
touch -d "$now" "$f"
echo 'You have hit your usage limit' >&2
exit 1"#,
            dir = dir.display(),
            later = reset + 86_400,
        ))
        .install();

    let first = w.sb.run(&["-p", "hi"]);
    assert_eq!(first.code, Some(0), "{first:?}");
    assert_eq!(launches(&w.sb, "codex"), 1);
    assert_eq!(w.sb.calls("gemini").len(), 1);
    let windows = std::fs::read_to_string(w.sb.state_dir().join("windows.json")).unwrap();
    assert!(windows.contains(&codex_login(&w.sb)), "{windows}");

    let second = w.sb.run(&["-p", "hi"]);

    assert_eq!(launches(&w.sb, "codex"), 1, "{}", second.stderr);
    assert_eq!(w.sb.calls("gemini").len(), 2);
    assert!(
        second
            .stderr
            .contains("Codex (its default model) unavailable — 5-hour limit, resets "),
        "{}",
        second.stderr
    );
}

#[test]
fn an_opus_weekly_window_parks_the_opus_rungs_and_not_the_sonnet_rungs() {
    let w = world();
    w.sb.write_config(
        "[[rungs]]\nbackend = \"claude\"\nprobe_model = \"opus\"\nrun_model = \"opus\"\n\n[[rungs]]\nbackend = \"claude\"\nprobe_model = \"sonnet\"\nrun_model = \"sonnet\"\n\n[[rungs]]\nbackend = \"codex\"\n",
    );
    write_windows(
        &w.sb,
        &claude_login(&w.sb),
        &[(
            json!({"kind": "model_weekly", "family": "opus"}),
            100.0,
            in_hours(30),
        )],
    );

    let run = w.sb.run(&["-p", "hi"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    let calls = w.sb.calls("claude");
    assert_eq!(calls.len(), 1, "{}", run.stderr);
    assert_eq!(
        launched_words(&calls[0].argv),
        ["--model", "claude-sonnet-5", "-p", "hi"]
    );
    assert_eq!(w.api.posts_for_model("claude-opus-5"), 0);
    assert!(
        run.stderr
            .contains("Claude Code (claude-opus-5) unavailable — weekly Opus limit, resets "),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("[agent] using Claude Code (claude-sonnet-5)"),
        "{}",
        run.stderr
    );
}

#[test]
fn park_at_percent_parks_before_the_wall_and_releases_with_hysteresis() {
    let w = world();
    w.sb.write_config(CLAUDE_THEN_CODEX);
    let login = claude_login(&w.sb);
    let reset = in_hours(2);
    let at = |percent: f64| write_windows(&w.sb, &login, &[(five_hour(), percent, reset)]);
    let claude_runs = || w.sb.calls("claude").len();

    at(94.0);
    w.sb.run(&["-p", "hi"]);
    assert_eq!(claude_runs(), 1, "94 % is below the default mark");

    at(96.0);
    let run = w.sb.run(&["-p", "hi"]);
    assert_eq!(claude_runs(), 1, "96 % is past the default mark");
    assert!(
        run.stderr
            .contains("unavailable — 5-hour limit at 96 % (parked from 95 %), resets "),
        "{}",
        run.stderr
    );

    at(91.0);
    w.sb.run(&["-p", "hi"]);
    assert_eq!(claude_runs(), 1, "a parked login stays parked down to 90 %");

    at(89.0);
    w.sb.run(&["-p", "hi"]);
    assert_eq!(claude_runs(), 2, "below 90 % it is released");

    at(93.0);
    w.sb.run(&["-p", "hi"]);
    assert_eq!(
        claude_runs(),
        3,
        "released, it parks again only at the mark"
    );

    w.sb.write_config(&format!("park_at_percent = 90\n{CLAUDE_THEN_CODEX}"));
    w.sb.run(&["-p", "hi"]);
    assert_eq!(claude_runs(), 3, "the mark is configurable");
}

#[test]
fn the_last_rung_that_could_run_is_never_parked_before_the_wall() {
    let w = world();
    w.sb.write_config(CLAUDE_THEN_CODEX);
    // Past `park_at_percent`, not full: it still has room (a full window is the wall, and
    // parks it all the same: tests/waiting.rs).
    write_windows(
        &w.sb,
        &claude_login(&w.sb),
        &[(five_hour(), 96.0, in_hours(2))],
    );
    // Codex cannot run: its provider's key is gone.
    w.sb.env_remove("MOCK_OPENAI_KEY");

    let run = w.sb.run(&["-p", "hi"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(w.sb.calls("claude").len(), 1, "{}", run.stderr);
}

#[test]
fn a_bad_park_at_percent_is_a_usage_error_naming_the_key() {
    let w = world();
    w.sb.write_config("[backends.claude]\npark_at_percent = 120\n");
    let run = w.sb.run(&["-p", "hi"]);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(
        run.stderr
            .contains("backends.claude.park_at_percent: must be a number from 0 to 100"),
        "{}",
        run.stderr
    );
    assert!(w.sb.calls("claude").is_empty());
}

/// A fake `codex` whose `app-server` answers the read as the real 0.171.0 did (the
/// recorded exchange), with its reset moved to `resets_at`; `stdin.jsonl` in the calls
/// directory keeps what agent sent it.
fn codex_app_server_answering(sb: &Sandbox, resets_at: Timestamp) {
    let fixture = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/codex-app-server/rate-limits-read-0.171.0.stdout.jsonl"
    ))
    .unwrap()
    .replace("1789900000", &resets_at.as_second().to_string());
    let answer = sb.tmp_dir().join("app-server.stdout.jsonl");
    std::fs::write(&answer, fixture).unwrap();
    let sent = sb.calls_dir().join("codex-stdin.jsonl");
    sb.fake_cli("codex")
        .script(&format!(
            "if [ \"$1\" = app-server ]; then\n  read a; read b; read c\n  printf '%s\\n%s\\n%s\\n' \"$a\" \"$b\" \"$c\" > '{sent}'\n  cat '{answer}'\n  sleep 30\nfi\necho codex answered",
            sent = sent.display(),
            answer = answer.display(),
        ))
        .install();
}

#[test]
fn a_codex_login_its_app_server_reports_exhausted_is_parked_until_the_reset() {
    let w = world();
    codex_on_chatgpt(&w.sb);
    codex_app_server_answering(&w.sb, in_hours(50));

    let run = w.sb.run(&["-p", "hi"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(launches(&w.sb, "codex"), 0, "{}", run.stderr);
    assert_eq!(w.sb.calls("gemini").len(), 1);
    assert!(
        run.stderr
            .contains("Codex (its default model) unavailable — weekly limit, resets "),
        "{}",
        run.stderr
    );
    let sent = std::fs::read_to_string(w.sb.calls_dir().join("codex-stdin.jsonl")).unwrap();
    let methods: Vec<String> = sent
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap()["method"].to_string())
        .collect();
    assert_eq!(
        methods,
        [
            "\"initialize\"",
            "\"initialized\"",
            "\"account/rateLimits/read\""
        ]
    );

    // What it said is fresh: the next launch does not ask again, and stays parked.
    let again = w.sb.run(&["-p", "hi"]);
    assert_eq!(w.sb.calls("codex").len(), 1, "{}", again.stderr);
    assert_eq!(w.sb.calls("gemini").len(), 2);
}

#[test]
fn an_app_server_that_never_answers_costs_one_bounded_wait_and_the_login_runs() {
    let w = world();
    codex_on_chatgpt(&w.sb);
    w.sb.write_config(&format!(
        "probe_timeout_seconds = 1\n{}",
        std::fs::read_to_string(w.sb.config_path()).unwrap()
    ));
    w.sb.fake_cli("codex")
        .script("if [ \"$1\" = app-server ]; then sleep 30; fi\necho codex answered")
        .install();

    let run = w.sb.run(&["-p", "hi"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(run.stdout, "codex answered\n", "unknown is not dead");
    // Not asked again on the next launch: a silent CLI is not waited for every time.
    w.sb.run(&["-p", "hi"]);
    let asked =
        w.sb.calls("codex")
            .iter()
            .filter(|call| call.argv.first().map(String::as_str) == Some("app-server"))
            .count();
    assert_eq!(asked, 1);
}

#[test]
fn a_token_given_in_the_environment_is_the_login_of_its_directory_and_a_key_is_none() {
    let w = world();
    w.sb.write_config(CLAUDE_THEN_CODEX);
    write_windows(
        &w.sb,
        &crate::support::claude_dir_login(w.sb.home()),
        &[(five_hour(), 100.0, in_hours(2))],
    );
    w.sb.env("CLAUDE_CODE_OAUTH_TOKEN", "sk-ant-oat01-parking-test");

    let run = w.sb.run(&["-p", "hi"]);
    assert!(w.sb.calls("claude").is_empty(), "{}", run.stderr);
    assert!(
        run.stderr.contains("5-hour limit, resets "),
        "{}",
        run.stderr
    );

    // With an API key Claude Code runs on the key: the login's windows say nothing of it.
    w.sb.env("ANTHROPIC_API_KEY", "sk-ant-api-parking-test");
    let run = w.sb.run(&["-p", "hi"]);
    assert_eq!(w.sb.calls("claude").len(), 1, "{}", run.stderr);
}

#[test]
fn an_oauth_accounts_full_window_parks_that_account_and_the_next_one_runs() {
    let w = world();
    w.sb.env("TOKEN_A", "sk-ant-oat01-account-a-parking");
    w.sb.env("TOKEN_B", "sk-ant-oat01-account-b-parking");
    w.sb.env_remove("AGENT_PROXY_URL");
    w.sb.write_config(
        "[[rungs]]\nbackend = \"claude\"\nprobe_model = \"opus\"\n\n[[rungs]]\nbackend = \"codex\"\n\n\
         [[accounts]]\nname = \"a\"\nbackend = \"claude\"\nkind = \"oauth\"\nsecret_env = \"TOKEN_A\"\npriority = 1\n\n\
         [[accounts]]\nname = \"b\"\nbackend = \"claude\"\nkind = \"oauth\"\nsecret_env = \"TOKEN_B\"\npriority = 2\n",
    );
    write_windows(
        &w.sb,
        "claude:account:a",
        &[(json!({"kind": "weekly"}), 100.0, in_hours(20))],
    );

    let run = w.sb.run(&["-p", "hi"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    let calls = w.sb.calls("claude");
    assert_eq!(calls.len(), 1, "{}", run.stderr);
    let token = calls[0]
        .env
        .iter()
        .find(|(k, _)| *k == "CLAUDE_CODE_OAUTH_TOKEN")
        .map(|(_, v)| v.as_str());
    assert_eq!(token, Some("sk-ant-oat01-account-b-parking"));
    assert!(
        run.stderr
            .contains("account a) unavailable — weekly limit, resets "),
        "{}",
        run.stderr
    );
}

/// A fake `claude` that works past `fastfail_seconds` (a session an hour in), then writes
/// `rows` into its transcript and exits 1: a session that outlived its window.
fn claude_working_then_failing_with_rows(sb: &Sandbox, rows: &[serde_json::Value]) {
    claude_failing_with_rows_after(sb, "1.3", rows);
}

#[test]
fn a_session_that_ran_out_of_its_window_mid_work_keeps_its_exit_code_and_parks_its_login() {
    let w = world();
    w.sb.write_config(&format!("fastfail_seconds = 1\n{CLAUDE_THEN_CODEX}"));
    claude_working_then_failing_with_rows(&w.sb, &[limit_row(&session_limit_text())]);

    let late = w.sb.run(&["-p", "fix the failing tests"]);

    // The run was real: nothing else runs, Claude Code's own code passes through.
    assert_eq!(late.code, Some(1), "{late:?}");
    assert_eq!(w.sb.calls("claude").len(), 1);
    assert!(w.sb.calls("codex").is_empty(), "{}", late.stderr);
    assert!(
        late.stderr.contains(
            "Claude Code (its default model) ran out of its window mid-session (5-hour limit, resets "
        ),
        "{}",
        late.stderr
    );
    assert!(
        late.stderr
            .contains("the next launch skips this login until then"),
        "{}",
        late.stderr
    );

    let next = w.sb.run(&["-p", "hi"]);

    assert_eq!(next.code, Some(0), "{next:?}");
    assert_eq!(w.sb.calls("claude").len(), 1, "the spent login ran again");
    assert_eq!(w.sb.calls("codex").len(), 1, "{}", next.stderr);
}

#[test]
fn a_late_failure_whose_record_names_no_limit_stays_final_and_parks_nothing() {
    let w = world();
    w.sb.write_config(&format!("fastfail_seconds = 1\n{CLAUDE_THEN_CODEX}"));
    claude_working_then_failing_with_rows(
        &w.sb,
        &[json!({
            "type": "assistant", "sessionId": "s-1", "timestamp": "@NOW@",
            "message": {"model": "claude-opus-5", "role": "assistant",
                        "content": [{"type": "text", "text": "the tests still fail"}]},
        })],
    );

    let late = w.sb.run(&["-p", "fix the failing tests"]);
    let next = w.sb.run(&["-p", "hi"]);

    assert_eq!(late.code, Some(1), "{late:?}");
    assert!(
        !late.stderr.contains("ran out of its window"),
        "{}",
        late.stderr
    );
    assert!(w.sb.calls("codex").is_empty(), "{}", next.stderr);
    assert_eq!(w.sb.calls("claude").len(), 2, "{}", next.stderr);
}
