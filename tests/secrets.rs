//! No secret value in stdout, stderr or any state file — even when an upstream echoes it.

use crate::support::{Reply, Rule};
use crate::world::{GEMINI_KEY, OPENAI_KEY, PROXY_KEY, world};

fn assert_no_secret(text: &str, place: &str) {
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
