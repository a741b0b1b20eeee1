//! Not set up is not dead (issue 32, item 5): an installed CLI with no login and no key is
//! `not set up` — a SKIP that says how to set it up, in `--status`, `--check-fallback` and
//! `--doctor`; no cover, no fault, no alert, passed over by a launch with nothing marked —
//! and a backend is turned off in one line, `[backends.NAME] enabled = false`.

use std::os::unix::fs::PermissionsExt as _;

use crate::support::{MockApi, Reply, Rule, Sandbox};
use crate::world::{GEMINI_MODEL, World, world};

/// Claude Code, then Codex, then Gemini CLI.
const THREE_RUNGS: &str = "[[rungs]]\nbackend = \"claude\"\nprobe_model = \"opus\"\n\n[[rungs]]\nbackend = \"codex\"\n\n[[rungs]]\nbackend = \"gemini\"\n";

/// What the rows say of a Gemini CLI installed and never set up.
const NOT_SET_UP: &str = "not set up: no login and no GEMINI_API_KEY — log in (gemini, then type /auth) or set GEMINI_API_KEY";

/// Gemini CLI installed (the world's fake on PATH), never logged in — no `oauth_creds.json`,
/// no auth type chosen — and no key in any variable it reads.
fn gemini_never_set_up(w: &World) {
    w.sb.env_remove("GEMINI_API_KEY");
    w.sb.env_remove("GOOGLE_API_KEY");
    assert!(!w.sb.home().join(".gemini/oauth_creds.json").exists());
    std::fs::set_permissions(w.sb.state_dir(), std::fs::Permissions::from_mode(0o700)).unwrap();
}

/// The first line of `out` that holds `needle`.
fn row<'a>(out: &'a str, needle: &str) -> &'a str {
    out.lines()
        .find(|line| line.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?} in:\n{out}"))
}

/// The runs of the fake `cli` other than `--version` (the doctor asks every binary that).
fn ran(sb: &Sandbox, cli: &str) -> usize {
    sb.calls(cli)
        .iter()
        .filter(|call| call.argv != ["--version"])
        .count()
}

#[test]
fn gemini_installed_with_no_login_and_no_key_is_not_set_up_and_the_doctor_passes() {
    let w = world();
    gemini_never_set_up(&w);
    w.sb.write_config(THREE_RUNGS);

    let doctor = w.sb.run(&["--doctor"]);
    let status = w.sb.run(&["--status"]);

    assert_eq!(doctor.code, Some(0), "{doctor:?}");
    assert!(
        doctor.stdout.contains("no problems found"),
        "{}",
        doctor.stdout
    );
    let line = row(&doctor.stdout, "rung 3 gemini");
    assert!(line.starts_with("SKIP rung 3 gemini"), "{line}");
    assert!(line.ends_with(NOT_SET_UP), "{line}");
    let line = row(&status.stdout, " gemini ");
    assert!(line.starts_with("SKIP "), "{line}");
    assert!(line.ends_with(NOT_SET_UP), "{line}");
    // Nothing was asked of it: no run, no request for its model.
    assert_eq!(ran(&w.sb, "gemini"), 0, "{:?}", w.sb.calls("gemini"));
    assert_eq!(w.api.posts_for_model(GEMINI_MODEL), 0);
}

#[test]
fn a_cli_not_set_up_is_no_dead_rung_and_the_watchdog_sends_no_alert() {
    let w = world();
    gemini_never_set_up(&w);
    let hook = MockApi::start();
    hook.on(Rule::path_contains("/hook").reply(Reply::status(200).body("ok")));
    w.sb.write_config(&format!(
        "[alerts.webhook]\nurl = \"{}/hook\"\n\n{THREE_RUNGS}",
        hook.url()
    ));

    let check = w.sb.run(&["--check-fallback"]);
    let again = w.sb.run(&["--check-fallback"]);

    assert_eq!(check.code, Some(0), "{check:?}");
    assert!(!check.stdout.contains("died"), "{}", check.stdout);
    assert!(
        check
            .stdout
            .starts_with("all provider-independent fallbacks OK: codex / "),
        "{}",
        check.stdout
    );
    let line = row(&check.stdout, " gemini ");
    assert!(line.trim_start().starts_with("SKIP "), "{line}");
    assert!(line.ends_with(NOT_SET_UP), "{line}");
    assert_eq!(again.code, Some(0), "{again:?}");
    assert_eq!(hook.posts(), 0, "{:?}", hook.post_requests());
    assert_eq!(ran(&w.sb, "gemini"), 0, "{:?}", w.sb.calls("gemini"));
}

