//! `agent --usage`: every token counted once, priced honestly, and reconciled against the
//! relay. Fixtures are written here, in the shapes the real CLIs write (Claude Code
//! 2.1.197, Codex 0.171.0) and agent's own ledger lines.

use serde_json::{Value, json};

use crate::support::Sandbox;

const OPUS: &str = "claude-opus-5";
const SESSION: &str = "5f0c1e9a-1111-4222-8333-944455556666";
const OPUS_PRICES: &str = "[pricing.models.\"claude-opus-5\"]\ninput = 15\noutput = 75\ncache_read = 1.5\ncache_write = 18.75\n";

/// One transcript line of an assistant answer (one content block of it), as Claude Code
/// writes it: 100 in, 50 out, 1 000 cache read, 200 cache write.
fn answer_line(n: usize, block: &str) -> String {
    json!({
        "parentUuid": format!("p{n}"),
        "isSidechain": false,
        "message": {
            "id": format!("msg_{n:04}"),
            "type": "message",
            "role": "assistant",
            "model": OPUS,
            "content": [{"type": block, "text": "hello"}],
            "stop_reason": "end_turn",
            "usage": {
                "input_tokens": 100,
                "cache_creation_input_tokens": 200,
                "cache_read_input_tokens": 1000,
                "output_tokens": 50,
                "service_tier": "standard"
            }
        },
        "requestId": format!("req_{n:04}"),
        "type": "assistant",
        "uuid": format!("u{n}-{block}"),
        "timestamp": format!("2026-11-30T10:0{n}:00.000Z"),
        "sessionId": SESSION,
        "version": "2.1.197"
    })
    .to_string()
}

/// Three answers; the first is written twice (a thinking block, then its text block).
pub(crate) fn write_transcript(sb: &Sandbox) {
    let mut text = String::new();
    text.push_str(
        &json!({"type": "user", "message": {"role": "user", "content": "hi"}, "timestamp": "2026-11-30T10:00:00Z", "sessionId": SESSION}).to_string(),
    );
    text.push('\n');
    for (n, block) in [(1, "thinking"), (1, "text"), (2, "text"), (3, "text")] {
        text.push_str(&answer_line(n, block));
        text.push('\n');
    }
    sb.write_file(
        &format!(".claude/projects/-home-me-work/{SESSION}.jsonl"),
        &text,
    );
}

/// One ledger line as agent (or its relay) writes it.
fn ledger_line(fields: &Value) -> String {
    let mut line = json!({
        "time": "2026-11-30T10:00:00.5Z",
        "run": "3f2a0c1d9e8b",
        "backend": "claude",
        "model": OPUS,
        "account": null,
        "upstream": "api.anthropic.com",
        "role": "probe",
        "status": 200,
        "error_kind": "ok",
        "tokens": {"input": 8, "output": 1, "reasoning": 0, "cache_read": 0, "cache_write": 0},
        "estimated": false,
        "ttfb_s": 0.3,
        "duration_s": 0.31,
        "request_id": null,
        "day": "2026-11-30"
    });
    for (key, value) in fields.as_object().expect("an object") {
        line[key] = value.clone();
    }
    line.to_string()
}

pub(crate) fn write_ledger(sb: &Sandbox, lines: &[Value]) {
    let mut text = String::new();
    for fields in lines {
        text.push_str(&ledger_line(fields));
        text.push('\n');
    }
    std::fs::write(sb.state_dir().join("usage.jsonl"), text).unwrap();
}

/// Relay lines for the three answers of [`write_transcript`], each `scale` times the
/// tokens the transcript says.
pub(crate) fn relay_lines(run: &str, scale: f64) -> Vec<Value> {
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss
    )]
    let t = |n: u64| (n as f64 * scale).round() as u64;
    (1..=3)
        .map(|n| {
            json!({
                "time": format!("2026-11-30T10:0{n}:00.000Z"),
                "run": run,
                "backend": "relay:anthropic",
                "upstream": "anthropic",
                "role": "relay",
                "session": SESSION,
                "request_id": format!("req_{n:04}"),
                "message_id": format!("msg_{n:04}"),
                "tokens": {"input": t(100), "output": t(50), "reasoning": 0, "cache_read": t(1000), "cache_write": t(200)}
            })
        })
        .collect()
}

