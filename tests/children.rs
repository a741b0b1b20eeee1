//! Every child agent waits on is bounded (DESIGN §19): a helper that keeps a child's stdout
//! open past the child's end does not hold agent, and a child that floods is cut off at a
//! byte cap with agent's memory staying small. The helpers here are started with `setsid`,
//! out of reach of any kill of the child's group, and stay until the test releases them:
//! agent ending while its helper still runs is what proves agent did not wait for it. A
//! child that overruns waits the same way, so only agent's own limit can end it before the
//! run is killed (which fails the test).

use std::io::{Read as _, Write as _};
use std::os::unix::process::CommandExt as _;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use crate::parking::codex_on_chatgpt;
use crate::relay::{TOKEN, messages_body, relay_world};
use crate::support::lingering::Lingering;
use crate::support::relay::RelayProc;
use crate::support::sandbox::{kill_group, spawn};
use crate::support::wait;
use crate::world::world;

/// agent's own peak memory may not grow with what a child prints (it is some 10–20 MiB
/// whatever it does; a flood read whole took 1.2–7.8 GB).
const SMALL_KIB: i64 = 100 * 1024;

/// A command that leaves `helper` holding its stdout, then prints `text`.
fn leaving(helper: &Lingering, text: &str) -> String {
    format!("{}\necho {text}", helper.start())
}

/// How `agent` ended, with its peak resident memory.
#[derive(Debug)]
struct Measured {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    /// Killed by the test after [`wait::PATIENCE`]: agent did not end on its own.
    killed: bool,
    /// agent's peak resident memory (wait4's `ru_maxrss`), in KiB. Linux counts in it the
    /// spawning process's own peak as it stood at the `exec` (a panicking test thread's
    /// backtrace alone takes the test binary past 150 MiB), hence [`Measured::tester_kib`].
    peak_kib: i64,
    /// The test process's own peak after agent ended, in KiB.
    tester_kib: i64,
}

impl Measured {
    /// Whether agent's memory stayed small: under [`SMALL_KIB`], or no more than the test
    /// process's own peak that Linux counted in it.
    fn stayed_small(&self) -> bool {
        self.peak_kib < SMALL_KIB || self.peak_kib <= self.tester_kib
    }
}

/// Runs `command` with `input` on its stdin to its end (killed after [`wait::PATIENCE`])
/// and measures it.
fn measured(mut command: Command, input: &[u8]) -> Measured {
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let started = Instant::now();
    let mut child = spawn(&mut command).expect("agent starts");
    let pid = child.id();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    thread::spawn(move || stdin.write_all(&input));
    let read = |mut pipe: Box<dyn std::io::Read + Send>| {
        thread::spawn(move || {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text);
            text
        })
    };
    let stdout = read(Box::new(child.stdout.take().unwrap()));
    let stderr = read(Box::new(child.stderr.take().unwrap()));
    let mut status = 0;
    let mut killed = false;
    // SAFETY: all zeroes is a valid `rusage`.
    let mut usage: nix::libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        if !killed && started.elapsed() > wait::PATIENCE {
            kill_group(pid);
            killed = true;
        }
        // SAFETY: wait4 writes only through the two pointers, both to live locals.
        let reaped = unsafe {
            nix::libc::wait4(
                pid.cast_signed(),
                &raw mut status,
                nix::libc::WNOHANG,
                &raw mut usage,
            )
        };
        if reaped == pid.cast_signed() {
            break;
        }
        assert!(reaped == 0, "wait4: {}", std::io::Error::last_os_error());
        thread::sleep(Duration::from_millis(5));
    }
    kill_group(pid);
    let code = nix::libc::WIFEXITED(status).then(|| nix::libc::WEXITSTATUS(status));
    // SAFETY: all zeroes is a valid `rusage`, and getrusage writes only through the pointer.
    let mut own: nix::libc::rusage = unsafe { std::mem::zeroed() };
    let asked = unsafe { nix::libc::getrusage(nix::libc::RUSAGE_SELF, &raw mut own) };
    assert_eq!(asked, 0, "getrusage: {}", std::io::Error::last_os_error());
    // The child is reaped already: `child` must not wait for it again.
    std::mem::forget(child);
    Measured {
        code,
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
        killed,
        peak_kib: usage.ru_maxrss,
        tester_kib: own.ru_maxrss,
    }
}

