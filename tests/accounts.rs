//! Account pools: the next account before the next rung, each launch with exactly one
//! account's secret, rotation shared across processes, validate-before-write, and
//! account health that only a passing check revives early.

use std::io::Write as _;
use std::os::unix::fs::PermissionsExt as _;
use std::process::Stdio;

use crate::support::sandbox::{Run, run_command};
use crate::support::{Reply, Rule, launched_words};
use crate::world::{World, world};

const KEY_A: &str = "sk-ant-api03-account-A-SECRET-111111";
const KEY_B: &str = "sk-ant-api03-account-B-SECRET-222222";
const KEY_C: &str = "sk-ant-api03-account-C-SECRET-333333";

fn pool(w: &World, rotation: &str) {
    w.sb.env("KEY_A", KEY_A);
    w.sb.env("KEY_B", KEY_B);
    w.sb.env("KEY_C", KEY_C);
    w.sb.env_remove("AGENT_PROXY_URL");
    w.sb.write_config(&format!(
        r#"
[backends.claude]
rotation = "{rotation}"

[[rungs]]
backend = "claude"
probe_model = "opus"

[[rungs]]
backend = "claude"
probe_model = "sonnet"
run_model = "sonnet"

[[accounts]]
name = "a"
backend = "claude"
kind = "api_key"
secret_env = "KEY_A"
priority = 1

[[accounts]]
name = "b"
backend = "claude"
kind = "api_key"
secret_env = "KEY_B"
priority = 2

[[accounts]]
name = "c"
backend = "claude"
kind = "api_key"
secret_env = "KEY_C"
priority = 3
"#
    ));
}

fn key_of_launch(w: &World, n: usize) -> String {
    w.sb.calls("claude")[n]
        .env
        .get("ANTHROPIC_API_KEY")
        .cloned()
        .unwrap_or_default()
}

