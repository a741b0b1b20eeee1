//! What a launch was asked for, from the command line and the environment.

use std::ffi::OsString;

pub struct Options<'a> {
    /// The CLI's words, exactly as given (not necessarily UTF-8).
    pub args: &'a [OsString],
    pub dry_run: bool,
    pub json: bool,
    /// `--wait[=MAX]` / `AGENT_WAIT`: with every rung parked, wait up to this long for the
    /// earliest reset instead of exiting 75.
    pub wait: Option<std::time::Duration>,
    /// `--on-limit` / `AGENT_ON_LIMIT` (the flag wins): what to do after a session ran out
    /// of its window; `None`: not said here (then `on_limit` in the file, else the default).
    pub on_limit: Option<crate::config::on_limit::OnLimit>,
    /// `--outcome FILE` / `AGENT_OUTCOME` (the flag wins): where the outcome record goes,
    /// already armed with [`super::outcome::record_to`] before the launch begins.
    pub outcome: Option<std::path::PathBuf>,
}
