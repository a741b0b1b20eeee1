//! `agent --statusline` (Claude Code's statusLine command) and its install: the line, the
//! windows it records, and never a network call.

use std::io::Write as _;
use std::os::unix::fs::PermissionsExt as _;
use std::process::Stdio;

use serde_json::Value;

use crate::support::{Sandbox, claude_dir_login};
use crate::world::world;

/// The reset instants as epoch seconds: two hours and three days ahead.
fn resets() -> (i64, i64) {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        .cast_signed();
    // Whole minutes, so the line's `HH:MM` is exact.
    let five = (now / 60 + 120) * 60;
    let week = (now / 60 + 3 * 24 * 60) * 60;
    (five, week)
}

fn feed(five: i64, week: i64) -> String {
    format!(
        r#"{{"session_id":"abc123","cwd":"/tmp","model":{{"id":"claude-opus-4-8","display_name":"Opus 4.8"}},
           "version":"2.1.197","rate_limits":{{"five_hour":{{"used_percentage":42.0,"resets_at":{five}}},
           "seven_day":{{"used_percentage":81.4,"resets_at":{week}}}}}}}"#
    )
}

/// Runs `agent --statusline` with `input` on stdin, in UTC.
pub(crate) fn statusline(sb: &Sandbox, input: &str) -> (Option<i32>, String, String) {
    let mut cmd = sb.command(&["--statusline"]);
    cmd.env("TZ", "UTC")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("agent starts");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// A reset as the line says it: `HH:MM` today, with the weekday on another day (two
/// hours ahead, seen after 22:00, is tomorrow's).
fn hh_mm(epoch: i64) -> String {
    // UTC, as agent's line is drawn in the sandbox (the zone the test runs in is not
    // handed to the statusline's agent).
    let zone = jiff::tz::TimeZone::UTC;
    let at = zone.to_datetime(jiff::Timestamp::from_second(epoch).unwrap());
    let today = zone.to_datetime(jiff::Timestamp::now()).date();
    let format = if at.date() == today {
        "%H:%M"
    } else {
        "%a %H:%M"
    };
    at.strftime(format).to_string()
}

fn windows_json(sb: &Sandbox) -> Value {
    let text = std::fs::read_to_string(sb.state_dir().join("windows.json")).unwrap_or_default();
    serde_json::from_str(&text).unwrap_or(Value::Null)
}

#[test]
fn the_line_shows_model_windows_and_resets_and_records_them_with_no_call() {
    let w = world();
    let (five, week) = resets();
    let (code, stdout, stderr) = statusline(&w.sb, &feed(five, week));
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout.lines().count(), 1, "one line: {stdout:?}");
    assert!(stdout.starts_with("Opus 4.8 · "), "{stdout}");
    assert!(
        stdout.contains(&format!("5h 42% ↺{}", hh_mm(five))),
        "{stdout}"
    );
    assert!(stdout.contains("7d 81% ↺"), "{stdout}");
    assert!(stdout.contains(&hh_mm(week)), "{stdout}");

    // Another process (this test) reads what agent recorded, under this login's key.
    let key = format!("claude:{}", w.sb.home().join(".claude").display());
    let windows = windows_json(&w.sb);
    let recorded = windows["logins"][&key].as_array().unwrap_or_else(|| {
        panic!("no windows under {key}: {windows}");
    });
    assert_eq!(recorded.len(), 2, "{windows}");
    for window in recorded {
        assert_eq!(window["source"], "statusline", "{window}");
    }
    let five_hour = recorded
        .iter()
        .find(|w| w["scope"]["kind"] == "five_hour")
        .unwrap_or_else(|| panic!("{windows}"));
    assert_eq!(five_hour["used_percent"], 42.0);
    let reset: jiff::Timestamp = five_hour["resets_at"].as_str().unwrap().parse().unwrap();
    assert_eq!(reset.as_second(), five);

    // A second login (another config dir) is kept beside the first.
    w.sb.env(
        "CLAUDE_CONFIG_DIR",
        w.sb.root().join("work-claude").display().to_string(),
    );
    let (code, _, _) = statusline(&w.sb, &feed(five, week));
    assert_eq!(code, Some(0));
    let windows = windows_json(&w.sb);
    assert!(windows["logins"][&key].is_array(), "{windows}");
    let work = format!("claude:{}", w.sb.root().join("work-claude").display());
    assert!(windows["logins"][&work].is_array(), "{windows}");

    assert_eq!(
        w.api.requests().len(),
        0,
        "the statusline never calls the network"
    );
}

