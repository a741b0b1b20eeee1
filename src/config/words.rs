//! What a backend makes of Claude Code's words (DESIGN.md §16 "Dialects"): its CLI's own,
//! through the adapter's dialect of that CLI, unless the backend says `translate = false`.
//! The launch, `--dry-run`, the CLI's own check and the command probe all say their words
//! here, so a probe runs the same headless form the launch would.

use std::ffi::OsString;

use super::Backend;
use crate::adapter::dialect::{self, Refusal, Translation};

impl Backend {
    /// `args`, Claude Code's words, in this backend's CLI's words with `model`.
    pub fn in_own_words(
        &self,
        model: Option<&str>,
        args: &[OsString],
    ) -> Result<Translation, Refusal> {
        self.in_own_words_resuming(model, args, None)
    }

    /// [`Backend::in_own_words`], resuming the CLI's own session `resume` when given.
    pub fn in_own_words_resuming(
        &self,
        model: Option<&str>,
        args: &[OsString],
        resume: Option<&str>,
    ) -> Result<Translation, Refusal> {
        let dialect = if self.translate {
            self.family.dialect()
        } else {
            None
        };
        let own = [self.own_args.for_form(false), self.own_args.for_form(true)];
        let mut translation = dialect::translate(
            dialect,
            &dialect::Request {
                args,
                model,
                model_flag: self.model_flag.as_deref(),
                vendor: &self.vendor,
                own: [&own[0], &own[1]],
                resume,
            },
        )?;
        let headless = dialect::runs_headless(args);
        let words = &own[usize::from(headless)];
        if !words.is_empty() {
            // `--dry-run` shows where they came from: the backend's, not Claude Code's.
            translation.rules.push(format!(
                "[backends.{}] {} → {} (its own, for {} only)",
                self.name,
                self.own_args.keys_for_form(headless),
                crate::text::shell_join(words),
                self.label
            ));
        }
        Ok(translation)
    }
}
