//! A backend's own arguments (issue 32, item 2): `args`, `headless_args` and
//! `interactive_args` in `[backends.NAME]` reach that backend's CLI only, in the form they
//! name, and `--dry-run` shows them; a launch the folder refuses (`codex exec` outside a git
//! repository) says why and the fix as `--status` does, goes on to the next rung, and
//! records nothing against the rung. The fake Codex refuses as the real 0.171 does.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::logins::logged_in;
use crate::support::Sandbox;

const SKIP: &str = "--skip-git-repo-check";

/// The real `codex exec`'s refusal outside a git repository, as captured.
const REFUSAL: &str = "Not inside a trusted directory and --skip-git-repo-check was not specified.";

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/self_check")
        .join(name)
}

/// A fake `codex` that refuses as the real one does (its words on stderr, exit 1) when
/// `exec` runs in no git repository without `--skip-git-repo-check`; else its check (`--json`)
/// plays the captured answer, and a launch answers.
fn refusing_codex(sb: &Sandbox) {
    let stem = fixture("codex-answered");
    let file = |ext: &str| stem.with_extension(ext).display().to_string();
    sb.fake_cli("codex")
        .script(&format!(
            r#"pwd > "$calls/$n/cwd"
ok=no; d=$(pwd)
while :; do [ -e "$d/.git" ] && ok=yes && break; [ "$d" = / ] && break; d=$(dirname "$d"); done
case " $* " in *' {SKIP} '*) ok=yes;; esac
if [ "$1" = exec ] && [ "$ok" = no ]; then
  echo 'Reading additional input from stdin...' >&2
  echo '{REFUSAL}' >&2
  exit 1
fi
case " $* " in *' --json '*) cat '{}'; cat '{}' >&2; exit 0;; esac
echo 'codex answered'"#,
            file("stdout"),
            file("stderr"),
        ))
        .install();
}

/// Logged in to every CLI, the fake Codex refusing as the real one, run from a home that is
/// no git repository (cron's `~`).
fn night() -> (Sandbox, crate::support::MockApi) {
    let (sb, api) = logged_in();
    std::fs::remove_dir(sb.home().join(".git")).unwrap();
    refusing_codex(&sb);
    (sb, api)
}

const CODEX_ARGS: &str = "[backends.codex]\nheadless_args = [\"--skip-git-repo-check\"]\ninteractive_args = [\"--search\"]\n";

#[test]
fn headless_args_reach_only_codex_exec_and_show_in_dry_run() {
    let (sb, _api) = night();
    sb.write_config(&format!(
        "{CODEX_ARGS}[[rungs]]\nbackend = \"codex\"\n[[rungs]]\nbackend = \"gemini\"\n"
    ));

    let dry = sb.run(&["--dry-run", "-p", "hi"]);
    let json = sb.run(&["--dry-run", "--json", "-p", "hi"]);
    let screen = sb.run(&["--dry-run", "hi"]);
    let launch = sb.run(&["-p", "hi"]);

    assert_eq!(dry.code, Some(0), "{dry:?}");
    assert!(
        dry.stdout.contains(&format!("exec {SKIP} -- hi")),
        "{dry:?}"
    );
    assert!(
        dry.stdout
            .contains(&format!("[backends.codex] headless_args → {SKIP}")),
        "{dry:?}"
    );
    assert!(!dry.stdout.contains("--search"), "{dry:?}");
    let doc: Value = serde_json::from_str(&json.stdout).unwrap_or_else(|e| panic!("{e}: {json:?}"));
    assert!(doc.to_string().contains(SKIP), "{doc}");
    // The interactive form gets its own, not the headless one's.
    assert!(screen.stdout.contains("--search -- hi"), "{screen:?}");
    assert!(!screen.stdout.contains(SKIP), "{screen:?}");
    // The launch: Codex ran from ~ and answered; Gemini CLI was never needed.
    assert_eq!(launch.code, Some(0), "{launch:?}");
    assert_eq!(launch.stdout, "codex answered\n", "{launch:?}");
    let runs = sb.calls("codex");
    let last = runs.last().expect("codex ran");
    assert_eq!(
        last.argv.first().map(String::as_str),
        Some("exec"),
        "{last:?}"
    );
    assert_eq!(
        last.argv.iter().filter(|a| *a == SKIP).count(),
        1,
        "{last:?}"
    );
    for run in sb.calls("gemini") {
        assert!(!run.argv.iter().any(|a| a == SKIP), "{run:?}");
    }
}

#[test]
fn interactive_args_go_only_on_the_interactive_form() {
    let (sb, _api) = night();
    sb.write_config(&format!("{CODEX_ARGS}[[rungs]]\nbackend = \"codex\"\n"));

    let screen = sb.run(&["--use", "codex", "hi"]);

    assert_eq!(screen.code, Some(0), "{screen:?}");
    let argv = &sb.calls("codex")[0].argv;
    assert_eq!(argv, &["--search", "--", "hi"], "{argv:?}");
}