fn usage_json(sb: &Sandbox, args: &[&str]) -> Value {
    let mut argv = vec!["--usage"];
    argv.extend_from_slice(args);
    argv.push("--json");
    let run = sb.run(&argv);
    assert_eq!(run.code, Some(0), "{run:?}");
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.stdout))
}

fn group<'a>(report: &'a Value, key: &str) -> &'a Value {
    report["groups"]
        .as_array()
        .expect("groups")
        .iter()
        .find(|g| g["key"] == key)
        .unwrap_or_else(|| panic!("no group {key}: {report:#}"))
}

#[test]
fn claude_transcripts_show_their_totals_under_their_model_and_a_duplicate_counts_once() {
    let sb = Sandbox::new();
    write_transcript(&sb);

    let report = usage_json(&sb, &[]);

    let opus = group(&report, OPUS);
    assert_eq!(
        opus["calls"], 3,
        "the repeated answer counts once: {opus:#}"
    );
    assert_eq!(
        opus["tokens"],
        json!({"input": 300, "output": 150, "reasoning": 0, "cache_read": 3000, "cache_write": 600, "total": 4050})
    );
    assert_eq!(report["sources"]["claude"]["duplicates"], 1);

    let text = sb.run(&["--usage"]).stdout;
    let row = text
        .lines()
        .find(|l| l.starts_with(OPUS))
        .unwrap_or_else(|| panic!("{text}"));
    let figures: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(
        figures[1..8],
        ["3", "300", "150", "0", "3000", "600", "4050"],
        "{text}"
    );
}

/// `--source` names a CLI as its adapter does; each CLI's records are their own source, and
/// a CLI agent reads no record of the calls of is refused by name, never read as another's.
#[test]
fn each_source_is_one_clis_records_and_a_cli_with_none_agent_reads_is_refused() {
    let sb = Sandbox::new();
    write_transcript(&sb);

    let claude = usage_json(&sb, &["--source", "claude"]);
    let codex = usage_json(&sb, &["--source", "codex"]);
    let agy = sb.run(&["--usage", "--source", "agy"]);

    assert_eq!(claude["sources"]["claude"]["calls"], 3, "{claude:#}");
    assert!(claude["sources"]["agent"].is_null(), "{claude:#}");
    assert!(claude["sources"]["codex"].is_null(), "{claude:#}");
    assert_eq!(codex["sources"]["codex"]["calls"], 0, "{codex:#}");
    assert!(codex["groups"].as_array().unwrap().is_empty(), "{codex:#}");
    assert_eq!(agy.code, Some(2), "{agy:?}");
    assert!(
        agy.stderr
            .contains("--source agy: agent reads no record of Antigravity's calls"),
        "{agy:?}"
    );
    let text = sb.run(&["--usage", "--source", "claude,gemini"]).stdout;
    assert!(
        text.contains("from: Claude Code 3 calls") && text.contains("Gemini CLI 0 calls"),
        "{text}"
    );
}

#[test]
fn cache_efficiency_is_cache_reads_over_all_input() {
    let sb = Sandbox::new();
    write_transcript(&sb);

    let report = usage_json(&sb, &[]);

    // 1000 / (100 + 1000 + 200) = 76.9 %
    let efficiency = group(&report, OPUS)["cache_efficiency"].as_f64().unwrap();
    assert!((efficiency - 1000.0 / 1300.0).abs() < 1e-4, "{efficiency}");
    assert!(
        sb.run(&["--usage"]).stdout.contains("76.9 %"),
        "the table shows it as a percentage"
    );
}

#[test]
fn low_cache_efficiency_gets_a_hint() {
    let sb = Sandbox::new();
    write_ledger(
        &sb,
        &[json!({"tokens": {"input": 90_000, "output": 100, "cache_read": 10_000}})],
    );

    let report = usage_json(&sb, &[]);
    assert_eq!(group(&report, OPUS)["cache_hint"], true);
    let text = sb.run(&["--usage"]).stdout;
    assert!(
        text.contains("hint: claude-opus-5 reads 10.0 % of its input from the cache (under 30 %)"),
        "{text}"
    );
}

