//! Every file agent reads that another program wrote is read bounded (DESIGN §19): a FIFO,
//! a device, a dangling link, a sparse gigabyte, a 64 MiB line or a runaway terabyte where
//! a CLI keeps its login, settings or records neither hangs agent nor costs it memory.
//! Each reader runs in a thread of its own with a deadline, and the bytes it held are
//! counted ([`crate::support::held`]); the binary's own runs are measured by their peak
//! resident size (`/usr/bin/time -f %M`).

use std::fs::{self, File, OpenOptions};
use std::io::{Seek as _, SeekFrom, Write as _};
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use agent::login::asking::{Asked, Asking};
use agent::login::calls::Transcripts;
use agent::login::{claude, claude_transcript, codex, codex_rollout, gemini};
use jiff::Timestamp;

use crate::support::held::measured;
use crate::support::sandbox::{Run, run_command};
use crate::support::{Sandbox, launched_words};
use crate::world::world;

/// How long one reader may take with any file before the test fails: a gigabyte streams
/// in seconds even on a loaded machine, while what blocks, blocks for ever, and a terabyte
/// read through takes many minutes — a kill deadline, not a speed asked of the reader.
const DEADLINE: Duration = crate::support::wait::PATIENCE;
/// The most one reader may hold: a record line's cap (16 MiB) and its buffers.
const HELD_CAP: usize = 20 << 20;
/// The most the binary may take, whatever it found.
const RSS_CAP_KIB: u64 = 200 * 1024;

/// What can be where a CLI's file belongs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hostile {
    Fifo,
    DevZero,
    Dangling,
    /// 1 GB, sparse: no disk.
    Sparse,
    /// A 64 MiB line (sparse), then the reader's good lines.
    LongLine,
    /// A terabyte, sparse: past every cap.
    Runaway,
}

const HOSTILE: [Hostile; 6] = [
    Hostile::Fifo,
    Hostile::DevZero,
    Hostile::Dangling,
    Hostile::Sparse,
    Hostile::LongLine,
    Hostile::Runaway,
];

/// Puts `kind` at `path`; `after` follows a long line.
fn plant(kind: Hostile, path: &Path, after: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    match kind {
        Hostile::Fifo => nix::unistd::mkfifo(path, nix::sys::stat::Mode::S_IRWXU).unwrap(),
        Hostile::DevZero => std::os::unix::fs::symlink("/dev/zero", path).unwrap(),
        Hostile::Dangling => {
            std::os::unix::fs::symlink(path.with_extension("gone"), path).unwrap();
        }
        Hostile::Sparse => File::create(path).unwrap().set_len(1_000_000_000).unwrap(),
        Hostile::LongLine => {
            let mut file = File::create(path).unwrap();
            file.seek(SeekFrom::Start(64 << 20)).unwrap();
            file.write_all(format!("\n{after}\n").as_bytes()).unwrap();
            // Written now by the test's clock (the file system stamps the machine's, which
            // is not the test's under scripts/test-at-dates.sh): readers of this run's
            // records go by it.
            file.set_modified(std::time::SystemTime::now()).unwrap();
        }
        Hostile::Runaway => File::create(path).unwrap().set_len(1 << 40).unwrap(),
    }
}

/// One reader of another program's file: where the file goes under a root, the good lines
/// that follow a long line, how to read it, and what it reads past a long line.
struct Reader {
    name: &'static str,
    file: String,
    after: String,
    read: fn(&Path, Timestamp) -> String,
    past_long_line: &'static str,
}

fn claude_answer(at: Timestamp) -> String {
    serde_json::json!({
        "type": "assistant", "timestamp": at.to_string(), "sessionId": "s1", "requestId": "req_1",
        "message": {"id": "msg_1", "model": "claude-after", "usage": {"input_tokens": 1, "output_tokens": 2}},
    })
    .to_string()
}

