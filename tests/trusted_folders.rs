//! A report never runs a folder's code (issue 28, DESIGN §17, §23): `--status`,
//! `--check-fallback`, the dashboard's "probe now" and the watchdog run a CLI in the folder
//! a launch would use only when that CLI's own trust record trusts it; else in a scratch
//! directory agent owns, with the folder's settings, hooks and MCP servers off; and a
//! folder a launch would be refused in is reported as that fact with nothing run. The CLIs
//! are fakes that record where they ran and play what the real ones printed
//! (`tests/fixtures/self_check/`).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::logins::logged_in;
use crate::support::{Invocation, MockApi, Sandbox};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/self_check")
        .join(name)
}

/// A fake `cli` that records the directory it ran in (`cwd` beside its run) and plays the
/// fixture `play` (`claude-answered`: its stdout, stderr and exit code).
fn install(sb: &Sandbox, cli: &str, play: &str) {
    let stem = fixture(play);
    let file = |ext: &str| stem.with_extension(ext).display().to_string();
    let code = std::fs::read_to_string(file("exit")).unwrap_or_else(|_| "0".into());
    sb.fake_cli(cli)
        .script(&format!(
            "pwd > \"$calls/$n/cwd\"\ncat '{}'; cat '{}' >&2; exit {}",
            file("stdout"),
            file("stderr"),
            code.trim()
        ))
        .install();
}

/// Where each run of `cli` ran, oldest first.
fn cwds(sb: &Sandbox, cli: &str) -> Vec<PathBuf> {
    (1..=sb.calls(cli).len())
        .map(|n| {
            let cwd =
                std::fs::read_to_string(sb.calls_dir().join(cli).join(format!("{n}/cwd"))).unwrap();
            PathBuf::from(cwd.trim())
        })
        .collect()
}

/// Logged in to every CLI, in a home no CLI's record trusts and that is no git repository.
fn untrusted() -> (Sandbox, MockApi) {
    let (sb, api) = logged_in();
    for file in [
        ".claude.json",
        ".codex/config.toml",
        ".gemini/trustedFolders.json",
    ] {
        std::fs::remove_file(sb.home().join(file)).unwrap();
    }
    std::fs::remove_dir(sb.home().join(".git")).unwrap();
    (sb, api)
}

/// The line of `--status` naming `rung`.
fn line_of<'a>(text: &'a str, rung: &str) -> &'a str {
    text.lines()
        .find(|line| line.contains(&format!(" {rung} ")) || line.contains(&format!(" {rung} /")))
        .unwrap_or_else(|| panic!("no {rung} in {text}"))
}

/// A cloned repository that would run its code in any CLI that loads its settings: a hook
/// that leaves a marker, a base URL of its own, an MCP server that leaves a marker.
fn hostile_repo(sb: &Sandbox, name: &str) -> PathBuf {
    let repo = sb.set_cwd(name);
    let marker = sb.root().join(format!("{name}-ran"));
    let hook = json!({"type": "command", "command": format!("touch '{}'", marker.display())});
    sb.write_file(
        &format!("{name}/.claude/settings.json"),
        &json!({
            "hooks": {"SessionStart": [{"hooks": [hook]}]},
            "env": {"ANTHROPIC_BASE_URL": "http://127.0.0.1:9"},
        })
        .to_string(),
    );
    sb.write_file(
        &format!("{name}/opencode.json"),
        &json!({"mcp": {"x": {"type": "local", "command": ["touch", marker]}}}).to_string(),
    );
    repo
}

/// `--status` in a hostile repository of `world`'s on a Claude Code login rung that
/// answers: the rung is proved (`OK`) either way.
fn claude_status_in_a_repo(world: (Sandbox, MockApi)) -> (Sandbox, PathBuf) {
    let (sb, _api) = world;
    sb.write_config("[[rungs]]\nbackend = \"claude\"\nprobe_model = \"opus\"\n");
    install(&sb, "claude", "claude-answered");
    let repo = hostile_repo(&sb, "repo");
    let status = sb.run(&["--status"]);
    assert!(
        line_of(&status.stdout, "claude").starts_with("OK "),
        "{status:?}"
    );
    (sb, repo)
}

