//! What no child agent starts may inherit: agent's own secrets (DESIGN §23). A launched CLI
//! runs the repository's hooks and MCP servers, a probe or a self-check runs the same CLI,
//! and every one of them would otherwise see the relay's token and upstream keys, the alert
//! tokens and the store's password — none of which any CLI reads.
//!
//! This is the one list, and [`command`] is the one way a [`Command`] is made (a test reads
//! `src/` and fails on a `Command::new` anywhere else): each withheld variable agent itself
//! has is removed before the caller sets anything, so a value the caller sets on purpose (a
//! backend's `env = { ANTHROPIC_AUTH_TOKEN = "${AGENT_PROXY_KEY}" }`) still reaches the child
//! under the name the CLI reads — the child gets the mapped variable, never agent's own.
//!
//! Other vendors' key variables are the adapter's business (it knows which a CLI reads):
//! a rung removes them through its own `env_remove`.
//!
//! It is also the one door for *where* a child starts. A child finds "its folder" by `PWD`
//! as often as by its real working directory (opencode looks for `.opencode/` plugins from
//! `$PWD`; shells and Node's tools prefer it too), so a child started in agent's scratch
//! directory with the user's `PWD` still ran the repository's plugin. Every child's `PWD`
//! names the directory it really starts in: [`command`] sets it to agent's own directory,
//! and [`start_in`] — the only place a child's directory is chosen (a test reads `src/`
//! for any other `current_dir`) — to the one it is given.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock, PoisonError};

/// agent's own secrets by name. `AGENT_PROXY_KEY` is here too: Claude Code reads the
/// proxy's token from `ANTHROPIC_AUTH_TOKEN`, which the claude-proxy backend sets from it.
pub const OWN_SECRETS: &[&str] = &[
    "AGENT_RELAY_TOKEN",
    "AGENT_TELEGRAM_TOKEN",
    "AGENT_PROXY_KEY",
];

/// agent's own per-process settings no child may take as its own: an `agent` the launched
/// CLI runs (a hook, a script) would otherwise write its outcome record into this one's
/// file (`AGENT_OUTCOME`, DESIGN §21).
pub const OWN_RECORDS: &[&str] = &["AGENT_OUTCOME"];

/// The relay's variables: its token and each upstream's `AGENT_RELAY_<NAME>_KEY` (and its
/// `_BASE`, no secret but of no use to any CLI, which keeps the rule one prefix).
pub const RELAY_PREFIX: &str = "AGENT_RELAY_";

fn named_by_config() -> std::sync::MutexGuard<'static, Vec<OsString>> {
    static NAMES: OnceLock<Mutex<Vec<OsString>>> = OnceLock::new();
    NAMES
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
}

/// Withholds one more variable for the rest of the process: one the configuration expands
/// into a secret (an alert's `bot_token = "${VAR}"`, a webhook's URL, the store's URL).
pub fn withhold(name: &str) {
    let mut names = named_by_config();
    if !names.iter().any(|known| known == name) {
        names.push(name.into());
    }
}

/// Whether a child may not inherit `name` from agent.
pub fn is_withheld(name: &OsStr) -> bool {
    let text = name.to_string_lossy();
    text.starts_with(RELAY_PREFIX)
        || OWN_SECRETS.contains(&text.as_ref())
        || OWN_RECORDS.contains(&text.as_ref())
        || named_by_config().iter().any(|known| known == name)
}

/// A command for `program` that inherits agent's environment without agent's own secrets,
/// started in agent's own directory with a `PWD` that names it. What the caller sets on it
/// afterwards is set as asked.
pub fn command(program: impl AsRef<OsStr>) -> Command {
    let mut command = Command::new(program);
    for (name, _) in std::env::vars_os() {
        if is_withheld(&name) {
            command.env_remove(name);
        }
    }
    match own_dir() {
        Some(dir) => command.env("PWD", dir),
        // No directory agent can name: no `PWD` at all beats one that names another folder.
        None => command.env_remove("PWD"),
    };
    command
}

/// Starts `command` in `dir`, with a `PWD` that names it: the one way a child is given a
/// directory other than agent's own.
pub fn start_in<'a>(command: &'a mut Command, dir: &Path) -> &'a mut Command {
    let named = if dir.is_absolute() {
        dir.to_path_buf()
    } else {
        std::env::current_dir().map_or_else(|_| dir.to_path_buf(), |here| here.join(dir))
    };
    command.current_dir(dir).env("PWD", named)
}

/// agent's own directory as `PWD` should name it: the inherited `PWD` when it names this
/// very directory (it keeps the path the user typed, through links), else the real one.
fn own_dir() -> Option<PathBuf> {
    let real = std::env::current_dir().ok()?;
    let inherited = std::env::var_os("PWD").map(PathBuf::from);
    Some(match inherited {
        Some(logical) if logical.is_absolute() && same_file(&logical, &real) => logical,
        _ => real,
    })
}

/// Whether `a` and `b` are one directory (same device and inode), following links.
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt as _;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_relays_variables_and_agents_tokens_are_withheld_and_others_are_not() {
        for name in [
            "AGENT_RELAY_TOKEN",
            "AGENT_RELAY_ANTHROPIC_KEY",
            "AGENT_RELAY_CLAUDE_CLI_BASE",
            "AGENT_TELEGRAM_TOKEN",
            "AGENT_PROXY_KEY",
        ] {
            assert!(is_withheld(OsStr::new(name)), "{name}");
        }
        for name in ["AGENT_PROXY_URL", "AGENT_STATE_DIR", "HOME", "PATH"] {
            assert!(!is_withheld(OsStr::new(name)), "{name}");
        }
    }

    fn pwd_of(command: &Command) -> Option<PathBuf> {
        command
            .get_envs()
            .find(|(name, _)| *name == "PWD")
            .and_then(|(_, value)| value.map(PathBuf::from))
    }

    #[test]
    fn a_child_started_elsewhere_has_a_pwd_that_names_where_it_starts() {
        let scratch = tempfile::tempdir().unwrap();
        let mut child = command("true");
        start_in(&mut child, scratch.path());
        assert_eq!(child.get_current_dir(), Some(scratch.path()));
        assert_eq!(pwd_of(&child).as_deref(), Some(scratch.path()));
    }

    #[test]
    fn a_child_started_in_agents_directory_has_a_pwd_that_names_it() {
        let child = command("true");
        let pwd = pwd_of(&child).expect("PWD is set");
        assert!(
            same_file(&pwd, &std::env::current_dir().unwrap()),
            "{pwd:?}"
        );
    }

    #[test]
    fn a_variable_the_configuration_names_is_withheld_from_then_on() {
        let name = "CHILD_ENV_TEST_STORE_URL";
        assert!(!is_withheld(OsStr::new(name)));
        withhold(name);
        assert!(is_withheld(OsStr::new(name)));
    }
}
