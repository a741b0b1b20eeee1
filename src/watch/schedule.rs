//! `--install-watchdog` / `--uninstall-watchdog`: run `agent --check-fallback` on a
//! schedule — a launchd agent on macOS, a systemd user service and timer on Linux, or a
//! crontab line where neither applies. The job pins agent's absolute path and a `PATH`
//! holding every directory where a CLI was found (launchd, systemd and cron start with a
//! minimal `PATH`); credentials come from `~/.config/agent/watchdog.env` (0600), which the
//! job reads, so no secret is ever written into a unit file. The job runs in a directory
//! the user chose (`--dir`, else where `--install-watchdog` ran): the check is for a launch
//! there, runs a CLI there only when that CLI trusts it, and reports a folder it would refuse.
//! Every form runs the job with the umask 077, so the log it appends to (and anything else
//! it creates) is the user's alone from its first line: `--doctor` refuses a log others can
//! read.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{Context as _, bail};

use crate::bounds::{Bounds, Unit};
use crate::config::Config;
use crate::exit_codes::usage;
use crate::service_text::{
    cron_command, plist_text, sh_word, systemd_assignment, systemd_exec_start, systemd_path,
};

pub const LAUNCHD_LABEL: &str = "dev.agent.watchdog";
pub const SYSTEMD_UNIT: &str = "agent-watchdog";
const CRON_MARK: &str = "# agent-watchdog";

pub use crate::cli::watchdog::Scheduler;

impl Scheduler {
    /// launchd on macOS; systemd when it runs this machine; cron otherwise.
    pub fn detect() -> Scheduler {
        if cfg!(target_os = "macos") {
            Scheduler::Launchd
        } else if Path::new("/run/systemd/system").is_dir() && which::which("systemctl").is_ok() {
            Scheduler::Systemd
        } else {
            Scheduler::Cron
        }
    }
}

/// What an installation writes and runs.
#[derive(Debug)]
pub struct Plan {
    pub scheduler: Scheduler,
    pub files: Vec<(PathBuf, String)>,
    /// Commands that enable the job, in order.
    pub enable: Vec<Vec<String>>,
    /// For cron: the line to add to the crontab.
    pub cron_line: Option<String>,
    pub env_file: PathBuf,
    /// The directory the job runs the check in.
    pub dir: PathBuf,
}

/// How often the watchdog may run: at least every 5 minutes (each check makes real
/// calls), at most every 30 days (cron's day-of-month step cannot say more).
const EVERY: Bounds = Bounds::between(
    Duration::from_secs(5 * 60),
    Duration::from_secs(30 * 86_400),
);

/// Parses `30m`, `2h`, `1d`, within [`EVERY`].
pub fn parse_every(text: &str) -> anyhow::Result<Duration> {
    let text = text.trim();
    let (number, unit) = text.split_at(
        text.find(|c: char| !c.is_ascii_digit())
            .unwrap_or(text.len()),
    );
    let expected = || usage(format!("--every {text}: expected e.g. 30m, 2h or 1d"));
    let n: f64 = number.parse().map_err(|_| expected())?;
    let unit = match unit {
        "m" | "min" => Unit::Minutes,
        "h" => Unit::Hours,
        "d" => Unit::Days,
        _ => return Err(expected()),
    };
    let every = crate::bounds::duration(n, unit, EVERY)
        .map_err(|why| usage(format!("--every {text}: {why}")))?;
    // Whole minutes: the timer, launchd and cron all count in them or coarser.
    Ok(Duration::from_secs(every.as_secs() / 60 * 60))
}

pub use crate::backend::discover::pinned_path;
pub use crate::paths::pinned_env;

