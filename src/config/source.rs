//! The configuration file being read, its path and text, so that every mistake in it is a
//! usage error naming the file, the line and the key.

use std::path::Path;

use crate::exit_codes::usage;

/// The file being read: its path and text.
pub(super) struct Source<'a> {
    pub(super) path: &'a Path,
    pub(super) text: &'a str,
}

impl Source<'_> {
    /// 1-based line of a byte offset.
    pub(super) fn line(&self, offset: usize) -> usize {
        self.text[..offset.min(self.text.len())]
            .matches('\n')
            .count()
            + 1
    }

    pub(super) fn error(&self, offset: usize, key: &str, message: &str) -> anyhow::Error {
        usage(format!(
            "{}:{}: {key}: {message}",
            self.path.display(),
            self.line(offset)
        ))
    }
}
