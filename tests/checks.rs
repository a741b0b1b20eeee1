//! `--status` and `--check-fallback`: real calls every time, every rung asked, rows as they
//! are known — and the regressions the seed's author paid for (checks that said green over
//! a broken mechanism).

use std::fmt::Write as _;
use std::io::{BufRead as _, BufReader};
use std::process::Stdio;
use std::sync::mpsc;

use crate::support::{Reply, Rule, wait};
use crate::world::{CODEX_MODEL, GEMINI_MODEL, health_of, world};

/// Seven claude rungs, each probing its own model `m1` … `m7`.
fn seven_rungs() -> String {
    let mut toml = String::new();
    for k in 1..=7 {
        let _ = write!(
            toml,
            "[[rungs]]\nbackend = \"claude\"\nprobe_model = \"m{k}\"\nrun_model = \"m{k}\"\n\n"
        );
    }
    toml
}

#[test]
fn status_over_seven_slow_rungs_probes_them_in_parallel() {
    let w = world();
    w.sb.write_config(&seven_rungs());
    // Each probe is answered only once all seven are in: probed one by one, the first
    // waits in vain and its row fails.
    w.api.on(Rule::any().reply(Reply::ok().together(7)));

    let run = w.sb.run(&["--status"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(w.api.posts(), 7, "{run:?}");
    let rows: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(rows.len(), 7, "{}", run.stdout);
    for (k, row) in rows.iter().enumerate() {
        let model = format!("m{}", k + 1);
        assert!(
            row.starts_with(&format!("OK       claude / {model} ")),
            "{row}"
        );
        assert!(
            row.contains(&format!("reachable, {model} answered (")),
            "{row}"
        );
        assert!(row.ends_with(" ms)"), "{row}");
    }
}

#[test]
fn status_prints_each_row_when_its_own_probe_ends() {
    let w = world();
    // A probe timeout far off: only the test ends the held probes.
    w.sb.write_config(&format!("probe_timeout_seconds = 600\n{}", seven_rungs()));
    // m3 and m6 are answered when the test says; the others at once.
    for k in [3, 6] {
        w.api
            .on(Rule::model(&format!("m{k}")).reply(Reply::ok().held(&format!("m{k}"))));
    }
    let mut command = w.sb.command(&["--status"]);
    command.stdout(Stdio::piped());
    let mut child = command.spawn().unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let (rows, arrived) = mpsc::channel();
    std::thread::spawn(move || {
        for line in stdout.lines().map_while(Result::ok) {
            let _ = rows.send(line);
        }
    });
    let next_rows = |n: usize| -> Vec<String> {
        (0..n)
            .map(|_| {
                arrived
                    .recv_timeout(wait::PATIENCE)
                    .expect("a row agent printed")
            })
            .collect()
    };

    // Rows 1 and 2 come while probe 3 is held; rows 3 to 5 once it answers, while probe 6
    // is still held; rows 6 and 7 once that one answers.
    let mut printed = next_rows(2);
    w.api.release("m3");
    printed.extend(next_rows(3));
    w.api.release("m6");
    printed.extend(next_rows(2));
    assert!(child.wait().unwrap().success());

    assert!(arrived.recv().is_err(), "seven rows, no more");
    for (k, row) in printed.iter().enumerate() {
        assert!(
            row.starts_with(&format!("OK       claude / m{} ", k + 1)),
            "rows in table order, each answered: {row}"
        );
    }
}

#[test]
fn status_ignores_the_cache_and_cooldowns_and_refreshes_health() {
    let w = world();
    w.sb.write_config("[[rungs]]\nbackend = \"claude\"\nprobe_model = \"opus\"\n\n[[rungs]]\nbackend = \"claude\"\nprobe_model = \"sonnet\"\n");
    w.api.on(Rule::model("claude-opus-5")
        .times(1)
        .reply(Reply::anthropic_error(429, "rate_limit_error", "slow down")));
    assert_eq!(w.sb.run(&["-p", "hi"]).code, Some(0));
    assert_eq!(
        w.api.posts(),
        2,
        "opus cooling down, sonnet trusted from now on"
    );

    let run = w.sb.run(&["--status"]);
    w.sb.run(&["--status"]);

    assert_eq!(
        w.api.posts_for_model("claude-opus-5"),
        3,
        "even a cooling rung is asked"
    );
    assert_eq!(
        w.api.posts_for_model("claude-sonnet-5"),
        3,
        "--status always calls"
    );
    // Both rows launch Claude Code's own default (no model passed, none it named): each
    // row's text says the model its probe asked about.
    assert!(
        run.stdout.starts_with("OK       claude   ")
            && run
                .stdout
                .lines()
                .next()
                .unwrap()
                .contains("claude-opus-5 answered"),
        "{}",
        run.stdout
    );
    assert_eq!(
        health_of(&w.sb, "claude-opus-5")["class"],
        "ok",
        "--status refreshed health"
    );
}

#[test]
fn status_json_has_one_object_per_rung() {
    let w = world();
    w.api
        .on(Rule::model(GEMINI_MODEL).reply(Reply::gemini_error(
            400,
            "INVALID_ARGUMENT",
            "API key not valid",
        )));

    let run = w.sb.run(&["--status", "--json"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    let rows: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 8);
    assert_eq!(rows[0]["state"], "ok");
    assert_eq!(rows[0]["backend"], "claude");
    assert_eq!(rows[0]["model"], "claude-opus-5");
    assert!(rows[0]["latency_ms"].is_u64());
    assert_eq!(rows[5]["state"], "skipped");
    assert_eq!(rows[6]["state"], "failed");
    assert_eq!(rows[6]["class"], "auth");
    // opencode, the last built-in rung, is not installed here.
    assert_eq!(rows[7]["backend"], "opencode");
    assert_eq!(rows[7]["state"], "skipped");
    assert!(
        rows[6]["reason"]
            .as_str()
            .unwrap()
            .contains("API key not valid")
    );
}

#[test]
fn check_fallback_ok_when_every_independent_rung_answers() {
    let w = world();

    let run = w.sb.run(&["--check-fallback"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.stdout
            .starts_with("all provider-independent fallbacks OK: codex / gpt-test-codex, gemini / gemini-test-pro\n"),
        "{}",
        run.stdout
    );
    assert_eq!(
        w.api.posts_for_model("claude-opus-5"),
        0,
        "rung 1's vendor is not the watchdog's business"
    );
}

#[test]
fn check_fallback_degraded_when_one_independent_rung_died() {
    let w = world();
    w.api
        .on(Rule::model(GEMINI_MODEL).reply(Reply::gemini_error(
            400,
            "INVALID_ARGUMENT",
            "API key not valid",
        )));

    let run = w.sb.run(&["--check-fallback"]);

    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(
        run.stdout.starts_with(&format!(
            "DEGRADED: still covered by codex / {CODEX_MODEL} but a rung died: gemini / {GEMINI_MODEL} (auth)\n"
        )),
        "{}",
        run.stdout
    );
    let gemini = run
        .stdout
        .lines()
        .find(|line| line.trim_start().starts_with("FAIL") && line.contains("gemini / "))
        .unwrap_or_else(|| panic!("{}", run.stdout));
    assert!(
        gemini.contains(&format!("auth: {GEMINI_MODEL} unavailable: ")),
        "{gemini}"
    );
    // Regression: the first version stopped at the first green rung and never saw gemini.
    assert_eq!(w.api.posts_for_model(GEMINI_MODEL), 1);
    assert_eq!(w.api.posts_for_model(CODEX_MODEL), 1);
}

#[test]
fn check_fallback_down_when_no_independent_rung_answers() {
    let w = world();
    w.api
        .on(Rule::model(GEMINI_MODEL).reply(Reply::gemini_error(
            400,
            "INVALID_ARGUMENT",
            "API key not valid",
        )));
    w.api.on(Rule::model(CODEX_MODEL).reply(Reply::openai_error(
        401,
        "invalid_api_key",
        "Incorrect API key provided",
    )));

    let run = w.sb.run(&["--check-fallback"]);

    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(
        run.stdout
            .starts_with("DOWN: no provider-independent fallback answers: codex / "),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains(", gemini / "), "{}", run.stdout);
    assert_eq!(w.api.posts_for_model(GEMINI_MODEL), 1);
    assert_eq!(w.api.posts_for_model(CODEX_MODEL), 1);
}

#[test]
fn check_fallback_json_carries_the_verdict_and_rows() {
    let w = world();
    w.api
        .on(Rule::model(CODEX_MODEL).reply(Reply::status(500).body("boom")));

    let run = w.sb.run(&["--check-fallback", "--json"]);

    assert_eq!(run.code, Some(1));
    let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(json["state"], "DEGRADED");
    assert_eq!(
        json["rungs"].as_array().unwrap().len(),
        4,
        "codex, agy (skipped), gemini, opencode (skipped)"
    );
}

// ---- regressions: each fails if its guard is removed -------------------------------------

#[test]
fn the_probe_uses_the_model_the_cli_is_configured_with() {
    let w = world();
    // Only the model gemini really runs is broken; any other model would answer.
    w.api
        .on(Rule::model(GEMINI_MODEL).reply(Reply::gemini_error(
            403,
            "PERMISSION_DENIED",
            "auth_unavailable for this model",
        )));

    let run = w.sb.run(&["--status"]);

    let row = run
        .stdout
        .lines()
        .find(|l| l.contains("gemini /"))
        .unwrap_or_default()
        .to_string();
    assert!(
        row.starts_with(&format!("FAIL     gemini / {GEMINI_MODEL}")),
        "{}",
        run.stdout
    );
    assert_eq!(w.api.posts_for_model(GEMINI_MODEL), 1);
}

#[test]
fn the_codex_probe_goes_where_codex_itself_talks() {
    let w = world();
    // Codex ignores OPENAI_BASE_URL: a probe that followed it would go nowhere.
    w.sb.env("OPENAI_BASE_URL", "http://127.0.0.1:9/v1");
    w.sb.env("OPENAI_API_KEY", "sk-not-the-codex-provider-key-000");

    let run = w.sb.run(&["--status"]);

    let row = run
        .stdout
        .lines()
        .find(|l| l.contains("codex"))
        .unwrap_or_default()
        .to_string();
    assert!(
        row.starts_with(&format!("OK       codex / {CODEX_MODEL}")),
        "{}",
        run.stdout
    );
    let probe = w
        .api
        .post_requests()
        .into_iter()
        .find(|r| r.model.as_deref() == Some(CODEX_MODEL))
        .unwrap();
    assert!(
        probe.path.ends_with("/v1/responses"),
        "codex talks the Responses API: {}",
        probe.path
    );
    assert_eq!(
        probe.credential.as_deref(),
        Some(crate::world::OPENAI_KEY),
        "with codex's env_key"
    );
}

#[test]
fn a_silently_empty_variable_fails_the_rung_by_name() {
    let w = world();
    w.sb.env("MY_PROXY_KEY", "");
    w.sb.write_config(&format!(
        "[backends.claude-proxy]\nprobe = {{ kind = \"anthropic\", url = \"{}\", key = \"${{MY_PROXY_KEY}}\", auth = \"bearer\" }}\n\n[[rungs]]\nbackend = \"claude-proxy\"\nprobe_model = \"opus\"\n",
        w.api.url()
    ));

    let run = w.sb.run(&["--status"]);

    // The mock would answer any credential, even an empty one: only the guard makes this FAIL.
    assert!(
        run.stdout.starts_with("FAIL     claude-proxy   "),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("credentials_missing: MY_PROXY_KEY is not set"),
        "{}",
        run.stdout
    );
    assert_eq!(w.api.posts(), 0);
}

#[test]
fn a_cli_that_refuses_to_start_in_this_folder_fails_its_command_probe() {
    let w = world();
    // gemini's headless mode refuses an untrusted folder (exit 55) although its API answers.
    w.sb.fake_cli("gemini").script(
        "if [ -f \"$PWD/.trusted\" ]; then echo answered; exit 0; fi\necho 'untrusted folder' >&2\nexit 55",
    ).install();
    w.sb.write_config(
        "[backends.gemini]\nprobe = { kind = \"command\" }\n\n[[rungs]]\nbackend = \"gemini\"\n",
    );
    let project = w.sb.set_cwd("project");
    let trust = |rules: serde_json::Value| {
        w.sb.write_file(".gemini/trustedFolders.json", &rules.to_string());
    };

    // Its own record trusts no folder here: the fact, read without running it.
    trust(serde_json::json!({}));
    let refused = w.sb.run(&["--status"]);
    let runs_refused = w.sb.calls("gemini").len();
    // Its record trusts the folder but it still refuses to start: its own words.
    trust(serde_json::json!({ project.to_string_lossy(): "TRUST_FOLDER" }));
    let untrusted = w.sb.run(&["--status"]);
    std::fs::write(project.join(".trusted"), "").unwrap();
    let trusted = w.sb.run(&["--status"]);

    assert!(
        refused.stdout.starts_with("FAIL     gemini"),
        "{}",
        refused.stdout
    );
    assert!(
        refused
            .stdout
            .contains("a launch here would be refused: gemini does not trust this folder"),
        "{}",
        refused.stdout
    );
    assert_eq!(runs_refused, 0, "nothing ran for the fact");
    assert!(
        untrusted.stdout.starts_with("FAIL     gemini"),
        "{}",
        untrusted.stdout
    );
    assert!(
        untrusted.stdout.contains("exited 55: untrusted folder"),
        "{}",
        untrusted.stdout
    );
    assert!(
        trusted.stdout.starts_with("OK       gemini"),
        "{}",
        trusted.stdout
    );
    assert_eq!(
        w.sb.calls("gemini")[0].argv,
        ["--prompt=hi"],
        "headless, as the launch would run it"
    );
}

#[test]
fn a_listed_model_whose_calls_fail_is_dead() {
    let w = world();
    // The proxy lists the model (its /v1/models says so) while every call to it fails.
    w.api.on(Rule::model("claude-opus-5")
        .reply(Reply::status(500).body("{\"error\":\"auth_unavailable\"}")));

    let run = w.sb.run(&["--status"]);

    assert!(
        run.stdout.starts_with("FAIL     claude     ")
            && run
                .stdout
                .lines()
                .next()
                .unwrap()
                .contains("claude-opus-5 unavailable"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("auth_unavailable"), "{}", run.stdout);
    let listings = w
        .api
        .requests()
        .iter()
        .filter(|r| r.path.ends_with("/models"))
        .count();
    assert_eq!(listings, 0, "a model list is never liveness");
}

/// Issue 43, item 2: a check that never ran is no call. A probe whose CLI cannot be started
/// (an executable file the system will not run) spends nothing: no ledger line, no call
/// counted against the day's budget.
#[test]
fn a_check_whose_cli_cannot_start_counts_no_call() {
    use std::os::unix::fs::PermissionsExt as _;
    let w = world();
    let broken = w.sb.bin_dir().join("broken-cli");
    std::fs::write(&broken, [0x7f, b'E', b'L', b'F', 0, 0, 0, 0]).unwrap();
    std::fs::set_permissions(&broken, std::fs::Permissions::from_mode(0o755)).unwrap();
    w.sb.write_config(&format!(
        "[backends.broken]\ncommand = \"{}\"\nprobe = {{ kind = \"command\" }}\n\n[[rungs]]\nbackend = \"broken\"\n",
        broken.display()
    ));

    let status = w.sb.run(&["--status"]);
    let budget = w.sb.run(&["--budget", "status", "--json"]);

    assert!(status.stdout.starts_with("FAIL "), "{status:?}");
    assert!(status.stdout.contains("could not be started"), "{status:?}");
    let ledger = std::fs::read_to_string(w.sb.state_dir().join("usage.jsonl")).unwrap_or_default();
    assert!(!ledger.contains("broken"), "{ledger}");
    let budget: serde_json::Value = serde_json::from_str(&budget.stdout).unwrap();
    assert_eq!(budget["calls"], 0, "{budget}");
}