#[test]
fn claude_codes_check_runs_where_it_trusts_else_in_scratch_with_the_folders_settings_off() {
    // Trusted: the folder a launch would use, with nothing added.
    let (sb, repo) = claude_status_in_a_repo(logged_in());
    assert_eq!(cwds(&sb, "claude"), [repo], "trusted: the check runs there");
    let argv = &sb.calls("claude")[0].argv;
    assert!(!argv.iter().any(|a| a == "--setting-sources"), "{argv:?}");

    // Not trusted (no record names it): a scratch directory of agent's, gone after, and
    // Claude Code told to load only the user's settings and no MCP server.
    let (sb, repo) = claude_status_in_a_repo(untrusted());
    let ran_in = cwds(&sb, "claude");
    assert_eq!(ran_in.len(), 1, "{ran_in:?}");
    assert_ne!(ran_in[0], repo, "never in the untrusted repository");
    assert!(
        ran_in[0].starts_with(sb.state_dir()),
        "in agent's own directory: {ran_in:?}"
    );
    assert!(!ran_in[0].exists(), "removed after: {ran_in:?}");
    let argv = &sb.calls("claude")[0].argv;
    let words: Vec<&str> = argv.iter().map(String::as_str).collect();
    assert!(
        words.windows(2).any(|w| w == ["--setting-sources", "user"])
            && words.contains(&"--strict-mcp-config"),
        "{argv:?}"
    );
}

#[test]
fn opencodes_probe_runs_in_agents_scratch_with_the_folders_opencode_json_off() {
    let (sb, _api) = untrusted();
    sb.write_config("[[rungs]]\nbackend = \"opencode\"\n");
    sb.fake_cli("opencode")
        .script("pwd > \"$calls/$n/cwd\"\necho answered")
        .install();
    let repo = hostile_repo(&sb, "repo");

    let status = sb.run(&["--status"]);
    let json = sb.run(&["--status", "--json"]);

    assert!(
        line_of(&status.stdout, "opencode").starts_with("OK "),
        "{status:?}"
    );
    let rows: Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(rows[0]["state"], "ok", "{rows}");
    let runs = sb.calls("opencode");
    assert_eq!(runs.len(), 2, "one probe per report");
    for (run, cwd) in runs.iter().zip(cwds(&sb, "opencode")) {
        assert_ne!(cwd, repo, "never in the repository");
        assert!(cwd.starts_with(sb.state_dir()), "{cwd:?}");
        assert_eq!(
            run.env
                .get("OPENCODE_DISABLE_PROJECT_CONFIG")
                .map(String::as_str),
            Some("true"),
            "its project settings off: {:?}",
            run.env
        );
    }
}

/// Gemini CLI's login rung alone.
const GEMINI: &str = "[[rungs]]\nbackend = \"gemini\"\n";

fn check_runs(runs: &[Invocation]) -> usize {
    runs.iter()
        .filter(|run| run.argv.iter().any(|a| a == "json"))
        .count()
}

#[test]
fn a_folder_gemini_cli_would_refuse_is_a_fact_in_the_report_with_nothing_run_and_advice_naming_it()
{
    let (sb, _api) = untrusted();
    sb.write_config(GEMINI);
    install(&sb, "gemini", "gemini-answered");
    let repo = sb.set_cwd("repo");

    let status = sb.run(&["--status"]);
    let check = sb.run(&["--check-fallback", "--json"]);

    let line = line_of(&status.stdout, "gemini");
    assert!(line.starts_with("FAIL "), "{status:?}");
    let fact = format!(
        "a launch here would be refused: gemini does not trust this folder ({})",
        repo.display()
    );
    assert!(line.contains(&fact), "{line}");
    // The advice names the folder, in Gemini CLI's own way; never a switch for every folder.
    let (_, advice) = line.rsplit_once(" — ").expect("advice");
    assert!(
        advice.contains(&format!("trust {} in Gemini CLI", repo.display())),
        "{advice}"
    );
    for global in ["GEMINI_CLI_TRUST_WORKSPACE", "folderTrust", "--skip-trust"] {
        assert!(!advice.contains(global), "{advice}");
    }
    let doc: Value = serde_json::from_str(&check.stdout).unwrap();
    let gemini = &doc["primary"][0];
    assert_eq!(gemini["state"], "failed", "{doc}");
    assert!(
        gemini
            .to_string()
            .contains("a launch here would be refused"),
        "{doc}"
    );
    assert_eq!(check_runs(&sb.calls("gemini")), 0, "nothing ran for it");

    // Trusted the way the advice says: the next report runs it there.
    sb.write_file(
        ".gemini/trustedFolders.json",
        &json!({ repo.to_string_lossy(): "TRUST_FOLDER" }).to_string(),
    );
    let status = sb.run(&["--status"]);
    assert!(
        line_of(&status.stdout, "gemini").starts_with("OK "),
        "{status:?}"
    );
    assert_eq!(cwds(&sb, "gemini"), [repo]);
}

