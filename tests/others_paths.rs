//! Paths another user can change (DESIGN §15, §23): a login pool's home, the watchdog's
//! directory and the configuration file are refused with the reason when someone else can
//! write them; paths the user names are kept in one spelling (`~` expanded, `..` resolved);
//! the configuration is never read from a FIFO or a device; a linked `settings.json` stays a
//! link; the configuration's text reaches the terminal without its control characters.

use std::fs;
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use serde_json::json;

use crate::support::Sandbox;
use crate::support::sandbox::run_command;
use crate::world::world;

const ACCESS: &str = "sk-ant-oat01-POOLloginACCESS-1111111111aaaa";

fn chmod(path: &Path, mode: u32) {
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

/// A logged-in Claude Code home under `home/`, its path.
fn claude_login(sb: &Sandbox, name: &str) -> String {
    let credentials = json!({"claudeAiOauth": {
        "accessToken": ACCESS, "refreshToken": "sk-ant-ort01-POOLloginREFRESH-2222bbbb",
        "expiresAt": 1_789_387_200_000_u64, "scopes": ["user:inference"],
        "subscriptionType": "max"}});
    sb.write_file(
        &format!("{name}/.credentials.json"),
        &credentials.to_string(),
    );
    sb.home().join(name).display().to_string()
}

fn add_login(sb: &Sandbox, name: &str, dir: &str) -> crate::support::Run {
    sb.run(&[
        "--accounts",
        "add",
        name,
        "--backend",
        "claude",
        "--kind",
        "login",
        &format!("--dir={dir}"),
    ])
}

fn stored(sb: &Sandbox) -> String {
    fs::read_to_string(sb.home().join(".config/agent/credentials.toml")).unwrap_or_default()
}

#[test]
fn accounts_add_refuses_a_login_directory_others_can_write() {
    let w = world();
    let pool = claude_login(&w.sb, "pool");
    chmod(Path::new(&pool), 0o777);

    let run = add_login(&w.sb, "pool", &pool);

    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(
        run.stderr.contains(&format!(
            "login directory {pool} is writable by others (mode 0777): chmod go-w {pool}"
        )),
        "{}",
        run.stderr
    );
    assert!(!stored(&w.sb).contains("pool"), "{}", stored(&w.sb));
}

#[test]
fn a_login_directory_others_can_write_is_never_a_cli_home_in_status_or_a_launch() {
    let w = world();
    let pool = claude_login(&w.sb, "pool");
    // Another user's SessionStart hook, as Claude Code would run it from its home.
    let hook_ran = w.sb.root().join("hook-ran");
    fs::write(
        Path::new(&pool).join("hook.sh"),
        format!("#!/bin/sh\ntouch '{}'\n", hook_ran.display()),
    )
    .unwrap();
    chmod(&Path::new(&pool).join("hook.sh"), 0o755);
    chmod(Path::new(&pool), 0o777);
    w.sb.fake_cli("claude")
        .script(
            "[ -x \"$CLAUDE_CONFIG_DIR/hook.sh\" ] && \"$CLAUDE_CONFIG_DIR/hook.sh\"\necho 'claude answered'",
        )
        .install();
    w.sb.write_config(&format!(
        r#"
[[rungs]]
backend = "claude"
probe_model = "opus"

[[rungs]]
backend = "codex"

[[accounts]]
name = "pool"
backend = "claude"
kind = "login"
dir = "{pool}"
"#
    ));

    let status = w.sb.run(&["--status"]);
    let launch = w.sb.run(&["-p", "hi"]);

    let homes: Vec<String> =
        w.sb.calls("claude")
            .iter()
            .filter_map(|call| call.env.get("CLAUDE_CONFIG_DIR").cloned())
            .collect();
    assert!(
        !homes.contains(&pool),
        "claude ran with the pool as its home: {homes:?}"
    );
    assert!(!hook_ran.exists(), "the planted hook ran");
    let reason = format!("{pool} is writable by others (mode 0777)");
    assert!(status.stdout.contains(&reason), "{status:?}");
    assert_eq!(launch.code, Some(0), "{launch:?}");
    assert_eq!(w.sb.calls("codex").len(), 1, "{launch:?}");
}

#[test]
fn install_watchdog_refuses_tmp_and_a_world_writable_directory_and_takes_a_private_one() {
    let sb = Sandbox::new();
    let open = sb.home().join("open");
    fs::create_dir(&open).unwrap();
    chmod(&open, 0o777);
    let mine = sb.set_cwd("repo");

    for (dir, why) in [
        (Path::new("/tmp"), "/tmp is writable by others (mode 1777)"),
        (
            open.as_path(),
            &*format!("{} is writable by others (mode 0777)", open.display()),
        ),
    ] {
        let run = sb.run(&[
            "--install-watchdog",
            "--dry-run",
            "--scheduler",
            "cron",
            "--dir",
            dir.to_str().unwrap(),
        ]);
        assert_eq!(run.code, Some(2), "{}: {run:?}", dir.display());
        assert!(run.stderr.contains(why), "{}", run.stderr);
    }
    let run = sb.run(&["--install-watchdog", "--dry-run", "--scheduler", "cron"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.stdout.contains(&format!("cd '{}' &&", mine.display())),
        "{}",
        run.stdout
    );
}

#[test]
fn the_watchdogs_dir_has_its_tilde_expanded_where_the_shell_left_it() {
    let sb = Sandbox::new();
    let repo = sb.set_cwd("code/repo");
    sb.set_cwd("code");

    let run = sb.run(&[
        "--install-watchdog",
        "--dry-run",
        "--scheduler",
        "cron",
        "--dir=~/code/repo/../repo",
    ]);

    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.stdout.contains(&format!("cd '{}' &&", repo.display())),
        "{}",
        run.stdout
    );
}

#[test]
fn a_login_directory_is_stored_with_dot_dot_resolved() {
    let w = world();
    let dir = claude_login(&w.sb, "claude-b");
    fs::create_dir(w.sb.home().join("a")).unwrap();

    let run = add_login(&w.sb, "b", "a/../claude-b");

    assert_eq!(run.code, Some(0), "{run:?}");
    let stored = stored(&w.sb);
    assert!(stored.contains(&format!("dir = \"{dir}\"")), "{stored}");
}

#[test]
fn a_login_directory_is_stored_with_tilde_expanded_where_the_shell_left_it() {
    let w = world();
    let dir = claude_login(&w.sb, "claude-c");

    let run = add_login(&w.sb, "c", "~/claude-c");

    assert_eq!(run.code, Some(0), "{run:?}");
    let stored = stored(&w.sb);
    assert!(stored.contains(&format!("dir = \"{dir}\"")), "{stored}");
}

#[test]
fn a_configuration_from_a_fifo_or_dev_zero_is_refused_at_once() {
    let sb = Sandbox::new();
    let fifo = sb.root().join("config.fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();

    let mut by_flag = sb.command(&["--config", fifo.to_str().unwrap(), "--list"]);
    let mut by_env = sb.command(&["--list"]);
    by_env.env("AGENT_CONFIG", "/dev/zero");
    for (cmd, file, kind) in [
        (&mut by_flag, fifo.display().to_string(), "a FIFO"),
        (&mut by_env, "/dev/zero".to_string(), "a character device"),
    ] {
        // A safety bound, not a measurement: the old reader hung on the FIFO and read
        // /dev/zero until memory ran out.
        let run = run_command(
            std::mem::replace(cmd, sb.command(&[])),
            crate::support::sandbox::RUN_TIMEOUT,
        );
        assert!(!run.timed_out, "{file}: {run:?}");
        assert_eq!(run.code, Some(2), "{file}: {run:?}");
        assert!(
            run.stderr.contains(&format!(
                "the configuration file {file}: {kind}, not a regular file"
            )),
            "{}",
            run.stderr
        );
    }
}

#[test]
fn a_configuration_file_others_can_write_or_another_user_owns_is_refused() {
    let sb = Sandbox::new();
    sb.write_config("fastfail_seconds = 5\n");
    let config = sb.config_path();
    chmod(&config, 0o666);

    let writable = sb.run(&["--list"]);

    assert_eq!(writable.code, Some(2), "{writable:?}");
    assert!(
        writable.stderr.contains(&format!(
            "the configuration file {} is writable by others (mode 0666)",
            config.display()
        )),
        "{}",
        writable.stderr
    );
    chmod(&config, 0o644);
    assert_eq!(sb.run(&["--list"]).code, Some(0));
    // A directory others can write lets them swap the file itself.
    let dir = config.parent().unwrap();
    chmod(dir, 0o777);
    let swappable = sb.run(&["--list"]);
    assert_eq!(swappable.code, Some(2), "{swappable:?}");
    assert!(
        swappable.stderr.contains(&format!(
            "can be replaced by another user: {} above it is writable by others (mode 0777) and is not sticky",
            dir.display()
        )),
        "{}",
        swappable.stderr
    );
    chmod(dir, 0o755);
    if nix::unistd::geteuid().is_root() {
        nix::unistd::chown(&config, Some(nix::unistd::Uid::from_raw(4242)), None).unwrap();
        let foreign = sb.run(&["--list"]);
        assert_eq!(foreign.code, Some(2), "{foreign:?}");
        assert!(
            foreign.stderr.contains("belongs to uid 4242"),
            "{}",
            foreign.stderr
        );
    }
}

#[test]
fn install_statusline_writes_through_a_linked_settings_file_and_keeps_the_link() {
    let w = world();
    let target = w.sb.write_file(
        "dotfiles/claude-settings.json",
        "{\n  \"theme\": \"dark\"\n}\n",
    );
    fs::create_dir_all(w.sb.home().join(".claude")).unwrap();
    let link = w.sb.home().join(".claude/settings.json");
    std::os::unix::fs::symlink(&target, &link).unwrap();

    let run = w.sb.run(&["--install-statusline"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink(),
        "settings.json is no longer a link"
    );
    let written: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&target).unwrap()).unwrap();
    assert!(
        written["statusLine"]["command"]
            .as_str()
            .is_some_and(|c| c.ends_with(" --statusline")),
        "{written}"
    );
    assert_eq!(written["theme"], "dark");
    let backups: Vec<_> = fs::read_dir(w.sb.home().join(".claude"))
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("settings.json.agent-backup-")
        })
        .collect();
    assert_eq!(backups.len(), 1, "the copy made before the change");

    let undo = w.sb.run(&["--uninstall-statusline"]);
    assert_eq!(undo.code, Some(0), "{undo:?}");
    assert!(
        fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(!fs::read_to_string(&target).unwrap().contains("statusLine"));
}

#[test]
fn doctor_and_list_show_a_backend_named_with_terminal_escapes_without_them() {
    let w = world();
    w.sb.write_config(
        r#"
[backends."evil\u001b]0;pwned\u0007\u001b[2J\u202e"]
command = "cl\u001b[31maude"
label = "Evil\u001b[1A"
vendor = "anthropic"
model_flag = "--model"
probe = { kind = "command" }

[[rungs]]
backend = "evil\u001b]0;pwned\u0007\u001b[2J\u202e"
"#,
    );

    for args in [["--list"], ["--doctor"]] {
        let run = w.sb.run(&args);
        assert!(run.stdout.contains("evil"), "{args:?}: {run:?}");
        for bad in ['\u{1b}', '\u{7}', '\u{202e}'] {
            assert!(
                !run.stdout.contains(bad) && !run.stderr.contains(bad),
                "{args:?} printed {bad:?}: {run:?}"
            );
        }
    }
}
