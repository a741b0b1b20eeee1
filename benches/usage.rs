//! `agent --usage` over a 1 000 000-line ledger (goal: under 2 s).
//!
//! `cargo bench --bench usage` writes a ledger of realistic lines (relayed calls with
//! request, message and session ids, probes, failures; 8 models, 5 accounts, 90 days)
//! into a temporary state directory, then runs the release-built `agent --usage` on it
//! several times for each report and prints the median and the fastest run. HOME is an
//! empty directory, so only the ledger is read. `LINES=N` changes the size;
//! `LEDGER_ONLY=PATH` writes the ledger there and measures nothing.

use std::io::{BufWriter, Write as _};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use agent::state::ledger::{CallRecord, Tokens};

const RUNS: usize = 7;

fn ledger(path: &std::path::Path, lines: u64) -> u64 {
    let models = [
        "claude-opus-5",
        "claude-sonnet-5",
        "claude-haiku-4-5",
        "gpt-5.1-codex",
        "gpt-5.1-codex-mini",
        "gemini-3.1-pro",
        "qwen3-coder-plus",
        "kimi-k2",
    ];
    let accounts = [
        "max-personal",
        "api-work",
        "api-team",
        "bailian",
        "gemini-key",
    ];
    let start = jiff::Timestamp::from_second(1_793_000_000).unwrap();
    let mut rng = fastrand::Rng::with_seed(7);
    let mut out = BufWriter::with_capacity(1 << 20, std::fs::File::create(path).unwrap());
    for n in 0..lines {
        // 90 days, in order, as the ledger is appended.
        let offset = i64::try_from(n * 90 * 86_400 / lines).unwrap();
        let time = start + jiff::SignedDuration::from_secs(offset);
        let relayed = rng.u8(0..10) < 8;
        let failed = rng.u8(0..50) == 0;
        let input = rng.u64(10..20_000);
        let record = CallRecord {
            time: time.to_string(),
            run: format!("{:012x}", n / 40 * 0x9e37_79b9),
            rung: (!relayed).then(|| rng.usize(1..8)),
            backend: Some(if relayed { "relay:anthropic" } else { "claude" }.to_string()),
            model: Some(models[rng.usize(..models.len())].to_string()),
            account: Some(accounts[rng.usize(..accounts.len())].to_string()),
            upstream: if relayed {
                "anthropic"
            } else {
                "api.anthropic.com"
            }
            .to_string(),
            role: if relayed { "relay" } else { "probe" }.to_string(),
            status: Some(if failed { 429 } else { 200 }),
            error_kind: if failed { "rate_limited" } else { "ok" }.to_string(),
            tokens: if failed {
                Tokens::default()
            } else {
                Tokens {
                    input,
                    output: rng.u64(1..4_000),
                    reasoning: rng.u64(0..1_000),
                    cache_read: input * rng.u64(0..20),
                    cache_write: rng.u64(0..5_000),
                }
            },
            estimated: rng.u8(0..100) == 0,
            ttfb_s: Some(0.3),
            duration_s: 2.5,
            request_id: Some(format!("req_011C{:020x}", rng.u64(..))),
            message_id: relayed.then(|| format!("msg_01{:022x}", rng.u64(..))),
            session: relayed.then(|| format!("5f0c1e9a-1111-4222-8333-{:012x}", n / 40)),
            day: time.to_string()[..10].to_string(),
            ..CallRecord::default()
        };
        serde_json::to_writer(&mut out, &record).unwrap();
        out.write_all(b"\n").unwrap();
    }
    out.flush().unwrap();
    std::fs::metadata(path).unwrap().len()
}

fn time(args: &[&str], home: &std::path::Path, state: &std::path::Path) -> Vec<Duration> {
    (0..RUNS)
        .map(|_| {
            let started = Instant::now();
            let status = Command::new(env!("CARGO_BIN_EXE_agent"))
                .args(args)
                .env_clear()
                .env("HOME", home)
                .env("AGENT_STATE_DIR", state)
                .env("PATH", "/usr/bin:/bin")
                .stdout(Stdio::null())
                .status()
                .unwrap();
            let took = started.elapsed();
            assert!(status.success(), "agent {args:?} failed");
            took
        })
        .collect()
}

fn main() {
    let lines: u64 = std::env::var("LINES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1_000_000);
    if let Some(path) = std::env::var_os("LEDGER_ONLY") {
        // Only the data, for other benchmarks (scripts/bench-dashboard.sh).
        ledger(std::path::Path::new(&path), lines);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let state = dir.path().join("state");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&state).unwrap();
    let started = Instant::now();
    let bytes = ledger(&state.join("usage.jsonl"), lines);
    #[allow(clippy::cast_precision_loss)]
    let megabytes = bytes as f64 / 1e6;
    println!(
        "ledger: {lines} lines, {megabytes:.0} MB (written in {:.1} s); {} CPUs",
        started.elapsed().as_secs_f64(),
        std::thread::available_parallelism().map_or(1, usize::from)
    );
    println!("| command | median | fastest |");
    println!("|---|---:|---:|");
    for args in [
        &["--usage"][..],
        &["--usage", "--by", "day"],
        &["--usage", "--by", "run", "--json"],
        &["--usage", "--reconcile"],
    ] {
        let mut runs = time(args, &home, &state);
        runs.sort();
        println!(
            "| `agent {}` | {:.2} s | {:.2} s |",
            args.join(" "),
            runs[runs.len() / 2].as_secs_f64(),
            runs[0].as_secs_f64()
        );
    }
}
