//! A rung whose CLI reports its own quota (Antigravity), judged without a prompt (DESIGN
//! §12): agy exits 0 even when its quota is spent, so neither a prompt nor its exit code
//! says anything. Its probe asks it for its windows through the one door
//! (`launch::ask_windows`, its login readers' `ask_windows`: from agy's version gate on,
//! `agy --print /usage --output-format json`, no model call); they go into the shared
//! store, and the rung is judged by them. A CLI that cannot say (an older agy, which would
//! send `/usage` to the model as a prompt) is not asked, and runs unprobed.

use std::time::{Duration, Instant};

use jiff::Timestamp;

use crate::error_class::ErrorClass;
use crate::login::Window;
use crate::login::asking::{Asked, Asking};
use crate::probe::OwnQuota;
use crate::state::health::Outcome;

/// Asks the CLI about its quota, records what it says, and judges the rung by it: a full
/// window fails it until that window's reset; anything else runs.
pub fn judge(asked: &OwnQuota, timeout: Duration) -> Outcome {
    let started = Instant::now();
    let outcome = |class: ErrorClass, reason: String, clears_at| Outcome {
        class,
        reason,
        latency: started.elapsed(),
        clears_at,
    };
    let now = Timestamp::now();
    let asking = Asking {
        binary: &asked.binary,
        env: &asked.env,
        env_remove: &asked.env_remove,
        records: None,
        endpoint: None,
        timeout,
        now,
    };
    let what =
        crate::login::readers::ask_windows(asked.family).map_or("its quota", |door| door.what);
    let windows = match super::ask_windows::ask_now(asked.family, &asking, &asked.login_key) {
        Asked::Windows(windows) => windows,
        Asked::Nothing(why) => return outcome(ErrorClass::Unproved, why, None),
        Asked::NotBefore(_) => {
            return outcome(
                ErrorClass::Unproved,
                format!("{what} asked not to be asked now"),
                None,
            );
        }
    };
    let shown: Vec<String> = windows
        .iter()
        .map(|w| crate::probe::login::describe_window(w, None, now))
        .collect();
    if let Some(full) = spent(&windows) {
        return outcome(
            ErrorClass::Quota,
            format!(
                "{what}: {} limit reached ({})",
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
        format!(
            "login ({}); {} ({what}, no prompt)",
            asked.family.display_name(),
            shown.join(", ")
        ),
        None,
    )
}

/// The window that stops agy altogether: a full window of every model, or, when each
/// pool of models has its own, the latest-resetting full one once every pool is full.
fn spent(windows: &[Window]) -> Option<&Window> {
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