fn codex_lines(at: Timestamp) -> String {
    [
        serde_json::json!({"timestamp": at.to_string(), "type": "turn_context", "payload": {"cwd": "/w", "model": "codex-after"}}),
        serde_json::json!({"timestamp": at.to_string(), "type": "token_usage_record", "payload": {"session_id": "c1", "response_id": "resp_1", "usage": {"input_tokens": 3, "output_tokens": 4}}}),
    ]
    .map(|line| line.to_string())
    .join("\n")
}

fn gemini_answer(at: Timestamp) -> String {
    serde_json::json!({"id": "g1", "type": "gemini", "model": "gemini-after", "timestamp": at.to_string(), "tokens": {"input": 3, "output": 4}})
        .to_string()
}

fn rollout_day(at: Timestamp) -> String {
    at.to_zoned_datetime(jiff::tz::TimeZone::UTC)
        .strftime(".codex/sessions/%Y/%m/%d/rollout-%Y-%m-%dT00-00-00-c1.jsonl")
        .to_string()
}

fn calls(into: &Transcripts) -> String {
    format!("{} calls", into.calls.len())
}

/// Every reader agent has of another program's file, called as agent calls it.
fn readers(now: Timestamp) -> Vec<Reader> {
    let claude_line = claude_answer(now);
    let transcript = ".claude/projects/-w/s1.jsonl".to_string();
    let reader = |name, file: &str, after: &str, read, past_long_line| Reader {
        name,
        file: file.to_string(),
        after: after.to_string(),
        read,
        past_long_line,
    };
    vec![
        reader(
            "claude login",
            ".claude/.credentials.json",
            "",
            |root, _| {
                format!(
                    "{:?}",
                    claude::read_login_file(&root.join(".claude/.credentials.json"))
                )
            },
            "None",
        ),
        reader(
            "claude login's token for the usage endpoint",
            ".claude/.credentials.json",
            "",
            |root, now| {
                format!(
                    "{:?}",
                    claude::access_token_for_usage(&root.join(".claude"), now)
                )
            },
            "None",
        ),
        reader(
            "codex login",
            ".codex/auth.json",
            "",
            |root, _| {
                format!(
                    "{:?}",
                    codex::read_auth_file(&root.join(".codex/auth.json"))
                )
            },
            "None",
        ),
        reader(
            "gemini login",
            ".gemini/oauth_creds.json",
            "",
            |root, _| format!("{:?}", gemini::read_login(&root.join(".gemini"))),
            "None",
        ),
        reader(
            "gemini settings",
            ".gemini/settings.json",
            "",
            |root, _| format!("{:?}", gemini::read_auth_type(&root.join(".gemini"))),
            "None",
        ),
        reader(
            "claude transcript: the model last run",
            &transcript,
            &claude_line,
            |root, _| {
                format!(
                    "{:?}",
                    claude_transcript::last_model(&root.join(".claude/projects"))
                )
            },
            "Some(\"claude-after\")",
        ),
        reader(
            "claude transcript: one file's model",
            &transcript,
            &claude_line,
            |root, _| {
                format!(
                    "{:?}",
                    claude_transcript::last_model_in(&root.join(".claude/projects/-w/s1.jsonl"))
                )
            },
            "Some(\"claude-after\")",
        ),
        reader(
            "claude transcript: the run's limit row",
            &transcript,
            &claude_line,
            |root, now| {
                let start = now.checked_sub(jiff::SignedDuration::from_mins(1)).unwrap();
                let row =
                    claude_transcript::find_run_limit(&root.join(".claude/projects/-w"), start);
                format!("{:?}", row.map(|r| r.at))
            },
            "None",
        ),
        reader(
            "codex rollout: the run",
            &rollout_day(now),
            &codex_lines(now),
            |root, now| {
                let start = now.checked_sub(jiff::SignedDuration::from_mins(1)).unwrap();
                let run = codex_rollout::find_run(
                    &root.join(".codex/sessions"),
                    Path::new("/w"),
                    start,
                    None,
                );
                format!("{:?}", run.and_then(|r| r.model))
            },
            "Some(\"codex-after\")",
        ),
        reader(
            "codex rollout: the model last run",
            &rollout_day(now),
            &codex_lines(now),
            |root, _| {
                format!(
                    "{:?}",
                    codex_rollout::last_model(&root.join(".codex/sessions"))
                )
            },
            "Some(\"codex-after\")",
        ),
        reader(
            "gemini chat: the model last run",
            ".gemini/tmp/p/chats/session-1.jsonl",
            &gemini_answer(now),
            |root, _| format!("{:?}", gemini::last_model(&root.join(".gemini"))),
            "Some(\"gemini-after\")",
        ),
        reader(
            "gemini chat, one JSON document",
            ".gemini/tmp/p/chats/session-1.json",
            "",
            |root, _| {
                format!(
                    "{:?}",
                    gemini::last_model_in(&root.join(".gemini/tmp/p/chats/session-1.json"))
                )
            },
            "None",
        ),
        reader(
            "usage: claude transcripts",
            &transcript,
            &claude_line,
            |root, _| {
                let mut into = Transcripts::default();
                agent::login::claude_calls::read(&[root.join(".claude/projects")], &mut into);
                calls(&into)
            },
            "1 calls",
        ),
        reader(
            "usage: codex rollouts",
            &rollout_day(now),
            &codex_lines(now),
            |root, _| {
                let mut into = Transcripts::default();
                agent::login::codex_calls::read(&[root.join(".codex/sessions")], &mut into);
                calls(&into)
            },
            "1 calls",
        ),
        reader(
            "usage: gemini chats",
            ".gemini/tmp/p/chats/session-1.jsonl",
            &gemini_answer(now),
            |root, _| {
                let mut into = Transcripts::default();
                agent::login::gemini_calls::read(&[root.join(".gemini/tmp")], &mut into);
                calls(&into)
            },
            "1 calls",
        ),
        reader(
            "usage: gemini chat, one JSON document",
            ".gemini/tmp/p/chats/session-1.json",
            "",
            |root, _| {
                let mut into = Transcripts::default();
                agent::login::gemini_calls::read(&[root.join(".gemini/tmp")], &mut into);
                calls(&into)
            },
            "0 calls",
        ),
    ]
}

