//! The one door through which a login is asked for its windows on demand (DESIGN §12):
//! each CLI that can be asked says how in its login readers' `ask_windows` (Codex's
//! `codex app-server`, Antigravity's `agy /usage`, a Claude login at Anthropic's opt-in
//! usage endpoint); this file decides when, asks, and records what was said under the
//! login's key in `windows.json`, where parking and every face read it.
//!
//! Asking stands in for the probe a subscription login never gets, bounded like one: a
//! launch asks where a probe would be due ([`Occasion::Launch`]); `--status` and
//! `--check-fallback` run each CLI only as its own check, so there only a login whose
//! vendor answers is asked, and no CLI runs for it ([`Occasion::Survey`]). A login is asked
//! only when nothing fresh is known of its windows, at most once every [`FRESH`] across
//! every agent process whether it answered or not, and never before the `retry-after` of
//! its own `429`; at its vendor's undocumented endpoint only where the backend allows it
//! (`login_usage = true`). A CLI whose quota read is its probe (`reports_own_quota`) is
//! asked by that probe ([`ask_now`], `launch::own_quota`): the probe's own cache is its
//! throttle.

use std::collections::BTreeMap;
use std::path::Path;

use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};

use crate::adapter::Family;
use crate::config::Config;
use crate::launch::parking;
use crate::launch::rung::Rung;
use crate::login::asking::{Answerer, AskWindows, Asked, Asking};
use crate::state::json_file::JsonFile;
use crate::state::window::{Window, rfc3339};
use crate::state::windows::Windows;

/// Windows seen this recently are fresh, and a login asked this recently is not asked again.
pub const FRESH: SignedDuration = SignedDuration::from_mins(5);

/// Where the asking happens, which says whether a CLI may be run to answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Occasion {
    /// A launch, where a probe would be due: any login that can be asked is.
    Launch,
    /// `--status`, `--check-fallback`: each CLI runs only as its own check, so only a
    /// login whose vendor answers is asked.
    Survey,
}

/// When each login was last asked, and until when its vendor asked not to be.
#[derive(Debug, Default, Serialize, Deserialize)]
struct AskedFile {
    #[serde(default)]
    asked: BTreeMap<String, At>,
    /// From a `429`: no call for that login before then.
    #[serde(default)]
    refused_until: BTreeMap<String, At>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
struct At {
    #[serde(with = "rfc3339")]
    at: Timestamp,
}

/// For a rung on a subscription login whose CLI can be asked for its windows, when it may
/// be asked now, on this occasion (see the module's doc): asks it, bounded like a probe,
/// and records the windows it names. Returns them (empty when nothing was asked or learnt).
/// The caller does not ask for a rung that is cooling down.
pub fn ask(
    config: &Config,
    rung: &Rung,
    state_dir: &Path,
    now: Timestamp,
    occasion: Occasion,
) -> Vec<Window> {
    let (Some(login), Ok(ready)) = (parking::login_of(rung), &rung.state) else {
        return Vec::new();
    };
    let Some(door) = crate::login::readers::ask_windows(login.family) else {
        return Vec::new();
    };
    let may = match door.answerer {
        Answerer::Cli => occasion == Occasion::Launch,
        Answerer::Vendor => rung.backend.login_usage,
    };
    if !may || login.family.reports_own_quota() {
        return Vec::new();
    }
    let windows = Windows::new(state_dir);
    let fresh = |at: Timestamp| now.duration_since(at) < FRESH;
    if windows
        .known(&login.key, now)
        .iter()
        .any(|w| fresh(w.observed_at))
    {
        return Vec::new();
    }
    let asked = JsonFile::<AskedFile>::new(state_dir, "login_usage.json")
        .rebuilt_by("the logins' windows are asked again after a few minutes");
    // Checked and marked under one lock: two agents starting together ask once.
    let go = asked.update(|file| {
        file.asked.retain(|_, asked| fresh(asked.at));
        file.refused_until.retain(|_, until| until.at > now);
        if file.refused_until.contains_key(&login.key) || file.asked.contains_key(&login.key) {
            return false;
        }
        file.asked.insert(login.key.clone(), At { at: now });
        true
    });
    match go {
        Ok(true) => {}
        Ok(false) => return Vec::new(),
        Err(err) => {
            // The throttle cannot be kept: no call.
            crate::term::debug(&format!("login_usage.json not updated: {err:#}"));
            return Vec::new();
        }
    }
    let asking = Asking {
        binary: &ready.binary,
        env: &ready.env,
        env_remove: &ready.env_remove,
        records: login.records.as_deref(),
        endpoint: ready.plan.endpoint.as_ref(),
        timeout: config.probe_timeout.min(config.app_server_timeout),
        now,
    };
    crate::term::debug(&format!(
        "{}: asking {} for its windows (at most {} s)",
        rung.label(),
        door.what,
        asking.timeout.as_secs()
    ));
    match answer(door, &asking, &login.key, &windows) {
        Asked::Windows(found) => found,
        Asked::NotBefore(until) => {
            // Without a word of when, it is left alone for the throttle's length at least.
            let until = until.max(now + FRESH);
            crate::term::debug(&format!(
                "{}: refused (429), not asked again before {until}",
                door.what
            ));
            if let Err(err) = asked.update(|file| {
                file.refused_until
                    .insert(login.key.clone(), At { at: until });
            }) {
                crate::term::debug(&format!("login_usage.json not updated: {err:#}"));
            }
            Vec::new()
        }
        Asked::Nothing(_) => Vec::new(),
    }
}

/// Asks a CLI of `family` that reports its own quota, now, and records what it says under
/// `key`: for its probe, which runs only when due (its cache is its throttle).
pub fn ask_now(family: Family, asking: &Asking, key: &str) -> Asked {
    match crate::login::readers::ask_windows(family) {
        Some(door) => answer(door, asking, key, &Windows::new(&crate::paths::state_dir())),
        None => Asked::Nothing(format!(
            "agent cannot ask {} for its quota",
            family.display_name()
        )),
    }
}

/// Asks through `door` and records the windows it names under `key`: the one place a CLI's
/// `ask_windows` is called.
fn answer(door: &AskWindows, asking: &Asking, key: &str, windows: &Windows) -> Asked {
    let asked = (door.ask)(asking);
    match &asked {
        Asked::Windows(found) => {
            if let Err(err) = windows.record(key, found, asking.now) {
                crate::term::debug(&format!("windows.json not updated: {err:#}"));
            }
        }
        Asked::Nothing(why) => crate::term::debug(&format!("{}: {why}", door.what)),
        Asked::NotBefore(_) => {}
    }
    asked
}
