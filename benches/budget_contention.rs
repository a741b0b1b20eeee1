//! Reserve+record throughput of the daily budget under cross-process contention.
//!
//! `cargo bench --bench budget_contention` runs the same work in 1 process and in 8
//! processes racing on one state directory, side by side, and prints pairs per second.
//! The 8-process run also checks the count is exact (no lost or doubled reservation).

use std::process::Command;
use std::time::Instant;

use agent::state::budget::{Budget, Limits};
use agent::state::ledger::Tokens;

const PAIRS_PER_WORKER: u64 = 400;

fn worker(dir: &str, pairs: u64) {
    let budget = Budget::new(
        std::path::Path::new(dir),
        Limits {
            calls: 0,
            tokens: 0,
        },
    );
    let tokens = Tokens {
        input: 8,
        output: 1,
        ..Tokens::default()
    };
    for _ in 0..pairs {
        let reservation = budget.reserve().expect("unlimited budget reserves");
        budget.record(&reservation, &tokens).expect("record");
    }
}

fn race(processes: u64) -> (f64, u64) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_str().unwrap().to_string();
    let exe = std::env::current_exe().unwrap();
    let started = Instant::now();
    let children: Vec<_> = (0..processes)
        .map(|_| {
            Command::new(&exe)
                .args(["worker", &path, &PAIRS_PER_WORKER.to_string()])
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    let seconds = started.elapsed().as_secs_f64();
    let budget = Budget::new(dir.path(), Limits::default());
    let (today, _, _) = budget.status();
    assert_eq!(
        today.calls,
        processes * PAIRS_PER_WORKER,
        "every reservation counted exactly once"
    );
    assert_eq!(today.tokens, processes * PAIRS_PER_WORKER * 9);
    #[allow(clippy::cast_precision_loss)]
    let rate = (processes * PAIRS_PER_WORKER) as f64 / seconds;
    (rate, today.calls)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("worker") {
        worker(&args[2], args[3].parse().unwrap());
        return;
    }
    let (one, _) = race(1);
    let (eight, calls) = race(8);
    println!("budget reserve+record, {PAIRS_PER_WORKER} pairs per process:");
    println!("  1 process : {one:>8.0} pairs/s");
    println!("  8 racing  : {eight:>8.0} pairs/s ({calls} reservations, exact)");
    println!("  ratio 8/1 : {:.2}", eight / one);
}
