//! Paths written into service definitions — the watchdog's and the relay's systemd units,
//! launchd property lists and crontab line — reach the job exactly, whatever they hold.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::Sandbox;
use crate::support::sandbox::{Run, run_command};

/// A directory name with every character a service format treats specially.
const HOSTILE: &str = "a b%c$d\"e'f\\g<h>&i;j %n $HOME";

/// agent hard-linked into `dir` (created), with a configuration file beside it.
fn agent_in(sb: &Sandbox, dir: &str) -> (PathBuf, PathBuf) {
    let dir = sb.root().join(dir);
    std::fs::create_dir_all(&dir).unwrap();
    let agent = dir.join("agent");
    std::fs::hard_link(env!("CARGO_BIN_EXE_agent"), &agent)
        .or_else(|_| std::fs::copy(env!("CARGO_BIN_EXE_agent"), &agent).map(|_| ()))
        .unwrap();
    let config = dir.join("config.toml");
    std::fs::write(&config, "").unwrap();
    (agent, config)
}

/// Runs `agent` (at its odd path) with the sandbox's environment.
fn run_at(sb: &Sandbox, agent: &Path, args: &[&std::ffi::OsStr]) -> Run {
    let template = sb.command(&[]);
    let mut command = Command::new(agent);
    command
        .env_clear()
        .args(args)
        .stdin(std::process::Stdio::null());
    for (name, value) in template.get_envs() {
        if let Some(value) = value {
            command.env(name, value);
        }
    }
    command.current_dir(sb.home());
    run_command(command, crate::support::sandbox::RUN_TIMEOUT)
}

fn args<'a>(words: &'a [&'a str], config: &'a Path) -> Vec<&'a std::ffi::OsStr> {
    let mut all: Vec<&std::ffi::OsStr> = vec!["--config".as_ref(), config.as_os_str()];
    all.extend(words.iter().map(std::ffi::OsStr::new));
    all
}

#[test]
fn systemd_units_with_hostile_paths_verify() {
    let sb = Sandbox::new();
    sb.fake_cli("systemctl").install();
    // A newline too: systemd can hold it (escaped), unlike cron.
    let (agent, config) = agent_in(&sb, &format!("{HOSTILE}\nsecond line"));

    let watchdog = run_at(
        &sb,
        &agent,
        &args(&["--install-watchdog", "--scheduler", "systemd"], &config),
    );
    let relay = run_at(
        &sb,
        &agent,
        &args(&["--relay", "install", "--service", "systemd"], &config),
    );

    assert_eq!(watchdog.code, Some(0), "{watchdog:?}");
    assert_eq!(relay.code, Some(0), "{relay:?}");
    let units = sb.home().join(".config/systemd/user");
    let analyze = which::which("systemd-analyze")
        .expect("systemd-analyze is needed (Debian: apt-get install systemd)");
    let verify = Command::new(analyze)
        .arg("verify")
        .arg(units.join("agent-watchdog.service"))
        .arg(units.join("agent-watchdog.timer"))
        .arg(units.join("agent-relay.service"))
        .output()
        .unwrap();
    let complaints = String::from_utf8_lossy(&verify.stderr);
    assert!(
        verify.status.success() && !complaints.contains("ignoring"),
        "systemd-analyze verify: {complaints}"
    );
    for unit in ["agent-watchdog.service", "agent-relay.service"] {
        let text = std::fs::read_to_string(units.join(unit)).unwrap();
        assert!(
            text.lines().all(|line| !line.starts_with("second line")),
            "a newline in a path never splits a line: {text}"
        );
    }
}

/// The string values of a property list, by key path, as python's plistlib reads them.
fn plist(file: &Path) -> serde_json::Value {
    let parsed = Command::new("python3")
        .args([
            "-c",
            "import json, plistlib, sys; print(json.dumps(plistlib.load(open(sys.argv[1], 'rb'))))",
        ])
        .arg(file)
        .output()
        .unwrap();
    assert!(
        parsed.status.success(),
        "not a property list: {}",
        String::from_utf8_lossy(&parsed.stderr)
    );
    serde_json::from_slice(&parsed.stdout).unwrap()
}

