//! No secret value in stdout, stderr or any state file — even when an upstream echoes it.

use crate::support::{MockApi, Reply, Rule};
use crate::world::{GEMINI_KEY, GEMINI_MODEL, OPENAI_KEY, PROXY_KEY, world};

pub(crate) fn assert_no_secret(text: &str, place: &str) {
    for secret in [PROXY_KEY, OPENAI_KEY, GEMINI_KEY] {
        assert!(!text.contains(secret), "{place} holds a secret: {text}");
        // The distinctive middle of each key: no partial echo either.
        let middle = &secret[10..24];
        assert!(
            !text.contains(middle),
            "{place} holds part of a secret ({middle}): {text}"
        );
    }
}

#[test]
fn an_upstream_echoing_the_key_never_leaks_it() {
    let w = world();
    w.api
        .on(Rule::credential(PROXY_KEY).reply(Reply::anthropic_error(
            401,
            "authentication_error",
            &format!("invalid x-api-key: {PROXY_KEY}"),
        )));
    w.api
        .on(Rule::credential(OPENAI_KEY).reply(Reply::openai_error(
            401,
            "invalid_api_key",
            &format!("Incorrect API key provided: {OPENAI_KEY}"),
        )));
    w.api
        .on(Rule::credential(GEMINI_KEY).reply(Reply::gemini_error(
            400,
            "INVALID_ARGUMENT",
            &format!("API key not valid: {GEMINI_KEY}"),
        )));

    let launch = w.sb.run(&["-p", "hi"]);
    let dry = w.sb.run(&["--dry-run", "-p", "hi"]);
    let dry_json = w.sb.run(&["--dry-run", "--json", "-p", "hi"]);

    assert_eq!(launch.code, Some(69), "{launch:?}");
    assert!(
        launch.stderr.contains("[redacted]"),
        "the echo is shown, scrubbed: {}",
        launch.stderr
    );
    for (run, name) in [
        (&launch, "launch"),
        (&dry, "dry-run"),
        (&dry_json, "dry-run --json"),
    ] {
        assert_no_secret(&run.stdout, &format!("{name} stdout"));
        assert_no_secret(&run.stderr, &format!("{name} stderr"));
    }
    let files = w.sb.state_files();
    assert!(!files.is_empty());
    for (path, content) in files {
        assert_no_secret(&content, &path.display().to_string());
    }
}

#[test]
fn state_files_are_private() {
    use std::os::unix::fs::PermissionsExt as _;
    let w = world();
    w.api
        .on(Rule::model("claude-opus-5").reply(Reply::status(429).body("slow down")));

    assert_eq!(w.sb.run(&["-p", "hi"]).code, Some(0));

    let dir_mode = std::fs::metadata(w.sb.state_dir())
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    let files = w.sb.state_files();
    assert!(
        files.iter().any(|(p, _)| p.ends_with("health.json")),
        "{files:?}"
    );
    for (path, _) in files {
        let mode = std::fs::metadata(w.sb.state_dir().join(&path))
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(mode, 0o600, "{} is {mode:o}", path.display());
    }
    // The sandbox made the directory itself; agent makes new ones 0700 (see a fresh one).
    let _ = dir_mode;
    let fresh = w.sb.root().join("fresh-state");
    w.sb.env("AGENT_STATE_DIR", fresh.display().to_string());
    w.api.clear_rules();
    w.api
        .on(Rule::model("claude-opus-5").reply(Reply::status(429).body("slow down")));
    assert_eq!(w.sb.run(&["-p", "hi"]).code, Some(0));
    let mode = std::fs::metadata(&fresh).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);
}

/// Two keys with the same vendor head (every Anthropic key starts `sk-ant-api03-`).
const KEY_A: &str = "sk-ant-api03-AAAAkeyOneUniquePart0123456789abcd";
const KEY_B: &str = "sk-ant-api03-BBBBkeyTwoUniquePart9876543210wxyz";
const HOOK_PASSWORD: &str = "hook-pa55word-in-url";

/// No 12-character run of a key's own part (after its vendor head) in `text`.
fn assert_no_window_of(keys: &[&str], text: &str, place: &str) {
    for key in keys {
        let own = &key["sk-ant-api03-".len()..];
        for start in 0..=own.len() - 12 {
            let window = &own[start..start + 12];
            assert!(
                !text.contains(window),
                "{place} holds {window:?} of a key: {text}"
            );
        }
    }
}

