//! Where a `login` account's CLI finds its home, and what that changes in its environment.
//!
//! A directory other than the CLI's default home is given in the CLI's home variable
//! (`CLAUDE_CONFIG_DIR`, `CODEX_HOME`, `GEMINI_CLI_HOME`). The default home itself
//! (`~/.claude`, `~/.codex`, Gemini CLI's `~`) is launched exactly as typing the CLI would:
//! with none of its home variables set. Naming the default in the variable is not the
//! same thing: Claude Code given `CLAUDE_CONFIG_DIR=~/.claude` reads
//! `~/.claude/.claude.json` instead of `~/.claude.json` (every MCP server, trust and
//! setting lost, its onboarding shown again) and, on macOS, another Keychain item than
//! the one its login is in. The launch, the check, `--accounts` and the login's key all
//! ask this module, so the login keeps one identity and one environment everywhere.

use std::path::{Path, PathBuf};

use crate::adapter::{Env, Family};
use crate::config::Backend;
use crate::config::accounts::AccountDef;

/// A `login` account's home as its CLI will be given it.
#[derive(Debug, Clone)]
pub struct LoginHome {
    /// The directory, as the account names it (expanded).
    pub dir: PathBuf,
    /// The variable set to `dir`; `None` when `dir` is the CLI's default home.
    pub var: Option<&'static str>,
    /// The CLI's home variables, every one unset for its default home.
    home_vars: &'static [&'static str],
}

/// The home `account` runs its CLI in; `None` for another kind, or a CLI whose home agent
/// cannot move.
pub fn of(backend: &Backend, account: &AccountDef) -> Option<LoginHome> {
    if !account.is_login() {
        return None;
    }
    let family = backend.family;
    let var = *family.home_vars().first()?;
    let dir = account.login_dir()?;
    let default = is_default_home(family, var, &dir);
    Some(LoginHome {
        dir,
        var: (!default).then_some(var),
        home_vars: family.home_vars(),
    })
}

/// Whether giving the CLI `dir` in `var` names the home it finds with no home variable
/// set (compared as paths, then as the files they are, for a home reached by a link).
fn is_default_home(family: Family, var: &str, dir: &Path) -> bool {
    let unset: Vec<String> = family
        .home_vars()
        .iter()
        .map(|v| (*v).to_string())
        .collect();
    let default = family.home(&Env::child(&[], &unset));
    let given = [(var.to_string(), dir.to_string_lossy().into_owned())];
    let moved = family.home(&Env::child(&given, &unset[1..]));
    match (default, moved) {
        (Some(default), Some(moved)) => {
            default == moved
                || std::fs::canonicalize(&default)
                    .ok()
                    .zip(std::fs::canonicalize(&moved).ok())
                    .is_some_and(|(a, b)| a == b)
        }
        _ => false,
    }
}

impl LoginHome {
    /// Whether this is the CLI's default home, launched with no home variable.
    pub fn is_default(&self) -> bool {
        self.var.is_none()
    }

    /// The directory as text.
    pub fn dir_text(&self) -> String {
        self.dir.to_string_lossy().into_owned()
    }

    /// The directory a login command must name: `None` for the default home.
    pub fn moved_dir(&self) -> Option<&Path> {
        self.var.map(|_| self.dir.as_path())
    }

    /// What is set in the CLI's environment: its home variable at the directory, or
    /// nothing for its default home.
    pub fn set(&self) -> Vec<(String, String)> {
        self.var
            .map(|var| (var.to_string(), self.dir_text()))
            .into_iter()
            .collect()
    }

    /// The home variables removed from the CLI's environment: every one for its default
    /// home (one exported in agent's own environment would move it elsewhere), none
    /// otherwise (the one set wins).
    pub fn unset(&self) -> Vec<String> {
        if self.is_default() {
            self.home_vars.iter().map(|v| (*v).to_string()).collect()
        } else {
            Vec::new()
        }
    }

    /// Puts this home into a launch's `env` and `env_remove`, over what the backend's `env`
    /// said of the home variables.
    pub fn apply(&self, env: &mut Vec<(String, String)>, env_remove: &mut Vec<String>) {
        env.retain(|(name, _)| !self.home_vars.contains(&name.as_str()));
        env.extend(self.set());
        for var in self.unset() {
            if !env_remove.contains(&var) {
                env_remove.push(var);
            }
        }
    }

    /// How the CLI is run on it, in words: `with its home at DIR`, or
    /// for the default home that it is run as typing the CLI would.
    pub fn describe(&self, label: &str, command: &str) -> String {
        match self.var {
            Some(_) => format!("it runs {label} with its home at {}", self.dir_text()),
            None => format!(
                "{} is {label}'s default home: it runs {label} as typing `{command}` would, with no {} set",
                self.dir_text(),
                self.home_vars.join(" or ")
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_home_is_found_by_what_the_cli_would_read_not_by_spelling() {
        let Some(home) = crate::paths::home() else {
            return;
        };
        let var = "CLAUDE_CONFIG_DIR";
        assert!(is_default_home(Family::Claude, var, &home.join(".claude")));
        assert!(is_default_home(Family::Claude, var, &home.join(".claude/")));
        assert!(!is_default_home(
            Family::Claude,
            var,
            &home.join(".claude-work")
        ));
        assert!(is_default_home(
            Family::Codex,
            "CODEX_HOME",
            &home.join(".codex")
        ));
        // Gemini CLI's variable replaces the home directory that holds `.gemini`.
        assert!(is_default_home(Family::Gemini, "GEMINI_CLI_HOME", &home));
        assert!(!is_default_home(
            Family::Gemini,
            "GEMINI_CLI_HOME",
            &home.join(".gemini")
        ));
    }
}
