//! opencode as a rung (issue 32, item 8): its check is one model call, not a session-title
//! call first; and a spent quota — the provider's 429, which opencode retries for about 70 s
//! before it prints the provider's words and exits 1 — is a quota, so with every other rung
//! parked until a known reset the launch ends 75 naming the reopening, as for the other CLIs.

use crate::parking::{claude_login, five_hour, in_hours, write_windows};
use crate::support::{Reply, Rule, Sandbox};
use crate::world::{World, world};

/// The route opencode's OpenAI-compatible provider calls.
const CHAT: &str = "/v1/chat/completions";

/// What OpenAI answers a key at its quota with (429), and opencode prints after `Error: `.
const QUOTA: &str = "You exceeded your current quota, please check your plan and billing details.";

/// A fake `opencode` that calls the mock as the real `opencode run` 1.18.33 does (measured
/// against a local mock): with no `--title`, a title-generation call first, then the
/// prompt's call; with one, the prompt's call alone. A 429 it retries once after a pause
/// (the real one retries five times, 2 s doubling), then prints `Error: <the provider's
/// message>` on stderr and exits 1.
fn opencode_calling(sb: &Sandbox, api_url: &str) {
    let script = format!(
        r#"url='{api_url}{CHAT}'
post() {{ curl -s -o "$calls/$n/body" -w '%{{http_code}}' -X POST -H 'content-type: application/json' -H 'authorization: Bearer sk-opencode-test' -d "$1" "$url"; }}
titled=no
for word in "$@"; do [ "$word" = --title ] && titled=yes; done
[ "$titled" = no ] && post '{{"model":"gpt-x","messages":[{{"role":"system","content":"You are a title generator. You output ONLY a thread title."}},{{"role":"user","content":"hi"}}]}}' >/dev/null
prompt='{{"model":"gpt-x","messages":[{{"role":"user","content":"hi"}}]}}'
status=$(post "$prompt")
if [ "$status" = 429 ]; then sleep 1.3; status=$(post "$prompt"); fi
if [ "$status" = 200 ]; then echo "opencode answered"; exit 0; fi
printf '\033[91m\033[1mError: \033[0m%s\n' "$(sed -n 's/.*"message": *"\([^"]*\)".*/\1/p' "$calls/$n/body")" >&2
exit 1"#
    );
    sb.fake_cli("opencode").script(&script).install();
}

/// The calls that reached opencode's provider.
fn chat_calls(w: &World) -> usize {
    w.api
        .post_requests()
        .iter()
        .filter(|request| request.path == CHAT)
        .count()
}

#[test]
fn one_status_check_of_the_opencode_rung_is_one_call() {
    let w = world();
    w.sb.write_config("[[rungs]]\nbackend = \"opencode\"\n");
    opencode_calling(&w.sb, &w.api.url());

    let status = w.sb.run(&["--status"]);

    assert!(status.stdout.starts_with("OK "), "{status:?}");
    assert_eq!(w.sb.calls("opencode").len(), 1, "{status:?}");
    assert_eq!(chat_calls(&w), 1, "{:?}", w.api.post_requests());
}

#[test]
fn a_spent_opencode_quota_with_every_other_rung_parked_ends_75_naming_the_reopening() {
    let w = world();
    w.sb.write_config(
        "fastfail_seconds = 1\n\n[[rungs]]\nbackend = \"claude\"\nprobe_model = \"opus\"\n\n[[rungs]]\nbackend = \"opencode\"\n",
    );
    opencode_calling(&w.sb, &w.api.url());
    // Claude Code's login is out until its 5-hour reset.
    let reset = in_hours(2);
    write_windows(&w.sb, &claude_login(&w.sb), &[(five_hour(), 100.0, reset)]);
    // opencode answered its check a moment ago; then its provider's quota runs out.
    let status = w.sb.run(&["--status"]);
    assert!(
        status
            .stdout
            .lines()
            .any(|line| line.starts_with("OK ") && line.contains("opencode")),
        "{status:?}"
    );
    w.api
        .on(Rule::path_contains(CHAT).reply(Reply::openai_error(429, "insufficient_quota", QUOTA)));

    let launch = w.sb.run(&["-p", "summarize the log"]);

    assert_eq!(launch.code, Some(75), "{launch:?}");
    assert!(
        launch.stderr.contains(&format!(
            "[agent] opencode (its default model) exited 1 after 1s on its quota: Error: {QUOTA} — skipped for 60 min"
        )),
        "{}",
        launch.stderr
    );
    assert!(
        launch
            .stderr
            .contains("[agent] every rung is parked: Claude Code (its default model) reopens at "),
        "{}",
        launch.stderr
    );
    assert!(
        launch.stderr.contains(") — agent --wait runs it then"),
        "{}",
        launch.stderr
    );
    assert!(w.sb.calls("claude").is_empty(), "{}", launch.stderr);

    // The next launch runs nothing: opencode waits out its quota, Claude Code its window.
    let next = w.sb.run(&["-p", "summarize the log"]);
    assert_eq!(next.code, Some(75), "{next:?}");
    assert_eq!(w.sb.calls("opencode").len(), 2, "{}", next.stderr);
}

#[test]
fn a_spent_opencode_quota_still_gives_a_json_launch_its_result_document() {
    let w = world();
    w.sb.write_config(
        "fastfail_seconds = 1\n\n[[rungs]]\nbackend = \"claude\"\nprobe_model = \"opus\"\n\n[[rungs]]\nbackend = \"opencode\"\n",
    );
    opencode_calling(&w.sb, &w.api.url());
    write_windows(
        &w.sb,
        &claude_login(&w.sb),
        &[(five_hour(), 100.0, in_hours(2))],
    );
    // opencode answered its check a moment ago; then its provider's quota runs out.
    assert_eq!(w.sb.run(&["--status"]).code, Some(0));
    w.api
        .on(Rule::path_contains(CHAT).reply(Reply::openai_error(429, "insufficient_quota", QUOTA)));

    let launch =
        w.sb.run(&["-p", "summarize the log", "--output-format", "json"]);

    assert_eq!(launch.code, Some(75), "{launch:?}");
    let result: serde_json::Value = serde_json::from_str(launch.stdout.trim())
        .unwrap_or_else(|e| panic!("one result document on stdout ({e}): {launch:?}"));
    assert_eq!(result["type"], "result", "{result}");
    assert_eq!(result["is_error"], true, "{result}");
    assert_eq!(result["agent_cli"], "opencode", "{result}");
}

/// What `--status` and `--doctor` say of an opencode installed and never set up.
const NOT_SET_UP: &str = "not set up: no provider logged in, no provider key and none in its settings — log in (opencode auth login) or set a provider's key (ANTHROPIC_API_KEY, OPENAI_API_KEY, …)";

/// A fake `opencode` that answers `--version` at once and would hang for a minute if it
/// were run for anything else.
fn opencode_that_would_hang(sb: &Sandbox) {
    sb.fake_cli("opencode")
        .script(r#"case "$1" in --version) echo 1.18.33;; *) sleep 60;; esac"#)
        .install();
}

/// The ledger's lines (`usage.jsonl`) for `backend`.
fn ledger_lines_of(sb: &Sandbox, backend: &str) -> usize {
    std::fs::read_to_string(sb.state_dir().join("usage.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|call| call["backend"] == backend)
        .count()
}

#[test]
fn an_opencode_never_set_up_is_skipped_with_its_way_in_and_never_started() {
    let w = world();
    // No provider logged in, no provider key in the environment, no settings of its own.
    w.sb.env_remove("GEMINI_API_KEY");
    w.sb.write_config("[[rungs]]\nbackend = \"codex\"\n\n[[rungs]]\nbackend = \"opencode\"\n");
    opencode_that_would_hang(&w.sb);
    std::fs::set_permissions(
        w.sb.state_dir(),
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .unwrap();

    let status = w.sb.run(&["--status"]);
    let doctor = w.sb.run(&["--doctor"]);

    let row = status
        .stdout
        .lines()
        .find(|line| line.contains("opencode"))
        .unwrap_or_else(|| panic!("{status:?}"));
    assert!(row.starts_with("SKIP "), "{row}");
    assert!(row.ends_with(NOT_SET_UP), "{row}");
    assert!(
        status.stdout.starts_with("OK "),
        "codex is checked: {status:?}"
    );
    let ran: Vec<_> =
        w.sb.calls("opencode")
            .into_iter()
            .filter(|call| call.argv != ["--version"])
            .collect();
    assert!(ran.is_empty(), "opencode was started: {ran:?}");
    assert_eq!(
        ledger_lines_of(&w.sb, "opencode"),
        0,
        "a check never run is no call"
    );
    assert!(
        doctor.stdout.contains("SKIP rung 2 opencode"),
        "{}",
        doctor.stdout
    );
    assert_eq!(doctor.code, Some(0), "codex can run: {doctor:?}");
}

/// A fake `opencode` that records where it ran (`cwd`) and whether the folder held what an
/// earlier run of it left there (`warm`), then answers.
fn opencode_noting_its_folder(sb: &Sandbox) {
    sb.fake_cli("opencode")
        .script(
            "pwd > \"$calls/$n/cwd\"\n[ -e .opencode-was-here ] && echo yes > \"$calls/$n/warm\"\ntouch .opencode-was-here\necho answered",
        )
        .install();
}

/// The folder run `n` (1-based) of `cli` ran in, and whether it found an earlier run's mark.
fn folder_of(sb: &Sandbox, cli: &str, n: usize) -> (std::path::PathBuf, bool) {
    let run = sb.calls_dir().join(cli).join(n.to_string());
    let cwd = std::fs::read_to_string(run.join("cwd")).unwrap();
    (cwd.trim().into(), run.join("warm").exists())
}

#[test]
fn a_set_up_opencode_is_checked_in_one_kept_folder_per_home_and_the_second_check_is_warm() {
    let w = world();
    w.sb.env_remove("GEMINI_API_KEY");
    // Logged in to one provider, in its own store.
    let login = r#"{"openai": {"type": "api", "key": "sk-opencode-store"}}"#;
    w.sb.write_file(".local/share/opencode/auth.json", login);
    w.sb.write_config("[[rungs]]\nbackend = \"opencode\"\n");
    opencode_noting_its_folder(&w.sb);

    let first = w.sb.run(&["--status"]);
    let second = w.sb.run(&["--status"]);

    for run in [&first, &second] {
        assert!(run.stdout.starts_with("OK "), "{run:?}");
    }
    let (one, warm_one) = folder_of(&w.sb, "opencode", 1);
    let (two, warm_two) = folder_of(&w.sb, "opencode", 2);
    assert!(
        one.starts_with(w.sb.state_dir()),
        "agent's own folder: {one:?}"
    );
    assert_eq!(one, two, "one folder for both checks");
    assert!(
        !warm_one && warm_two,
        "the second check found the first one's folder"
    );
    assert!(two.is_dir(), "kept after the check: {two:?}");

    // Another home of opencode's (its data directory moved): a folder of its own.
    let other = w.sb.home().join("other-data");
    w.sb.write_file("other-data/opencode/auth.json", login);
    w.sb.env("XDG_DATA_HOME", other.display().to_string());
    let third = w.sb.run(&["--status"]);
    assert!(third.stdout.starts_with("OK "), "{third:?}");
    let (three, warm_three) = folder_of(&w.sb, "opencode", 3);
    assert_ne!(three, one, "two homes never share a folder");
    assert!(!warm_three);
}

#[test]
fn a_quota_cooldown_is_released_by_hand_and_the_next_launch_runs_the_rung_again() {
    let w = world();
    w.sb.write_config("fastfail_seconds = 1\n\n[[rungs]]\nbackend = \"opencode\"\n");
    opencode_calling(&w.sb, &w.api.url());
    w.api
        .on(Rule::path_contains(CHAT).reply(Reply::openai_error(429, "insufficient_quota", QUOTA)));
    w.sb.run(&["-p", "hi"]);
    let ran = w.sb.calls("opencode").len();
    let held = w.sb.run(&["-p", "hi"]);
    assert_eq!(
        w.sb.calls("opencode").len(),
        ran,
        "held by its cooldown: {held:?}"
    );

    let unpark = w.sb.run(&["--unpark", "opencode"]);
    let launch = w.sb.run(&["-p", "hi"]);

    assert_eq!(unpark.code, Some(0), "{unpark:?}");
    assert!(
        unpark
            .stdout
            .starts_with("forgot for rung 1 opencode: quota cooldown: "),
        "{}",
        unpark.stdout
    );
    assert!(unpark.stdout.contains(QUOTA), "{}", unpark.stdout);
    assert!(
        w.sb.calls("opencode").len() > ran,
        "it ran again: {launch:?}"
    );
}