#[test]
fn a_capped_account_hands_the_same_rung_to_the_next_account_before_any_descent() {
    let w = world();
    pool(&w, "priority");
    w.api
        .on(Rule::credential(KEY_A).reply(Reply::anthropic_error(
            429,
            "rate_limit_error",
            "You have reached your usage limit",
        )));

    let run = w.sb.run(&["-p", "hi"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    let call = &w.sb.calls("claude")[0];
    assert_eq!(
        launched_words(&call.argv),
        ["-p", "hi"],
        "still the Opus rung (no --model sonnet)"
    );
    assert_eq!(
        call.env.get("ANTHROPIC_API_KEY").map(String::as_str),
        Some(KEY_B)
    );
    for (name, value) in &call.env {
        assert!(
            !value.contains(KEY_A),
            "account a's secret reached the CLI in {name}"
        );
        assert!(
            !value.contains(KEY_C),
            "account c's secret reached the CLI in {name}"
        );
    }
    assert_eq!(
        w.api.posts_for_model("claude-sonnet-5"),
        0,
        "nothing descended to Sonnet"
    );
    assert!(
        run.stderr.contains(
            "Claude Code (its default model, account a) unavailable — claude-opus-5 unavailable:"
        ),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("using Claude Code (its default model, account b)"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains(KEY_A) && !run.stdout.contains(KEY_A));
}

#[test]
fn round_robin_over_three_healthy_accounts_spreads_thirty_launches_evenly() {
    let w = world();
    pool(&w, "round-robin");

    // Three waves of ten launches at once: the turn is shared by every process.
    for _ in 0..3 {
        let children: Vec<_> = (0..10)
            .map(|_| {
                w.sb.command(&["-p", "hi"])
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for mut child in children {
            assert!(child.wait().unwrap().success());
        }
    }

    let launches = w.sb.calls("claude");
    assert_eq!(launches.len(), 30);
    let count = |key: &str| (0..30).filter(|&n| key_of_launch(&w, n) == key).count();
    assert_eq!((count(KEY_A), count(KEY_B), count(KEY_C)), (10, 10, 10));
}

#[test]
fn failover_stays_on_the_account_that_last_worked() {
    let w = world();
    pool(&w, "failover");
    w.api.on(Rule::credential(KEY_A)
        .times(1)
        .reply(Reply::anthropic_error(
            401,
            "authentication_error",
            "invalid x-api-key",
        )));

    assert_eq!(w.sb.run(&["-p", "one"]).code, Some(0));
    assert_eq!(w.sb.run(&["-p", "two"]).code, Some(0));

    assert_eq!(key_of_launch(&w, 0), KEY_B);
    assert_eq!(
        key_of_launch(&w, 1),
        KEY_B,
        "failover keeps b, though a is first by priority"
    );
}

#[test]
fn an_auth_dead_account_stays_skipped_until_a_passing_check_revives_it() {
    let w = world();
    pool(&w, "priority");
    w.api
        .on(Rule::credential(KEY_A).reply(Reply::anthropic_error(
            401,
            "authentication_error",
            "invalid x-api-key",
        )));
    assert_eq!(w.sb.run(&["-p", "hi"]).code, Some(0));
    let a_calls = || {
        w.api
            .requests()
            .iter()
            .filter(|r| r.credential.as_deref() == Some(KEY_A))
            .count()
    };
    assert_eq!(a_calls(), 1);

    // The key is fixed upstream, but a is auth-dead for 15 minutes: skipped without a call.
    w.api.clear_rules();
    let skipped = w.sb.run(&["-p", "hi"]);
    assert_eq!(a_calls(), 1, "no call with a dead account's credential");
    assert_eq!(key_of_launch(&w, 1), KEY_B);
    assert!(
        skipped.stderr.contains("account a is auth-dead"),
        "{}",
        skipped.stderr
    );

    let test = w.sb.run(&["--accounts", "test", "a"]);
    assert_eq!(test.code, Some(0), "{test:?}");
    assert!(test.stdout.contains("a: valid"), "{}", test.stdout);
    assert_eq!(w.sb.run(&["-p", "hi"]).code, Some(0));
    assert_eq!(
        key_of_launch(&w, 2),
        KEY_A,
        "revived by its own passing check"
    );
}

#[test]
fn doctor_reports_a_401_account_as_invalid_and_exits_1() {
    let w = world();
    pool(&w, "priority");
    std::fs::set_permissions(w.sb.state_dir(), std::fs::Permissions::from_mode(0o700)).unwrap();
    w.api
        .on(Rule::credential(KEY_C).reply(Reply::anthropic_error(
            401,
            "authentication_error",
            "invalid x-api-key",
        )));

    let run = w.sb.run(&["--doctor"]);

    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(run.stdout.contains("ok   account a"), "{}", run.stdout);
    assert!(run.stdout.contains("FAIL account c"), "{}", run.stdout);
    assert!(run.stdout.contains("invalid (401)"), "{}", run.stdout);
    assert!(!run.stdout.contains(KEY_C));
    let listings = w
        .api
        .requests()
        .iter()
        .filter(|r| r.path.ends_with("/v1/models"))
        .count();
    assert_eq!(listings, 3, "one zero-cost check per account");
    assert_eq!(w.api.posts(), 0, "and no LLM call");
}

fn add(w: &World, name: &str, secret: &str, extra: &[&str]) -> Run {
    let mut args = vec![
        "--accounts",
        "add",
        name,
        "--backend",
        "claude",
        "--kind",
        "api_key",
    ];
    args.extend(extra);
    let mut command = w.sb.command(&args);
    command.stdin(Stdio::piped());
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // agent may refuse before reading its stdin: then the pipe is closed, which is fine.
    let _ = child
        .stdin
        .take()
        .unwrap()
        .write_all(format!("{secret}\n").as_bytes());
    let output = child.wait_with_output().unwrap();
    Run {
        code: output.status.code(),
        signal: None,
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        elapsed: std::time::Duration::ZERO,
        timed_out: false,
    }
}

fn credentials(w: &World) -> std::path::PathBuf {
    w.sb.home().join(".config/agent/credentials.toml")
}

#[test]
fn add_refuses_a_key_the_api_rejects_and_stores_and_echoes_nothing() {
    let w = world();
    let bad = "sk-ant-api03-REJECTED-key-0000000000";
    w.api.on(Rule::credential(bad).reply(Reply::anthropic_error(
        401,
        "authentication_error",
        &format!("invalid x-api-key {bad}"),
    )));

    let run = add(&w, "work", bad, &[]);

    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(
        run.stderr.contains("rejected this credential (401)"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("Nothing stored"), "{}", run.stderr);
    assert!(
        !run.stderr.contains(bad) && !run.stdout.contains(bad),
        "the secret is never echoed"
    );
    assert!(!credentials(&w).exists());
}

#[test]
fn add_refuses_a_disabled_organisation_with_a_hint() {
    let w = world();
    let key = "sk-ant-api03-DISABLED-org-0000000000";
    w.api.on(Rule::credential(key).reply(Reply::anthropic_error(
        403,
        "permission_error",
        "organization disabled",
    )));

    let run = add(&w, "work", key, &[]);

    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(run.stderr.contains("disabled (403)"), "{}", run.stderr);
    assert!(
        run.stderr.contains("ask your organisation's admin"),
        "{}",
        run.stderr
    );
    assert!(!credentials(&w).exists());
}

#[test]
fn add_refuses_a_short_lived_access_token_and_points_to_setup_token() {
    let w = world();

    let run = add(&w, "max", "sk-ant-at01-short-lived-access-token-xyz", &[]);

    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(run.stderr.contains("claude setup-token"), "{}", run.stderr);
    assert!(run.stderr.contains("sk-ant-oat01-"), "{}", run.stderr);
    assert!(w.api.requests().is_empty(), "refused before any call");
    assert!(!credentials(&w).exists());
}

#[test]
fn add_stores_a_valid_key_0600_and_lists_it_without_its_secret() {
    let w = world();
    let key = "sk-ant-api03-GOOD-key-4444444444444444";

    let run = add(
        &w,
        "work",
        key,
        &["--priority", "5", "--expires", "2099-01-01"],
    );

    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(run.stdout.contains("checked: valid"), "{}", run.stdout);
    let file = credentials(&w);
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    assert!(
        std::fs::read_to_string(&file).unwrap().contains(key),
        "stored where agent can use it"
    );
    let check = w
        .api
        .requests()
        .into_iter()
        .find(|r| r.path.ends_with("/v1/models"))
        .expect("checked first");
    assert_eq!(check.credential.as_deref(), Some(key));

    let list = w.sb.run(&["--accounts", "list"]);
    let json = w.sb.run(&["--accounts", "list", "--json"]);
    assert!(
        list.stdout
            .contains("work  claude (priority)  api_key  secret from credentials.toml"),
        "{}",
        list.stdout
    );
    for out in [&list.stdout, &list.stderr, &json.stdout, &json.stderr] {
        assert!(!out.contains(key), "the secret is never shown: {out}");
    }
    let rows: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(rows[0]["name"], "work");

    // The stored account is used: the next launch gives the CLI its key.
    w.sb.env_remove("AGENT_PROXY_URL");
    assert_eq!(w.sb.run(&["-p", "hi"]).code, Some(0));
    assert_eq!(
        w.sb.calls("claude")[0]
            .env
            .get("ANTHROPIC_API_KEY")
            .map(String::as_str),
        Some(key)
    );

    assert_eq!(w.sb.run(&["--accounts", "remove", "work"]).code, Some(0));
    assert!(!std::fs::read_to_string(&file).unwrap().contains(key));
}

#[test]
fn offline_add_saves_the_account_marked_unverified() {
    let w = world();
    w.sb.env("ANTHROPIC_BASE_URL", "http://127.0.0.1:9");

    let run = add(&w, "laptop", "sk-ant-api03-OFFLINE-key-55555555555", &[]);

    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(run.stdout.contains("unverified"), "{}", run.stdout);
    let list = run_command(
        w.sb.command(&["--accounts", "list"]),
        crate::support::sandbox::RUN_TIMEOUT,
    );
    assert!(list.stdout.contains("unverified"), "{}", list.stdout);
}

#[test]
fn an_expiring_token_is_warned_about_30_and_7_days_ahead() {
    let w = world();
    let soon = jiff::ZonedDateTime::now()
        .date()
        .checked_add(jiff::Span::new().days(5))
        .unwrap();
    w.sb.env("KEY_A", KEY_A);
    w.sb.write_config(&format!(
        "[[accounts]]\nname = \"a\"\nbackend = \"claude\"\nkind = \"oauth\"\nsecret_env = \"KEY_A\"\nexpires = \"{soon}\"\n"
    ));

    let status = w.sb.run(&["--status"]);
    let list = w.sb.run(&["--accounts", "list"]);

    assert!(
        status
            .stderr
            .contains("account a: its token expires in 5 days — replace it now"),
        "{}",
        status.stderr
    );
    assert!(list.stdout.contains("expires in 5 days"), "{}", list.stdout);
}

#[test]
fn an_account_past_its_monthly_budget_is_skipped_until_next_month() {
    let w = world();
    pool(&w, "priority");
    let config = std::fs::read_to_string(w.sb.config_path()).unwrap();
    let config = config.replacen(
        "priority = 1\n",
        "priority = 1\nmonthly_budget_usd = 0.0001\n",
        1,
    );
    w.sb.write_config(&format!(
        "{config}\n[pricing.models.\"claude-opus-5\"]\ninput = 15.0\noutput = 75.0\ncache_read = 1.5\ncache_write = 18.75\n"
    ));

    assert_eq!(w.sb.run(&["-p", "one"]).code, Some(0));
    // The probe with a's key cost 8 × $15/M + 1 × $75/M = $0.000195: past its $0.0001 cap.
    let second = w.sb.run(&["-p", "two"]);

    assert_eq!(key_of_launch(&w, 0), KEY_A);
    assert_eq!(key_of_launch(&w, 1), KEY_B, "{}", second.stderr);
    assert!(
        second
            .stderr
            .contains("account a spent $0.0002 of its $0.0001 monthly budget"),
        "{}",
        second.stderr
    );
}

#[test]
fn least_cost_takes_the_account_with_the_most_monthly_budget_left() {
    let w = world();
    pool(&w, "least-cost");
    let config = std::fs::read_to_string(w.sb.config_path()).unwrap();
    let config = config
        .replacen(
            "priority = 1\n",
            "priority = 1\nmonthly_budget_usd = 0.0003\n",
            1,
        )
        .replacen(
            "priority = 2\n",
            "priority = 2\nmonthly_budget_usd = 0.0002\n",
            1,
        )
        .replacen(
            "priority = 3\n",
            "priority = 3\nmonthly_budget_usd = 0.0001\n",
            1,
        );
    w.sb.write_config(&format!(
        "{config}\n[pricing.models.\"claude-opus-5\"]\ninput = 15.0\noutput = 75.0\ncache_read = 1.5\ncache_write = 18.75\n"
    ));

    // Each launch probes with its account's key first, at $0.000195 a probe.
    for prompt in ["one", "two", "three"] {
        assert_eq!(w.sb.run(&["-p", prompt]).code, Some(0));
    }

    // $0.0003 left on a; then $0.000105 on a against $0.0002 on b; then $0.000105 on a,
    // $0.000005 on b and $0.0001 on c.
    assert_eq!(key_of_launch(&w, 0), KEY_A);
    assert_eq!(key_of_launch(&w, 1), KEY_B);
    assert_eq!(key_of_launch(&w, 2), KEY_A);
}

#[test]
fn add_refuses_an_empty_or_multi_line_name_before_reading_any_secret() {
    let w = world();
    for name in ["", "   ", "work\nhome", "bell\x07"] {
        let run = add(&w, name, "sk-ant-api03-valid-key-00000000000000", &[]);

        assert_eq!(run.code, Some(2), "{name:?}: {run:?}");
        assert!(
            run.stderr.contains("--accounts add: NAME: must"),
            "{name:?}: {}",
            run.stderr
        );
        assert!(!credentials(&w).exists(), "{name:?}: nothing stored");
    }
    assert_eq!(w.api.requests().len(), 0, "no check was even tried");
}

#[test]
fn with_no_accounts_the_list_shows_the_clis_own_login_and_how_to_add_a_second() {
    let w = world();
    w.sb.write_file(
        ".claude/.credentials.json",
        r#"{"claudeAiOauth": {"accessToken": "sk-ant-oat01-LIST-LOGIN-SECRET", "refreshToken": "r-LIST-SECRET", "expiresAt": 4102444800000, "scopes": ["user:inference"], "subscriptionType": "max"}}"#,
    );

    let run = w.sb.run(&["--accounts", "list"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert!(
        lines[0].starts_with("no accounts configured"),
        "{}",
        run.stdout
    );
    assert!(
        lines.iter().any(|l| l
            .trim_start()
            .starts_with("Claude Code: its own login (max)")),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("agent --accounts add NAME --backend claude --kind login --dir DIR"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("no accounts:"), "{}", run.stdout);
    assert!(
        !run.stdout.contains("LIST-LOGIN"),
        "never a token: {}",
        run.stdout
    );
}

#[test]
fn a_codex_key_account_reaches_codex_in_the_variable_its_own_config_names() {
    const SECRET: &str = "sk-codex-account-SECRET-444444";
    let w = world();
    w.sb.env("CODEX_ACCOUNT_KEY", SECRET);
    // agent's own Codex home (the world's ~/.codex) names MOCK_OPENAI_KEY; the backend's
    // `env` moves codex to a home whose provider reads its key from MY_KEY.
    w.sb.env("CODEX_HOME", w.sb.home().join(".codex").to_string_lossy());
    let child_home = w.sb.write_file(
        "codex-work/config.toml",
        &format!(
            "model = \"{model}\"\nmodel_provider = \"mine\"\n\n[model_providers.mine]\nname = \"mine\"\nbase_url = \"{url}/v1\"\nenv_key = \"MY_KEY\"\nwire_api = \"responses\"\n",
            model = crate::world::CODEX_MODEL,
            url = w.api.url(),
        ),
    );
    let child_home = child_home.parent().unwrap().to_string_lossy().into_owned();
    w.sb.write_config(&format!(
        r#"
[backends.codex]
env = {{ CODEX_HOME = "{child_home}" }}

[[rungs]]
backend = "codex"

[[accounts]]
name = "work"
backend = "codex"
kind = "api_key"
secret_env = "CODEX_ACCOUNT_KEY"
"#
    ));

    let run = w.sb.run(&["-p", "hi"]);

    assert!(run.success(), "{run:?}");
    let calls = w.sb.calls("codex");
    let launch = calls.last().expect("codex launched");
    assert_eq!(
        launch.env.get("CODEX_HOME").map(String::as_str),
        Some(child_home.as_str())
    );
    assert_eq!(
        launch.env.get("MY_KEY").map(String::as_str),
        Some(SECRET),
        "the account's secret goes where the child's config.toml reads it"
    );
    assert_ne!(
        launch.env.get("MOCK_OPENAI_KEY").map(String::as_str),
        Some(SECRET),
        "not where agent's own config.toml names"
    );
}
