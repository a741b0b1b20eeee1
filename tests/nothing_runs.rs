//! `--doctor` judges what a launch would find (issue 43, item 1): with no rung that can run
//! here it is a problem (exit 1) naming why each is out and the fix — for a cron or launchd
//! job the `PATH` line (with the directory where a CLI is installed, when agent finds it),
//! for a home with no login the way into each CLI — and a healthy home still exits 0.

use std::os::unix::fs::PermissionsExt as _;

use crate::logins::logged_in;
use crate::support::Sandbox;

/// A job's bare `PATH`, as `env -i … PATH=/usr/bin:/bin` and cron give it.
const BARE_PATH: &str = "/usr/bin:/bin";

/// A sandbox whose state directory passes the doctor (0700).
fn sandbox() -> Sandbox {
    let sb = Sandbox::new();
    std::fs::set_permissions(sb.state_dir(), std::fs::Permissions::from_mode(0o700)).unwrap();
    sb
}

/// Claude Code, Codex and Gemini CLI installed (fakes on the sandbox's own `PATH`).
fn three_clis(sb: &Sandbox) {
    for cli in ["claude", "codex", "gemini"] {
        sb.fake_cli(cli)
            .stdout(&format!("{cli} answered\n"))
            .install();
    }
}

/// The doctor's `launch` finding: its row and the lines under it.
fn launch_finding(out: &str) -> String {
    let start = out
        .find("FAIL launch")
        .unwrap_or_else(|| panic!("no launch finding:\n{out}"));
    let rest = &out[start..];
    let end = rest.find("\nok ").unwrap_or(rest.len());
    rest[..end].to_string()
}

#[test]
fn in_a_jobs_bare_path_the_doctor_names_the_missing_clis_and_the_path_line_to_add() {
    let sb = sandbox();
    three_clis(&sb);
    // Claude Code installed with an older node of nvm's, which agent does not run from on
    // its own (only the newest); Codex and Gemini CLI where nothing on this PATH reaches.
    let old_node = sb.home().join(".nvm/versions/node/v18.20.0/bin");
    std::fs::create_dir_all(&old_node).unwrap();
    std::fs::create_dir_all(sb.home().join(".nvm/versions/node/v22.11.0/bin")).unwrap();
    std::fs::copy(sb.bin_dir().join("claude"), old_node.join("claude")).unwrap();
    sb.env("PATH", BARE_PATH);

    let doctor = sb.run(&["--doctor"]);
    let launch = sb.run(&["-p", "hi"]);

    assert_eq!(doctor.code, Some(1), "{doctor:?}");
    let finding = launch_finding(&doctor.stdout);
    assert!(
        finding.contains(
            "not on this PATH nor in the usual install directories: claude (rungs 1, 2), claude-proxy (rungs 3, 4), codex (rung 5), agy (rung 6), gemini (rung 7), opencode (rung 8)"
        ),
        "{finding}"
    );
    assert!(
        finding.contains(&format!(
            "fix: for a cron or launchd job, put the CLIs on its PATH (claude found in {}):",
            old_node.display()
        )),
        "{finding}"
    );
    assert!(
        finding.contains(&format!("PATH={}:{BARE_PATH}\n", old_node.display())),
        "{finding}"
    );
    assert!(
        doctor.stdout.contains(&format!(
            "SKIP binary claude    not on this PATH or in the usual install directories, but installed at {}",
            old_node.join("claude").display()
        )),
        "{}",
        doctor.stdout
    );
    assert!(
        doctor.stdout.ends_with("1 problem found\n"),
        "{}",
        doctor.stdout
    );
    // What the doctor said is what a launch here finds.
    assert_eq!(launch.code, Some(69), "{launch:?}");
    assert!(sb.calls("claude").is_empty(), "no CLI was started");
}

#[test]
fn with_no_cli_anywhere_agent_looks_the_fix_says_how_to_find_the_directory() {
    let sb = sandbox();
    three_clis(&sb);
    sb.env("PATH", BARE_PATH);

    let doctor = sb.run(&["--doctor"]);

    assert_eq!(doctor.code, Some(1), "{doctor:?}");
    let finding = launch_finding(&doctor.stdout);
    assert!(
        finding.contains("`command -v claude` in your shell names the directory; then in the job"),
        "{finding}"
    );
    assert!(
        finding.contains(&format!("PATH=<that directory>:{BARE_PATH}")),
        "{finding}"
    );
}

#[test]
fn a_fresh_home_with_no_login_anywhere_is_a_problem_that_says_how_to_log_in() {
    let sb = sandbox();
    three_clis(&sb);

    let doctor = sb.run(&["--doctor"]);

    assert_eq!(doctor.code, Some(1), "{doctor:?}");
    let finding = launch_finding(&doctor.stdout);
    assert!(
        finding
            .contains("no login and no key: claude (rungs 1, 2), codex (rung 5), gemini (rung 7)"),
        "{finding}"
    );
    for way_in in [
        "log in (claude, then /login) or set ANTHROPIC_API_KEY",
        "log in (codex login) or set OPENAI_API_KEY",
        "log in (gemini, then type /auth) or set GEMINI_API_KEY",
    ] {
        assert!(finding.contains(way_in), "{way_in}: {finding}");
    }
    // The CLIs are on this PATH: no PATH line, only agy is simply not installed.
    assert!(!finding.contains("PATH="), "{finding}");
    let claude_row = doctor
        .stdout
        .lines()
        .find(|line| line.starts_with("SKIP rung 1 claude"))
        .unwrap_or_else(|| panic!("{}", doctor.stdout));
    assert!(
        claude_row.ends_with("no login and no key agent can see — log in (claude, then /login) or set ANTHROPIC_API_KEY"),
        "{claude_row}"
    );
    // The accounts row agrees with the rung rows: nothing probes a CLI with no way in.
    let accounts_row = doctor
        .stdout
        .lines()
        .find(|line| line.starts_with("ok   accounts"))
        .unwrap_or_else(|| panic!("{}", doctor.stdout));
    assert!(
        accounts_row.ends_with(
            "Claude Code has no login and no key agent can see: its rungs are skipped until it has one"
        ),
        "{accounts_row}"
    );
    // Nothing was asked of any CLI but its version.
    for cli in ["claude", "codex", "gemini"] {
        assert!(
            sb.calls(cli).iter().all(|call| call.argv == ["--version"]),
            "{cli}: {:?}",
            sb.calls(cli)
        );
    }
}

#[test]
fn a_home_logged_in_to_one_cli_can_launch_and_the_doctor_passes() {
    let (sb, _api) = logged_in();
    // Only Claude Code's login: Codex's and Gemini CLI's are gone.
    for file in [".codex/auth.json", ".gemini/oauth_creds.json"] {
        std::fs::remove_file(sb.home().join(file)).unwrap();
    }

    let doctor = sb.run(&["--doctor"]);

    assert_eq!(doctor.code, Some(0), "{doctor:?}");
    assert!(!doctor.stdout.contains("FAIL launch"), "{}", doctor.stdout);
    assert!(
        doctor.stdout.contains("no problems found"),
        "{}",
        doctor.stdout
    );
}