#[test]
fn codex_outside_a_git_repository_is_a_fact_and_in_an_untrusted_one_is_checked_in_scratch() {
    let (sb, _api) = untrusted();
    sb.write_config("[[rungs]]\nbackend = \"codex\"\n");
    install(&sb, "codex", "codex-answered");
    let repo = sb.set_cwd("repo");

    let outside = sb.run(&["--status"]);
    assert!(
        line_of(&outside.stdout, "codex").contains(&format!(
            "a launch here would be refused: codex exec starts only inside a git repository and {} is in none",
            repo.display()
        )),
        "{outside:?}"
    );
    assert_eq!(sb.calls("codex").len(), 0, "nothing ran for it");

    std::fs::create_dir(repo.join(".git")).unwrap();
    let inside = sb.run(&["--status"]);
    assert!(
        line_of(&inside.stdout, "codex").starts_with("OK "),
        "{inside:?}"
    );
    let ran_in = cwds(&sb, "codex");
    assert_eq!(ran_in.len(), 1);
    assert!(ran_in[0].starts_with(sb.state_dir()), "{ran_in:?}");
    // Only in agent's own empty directory does it skip its git guard.
    assert!(
        sb.calls("codex")[0]
            .argv
            .iter()
            .any(|a| a == "--skip-git-repo-check"),
        "{:?}",
        sb.calls("codex")[0].argv
    );
}

