//! A launch the folder refused (issue 32): the CLI said, in its adapter's untrusted words
//! (Codex: "Not inside a trusted directory and --skip-git-repo-check was not specified";
//! Gemini CLI: exit 55), that it will not run here. That is a fact about the directory, not
//! a dead rung: the launch says why and the fix as `--status` says them, the cascade goes
//! on, and nothing is recorded against the rung.

use std::ffi::OsString;
use std::path::Path;

use crate::adapter::Env;

use super::rung::Rung;

/// Why the rung's CLI, run with `argv` in `dir`, refused the folder, with the fix — when its
/// exit `code` and the start of its stderr say it did.
pub fn refused(
    rung: &Rung,
    argv: &[OsString],
    dir: &Path,
    code: i32,
    stderr: &str,
) -> Option<String> {
    let family = rung.backend.family;
    let check = family.self_check()?;
    let ready = rung.state.as_ref().ok()?;
    if !check.refused_the_folder(code, stderr) {
        return None;
    }
    let env = Env::child(&ready.env, &ready.env_remove);
    // Its own trust rule says why, as `--status` does; a refusal that rule did not foresee
    // is still the folder's, told with the CLI's fix.
    Some(family.refusal_in(&env, dir, argv).unwrap_or_else(|| {
        check.refusal_with_fix(
            &format!("{} will not run in {}", family.name(), dir.display()),
            dir,
        )
    }))
}
