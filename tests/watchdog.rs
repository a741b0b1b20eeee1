//! The watchdog: alerts only on a change of verdict, delivery retried on the next run, the
//! scheduled job it installs, and the doctor.

use std::os::unix::fs::PermissionsExt as _;

use crate::support::{MockApi, Reply, Rule};
use crate::world::{GEMINI_MODEL, World, world};

const TG_TOKEN: &str = "123456:telegram-bot-SECRET-token-abcdef";

fn with_telegram(w: &World, telegram: &MockApi) {
    w.sb.env("TG_TOKEN", TG_TOKEN);
    w.sb.write_config(&format!(
        "[alerts.telegram]\nbot_token = \"${{TG_TOKEN}}\"\nchat_id = \"123456\"\napi_url = \"{}\"\n",
        telegram.url()
    ));
    telegram.on(Rule::path_contains("/sendMessage").reply(
        Reply::status(200).json(serde_json::json!({"ok": true, "result": {"message_id": 1}})),
    ));
}

pub(crate) fn break_gemini(w: &World) {
    w.api
        .on(Rule::model(GEMINI_MODEL).reply(Reply::gemini_error(
            400,
            "INVALID_ARGUMENT",
            "API key not valid",
        )));
}

#[test]
fn telegram_hears_only_changes_of_state_and_one_recovery() {
    let w = world();
    let telegram = MockApi::start();
    with_telegram(&w, &telegram);

    let ok = w.sb.run(&["--check-fallback"]);
    assert_eq!(ok.code, Some(0), "{ok:?}");
    assert_eq!(telegram.posts(), 0, "OK → OK sends nothing");

    break_gemini(&w);
    let degraded = w.sb.run(&["--check-fallback"]);
    assert_eq!(degraded.code, Some(1), "{degraded:?}");
    let sent = telegram.post_requests();
    assert_eq!(sent.len(), 1, "OK → DEGRADED sends one message");
    assert!(
        sent[0]
            .path
            .ends_with(&format!("/bot{TG_TOKEN}/sendMessage")),
        "{}",
        sent[0].path
    );
    let body = sent[0].json();
    assert_eq!(body["chat_id"], "123456");
    let text = body["text"].as_str().unwrap();
    assert!(text.contains("DEGRADED"), "{text}");
    assert!(
        text.contains(&format!("a rung died: gemini / {GEMINI_MODEL}")),
        "names the dead rung: {text}"
    );
    assert!(
        text.contains("still covered by codex"),
        "names the cover: {text}"
    );
    assert!(
        text.contains("API key not valid"),
        "gives the reason: {text}"
    );

    let again = w.sb.run(&["--check-fallback"]);
    assert_eq!(again.code, Some(1));
    assert_eq!(telegram.posts(), 1, "DEGRADED → DEGRADED sends nothing");

    w.api.clear_rules();
    let recovered = w.sb.run(&["--check-fallback"]);
    assert_eq!(recovered.code, Some(0), "{recovered:?}");
    let sent = telegram.post_requests();
    assert_eq!(sent.len(), 2, "DEGRADED → OK sends one recovery message");
    assert!(
        sent[1].json()["text"]
            .as_str()
            .unwrap()
            .contains("recovered"),
        "{:?}",
        sent[1].body
    );

    for run in [&ok, &degraded, &again, &recovered] {
        assert!(!run.stdout.contains(TG_TOKEN) && !run.stderr.contains(TG_TOKEN));
    }
    for (path, content) in w.sb.state_files() {
        assert!(
            !content.contains(TG_TOKEN),
            "{} holds the bot token",
            path.display()
        );
    }
}