#[test]
fn a_feed_naming_a_reset_in_year_9999_records_nothing_and_says_so_once() {
    let w = world();
    // 9999-01-01 for both windows: neither is a window, and one line says so.
    let (code, stdout, stderr) = statusline(&w.sb, &feed(253_370_764_800, 253_370_764_800));

    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout.lines().count(), 1, "{stdout:?}");
    assert!(!stdout.contains("7d"), "{stdout}");
    assert!(!stdout.contains("5h"), "{stdout}");
    assert_eq!(windows_json(&w.sb), Value::Null, "recorded");
    assert_eq!(stderr.matches("[agent] ignored a ").count(), 1, "{stderr}");
    assert!(
        stderr.contains(
            "ignored a 5-hour window from Claude Code's statusline feed: it resets 9999-01-01"
        ),
        "{stderr}"
    );
    // The last second of year 9999 is past what any clock shows: not a window either.
    let (code, stdout, _) = statusline(&w.sb, &feed(253_402_300_799, 253_402_300_799));
    assert_eq!(code, Some(0));
    assert!(!stdout.contains("5h"), "{stdout}");
    assert_eq!(windows_json(&w.sb), Value::Null, "recorded");
}

#[test]
fn a_model_name_with_control_or_bidi_characters_is_shown_without_them() {
    let w = world();
    let (five, week) = resets();
    let input = feed(five, week).replace(
        r#""display_name":"Opus 4.8""#,
        r#""display_name":"\u202eOpus\u2066 4.8\u001b]0;x\u0007\u200f""#,
    );
    assert!(input.contains(r"\u202e"), "{input}");

    let (code, stdout, stderr) = statusline(&w.sb, &input);

    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.starts_with("Opus 4.8 · 5h 42% "), "{stdout:?}");
    assert_eq!(stdout.lines().count(), 1, "{stdout:?}");
    assert!(
        !stdout
            .trim_end_matches('\n')
            .chars()
            .any(agent::text::is_unprintable),
        "{stdout:?}"
    );
}

#[test]
fn bad_input_gives_a_minimal_line_and_exit_0() {
    let w = world();
    for input in [
        "",
        "not json",
        "[1,2]",
        "{\"rate_limits\": 7}",
        "\u{0}\u{1}\u{ff}",
    ] {
        let (code, stdout, stderr) = statusline(&w.sb, input);
        assert_eq!(code, Some(0), "{input:?}: {stderr}");
        assert_eq!(stdout, "Claude\n", "{input:?}");
        assert_eq!(stderr, "", "{input:?}");
    }
    assert!(!w.sb.state_dir().join("windows.json").exists());
    assert_eq!(w.api.requests().len(), 0);
}

#[test]
fn a_token_login_is_keyed_by_its_directory_and_never_printed() {
    let w = world();
    let token = "sk-ant-oat01-SECRET-statusline-token-0123456789";
    w.sb.env("CLAUDE_CODE_OAUTH_TOKEN", token);
    let (five, week) = resets();
    let (code, stdout, stderr) = statusline(&w.sb, &feed(five, week));
    assert_eq!(code, Some(0));
    let windows = windows_json(&w.sb);
    assert!(
        windows["logins"][claude_dir_login(w.sb.home())].is_array(),
        "{windows}"
    );
    for (path, text) in w.sb.state_files() {
        assert!(!text.contains(token), "token in {}", path.display());
    }
    assert!(!stdout.contains(token) && !stderr.contains(token));
}

