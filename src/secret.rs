//! Secrets from where the user keeps them: a value with `${VAR}` references, or a command
//! (`gopass show -o x`, `pass x`, `op read …`, macOS `security find-generic-password -w …`)
//! whose first line of output is the secret. Every secret found is registered for
//! redaction before anyone can print it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use anyhow::{Context as _, bail};

/// How long a secret command may take (a password manager may ask to unlock).
const COMMAND_TIMEOUT: Duration = Duration::from_secs(20);

/// The secret from `value` (expanded) or, when absent, from `command`.
pub fn resolve(value: Option<&str>, command: Option<&str>, what: &str) -> anyhow::Result<String> {
    let secret = match (value, command) {
        (Some(value), _) => crate::expand::expand(value).with_context(|| what.to_string())?,
        (None, Some(command)) => {
            once(command).with_context(|| format!("{what}: running its secret command"))?
        }
        (None, None) => bail!("{what}: no secret configured"),
    };
    if secret.trim().is_empty() {
        bail!("{what}: the secret is empty");
    }
    crate::redact::register(&secret);
    Ok(secret)
}

/// The secret command's answer, the command run at most once per process however many
/// rungs and accounts ask (a hung one cost its whole timeout per rung): its failure is
/// remembered too, and a second asker waits for the first one's answer.
fn once(command: &str) -> anyhow::Result<String> {
    type Answer = Arc<OnceLock<Result<String, String>>>;
    static ANSWERS: OnceLock<Mutex<HashMap<String, Answer>>> = OnceLock::new();
    let answer = Arc::clone(
        ANSWERS
            .get_or_init(Mutex::default)
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(command.to_string())
            .or_default(),
    );
    answer
        .get_or_init(|| from_command(command).map_err(|err| format!("{err:#}")))
        .clone()
        .map_err(anyhow::Error::msg)
}

/// Runs a secret command through `sh -c` (it is the user's own configuration, written as
/// they would type it) with stdin closed, and returns its first line. It leads a process
/// group of its own, so at its deadline what it started dies with it (a `sleep &` it left
/// would outlive agent); a password manager's prompt goes through its agent (gpg-agent's
/// pinentry, 1Password's app), which is no child of it. Never remembered: the relay reads
/// a key again after a 401 to pick up a rotated one.
pub fn from_command(command: &str) -> anyhow::Result<String> {
    let output = crate::child::run(
        crate::child_env::command("/bin/sh").args(["-c", command]),
        &crate::child::Job::new(COMMAND_TIMEOUT, crate::child::Group::Own),
    )
    .context("starting /bin/sh")?
    .output()?;
    if !output.status.success() {
        // Its stderr may quote the secret's name but never the secret: still redacted.
        let stderr = String::from_utf8_lossy(&output.stderr);
        bail!(
            "it exited {}: {}",
            output.status.code().unwrap_or(-1),
            crate::redact::redact(stderr.trim())
        );
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    Ok(stdout.lines().next().unwrap_or("").trim().to_string())
}