#[test]
fn a_command_probe_whose_cli_leaves_a_helper_holding_stdout_answers_within_its_limit() {
    let w = world();
    let helper = Lingering::new();
    w.sb.fake_cli("gemini")
        .script(&leaving(&helper, "answered"))
        .install();
    // A limit far off: a probe that waited for the helper would hold the run until killed.
    w.sb.write_config(
        "probe_timeout_seconds = 600\n\n[backends.gemini]\nprobe = { kind = \"command\" }\n\n[[rungs]]\nbackend = \"gemini\"\n",
    );

    let run = w.sb.run(&["--status"]);

    assert!(!run.timed_out, "agent waited for the helper: {run:?}");
    assert!(helper.still_running(), "the helper ended first: {run:?}");
    assert!(
        run.stdout.starts_with("OK       gemini")
            && run.stdout.contains("gemini answered: answered"),
        "its own output counts, whatever its helper does: {run:?}"
    );
}

#[test]
fn a_command_probe_that_overruns_with_a_helper_holding_stdout_ends_at_its_limit() {
    let w = world();
    let helper = Lingering::new();
    w.sb.fake_cli("gemini")
        .script(&format!("{}\n{}", helper.start(), helper.wait()))
        .install();
    w.sb.write_config(
        "probe_timeout_seconds = 2\n\n[backends.gemini]\nprobe = { kind = \"command\" }\n\n[[rungs]]\nbackend = \"gemini\"\n",
    );

    let run = w.sb.run(&["--status"]);

    assert!(!run.timed_out, "agent waited for the helper: {run:?}");
    assert!(helper.still_running(), "the helper ended first: {run:?}");
    assert!(
        run.stdout.starts_with("FAIL     gemini")
            && run.stdout.contains("gemini did not finish within 2.0s"),
        "{run:?}"
    );
}

#[test]
fn a_secret_command_that_leaves_a_helper_holding_stdout_gives_its_secret_at_once() {
    let w = world();
    let helper = Lingering::new();
    let key = "sk-ant-api03-FROM-THE-SECRET-COMMAND-0123456789";
    w.sb.write_file("key.txt", &format!("{key}\n"));
    w.sb.write_config(&format!(
        "[[rungs]]\nbackend = \"claude\"\nprobe_model = \"opus\"\n\n[[accounts]]\nname = \"a\"\nbackend = \"claude\"\nkind = \"api_key\"\nsecret_cmd = \"{}; cat \\\"$HOME/key.txt\\\"\"\n",
        helper.start()
    ));

    let run = w.sb.run(&["-p", "hi"]);

    assert!(!run.timed_out, "agent waited for the helper: {run:?}");
    assert!(helper.still_running(), "the helper ended first: {run:?}");
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(
        w.sb.calls("claude")[0]
            .env
            .get("ANTHROPIC_API_KEY")
            .map(String::as_str),
        Some(key)
    );
}

#[test]
fn a_relayed_claude_cli_call_whose_cli_leaves_a_helper_holding_stdout_is_answered_at_once() {
    let (sb, _api) = relay_world();
    let helper = Lingering::new();
    sb.write_config("[relay.upstreams.claude-cli]\nkind = \"claude-cli\"\n");
    let answer = r#"{"type":"result","subtype":"success","is_error":false,"result":"cli says hi","stop_reason":"end_turn","usage":{"input_tokens":4,"output_tokens":5}}"#;
    sb.fake_cli("claude")
        .script(&format!(
            "cat > /dev/null\n{}\nprintf '%s' '{answer}'",
            helper.start()
        ))
        .install();
    let relay = RelayProc::start(&sb, &[]);

    let answer = relay.post(
        "/claude-cli/v1/messages",
        Some(TOKEN),
        &messages_body("claude-opus-5"),
        &[],
    );

    assert!(
        helper.still_running(),
        "answered only once the helper ended"
    );
    assert_eq!(answer.status, 200, "{answer:?}");
    assert!(answer.body.contains("cli says hi"), "{}", answer.body);
}

#[test]
fn a_codex_app_server_that_floods_is_cut_off_with_agents_memory_small() {
    let w = world();
    let silence = Lingering::new();
    codex_on_chatgpt(&w.sb);
    // A deadline far off: only the caps on what is read can end the flood before the run
    // is killed.
    w.sb.write_config(&format!(
        "probe_timeout_seconds = 600\n{}",
        std::fs::read_to_string(w.sb.config_path()).unwrap()
    ));
    // Ten million lines that are not its answer (queued whole, they took agent to 350 MB; an
    // endless `yes` took it to 6 GB in 40 s), then silence until the test ends.
    w.sb.fake_cli("codex")
        .script(&format!(
            "if [ \"$1\" = app-server ]; then\n  yes | head -c 20000000\n  {}\nfi\necho codex answered",
            silence.wait()
        ))
        .install();

    let run = measured(w.sb.command(&["-p", "hi"]), b"");

    assert!(!run.killed, "{run:?}");
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(run.stdout, "codex answered\n", "unknown is not dead");
    assert!(run.stayed_small(), "{run:?}");
}

