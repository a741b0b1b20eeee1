//! `agent --relay install`: keep the relay running — a systemd user service on Linux, a
//! launchd agent on macOS. The unit pins agent's absolute path and a `PATH` with every
//! directory where a CLI was found (the `claude-cli` upstream needs `claude`); keys come
//! from `~/.config/agent/relay.env` (0600, `AGENT_RELAY_<NAME>_KEY=…`), which the service
//! reads, so no secret is ever written into the unit itself. The unit also sets the
//! open-file limit the relay's connection cap needs (`LimitNOFILE=`, `NumberOfFiles`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;

use crate::config::Config;
use crate::service_text::{plist_text, systemd_assignment, systemd_exec_start, systemd_path};
use crate::state::file::{self as state_file, Durability};

pub const SYSTEMD_UNIT: &str = "agent-relay.service";
pub const LAUNCHD_LABEL: &str = "dev.agent.relay";
/// Beside the configuration: the keys the service reads at start.
pub const ENV_FILE: &str = "relay.env";

/// What an installation writes, and what to run after.
pub struct Plan {
    pub file: PathBuf,
    pub text: String,
    pub env_file: PathBuf,
    pub next: Vec<String>,
}

/// The command line the service runs: agent's absolute path, the configuration file when
/// one was named, `--relay serve`.
fn argv(agent: &Path, config_flag: Option<&Path>) -> Vec<String> {
    let mut argv = vec![agent.to_string_lossy().into_owned()];
    if let Some(path) = config_flag {
        argv.push("--config".into());
        argv.push(path.to_string_lossy().into_owned());
    }
    argv.extend(["--relay".into(), "serve".into()]);
    argv
}

/// Variables the service needs: `PATH`, and where its configuration and state are (the
/// same as the watchdog's job).
fn pinned_env(path: String) -> Vec<(String, String)> {
    let mut env = vec![("PATH".to_string(), path)];
    env.extend(crate::paths::pinned_env());
    env
}

pub fn plan(config: &Config, config_flag: Option<&Path>, launchd: bool) -> anyhow::Result<Plan> {
    let home = crate::paths::home().context("no home directory (set HOME)")?;
    let agent = std::env::current_exe().context("finding agent's own path")?;
    let agent = std::fs::canonicalize(&agent).unwrap_or(agent);
    let config_dir = crate::paths::config_dir().context("no configuration directory")?;
    let env_file = config_dir.join(ENV_FILE);
    // The service starts in another directory: a relative --config would name another file.
    let config_flag =
        config_flag.map(|path| std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()));
    let argv = argv(&agent, config_flag.as_deref());
    // The relay raises its soft limit to the hard one; this makes the hard one enough.
    let open_files = super::connections::open_files_for(config.relay.max_connections);
    let env = pinned_env(crate::backend::discover::pinned_path(config, &agent));
    if launchd {
        let file = home
            .join("Library/LaunchAgents")
            .join(format!("{LAUNCHD_LABEL}.plist"));
        let log = home.join("Library/Logs/agent-relay.log");
        // launchd has no environment file: a shell reads relay.env, then execs agent.
        let command = format!(
            "set -a; [ -r {env} ] && . {env}; set +a; exec {argv}",
            env = crate::text::shell_quote(&env_file.to_string_lossy()),
            argv = argv
                .iter()
                .map(|a| crate::text::shell_quote(a))
                .collect::<Vec<_>>()
                .join(" ")
        );
        let mut text = String::from(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" \"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\n<plist version=\"1.0\">\n<dict>\n",
        );
        let _ = write!(
            text,
            "  <key>Label</key><string>{LAUNCHD_LABEL}</string>\n  <key>ProgramArguments</key>\n  <array>\n    <string>/bin/sh</string>\n    <string>-c</string>\n    <string>{}</string>\n  </array>\n  <key>EnvironmentVariables</key>\n  <dict>\n",
            plist_text("agent's path, the configuration or relay.env", &command)?
        );
        for (name, value) in &env {
            let _ = writeln!(
                text,
                "    <key>{}</key><string>{}</string>",
                plist_text(name, name)?,
                plist_text(name, value)?
            );
        }
        let _ = write!(
            text,
            "  </dict>\n  <key>SoftResourceLimits</key>\n  <dict>\n    <key>NumberOfFiles</key><integer>{open_files}</integer>\n  </dict>\n  <key>RunAtLoad</key><true/>\n  <key>KeepAlive</key><true/>\n  <key>Umask</key><integer>63</integer>\n  <key>StandardErrorPath</key><string>{}</string>\n</dict>\n</plist>\n",
            plist_text("the log file", &log.to_string_lossy())?
        );
        let next = vec![format!(
            "launchctl bootstrap gui/$(id -u) {}",
            crate::text::shell_quote(&file.to_string_lossy())
        )];
        return Ok(Plan {
            file,
            text,
            env_file,
            next,
        });
    }
    let file = crate::paths::config_dir()
        .and_then(|dir| dir.parent().map(Path::to_path_buf))
        .unwrap_or_else(|| home.join(".config"))
        .join("systemd/user")
        .join(SYSTEMD_UNIT);
    let mut text = String::from(
        "[Unit]\nDescription=agent credential relay (agent --relay serve)\nAfter=network.target\n\n[Service]\nType=simple\n",
    );
    let _ = writeln!(text, "ExecStart={}", systemd_exec_start(&argv));
    for (name, value) in &env {
        let _ = writeln!(text, "Environment={}", systemd_assignment(name, value));
    }
    let _ = writeln!(
        text,
        "EnvironmentFile=-{}",
        systemd_path("relay.env", &env_file.to_string_lossy())?
    );
    let _ = writeln!(text, "LimitNOFILE={open_files}");
    text.push_str("Restart=on-failure\nRestartSec=2\nUMask=0077\nNoNewPrivileges=yes\n\n[Install]\nWantedBy=default.target\n");
    let next = vec![
        "systemctl --user daemon-reload".to_string(),
        format!("systemctl --user enable --now {SYSTEMD_UNIT}"),
    ];
    Ok(Plan {
        file,
        text,
        env_file,
        next,
    })
}

/// Writes the unit (unless `dry_run`) and says what to do next.
pub fn install(plan: &Plan, dry_run: bool) -> anyhow::Result<String> {
    let mut out = String::new();
    if dry_run {
        let _ = writeln!(out, "would write {}:\n{}", plan.file.display(), plan.text);
    } else {
        state_file::write_atomic(&plan.file, plan.text.as_bytes(), Durability::Synced)?;
        let _ = writeln!(out, "wrote {}", plan.file.display());
    }
    let _ = writeln!(
        out,
        "keys: put AGENT_RELAY_<NAME>_KEY=… lines in {} (chmod 600); the service reads it at start",
        plan.env_file.display()
    );
    let _ = writeln!(out, "token: `agent --relay init` if you have none yet");
    let _ = writeln!(out, "then run:");
    for command in &plan.next {
        let _ = writeln!(out, "  {command}");
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_quoted_only_when_needed() {
        assert_eq!(crate::text::shell_quote("/usr/bin/agent"), "/usr/bin/agent");
        assert_eq!(crate::text::shell_quote("/my dir/agent"), "'/my dir/agent'");
        assert_eq!(
            argv(Path::new("/a/agent"), Some(Path::new("/c.toml"))),
            ["/a/agent", "--config", "/c.toml", "--relay", "serve"]
        );
    }
}