#[test]
fn launchd_property_lists_with_hostile_paths_read_back_exactly() {
    let sb = Sandbox::new();
    sb.fake_cli("launchctl").install();
    let (agent, config) = agent_in(&sb, &format!("{HOSTILE}\r\nsecond line"));

    let watchdog = run_at(
        &sb,
        &agent,
        &args(&["--install-watchdog", "--scheduler", "launchd"], &config),
    );
    let relay = run_at(
        &sb,
        &agent,
        &args(&["--relay", "install", "--service", "launchd"], &config),
    );

    assert_eq!(watchdog.code, Some(0), "{watchdog:?}");
    assert_eq!(relay.code, Some(0), "{relay:?}");
    let agents = sb.home().join("Library/LaunchAgents");
    let watchdog = plist(&agents.join("dev.agent.watchdog.plist"));
    assert_eq!(
        watchdog["EnvironmentVariables"]["AGENT_CONFIG"],
        config.to_str().unwrap()
    );
    // The relay's job is a shell command line: the words it would exec, read back by sh.
    let relay = plist(&agents.join("dev.agent.relay.plist"));
    let script = relay["ProgramArguments"][2].as_str().unwrap();
    let words = script.replace("exec ", "printf '%s\\0' ");
    let out = Command::new("/bin/sh")
        .arg("-c")
        .arg(&words)
        .output()
        .unwrap();
    let argv: Vec<&[u8]> = out.stdout.split(|b| *b == 0).collect();
    assert_eq!(
        argv[..4],
        [
            agent.to_str().unwrap().as_bytes(),
            b"--config",
            config.to_str().unwrap().as_bytes(),
            b"--relay"
        ],
        "{script}"
    );
}

/// cron's own reading of a command: `\%` is `%`; a bare `%` would end it.
fn as_cron_runs_it(line: &str) -> String {
    let command = line.splitn(6, ' ').nth(5).expect("five schedule fields");
    assert!(
        !command.replace("\\%", "").contains('%'),
        "a bare % cuts the command: {command}"
    );
    command.replace("\\%", "%")
}

#[test]
fn a_cron_line_with_hostile_paths_runs_the_exact_agent_and_configuration() {
    let sb = Sandbox::new();
    let crontab = sb.root().join("crontab.txt");
    sb.fake_cli("crontab")
        .script(&format!(
            "if [ \"$1\" = -l ]; then cat '{0}' 2>/dev/null; else cat > '{0}'; fi",
            crontab.display()
        ))
        .install();
    let (agent, config) = agent_in(&sb, HOSTILE);

    let run = run_at(
        &sb,
        &agent,
        &args(&["--install-watchdog", "--scheduler", "cron"], &config),
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    // The check will now stop at this file, naming it: proof it read exactly this one.
    std::fs::write(&config, "fastfail_seconds = -1\n").unwrap();
    let line = std::fs::read_to_string(&crontab).unwrap();
    let status = Command::new("/bin/sh")
        .arg("-c")
        .arg(as_cron_runs_it(line.trim_end()))
        .env_clear()
        .env("HOME", sb.home())
        .status()
        .unwrap();

    assert_eq!(status.code(), Some(2), "{line}");
    let log = std::fs::read_to_string(sb.state_dir().join("watchdog.log")).unwrap();
    assert!(
        log.contains(&format!(
            "{}:1: fastfail_seconds: must be",
            config.display()
        )),
        "{log}"
    );
}

#[test]
fn a_path_with_a_newline_is_refused_for_cron_with_the_reason() {
    let sb = Sandbox::new();
    sb.fake_cli("crontab").install();
    let (agent, config) = agent_in(&sb, "two\nlines");

    let run = run_at(
        &sb,
        &agent,
        &args(
            &["--install-watchdog", "--scheduler", "cron", "--dry-run"],
            &config,
        ),
    );

    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(
        run.stderr.contains("a crontab line cannot hold a newline"),
        "{}",
        run.stderr
    );
}

#[test]
fn the_relays_service_asks_for_the_open_files_its_connection_cap_needs() {
    let sb = Sandbox::new();
    sb.fake_cli("systemctl").install();
    sb.fake_cli("launchctl").install();
    // Two descriptors a connection (its own and its upstream's) and a reserve of 64.
    sb.write_config("[relay]\nmax_connections = 20000\n");

    for service in ["systemd", "launchd"] {
        let run = sb.run(&["--relay", "install", "--service", service]);
        assert_eq!(run.code, Some(0), "{run:?}");
    }

    let unit = sb.home().join(".config/systemd/user/agent-relay.service");
    let text = std::fs::read_to_string(&unit).unwrap();
    assert!(
        text.lines().any(|line| line == "LimitNOFILE=40064"),
        "{text}"
    );
    let analyze = which::which("systemd-analyze")
        .expect("systemd-analyze is needed (Debian: apt-get install systemd)");
    let verify = Command::new(analyze)
        .arg("verify")
        .arg(&unit)
        .output()
        .unwrap();
    let complaints = String::from_utf8_lossy(&verify.stderr);
    assert!(
        verify.status.success() && !complaints.contains("ignoring"),
        "systemd-analyze verify: {complaints}"
    );
    let job = plist(&sb.home().join("Library/LaunchAgents/dev.agent.relay.plist"));
    assert_eq!(job["SoftResourceLimits"]["NumberOfFiles"], 40064, "{job}");
}
