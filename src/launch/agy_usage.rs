//! Antigravity's rung, judged without a prompt (DESIGN §12): agy exits 0 even when its
//! quota is spent, so neither a prompt nor its exit code says anything. From the version
//! gate on (`login::agy`), `agy --print /usage --output-format json` reports its windows
//! with no model call; they go into the shared store. Older (or unreadable) versions would
//! send `/usage` to the model as a prompt: they are not asked, and run unprobed.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use jiff::Timestamp;

use crate::adapter::Family;
use crate::child::{Group, Job};
use crate::error_class::ErrorClass;
use crate::login::agy;
use crate::state::health::Outcome;

/// Asks agy about its quota when its version allows, records what it says, and judges the
/// rung by it: a full window fails it until that window's reset; anything else runs.
pub fn run(binary: &Path, env_remove: &[String], login_key: &str, timeout: Duration) -> Outcome {
    let asking = |args: &[&str]| {
        let mut command = crate::child_env::command(binary);
        command.args(args);
        for name in env_remove {
            command.env_remove(name);
        }
        command
    };
    let started = Instant::now();
    let outcome = |class: ErrorClass, reason: String, clears_at| Outcome {
        class,
        reason,
        latency: started.elapsed(),
        clears_at,
    };
    let unprobed = |why: &str| outcome(ErrorClass::Unproved, why.to_string(), None);
    let version = capture(&mut asking(&["--version"]), timeout);
    if !version.is_some_and(|v| agy::usage_command_supported(&v)) {
        return unprobed(&format!(
            "agy older than {}.{}.{} cannot report its quota without a prompt",
            agy::FIRST_USAGE_VERSION.0,
            agy::FIRST_USAGE_VERSION.1,
            agy::FIRST_USAGE_VERSION.2
        ));
    }
    let now = Timestamp::now();
    let Some(windows) = capture(&mut asking(&agy::USAGE_ARGS), timeout)
        .and_then(|text| agy::parse_usage(&text, now))
    else {
        return unprobed("agy /usage gave no windows");
    };
    let _ = crate::state::windows::Windows::new(&crate::paths::state_dir())
        .record(login_key, &windows, now);
    let shown: Vec<String> = windows
        .iter()
        .map(|w| crate::probe::login::describe_window(w, None, now))
        .collect();
    if let Some(full) = spent(&windows) {
        return outcome(
            ErrorClass::Quota,
            format!(
                "agy /usage: {} limit reached ({})",
                full.scope.describe(),
                shown.join(", ")
            ),
            Some(
                std::time::SystemTime::UNIX_EPOCH
                    + Duration::from_secs(u64::try_from(full.resets_at.as_second()).unwrap_or(0)),
            ),
        );
    }
    outcome(
        ErrorClass::Ok,
        format!("login (agy); {} (agy /usage, no prompt)", shown.join(", ")),
        None,
    )
}

/// The window that stops agy altogether: a full window of every model, or, when each
/// pool of models has its own, the latest-resetting full one once every pool is full.
fn spent(windows: &[crate::login::Window]) -> Option<&crate::login::Window> {
    let full = || windows.iter().filter(|w| w.is_full());
    if let Some(all) = full()
        .filter(|w| w.scope.family().is_none())
        .max_by_key(|w| w.resets_at)
    {
        return Some(all);
    }
    let every_pool_full = windows
        .iter()
        .filter_map(|w| w.scope.family())
        .all(|family| full().any(|w| w.scope.family() == Some(family)));
    if every_pool_full {
        full().max_by_key(|w| w.resets_at)
    } else {
        None
    }
}

/// A command's stdout when it ran to success within `timeout` — on a pseudo-terminal, as
/// agy prints nothing through a pipe (`Cli::needs_terminal`).
fn capture(command: &mut Command, timeout: Duration) -> Option<String> {
    let job = Job::new(timeout, Group::Own).terminal(Family::Agy.needs_terminal());
    let output = crate::child::run(command, &job).ok()?.output().ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).into_owned())
}
