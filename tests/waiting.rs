//! Every rung parked until a known reset (DESIGN §18): a launch exits 75 naming the earliest
//! reset and the rung it reopens; `--wait[=MAX]` (or `AGENT_WAIT`) waits for it and runs
//! once, Ctrl-C ends the wait with 130, and a reset beyond MAX is not waited for.

use std::process::Child;
use std::sync::mpsc;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use serde_json::json;

use crate::parking::{claude_login, five_hour, in_hours, write_windows};
use crate::support::watched::{ctrl_c, finish, start_until};
use crate::support::{Sandbox, launched_words};
use crate::world::world;

/// One rung: Claude Code on its own login.
const ONE_CLAUDE: &str = "[[rungs]]\nbackend = \"claude\"\nprobe_model = \"opus\"\n";

/// The reset as the notices show it: `15:00` today, else `Thu 09:00`, on the local clock.
fn clock_words(at: Timestamp) -> String {
    let zone = jiff::tz::TimeZone::system();
    let at = at.to_zoned_datetime(zone.clone());
    let today = Timestamp::now().to_zoned_datetime(zone).date();
    at.strftime(if at.date() == today {
        "%H:%M"
    } else {
        "%a %H:%M"
    })
    .to_string()
}

/// A fake `claude` that writes when it ran (Unix milliseconds, on the test's clock) into
/// `ran_at` in the sandbox's temp dir, then answers.
fn claude_noting_when_it_ran(sb: &Sandbox) {
    sb.fake_cli("claude")
        .script("date -u +%s%3N >> \"$TMPDIR/ran_at\"\necho claude answered")
        .install();
}

/// Starts `agent ARGS` and returns it once its stderr says it is waiting.
fn start_waiting(sb: &Sandbox, args: &[&str]) -> (Child, Vec<String>, mpsc::Receiver<String>) {
    start_until(sb, args, |line| line.contains("[agent] waiting for "))
}