/// The directory the job runs in: `flag`, else the current directory; it must exist, is
/// kept absolute (the job starts wherever its scheduler likes) in the spelling
/// [`crate::paths::user_path`] gives every path the user names, and must be one no other user
/// can change ([`crate::ownership`]): every CLI is run there, every two hours, as the user.
pub fn job_dir(flag: Option<&Path>) -> anyhow::Result<PathBuf> {
    let named = match flag {
        Some(dir) => dir.to_path_buf(),
        None => std::env::current_dir()
            .context("finding the current directory (name the job's with --dir DIR)")?,
    };
    let dir = crate::paths::user_path(&named).unwrap_or_else(|| named.clone());
    match fs::metadata(&dir) {
        Ok(meta) if meta.is_dir() => {}
        Ok(_) => return Err(usage(format!("--dir {}: not a directory", named.display()))),
        Err(err) => return Err(usage(format!("--dir {}: {err}", named.display()))),
    }
    crate::ownership::refuse_exposed(&dir, "--install-watchdog: the watchdog's directory")?;
    Ok(dir)
}

/// `dir` is where the job runs the check (see [`job_dir`]).
pub fn plan(
    config: &Config,
    scheduler: Scheduler,
    every: Duration,
    dir: &Path,
    config_flag: Option<&Path>,
) -> anyhow::Result<Plan> {
    let agent = std::env::current_exe().context("finding agent's own path")?;
    let agent = fs::canonicalize(&agent).unwrap_or(agent);
    let home = crate::paths::home().context("no home directory")?;
    let config_dir = crate::paths::config_dir().context("no configuration directory")?;
    let env_file = config_dir.join("watchdog.env");
    let path = pinned_path(config, &agent);
    let mut env = pinned_env();
    if let Some(flag) = config_flag {
        let absolute = fs::canonicalize(flag).unwrap_or_else(|_| flag.to_path_buf());
        env.retain(|(k, _)| k != "AGENT_CONFIG");
        env.push((
            "AGENT_CONFIG".into(),
            absolute.to_string_lossy().into_owned(),
        ));
    }
    let log = crate::paths::state_dir().join("watchdog.log");
    let agent_text = agent.to_string_lossy().into_owned();
    let dir_text = dir.to_string_lossy().into_owned();
    // Loads the credentials file (if any) and runs the check: for launchd and cron, which
    // have no EnvironmentFile of their own.
    let script = format!(
        "set -a; [ -f {env} ] && . {env}; exec {agent} --check-fallback",
        env = sh_word(&env_file.to_string_lossy()),
        agent = sh_word(&agent_text)
    );
    let seconds = every.as_secs();
    let mut plan = Plan {
        scheduler,
        files: Vec::new(),
        enable: Vec::new(),
        cron_line: None,
        env_file: env_file.clone(),
        dir: dir.to_path_buf(),
    };
    match scheduler {
        Scheduler::Systemd => {
            let dir = config_home(&home).join("systemd/user");
            let mut service = String::new();
            let _ = writeln!(service, "[Unit]");
            let _ = writeln!(
                service,
                "Description=agent watchdog: prove the provider-independent fallbacks still answer"
            );
            let _ = writeln!(service, "\n[Service]\nType=oneshot\nUMask=0077");
            let _ = writeln!(
                service,
                "WorkingDirectory={}",
                systemd_path("the watchdog's directory", &dir_text)?
            );
            let _ = writeln!(service, "Environment={}", systemd_assignment("PATH", &path));
            for (name, value) in &env {
                let _ = writeln!(service, "Environment={}", systemd_assignment(name, value));
            }
            let _ = writeln!(
                service,
                "EnvironmentFile=-{}",
                systemd_path("the credentials file", &env_file.to_string_lossy())?
            );
            let _ = writeln!(
                service,
                "ExecStart={}",
                systemd_exec_start(&[agent_text.clone(), "--check-fallback".into()])
            );
            let timer = format!(
                "[Unit]\nDescription=Run the agent watchdog every {}\n\n[Timer]\nOnBootSec=5min\nOnUnitActiveSec={seconds}s\nUnit={SYSTEMD_UNIT}.service\n\n[Install]\nWantedBy=timers.target\n",
                humane(every)
            );
            plan.files
                .push((dir.join(format!("{SYSTEMD_UNIT}.service")), service));
            plan.files
                .push((dir.join(format!("{SYSTEMD_UNIT}.timer")), timer));
            plan.enable.push(vec![
                "systemctl".into(),
                "--user".into(),
                "daemon-reload".into(),
            ]);
            plan.enable.push(vec![
                "systemctl".into(),
                "--user".into(),
                "enable".into(),
                "--now".into(),
                format!("{SYSTEMD_UNIT}.timer"),
            ]);
        }
        Scheduler::Launchd => {
            let file = home
                .join("Library/LaunchAgents")
                .join(format!("{LAUNCHD_LABEL}.plist"));
            let mut vars = format!(
                "\t\t<key>PATH</key>\n\t\t<string>{}</string>\n",
                plist_text("PATH", &path)?
            );
            for (name, value) in &env {
                let _ = write!(
                    vars,
                    "\t\t<key>{}</key>\n\t\t<string>{}</string>\n",
                    plist_text(name, name)?,
                    plist_text(name, value)?
                );
            }
            let plist = format!(
                r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
	<key>Label</key>
	<string>{LAUNCHD_LABEL}</string>
	<key>ProgramArguments</key>
	<array>
		<string>/bin/sh</string>
		<string>-c</string>
		<string>{script}</string>
	</array>
	<key>WorkingDirectory</key>
	<string>{dir}</string>
	<key>EnvironmentVariables</key>
	<dict>
{vars}	</dict>
	<key>StartInterval</key>
	<integer>{seconds}</integer>
	<key>RunAtLoad</key>
	<true/>
	<key>Umask</key>
	<integer>63</integer>
	<key>StandardOutPath</key>
	<string>{log}</string>
	<key>StandardErrorPath</key>
	<string>{log}</string>
</dict>
</plist>
"#,
                script = plist_text("agent's path or the credentials file", &script)?,
                dir = plist_text("the watchdog's directory", &dir_text)?,
                log = plist_text("the log file", &log.to_string_lossy())?,
            );
            let uid = nix::unistd::getuid();
            plan.enable.push(vec![
                "launchctl".into(),
                "bootstrap".into(),
                format!("gui/{uid}"),
                file.to_string_lossy().into_owned(),
            ]);
            plan.files.push((file, plist));
        }
        Scheduler::Cron => {
            let schedule = cron_schedule(every);
            let mut vars = format!("PATH={}", sh_word(&path));
            for (name, value) in &env {
                let _ = write!(vars, " {name}={}", sh_word(value));
            }
            let command = cron_command(
                "--scheduler cron",
                &format!(
                    // cron's shell opens the log: with its own umask (022), 0644.
                    "umask 077 && cd {} && {vars} /bin/sh -c {} >> {} 2>&1",
                    sh_word(&dir_text),
                    sh_word(&script),
                    sh_word(&log.to_string_lossy())
                ),
            )?;
            plan.cron_line = Some(format!("{schedule} {command} {CRON_MARK}"));
        }
    }
    Ok(plan)
}

