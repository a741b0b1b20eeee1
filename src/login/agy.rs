//! Antigravity (`agy`): the version gate for asking it about its own quota, and reading
//! that answer (research §4.2). agy was not available to check anything against: every
//! fact here is from the research doc's public sources.
//!
//! - `agy --print /usage --output-format json` reports the login's quota with no model
//!   call **from agy 1.1.11 on** (a Google maintainer in google-antigravity/antigravity-cli
//!   #590; CodexBar gates on the same version). On older agy the text `/usage` is sent to
//!   the model **as a prompt** — so agent asks only when `agy --version` shows ≥ 1.1.11, and
//!   a version it cannot read counts as too old.
//! - UNCONFIRMED: the output of `agy --version` (its format is not documented; any
//!   `MAJOR.MINOR.PATCH` in it is taken).
//! - UNCONFIRMED (not documented as stable, antigravity-cli #1045): the JSON, captured from
//!   agy 1.2.14 — `{"command": {"name": "usage", "data": {"groups": [{"name": "Gemini
//!   Models", "buckets": [{"id": "gemini-5h", "window": "5h", "remaining_fraction":
//!   0.83, "reset_time": "2026-10-02T16:59:24Z"}, …]}, {"name": "Claude and GPT models",
//!   …}]}}}`. Each group is a pool of models with its own 5-hour and weekly windows.
//! - agy exits 0 even when its quota is spent (research §4.3): its exit code says nothing.

use std::process::Command;
use std::time::Duration;

use jiff::Timestamp;
use serde_json::Value;

use super::Login;
use super::asking::{Answerer, AskWindows, Asked, Asking};
use super::window::{Scope, Source, WEEK_MINUTES, Window};
use super::{OwnStore, Readers};
use crate::child::{Group, Job};

/// The first agy whose `/usage` is a command, not a prompt.
pub const FIRST_USAGE_VERSION: Version = Version(1, 1, 11);

/// A `MAJOR.MINOR.PATCH` version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version(pub u32, pub u32, pub u32);

/// The version in `agy --version`'s output: the first `MAJOR.MINOR.PATCH` (with an
/// optional `v`) in it.
pub fn parse_version(output: &str) -> Option<Version> {
    output
        .split(|c: char| c.is_whitespace() || matches!(c, ',' | '(' | ')' | '/' | '@'))
        .find_map(|word| {
            let word = word.trim_start_matches(['v', 'V']);
            let core = word.split(['-', '+']).next()?;
            let mut parts = core.split('.');
            let version = Version(
                parts.next()?.parse().ok()?,
                parts.next()?.parse().ok()?,
                parts.next()?.parse().ok()?,
            );
            parts.next().is_none().then_some(version)
        })
}

/// Whether `agy --print /usage --output-format json` may be run for this `agy --version`
/// output: only on a version known to treat it as a command. Never on an unreadable one.
pub fn usage_command_supported(version_output: &str) -> bool {
    parse_version(version_output).is_some_and(|v| v >= FIRST_USAGE_VERSION)
}

/// The arguments that ask agy for its quota (after the version gate).
pub const USAGE_ARGS: [&str; 4] = ["--print", "/usage", "--output-format", "json"];

/// Asks agy about its quota when its version allows (`--version` first, then
/// [`USAGE_ARGS`]), as the rung will run it: the windows its `/usage` names. An older or
/// unreadable version is asked nothing more, since it would send `/usage` to the model.
pub fn ask_windows(asking: &Asking) -> Asked {
    let asking_agy = |args: &[&str]| {
        let mut command = crate::child_env::command(asking.binary);
        command
            .args(args)
            .envs(asking.env.iter().map(|(k, v)| (k, v)));
        for name in asking.env_remove {
            command.env_remove(name);
        }
        command
    };
    let version = capture(&mut asking_agy(&["--version"]), asking.timeout);
    if !version.is_some_and(|v| usage_command_supported(&v)) {
        let Version(major, minor, patch) = FIRST_USAGE_VERSION;
        return Asked::Nothing(format!(
            "agy older than {major}.{minor}.{patch} cannot report its quota without a prompt"
        ));
    }
    match capture(&mut asking_agy(&USAGE_ARGS), asking.timeout)
        .and_then(|text| parse_usage(&text, asking.now))
    {
        Some(windows) => Asked::Windows(windows),
        None => Asked::Nothing("agy /usage gave no windows".to_string()),
    }
}