#[test]
fn a_webhook_that_is_down_changes_no_exit_code_and_gets_the_alert_next_run() {
    let w = world();
    let hook = MockApi::start();
    w.sb.write_config(&format!(
        "[alerts]\ndeadline_seconds = 1\n\n[alerts.webhook]\nurl = \"{}/hook\"\n",
        hook.url()
    ));
    hook.on(Rule::path_contains("/hook").reply(Reply::status(503).body("down for maintenance")));
    break_gemini(&w);

    let first = w.sb.run(&["--check-fallback"]);

    assert_eq!(
        first.code,
        Some(1),
        "DEGRADED, whatever the webhook did: {first:?}"
    );
    assert!(
        first.stderr.contains("will be retried on the next run"),
        "{}",
        first.stderr
    );
    assert_eq!(hook.posts(), 1);

    hook.clear_rules();
    hook.on(Rule::path_contains("/hook").reply(Reply::status(200).body("ok")));
    let second = w.sb.run(&["--check-fallback"]);

    assert_eq!(second.code, Some(1));
    let sent = hook.post_requests();
    assert_eq!(
        sent.len(),
        2,
        "the owed alert went out on the next run, and nothing more"
    );
    let alert = sent[1].json();
    assert_eq!(alert["state"], "DEGRADED");
    assert_eq!(alert["previous"], "OK");
    assert!(
        alert["message"].as_str().unwrap().contains("gemini"),
        "{alert}"
    );
    // codex, agy (skipped), gemini, opencode (skipped).
    assert_eq!(alert["rungs"].as_array().unwrap().len(), 4);

    let third = w.sb.run(&["--check-fallback"]);
    assert_eq!(third.code, Some(1));
    assert_eq!(hook.posts(), 2, "delivered once, never again");
}

#[test]
fn an_alert_command_gets_the_message_as_its_last_argument() {
    let w = world();
    w.sb.fake_cli("notify").install();
    w.sb.write_config("[alerts.command]\nargv = [\"notify\", \"--title\", \"agent\"]\n");
    break_gemini(&w);

    assert_eq!(w.sb.run(&["--check-fallback"]).code, Some(1));

    let calls = w.sb.calls("notify");
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].argv[..2], ["--title", "agent"]);
    assert!(calls[0].argv[2].contains("DEGRADED"), "{:?}", calls[0].argv);
}

#[test]
fn install_watchdog_writes_a_systemd_service_and_timer_that_verify() {
    let w = world();
    // A stand-in systemctl: the test must never touch the machine's own systemd.
    w.sb.fake_cli("systemctl").install();

    let run = w.sb.run(&[
        "--install-watchdog",
        "--every",
        "2h",
        "--scheduler",
        "systemd",
    ]);

    assert_eq!(run.code, Some(0), "{run:?}");
    let units = w.sb.home().join(".config/systemd/user");
    let service = std::fs::read_to_string(units.join("agent-watchdog.service")).unwrap();
    let timer = std::fs::read_to_string(units.join("agent-watchdog.timer")).unwrap();
    let agent = std::fs::canonicalize(env!("CARGO_BIN_EXE_agent")).unwrap();
    assert!(
        service.contains(&format!("ExecStart={} --check-fallback", agent.display())),
        "{service}"
    );
    let bin = w.sb.bin_dir().display().to_string();
    let path_line = service
        .lines()
        .find(|l| l.starts_with("Environment=\"PATH="))
        .unwrap();
    assert!(
        path_line.contains(&bin),
        "PATH pins where the CLIs were found: {path_line}"
    );
    assert!(timer.contains("OnUnitActiveSec=7200s"), "{timer}");
    let calls: Vec<Vec<String>> =
        w.sb.calls("systemctl")
            .into_iter()
            .map(|c| c.argv)
            .collect();
    assert_eq!(
        calls,
        [
            vec!["--user", "daemon-reload"],
            vec!["--user", "enable", "--now", "agent-watchdog.timer"]
        ]
    );

    let analyze = which::which("systemd-analyze")
        .expect("systemd-analyze is needed (Debian: apt-get install systemd)");
    let verify = std::process::Command::new(analyze)
        .arg("verify")
        .arg(units.join("agent-watchdog.service"))
        .arg(units.join("agent-watchdog.timer"))
        .output()
        .unwrap();
    assert!(
        verify.status.success(),
        "systemd-analyze verify: {}",
        String::from_utf8_lossy(&verify.stderr)
    );
}