fn config_home(home: &Path) -> PathBuf {
    match std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => home.join(".config"),
    }
}

/// `30m`, `2h`, `1d`: the interval as `--every` takes it.
pub fn humane(every: Duration) -> String {
    let s = every.as_secs();
    if s.is_multiple_of(86_400) {
        format!("{}d", s / 86_400)
    } else if s.is_multiple_of(3600) {
        format!("{}h", s / 3600)
    } else {
        format!("{}m", s / 60)
    }
}

/// The nearest crontab schedule: every N minutes, hours or days.
fn cron_schedule(every: Duration) -> String {
    let minutes = (every.as_secs() / 60).max(1);
    if minutes < 60 {
        format!("*/{minutes} * * * *")
    } else if minutes < 24 * 60 {
        format!("0 */{} * * *", minutes / 60)
    } else {
        format!("0 0 */{} * *", minutes / (24 * 60))
    }
}

/// Writes the files (0600) and enables the job, or says exactly what to run.
pub fn install(plan: &Plan, dry_run: bool) -> anyhow::Result<String> {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "the check {} in {} (choose another with --dir DIR)",
        if dry_run { "would run" } else { "runs" },
        plan.dir.display()
    );
    if !dry_run {
        // The job's log goes to the state directory: it must exist before the first run.
        crate::state::file::ensure_state_dir(&crate::paths::state_dir())?;
    }
    for (path, content) in &plan.files {
        let _ = writeln!(
            out,
            "{} {}:",
            if dry_run { "would write" } else { "wrote" },
            path.display()
        );
        for line in content.lines() {
            let _ = writeln!(out, "    {line}");
        }
        if !dry_run {
            // The one door for files agent writes: 0600 from the start, atomic, its
            // directory made if missing.
            crate::state::file::write_atomic(
                path,
                content.as_bytes(),
                crate::state::file::Durability::Synced,
            )?;
        }
    }
    if let Some(line) = &plan.cron_line {
        let _ = writeln!(out, "crontab line:\n    {line}");
        if !dry_run {
            // Nothing else installs a cron job: a crontab not written is no watchdog.
            if let Err(err) = add_cron_line(line) {
                bail!(
                    "the watchdog is not installed: could not edit your crontab ({err:#}); add this line with `crontab -e`:\n    {line}"
                );
            }
            let _ = writeln!(out, "added to your crontab (`crontab -l` shows it)");
        }
    }
    for command in &plan.enable {
        let shown = command.join(" ");
        if dry_run {
            let _ = writeln!(out, "would run: {shown}");
            continue;
        }
        match run(command) {
            Ok(()) => {
                let _ = writeln!(out, "ran: {shown}");
            }
            Err(err) => {
                let _ = writeln!(
                    out,
                    "could not run `{shown}` ({err:#}); run it yourself:\n    {shown}"
                );
            }
        }
    }
    let _ = writeln!(
        out,
        "credentials for the check go in {} (0600, KEY=value lines): the job reads it, nothing else does",
        plan.env_file.display()
    );
    Ok(out)
}

