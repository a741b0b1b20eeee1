//! Gemini CLI's personal Google logins (DESIGN §22): since 2026-06-18 Gemini CLI refuses
//! them, so such a rung is not proved with that reason on every face, is nobody's cover,
//! is never called, and a launch passes over it. A Code Assist licence's login (a Google
//! Cloud project named) and an API key are unchanged.

use serde_json::json;

use crate::support::Sandbox;
use crate::world::{GEMINI_KEY, GEMINI_MODEL, world};

const GONE: &str = "Gemini CLI no longer serves personal Google logins (since 2026-06-18); a Google AI subscription runs in Antigravity: install agy";

/// Gemini CLI logged in with Google as an individual is: `oauth-personal` selected, its
/// credentials in `oauth_creds.json`, no project named and no API key.
fn personal_login(sb: &Sandbox) {
    sb.env_remove("GEMINI_API_KEY");
    sb.env_remove("GOOGLE_API_KEY");
    sb.env_remove("GOOGLE_CLOUD_PROJECT");
    sb.env_remove("GOOGLE_CLOUD_PROJECT_ID");
    sb.write_file(
        ".gemini/settings.json",
        &json!({"model": {"name": GEMINI_MODEL},
            "security": {"auth": {"selectedType": "oauth-personal"}}})
        .to_string(),
    );
    sb.write_file(
        ".gemini/oauth_creds.json",
        &json!({"access_token": "ya29.PERSONALaccess-1111", "refresh_token": "1//PERSONALrefresh-2222",
            "token_type": "Bearer", "expiry_date": 4_102_444_800_000_u64})
        .to_string(),
    );
}

const CLAUDE_THEN_GEMINI: &str = "[[rungs]]\nbackend = \"claude\"\nprobe_model = \"claude-opus-5\"\n\n[[rungs]]\nbackend = \"gemini\"\n";

fn gemini_row(stdout: &str) -> &str {
    stdout
        .lines()
        .find(|line| line.contains(" gemini"))
        .unwrap_or_else(|| panic!("no gemini row in {stdout}"))
}

#[test]
fn a_personal_google_login_is_not_proved_never_cover_and_never_called() {
    let w = world();
    personal_login(&w.sb);
    w.sb.write_config(CLAUDE_THEN_GEMINI);

    let status = w.sb.run(&["--status"]);
    let check = w.sb.run(&["--check-fallback"]);
    let json = w.sb.run(&["--status", "--json"]);
    // Nothing was called for it: no self-check, no request to Google's API.
    assert!(
        w.sb.calls("gemini").is_empty(),
        "{:?}",
        w.sb.calls("gemini")
    );
    let doctor = w.sb.run(&["--doctor"]);

    let row = gemini_row(&status.stdout);
    assert!(row.starts_with("UNPROVED"), "{row}");
    assert!(row.contains(&format!("not proved: {GONE}")), "{row}");
    // The only independent rung is not cover: nothing answers for the first vendor.
    assert_eq!(check.code, Some(1), "{check:?}");
    assert!(
        check
            .stdout
            .starts_with("DOWN: no provider-independent fallback answers: "),
        "{}",
        check.stdout
    );
    assert!(
        check.stdout.lines().next().unwrap().contains(GONE),
        "{}",
        check.stdout
    );
    let doctor_row = doctor
        .stdout
        .lines()
        .find(|line| line.contains("rung 2 gemini"))
        .unwrap_or_else(|| panic!("{}", doctor.stdout));
    assert!(doctor_row.contains(GONE), "{doctor_row}");
    assert!(
        doctor.stdout.contains("Antigravity (`agy`)"),
        "{}",
        doctor.stdout
    );
    let rows: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let gemini = crate::support::status_row(&rows, "gemini");
    assert_eq!(gemini["state"], "not_proved", "{gemini:#}");
    assert_eq!(gemini["class"], "unproved", "{gemini:#}");
    // The doctor asks the binary its version, as of every CLI; nothing else ran.
    assert!(
        w.sb.calls("gemini")
            .iter()
            .all(|run| run.argv == ["--version"]),
        "{:?}",
        w.sb.calls("gemini")
    );
    assert!(
        w.api.requests().iter().all(|r| !r.path.contains("gemini")),
        "{:?}",
        w.api.requests()
    );
}