/// Installs `previous` as the statusLine agent's own is put beside.
fn previous_statusline(previous: &str) -> crate::world::World {
    let w = world();
    w.sb.write_file(
        ".claude/settings.json",
        &serde_json::json!({"statusLine": {"type": "command", "command": previous}}).to_string(),
    );
    let run = w.sb.run(&["--install-statusline"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    w
}

const FEED: &[u8] =
    br#"{"session_id":"abc123","model":{"id":"claude-opus-4-8","display_name":"Opus 4.8"}}"#;

#[test]
fn a_previous_statusline_that_leaves_a_daemon_holding_stdout_is_shown_at_once() {
    let helper = Lingering::new();
    let w = previous_statusline(&leaving(&helper, "theirs"));

    let run = measured(w.sb.command(&["--statusline"]), FEED);

    assert!(!run.killed, "{run:?}");
    assert!(helper.still_running(), "the helper ended first: {run:?}");
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(run.stdout.starts_with("Opus 4.8"), "{run:?}");
    assert!(run.stdout.ends_with(" │ theirs\n"), "{run:?}");
}

#[test]
fn a_previous_statusline_that_overruns_its_two_seconds_is_left_out() {
    let helper = Lingering::new();
    let w = previous_statusline(&format!("{}; {}", helper.start(), helper.wait()));

    let run = measured(w.sb.command(&["--statusline"]), FEED);

    assert!(!run.killed, "{run:?}");
    assert!(helper.still_running(), "the helper ended first: {run:?}");
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.stdout.starts_with("Opus 4.8") && !run.stdout.contains(" │ "),
        "{run:?}"
    );
}

#[test]
fn a_previous_statusline_that_floods_is_cut_off_with_agents_memory_small() {
    let w = previous_statusline("yes");

    let run = measured(w.sb.command(&["--statusline"]), FEED);

    assert!(!run.killed, "{run:?}");
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(run.stayed_small(), "{run:?}");
    assert!(
        run.stdout.starts_with("Opus 4.8") && !run.stdout.contains(" │ "),
        "{run:?}"
    );
}

#[test]
fn a_previous_statusline_printing_more_than_its_cap_is_left_out() {
    // One line of 20 000 bytes, past the 16 KiB a status line may have; then it ends.
    let w = previous_statusline("head -c 20000 /dev/zero | tr '\\0' x");

    let run = measured(w.sb.command(&["--statusline"]), FEED);

    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.stdout.starts_with("Opus 4.8") && !run.stdout.contains(" │ "),
        "{}",
        run.stdout.len()
    );
}

#[test]
fn an_alert_command_that_leaves_a_helper_holding_stdout_does_not_hold_the_check() {
    let w = world();
    let helper = Lingering::new();
    w.sb.fake_cli("notify")
        .script(&leaving(&helper, "sent"))
        .install();
    w.sb.write_config("[alerts.command]\nargv = [\"notify\"]\n");
    crate::watchdog::break_gemini(&w);

    let run = w.sb.run(&["--check-fallback"]);

    assert!(!run.timed_out, "agent waited for the helper: {run:?}");
    assert!(helper.still_running(), "the helper ended first: {run:?}");
    assert_eq!(run.code, Some(1), "{run:?}");
    assert_eq!(w.sb.calls("notify").len(), 1);
    assert!(
        !run.stderr.contains("notify"),
        "the alert went out: {run:?}"
    );
}

#[test]
fn a_scheduler_that_leaves_a_helper_holding_stdout_does_not_hold_the_install() {
    let w = world();
    let helper = Lingering::new();
    // A stand-in systemctl: the test must never touch the machine's own systemd.
    w.sb.fake_cli("systemctl")
        .script(&leaving(&helper, "ok"))
        .install();

    let run = w.sb.run(&["--install-watchdog", "--scheduler", "systemd"]);

    assert!(!run.timed_out, "agent waited for the helper: {run:?}");
    assert!(helper.still_running(), "the helper ended first: {run:?}");
    assert_eq!(run.code, Some(0), "{run:?}");
}
