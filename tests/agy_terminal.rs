//! Antigravity off a terminal (DESIGN §22). The stand-in follows the one public report
//! exactly (google-antigravity/antigravity-cli #76): `agy --print`/`-p` through a pipe,
//! subprocess or redirect exits 0 with zero bytes on stdout and stderr; on a terminal it
//! prints. Its `--version` is not covered by the report and prints either way.

use serde_json::json;

use crate::logins::logged_in;
use crate::support::{Sandbox, tmux::Tmux};

/// agy's `/usage` JSON with one 5-hour window 42 % used.
fn usage() -> String {
    let reset = (jiff::Timestamp::now() + jiff::SignedDuration::from_hours(2)).to_string();
    json!({"command": {"name": "usage", "data": {"groups": [
        {"name": "Gemini Models", "buckets": [
            {"id": "gemini-5h", "window": "5h", "remaining_fraction": 0.58, "reset_time": reset}]},
    ]}}})
    .to_string()
}

/// A stand-in agy: silent off a terminal (report #76); on one, `/usage` gives its windows
/// and a prompt is answered with `answer` drawn as a terminal program draws it (a title,
/// a hidden cursor, colour). Each run notes where its stdout went ([`stdout_of_launch`]).
fn install_agy(sb: &Sandbox, answer: &str) {
    let usage = usage();
    sb.fake_cli("agy")
        .script(&format!(
            r#"printf '%s %s\n' "$1" "$(readlink /proc/$$/fd/1)" >> "$calls/../agy-stdout.log"
case "$1" in --version) echo 'agy 1.2.14'; exit 0;; esac
[ -t 1 ] || exit 0
case "$1" in
  --print) printf '%s' '{usage}';;
  -p) {answer};;
esac
exit 0"#
        ))
        .install();
}

const DRAWN_ANSWER: &str =
    r#"printf '\033]0;agy\007\033[?25l\033[1;32magy says:\033[0m %s\n' "$2"; printf '\033[?25h'"#;

fn setup(answer: &str) -> Sandbox {
    let (sb, api) = logged_in();
    // The mock is not called on these paths; it only has to outlive the sandbox's runs.
    std::mem::forget(api);
    install_agy(&sb, answer);
    sb.write_config("[[rungs]]\nbackend = \"agy\"\n\n[[rungs]]\nbackend = \"codex\"\n");
    sb
}

/// Where the launch's stdout (`agy -p …`) went: a device, or `pipe:[…]`.
fn stdout_of_launch(sb: &Sandbox) -> String {
    let log = std::fs::read_to_string(sb.calls_dir().join("agy-stdout.log")).unwrap();
    log.lines()
        .find_map(|line| line.strip_prefix("-p "))
        .expect("agy was launched with a prompt")
        .to_string()
}

fn prompts_to(sb: &Sandbox, cli: &str) -> usize {
    sb.calls(cli)
        .iter()
        .filter(|run| run.argv.iter().any(|arg| arg.contains("hello there")))
        .count()
}

#[test]
fn agy_off_a_terminal_answers_through_agents_own_and_its_quota_read_proves_the_rung() {
    let sb = setup(DRAWN_ANSWER);

    let dry = sb.run(&["--dry-run", "-p", "hello there"]);
    let launch = sb.run(&["-p", "hello there"]);

    assert!(
        !dry.stderr.contains("unproved") && !dry.stdout.contains("unproved"),
        "{dry:?}"
    );
    assert!(dry.stdout.contains("would run: Antigravity"), "{dry:?}");
    assert!(
        dry.stdout.contains("5-hour gemini 42%") && dry.stdout.contains("agy /usage, no prompt"),
        "the quota read was heard through the terminal: {dry:?}"
    );
    assert_eq!(launch.code, Some(0), "{launch:?}");
    assert_eq!(launch.stdout, "agy says: hello there\n", "{launch:?}");
    assert_eq!(prompts_to(&sb, "codex"), 0, "{launch:?}");
    assert!(
        sb.calls("agy")
            .iter()
            .any(|run| run.argv == ["-p", "hello there"])
    );
    let stdout = stdout_of_launch(&sb);
    assert!(
        stdout.starts_with("/dev/pts/"),
        "a terminal of agent's own: {stdout}"
    );
    let status = sb.run(&["--status"]);
    let line = status.stdout.lines().find(|l| l.contains("agy")).unwrap();
    assert!(line.starts_with("OK"), "{line}");
}

