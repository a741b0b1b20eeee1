//! `on_limit` (DESIGN.md §21): what agent does after a session ran out of its usage window
//! mid-work — the config key (top level and per backend), `--on-limit` and `AGENT_ON_LIMIT`
//! all name one of these four. Which one applies when none is given is the launch's call
//! (`ask` on a terminal, else `stop`), so a `None` here means "not said".

use serde::Deserialize;

use crate::exit_codes::usage;

/// The four choices, in the order `--help` and every error list them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OnLimit {
    /// One question on the terminal: continue, resume or stop.
    Ask,
    /// Hand the session to the next open rung with a brief of it.
    Continue,
    /// Wait for the reset (as `--wait`) and resume the same session once.
    Resume,
    /// Pass the CLI's exit code through, with one line saying how to continue.
    Stop,
}

/// The variable that says `--on-limit` for every launch (for scripts).
pub const ENV_VAR: &str = "AGENT_ON_LIMIT";

/// The command line's choice: `--on-limit` (`flag`), else `AGENT_ON_LIMIT` (empty: unset),
/// else `None`. A word that is none of the four is a usage error naming where it was given.
pub fn from_command_line(flag: Option<&str>) -> anyhow::Result<Option<OnLimit>> {
    if let Some(text) = flag {
        return OnLimit::parse(text, "--on-limit").map(Some);
    }
    match std::env::var(ENV_VAR) {
        Ok(text) if !text.trim().is_empty() => OnLimit::parse(&text, ENV_VAR).map(Some),
        _ => Ok(None),
    }
}

impl OnLimit {
    pub const ALL: [OnLimit; 4] = [
        OnLimit::Ask,
        OnLimit::Continue,
        OnLimit::Resume,
        OnLimit::Stop,
    ];

    /// `text` as one of the four; anything else is a usage error (exit 2) naming `what`
    /// (`--on-limit`, `AGENT_ON_LIMIT`) and the choices.
    pub fn parse(text: &str, what: &str) -> anyhow::Result<OnLimit> {
        let word = text.trim();
        if let Some(choice) = OnLimit::ALL.into_iter().find(|c| c.as_str() == word) {
            return Ok(choice);
        }
        let names = OnLimit::ALL.map(OnLimit::as_str);
        let hint = crate::text::closest(word, names)
            .map_or(String::new(), |close| format!(" — did you mean {close}?"));
        Err(usage(format!(
            "{what}: expected one of {} (found \"{}\"){hint}",
            names.join(", "),
            crate::text::printable(text)
        )))
    }

    pub fn as_str(self) -> &'static str {
        match self {
            OnLimit::Ask => "ask",
            OnLimit::Continue => "continue",
            OnLimit::Resume => "resume",
            OnLimit::Stop => "stop",
        }
    }
}

impl std::fmt::Display for OnLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exit_codes::ExitStatus;

    #[test]
    fn each_word_reads_as_its_choice_and_back() {
        for choice in OnLimit::ALL {
            assert_eq!(
                OnLimit::parse(choice.as_str(), "--on-limit").unwrap(),
                choice
            );
        }
        assert_eq!(
            OnLimit::parse(" resume\n", "AGENT_ON_LIMIT").unwrap(),
            OnLimit::Resume
        );
    }

    #[test]
    fn another_word_is_a_usage_error_naming_where_and_the_choices() {
        let err = OnLimit::parse("contineu", "AGENT_ON_LIMIT").unwrap_err();
        assert_eq!(ExitStatus::from_error(&err), ExitStatus::Usage);
        assert_eq!(
            err.to_string(),
            "AGENT_ON_LIMIT: expected one of ask, continue, resume, stop (found \"contineu\") — did you mean continue?"
        );
        // Case matters, as in the config file: `Stop` is not a choice.
        assert!(OnLimit::parse("Stop", "--on-limit").is_err());
        assert!(OnLimit::parse("", "--on-limit").is_err());
    }

    /// The command line lists the choices itself (it sits below the configuration and
    /// cannot name this type): the two lists must be the same.
    #[test]
    fn the_command_line_offers_exactly_these_choices() {
        use clap::CommandFactory as _;
        let command = crate::cli::Cli::command();
        let arg = command
            .get_arguments()
            .find(|arg| arg.get_long() == Some("on-limit"))
            .expect("--on-limit is declared");
        let offered: Vec<String> = arg
            .get_possible_values()
            .iter()
            .map(|value| value.get_name().to_string())
            .collect();
        assert_eq!(offered, OnLimit::ALL.map(|c| c.as_str().to_string()));
    }
}