/// A command's stdout when it ran to success within `timeout` — on a pseudo-terminal when
/// agy prints nothing through a pipe (its adapter's `needs_terminal`).
fn capture(command: &mut Command, timeout: Duration) -> Option<String> {
    let job = Job::new(timeout, Group::Own).terminal(crate::adapter::agy::CLI.needs_terminal);
    let output = crate::child::run(command, &job).ok()?.output().ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).into_owned())
}

/// The windows in agy's `/usage` JSON, observed `now`; `None` when it is not that JSON.
pub fn parse_usage(text: &str, now: Timestamp) -> Option<Vec<Window>> {
    let value: Value = serde_json::from_str(text.trim()).ok()?;
    let groups = value.pointer("/command/data/groups")?.as_array()?;
    Some(
        groups
            .iter()
            .flat_map(|group| {
                let family = group.get("name").and_then(Value::as_str).map(pool_family);
                group
                    .get("buckets")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(move |bucket| bucket_window(bucket, family.clone(), now))
            })
            .collect(),
    )
}

fn bucket_window(bucket: &Value, family: Option<String>, now: Timestamp) -> Option<Window> {
    let remaining = bucket.get("remaining_fraction")?.as_f64()?;
    let resets_at: Timestamp = bucket.get("reset_time")?.as_str()?.parse().ok()?;
    let minutes = window_minutes(bucket.get("window")?.as_str()?)?;
    Window::new(
        Scope::from_minutes(minutes, family),
        (1.0 - remaining) * 100.0,
        resets_at,
        Source::AgyUsage,
        now,
    )
}

/// `5h`, `weekly`, `24h`, `7d` in minutes.
fn window_minutes(window: &str) -> Option<u64> {
    let window = window.trim().to_lowercase();
    match window.as_str() {
        "weekly" | "week" => return Some(WEEK_MINUTES),
        "daily" | "day" => return Some(24 * 60),
        _ => {}
    }
    let (number, unit) = window.split_at(window.find(|c: char| !c.is_ascii_digit())?);
    let number: u64 = number.parse().ok()?;
    match unit {
        "m" | "min" => Some(number),
        "h" => number.checked_mul(60),
        "d" => number.checked_mul(24 * 60),
        "w" => number.checked_mul(WEEK_MINUTES),
        _ => None,
    }
}

/// A pool's name as a model family: "Gemini Models" → `gemini`, "Claude and GPT models"
/// → `claude|gpt` (see [`super::window::family_matches`]).
pub fn pool_family(name: &str) -> String {
    let lower = name.to_lowercase();
    let words: Vec<&str> = lower
        .split_whitespace()
        .filter(|w| !matches!(*w, "models" | "model"))
        .collect();
    words
        .join(" ")
        .split([',', '&', '/'])
        .flat_map(|part| part.split(" and "))
        .map(str::trim)
        .filter(|part| !part.is_empty() && *part != "and")
        .collect::<Vec<_>>()
        .join("|")
}

/// What agent reads of Antigravity's files. Where agy keeps its login is not confirmed
/// (research §4.1): an installed agy is taken as logged in, its windows come from its own
/// `/usage`; where it records its model is UNCONFIRMED (research §4.3).
pub const READERS: Readers = Readers {
    cli: &crate::adapter::agy::CLI,
    own_store: |_env| {
        Some(OwnStore::Login(Login {
            plan: None,
            tier: None,
            expires_at: None,
            token_present: true,
        }))
    },
    refused_login: super::serves_every_login,
    last_model: |_env| None,
    run_actions: super::no_run_actions,
    run_windows: None,
    run_session: None,
    session_costs_a_run: false,
    session_in_output: None,
    limit_in_output: None,
    // Its quota read is its probe, run by the probe (`launch::own_quota`).
    ask_windows: Some(AskWindows {
        what: "agy /usage",
        answerer: Answerer::Cli,
        ask: ask_windows,
    }),
    // Where agy records its calls, if it does, is not known (research §4.3).
    calls: None,
};