#[test]
fn a_model_without_a_price_costs_null_and_marks_the_cost_incomplete() {
    let sb = Sandbox::new();
    write_transcript(&sb);

    let report = usage_json(&sb, &[]);

    let opus = group(&report, OPUS);
    assert_eq!(opus["cost_usd"], Value::Null);
    assert_eq!(opus["cost_incomplete"], true);
    assert_eq!(opus["unpriced_models"], json!([OPUS]));
    assert_eq!(report["cost_incomplete"], true);
    assert_eq!(report["total"]["cost_usd"], Value::Null);
    let text = sb.run(&["--usage"]).stdout;
    assert!(
        text.contains("cost incomplete: no price for claude-opus-5"),
        "{text}"
    );
}

#[test]
fn a_priced_model_costs_the_right_figure_to_the_cent() {
    let sb = Sandbox::new();
    sb.write_config(OPUS_PRICES);
    write_ledger(
        &sb,
        &[
            json!({"tokens": {"input": 123_456, "output": 78_901, "reasoning": 0, "cache_read": 1_000_000, "cache_write": 200_000}}),
        ],
    );

    let report = usage_json(&sb, &[]);

    // 123 456 × 15 + 78 901 × 75 + 1 000 000 × 1.5 + 200 000 × 18.75, per million
    let opus = group(&report, OPUS);
    assert_eq!(opus["cost_usd"].as_f64(), Some(13.019_415), "{opus:#}");
    assert_eq!(opus["cost_incomplete"], false);
    assert_eq!(report["cost_incomplete"], false);
    let text = sb.run(&["--usage"]).stdout;
    assert!(text.contains("$13.02"), "{text}");
}

#[test]
fn the_transcript_fixture_is_priced_too() {
    let sb = Sandbox::new();
    sb.write_config(OPUS_PRICES);
    write_transcript(&sb);

    let report = usage_json(&sb, &[]);

    // 300 × 15 + 150 × 75 + 3 000 × 1.5 + 600 × 18.75 = 31 500 per million
    assert_eq!(group(&report, OPUS)["cost_usd"].as_f64(), Some(0.0315));
}

#[test]
fn a_monthly_plans_unit_price_is_its_fee_over_that_months_tokens() {
    let sb = Sandbox::new();
    sb.write_config(
        "[pricing.plans.claude-max]\nmonthly_usd = 200\naccounts = [\"max-personal\"]\n",
    );
    let call = |time: &str, tokens: u64| {
        json!({"time": time, "account": "max-personal", "model": "claude-opus-5",
               "tokens": {"input": tokens, "output": 0, "reasoning": 0, "cache_read": 0, "cache_write": 0}})
    };
    write_ledger(
        &sb,
        &[
            call("2026-11-02T10:00:00Z", 250_000),
            call("2026-11-10T10:00:00Z", 250_000),
            call("2026-11-20T10:00:00Z", 250_000),
            call("2026-11-28T10:00:00Z", 250_000),
            // Another month's tokens do not dilute November's price.
            call("2026-12-01T10:00:00Z", 4_000_000),
        ],
    );

    let report = usage_json(
        &sb,
        &[
            "--since",
            "2026-11-16",
            "--until",
            "2026-11-30",
            "--tz-offset-hours",
            "0",
        ],
    );

    // $200 ÷ 1 000 000 November tokens = $200 a million; this window holds 500 000.
    let plan = &report["plans"][0];
    assert_eq!(plan["plan"], "claude-max");
    assert_eq!(plan["month"], "2026-11");
    assert_eq!(plan["tokens"], 1_000_000);
    assert_eq!(plan["usd_per_million"].as_f64(), Some(200.0));
    assert_eq!(group(&report, OPUS)["cost_usd"].as_f64(), Some(100.0));
    assert_eq!(
        report["cost_incomplete"], false,
        "a plan's tokens need no model price"
    );
}

#[test]
fn relayed_calls_tagged_with_a_run_reconcile_match_against_the_matching_transcript() {
    let sb = Sandbox::new();
    write_transcript(&sb);
    write_ledger(&sb, &relay_lines("3f2a0c1d9e8b", 1.0));

    let report = usage_json(&sb, &["--reconcile"]);

    let rows = report["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{report:#}");
    let row = &rows[0];
    assert_eq!(row["run"], "3f2a0c1d9e8b");
    assert_eq!(row["model"], OPUS);
    assert_eq!(row["status"], "match");
    assert_eq!(row["client"]["calls"], 3);
    assert_eq!(row["relay"]["calls"], 3);
    assert_eq!(row["gap"].as_f64(), Some(0.0));
    assert_eq!(report["all_match"], true);

    let text = sb.run(&["--usage", "--reconcile"]).stdout;
    assert!(
        text.lines()
            .any(|l| l.starts_with("3f2a0c1d9e8b") && l.ends_with("match")),
        "{text}"
    );
}