#[test]
fn when_the_scheduler_refuses_install_watchdog_prints_the_exact_command() {
    let w = world();
    w.sb.fake_cli("systemctl")
        .stderr("Failed to connect to bus")
        .exit(1)
        .install();

    let run = w.sb.run(&["--install-watchdog", "--scheduler", "systemd"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.stdout
            .contains("run it yourself:\n    systemctl --user enable --now agent-watchdog.timer"),
        "{}",
        run.stdout
    );
}

#[test]
fn the_launchd_agent_is_a_valid_property_list() {
    let w = world();

    let run = w.sb.run(&[
        "--install-watchdog",
        "--scheduler",
        "launchd",
        "--dry-run",
        "--every",
        "30m",
    ]);

    assert_eq!(run.code, Some(0), "{run:?}");
    let plist: String = run
        .stdout
        .lines()
        .skip_while(|l| !l.contains("<?xml"))
        .take_while(|l| !l.starts_with("would run"))
        .map(|l| l.strip_prefix("    ").unwrap_or(l))
        .collect::<Vec<_>>()
        .join("\n");
    let file = w.sb.root().join("watchdog.plist");
    std::fs::write(&file, plist).unwrap();
    let parsed = std::process::Command::new("python3")
        .args([
            "-c",
            "import json, plistlib, sys; print(json.dumps(plistlib.load(open(sys.argv[1], 'rb'))))",
        ])
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        parsed.status.success(),
        "not a property list: {}",
        String::from_utf8_lossy(&parsed.stderr)
    );
    let plist: serde_json::Value = serde_json::from_slice(&parsed.stdout).unwrap();
    assert_eq!(plist["Label"], "dev.agent.watchdog");
    assert_eq!(plist["StartInterval"], 1800);
    let script = plist["ProgramArguments"][2].as_str().unwrap();
    assert!(script.ends_with("' --check-fallback"), "{script}");
    assert!(
        plist["EnvironmentVariables"]["PATH"]
            .as_str()
            .unwrap()
            .contains(&w.sb.bin_dir().display().to_string())
    );
    assert!(
        !w.sb.home().join("Library").exists(),
        "a dry run writes nothing"
    );
}

#[test]
fn install_watchdog_with_cron_adds_one_line_and_uninstall_removes_it() {
    let w = world();
    let crontab = w.sb.root().join("crontab.txt");
    std::fs::write(&crontab, "MAILTO=me@example.com\n").unwrap();
    // A stand-in crontab(1) over a file.
    w.sb.fake_cli("crontab")
        .script(&format!(
            "if [ \"$1\" = -l ]; then cat '{0}'; else cat > '{0}'; fi",
            crontab.display()
        ))
        .install();

    assert_eq!(
        w.sb.run(&["--install-watchdog", "--scheduler", "cron"])
            .code,
        Some(0)
    );
    assert_eq!(
        w.sb.run(&["--install-watchdog", "--scheduler", "cron"])
            .code,
        Some(0)
    );
    let installed = std::fs::read_to_string(&crontab).unwrap();
    let uninstall = w.sb.run(&["--uninstall-watchdog", "--scheduler", "cron"]);
    let after = std::fs::read_to_string(&crontab).unwrap();

    assert!(
        installed.starts_with("MAILTO=me@example.com\n"),
        "{installed}"
    );
    assert_eq!(
        installed.matches("# agent-watchdog").count(),
        1,
        "installing twice leaves one line: {installed}"
    );
    assert!(
        installed.contains("0 */2 * * * umask 077 && cd '"),
        "{installed}"
    );
    assert!(installed.contains("' && PATH="), "{installed}");
    assert!(installed.contains("--check-fallback"), "{installed}");
    assert_eq!(uninstall.code, Some(0), "{uninstall:?}");
    assert_eq!(after, "MAILTO=me@example.com\n");
}