#[cfg(test)]
#[allow(clippy::float_cmp)] // figures parsed, not computed
mod tests {
    use super::*;

    /// As captured from agy 1.2.14 (research §4.2).
    const USAGE: &str = r#"{"command":{"name":"usage","data":{"groups":[
      {"name":"Gemini Models","buckets":[
        {"id":"gemini-weekly","window":"weekly","remaining_fraction":1,"reset_time":"2026-10-09T15:00:14Z"},
        {"id":"gemini-5h","window":"5h","remaining_fraction":0.835075318813324,"reset_time":"2026-10-02T16:59:24Z"}]},
      {"name":"Claude and GPT models","buckets":[
        {"id":"3p-5h","window":"5h","remaining_fraction":0.0,"reset_time":"2026-10-02T21:40:32Z"}]}]}}}"#;

    /// After every window of the capture began (its weekly window resets 2026-10-09T15:00).
    fn now() -> Timestamp {
        "2026-10-02T17:00:00Z".parse().unwrap()
    }

    #[test]
    fn only_a_version_known_to_take_usage_as_a_command_is_asked() {
        for (output, supported) in [
            ("agy 1.1.11", true),
            ("1.2.14", true),
            ("Antigravity CLI v1.10.0 (abc123)", true),
            ("agy 2.0.0-beta.1", true),
            ("agy 1.1.10", false),
            ("agy 1.0.10", false),
            ("agy version unknown", false),
            ("", false),
            ("1.2", false),
        ] {
            assert_eq!(usage_command_supported(output), supported, "{output:?}");
        }
        assert_eq!(parse_version("agy/1.2.3"), Some(Version(1, 2, 3)));
    }

    #[test]
    fn each_pool_gives_its_windows_by_length_and_used_is_one_minus_remaining() {
        let windows = parse_usage(USAGE, now()).unwrap();
        assert_eq!(windows.len(), 3);
        assert_eq!(
            windows[0].scope,
            Scope::ModelWeekly {
                family: "gemini".into()
            }
        );
        assert_eq!(windows[0].used_percent, 0.0);
        assert_eq!(
            windows[1].scope,
            Scope::ModelFiveHour {
                family: "gemini".into()
            }
        );
        assert!((windows[1].used_percent - 16.492_468_118_667_6).abs() < 1e-9);
        let third_party = &windows[2];
        assert!(third_party.is_full());
        assert!(third_party.scope.applies_to_model("claude-sonnet-4-5"));
        assert!(third_party.scope.applies_to_model("gpt-oss-120b"));
        assert!(!third_party.scope.applies_to_model("gemini-3-pro"));
        assert_eq!(third_party.source, Source::AgyUsage);
        assert_eq!(
            third_party.resets_at,
            "2026-10-02T21:40:32Z".parse().unwrap()
        );
    }

    #[test]
    fn text_that_is_not_the_usage_json_is_nothing_and_odd_buckets_are_skipped() {
        assert_eq!(parse_usage("You are not signed in.", now()), None);
        assert_eq!(parse_usage(r#"{"event":"result"}"#, now()), None);
        let odd = r#"{"command":{"data":{"groups":[{"name":"X","buckets":[
            {"window":"fortnight","remaining_fraction":0.5,"reset_time":"2026-10-02T16:59:24Z"},
            {"window":"5h","remaining_fraction":"half","reset_time":"2026-10-02T16:59:24Z"},
            {"window":"24h","remaining_fraction":0.5,"reset_time":"2026-10-02T16:59:24Z"}]}]}}}"#;
        let windows = parse_usage(odd, now()).unwrap();
        assert_eq!(windows.len(), 1);
        assert_eq!(
            windows[0].scope,
            Scope::Other {
                minutes: 1440,
                family: Some("x".into())
            }
        );
    }

    #[test]
    fn pool_names_become_families() {
        assert_eq!(pool_family("Gemini Models"), "gemini");
        assert_eq!(pool_family("Claude and GPT models"), "claude|gpt");
        assert_eq!(pool_family("Claude, GPT & Grok models"), "claude|gpt|grok");
    }
}