#[test]
fn keys_sharing_a_vendor_head_are_scrubbed_from_every_report_state_file_and_alert() {
    let w = world();
    let telegram = MockApi::start();
    let hook = MockApi::start();
    w.sb.env("AGENT_PROXY_KEY", KEY_A);
    w.sb.env("GEMINI_API_KEY", KEY_B);
    w.sb.env("TG_TOKEN", "123456:telegram-bot-token-for-leaks");
    let hook_url = hook
        .url()
        .replacen("://", &format!("://alerts:{HOOK_PASSWORD}@"), 1);
    w.sb.write_config(&format!(
        "[alerts]\ndeadline_seconds = 1\n\n[alerts.telegram]\nbot_token = \"${{TG_TOKEN}}\"\nchat_id = \"1\"\napi_url = \"{}\"\n\n[alerts.webhook]\nurl = \"{hook_url}/hook\"\n",
        telegram.url()
    ));
    telegram.on(Rule::path_contains("/sendMessage").reply(
        Reply::status(200).json(serde_json::json!({"ok": true, "result": {"message_id": 1}})),
    ));
    // The webhook is down, so its error is kept in watchdog.json and shown.
    hook.on(Rule::path_contains("/hook").reply(Reply::status(503).body("down")));
    // The gemini upstream echoes both keys, the way a gateway quoting its config might.
    w.api
        .on(Rule::model(GEMINI_MODEL).reply(Reply::gemini_error(
            400,
            "INVALID_ARGUMENT",
            &format!("API key not valid: {KEY_B} (proxy key {KEY_A})"),
        )));

    let check = w.sb.run(&["--check-fallback"]);
    let status = w.sb.run(&["--status"]);
    let status_json = w.sb.run(&["--status", "--json"]);
    let list_json = w.sb.run(&["--list", "--json"]);

    assert_eq!(check.code, Some(1), "{check:?}");
    assert!(check.stdout.contains("[redacted]"), "{}", check.stdout);
    let keys = [KEY_A, KEY_B];
    for (run, name) in [
        (&check, "--check-fallback"),
        (&status, "--status"),
        (&status_json, "--status --json"),
        (&list_json, "--list --json"),
    ] {
        assert_no_window_of(&keys, &run.stdout, &format!("{name} stdout"));
        assert_no_window_of(&keys, &run.stderr, &format!("{name} stderr"));
        assert!(
            !run.stderr.contains(HOOK_PASSWORD),
            "{name}: {}",
            run.stderr
        );
    }
    let files = w.sb.state_files();
    for name in ["health.json", "events.jsonl", "watchdog.json"] {
        assert!(
            files.iter().any(|(p, _)| p.ends_with(name)),
            "{name} written: {files:?}"
        );
    }
    for (path, content) in files {
        assert_no_window_of(&keys, &content, &path.display().to_string());
        assert!(
            !content.contains(HOOK_PASSWORD),
            "{} keeps the webhook URL's password",
            path.display()
        );
    }
    let alerts: Vec<String> = telegram
        .post_requests()
        .iter()
        .chain(hook.post_requests().iter())
        .map(|request| request.body.clone())
        .collect();
    assert_eq!(alerts.len(), 2, "one Telegram message, one webhook attempt");
    for body in &alerts {
        assert!(body.contains("[redacted]"), "{body}");
        assert_no_window_of(&keys, body, "an alert body");
    }
}

/// A key agent never had, quoted in an upstream's error, goes by its shape from everything
/// agent prints and stores (issue 39, item 8): the notice says what was there instead.
#[test]
fn a_key_agent_never_had_quoted_by_an_upstream_goes_by_its_shape() {
    const FOREIGN: &str = "sk-ant-api03-Fr9Wq2Lm7Xv4Kb8Tn3Hc6Jy1Pd5Gs0Za";
    let w = world();
    w.api
        .on(Rule::credential(PROXY_KEY).reply(Reply::anthropic_error(
            401,
            "authentication_error",
            &format!("this key was revoked; the org's key is {FOREIGN}"),
        )));
    w.api
        .on(Rule::credential(OPENAI_KEY).reply(Reply::openai_error(
            401,
            "invalid_api_key",
            "Incorrect API key provided",
        )));
    w.api
        .on(Rule::credential(GEMINI_KEY).reply(Reply::gemini_error(
            400,
            "INVALID_ARGUMENT",
            "API key not valid",
        )));

    let launch = w.sb.run(&["-p", "hi"]);

    assert_eq!(launch.code, Some(69), "{launch:?}");
    assert!(
        launch
            .stderr
            .contains("the org's key is [redacted: Anthropic key]"),
        "{}",
        launch.stderr
    );
    let files = w.sb.state_files();
    assert!(!files.is_empty());
    for (path, content) in
        std::iter::once((std::path::PathBuf::from("stderr"), launch.stderr)).chain(files)
    {
        assert!(
            !content.contains("Fr9Wq2Lm7Xv4"),
            "{} holds the key: {content}",
            path.display()
        );
    }
}
