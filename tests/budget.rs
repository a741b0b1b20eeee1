//! The daily budget and the ledger: no call without a cap, no call unrecorded, no race.

use std::fmt::Write as _;
use std::time::Duration;

use crate::support::sandbox::{run_command, spawn};
use crate::support::{Reply, Rule, Sandbox};
use crate::world::{CLAUDE_THEN_CODEX, PROXY_KEY, world};

/// `n` claude rungs, each probing its own model `m1` … `mN`.
fn rungs(n: usize) -> String {
    let mut toml = String::new();
    for k in 1..=n {
        let _ = write!(
            toml,
            "[[rungs]]\nbackend = \"claude\"\nprobe_model = \"m{k}\"\n\n"
        );
    }
    toml
}

fn budget_json(sb: &Sandbox) -> serde_json::Value {
    let run = sb.run(&["--budget", "status", "--json"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    serde_json::from_str(&run.stdout).expect("--budget status --json is JSON")
}

#[test]
fn a_cap_of_two_lets_status_send_exactly_two_calls() {
    let w = world();
    w.sb.write_config(&rungs(4));
    assert_eq!(w.sb.run(&["--budget", "set", "--calls", "2"]).code, Some(0));

    let run = w.sb.run(&["--status"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(w.api.posts(), 2);
    let rows: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(
        rows.iter().filter(|r| r.starts_with("OK ")).count(),
        2,
        "{}",
        run.stdout
    );
    let stopped: Vec<&&str> = rows
        .iter()
        .filter(|r| r.contains("budget exhausted: 2 of 2 calls today"))
        .collect();
    assert_eq!(stopped.len(), 2, "{}", run.stdout);
    assert!(
        !run.stdout.contains("FAIL"),
        "a budget stop is never a FAIL: {}",
        run.stdout
    );
    assert_eq!(budget_json(&w.sb)["calls"], 2);
}

#[test]
fn eight_processes_racing_under_a_cap_of_ten_send_exactly_ten_calls() {
    let w = world();
    w.sb.write_config(&rungs(4));
    assert_eq!(
        w.sb.run(&["--budget", "set", "--calls", "10"]).code,
        Some(0)
    );

    // Eight --status runs at once want 32 calls between them.
    let children: Vec<_> = (0..8)
        .map(|_| spawn(&mut w.sb.command(&["--status"])).unwrap())
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }

    assert_eq!(w.api.posts(), 10, "never 11");
    assert_eq!(budget_json(&w.sb)["calls"], 10);
    let ledger = std::fs::read_to_string(w.sb.state_dir().join("usage.jsonl")).unwrap();
    assert_eq!(
        ledger.lines().count(),
        10,
        "every call that was sent is in the ledger"
    );
}

#[test]
fn four_429_answers_count_as_four_calls() {
    let w = world();
    w.sb.write_config(&rungs(4));
    w.api
        .on(Rule::any().reply(Reply::anthropic_error(429, "rate_limit_error", "slow down")));

    let run = w.sb.run(&["--status"]);

    assert_eq!(run.stdout.matches("FAIL").count(), 4, "{}", run.stdout);
    assert_eq!(budget_json(&w.sb)["calls"], 4);
}

#[test]
fn every_call_is_one_ledger_line_with_the_providers_tokens_and_no_secret() {
    let w = world();
    w.sb.write_config(CLAUDE_THEN_CODEX);

    assert_eq!(w.sb.run(&["-p", "hi"]).code, Some(0));

    let ledger = std::fs::read_to_string(w.sb.state_dir().join("usage.jsonl")).unwrap();
    assert!(!ledger.contains(PROXY_KEY));
    let lines: Vec<serde_json::Value> = ledger
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1, "{ledger}");
    let call = &lines[0];
    assert_eq!(call["model"], "claude-opus-5");
    assert_eq!(call["backend"], "claude");
    assert_eq!(call["rung"], 1);
    assert_eq!(call["role"], "probe");
    assert_eq!(call["status"], 200);
    assert_eq!(call["error_kind"], "ok");
    assert_eq!(call["tokens"]["input"], 8, "the mock's usage: 8 in");
    assert_eq!(call["tokens"]["output"], 1);
    assert_eq!(call["estimated"], false);
    assert!(call["request_id"].is_string());
    assert!(call["duration_s"].is_number() && call["ttfb_s"].is_number());
    assert_eq!(budget_json(&w.sb)["tokens"], 9);

    let recent = w.sb.run(&["--budget", "recent", "--tail", "5"]);
    assert!(recent.stdout.contains("claude-opus-5"), "{}", recent.stdout);
}

#[test]
fn with_the_budget_spent_a_launch_runs_the_top_rung_unprobed_and_says_so() {
    let w = world();
    // Today's one call goes to another model, so nothing is known about opus.
    w.sb.write_config(&rungs(1));
    assert_eq!(w.sb.run(&["--budget", "set", "--calls", "1"]).code, Some(0));
    assert_eq!(w.sb.run(&["--status"]).code, Some(0));
    let spent = w.api.posts();
    w.sb.write_config(CLAUDE_THEN_CODEX);

    let run = w.sb.run(&["-p", "hi"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(w.api.posts(), spent, "no call past the cap");
    assert!(
        run.stderr.contains(
            "budget exhausted: 1 of 1 calls today — running Claude Code (its default model) unprobed"
        ),
        "{}",
        run.stderr
    );
    assert_eq!(w.sb.calls("claude").len(), 1);
}

#[test]
fn with_the_budget_spent_check_fallback_reports_the_budget_not_dead_rungs() {
    let w = world();
    assert_eq!(w.sb.run(&["--budget", "set", "--calls", "0"]).code, Some(0));
    assert_eq!(
        w.sb.run(&["--check-fallback"]).code,
        Some(0),
        "0 is unlimited, never forbid"
    );
    let before = w.api.posts();
    let calls = budget_json(&w.sb)["calls"].as_u64().unwrap();
    assert_eq!(
        w.sb.run(&["--budget", "set", "--calls", &calls.to_string()])
            .code,
        Some(0)
    );

    let run = w.sb.run(&["--check-fallback"]);

    assert_eq!(run.code, Some(75), "{run:?}");
    assert!(
        run.stdout.starts_with("BUDGET: budget exhausted: "),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("not checked: codex / gpt-test-codex, gemini / gemini-test-pro"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("DOWN"), "{}", run.stdout);
    assert_eq!(w.api.posts(), before);
}

#[test]
fn a_corrupt_budget_file_is_kept_aside_one_call_refused_and_counts_rebuilt() {
    let w = world();
    w.sb.write_config(&rungs(1));
    assert_eq!(w.sb.run(&["--status"]).code, Some(0));
    assert_eq!(w.api.posts(), 1);
    std::fs::write(
        w.sb.state_dir().join("budget.json"),
        "{\"days\": {\"2026-11-30\": {\"calls\": 1,",
    )
    .unwrap();

    let refused = w.sb.run(&["--status"]);
    let next = w.sb.run(&["--status"]);

    assert!(
        refused.stdout.contains("budget.json was unreadable"),
        "{}",
        refused.stdout
    );
    assert!(
        refused.stderr.contains("kept aside as"),
        "{}",
        refused.stderr
    );
    assert_eq!(w.api.posts(), 2, "one call refused, the next one sent");
    assert!(next.stdout.starts_with("OK "), "{}", next.stdout);
    let aside: Vec<_> = std::fs::read_dir(w.sb.state_dir())
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("budget.json.corrupt-")
        })
        .collect();
    assert_eq!(aside.len(), 1);
    let events = std::fs::read_to_string(w.sb.state_dir().join("events.jsonl")).unwrap();
    assert!(events.contains("\"event\":\"corrupt_state\""), "{events}");
    assert_eq!(
        budget_json(&w.sb)["calls"],
        2,
        "rebuilt from the ledger (1) plus the next call"
    );
}

#[test]
fn processes_killed_at_random_moments_never_leave_an_unreadable_state_file() {
    let w = world();
    w.sb.write_config(&rungs(4));
    w.api
        .on(Rule::any().reply(Reply::ok().delay(Duration::from_millis(30))));

    let mut children: Vec<_> = (0..20)
        .map(|_| spawn(&mut w.sb.command(&["--status"])).unwrap())
        .collect();
    for child in &mut children {
        std::thread::sleep(Duration::from_millis(fastrand::u64(0..25)));
        let _ = child.kill();
    }
    for mut child in children {
        let _ = child.wait();
    }
    // Whatever was interrupted, the next process reads every file without complaint.
    let after = run_command(
        w.sb.command(&["--status"]),
        crate::support::sandbox::RUN_TIMEOUT,
    );
    assert!(!after.stderr.contains("unreadable"), "{}", after.stderr);

    for (path, content) in w.sb.state_files() {
        let name = path.to_string_lossy();
        if name.ends_with(".json") {
            serde_json::from_str::<serde_json::Value>(&content)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
        } else if name.ends_with(".jsonl") {
            // A SIGKILL can cut a record's one write() where it crosses a page: that torn
            // piece stays a line of its own (the next append starts on a new line), which
            // every reader skips. Anything else must be a whole record.
            let mut torn = 0;
            for line in content.lines() {
                if serde_json::from_str::<serde_json::Value>(line).is_err() {
                    assert!(
                        line.is_empty() || line.starts_with('{'),
                        "{name}: not a record, nor a torn one: {line}"
                    );
                    torn += 1;
                }
            }
            assert!(
                torn <= 20,
                "{name}: {torn} torn lines from 20 killed processes"
            );
        }
        assert!(!name.contains(".corrupt-"), "nothing was corrupt: {name}");
    }
}

#[test]
fn budget_set_without_a_cap_is_a_usage_error() {
    let sb = Sandbox::new();
    let run = sb.run(&["--budget", "set"]);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(run.stderr.contains("--calls N"), "{}", run.stderr);
}

#[test]
fn budget_status_says_it_counts_agents_own_calls_and_not_the_clis_on_their_logins() {
    let w = world();

    let run = w.sb.run(&["--budget", "status"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.stdout.contains(
            "counts agent's own calls only: probes, checks (a self-check runs the CLI once) and calls relayed through `agent --relay`; the calls a CLI makes on its own login while you use it are not agent's and are not counted (`agent --usage` shows them)"
        ),
        "{}",
        run.stdout
    );
    let json = budget_json(&w.sb);
    assert_eq!(json["counts"], "agent_calls");
    assert!(
        json["counts_note"]
            .as_str()
            .is_some_and(|n| n.contains("`agent --usage` shows them")),
        "{json:#}"
    );
    assert_eq!(json["calls"], 0, "the fields it had stay: {json:#}");
}
