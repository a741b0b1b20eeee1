//! Choosing a rung: descent order, notices, hedging, and what health saves.

use crate::support::sandbox::{RUN_TIMEOUT, run_command};
use crate::support::{Reply, Rule, launched_words, wait};
use crate::world::{CLAUDE_THEN_CODEX, CODEX_MODEL, health_of, world};

#[test]
fn opus_capped_runs_sonnet_before_another_vendor() {
    let w = world();
    w.api
        .on(Rule::model("claude-opus-5").reply(Reply::anthropic_error(
            429,
            "rate_limit_error",
            "Number of requests has exceeded your rate limit",
        )));

    let run = w.sb.run(&["-p", "hi"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    let claude = w.sb.calls("claude");
    assert_eq!(claude.len(), 1);
    assert_eq!(
        launched_words(&claude[0].argv),
        ["--model", "claude-sonnet-5", "-p", "hi"]
    );
    assert!(w.sb.calls("codex").is_empty());
    let notices: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(notices.len(), 2, "{}", run.stderr);
    assert!(
        notices[0].starts_with(
            "[agent] Claude Code (its default model) unavailable — claude-opus-5 unavailable: {\""
        ),
        "{}",
        notices[0]
    );
    assert!(notices[0].contains("rate_limit_error"), "{}", notices[0]);
    assert_eq!(notices[1], "[agent] using Claude Code (claude-sonnet-5)");
}

#[test]
fn every_anthropic_rung_failing_runs_the_first_independent_rung() {
    let w = world();
    w.api
        .on(Rule::model("claude-opus-5").reply(Reply::anthropic_error(
            529,
            "overloaded_error",
            "Overloaded",
        )));
    w.api
        .on(Rule::model("claude-sonnet-5").reply(Reply::anthropic_error(
            401,
            "authentication_error",
            "invalid x-api-key",
        )));

    let run = w.sb.run(&["-p", "hi"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        w.sb.calls("claude").is_empty(),
        "no Claude Code rung may run"
    );
    // In Codex's words: its -p is --profile.
    assert_eq!(w.sb.calls("codex")[0].argv, ["exec", "--", "hi"]);
    assert!(
        run.stderr
            .contains("[agent] using Codex (its default model)"),
        "{}",
        run.stderr
    );
    // Rungs 1 and 3 (and 2 and 4) share a target: each model is probed once, not twice.
    assert_eq!(w.api.posts_for_model("claude-opus-5"), 1);
    assert_eq!(w.api.posts_for_model("claude-sonnet-5"), 1);
    // Codex was probed where codex itself talks, with the model codex runs.
    assert_eq!(w.api.posts_for_model(CODEX_MODEL), 1);
    let events = std::fs::read_to_string(w.sb.state_dir().join("events.jsonl")).unwrap();
    assert!(events.contains("\"event\":\"fallback\""), "{events}");
}

#[test]
fn a_second_launch_within_the_cache_window_makes_no_call() {
    let w = world();
    w.sb.write_config(CLAUDE_THEN_CODEX);

    assert_eq!(w.sb.run(&["-p", "one"]).code, Some(0));
    assert_eq!(w.api.posts(), 1);
    let second = w.sb.run(&["-p", "two"]);

    assert_eq!(second.code, Some(0), "{second:?}");
    assert_eq!(w.api.posts(), 1, "the cached probe must be trusted");
    assert_eq!(w.sb.calls("claude").len(), 2);
}

#[test]
fn a_rate_limited_model_is_not_probed_during_its_cooldown() {
    let w = world();
    w.sb.write_config(
        "[[rungs]]\nbackend = \"claude\"\nprobe_model = \"opus\"\n\n[[rungs]]\nbackend = \"claude\"\nprobe_model = \"sonnet\"\nrun_model = \"sonnet\"\n",
    );
    w.api
        .on(Rule::model("claude-opus-5").reply(Reply::anthropic_error(
            429,
            "rate_limit_error",
            "slow down",
        )));

    assert_eq!(w.sb.run(&["-p", "hi"]).code, Some(0));
    assert_eq!(w.sb.run(&["-p", "hi"]).code, Some(0));

    assert_eq!(
        w.api.posts_for_model("claude-opus-5"),
        1,
        "opus is cooling down"
    );
    let health = health_of(&w.sb, "claude-opus-5");
    assert_eq!(health["class"], "rate_limited");
    let cooldown =
        health["cooldown_until_ms"].as_u64().unwrap() - health["checked_ms"].as_u64().unwrap();
    assert!(
        (119_000..=121_000).contains(&cooldown),
        "a 429 cools for 2 minutes, not {cooldown} ms"
    );
}

#[test]
fn retry_after_sets_the_end_of_the_cooldown() {
    let w = world();
    w.sb.write_config(CLAUDE_THEN_CODEX);
    w.api.on(Rule::model("claude-opus-5").reply(
        Reply::anthropic_error(429, "rate_limit_error", "slow down").header("retry-after", "90"),
    ));

    assert_eq!(w.sb.run(&["-p", "hi"]).code, Some(0));

    let health = health_of(&w.sb, "claude-opus-5");
    let cooldown =
        health["cooldown_until_ms"].as_u64().unwrap() - health["checked_ms"].as_u64().unwrap();
    assert!(
        (89_000..=91_000).contains(&cooldown),
        "retry-after: 90 must cool 90 s, not {cooldown} ms"
    );
    assert_eq!(w.sb.calls("codex").len(), 1);
}

#[test]
fn a_usage_limit_is_quota_and_cools_for_quota_minutes() {
    let w = world();
    w.sb.write_config(&format!("quota_minutes = 7\n{CLAUDE_THEN_CODEX}"));
    w.api
        .on(Rule::model("claude-opus-5").reply(Reply::anthropic_error(
            429,
            "rate_limit_error",
            "You have reached your usage limit",
        )));

    assert_eq!(w.sb.run(&["-p", "hi"]).code, Some(0));

    let health = health_of(&w.sb, "claude-opus-5");
    assert_eq!(health["class"], "quota");
    let cooldown =
        health["cooldown_until_ms"].as_u64().unwrap() - health["checked_ms"].as_u64().unwrap();
    assert!((419_000..=421_000).contains(&cooldown), "{cooldown}");
}

#[test]
fn a_vendor_hanging_on_every_model_costs_one_probe_timeout_not_one_per_rung() {
    let w = world();
    // A short hedge: the probes overlap by design, and this keeps them overlapping far from
    // the timeout whatever the machine's load.
    w.sb.write_config("probe_timeout_seconds = 2\nhedge_ms = 50\n");
    w.api
        .on(Rule::path_contains("/v1/messages").reply(Reply::hang()));

    let run = w.sb.run(&["-p", "hi"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(w.sb.calls("codex").len(), 1);
    // Opus's and sonnet's probes hang at once, so both cost one timeout, not one each;
    // hedged, codex is probed while they hang.
    assert_eq!(w.api.posts(), 3, "{:?}", w.api.post_requests());
    assert_eq!(
        w.api.most_posts_in_flight(),
        3,
        "the probes were not hedged: {}",
        run.stderr
    );
    // Codex runs only once both have failed: every rung above it is said unavailable, by
    // its timeout, before it is used.
    let using = run.stderr.find("[agent] using Codex").expect(&run.stderr);
    let above = &run.stderr[..using];
    assert_eq!(
        above.matches("did not answer within 2.0s").count(),
        4,
        "codex must wait for the rungs above it: {}",
        run.stderr
    );
}

#[test]
fn a_lower_rung_that_answers_first_still_waits_for_the_rungs_above() {
    let w = world();
    w.sb.write_config(&format!("hedge_ms = 50\n{CLAUDE_THEN_CODEX}"));
    // Opus answers only once codex has answered its own probe.
    w.api
        .on(Rule::model("claude-opus-5").reply(Reply::ok().held("codex answered")));

    let command = w.sb.command(&["-p", "hi"]);
    let run = std::thread::scope(|scope| {
        let codex_answered = w.api.releasing("codex answered");
        let run = scope.spawn(|| run_command(command, RUN_TIMEOUT));
        // Both probed, and only one in flight: opus's, which cannot end while held.
        wait::until("codex's probe answered while opus's is held", || {
            w.api.posts_for_model("claude-opus-5") == 1
                && w.api.posts_for_model(CODEX_MODEL) == 1
                && w.api.posts_in_flight() == 1
        });
        codex_answered.now();
        run.join().unwrap()
    });

    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(
        w.sb.calls("claude").len(),
        1,
        "table order wins, not the fastest answer"
    );
    assert!(w.sb.calls("codex").is_empty());
    assert_eq!(
        w.api.posts_for_model(CODEX_MODEL),
        1,
        "codex was probed alongside (hedged)"
    );
    assert!(
        run.stderr.is_empty(),
        "no descent, no notice: {}",
        run.stderr
    );
}

#[test]
fn a_captive_portal_answering_200_is_not_a_live_rung() {
    let w = world();
    w.sb.write_config(CLAUDE_THEN_CODEX);
    w.api.on(Rule::model("claude-opus-5").reply(
        Reply::status(200)
            .header("content-type", "text/html")
            .body("<html><body>Please log in to the hotel Wi-Fi</body></html>"),
    ));

    let run = w.sb.run(&["-p", "hi"]);

    assert_eq!(w.sb.calls("codex").len(), 1, "{run:?}");
    assert!(w.sb.calls("claude").is_empty());
    assert!(
        run.stderr.contains("not with an Anthropic message"),
        "{}",
        run.stderr
    );
}

#[test]
fn an_unset_variable_fails_that_rung_by_name() {
    let w = world();
    w.sb.env_remove("AGENT_PROXY_KEY");
    w.sb.write_config(
        "[[rungs]]\nbackend = \"claude-proxy\"\nprobe_model = \"opus\"\nrun_model = \"opus\"\n\n[[rungs]]\nbackend = \"codex\"\n",
    );

    let run = w.sb.run(&["-p", "hi"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.stderr.contains(
            "[agent] Claude Code via proxy (claude-opus-5) unavailable — AGENT_PROXY_KEY is not set"
        ),
        "{}",
        run.stderr
    );
    assert!(w.sb.calls("claude").is_empty());
    assert_eq!(
        w.api.posts_for_model("claude-opus-5"),
        0,
        "a rung missing its variable is never probed"
    );
}

#[test]
fn no_rung_left_exits_69_listing_why_each_failed() {
    let w = world();
    w.api
        .on(Rule::any().reply(Reply::status(500).body("upstream exploded")));

    let run = w.sb.run(&["-p", "hi"]);

    assert_eq!(run.code, Some(69), "{run:?}");
    assert!(
        run.stderr.contains("agent: no rung is available:"),
        "{}",
        run.stderr
    );
    for line in [
        "Claude Code (its default model): claude-opus-5 unavailable: upstream exploded",
        "Codex (its default model): gpt-test-codex unavailable: upstream exploded",
        "Antigravity (its default model): not installed",
        "Gemini CLI (its default model): gemini-test-pro unavailable: upstream exploded",
    ] {
        assert!(
            run.stderr.contains(line),
            "missing {line:?} in {}",
            run.stderr
        );
    }
    assert!(
        w.sb.calls("claude").is_empty()
            && w.sb.calls("codex").is_empty()
            && w.sb.calls("gemini").is_empty()
    );
}

#[test]
fn an_upstreams_control_and_bidi_characters_reach_neither_the_notice_nor_the_status_rows() {
    let w = world();
    let body = "slow \u{202E}nwod\u{202C} \u{1b}]0;owned\u{7}\u{1b}[2J\u{2066}down\u{200F}";
    w.api
        .on(Rule::model("claude-opus-5").reply(Reply::status(429).body(body)));

    let run = w.sb.run(&["-p", "hi"]);
    let status = w.sb.run(&["--status"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    let notice = run
        .stderr
        .lines()
        .find(|l| l.starts_with("[agent] Claude Code (its default model) unavailable — "))
        .unwrap_or_else(|| panic!("{}", run.stderr));
    assert!(notice.contains("slow nwod down"), "{notice:?}");
    let row = status
        .stdout
        .lines()
        .find(|l| l.contains("claude-opus-5") && l.contains("slow"))
        .unwrap_or_else(|| panic!("{status:?}"));
    for text in [&run.stderr, &status.stdout] {
        let odd: Vec<char> = text
            .chars()
            .filter(|&c| c != '\n' && agent::text::is_unprintable(c))
            .collect();
        assert!(odd.is_empty(), "{odd:?} in {text:?}");
    }
    assert!(row.contains("slow nwod"), "{row:?}");
}