#[test]
fn doctor_names_each_problem_with_its_fix_and_exits_1() {
    let w = world();
    // A key the configuration names and the environment lacks is a fault (a CLI with no
    // login and no key at all is only not set up: tests/not_set_up.rs).
    w.sb.env_remove("GEMINI_API_KEY");
    w.sb.write_config(
        "[backends.mytool]\ncommand = \"mytool\"\n\n[backends.gemini]\nenv = { GEMINI_API_KEY = \"${GEMINI_API_KEY}\" }\n\n[[rungs]]\nbackend = \"claude\"\nprobe_model = \"opus\"\n\n[[rungs]]\nbackend = \"mytool\"\n\n[[rungs]]\nbackend = \"gemini\"\n",
    );
    std::fs::set_permissions(w.sb.state_dir(), std::fs::Permissions::from_mode(0o755)).unwrap();

    let run = w.sb.run(&["--doctor"]);

    assert_eq!(run.code, Some(1), "{run:?}");
    let out = &run.stdout;
    assert!(out.contains("FAIL binary mytool"), "missing binary: {out}");
    assert!(
        out.contains("fix: install mytool or set backends.mytool.command"),
        "{out}"
    );
    assert!(
        out.contains("GEMINI_API_KEY is not set"),
        "unset key variable: {out}"
    );
    assert!(out.contains("fix: export GEMINI_API_KEY=…"), "{out}");
    assert!(
        out.contains("is 755: other users can read"),
        "state-dir permissions: {out}"
    );
    assert!(
        out.contains(&format!("fix: chmod 700 {}", w.sb.state_dir().display())),
        "{out}"
    );
    assert!(out.contains("3 problems found"), "{out}");
    assert_eq!(w.api.posts(), 0, "the doctor makes no call");
}