#[test]
fn a_five_percent_gap_does_not_reconcile() {
    let sb = Sandbox::new();
    write_transcript(&sb);
    write_ledger(&sb, &relay_lines("3f2a0c1d9e8b", 1.05));

    let report = usage_json(&sb, &["--reconcile"]);

    let row = &report["rows"][0];
    assert_eq!(row["status"], "mismatch", "{report:#}");
    assert_eq!(row["match"], false);
    assert!(row["gap"].as_f64().unwrap() > 0.02, "{row:#}");
    assert_eq!(report["all_match"], false);
    let text = sb.run(&["--usage", "--reconcile"]).stdout;
    assert!(text.contains("MISMATCH"), "{text}");
}

#[test]
fn the_session_ties_a_transcript_to_its_run_when_the_relay_saw_no_request_id() {
    let sb = Sandbox::new();
    write_transcript(&sb);
    let lines: Vec<Value> = relay_lines("run-b", 1.0)
        .into_iter()
        .map(|mut line| {
            line["request_id"] = Value::Null;
            line["message_id"] = Value::Null;
            line
        })
        .collect();
    write_ledger(&sb, &lines);

    let report = usage_json(&sb, &["--reconcile"]);

    assert_eq!(report["rows"][0]["run"], "run-b");
    assert_eq!(report["rows"][0]["status"], "match", "{report:#}");
}

#[test]
fn a_relayed_call_counts_on_the_relay_side_only() {
    let sb = Sandbox::new();
    write_transcript(&sb);
    write_ledger(&sb, &relay_lines("3f2a0c1d9e8b", 1.0));

    let report = usage_json(&sb, &["--by", "backend"]);

    assert_eq!(report["total"]["calls"], 3, "not 6: {report:#}");
    assert_eq!(group(&report, "relay:anthropic")["calls"], 3);
    assert!(
        report["groups"]
            .as_array()
            .unwrap()
            .iter()
            .all(|g| g["key"] != "claude"),
        "{report:#}"
    );
    assert_eq!(report["sources"]["claude"]["relayed"], 3);
}

#[test]
fn a_self_check_counts_once_on_the_ledger_side_beside_the_transcript_claude_code_wrote_of_it() {
    let sb = Sandbox::new();
    sb.write_file(
        &format!(".claude/projects/-home-me-work/{SESSION}.jsonl"),
        &format!("{}\n", answer_line(1, "text")),
    );
    write_ledger(
        &sb,
        &[json!({
            "time": "2026-11-30T10:01:00.000Z",
            "role": "self_check",
            "upstream": "claude",
            "status": null,
            "session": SESSION,
            "tokens": {"input": 100, "output": 50, "reasoning": 0, "cache_read": 1000, "cache_write": 200},
        })],
    );

    let report = usage_json(&sb, &["--by", "backend"]);

    assert_eq!(report["total"]["calls"], 1, "not 2: {report:#}");
    assert_eq!(group(&report, "claude")["calls"], 1);
    assert_eq!(report["sources"]["claude"]["calls"], 1, "{report:#}");
}

#[test]
fn a_call_the_relay_turned_away_while_its_upstream_cooled_is_no_call() {
    let sb = Sandbox::new();
    let mut lines = relay_lines("3f2a0c1d9e8b", 1.0);
    lines.push(json!({
        "backend": "relay:anthropic",
        "upstream": "anthropic",
        "role": "relay",
        "status": 429,
        "error_kind": "cooling",
        "refused": true,
        "tokens": {"input": 0, "output": 0, "reasoning": 0, "cache_read": 0, "cache_write": 0},
        "ttfb_s": null
    }));
    write_ledger(&sb, &lines);

    let report = usage_json(&sb, &["--by", "backend"]);

    assert_eq!(report["total"]["calls"], 3, "{report:#}");
}

