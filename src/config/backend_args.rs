//! A backend's own arguments (issue 32): `args`, `headless_args` and `interactive_args` in
//! `[backends.NAME]` — words for that backend's CLI only, put after the dialect's
//! translation of Claude Code's words for the form that runs (headless: `-p`; interactive:
//! the rest), never handed to another rung. Codex's `--skip-git-repo-check` for `codex
//! exec`, which Claude Code refuses, is the case they are for: one crontab line runs on
//! every rung. They are the user's configuration, so they may be flags; the prompt's words
//! never are.

use toml::Spanned;

use super::source::Source;

/// The words of one backend, as configured.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BackendArgs {
    /// `args`: for both forms, first.
    pub args: Vec<String>,
    /// `headless_args`: only when it runs headless (`-p`).
    pub headless: Vec<String>,
    /// `interactive_args`: only when it runs with a screen.
    pub interactive: Vec<String>,
}

/// The three keys as the file has them.
#[derive(Debug, Default)]
pub(super) struct BackendArgsFile {
    pub args: Option<Spanned<Vec<String>>>,
    pub headless_args: Option<Spanned<Vec<String>>>,
    pub interactive_args: Option<Spanned<Vec<String>>>,
}

impl BackendArgs {
    /// The words for one form: `args`, then that form's own.
    pub fn for_form(&self, headless: bool) -> Vec<String> {
        let own = if headless {
            &self.headless
        } else {
            &self.interactive
        };
        self.args.iter().chain(own).cloned().collect()
    }

    /// The keys that gave the words for one form, as `--dry-run` names them
    /// (`args + headless_args`); empty when they gave none.
    pub fn keys_for_form(&self, headless: bool) -> String {
        let (own, key) = if headless {
            (&self.headless, "headless_args")
        } else {
            (&self.interactive, "interactive_args")
        };
        let keys: Vec<&str> = [(&self.args, "args"), (own, key)]
            .into_iter()
            .filter(|(words, _)| !words.is_empty())
            .map(|(_, key)| key)
            .collect();
        keys.join(" + ")
    }

    /// The file's keys laid over these (a key given replaces the list it names), each word
    /// checked: an empty word, or one holding a NUL, is a mistake in the file.
    pub(super) fn overlay(
        &mut self,
        file: BackendArgsFile,
        source: &Source,
        key: &str,
    ) -> anyhow::Result<()> {
        let slots = [
            (file.args, "args", &mut self.args),
            (file.headless_args, "headless_args", &mut self.headless),
            (
                file.interactive_args,
                "interactive_args",
                &mut self.interactive,
            ),
        ];
        for (given, name, slot) in slots {
            let Some(given) = given else { continue };
            let at = given.span().start;
            let words = given.into_inner();
            if let Some(word) = words
                .iter()
                .find(|w| w.trim().is_empty() || w.contains('\0'))
            {
                let what = if word.contains('\0') {
                    "a word holds a NUL, which no command line can carry"
                } else {
                    "an empty word; each word is one argument, e.g. [\"--skip-git-repo-check\"]"
                };
                return Err(source.error(at, &format!("{key}.{name}"), what));
            }
            *slot = words;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args() -> BackendArgs {
        BackendArgs {
            args: vec!["--a".into()],
            headless: vec!["--h".into()],
            interactive: vec!["--i".into()],
        }
    }

    #[test]
    fn each_form_gets_args_then_its_own() {
        assert_eq!(args().for_form(true), ["--a", "--h"]);
        assert_eq!(args().for_form(false), ["--a", "--i"]);
        assert!(BackendArgs::default().for_form(true).is_empty());
    }

    #[test]
    fn the_keys_named_are_the_ones_that_gave_words() {
        assert_eq!(args().keys_for_form(true), "args + headless_args");
        let only = BackendArgs {
            headless: vec!["--skip-git-repo-check".into()],
            ..BackendArgs::default()
        };
        assert_eq!(only.keys_for_form(true), "headless_args");
        assert_eq!(only.keys_for_form(false), "");
    }
}
