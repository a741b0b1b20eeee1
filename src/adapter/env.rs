//! The environment a CLI gets — the backend's `env` and `env_remove` over agent's own — as
//! every question to an adapter is asked of it, and the pool account a rung runs on.

use std::path::PathBuf;

/// The environment a CLI gets: what is set on top of agent's, what is removed, and whether
/// the rest is inherited from agent's own (tests ask with nothing inherited).
#[derive(Debug, Clone, Copy)]
pub struct Env<'a> {
    pub set: &'a [(String, String)],
    pub removed: &'a [String],
    pub inherit: bool,
}

impl<'a> Env<'a> {
    /// agent's own environment, as a CLI started by hand (or the statusline Claude Code
    /// runs) sees it.
    pub fn process() -> Env<'static> {
        Env {
            set: &[],
            removed: &[],
            inherit: true,
        }
    }

    /// A launched CLI's: `set` and `removed` over agent's own.
    pub fn child(set: &'a [(String, String)], removed: &'a [String]) -> Env<'a> {
        Env {
            set,
            removed,
            inherit: true,
        }
    }

    /// Only `set`: nothing inherited.
    pub fn only(set: &'a [(String, String)]) -> Env<'a> {
        Env {
            set,
            removed: &[],
            inherit: false,
        }
    }

    /// The value the CLI will see, as set (empty or not): of a variable set twice, the last,
    /// as `Command::env` leaves it.
    pub fn raw(&self, name: &str) -> Option<String> {
        if let Some((_, value)) = self.set.iter().rev().find(|(key, _)| key == name) {
            return Some(value.clone());
        }
        if !self.inherit || self.removed.iter().any(|removed| removed == name) {
            return None;
        }
        std::env::var(name).ok()
    }

    /// The value when set and not empty (an empty home variable is taken as unset, and so
    /// is an empty credential).
    pub fn get(&self, name: &str) -> Option<String> {
        self.raw(name).filter(|value| !value.is_empty())
    }

    /// Every variable the CLI will see set and not empty, by name.
    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.set.iter().map(|(name, _)| name.clone()).collect();
        if self.inherit {
            names.extend(std::env::vars_os().filter_map(|(name, _)| name.into_string().ok()));
        }
        names.sort();
        names.dedup();
        names.retain(|name| self.get(name).is_some());
        names
    }

    /// `$HOME` as the CLI sees it, else agent's own idea of home.
    pub fn home(&self) -> Option<PathBuf> {
        match self.get("HOME") {
            Some(home) => Some(PathBuf::from(home)),
            None if self.inherit => crate::paths::home(),
            None => None,
        }
    }
}

/// A pool account a rung runs on: its name, and whether it is a subscription login (an
/// `oauth` account) rather than a key.
#[derive(Debug, Clone, Copy)]
pub struct Account<'a> {
    pub name: &'a str,
    pub is_login: bool,
}
