//! Mistakes in the configuration file, told so a person can fix them: an unknown key (a
//! typo of an optional one, most often) is a warning with a "did you mean" and the command
//! goes on; a wrong value for a known key stops it, naming the key, the form expected, the
//! value found and the line; the doctor reports either and runs every other check.

use crate::support::launched_words;
use crate::world::{CLAUDE_THEN_CODEX, world};

#[test]
fn a_typo_in_an_optional_key_warns_and_the_launch_goes_on() {
    let w = world();
    w.sb.write_config(&format!("probe_cache_secods = 30\n{CLAUDE_THEN_CODEX}"));

    let run = w.sb.run(&["-p", "hi"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(launched_words(&w.sb.calls("claude")[0].argv), ["-p", "hi"]);
    assert!(
        run.stderr
            .contains("[agent] config: unknown key \"probe_cache_secods\" in ")
            && run
                .stderr
                .contains("config.toml:1 — did you mean probe_cache_seconds? (ignored)"),
        "{}",
        run.stderr
    );
}

#[test]
fn reports_warn_of_an_unknown_key_and_still_report() {
    let w = world();
    w.sb.write_config(&format!(
        "{CLAUDE_THEN_CODEX}\n[backends.codex]\ntranslat = false\n"
    ));
    for args in [&["--list"][..], &["--dry-run", "-p", "hi"]] {
        let run = w.sb.run(args);

        assert_eq!(run.code, Some(0), "{args:?}: {run:?}");
        assert!(
            run.stderr
                .contains("unknown key \"backends.codex.translat\" in ")
                && run
                    .stderr
                    .contains("config.toml:10 — did you mean backends.codex.translate? (ignored)"),
            "{args:?}: {}",
            run.stderr
        );
    }
}

#[test]
fn a_string_for_a_number_is_exit_2_naming_the_key_the_form_and_the_line() {
    let w = world();
    w.sb.write_config(&format!(
        "fastfail_seconds = 3\nhedge_ms = \"400\"\n{CLAUDE_THEN_CODEX}"
    ));

    let run = w.sb.run(&["-p", "hi"]);

    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(
        run.stderr.contains(
            "config.toml:2: hedge_ms: expected a number of milliseconds, e.g. hedge_ms = 400 (found \"400\")"
        ),
        "{}",
        run.stderr
    );
    assert!(w.sb.calls("claude").is_empty(), "nothing ran");
}

#[test]
fn a_misspelt_builtin_backend_asks_did_you_mean() {
    let w = world();
    w.sb.write_config("[backends.claud]\nenv = { CLAUDE_CODE_MAX_OUTPUT_TOKENS = \"8000\" }\n");

    let run = w.sb.run(&["--list"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.stderr
            .contains("config: unknown backend \"backends.claud\" in ")
            && run
                .stderr
                .contains("config.toml:1 — did you mean backends.claude?"),
        "{}",
        run.stderr
    );
    // A rung that names it is refused with the same suggestion.
    w.sb.write_config("[[rungs]]\nbackend = \"claud\"\n");
    let run = w.sb.run(&["--list"]);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(
        run.stderr.contains(
            "config.toml:2: rungs[1].backend: unknown backend \"claud\" — did you mean claude?"
        ),
        "{}",
        run.stderr
    );
}

#[test]
fn the_doctor_reports_a_bad_config_and_runs_every_other_check() {
    let w = world();
    w.sb.write_config("hedge_ms = \"400\"\n");

    let run = w.sb.run(&["--doctor"]);

    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(
        run.stdout.contains("FAIL config")
            && run
                .stdout
                .contains("config.toml:1: hedge_ms: expected a number of milliseconds"),
        "{}",
        run.stdout
    );
    for area in [
        "state",
        "binary claude",
        "binary codex",
        "budget",
        "watchdog",
    ] {
        assert!(
            run.stdout.lines().any(|line| line
                .get(4..)
                .unwrap_or_default()
                .trim_start()
                .starts_with(area)),
            "the doctor still checks {area}: {}",
            run.stdout
        );
    }
}

#[test]
fn the_doctor_counts_an_unknown_key_as_a_problem() {
    let w = world();
    w.sb.write_config("probe_cache_secods = 30\n");

    let run = w.sb.run(&["--doctor"]);

    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(
        run.stdout
            .lines()
            .any(|line| line.starts_with("FAIL config")
                && line.contains("unknown key \"probe_cache_secods\"")
                && line.contains("did you mean probe_cache_seconds?")),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("binary claude"), "{}", run.stdout);
}