#[test]
fn agy_that_prints_nothing_even_on_a_terminal_did_not_answer_and_the_next_rung_runs() {
    let sb = setup("true");

    let launch = sb.run(&["-p", "hello there"]);

    assert_eq!(launch.code, Some(0), "{launch:?}");
    assert!(
        launch
            .stderr
            .contains("printed nothing for a headless prompt — treating as unavailable"),
        "{launch:?}"
    );
    assert!(launch.stderr.contains("Antigravity"), "{launch:?}");
    assert_eq!(launch.stdout, "codex answered\n", "{launch:?}");
    assert_eq!(prompts_to(&sb, "agy"), 1);
    assert_eq!(prompts_to(&sb, "codex"), 1);
}

#[test]
fn agy_on_a_real_terminal_writes_to_it_itself() {
    let sb = setup(DRAWN_ANSWER);
    let agent = env!("CARGO_BIN_EXE_agent");
    let log = sb.tmp_dir().join("pane.log");
    let session = Tmux::start_recorded(
        &sb,
        sb.home(),
        &[
            "/bin/sh",
            "-c",
            &format!("'{agent}' -p 'hello there'; echo \"exit=$?\"; sleep 30"),
        ],
        &log,
    );

    session.wait_for_joined(
        |screen| screen.contains("exit=0"),
        crate::support::wait::PATIENCE.as_secs(),
    );

    let pane_tty = session.tmux(&["display-message", "-p", "-t", "0", "#{pane_tty}"]);
    let stdout = stdout_of_launch(&sb);
    assert_eq!(
        stdout.trim(),
        pane_tty.trim(),
        "agy's stdout is the pane itself"
    );
    let shown = std::fs::read_to_string(&log).unwrap();
    assert!(
        shown.contains("\u{1b}[1;32magy says:"),
        "its own drawing reached the terminal unchanged: {shown:?}"
    );
    assert_eq!(prompts_to(&sb, "codex"), 0);
}

#[test]
fn agy_forced_with_use_off_a_terminal_is_still_heard_and_its_exit_code_passes_through() {
    let sb = setup(&format!("{DRAWN_ANSWER}; exit 3"));

    let forced = sb.run(&["--use", "agy", "-p", "hello there"]);

    assert_eq!(forced.code, Some(3), "{forced:?}");
    assert_eq!(forced.stdout, "agy says: hello there\n", "{forced:?}");
    assert!(stdout_of_launch(&sb).starts_with("/dev/pts/"));
}

/// What agy draws reaches a pipe as plain text (issue 39): its C1 controls too — a
/// clipboard write (OSC 52) and a screen clear in their 8-bit forms, raw and written in
/// UTF-8, that a terminal reading the pipe's file later would obey — and a doubled ESC
/// leaves none of its title behind.
#[test]
fn agy_s_eight_bit_controls_and_doubled_escapes_never_reach_a_pipe() {
    let sb = setup(
        r#"printf 'agy \235''52;c;ZXZpbA==\234''says:\2332J \302\235''0;t\302\234''%s \033\033]0;t2\007€\n' "$2""#,
    );

    let launch = sb.run(&["-p", "hello there"]);

    assert_eq!(launch.code, Some(0), "{launch:?}");
    assert_eq!(launch.stdout, "agy says: hello there €\n", "{launch:?}");
}