#[test]
fn a_launch_passes_over_a_cli_not_set_up_and_marks_nothing_failed() {
    let w = world();
    gemini_never_set_up(&w);
    w.sb.write_config("[[rungs]]\nbackend = \"gemini\"\n\n[[rungs]]\nbackend = \"codex\"\n");

    let launch = w.sb.run(&["-p", "hi"]);
    let status = w.sb.run(&["--status", "--json"]);

    assert_eq!(launch.code, Some(0), "{launch:?}");
    assert_eq!(launch.stdout, "codex answered\n", "{launch:?}");
    assert_eq!(ran(&w.sb, "gemini"), 0, "{:?}", w.sb.calls("gemini"));
    let rows: serde_json::Value = serde_json::from_str(&status.stdout).unwrap();
    let gemini = crate::support::status_row(&rows, "gemini");
    assert_eq!(gemini["state"], "skipped", "{gemini:#}");
    assert_eq!(gemini["class"], "not_set_up", "{gemini:#}");
    assert_eq!(gemini["failed_at"], serde_json::Value::Null, "{gemini:#}");
}

#[test]
fn enabled_false_takes_a_backend_off_every_face_in_one_line() {
    let w = world();
    std::fs::set_permissions(w.sb.state_dir(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let hook = MockApi::start();
    hook.on(Rule::path_contains("/hook").reply(Reply::status(200).body("ok")));
    // Gemini CLI is set up (its key is in the world) but answers nothing agent could use.
    w.api
        .on(Rule::model(GEMINI_MODEL).reply(Reply::gemini_error(
            400,
            "INVALID_ARGUMENT",
            "API key not valid",
        )));
    w.sb.write_config(&format!(
        "[backends.gemini]\nenabled = false\n\n[alerts.webhook]\nurl = \"{}/hook\"\n\n[[rungs]]\nbackend = \"gemini\"\n\n[[rungs]]\nbackend = \"codex\"\n",
        hook.url()
    ));

    let launch = w.sb.run(&["-p", "hi"]);
    let status = w.sb.run(&["--status"]);
    let check = w.sb.run(&["--check-fallback"]);
    let doctor = w.sb.run(&["--doctor"]);
    let dry = w.sb.run(&["--dry-run", "-p", "hi"]);

    assert_eq!(launch.code, Some(0), "{launch:?}");
    assert_eq!(launch.stdout, "codex answered\n", "{launch:?}");
    assert!(!launch.stderr.contains("Gemini"), "{}", launch.stderr);
    let off = "off (enabled = false)";
    assert!(row(&status.stdout, " gemini ").ends_with(off), "{status:?}");
    assert!(
        row(&status.stdout, " gemini ").starts_with("SKIP "),
        "{status:?}"
    );
    assert_eq!(check.code, Some(0), "{check:?}");
    assert!(!check.stdout.contains("died"), "{}", check.stdout);
    assert!(row(&check.stdout, " gemini ").ends_with(off), "{check:?}");
    assert_eq!(hook.posts(), 0, "{:?}", hook.post_requests());
    assert_eq!(doctor.code, Some(0), "{doctor:?}");
    assert!(
        row(&doctor.stdout, "rung 1 gemini").starts_with("SKIP "),
        "{}",
        doctor.stdout
    );
    assert!(row(&doctor.stdout, "rung 1 gemini").ends_with(off));
    assert_eq!(dry.code, Some(0), "{dry:?}");
    assert!(dry.stdout.contains(off), "{}", dry.stdout);
    // Turned off: never run, never probed, not even asked its version.
    assert!(
        w.sb.calls("gemini").is_empty(),
        "{:?}",
        w.sb.calls("gemini")
    );
    assert_eq!(w.api.posts_for_model(GEMINI_MODEL), 0);
}

#[test]
fn a_slip_in_the_new_key_is_still_caught() {
    let w = world();
    w.sb.write_config("[backends.gemini]\nenabeld = false\n");

    let status = w.sb.run(&["--status"]);

    assert!(
        status
            .stderr
            .contains("did you mean backends.gemini.enabled? (ignored)"),
        "{status:?}"
    );
}
