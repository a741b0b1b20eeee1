//! A fast-failed rung's output stays out of stdout (issue 32, item 4): a night job's
//! `agent -p "summarize" > out.txt` gets only the answer of the rung that answered — the
//! night Claude Code hits its limit (it prints the limit on stdout and exits 1 at once)
//! the limit is shown on stderr, as that rung's words — a healthy rung's output still
//! flows as it comes once it has run `fastfail_seconds`, and `--output-format json` on
//! Codex's rung is Claude Code's result document, not Codex's JSONL events.

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::Value;

use crate::support::sandbox::spawn;
use crate::world::{CLAUDE_THEN_CODEX, world};

/// What Claude Code 2.1.332 prints on stdout in `-p` mode when its 5-hour window is spent
/// (REAL-CLIS.md).
const LIMIT_LINE: &str = "You've hit your 5-hour limit · resets 7:59pm (UTC)";

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/self_check")
        .join(name)
}

#[test]
fn a_night_jobs_stdout_file_holds_only_the_answer_of_the_rung_that_answered() {
    let w = world();
    w.sb.write_config(CLAUDE_THEN_CODEX);
    // In colour: none of another CLI's terminal sequences may reach agent's notices.
    w.sb.fake_cli("claude")
        .stdout(&format!("\u{1b}[91m{LIMIT_LINE}\u{1b}[0m\n"))
        .exit(1)
        .install();
    w.sb.fake_cli("codex")
        .stdout("The summary, by Codex.\n")
        .install();
    let out = w.sb.root().join("out.txt");
    let outcome = w.sb.root().join("outcome.json");
    w.sb.env("AGENT_OUTCOME", outcome.display().to_string());

    // `agent -p "summarize" > out.txt`, as cron runs it.
    let mut command = w.sb.command(&["-p", "summarize"]);
    command
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(Stdio::piped());
    let ran = spawn(&mut command).unwrap().wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&ran.stderr);

    assert_eq!(ran.status.code(), Some(0), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "The summary, by Codex.\n",
        "nothing of the rung that failed fast above the answer; stderr: {stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "[agent] Claude Code (its default model) said: {LIMIT_LINE}"
        )),
        "the failed rung's words are still shown, on stderr: {stderr}"
    );
    assert!(!stderr.contains('\u{1b}'), "without its colour: {stderr:?}");
    // The outcome record says which rung answered.
    let record: Value = serde_json::from_str(&std::fs::read_to_string(&outcome).unwrap()).unwrap();
    let rungs = record["rungs"].as_array().unwrap();
    assert_eq!(rungs.len(), 2, "{record}");
    assert_eq!(rungs[0]["ended"], "fast_fail", "{record}");
    assert_eq!(rungs[1]["cli"], "codex", "{record}");
    assert_eq!(rungs[1]["ended"], "done", "{record}");
}

#[test]
fn a_healthy_rung_past_fastfail_seconds_streams_all_it_prints_in_order() {
    let w = world();
    w.sb.write_config(&format!("fastfail_seconds = 2\n{CLAUDE_THEN_CODEX}"));
    w.sb.fake_cli("claude")
        .stdout(&format!("{LIMIT_LINE}\n"))
        .exit(1)
        .install();
    // Codex prints its first part, then goes on only once that part has reached agent's
    // reader (who then creates `go`); unheard for 30 s, it says so instead.
    let go = w.sb.root().join("go");
    w.sb.fake_cli("codex")
        .script(&format!(
            "printf 'first part\\n'\ni=0\nwhile [ ! -e '{go}' ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done\nif [ -e '{go}' ]; then printf 'second part\\n'; else printf 'held back\\n'; fi",
            go = go.display()
        ))
        .install();

    let mut command = w.sb.command(&["-p", "summarize"]);
    command.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = spawn(&mut command).unwrap();
    let stderr = child.stderr.take().unwrap();
    let stderr = std::thread::spawn(move || std::io::read_to_string(stderr).unwrap_or_default());
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    std::fs::write(&go, "").unwrap();
    let rest = std::io::read_to_string(stdout).unwrap();
    let status = child.wait().unwrap();
    let stderr = stderr.join().unwrap();

    assert_eq!(status.code(), Some(0), "{stderr}");
    assert_eq!(
        format!("{first}{rest}"),
        "first part\nsecond part\n",
        "all of it, in order, the first part while it ran; stderr: {stderr}"
    );
    assert!(stderr.contains(LIMIT_LINE), "{stderr}");
}

#[test]
fn output_format_json_on_codexs_rung_is_claude_codes_result_document() {
    let w = world();
    w.sb.write_config(CLAUDE_THEN_CODEX);
    // Claude Code on its spent window, as 2.1.332 prints it with --output-format json.
    let play = |name: &str| {
        format!(
            "cat '{}'; exit {}",
            fixture(&format!("{name}.stdout")).display(),
            std::fs::read_to_string(fixture(&format!("{name}.exit")))
                .unwrap()
                .trim()
        )
    };
    w.sb.fake_cli("claude")
        .script(&play("claude-limit"))
        .install();
    // Codex 0.171's `exec --json` events for its answer, "ok".
    w.sb.fake_cli("codex")
        .script(&play("codex-answered"))
        .install();

    let run = w.sb.run(&["-p", "summarize", "--output-format", "json"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        w.sb.calls("codex")[0].argv.iter().any(|a| a == "--json"),
        "{:?}",
        w.sb.calls("codex")[0].argv
    );
    let doc: Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|err| panic!("stdout is one JSON object ({err}): {}", run.stdout));
    assert_eq!(doc["type"], "result", "{doc}");
    assert_eq!(doc["result"], "ok", "{doc}");
    assert_eq!(doc["is_error"], false, "{doc}");
    assert_eq!(
        doc["session_id"], "01a23199-389d-7832-b91d-16adca99b323",
        "{doc}"
    );
    assert_eq!(doc["usage"]["input_tokens"], 8, "{doc}");
    assert_eq!(doc["usage"]["output_tokens"], 1, "{doc}");
    assert_eq!(doc["agent_cli"], "codex", "{doc}");
    assert!(
        doc["agent_rung"]
            .as_str()
            .is_some_and(|rung| rung.starts_with("Codex")),
        "{doc}"
    );
    // `--dry-run` says so on the rung.
    let dry = w.sb.run(&[
        "--use",
        "codex",
        "--dry-run",
        "-p",
        "summarize",
        "--output-format",
        "json",
    ]);
    assert!(
        dry.stdout
            .contains("agent writes Claude Code's result document"),
        "{dry:?}"
    );
    // Claude Code's own document of its failure went to stderr, as its words.
    assert!(
        run.stderr.contains("said: You've hit your 5-hour limit"),
        "{}",
        run.stderr
    );
}