#[test]
fn doctor_in_a_clean_setup_exits_0_and_never_shows_a_secret() {
    let w = world();
    std::fs::set_permissions(w.sb.state_dir(), std::fs::Permissions::from_mode(0o700)).unwrap();

    let run = w.sb.run(&["--doctor"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.stdout.contains("credential AGENT_PROXY_KEY present"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("no problems found"), "{}", run.stdout);
    assert!(!run.stdout.contains(crate::world::PROXY_KEY));
    let json = w.sb.run(&["--doctor", "--json"]);
    let report: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(report["problems"], 0);
}

/// The watchdog's property list as written by `--install-watchdog --scheduler launchd`,
/// parsed by Python's `plistlib`.
pub(crate) fn launchd_plist(w: &World) -> serde_json::Value {
    let file =
        w.sb.home()
            .join("Library/LaunchAgents/dev.agent.watchdog.plist");
    let parsed = std::process::Command::new("python3")
        .args([
            "-c",
            "import json, plistlib, sys; print(json.dumps(plistlib.load(open(sys.argv[1], 'rb'))))",
        ])
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        parsed.status.success(),
        "not a property list: {}",
        String::from_utf8_lossy(&parsed.stderr)
    );
    serde_json::from_slice(&parsed.stdout).unwrap()
}

/// A stand-in crontab(1) over a file in the sandbox; returns that file.
pub(crate) fn fake_crontab(w: &World) -> std::path::PathBuf {
    let crontab = w.sb.root().join("crontab.txt");
    std::fs::write(&crontab, "").unwrap();
    w.sb.fake_cli("crontab")
        .script(&format!(
            "if [ \"$1\" = -l ]; then cat '{0}'; else cat > '{0}'; fi",
            crontab.display()
        ))
        .install();
    crontab
}

/// Installs the watchdog with each scheduler (over stand-ins for their tools) with `extra`
/// arguments, and checks that each file makes the job run in `dir`.
fn assert_every_scheduler_runs_in(w: &World, extra: &[&str], dir: &std::path::Path) {
    for tool in ["systemctl", "launchctl"] {
        w.sb.fake_cli(tool).install();
    }
    let crontab = fake_crontab(w);
    let shown = format!("the check runs in {}", dir.display());

    let mut args = vec!["--install-watchdog", "--scheduler", "systemd"];
    args.extend_from_slice(extra);
    let run = w.sb.run(&args);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(run.stdout.contains(&shown), "{}", run.stdout);
    let service = std::fs::read_to_string(
        w.sb.home()
            .join(".config/systemd/user/agent-watchdog.service"),
    )
    .unwrap();
    assert!(
        service
            .lines()
            .any(|l| l == format!("WorkingDirectory={}", dir.display())),
        "{service}"
    );

    args[2] = "launchd";
    let run = w.sb.run(&args);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(run.stdout.contains(&shown), "{}", run.stdout);
    assert_eq!(
        launchd_plist(w)["WorkingDirectory"],
        dir.display().to_string()
    );

    args[2] = "cron";
    let run = w.sb.run(&args);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(run.stdout.contains(&shown), "{}", run.stdout);
    let line = std::fs::read_to_string(&crontab).unwrap();
    assert!(
        line.contains(&format!(
            "0 */2 * * * umask 077 && cd '{}' && PATH=",
            dir.display()
        )),
        "{line}"
    );
}

#[test]
fn the_watchdog_runs_in_the_directory_it_was_installed_from() {
    let w = world();
    let dir = std::fs::canonicalize(w.sb.set_cwd("code/app")).unwrap();

    assert_every_scheduler_runs_in(&w, &[], &dir);
}

#[test]
fn install_watchdog_dir_makes_the_job_run_there_stored_absolute() {
    let w = world();
    let dir = std::fs::canonicalize(w.sb.set_cwd("my projects")).unwrap();
    w.sb.set_cwd("elsewhere");

    // Relative to where it is run, and with a space: every format must quote it.
    assert_every_scheduler_runs_in(&w, &["--dir", "../my projects"], &dir);

    let dry = w.sb.run(&[
        "--install-watchdog",
        "--scheduler",
        "cron",
        "--dry-run",
        "--dir",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(dry.code, Some(0), "{dry:?}");
    assert!(
        dry.stdout
            .contains(&format!("the check would run in {}", dir.display())),
        "{}",
        dry.stdout
    );
}

#[test]
fn install_watchdog_refuses_a_dir_that_does_not_exist() {
    let w = world();
    w.sb.fake_cli("systemctl").install();

    let run = w.sb.run(&[
        "--install-watchdog",
        "--scheduler",
        "systemd",
        "--dir",
        "no-such-dir",
    ]);

    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(run.stderr.contains("--dir no-such-dir"), "{}", run.stderr);
    assert!(
        !w.sb.home().join(".config/systemd").exists(),
        "nothing is written"
    );
    assert!(w.sb.calls("systemctl").is_empty());
}

#[test]
fn install_watchdog_warns_when_no_alert_channel_would_tell_anyone() {
    let w = world();
    w.sb.fake_cli("systemctl").install();

    let bare = w.sb.run(&["--install-watchdog", "--scheduler", "systemd"]);

    assert_eq!(bare.code, Some(0), "installed all the same: {bare:?}");
    assert!(
        w.sb.home()
            .join(".config/systemd/user/agent-watchdog.timer")
            .exists()
    );
    let warning = &bare.stderr;
    assert!(
        warning.contains("warning: no alert channel is configured"),
        "{warning}"
    );
    assert!(
        warning.contains("will check every 2h but tell no one"),
        "{warning}"
    );
    for keys in [
        "[alerts.telegram] bot_token + chat_id",
        "[alerts.webhook] url",
        "[alerts.command] argv",
        &w.sb.config_path().display().to_string(),
        "bot_token = \"${AGENT_TELEGRAM_TOKEN}\"",
        "chat_id = ",
        "url = \"https://",
        "argv = [",
    ] {
        assert!(warning.contains(keys), "names {keys}: {warning}");
    }

    for channel in [
        "[alerts.webhook]\nurl = \"http://127.0.0.1:9/hook\"\n",
        "[alerts.command]\nargv = [\"notify\"]\n",
    ] {
        w.sb.write_config(channel);
        let told =
            w.sb.run(&["--install-watchdog", "--scheduler", "systemd", "--dry-run"]);
        assert_eq!(told.code, Some(0), "{told:?}");
        assert!(
            !told.stderr.contains("no alert channel"),
            "{channel}: {}",
            told.stderr
        );
    }
}

#[test]
fn doctor_warns_of_an_installed_watchdog_that_tells_no_one() {
    let w = world();
    std::fs::set_permissions(w.sb.state_dir(), std::fs::Permissions::from_mode(0o700)).unwrap();
    w.sb.fake_cli("systemctl").install();
    assert_eq!(
        w.sb.run(&["--install-watchdog", "--scheduler", "systemd"])
            .code,
        Some(0)
    );

    let text = w.sb.run(&["--doctor"]);

    assert_eq!(text.code, Some(0), "a warning, not a problem: {text:?}");
    let out = &text.stdout;
    let line = out
        .lines()
        .find(|l| l.starts_with("warn watchdog"))
        .unwrap_or_else(|| panic!("no watchdog warning: {out}"));
    assert!(line.contains("systemd user timer"), "{line}");
    assert!(line.contains("no alert channel is configured"), "{line}");
    assert!(
        out.contains("fix: set one of [alerts.telegram] bot_token + chat_id, [alerts.webhook] url, [alerts.command] argv"),
        "{out}"
    );
    assert!(out.contains("no problems found; 1 warning"), "{out}");

    let json = w.sb.run(&["--doctor", "--json"]);
    let report: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(report["problems"], 0, "{report}");
    assert_eq!(report["warnings"], 1, "{report}");
    let check = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["area"] == "watchdog")
        .unwrap();
    assert_eq!(check["warning"], true, "{check}");
    assert!(
        check["fix"]
            .as_str()
            .unwrap()
            .contains("[alerts.webhook] url"),
        "{check}"
    );

    w.sb.write_config("[alerts.webhook]\nurl = \"http://127.0.0.1:9/hook\"\n");
    let told = w.sb.run(&["--doctor"]);
    assert!(
        told.stdout.contains("ok   watchdog") && !told.stdout.contains("warn"),
        "{}",
        told.stdout
    );
}

#[test]
fn doctor_says_the_watchdogs_last_check_in_local_time_not_as_a_stored_stamp() {
    let w = world();
    std::fs::set_permissions(w.sb.state_dir(), std::fs::Permissions::from_mode(0o700)).unwrap();
    w.sb.run(&["--check-fallback"]);
    let stored: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(w.sb.state_dir().join("watchdog.json")).unwrap(),
    )
    .unwrap();
    let stamp = stored["last_check"]
        .as_str()
        .expect("a check recorded")
        .to_string();
    let at: jiff::Timestamp = stamp.parse().unwrap();
    let clock = at
        .to_zoned_datetime(jiff::tz::TimeZone::system())
        .strftime("%H:%M")
        .to_string();

    let doctor = w.sb.run(&["--doctor"]);

    let row = doctor
        .stdout
        .lines()
        .find(|line| line.contains(" watchdog "))
        .unwrap_or_else(|| panic!("{doctor:?}"));
    assert!(!row.contains(&stamp), "{row}");
    assert!(row.contains("; last check "), "{row}");
    let said = row.split("; last check ").nth(1).unwrap();
    let (when, _) = said.split_once(": ").unwrap();
    assert!(
        when.ends_with(&clock) && when.len() <= "Dec 13 23:36".len(),
        "{row}"
    );
}
