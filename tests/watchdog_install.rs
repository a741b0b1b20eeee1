//! What `--install-watchdog` leaves behind and says (issue 32, item 8): a job that creates
//! its log for the user alone in every scheduler's form, an exit 1 naming the error when the
//! crontab could not be written, and a warning when the job's directory is one a rung's CLI
//! will not run in.

use std::os::unix::fs::PermissionsExt as _;

use crate::watchdog::{fake_crontab, launchd_plist};
use crate::world::world;

#[test]
fn the_crontab_line_creates_its_log_for_the_user_alone() {
    let w = world();
    let crontab = fake_crontab(&w);
    let run = w.sb.run(&["--install-watchdog", "--scheduler", "cron"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let line = std::fs::read_to_string(&crontab).unwrap();
    let line = line.trim_end();

    // The command cron runs: after the five schedule fields, before the mark.
    let command = line
        .splitn(6, ' ')
        .nth(5)
        .and_then(|rest| rest.strip_suffix(" # agent-watchdog"))
        .unwrap_or_else(|| panic!("not a crontab line: {line}"));
    assert!(
        !command.contains('%'),
        "cron would cut it at a %: {command}"
    );
    // The agent it runs, for a stand-in that says it ran.
    let quoted = "exec '\\''";
    let start = command.find(quoted).unwrap_or_else(|| panic!("{command}")) + quoted.len();
    let agent = &command[start..start + command[start..].find("'\\''").unwrap()];
    let fake = w.sb.root().join("fake-agent");
    std::fs::write(&fake, "#!/bin/sh\necho \"checked: $*\"\n").unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let command = command.replace(agent, &fake.to_string_lossy());
    // Run as cron runs it: /bin/sh, with cron's umask (022).
    let ran = std::process::Command::new("/bin/sh")
        .arg("-c")
        .arg(format!("umask 022; {command}"))
        .output()
        .unwrap();
    assert!(ran.status.success(), "{ran:?}");

    let log = w.sb.state_dir().join("watchdog.log");
    let text = std::fs::read_to_string(&log).unwrap();
    assert_eq!(text, "checked: --check-fallback\n");
    let mode = std::fs::metadata(&log).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "the log is {mode:o}");
    let doctor = w.sb.run(&["--doctor"]);
    assert!(
        !doctor.stdout.contains("watchdog.log") && !doctor.stderr.contains("watchdog.log"),
        "{doctor:?}"
    );
}

#[test]
fn the_systemd_unit_and_the_launchd_agent_run_the_job_with_umask_077() {
    let w = world();
    w.sb.fake_cli("systemctl").install();
    let run = w.sb.run(&["--install-watchdog", "--scheduler", "systemd"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let service = std::fs::read_to_string(
        w.sb.home()
            .join(".config/systemd/user/agent-watchdog.service"),
    )
    .unwrap();
    let in_service = service
        .split("[Service]")
        .nth(1)
        .unwrap_or_else(|| panic!("{service}"));
    assert!(in_service.lines().any(|l| l == "UMask=0077"), "{service}");

    w.sb.fake_cli("launchctl").install();
    let run = w.sb.run(&["--install-watchdog", "--scheduler", "launchd"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let plist = launchd_plist(&w);
    assert_eq!(plist["Umask"], 0o077, "{plist}");
}

#[test]
fn a_crontab_that_cannot_be_written_fails_the_install_naming_the_error() {
    let w = world();
    w.sb.fake_cli("crontab")
        .script(
            "if [ \"$1\" = -l ]; then echo 'no crontab for me' >&2; exit 1; fi\necho 'crontab: cannot create /var/spool/cron/crontabs/tmp.1: Permission denied' >&2\nexit 1",
        )
        .install();

    let run = w.sb.run(&["--install-watchdog", "--scheduler", "cron"]);

    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(
        run.stderr
            .contains("the watchdog is not installed: could not edit your crontab"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("cannot create /var/spool/cron/crontabs/tmp.1: Permission denied"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("--check-fallback") && run.stderr.contains("# agent-watchdog"),
        "the line to add by hand: {}",
        run.stderr
    );
    assert!(
        !run.stdout.contains("added to your crontab"),
        "{}",
        run.stdout
    );
}

#[test]
fn a_watchdog_dir_codex_will_not_run_in_is_warned_of_with_the_fix() {
    let w = world();
    fake_crontab(&w);
    let loose = std::fs::canonicalize(w.sb.set_cwd("notes")).unwrap();
    let repo = std::fs::canonicalize(w.sb.set_cwd("code/app")).unwrap();
    std::fs::create_dir(repo.join(".git")).unwrap();

    let outside = w.sb.run(&[
        "--install-watchdog",
        "--scheduler",
        "cron",
        "--dir",
        loose.to_str().unwrap(),
    ]);
    let inside = w.sb.run(&[
        "--install-watchdog",
        "--scheduler",
        "cron",
        "--dir",
        repo.to_str().unwrap(),
    ]);

    assert_eq!(outside.code, Some(0), "{outside:?}");
    let expected = format!(
        "agent: warning: in the watchdog's directory {0}, Codex (its default model): a launch here would be refused: codex exec starts only inside a git repository and {0} is in none — run agent from inside a git repository",
        loose.display()
    );
    assert!(outside.stderr.contains(&expected), "{}", outside.stderr);
    assert!(
        outside
            .stderr
            .contains("; or choose another with --dir DIR"),
        "{}",
        outside.stderr
    );
    assert_eq!(inside.code, Some(0), "{inside:?}");
    assert!(
        !inside.stderr.contains("would be refused"),
        "{}",
        inside.stderr
    );
}