/// Removes the job of `scheduler`: disables it, deletes its files or crontab line.
pub fn uninstall(plan: &Plan, dry_run: bool) -> anyhow::Result<String> {
    let mut out = String::new();
    let disable: Vec<Vec<String>> = match plan.scheduler {
        Scheduler::Systemd => vec![vec![
            "systemctl".into(),
            "--user".into(),
            "disable".into(),
            "--now".into(),
            format!("{SYSTEMD_UNIT}.timer"),
        ]],
        Scheduler::Launchd => plan
            .files
            .iter()
            .map(|(path, _)| {
                vec![
                    "launchctl".into(),
                    "bootout".into(),
                    format!("gui/{}", nix::unistd::getuid()),
                    path.to_string_lossy().into_owned(),
                ]
            })
            .collect(),
        Scheduler::Cron => Vec::new(),
    };
    for command in &disable {
        let shown = command.join(" ");
        if dry_run {
            let _ = writeln!(out, "would run: {shown}");
        } else if let Err(err) = run(command) {
            let _ = writeln!(
                out,
                "could not run `{shown}` ({err:#}); run it yourself if the job is still loaded"
            );
        } else {
            let _ = writeln!(out, "ran: {shown}");
        }
    }
    for (path, _) in &plan.files {
        if !path.exists() {
            continue;
        }
        if dry_run {
            let _ = writeln!(out, "would remove {}", path.display());
        } else {
            fs::remove_file(path).with_context(|| format!("removing {}", path.display()))?;
            let _ = writeln!(out, "removed {}", path.display());
        }
    }
    if plan.scheduler == Scheduler::Cron {
        if dry_run {
            let _ = writeln!(out, "would remove the `{CRON_MARK}` line from your crontab");
        } else {
            remove_cron_line()?;
            let _ = writeln!(out, "removed the `{CRON_MARK}` line from your crontab");
        }
    }
    Ok(out)
}

