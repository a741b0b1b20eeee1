//! What the rows and tables call a rung (`claude / claude-sonnet-5 (sonnet)`): the
//! backend and the model a launch of it runs — never the model a probe asks about, which is
//! not always what runs (issue 43: rows said `claude-opus-5` while the launch and the check
//! ran the CLI's own default, `claude-opus-5-5`). Its own file: the CLI's default is read
//! from what the CLI reported (`reported_model`), which the rung itself does not know.

use super::reported_model;
use super::rung::Rung;

impl Rung<'_> {
    /// `claude / claude-sonnet-5 (sonnet)`, `codex / gpt-6.2-sol`, `claude [work]`: the
    /// backend and the model a launch runs ([`Rung::runs`]), as the rows and tables name a
    /// rung; the backend alone when it passes no model and its CLI has named none.
    pub fn short_name(&self) -> String {
        let name = match self.runs() {
            Some(model) => format!("{} / {model}", self.backend.name),
            None => self.backend.name.clone(),
        };
        match &self.account {
            Some(account) => format!("{name} [{account}]"),
            None => name,
        }
    }

    /// The model a launch of this rung runs, as the rows say it: the one it passes (`claude-
    /// sonnet-5`, with the table's alias when that named another id: `claude-sonnet-5
    /// (sonnet)`), else the CLI's own default as the CLI itself said it — its settings, or
    /// the model it last ran. `None` when it passes none and the CLI has said nothing: the
    /// CLI's default, unknown. Never the model a probe asks about: that is not what runs.
    pub fn runs(&self) -> Option<&str> {
        self.runs_words
            .get_or_init(|| match (&self.run_model, &self.run_alias) {
                (Some(model), Some(alias)) => Some(format!("{model} ({alias})")),
                (Some(model), None) => Some(model.clone()),
                (None, _) => {
                    let reported = match &self.state {
                        Ok(ready) => reported_model::in_env(
                            self.backend.family,
                            &crate::adapter::Env::child(&ready.env, &ready.env_remove),
                        ),
                        Err(_) => reported_model::of(self.backend),
                    };
                    // What a CLI's records say is theirs: a printable name, not a paragraph.
                    reported.map(|reported| {
                        crate::text::printable(&reported.model)
                            .chars()
                            .take(80)
                            .collect()
                    })
                }
            })
            .as_deref()
    }
}