#[test]
fn only_an_account_agent_launched_is_named_to_the_statusline_a_token_is_its_directorys() {
    let w = world();
    let token = "sk-ant-oat01-SECRET-launched-token-0123456789";
    w.sb.env("CLAUDE_CODE_OAUTH_TOKEN", token);
    let run = w.sb.run(&["--use", "claude", "-p", "hi"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let calls = w.sb.calls("claude");
    let env = &calls.last().expect("claude ran").env;
    // The statusline finds the directory in Claude Code's environment: nothing to tell.
    assert_eq!(env.get("AGENT_CLAUDE_LOGIN"), None, "{env:?}");

    // Claude Code runs the statusline without the token: its directory keys it, and an
    // account's name agent gave keys that account.
    w.sb.env_remove("CLAUDE_CODE_OAUTH_TOKEN");
    let (five, week) = resets();
    statusline(&w.sb, &feed(five, week));
    let config_dir = claude_dir_login(w.sb.home());
    assert!(windows_json(&w.sb)["logins"][&config_dir].is_array());
    w.sb.env("AGENT_CLAUDE_LOGIN", "account:work");
    statusline(&w.sb, &feed(five, week));
    assert!(windows_json(&w.sb)["logins"]["claude:account:work"].is_array());

    // A value that is not a login's name (a token pasted there) is never a key.
    w.sb.env("AGENT_CLAUDE_LOGIN", token);
    statusline(&w.sb, &feed(five, week));
    for (path, text) in w.sb.state_files() {
        assert!(!text.contains(token), "token in {}", path.display());
    }
    assert_eq!(
        windows_json(&w.sb)["logins"]
            .as_object()
            .map(serde_json::Map::len),
        Some(2),
        "{}",
        windows_json(&w.sb)
    );
}

#[test]
fn the_line_says_the_fallback_verdict_and_the_rung_agent_launched() {
    let w = world();
    // The rung: agent tells the CLI it launches.
    let run = w.sb.run(&["-p", "hi"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let calls = w.sb.calls("claude");
    let rung = calls
        .last()
        .and_then(|call| call.env.get("AGENT_RUNG"))
        .unwrap_or_else(|| panic!("AGENT_RUNG not given to the CLI: {calls:?}"))
        .clone();
    assert!(rung.starts_with("Claude Code"), "{rung}");
    // The verdict: the last --check-fallback, from watchdog.json.
    w.sb.run(&["--check-fallback"]);
    let requests = w.api.requests().len();
    w.sb.env("AGENT_RUNG", &rung);
    let (five, week) = resets();
    let (code, stdout, _) = statusline(&w.sb, &feed(five, week));
    assert_eq!(code, Some(0));
    assert!(stdout.contains(&format!("via {rung}")), "{stdout}");
    let state: Value = serde_json::from_str(
        &std::fs::read_to_string(w.sb.state_dir().join("watchdog.json")).unwrap(),
    )
    .unwrap();
    let recorded = state["state"].as_str().unwrap();
    assert!(
        stdout.contains(&format!("fallbacks {recorded}")),
        "{stdout}"
    );
    assert_eq!(
        w.api.requests().len(),
        requests,
        "the statusline made a call"
    );
}

const SETTINGS: &str = "{\n  \"zeta\": {\"keep\": [1, 2]},\n  \"statusLine\": {\"type\": \"command\", \"command\": \"grep -o 'session_id[^,]*'\"},\n  \"alpha\": \"last\"\n}\n";

#[test]
fn install_keeps_the_previous_command_beside_agents_and_uninstall_restores_it() {
    let w = world();
    let settings = w.sb.write_file(".claude/settings.json", SETTINGS);
    let run = w.sb.run(&["--install-statusline"]);
    assert_eq!(run.code, Some(0), "{run:?}");

    let installed = std::fs::read_to_string(&settings).unwrap();
    let parsed: Value = serde_json::from_str(&installed).unwrap();
    let command = parsed["statusLine"]["command"].as_str().unwrap();
    assert!(command.ends_with(" --statusline"), "{installed}");
    assert_eq!(parsed["zeta"], serde_json::json!({"keep": [1, 2]}));
    assert_eq!(parsed["alpha"], "last");
    assert!(
        installed.find("zeta") < installed.find("alpha"),
        "key order kept: {installed}"
    );

    // The copy made first: the old bytes, 0600.
    let backups: Vec<_> = std::fs::read_dir(settings.parent().unwrap())
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().contains("agent-backup"))
        .collect();
    assert_eq!(backups.len(), 1);
    assert_eq!(
        std::fs::read_to_string(backups[0].path()).unwrap(),
        SETTINGS
    );
    let mode = backups[0].metadata().unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);

    // The previous command runs on the same stdin; its output stands beside agent's.
    let (five, week) = resets();
    let (code, stdout, stderr) = statusline(&w.sb, &feed(five, week));
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.starts_with("Opus 4.8 · 5h 42%"), "{stdout}");
    assert!(
        stdout.contains(" │ session_id\":\"abc123\""),
        "the previous command's output: {stdout}"
    );

    // Installing twice changes nothing.
    let again = w.sb.run(&["--install-statusline"]);
    assert_eq!(again.code, Some(0), "{again:?}");
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), installed);

    let run = w.sb.run(&["--uninstall-statusline"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), SETTINGS);
    assert_eq!(w.api.requests().len(), 0);
}