#[test]
fn the_dashboards_probe_now_goes_through_the_same_door() {
    let (sb, _api) = untrusted();
    sb.write_config(&format!("{GEMINI}\n[[rungs]]\nbackend = \"opencode\"\n"));
    install(&sb, "gemini", "gemini-answered");
    sb.fake_cli("opencode")
        .script("pwd > \"$calls/$n/cwd\"\necho answered")
        .install();
    let repo = hostile_repo(&sb, "repo");
    let dashboard = crate::dashboard::Dashboard::start(&sb);
    let session = dashboard.log_in();
    let page = crate::dashboard::get(&dashboard.addr, "/", &session);
    let form = page
        .body
        .split("name=\"form\" value=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("a form token in the page")
        .to_string();
    let body = format!("form={form}");

    let answer = crate::support::relay::raw(
        &dashboard.addr,
        &format!(
            "POST /probe HTTP/1.1\nhost: {}\ncontent-type: application/x-www-form-urlencoded\ncontent-length: {}\nconnection: close\n{session}",
            dashboard.addr,
            body.len()
        ),
        &body,
    );

    assert_eq!(answer.status, 303, "{answer:?}");
    assert_eq!(
        check_runs(&sb.calls("gemini")),
        0,
        "the refused folder ran nothing"
    );
    let ran_in = cwds(&sb, "opencode");
    assert_eq!(ran_in.len(), 1, "{ran_in:?}");
    assert!(
        ran_in[0].starts_with(sb.state_dir()) && ran_in[0] != repo,
        "{ran_in:?}"
    );
    let rows = crate::dashboard::get(&dashboard.addr, "/status.json", &session).json();
    let gemini = crate::support::status_row(&rows, "gemini");
    assert!(
        gemini["reason"]
            .as_str()
            .is_some_and(|r| r.contains("a launch here would be refused: gemini does not trust")),
        "{rows}"
    );
}

/// A fake opencode that does with a folder's plugins what the real one does: it looks for
/// `.opencode/plugin/` from `PWD` upwards (opencode 1.18 finds its project from the `PWD`
/// it was given, not from its working directory) and runs every plugin it finds, then
/// answers. The `PWD` it was given is read from its own start environment: a shell
/// replaces a `PWD` that does not name its directory before the script sees it, Node does
/// not.
fn opencode_that_loads_plugins(sb: &Sandbox) {
    sb.fake_cli("opencode")
        .script(
            r#"pwd > "$calls/$n/cwd"
d=$(tr '\0' '\n' < /proc/$$/environ | sed -n 's/^PWD=//p')
while [ -n "$d" ] && [ "$d" != / ]; do
  for plugin in "$d"/.opencode/plugin/*.sh; do [ -f "$plugin" ] && sh "$plugin"; done
  d=$(dirname "$d")
done
echo answered"#,
        )
        .install();
}

/// A cloned repository with an opencode plugin that leaves a marker when it runs; returns
/// the repository and the marker's path.
fn repo_with_a_plugin(sb: &Sandbox) -> (PathBuf, PathBuf) {
    let repo = sb.set_cwd("cloned");
    let marker = sb.root().join("plugin-ran");
    sb.write_file(
        "cloned/.opencode/plugin/p.sh",
        &format!("touch '{}'\n", marker.display()),
    );
    (repo, marker)
}

#[test]
fn a_repositorys_opencode_plugin_never_runs_in_status_check_fallback_or_dry_run() {
    let (sb, _api) = untrusted();
    install(&sb, "claude", "claude-answered");
    opencode_that_loads_plugins(&sb);
    let (repo, marker) = repo_with_a_plugin(&sb);
    // The plugin is real: opencode started in the repository as a shell starts it springs
    // it (the fake's first recorded run).
    let proof = std::process::Command::new(sb.bin_dir().join("opencode"))
        .current_dir(&repo)
        .env("PWD", &repo)
        .output()
        .unwrap();
    assert!(marker.exists(), "the plugin never ran: {proof:?}");
    std::fs::remove_file(&marker).unwrap();

    sb.write_config(
        "[[rungs]]\nbackend = \"claude\"\nprobe_model = \"opus\"\n\n[[rungs]]\nbackend = \"opencode\"\n",
    );
    let status = sb.run(&["--status"]);
    assert!(!marker.exists(), "--status ran the plugin: {status:?}");
    assert!(
        line_of(&status.stdout, "opencode").starts_with("OK "),
        "{status:?}"
    );
    let check = sb.run(&["--check-fallback"]);
    assert!(
        !marker.exists(),
        "--check-fallback ran the plugin: {check:?}"
    );

    // Nothing trusted from the reports before: the dry run probes opencode itself.
    sb.write_config("probe_cache_seconds = 0\n\n[[rungs]]\nbackend = \"opencode\"\n");
    let dry = sb.run(&["--dry-run", "-p", "hi"]);
    assert!(!marker.exists(), "--dry-run ran the plugin: {dry:?}");
    let probes = &cwds(&sb, "opencode")[1..];
    assert!(
        probes.len() >= 3,
        "every report checked opencode: {probes:?}"
    );
    assert!(
        probes.iter().all(|cwd| cwd.starts_with(sb.state_dir())),
        "{probes:?}"
    );
}

#[test]
fn a_wrapped_clis_check_keeps_that_clis_trust_rule() {
    let (sb, _api) = untrusted();
    // `command` is a wrapper script of the user's: the backend is still Codex.
    sb.fake_cli("wrap-codex")
        .script("pwd > \"$calls/$n/cwd\"\necho answered")
        .install();
    sb.write_config(&format!(
        "[backends.codex]\ncommand = \"{}\"\nprobe = {{ kind = \"command\" }}\n\n[[rungs]]\nbackend = \"codex\"\n",
        sb.bin_dir().join("wrap-codex").display()
    ));
    let repo = sb.set_cwd("repo");
    std::fs::create_dir(repo.join(".git")).unwrap();

    let status = sb.run(&["--status"]);

    let ran_in = cwds(&sb, "wrap-codex");
    assert_eq!(ran_in.len(), 1, "{status:?}");
    assert_ne!(ran_in[0], repo, "never in the untrusted repository");
    assert!(ran_in[0].starts_with(sb.state_dir()), "{ran_in:?}");
    assert!(
        sb.calls("wrap-codex")[0]
            .argv
            .iter()
            .any(|a| a == "--skip-git-repo-check"),
        "checked as Codex is: {:?}",
        sb.calls("wrap-codex")[0].argv
    );
}
