//! Bad numbers and names in the configuration file, the environment and on the command
//! line: each is exit 2 with a message naming its key — never a panic (exit 134), never a
//! wait that does not end.

use crate::support::Sandbox;

/// Values no duration or count accepts.
const HOSTILE: &[&str] = &[
    "1e18",
    "1e19",
    "-1",
    "nan",
    "inf",
    "-inf",
    "1.7976931348623157e308",
    "9223372036854775807",
];

/// Every number the file can hold, as (table, key, `0` is refused too).
const NUMBERS: &[(&str, &str, bool)] = &[
    ("", "fastfail_seconds", false),
    ("", "probe_timeout_seconds", true),
    ("", "probe_cache_seconds", false),
    ("", "hedge_ms", false),
    ("", "quota_minutes", false),
    ("budget", "calls", false),
    ("budget", "tokens", false),
    ("breaker", "threshold", false),
    ("breaker", "error_rate", false),
    ("breaker", "window_seconds", true),
    ("breaker", "min_calls", false),
    ("breaker", "backoff_seconds", false),
    ("breaker", "max_backoff_seconds", false),
    ("alerts", "deadline_seconds", true),
    ("relay", "client_timeout_seconds", true),
    ("relay", "connect_timeout_seconds", true),
    ("relay", "upstream_timeout_seconds", true),
    ("relay", "body_limit_mb", true),
];

fn assert_usage_error(what: &str, run: &crate::support::sandbox::Run, names: &str) {
    assert_eq!(run.code, Some(2), "{what}: {run:?}");
    assert!(!run.stderr.contains("panicked"), "{what}: {}", run.stderr);
    assert!(
        run.stderr.starts_with("agent: ") && run.stderr.contains(names),
        "{what}: the message names {names}: {}",
        run.stderr
    );
}

#[test]
fn a_bad_number_in_the_file_is_exit_2_naming_the_key() {
    let sb = Sandbox::new();
    for (table, key, zero_refused) in NUMBERS {
        let mut values: Vec<&str> = HOSTILE.to_vec();
        if *zero_refused {
            values.push("0");
        }
        // A fraction is no count.
        if ["calls", "tokens", "threshold", "min_calls"].contains(key) {
            values.push("1.5");
        }
        let name = if table.is_empty() {
            (*key).to_string()
        } else {
            format!("{table}.{key}")
        };
        for value in values {
            let toml = if table.is_empty() {
                format!("{key} = {value}\n")
            } else {
                format!("[{table}]\n{key} = {value}\n")
            };
            sb.write_config(&toml);
            let run = sb.run(&["--list"]);
            assert_usage_error(
                &toml,
                &run,
                &format!("config.toml:{}: {name}: ", toml.lines().count()),
            );
        }
    }
}

#[test]
fn a_bad_number_in_the_environment_is_exit_2_naming_the_variable() {
    let sb = Sandbox::new();
    for var in ["AGENT_PROBE_TIMEOUT", "AGENT_FASTFAIL_SECONDS"] {
        let mut values: Vec<&str> = HOSTILE.to_vec();
        if var == "AGENT_PROBE_TIMEOUT" {
            values.push("0");
        }
        for value in values {
            sb.env(var, value);
            let run = sb.run(&["--dry-run", "-p", "hi"]);
            assert_usage_error(&format!("{var}={value}"), &run, &format!("{var}={value}: "));
        }
        sb.env_remove(var);
    }
}

#[test]
fn in_range_numbers_still_load() {
    let sb = Sandbox::new();
    sb.write_config(
        "fastfail_seconds = 0\nprobe_timeout_seconds = 2.5\nhedge_ms = 0\nquota_minutes = 525600\n\n[budget]\ncalls = 0\ntokens = 500000\n\n[breaker]\nthreshold = 0\nwindow_seconds = 60\n\n[alerts]\ndeadline_seconds = 3600\n\n[relay]\nupstream_timeout_seconds = 86400\n",
    );
    sb.env("AGENT_FASTFAIL_SECONDS", "31536000");
    let run = sb.run(&["--list"]);
    assert_eq!(run.code, Some(0), "{run:?}");
}

/// An account in the file, with `extra` lines.
fn account(extra: &str) -> String {
    format!("[[accounts]]\nbackend = \"claude\"\nkind = \"api_key\"\nsecret_env = \"KEY\"\n{extra}")
}

#[test]
fn a_bad_account_in_the_file_is_exit_2_naming_the_key() {
    let sb = Sandbox::new();
    for (extra, key) in [
        ("name = \"\"\n", "accounts[1].name"),
        ("name = \"   \"\n", "accounts[1].name"),
        ("name = \"a\\nb\"\n", "accounts[1].name"),
        ("name = \"\"\"\na\nb\"\"\"\n", "accounts[1].name"),
        ("name = \"tab\\there\"\n", "accounts[1].name"),
        (
            "name = \"a\"\nmonthly_budget_usd = nan\n",
            "accounts[1].monthly_budget_usd",
        ),
        (
            "name = \"a\"\nmonthly_budget_usd = -1\n",
            "accounts[1].monthly_budget_usd",
        ),
        (
            "name = \"a\"\nmonthly_budget_usd = inf\n",
            "accounts[1].monthly_budget_usd",
        ),
        (
            "name = \"a\"\nmonthly_budget_usd = 1e18\n",
            "accounts[1].monthly_budget_usd",
        ),
        ("name = \"a\"\nexpires = \"soon\"\n", "accounts[1].expires"),
    ] {
        let toml = account(extra);
        sb.write_config(&toml);
        let run = sb.run(&["--list"]);
        assert_usage_error(&toml, &run, &format!("{key}: "));
    }
}

#[test]
fn a_literal_secret_in_the_file_is_refused_without_echoing_it() {
    let sb = Sandbox::new();
    let secret = "sk-ant-api03-LITERAL-in-config-0123456789";
    sb.write_config(&account(&format!("name = \"a\"\nsecret = \"{secret}\"\n")));

    let run = sb.run(&["--list"]);

    assert_usage_error("secret = …", &run, "accounts[1].secret: ");
    for hint in ["secret_env", "secret_cmd", "agent --accounts add"] {
        assert!(
            run.stderr.contains(hint),
            "points to {hint}: {}",
            run.stderr
        );
    }
    // No 8-character piece of it, anywhere.
    for window in secret.as_bytes().windows(8) {
        let piece = std::str::from_utf8(window).unwrap();
        assert!(
            !run.stderr.contains(piece) && !run.stdout.contains(piece),
            "{piece} leaked: {run:?}"
        );
    }
}

#[test]
fn every_outside_its_range_is_exit_2_with_the_reason() {
    let sb = Sandbox::new();
    for every in ["999999999h", "99999999999999999999999d", "31d", "1m", "0h"] {
        let run = sb.run(&[
            "--install-watchdog",
            "--every",
            every,
            "--dry-run",
            "--scheduler",
            "cron",
        ]);
        assert_usage_error(
            every,
            &run,
            &format!("--every {every}: must be a number of"),
        );
    }
    let run = sb.run(&[
        "--install-watchdog",
        "--every",
        "30d",
        "--dry-run",
        "--scheduler",
        "cron",
    ]);
    assert_eq!(run.code, Some(0), "{run:?}");
}