#[test]
fn a_launch_passes_over_a_personal_google_login_with_the_reason() {
    let w = world();
    personal_login(&w.sb);
    w.sb.write_config("[[rungs]]\nbackend = \"gemini\"\n\n[[rungs]]\nbackend = \"codex\"\n");

    let launch = w.sb.run(&["-p", "hi"]);

    assert_eq!(launch.code, Some(0), "{launch:?}");
    assert_eq!(launch.stdout, "codex answered\n", "{launch:?}");
    assert!(
        launch.stderr.contains(&format!("unavailable — {GONE}")),
        "{}",
        launch.stderr
    );
    assert!(
        w.sb.calls("gemini").is_empty(),
        "{:?}",
        w.sb.calls("gemini")
    );
    assert_eq!(w.sb.calls("codex").len(), 1);
}

#[test]
fn a_code_assist_licence_with_its_project_named_is_checked_as_before() {
    // The project in the environment, or in the `.env` Gemini CLI reads from its home.
    for in_env_file in [false, true] {
        let w = world();
        personal_login(&w.sb);
        if in_env_file {
            w.sb.write_file(
                ".gemini/.env",
                "export GOOGLE_CLOUD_PROJECT=\"acme-code-assist\"\n",
            );
        } else {
            w.sb.env("GOOGLE_CLOUD_PROJECT", "acme-code-assist");
        }
        w.sb.write_config(CLAUDE_THEN_GEMINI);

        let status = w.sb.run(&["--status"]);

        let row = gemini_row(&status.stdout);
        assert!(row.starts_with("OK"), "{in_env_file}: {row}");
        assert!(row.contains("answered the CLI's own check"), "{row}");
        assert!(!status.stdout.contains(GONE), "{}", status.stdout);
        assert_eq!(w.sb.calls("gemini").len(), 1, "its own check ran");
    }
}

#[test]
fn an_api_key_gemini_rung_is_probed_and_ok_even_beside_a_personal_login() {
    let w = world();
    personal_login(&w.sb);
    w.sb.env("GEMINI_API_KEY", GEMINI_KEY);
    w.sb.write_config(CLAUDE_THEN_GEMINI);

    let status = w.sb.run(&["--status"]);
    let check = w.sb.run(&["--check-fallback"]);

    let row = gemini_row(&status.stdout);
    assert!(row.starts_with("OK"), "{row}");
    assert!(!status.stdout.contains(GONE), "{}", status.stdout);
    assert_eq!(check.code, Some(0), "{check:?}");
    assert!(
        check
            .stdout
            .starts_with("all provider-independent fallbacks OK: gemini"),
        "{}",
        check.stdout
    );
    assert!(
        w.api.posts_for_model(GEMINI_MODEL) >= 2,
        "probed by each report"
    );
}

#[test]
fn list_says_why_agy_comes_before_gemini_cli() {
    let w = world();
    personal_login(&w.sb);

    let list = w.sb.run(&["--list"]);

    let (_, rungs) = list
        .stdout
        .split_once("rungs (built-in table):")
        .unwrap_or_else(|| panic!("{}", list.stdout));
    let agy = rungs.find("  agy ").unwrap_or_else(|| panic!("{rungs}"));
    let gemini = rungs.find("  gemini ").unwrap_or_else(|| panic!("{rungs}"));
    assert!(agy < gemini, "{rungs}");
    assert!(
        list.stdout
            .contains("Antigravity (agy) comes before Gemini CLI: a Google AI subscription"),
        "{}",
        list.stdout
    );
    assert!(gemini_row(&rungs[gemini - 1..]).contains(GONE), "{rungs}");
}