#[test]
fn the_reasoning_switch_compares_output_and_reasoning_as_one() {
    let sb = Sandbox::new();
    write_transcript(&sb);
    // The relay split 20 of each answer's 50 output tokens off as reasoning.
    let lines: Vec<Value> = relay_lines("r", 1.0)
        .into_iter()
        .map(|mut line| {
            line["tokens"]["output"] = json!(30);
            line["tokens"]["reasoning"] = json!(20);
            line
        })
        .collect();
    write_ledger(&sb, &lines);

    let apart = usage_json(&sb, &["--reconcile"]);
    let together = usage_json(&sb, &["--reconcile", "--reasoning-in-output"]);

    assert_eq!(apart["rows"][0]["status"], "mismatch", "{apart:#}");
    assert_eq!(together["rows"][0]["status"], "match", "{together:#}");
    assert_eq!(together["reasoning_in_output"], true);
}

#[test]
fn codex_sessions_are_counted_with_reasoning_and_cache_apart() {
    let sb = Sandbox::new();
    let lines = [
        json!({"timestamp": "2026-11-30T05:25:49.317Z", "type": "session_meta", "payload": {"id": "01a2", "session_id": "01a2", "cwd": "/w", "cli_version": "0.171.0"}}),
        json!({"timestamp": "2026-11-30T05:25:49.400Z", "type": "turn_context", "payload": {"turn_id": "t1", "model": "gpt-5.1-codex"}}),
        json!({"timestamp": "2026-11-30T05:25:49.476Z", "type": "token_usage_record", "payload": {"session_id": "01a2", "turn_id": "t1", "response_id": "resp_1", "usage": {"input_tokens": 1100, "cached_input_tokens": 1000, "cache_write_input_tokens": 0, "output_tokens": 70, "reasoning_output_tokens": 20, "total_tokens": 1170}}}),
        json!({"timestamp": "2026-11-30T05:25:49.477Z", "type": "event_msg", "payload": {"type": "token_count", "info": {"total_token_usage": {"input_tokens": 1100, "cached_input_tokens": 1000, "output_tokens": 70, "reasoning_output_tokens": 20, "total_tokens": 1170}}}}),
    ];
    let text: String = lines.iter().map(|l| l.to_string() + "\n").collect();
    sb.write_file(
        ".codex/sessions/2026/11/30/rollout-2026-11-30T05-25-49-01a2.jsonl",
        &text,
    );

    let report = usage_json(&sb, &[]);

    let codex = group(&report, "gpt-5.1-codex");
    assert_eq!(codex["calls"], 1);
    assert_eq!(
        codex["tokens"],
        json!({"input": 100, "output": 50, "reasoning": 20, "cache_read": 1000, "cache_write": 0, "total": 1170})
    );
}