#[test]
fn every_reader_returns_in_time_holding_no_more_than_its_cap_whatever_the_file() {
    let now = Timestamp::now();
    let mut failures = Vec::new();
    let mut most = (0, String::new());
    for reader in readers(now) {
        for kind in HOSTILE {
            let root = tempfile::tempdir().unwrap();
            plant(kind, &root.path().join(&reader.file), &reader.after);
            let path = root.path().to_path_buf();
            let read = reader.read;
            let case = format!("{} with {kind:?}", reader.name);
            let Some((answer, held)) = measured(DEADLINE, move || read(&path, now)) else {
                failures.push(format!("{case}: did not return within {DEADLINE:?}"));
                continue;
            };
            if held > most.0 {
                most = (held, case.clone());
            }
            if held > HELD_CAP {
                failures.push(format!("{case}: held {held} bytes, over {HELD_CAP}"));
            }
            let expected = match kind {
                Hostile::LongLine => reader.past_long_line,
                _ if reader.past_long_line.ends_with("calls") => "0 calls",
                _ => "None",
            };
            if answer != expected {
                failures.push(format!("{case}: read {answer}, not {expected}"));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
    eprintln!("the most any reader held: {} bytes ({})", most.0, most.1);
}

#[test]
fn codex_app_server_answers_are_read_a_line_at_a_time_past_a_long_one() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/codex-app-server/rate-limits-read-0.171.0.stdout.jsonl");
    let script = |name: &str, before: &str| {
        let path = dir.path().join(name);
        fs::write(
            &path,
            format!(
                "#!/bin/sh\n{before}\necho\ncat '{}'\nsleep 30\n",
                fixture.display()
            ),
        )
        .unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
        path
    };
    // A line past the 1 MiB line cap, within the 4 MiB the whole answer may take.
    let long = script("long", "head -c 2097152 /dev/zero");
    let endless = script("endless", "cat /dev/zero");
    let ask = |binary: &Path, timeout: Duration| {
        agent::login::codex_app_server::ask(&Asking {
            binary,
            env: &[],
            env_remove: &[],
            records: None,
            endpoint: None,
            timeout,
            now: jiff::Timestamp::now(),
        })
    };
    let answered = measured(DEADLINE, move || ask(&long, Duration::from_secs(8)));
    let Some((reply, _)) = answered else {
        panic!("no return within {DEADLINE:?}")
    };
    assert!(
        matches!(reply, Asked::Windows(ref w) if !w.is_empty()),
        "{reply:?}"
    );
    let ended = measured(DEADLINE, move || ask(&endless, Duration::from_secs(2)));
    assert!(matches!(ended, Some((Asked::Nothing(_), _))), "{ended:?}");
}

/// `command` run under `/usr/bin/time -f %M` (when installed) with `stdin`: its run and its
/// peak resident size in KiB.
fn measured_run(command: &Command, stdin: Stdio) -> (Run, Option<u64>) {
    let time = Path::new("/usr/bin/time");
    let out = tempfile::NamedTempFile::new().unwrap();
    let mut wrapped = if time.exists() {
        let mut wrapped = Command::new(time);
        wrapped
            .args(["-f", "%M", "-o"])
            .arg(out.path())
            .arg(command.get_program());
        wrapped
    } else {
        Command::new(command.get_program())
    };
    wrapped.args(command.get_args()).env_clear().stdin(stdin);
    for (key, value) in command.get_envs() {
        if let Some(value) = value {
            wrapped.env(key, value);
        }
    }
    if let Some(dir) = command.get_current_dir() {
        wrapped.current_dir(dir);
    }
    let run = run_command(wrapped, crate::support::wait::PATIENCE);
    let kib = fs::read_to_string(out.path())
        .ok()
        .and_then(|text| text.lines().last()?.trim().parse().ok());
    (run, kib)
}

fn assert_bounded(what: &str, run: &Run, kib: Option<u64>) {
    assert!(!run.timed_out, "{what}: still running when killed: {run:?}");
    assert!(
        !run.stderr.contains("panicked") && !run.stderr.contains("memory allocation"),
        "{what}: {}",
        run.stderr
    );
    if let Some(kib) = kib {
        assert!(
            kib < RSS_CAP_KIB,
            "{what}: peak {kib} KiB, over {RSS_CAP_KIB}"
        );
        eprintln!("{what}: peak {kib} KiB in {:?}", run.elapsed);
    }
}

/// Runs of Claude Code that were a launch (not `--version`): the user's words, after
/// the session id agent gives it.
fn launches(sb: &Sandbox) -> usize {
    sb.calls("claude")
        .iter()
        .filter(|call| call.argv.first().map(String::as_str) == Some("--session-id"))
        .filter(|call| launched_words(&call.argv) == ["-p", "hi"])
        .count()
}

#[test]
fn a_fifo_claude_login_hangs_no_launch_no_list_and_no_doctor() {
    // A Claude login user: no proxy, no key; Claude Code's API is the mock.
    let api = crate::support::MockApi::start();
    let sb = Sandbox::new();
    sb.env("ANTHROPIC_BASE_URL", api.url());
    sb.fake_cli("claude").stdout("claude answered\n").install();
    plant(
        Hostile::Fifo,
        &sb.home().join(".claude/.credentials.json"),
        "",
    );
    for args in [&["-p", "hi"][..], &["--list"], &["--doctor"]] {
        let (run, kib) = measured_run(&sb.command(args), Stdio::null());
        let what = format!("agent {}", args.join(" "));
        assert_bounded(&what, &run, kib);
        assert_eq!(
            run.stderr.matches("skipped").count(),
            1,
            "{what}: one notice: {}",
            run.stderr
        );
        assert!(
            run.stderr
                .contains(".claude/.credentials.json: a FIFO, not a regular file"),
            "{what}: {}",
            run.stderr
        );
    }
    assert_eq!(launches(&sb), 1, "the launch ran Claude Code");
}

#[test]
fn hostile_logins_and_settings_cost_a_launch_the_list_and_the_doctor_no_memory() {
    let files = [
        ".claude/.credentials.json",
        ".claude/settings.json",
        ".codex/auth.json",
        ".codex/config.toml",
        ".gemini/oauth_creds.json",
        ".gemini/settings.json",
        ".npmrc",
    ];
    for kind in [Hostile::DevZero, Hostile::Sparse, Hostile::LongLine] {
        let w = world();
        for file in files {
            let path = w.sb.home().join(file);
            let _ = fs::remove_file(&path);
            plant(kind, &path, "");
        }
        for args in [&["-p", "hi"][..], &["--list"], &["--doctor"]] {
            let (run, kib) = measured_run(&w.sb.command(args), Stdio::null());
            assert_bounded(&format!("{kind:?}: agent {}", args.join(" ")), &run, kib);
        }
        assert_eq!(launches(&w.sb), 1, "{kind:?}: the launch ran");
    }
}

#[test]
fn usage_counts_past_hostile_records_in_bounded_memory_and_says_so_once_a_file() {
    let sb = Sandbox::new();
    let now = Timestamp::now();
    let place = |file: &str, kind: Hostile, after: &str| {
        plant(kind, &sb.home().join(file), after);
    };
    let claude_good = claude_answer(now).replace("msg_1", "msg_good");
    sb.write_file(
        ".claude/projects/-w/good.jsonl",
        &format!("{claude_good}\n"),
    );
    let day = rollout_day(now);
    for kind in HOSTILE {
        let name = format!("{kind:?}").to_lowercase();
        place(
            &format!(".claude/projects/-w/{name}.jsonl"),
            kind,
            &claude_answer(now),
        );
        place(
            &day.replace("-c1.jsonl", &format!("-{name}.jsonl")),
            kind,
            &codex_lines(now),
        );
        place(
            &format!(".gemini/tmp/p/chats/session-{name}.jsonl"),
            kind,
            &gemini_answer(now),
        );
    }
    let (run, kib) = measured_run(&sb.command(&["--usage", "--json"]), Stdio::null());
    assert_bounded("agent --usage", &run, kib);
    assert_eq!(run.code, Some(0), "{run:?}");
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    for (cli, calls) in [("claude", 2), ("codex", 1), ("gemini", 1)] {
        assert_eq!(
            report["sources"][cli]["records"], calls,
            "{cli}: the good lines are counted: {:#}",
            report["sources"]
        );
    }
    // One notice per hostile file (a dangling link is only missing), whatever it held.
    for name in ["fifo", "devzero", "sparse", "longline", "runaway"] {
        for cli in ["/-w/", "rollout-", "session-"] {
            let told = run
                .stderr
                .lines()
                .filter(|l| l.contains(cli) && l.contains(&format!("{name}.jsonl")))
                .count();
            assert_eq!(told, 1, "{cli}{name}: {}", run.stderr);
        }
    }
}

#[test]
fn the_statusline_takes_no_more_than_its_feed_from_any_stdin() {
    let sb = Sandbox::new();
    let dir = tempfile::tempdir().unwrap();
    for kind in [
        Hostile::Fifo,
        Hostile::DevZero,
        Hostile::Sparse,
        Hostile::LongLine,
    ] {
        let path: PathBuf = dir.path().join(format!("{kind:?}"));
        plant(kind, &path, "{}");
        // A FIFO the test holds open for writing too: it never ends.
        let stdin = OpenOptions::new()
            .read(true)
            .write(kind == Hostile::Fifo)
            .open(&path)
            .unwrap();
        let (run, kib) = measured_run(&sb.command(&["--statusline"]), Stdio::from(stdin));
        let what = format!("agent --statusline < {kind:?}");
        assert_bounded(&what, &run, kib);
        assert_eq!(run.code, Some(0), "{what}: {run:?}");
        assert_eq!(run.stdout.lines().count(), 1, "{what}: {}", run.stdout);
    }
}