#[test]
fn a_night_job_from_home_with_codex_headless_args_sends_claude_no_such_flag() {
    let (sb, _api) = night();
    sb.write_config(&format!(
        "{CODEX_ARGS}[[rungs]]\nbackend = \"claude\"\n[[rungs]]\nbackend = \"codex\"\n"
    ));

    // Claude Code up: it runs, with none of Codex's words.
    let up = sb.run(&["-p", "summarize"]);
    assert_eq!(up.code, Some(0), "{up:?}");
    assert_eq!(up.stdout, "claude answered\n", "{up:?}");
    for run in sb.calls("claude") {
        assert!(!run.argv.iter().any(|a| a == SKIP), "{run:?}");
    }
    assert!(
        sb.calls("codex")
            .iter()
            .all(|run| run.argv.first().map(String::as_str) != Some("exec"))
    );

    // Claude Code down: the same line reaches Codex, which starts from ~.
    sb.fake_cli("claude").stderr("boom\n").exit(1).install();
    let down = sb.run(&["-p", "summarize"]);
    assert_eq!(down.code, Some(0), "{down:?}");
    assert_eq!(down.stdout, "codex answered\n", "{down:?}");
    assert!(!down.stderr.contains(REFUSAL), "{down:?}");
}

#[test]
fn a_folder_refusal_says_why_and_the_fix_runs_the_next_rung_and_leaves_codex_healthy() {
    let (sb, _api) = night();
    sb.write_config(
        "[[rungs]]\nbackend = \"claude\"\n[[rungs]]\nbackend = \"codex\"\n[[rungs]]\nbackend = \"gemini\"\n",
    );
    // Claude Code is limited for this launch only: the launch comes down to Codex.
    sb.fake_cli("claude")
        .script(&format!(
            "case \" $* \" in *' --output-format json '*) cat '{}';; *) echo boom >&2; exit 1;; esac",
            fixture("claude-answered.stdout").display()
        ))
        .install();
    let status = sb.run(&["--status"]);

    let launch = sb.run(&["-p", "hi"]);

    assert_eq!(launch.code, Some(0), "gemini answered: {launch:?}");
    assert_eq!(launch.stdout, "gemini answered\n", "{launch:?}");
    let home = sb.home().display().to_string();
    let why = format!(
        "codex exec starts only inside a git repository and {home} is in none — run agent from inside a git repository"
    );
    let notice = launch
        .stderr
        .lines()
        .find(|line| line.contains("Codex") && line.contains("refused this folder"))
        .unwrap_or_else(|| panic!("no folder notice: {launch:?}"));
    assert!(notice.contains(&why), "{notice}");
    assert!(
        !launch
            .stderr
            .contains("treating as unavailable\n[agent] using Gemini"),
        "{launch:?}"
    );
    // `--status` from the same folder says the same why and fix.
    let fact = notice.split_once(": ").map(|(_, fact)| fact).unwrap();
    assert!(status.stdout.contains(fact), "{fact}\n{status:?}");

    // Nothing recorded against Codex: from a repository it is proved and not failed.
    std::fs::create_dir(sb.home().join(".git")).unwrap();
    let check = sb.run(&["--check-fallback"]);
    let codex = check
        .stdout
        .lines()
        .find(|line| line.contains(" codex "))
        .unwrap_or_else(|| panic!("no codex row: {check:?}"));
    assert!(codex.trim_start().starts_with("OK"), "{check:?}");
    assert!(!codex.contains("failed at launch"), "{check:?}");
    let feed = json!({"model": {"display_name": "Opus"}}).to_string();
    let (_, line, _) = crate::statusline::statusline(&sb, &feed);
    assert!(!line.contains("DEGRADED"), "{line}");
}

#[test]
fn a_backends_own_arguments_are_checked_like_every_other_key() {
    let (sb, _api) = night();

    sb.write_config("[backends.codex]\nheadless_arg = [\"--skip-git-repo-check\"]\n");
    let typo = sb.run(&["--dry-run", "-p", "hi"]);
    sb.write_config("[backends.codex]\nheadless_args = \"--skip-git-repo-check\"\n");
    let string = sb.run(&["--dry-run", "-p", "hi"]);
    sb.write_config("[backends.codex]\nargs = [\"\"]\n");
    let empty = sb.run(&["--dry-run", "-p", "hi"]);

    assert!(
        typo.stderr
            .contains("config.toml:2 — did you mean backends.codex.headless_args? (ignored)"),
        "{typo:?}"
    );
    assert_eq!(string.code, Some(2), "{string:?}");
    assert!(
        string.stderr.contains(
            "config.toml:2: backends.codex.headless_args: expected a list of the CLI's own words, e.g. headless_args = [\"--skip-git-repo-check\"] (found \"--skip-git-repo-check\")"
        ),
        "{string:?}"
    );
    assert_eq!(empty.code, Some(2), "{empty:?}");
    assert!(
        empty
            .stderr
            .contains("config.toml:2: backends.codex.args: an empty word"),
        "{empty:?}"
    );
    assert!(sb.calls("codex").is_empty());
}
