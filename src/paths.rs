//! Where agent reads its configuration and keeps its state (DESIGN.md §3): XDG layout on
//! every Unix, macOS included (the `directories` crate would pick Application Support).

use std::env;
use std::path::{Component, Path, PathBuf};

/// The user's home directory: `$HOME`, else the password database.
pub fn home() -> Option<PathBuf> {
    match env::var_os("HOME") {
        Some(home) if !home.is_empty() => Some(PathBuf::from(home)),
        _ => directories::BaseDirs::new().map(|dirs| dirs.home_dir().to_path_buf()),
    }
}

fn xdg(var: &str, fallback: &str) -> Option<PathBuf> {
    match env::var_os(var) {
        Some(dir) if !dir.is_empty() && PathBuf::from(&dir).is_absolute() => {
            Some(PathBuf::from(dir))
        }
        _ => home().map(|home| home.join(fallback)),
    }
}

/// The configuration directory: `$XDG_CONFIG_HOME/agent`, else `~/.config/agent`.
pub fn config_dir() -> Option<PathBuf> {
    xdg("XDG_CONFIG_HOME", ".config").map(|dir| dir.join("agent"))
}

/// Where the configuration file is looked for, and whether the user named it explicitly
/// (an explicit file that is missing is an error; the default one may be absent).
pub fn config_file(flag: Option<PathBuf>) -> Option<(PathBuf, bool)> {
    if let Some(path) = flag {
        return Some((user_path(&path).unwrap_or(path), true));
    }
    if let Some(path) = env::var_os("AGENT_CONFIG").filter(|p| !p.is_empty()) {
        let path = PathBuf::from(path);
        return Some((user_path(&path).unwrap_or(path), true));
    }
    config_dir().map(|dir| (dir.join("config.toml"), false))
}

/// The state directory: `$AGENT_STATE_DIR`, else `$XDG_STATE_HOME/agent`, else
/// `~/.local/state/agent`. Without any of them, an empty path, which every state file
/// operation refuses: never a shared directory such as `/tmp`, where another user could
/// plant agent's state.
pub fn state_dir() -> PathBuf {
    if let Some(dir) = env::var_os("AGENT_STATE_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    xdg("XDG_STATE_HOME", ".local/state").map_or_else(PathBuf::new, |dir| dir.join("agent"))
}

/// Variables the job needs besides `PATH`: the configuration and state it runs with.
pub fn pinned_env() -> Vec<(String, String)> {
    let mut env = Vec::new();
    for var in [
        "AGENT_CONFIG",
        "AGENT_STATE_DIR",
        "XDG_CONFIG_HOME",
        "XDG_STATE_HOME",
    ] {
        if let Ok(value) = std::env::var(var)
            && !value.is_empty()
        {
            env.push((var.to_string(), value));
        }
    }
    env
}

/// Where `agent --relay init` keeps the relay token: beside the configuration, 0600.
pub fn relay_token_file() -> Option<PathBuf> {
    config_dir().map(|dir| dir.join("relay-token"))
}

/// A path the user named (`--dir`, `--config`, `$AGENT_CONFIG`, a login's `dir`), in the one
/// spelling agent keeps: `~` and `~/…` expanded from the home (a shell leaves `--dir=~/x`
/// alone), made absolute against the current directory, and `.` and `..` resolved lexically,
/// as `cd` does — so `--dir a/../b` is stored as `b`'s absolute path.
///
/// Lexical, not canonical: the path need not exist yet (a login directory is named before
/// the CLI logs in there), the spelling the user chose survives (a dotfile manager's link
/// stays the name the CLI is given, and the key a login's windows are filed under stays the
/// same from one run to the next), and no file system call is made when a configuration is
/// read. Who may write the place it leads to is [`crate::ownership`]'s question, which follows
/// links. `None` without a home for a path starting with `~`, or without a current directory
/// for a relative one.
pub fn user_path(path: &Path) -> Option<PathBuf> {
    let mut parts = path.components().peekable();
    let start = match parts.peek() {
        Some(Component::Normal(first)) if *first == "~" => {
            parts.next();
            home()?
        }
        Some(Component::RootDir) => PathBuf::from("/"),
        _ => env::current_dir().ok()?,
    };
    let mut normal = PathBuf::new();
    for part in start.components().chain(parts) {
        match part {
            Component::CurDir => {}
            // `..` at the root stays at the root, as the kernel has it.
            Component::ParentDir => {
                normal.pop();
            }
            other => normal.push(other),
        }
    }
    Some(normal)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_user_path_is_absolute_tilde_expanded_and_without_dot_segments() {
        let home = home().expect("a home");
        let cwd = env::current_dir().unwrap();
        assert_eq!(user_path(Path::new("~/x")), Some(home.join("x")));
        assert_eq!(user_path(Path::new("~")), Some(home.clone()));
        assert_eq!(user_path(Path::new("a/../b")), Some(cwd.join("b")));
        assert_eq!(
            user_path(Path::new("/srv/./a/../b/")),
            Some(PathBuf::from("/srv/b"))
        );
        assert_eq!(user_path(Path::new("/../..")), Some(PathBuf::from("/")));
        // Only a whole `~` is the home: `~bob` and `x~` are names.
        assert_eq!(user_path(Path::new("~bob")), Some(cwd.join("~bob")));
    }
}