#[test]
fn every_rung_parked_exits_75_naming_the_earliest_reset_and_runs_nothing() {
    let w = world();
    w.sb.write_config(
        "[[rungs]]\nbackend = \"claude\"\nprobe_model = \"opus\"\nrun_model = \"opus\"\n\n[[rungs]]\nbackend = \"claude\"\nprobe_model = \"sonnet\"\nrun_model = \"sonnet\"\n",
    );
    // Opus is out until its weekly reset, the whole login until its 5-hour one.
    let five_hour_reset = in_hours(2);
    write_windows(
        &w.sb,
        &claude_login(&w.sb),
        &[
            (five_hour(), 100.0, five_hour_reset),
            (
                json!({"kind": "model_weekly", "family": "opus"}),
                100.0,
                in_hours(30),
            ),
        ],
    );

    let run = w.sb.run(&["-p", "hi"]);

    assert_eq!(run.code, Some(75), "{run:?}");
    assert!(w.sb.calls("claude").is_empty(), "{}", run.stderr);
    assert_eq!(w.api.posts_for_model("claude-opus-5"), 0);
    assert_eq!(w.api.posts_for_model("claude-sonnet-5"), 0);
    let expected = format!(
        "[agent] every rung is parked: Claude Code (claude-sonnet-5) reopens at {} (in ",
        clock_words(five_hour_reset)
    );
    assert!(run.stderr.contains(&expected), "{}", run.stderr);
    assert!(
        run.stderr.contains(") — agent --wait runs it then"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_rung_passed_over_for_its_arguments_beside_a_parked_one_makes_it_69_not_75() {
    // Claude Code is parked until a known reset; Codex, the other rung, cannot take the
    // words. A retry at 75 would be refused the same way until the reset, so no rung is
    // available (69), each named with why.
    let w = world();
    w.sb.write_config(
        "[[rungs]]\nbackend = \"claude\"\nprobe_model = \"opus\"\n\n[[rungs]]\nbackend = \"codex\"\n",
    );
    write_windows(
        &w.sb,
        &claude_login(&w.sb),
        &[(five_hour(), 100.0, in_hours(2))],
    );

    let run =
        w.sb.run(&["-p", "--permission-mode", "acceptEdits", "fix the typo"]);

    assert_eq!(run.code, Some(69), "{run:?}");
    assert!(w.sb.calls("claude").is_empty(), "{}", run.stderr);
    assert!(w.sb.calls("codex").is_empty(), "{}", run.stderr);
    assert!(
        !run.stderr.contains("every rung is parked"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("agent: no rung is available"),
        "{}",
        run.stderr
    );
    let listed = run
        .stderr
        .split("agent: no rung is available")
        .nth(1)
        .unwrap_or_default();
    assert!(listed.contains("5-hour limit, resets"), "{}", run.stderr);
    assert!(
        listed.contains("cannot take --permission-mode acceptEdits"),
        "{}",
        run.stderr
    );
}

#[test]
fn wait_runs_the_cli_once_after_the_reset() {
    let w = world();
    w.sb.write_config(ONE_CLAUDE);
    claude_noting_when_it_ran(&w.sb);
    let reset = Timestamp::now() + SignedDuration::from_secs(3);
    write_windows(&w.sb, &claude_login(&w.sb), &[(five_hour(), 100.0, reset)]);

    let run = w.sb.run(&["--wait", "-p", "hi"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.stderr
            .contains("[agent] waiting for Claude Code (its default model) — reopens "),
        "{}",
        run.stderr
    );
    let calls = w.sb.calls("claude");
    assert_eq!(calls.len(), 1, "{}", run.stderr);
    assert_eq!(
        launched_words(&calls[0].argv),
        ["-p", "hi"],
        "--wait took no word of the CLI's"
    );
    let ran_at: i64 = std::fs::read_to_string(w.sb.tmp_dir().join("ran_at"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        ran_at >= reset.as_millisecond(),
        "ran {} ms before the reset",
        reset.as_millisecond() - ran_at
    );
}

#[test]
fn ctrl_c_during_the_wait_exits_130_and_runs_nothing() {
    let w = world();
    w.sb.write_config(ONE_CLAUDE);
    write_windows(
        &w.sb,
        &claude_login(&w.sb),
        &[(five_hour(), 100.0, in_hours(2))],
    );
    let (child, _, rx) = start_waiting(&w.sb, &["--wait=3h", "-p", "hi"]);

    ctrl_c(&child);
    let (code, stderr) = finish(child, &rx);

    assert_eq!(code, Some(130), "{stderr}");
    assert!(stderr.contains("stopped waiting — nothing ran"), "{stderr}");
    assert!(w.sb.calls("claude").is_empty());
}

#[test]
fn a_reset_beyond_the_longest_wait_exits_75_at_once() {
    let w = world();
    w.sb.write_config(ONE_CLAUDE);
    write_windows(
        &w.sb,
        &claude_login(&w.sb),
        &[(five_hour(), 100.0, in_hours(2))],
    );

    let run = w.sb.run(&["--wait=1h", "-p", "hi"]);
    assert_eq!(run.code, Some(75), "{run:?}");
    assert!(
        run.stderr
            .contains("), beyond the 1 h --wait takes — not waiting"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("waiting for"), "{}", run.stderr);

    // AGENT_WAIT asks the same of a script's every launch.
    w.sb.env("AGENT_WAIT", "90s");
    let run = w.sb.run(&["-p", "hi"]);
    assert_eq!(run.code, Some(75), "{run:?}");
    assert!(
        run.stderr.contains("beyond the 90 s --wait takes"),
        "{}",
        run.stderr
    );
    assert!(w.sb.calls("claude").is_empty());

    w.sb.env("AGENT_WAIT", "8d");
    let run = w.sb.run(&["-p", "hi"]);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(
        run.stderr.contains("AGENT_WAIT=8d: at most 7d"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_newer_report_that_the_window_reopened_ends_the_wait_early() {
    let w = world();
    w.sb.write_config(ONE_CLAUDE);
    let reset = in_hours(2);
    write_windows(&w.sb, &claude_login(&w.sb), &[(five_hour(), 100.0, reset)]);
    let (child, _, rx) = start_waiting(&w.sb, &["--wait", "-p", "hi"]);

    // A newer feed: the same window, no longer full (written as the store writes, by rename).
    let windows = w.sb.state_dir().join("windows.json");
    let fresh = json!({"logins": {claude_login(&w.sb): [{
        "scope": five_hour(), "used_percent": 40.0, "resets_at": reset.to_string(),
        "source": "statusline", "observed_at": Timestamp::now().to_string()}]}});
    let tmp = w.sb.state_dir().join("windows.json.test-tmp");
    std::fs::write(&tmp, fresh.to_string()).unwrap();
    std::fs::rename(&tmp, &windows).unwrap();
    let (code, stderr) = finish(child, &rx);

    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("reopened a rung early"), "{stderr}");
    assert_eq!(w.sb.calls("claude").len(), 1, "{stderr}");
}

/// Debian's libfaketime (`.ci/run` installs the package `faketime`).
const LIBFAKETIME: &str = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";

#[test]
fn a_clock_stepped_back_during_the_wait_keeps_the_login_parked() {
    // The step is made by libfaketime reading an offset file; under the date script the
    // test's own clock is libfaketime's already, and agent's would no longer match it.
    if crate::support::clock::is_faked() {
        return;
    }
    assert!(
        std::path::Path::new(LIBFAKETIME).exists(),
        "{LIBFAKETIME} is missing: apt-get install faketime"
    );
    let w = world();
    w.sb.write_config(ONE_CLAUDE);
    claude_noting_when_it_ran(&w.sb);
    write_windows(
        &w.sb,
        &claude_login(&w.sb),
        &[(five_hour(), 100.0, in_hours(2))],
    );
    let offset = w.sb.tmp_dir().join("clock-offset");
    std::fs::write(&offset, "+0\n").unwrap();
    w.sb.env("LD_PRELOAD", LIBFAKETIME);
    w.sb.env("FAKETIME_TIMESTAMP_FILE", offset.to_string_lossy());
    w.sb.env("FAKETIME_NO_CACHE", "1");
    // A real clock step never moves the monotonic clock.
    w.sb.env("FAKETIME_DONT_FAKE_MONOTONIC", "1");
    let (child, _, rx) = start_waiting(&w.sb, &["--wait=3h", "-p", "hi"]);

    // NTP (or a user) sets the clock back two hours: the windows agent filed a moment ago
    // now look "seen in the future".
    std::fs::write(&offset, "-2h\n").unwrap();
    // The wait reads the windows again every second: give it a few reads.
    std::thread::sleep(Duration::from_secs(4));
    let still_waiting = child_state(&child).is_none();
    ctrl_c(&child);
    let (code, stderr) = finish(child, &rx);

    assert!(still_waiting, "the wait ended: {stderr}");
    assert_eq!(code, Some(130), "{stderr}");
    assert!(
        w.sb.calls("claude").is_empty(),
        "the full login ran: {stderr}"
    );
    assert!(!stderr.contains("reopened"), "{stderr}");
}

/// How `child` ended, or `None` while it runs (it is not reaped).
fn child_state(child: &Child) -> Option<i32> {
    use nix::sys::wait::{WaitPidFlag, WaitStatus, waitid};
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap());
    match waitid(
        nix::sys::wait::Id::Pid(pid),
        WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT,
    ) {
        Ok(WaitStatus::StillAlive) | Err(_) => None,
        Ok(WaitStatus::Exited(_, code)) => Some(code),
        Ok(_) => Some(-1),
    }
}