/// `settings.json` as Claude Code writes it back after an install: its own key order and
/// four-space indent, the statusLine's members reordered, `env` added.
fn rewritten_by_claude_code(installed: &str, command: &str) -> String {
    let parsed: Value = serde_json::from_str(installed).unwrap();
    let status = &parsed["statusLine"];
    format!(
        "{{\n    \"alpha\": {alpha},\n    \"env\": {{\n        \"DISABLE_TELEMETRY\": \"1\"\n    }},\n    \"statusLine\": {{\n        \"padding\": {padding},\n        \"command\": {command},\n        \"type\": {kind}\n    }},\n    \"zeta\": {zeta}\n}}",
        alpha = parsed["alpha"],
        padding = status["padding"],
        command = Value::from(command),
        kind = status["type"],
        zeta = parsed["zeta"],
    )
}

#[test]
fn uninstall_after_claude_code_rewrote_the_settings_removes_agents_and_keeps_the_rest() {
    let w = world();
    let original = "{\n  \"zeta\": {\"keep\": [1, 2]},\n  \"alpha\": \"last\"\n}\n";
    let settings = w.sb.write_file(".claude/settings.json", original);
    let run = w.sb.run(&["--install-statusline"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let installed = std::fs::read_to_string(&settings).unwrap();
    let command = serde_json::from_str::<Value>(&installed).unwrap()["statusLine"]["command"]
        .as_str()
        .unwrap()
        .to_string();
    let rewritten = rewritten_by_claude_code(&installed, &command);
    std::fs::write(&settings, &rewritten).unwrap();

    let run = w.sb.run(&["--uninstall-statusline"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(run.stdout.contains("removed"), "{}", run.stdout);
    let left = std::fs::read_to_string(&settings).unwrap();
    let parsed: Value = serde_json::from_str(&left).unwrap();
    assert_eq!(
        parsed,
        serde_json::json!({"alpha": "last", "env": {"DISABLE_TELEMETRY": "1"}, "zeta": {"keep": [1, 2]}}),
        "{left}"
    );
    // Claude Code's own spelling of the rest stays as it wrote it.
    assert!(
        left.starts_with("{\n    \"alpha\": \"last\",\n    \"env\": {\n        \"DISABLE"),
        "{left}"
    );
    let mode = std::fs::metadata(&settings).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
}

#[test]
fn uninstall_after_a_rewrite_puts_the_previous_statusline_back() {
    let w = world();
    let settings = w.sb.write_file(".claude/settings.json", SETTINGS);
    assert_eq!(w.sb.run(&["--install-statusline"]).code, Some(0));
    let installed = std::fs::read_to_string(&settings).unwrap();
    let command = serde_json::from_str::<Value>(&installed).unwrap()["statusLine"]["command"]
        .as_str()
        .unwrap()
        .to_string();
    std::fs::write(&settings, rewritten_by_claude_code(&installed, &command)).unwrap();

    let run = w.sb.run(&["--uninstall-statusline"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let parsed: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(parsed["statusLine"]["command"], "grep -o 'session_id[^,]*'");
    assert_eq!(parsed["env"]["DISABLE_TELEMETRY"], "1");
    assert_eq!(parsed["zeta"], serde_json::json!({"keep": [1, 2]}));
}

#[test]
fn uninstall_refuses_a_statusline_whose_command_the_user_changed() {
    let w = world();
    let settings = w.sb.write_file(".claude/settings.json", SETTINGS);
    assert_eq!(w.sb.run(&["--install-statusline"]).code, Some(0));
    let installed = std::fs::read_to_string(&settings).unwrap();
    let changed = rewritten_by_claude_code(&installed, "my-own-statusline --fancy");
    std::fs::write(&settings, &changed).unwrap();

    let run = w.sb.run(&["--uninstall-statusline"]);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(run.stderr.contains("no longer agent's"), "{}", run.stderr);
    assert!(
        run.stderr.contains("`my-own-statusline --fancy`"),
        "names what runs now: {}",
        run.stderr
    );
    assert!(
        run.stderr.contains("--statusline`"),
        "and agent's: {}",
        run.stderr
    );
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), changed);
}

#[test]
fn install_without_settings_then_uninstall_leaves_an_empty_object() {
    let w = world();
    let run = w.sb.run(&["--install-statusline"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let settings = w.sb.home().join(".claude/settings.json");
    let parsed: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert!(parsed["statusLine"]["command"].is_string());
    let run = w.sb.run(&["--uninstall-statusline"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let parsed: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(parsed, serde_json::json!({}));
}

#[test]
fn settings_that_are_not_json_are_left_alone() {
    let w = world();
    let settings = w.sb.write_file(".claude/settings.json", "{ not json");
    let run = w.sb.run(&["--install-statusline"]);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(run.stderr.contains("not a JSON object"), "{}", run.stderr);
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), "{ not json");
}

#[test]
fn a_previous_command_that_runs_agent_again_starts_no_chain() {
    let w = world();
    // A previous statusLine that wraps agent's own (so it does not look like agent's).
    let wrapped = format!("sh -c '{} --statusline'", env!("CARGO_BIN_EXE_agent"));
    let settings = w.sb.write_file(
        ".claude/settings.json",
        &serde_json::json!({"statusLine": {"type": "command", "command": wrapped}}).to_string(),
    );
    let run = w.sb.run(&["--install-statusline"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let (five, week) = resets();
    let (code, stdout, stderr) = statusline(&w.sb, &feed(five, week));
    assert_eq!(code, Some(0), "{stderr}");
    // agent's line, then the wrapped agent's own line once: it runs no previous of its own.
    assert_eq!(stdout.matches(" │ ").count(), 1, "{stdout}");
    assert_eq!(stdout.matches("5h 42%").count(), 2, "{stdout}");

    // Installed again from another path: agent's own is never kept as the previous one, and
    // the one the first install replaced is still what comes back.
    let text = std::fs::read_to_string(&settings).unwrap();
    let moved = text.replace(env!("CARGO_BIN_EXE_agent"), "/opt/old/agent");
    std::fs::write(&settings, &moved).unwrap();
    let run = w.sb.run(&["--install-statusline"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let run = w.sb.run(&["--uninstall-statusline"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let back: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(back["statusLine"]["command"], wrapped);
}

#[test]
fn a_dry_run_changes_nothing_and_shows_no_other_setting() {
    let w = world();
    let key = "sk-ant-api03-SECRET-in-settings-env-0123456789";
    let original = format!("{{\"env\": {{\"ANTHROPIC_API_KEY\": \"{key}\"}}}}\n");
    let settings = w.sb.write_file(".claude/settings.json", &original);
    let run = w.sb.run(&["--install-statusline", "--dry-run"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.stdout.contains("would set statusLine"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains(key) && !run.stderr.contains(key));
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), original);
    let entries = std::fs::read_dir(settings.parent().unwrap())
        .unwrap()
        .count();
    assert_eq!(entries, 1, "no copy made, nothing written");
}

/// Claude Code's feed with its 5-hour window used up, resetting at `five`.
fn full_five_hour_feed(five: i64, week: i64) -> String {
    format!(
        r#"{{"session_id":"abc123","cwd":"/tmp","model":{{"id":"claude-opus-4-8","display_name":"Opus 4.8"}},
           "version":"2.1.197","rate_limits":{{"five_hour":{{"used_percentage":100.0,"resets_at":{five}}},
           "seven_day":{{"used_percentage":40.0,"resets_at":{week}}}}}}}"#
    )
}

/// Nothing `agent` wrote or printed, and no command line it gave a CLI, holds `token`.
fn assert_token_nowhere(sb: &Sandbox, token: &str, printed: &[&str]) {
    for (path, text) in sb.state_files() {
        assert!(!text.contains(token), "token in {}", path.display());
    }
    for text in printed {
        assert!(!text.contains(token), "token printed: {text}");
    }
    for cli in ["claude", "codex", "gemini"] {
        for call in sb.calls(cli) {
            assert!(
                call.argv.iter().all(|arg| !arg.contains(token)),
                "token in {cli}'s argv"
            );
        }
    }
}

#[test]
fn a_full_window_fed_by_a_claude_code_started_by_hand_on_a_token_parks_the_next_launch_on_it() {
    let w = world();
    w.sb.write_config(crate::world::CLAUDE_THEN_CODEX);
    let token = "sk-ant-oat01-SECRET-by-hand-token-0123456789abcdef";
    // Claude Code started by hand with the token runs agent's statusline without it (it
    // hides the token from its statusLine command), and nobody told it a login's name.
    w.sb.env_remove("CLAUDE_CODE_OAUTH_TOKEN");
    w.sb.env_remove("AGENT_CLAUDE_LOGIN");
    let (five, week) = resets();
    let (code, line, stderr) = statusline(&w.sb, &full_five_hour_feed(five, week));
    assert_eq!(code, Some(0), "{stderr}");
    let windows = windows_json(&w.sb);
    assert!(
        windows["logins"][claude_dir_login(w.sb.home())].is_array(),
        "{windows}"
    );

    // agent with the token in its environment: the same login, parked.
    w.sb.env("CLAUDE_CODE_OAUTH_TOKEN", token);
    let run = w.sb.run(&["-p", "hi"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(w.sb.calls("claude").is_empty(), "the parked login ran");
    assert!(
        run.stderr
            .contains("Claude Code (its default model) unavailable — 5-hour limit, resets "),
        "{}",
        run.stderr
    );
    assert_eq!(w.sb.calls("codex").len(), 1, "{}", run.stderr);
    assert_token_nowhere(&w.sb, token, &[&line, &stderr, &run.stdout, &run.stderr]);
}

#[test]
fn a_full_window_fed_under_a_backends_claude_config_dir_parks_that_rung_and_lists_under_it() {
    let w = world();
    w.sb.env_remove("AGENT_PROXY_URL");
    let dir = w.sb.root().join("work-claude");
    let access = "sk-ant-oat01-SECRET-work-login-0123456789abcdef";
    let expires = (jiff::Timestamp::now() + jiff::SignedDuration::from_hours(24)).as_millisecond();
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join(".credentials.json"),
        serde_json::json!({"claudeAiOauth": {"accessToken": access, "refreshToken": "sk-ant-ort01-SECRET-r",
            "expiresAt": expires, "subscriptionType": "max"}})
        .to_string(),
    )
    .unwrap();
    w.sb.write_config(&format!(
        "[backends.claude]\nenv = {{ CLAUDE_CONFIG_DIR = \"{}\" }}\n{}",
        dir.display(),
        crate::world::CLAUDE_THEN_CODEX
    ));
    let key = format!("claude:{}", dir.display());

    // `--list` names the login of the directory the backend gives Claude Code.
    let list = w.sb.run(&["--list", "--json"]);
    let list: Value = serde_json::from_str(&list.stdout).unwrap_or(Value::Null);
    assert_eq!(list["rungs"][0]["login"]["key"], key.as_str(), "{list}");
    assert_eq!(list["rungs"][0]["login"]["plan"], "max", "{list}");

    // The launched Claude Code gets the directory, and is told no login's name: its
    // statusline finds the same directory in its own environment.
    let run = w.sb.run(&["-p", "hi"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let calls = w.sb.calls("claude");
    let env = &calls.last().expect("claude ran").env;
    assert_eq!(
        env.get("CLAUDE_CONFIG_DIR"),
        Some(&dir.display().to_string())
    );
    assert_eq!(env.get("AGENT_CLAUDE_LOGIN"), None, "{env:?}");

    w.sb.env("CLAUDE_CONFIG_DIR", dir.display().to_string());
    let (five, week) = resets();
    let (code, line, stderr) = statusline(&w.sb, &full_five_hour_feed(five, week));
    assert_eq!(code, Some(0), "{stderr}");
    assert!(windows_json(&w.sb)["logins"][&key].is_array(), "{key}");
    w.sb.env_remove("CLAUDE_CONFIG_DIR");

    // The next launch parks it: Claude Code does not run again, and the window is named.
    let run = w.sb.run(&["-p", "hi"]);
    assert_eq!(
        w.sb.calls("claude").len(),
        1,
        "the parked login ran: {run:?}"
    );
    assert!(
        run.stderr
            .contains("Claude Code (its default model) unavailable — 5-hour limit, resets "),
        "{}",
        run.stderr
    );
    assert_eq!(w.sb.calls("codex").len(), 1, "{}", run.stderr);
    let status = w.sb.run(&["--status"]);
    assert!(
        status
            .stdout
            .starts_with("PARKED   claude                   parked: 5-hour limit, resets "),
        "{status:?}"
    );
    assert_token_nowhere(
        &w.sb,
        access,
        &[&line, &stderr, &run.stdout, &run.stderr, &status.stdout],
    );
}

fn five_hour_feed(percent: f64, five: i64, week: i64) -> String {
    format!(
        r#"{{"model":{{"id":"claude-opus-4-8","display_name":"Opus 4.8"}},
           "rate_limits":{{"five_hour":{{"used_percentage":{percent},"resets_at":{five}}},
           "seven_day":{{"used_percentage":40.0,"resets_at":{week}}}}}}}"#
    )
}

#[test]
fn the_forecast_appears_after_two_readings_of_a_rising_window_and_not_after_one() {
    let (sb, _api) = crate::logins::logged_in();
    sb.write_config("[[rungs]]\nbackend = \"claude\"\nprobe_model = \"opus\"\n");
    let (five, week) = resets();

    let (_, once, _) = statusline(&sb, &five_hour_feed(40.0, five, week));
    let status_once = sb.run(&["--status"]);
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let (_, twice, _) = statusline(&sb, &five_hour_feed(60.0, five, week));
    let status_twice = sb.run(&["--status"]);

    assert!(once.contains("5h 40% ↺"), "{once}");
    assert!(!once.contains("full ≈"), "one reading is no pace: {once}");
    assert!(!status_once.stdout.contains("full ≈"), "{status_once:?}");
    // 20 points in a second: it fills long before the reset, and says so as an estimate.
    assert!(twice.contains("5h 60% · full ≈"), "{twice}");
    assert!(twice.contains(" at this pace ↺"), "{twice}");
    // The weekly window did not move: no pace, no forecast.
    assert!(twice.contains("7d 40% ↺"), "{twice}");
    assert!(
        status_twice.stdout.contains("5-hour 60% · full ≈"),
        "{status_twice:?}"
    );
}

#[test]
fn a_rung_that_passes_no_model_does_not_contradict_the_model_the_feed_names() {
    let w = world();
    // Rung 1 passes no --model: Claude Code runs its own default, which the feed names.
    let run = w.sb.run(&["-p", "hi"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let calls = w.sb.calls("claude");
    let call = calls.last().expect("claude ran");
    assert!(
        !call.argv.iter().any(|a| a == "--model"),
        "rung 1 passes no model: {call:?}"
    );
    let rung = call.env.get("AGENT_RUNG").expect("AGENT_RUNG").clone();
    assert_eq!(rung, "Claude Code (its default model)");
    w.sb.env("AGENT_RUNG", &rung);
    let (five, week) = resets();

    let (code, stdout, _) = statusline(&w.sb, &feed(five, week));

    assert_eq!(code, Some(0));
    assert!(stdout.starts_with("Opus 4.8 · "), "{stdout}");
    assert!(
        stdout.contains("via Claude Code (its default model)"),
        "{stdout}"
    );
    assert!(
        !stdout.contains("claude-opus-5"),
        "the feed says Opus 4.8 runs: {stdout}"
    );
}

/// A window at 99.5 % is not full (issue 39): the line and `--status` say 99 %, never the
/// 100 % of a full window.
#[test]
fn a_window_just_under_full_never_reads_100_percent() {
    let (sb, _api) = crate::logins::logged_in();
    sb.write_config("[[rungs]]\nbackend = \"claude\"\nprobe_model = \"opus\"\n");
    let (five, week) = resets();

    let (_, line, _) = statusline(&sb, &five_hour_feed(99.5, five, week));
    let status = sb.run(&["--status"]);

    assert!(line.contains("5h 99% ↺"), "{line}");
    assert!(!line.contains("100%"), "{line}");
    assert!(status.stdout.contains("5-hour 99% "), "{status:?}");
    assert!(!status.stdout.contains("100%"), "{status:?}");
}