#[test]
fn by_day_uses_the_given_offset_and_the_window_is_inclusive() {
    let sb = Sandbox::new();
    write_ledger(
        &sb,
        &[
            json!({"time": "2026-11-29T23:30:00Z"}),
            json!({"time": "2026-11-30T12:00:00Z"}),
            json!({"time": "2026-11-30T23:30:00Z"}),
        ],
    );

    let utc = usage_json(&sb, &["--by", "day", "--tz-offset-hours", "0"]);
    let tokyo = usage_json(&sb, &["--by", "day", "--tz-offset-hours", "9"]);
    let one_day = usage_json(
        &sb,
        &[
            "--by",
            "day",
            "--tz-offset-hours",
            "9",
            "--since",
            "2026-11-30",
            "--until",
            "2026-11-30",
        ],
    );

    let keys = |r: &Value| -> Vec<String> {
        r["groups"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["key"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(keys(&utc), ["2026-11-29", "2026-11-30"]);
    assert_eq!(keys(&tokyo), ["2026-11-30", "2026-12-01"]);
    assert_eq!(group(&tokyo, "2026-11-30")["calls"], 2);
    assert_eq!(keys(&one_day), ["2026-11-30"]);
    assert_eq!(one_day["total"]["calls"], 2);
}

#[test]
fn grouping_by_account_run_and_backend() {
    let sb = Sandbox::new();
    write_ledger(
        &sb,
        &[
            json!({"run": "r1", "account": "work", "backend": "claude"}),
            json!({"run": "r1", "account": "work", "backend": "codex", "model": "gpt-5"}),
            json!({"run": "r2", "account": "home", "backend": "claude", "error_kind": "rate_limited", "status": 429}),
        ],
    );

    let by_account = usage_json(&sb, &["--by", "account"]);
    let by_run = usage_json(&sb, &["--by", "run"]);
    let by_backend = usage_json(&sb, &["--by", "backend"]);

    assert_eq!(group(&by_account, "work")["calls"], 2);
    assert_eq!(group(&by_account, "home")["errors"], 1);
    assert_eq!(group(&by_run, "r1")["calls"], 2);
    assert_eq!(group(&by_backend, "codex")["calls"], 1);
    assert_eq!(by_backend["total"]["calls"], 3);
}

#[test]
fn nothing_recorded_is_said_plainly() {
    let sb = Sandbox::new();

    let run = sb.run(&["--usage"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.stdout.starts_with("no calls recorded\n"),
        "{}",
        run.stdout
    );
}

#[test]
fn a_bad_date_is_a_usage_error() {
    let sb = Sandbox::new();

    let run = sb.run(&["--usage", "--since", "last tuesday"]);

    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(
        run.stderr
            .contains("--since last tuesday: expected a date, YYYY-MM-DD"),
        "{}",
        run.stderr
    );
    assert_eq!(sb.run(&["--usage", "--by", "week"]).code, Some(2));
}

#[test]
fn a_pricing_mistake_names_the_file_line_and_key() {
    let sb = Sandbox::new();
    sb.write_config("[pricing.models.\"claude-opus-5\"]\ninput = 15\noutput = -75\n");

    let run = sb.run(&["--usage"]);

    assert_eq!(run.code, Some(2), "{run:?}");
    let config = sb.config_path().display().to_string();
    assert!(
        run.stderr.contains(&format!(
            "{config}:3: pricing.models.\"claude-opus-5\".output: must be a number of USD, 0 or more"
        )),
        "{}",
        run.stderr
    );
}

#[test]
fn claude_code_is_launched_with_the_run_id_in_its_custom_headers() {
    let sb = Sandbox::new();
    sb.fake_cli("claude").install();
    sb.env("AGENT_RUN_ID", "run-7");
    sb.env("ANTHROPIC_CUSTOM_HEADERS", "X-Team: blue");

    let run = sb.run(&["--use", "claude", "-p", "hi"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    let call = &sb.calls("claude")[0];
    assert_eq!(
        call.env.get("ANTHROPIC_CUSTOM_HEADERS").map(String::as_str),
        Some("X-Team: blue\nX-Agent-Run: run-7")
    );
    assert_eq!(call.argv, ["-p", "hi"], "the arguments are untouched");
}

/// A bar's length in eighths of a cell (`█` is eight, `▏` one … `▉` seven).
fn bar_eighths(bar: &str) -> usize {
    bar.chars()
        .map(|c| match "▏▎▍▌▋▊▉█".chars().position(|p| p == c) {
            Some(i) => i + 1,
            None => panic!("{c:?} in the bar {bar:?}"),
        })
        .sum()
}

/// The bar column of each day's line (the last column, after a two-space gap).
fn day_bars(stdout: &str, days: &[&str]) -> Vec<String> {
    days.iter()
        .map(|day| {
            let line = stdout
                .lines()
                .find(|l| l.starts_with(day))
                .unwrap_or_else(|| panic!("no line for {day}:\n{stdout}"));
            line.rsplit("  ").next().unwrap_or_default().to_string()
        })
        .collect()
}

#[test]
fn by_day_draws_one_bar_per_day_in_proportion_plain_when_piped() {
    let sb = Sandbox::new();
    let tokens = |input: u64| json!({"input": input, "output": 0, "reasoning": 0, "cache_read": 0, "cache_write": 0});
    write_ledger(
        &sb,
        &[
            json!({"time": "2026-11-27T10:00:00Z", "tokens": tokens(4000)}),
            json!({"time": "2026-11-28T10:00:00Z", "tokens": tokens(1000)}),
            json!({"time": "2026-11-28T11:00:00Z", "backend": "codex", "tokens": tokens(2000)}),
            json!({"time": "2026-11-29T10:00:00Z", "tokens": tokens(10)}),
            json!({"time": "2026-11-30T10:00:00Z", "tokens": tokens(0)}),
        ],
    );
    let days = ["2026-11-27", "2026-11-28", "2026-11-29", "2026-11-30"];
    let args = ["--usage", "--by", "day", "--tz-offset-hours", "0"];

    // Piped, with no COLUMNS: the 24-cell default, the largest day full.
    let run = sb.run(&args);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        !run.stdout.contains('\u{1b}'),
        "no colour when piped:\n{}",
        run.stdout
    );
    let bars = day_bars(&run.stdout, &days);
    assert_eq!(bars[0], "█".repeat(24), "{}", run.stdout);
    // 3000 of 4000 → 18 cells; 10 of 4000 → 0.48 eighths, still one; none → no bar.
    assert_eq!(bars[1], "█".repeat(18), "{}", run.stdout);
    assert_eq!(bars[2], "▏", "{}", run.stdout);
    assert!(
        run.stdout
            .lines()
            .any(|l| l.starts_with(days[3]) && !l.contains('█') && !l.contains('▏')),
        "{}",
        run.stdout
    );
    for line in run
        .stdout
        .lines()
        .filter(|l| !days.iter().any(|d| l.starts_with(d)))
    {
        assert!(
            !line.contains('█'),
            "a bar on a line that is not a day: {line}"
        );
    }

    // COLUMNS: the bar takes what the table leaves of the terminal.
    let table = run.stdout.lines().next().unwrap().chars().count();
    sb.env("COLUMNS", (table + 2 + 40).to_string());
    let run = sb.run(&args);
    let bars = day_bars(&run.stdout, &days);
    assert_eq!(bar_eighths(&bars[0]), 40 * 8, "{}", run.stdout);
    assert_eq!(bar_eighths(&bars[1]), 40 * 8 * 3 / 4, "{}", run.stdout);
    // NO_COLOR on a pipe changes nothing.
    sb.env("NO_COLOR", "1");
    assert_eq!(sb.run(&args).stdout, run.stdout);
}

#[test]
fn by_day_json_is_the_same_document_without_any_bar() {
    let sb = Sandbox::new();
    write_ledger(
        &sb,
        &[
            json!({"time": "2026-11-28T10:00:00Z"}),
            json!({"time": "2026-11-29T10:00:00Z", "backend": "codex"}),
        ],
    );
    let report = usage_json(&sb, &["--by", "day", "--tz-offset-hours", "0"]);
    let keys = |v: &Value| -> Vec<String> {
        let mut keys: Vec<String> = v.as_object().expect("an object").keys().cloned().collect();
        keys.sort();
        keys
    };
    assert_eq!(
        keys(&report),
        [
            "by",
            "cost_incomplete",
            "groups",
            "hints",
            "plans",
            "sources",
            "total",
            "window"
        ]
    );
    let group_keys = [
        "cache_efficiency",
        "cache_hint",
        "calls",
        "cost_incomplete",
        "cost_usd",
        "cost_usd_known",
        "errors",
        "estimated",
        "key",
        "login_calls",
        "login_plans",
        "tokens",
        "unpriced_models",
    ];
    // Each day also says its tokens per backend (what the dashboard stacks); the total
    // does not.
    let mut day_keys = group_keys.to_vec();
    day_keys.push("tokens_by_backend");
    day_keys.sort_unstable();
    for group in report["groups"].as_array().unwrap() {
        assert_eq!(keys(group), day_keys, "{report:#}");
    }
    assert_eq!(
        report["groups"][1]["tokens_by_backend"],
        json!({"codex": report["groups"][1]["tokens"]["total"]}),
        "{report:#}"
    );
    assert_eq!(
        keys(&report["total"]),
        group_keys[..8]
            .iter()
            .chain(&group_keys[9..])
            .copied()
            .collect::<Vec<_>>()
    );
    assert!(!report.to_string().contains('█'), "{report:#}");
}

#[test]
fn a_model_name_from_a_transcript_loses_its_control_and_bidi_characters_in_the_report() {
    let sb = Sandbox::new();
    let mut line: Value = serde_json::from_str(&answer_line(1, "text")).unwrap();
    line["message"]["model"] = json!("claude-\u{202e}5-supo\u{1b}[2J");
    sb.write_file(
        &format!(".claude/projects/-home-me-work/{SESSION}.jsonl"),
        &format!("{line}\n"),
    );

    let run = sb.run(&["--color", "never", "--usage"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let text = run.stdout;

    assert!(text.contains("claude-5-supo"), "{text}");
    assert!(
        !text.contains(['\u{202e}', '\u{1b}']),
        "others' control or bidi characters reached the report: {text:?}"
    );
}

/// Claude Code logged in on a Max plan (presence and plan only are read; never the token).
fn claude_max_login(sb: &Sandbox) {
    sb.write_file(
        ".claude/.credentials.json",
        &json!({"claudeAiOauth": {"accessToken": "sk-ant-oat01-USAGE-LOGIN-SECRET",
            "refreshToken": "sk-ant-ort01-USAGE-LOGIN-REFRESH", "expiresAt": 4_102_444_800_000_u64,
            "scopes": ["user:inference"], "subscriptionType": "max"}})
        .to_string(),
    );
}

#[test]
fn calls_on_a_subscription_login_show_no_cost_and_no_pricing_nag() {
    let sb = Sandbox::new();
    claude_max_login(&sb);
    write_transcript(&sb);

    let report = usage_json(&sb, &[]);
    let text = sb.run(&["--usage"]).stdout;

    let opus = group(&report, OPUS);
    assert_eq!(opus["calls"], 3);
    assert_eq!(opus["login_calls"], 3, "{opus:#}");
    assert_eq!(opus["login_plans"], json!(["max"]));
    assert_eq!(opus["cost_incomplete"], false, "{opus:#}");
    assert_eq!(report["cost_incomplete"], false);
    assert_eq!(
        report["login_note"],
        "calls on a subscription login are paid by the plan (max): no per-call cost"
    );
    assert!(
        text.contains("calls on a subscription login are paid by the plan (max): no per-call cost"),
        "{text}"
    );
    assert!(!text.contains("cost incomplete"), "{text}");
    assert!(!text.contains("[pricing.models"), "{text}");
    assert!(!text.contains(" ? "), "no unknown cost: {text}");
    assert!(!text.contains("USAGE-LOGIN"), "{text}");
}

#[test]
fn an_api_keys_calls_keep_their_cost_beside_a_logins_calls() {
    let sb = Sandbox::new();
    sb.write_config(OPUS_PRICES);
    claude_max_login(&sb);
    write_transcript(&sb);
    write_ledger(
        &sb,
        &[
            json!({"backend": "claude-proxy", "tokens": {"input": 123_456, "output": 78_901, "reasoning": 0, "cache_read": 1_000_000, "cache_write": 200_000}}),
        ],
    );

    let report = usage_json(&sb, &["--by", "backend"]);
    let text = sb.run(&["--usage", "--by", "backend"]).stdout;

    let key = group(&report, "claude-proxy");
    assert_eq!(key["cost_usd"].as_f64(), Some(13.019_415), "{key:#}");
    assert_eq!(key["login_calls"], 0);
    let login = group(&report, "claude");
    assert_eq!(login["login_calls"], 3, "{login:#}");
    assert_eq!(
        login["cost_usd"].as_f64(),
        Some(0.0),
        "a login's calls are not priced per token: {login:#}"
    );
    assert_eq!(report["total"]["cost_usd"].as_f64(), Some(13.019_415));
    assert!(text.contains("$13.02"), "{text}");
    let claude_row = text
        .lines()
        .find(|l| l.starts_with("claude "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(claude_row.contains(" plan "), "{text}");
    assert!(
        text.contains("calls on a subscription login are paid by the plan (max): no per-call cost"),
        "{text}"
    );
}

#[test]
fn a_transcript_line_with_an_absurd_token_count_is_skipped_not_summed() {
    let sb = Sandbox::new();
    write_transcript(&sb);
    // A fourth answer claiming 2^64 - 1 input tokens: no call ever had that many.
    let mut absurd: Value = serde_json::from_str(&answer_line(4, "text")).unwrap();
    absurd["message"]["usage"]["input_tokens"] = json!(u64::MAX);
    let path = sb
        .home()
        .join(format!(".claude/projects/-home-me-work/{SESSION}.jsonl"));
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str(&absurd.to_string());
    text.push('\n');
    std::fs::write(&path, text).unwrap();

    let report = usage_json(&sb, &[]);

    let opus = group(&report, OPUS);
    assert_eq!(opus["calls"], 3, "{opus:#}");
    assert_eq!(opus["tokens"]["total"], 4050, "{opus:#}");
    assert_eq!(report["sources"]["claude"]["unreadable"], 1, "{report:#}");
}