/// Where the watchdog is installed, if anywhere (for `--doctor`).
pub fn installed() -> Option<String> {
    let home = crate::paths::home()?;
    let unit = config_home(&home)
        .join("systemd/user")
        .join(format!("{SYSTEMD_UNIT}.timer"));
    if unit.exists() {
        return Some(format!("systemd user timer {}", unit.display()));
    }
    let plist = home
        .join("Library/LaunchAgents")
        .join(format!("{LAUNCHD_LABEL}.plist"));
    if plist.exists() {
        return Some(format!("launchd agent {}", plist.display()));
    }
    if current_crontab()
        .ok()?
        .lines()
        .any(|l| l.contains(CRON_MARK))
    {
        return Some("crontab line".to_string());
    }
    None
}

/// How long launchctl, systemctl or crontab may take.
const TOOL_TIMEOUT: Duration = Duration::from_secs(30);

/// Runs a scheduler's tool within [`TOOL_TIMEOUT`], `stdin` written to it.
fn tool(command: &mut Command, stdin: &[u8]) -> anyhow::Result<std::process::Output> {
    let job = crate::child::Job::new(TOOL_TIMEOUT, crate::child::Group::Own).stdin(stdin);
    let ran = crate::child::run(command, &job)
        .with_context(|| format!("starting {}", command.get_program().display()))?;
    Ok(ran.output()?)
}

fn run(command: &[String]) -> anyhow::Result<()> {
    let output = tool(
        crate::child_env::command(&command[0]).args(&command[1..]),
        b"",
    )?;
    if output.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    bail!(
        "exit {}: {}",
        output.status.code().unwrap_or(-1),
        crate::probe::snippet(stderr.trim())
    )
}

fn current_crontab() -> anyhow::Result<String> {
    let output =
        tool(crate::child_env::command("crontab").arg("-l"), b"").context("running crontab -l")?;
    // "no crontab for user" is an empty crontab, not an error.
    Ok(if output.status.success() {
        String::from_utf8_lossy(&output.stdout).into_owned()
    } else {
        String::new()
    })
}

fn set_crontab(text: &str) -> anyhow::Result<()> {
    let output = tool(
        crate::child_env::command("crontab").arg("-"),
        text.as_bytes(),
    )
    .context("running crontab -")?;
    if !output.status.success() {
        bail!(
            "crontab - failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok(())
}

fn add_cron_line(line: &str) -> anyhow::Result<()> {
    let mut lines: Vec<String> = current_crontab()?
        .lines()
        .filter(|l| !l.contains(CRON_MARK))
        .map(String::from)
        .collect();
    lines.push(line.to_string());
    set_crontab(&(lines.join("\n") + "\n"))
}

fn remove_cron_line() -> anyhow::Result<()> {
    let current = current_crontab()?;
    if !current.contains(CRON_MARK) {
        return Ok(());
    }
    let kept: Vec<&str> = current.lines().filter(|l| !l.contains(CRON_MARK)).collect();
    set_crontab(&(kept.join("\n") + "\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_accepts_minutes_hours_and_days() {
        assert_eq!(parse_every("30m").unwrap(), Duration::from_secs(1800));
        assert_eq!(parse_every("2h").unwrap(), Duration::from_secs(7200));
        assert_eq!(parse_every("1d").unwrap(), Duration::from_secs(86_400));
        assert!(parse_every("1m").is_err());
        assert!(parse_every("often").is_err());
        assert_eq!(cron_schedule(Duration::from_secs(7200)), "0 */2 * * *");
        assert_eq!(cron_schedule(Duration::from_secs(1800)), "*/30 * * * *");
    }
}
