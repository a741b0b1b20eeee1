//! `windows.json`: the usage windows known for each subscription login (DESIGN §12), shared
//! by every agent process like any other health fact. Each window keeps its source and when
//! it was observed; a window whose reset has passed is void and is dropped, so a parked
//! login is tried again on its own after its reset, with no manual step.
//!
//! A login is named by its key, `CLI:identity` (see `adapter::Family::login_key`): never a token.
//!
//! Each window read back is checked like one just parsed ([`Window::new`]): one an older
//! agent believed (a reset in year 9999) is left out and the rest of the file kept, so the
//! login runs again with no manual step, and the next record drops it from the file.
//!
//! Beside the latest reading of each window, `history` keeps its last [`HISTORY`] readings
//! (a repeated figure moves the end of its plateau instead of adding one), so a forecast
//! ([`super::forecast`]) has points to go by.

use std::collections::BTreeMap;
use std::path::Path;

use jiff::Timestamp;
use serde::{Deserialize, Deserializer, Serialize};

use super::forecast::Observation;
use super::json_file::JsonFile;
use super::window::{Scope, Window};

/// How many readings of one window `history` keeps.
pub const HISTORY: usize = 12;
/// How many readings of all its windows `history` keeps for one login (a feed naming
/// windows of ever new families cannot grow the file).
pub const HISTORY_PER_LOGIN: usize = 4 * HISTORY;

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct WindowsFile {
    #[serde(default, deserialize_with = "believed_windows")]
    pub logins: BTreeMap<String, Vec<Window>>,
    /// Each login's recent readings of its windows, oldest first.
    #[serde(
        default,
        skip_serializing_if = "BTreeMap::is_empty",
        deserialize_with = "believed_history"
    )]
    pub history: BTreeMap<String, Vec<Observation>>,
    /// The account each login was, once `agent --accounts remove` took the account away:
    /// its windows outlive it, and the dashboard still names them by it. Kept only while
    /// the file holds something of that login.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub removed: BTreeMap<String, String>,
}

/// A stored reading, or one that does not parse (left out, the rest kept).
#[derive(Deserialize)]
#[serde(untagged)]
enum StoredReading {
    Read(Observation),
    Refused(serde::de::IgnoredAny),
}

/// Each login's readings that parse; [`Observation::holds`] is asked when they are used.
fn believed_history<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<BTreeMap<String, Vec<Observation>>, D::Error> {
    let stored = BTreeMap::<String, Vec<StoredReading>>::deserialize(deserializer)?;
    Ok(stored
        .into_iter()
        .map(|(login, readings)| {
            let read = readings
                .into_iter()
                .filter_map(|reading| match reading {
                    StoredReading::Read(reading) => Some(reading),
                    StoredReading::Refused(_) => None,
                })
                .collect();
            (login, read)
        })
        .collect())
}

/// The same percent as far as any CLI reports one (to a hundredth at most).
fn same_figure(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-6
}

/// Adds `window`'s reading to a login's `readings`: newer news only; a figure the window's
/// last two readings already hold moves the later one's instant (a plateau keeps its first
/// and last point); at most [`HISTORY`] readings of the window.
fn remember(readings: &mut Vec<Observation>, window: &Window) {
    let fresh = Observation::of(window);
    let same: Vec<usize> = (0..readings.len())
        .filter(|&i| readings[i].same_window(&fresh))
        .collect();
    if let Some(&last) = same.last() {
        if readings[last].observed_at >= fresh.observed_at {
            return;
        }
        if let [.., before, last] = same[..]
            && same_figure(readings[before].used_percent, fresh.used_percent)
            && same_figure(readings[last].used_percent, fresh.used_percent)
        {
            readings[last].observed_at = fresh.observed_at;
            return;
        }
    }
    readings.push(fresh);
    if same.len() >= HISTORY {
        readings.remove(same[0]);
    }
}

/// A stored window, or one that is refused now.
#[derive(Deserialize)]
#[serde(untagged)]
enum Stored {
    Believed(Window),
    Refused(serde::de::IgnoredAny),
}

/// Each login's windows, without the ones [`Window::new`] refuses.
fn believed_windows<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<BTreeMap<String, Vec<Window>>, D::Error> {
    let stored = BTreeMap::<String, Vec<Stored>>::deserialize(deserializer)?;
    Ok(stored
        .into_iter()
        .map(|(login, windows)| {
            let believed = windows
                .into_iter()
                .filter_map(|window| match window {
                    Stored::Believed(window) => Some(window),
                    Stored::Refused(_) => None,
                })
                .collect();
            (login, believed)
        })
        .collect())
}

/// The shared store of windows.
#[derive(Debug, Clone)]
pub struct Windows {
    file: JsonFile<WindowsFile>,
}

impl Windows {
    pub fn new(state_dir: &Path) -> Windows {
        Windows {
            file: JsonFile::new(state_dir, "windows.json")
                .rebuilt_by("learned again from the CLIs' next reports"),
        }
    }

    /// Records what a source just reported for `login`: each window replaces the one of the
    /// same scope unless that one was observed later; void windows are dropped.
    pub fn record(&self, login: &str, fresh: &[Window], now: Timestamp) -> anyhow::Result<()> {
        self.file.update(|file| {
            let known = file.logins.entry(login.to_string()).or_default();
            let readings = file.history.entry(login.to_string()).or_default();
            for window in fresh {
                match known.iter_mut().find(|k| k.scope == window.scope) {
                    Some(existing) if existing.observed_at > window.observed_at => continue,
                    Some(existing) => *existing = window.clone(),
                    None => known.push(window.clone()),
                }
                remember(readings, window);
            }
            for windows in file.logins.values_mut() {
                windows.retain(|w| !w.is_void(now));
            }
            file.logins.retain(|_, windows| !windows.is_empty());
            for readings in file.history.values_mut() {
                readings.retain(|r| r.holds(now));
                let over = readings.len().saturating_sub(HISTORY_PER_LOGIN);
                readings.drain(..over);
            }
            file.history.retain(|_, readings| !readings.is_empty());
            forget_names_of_nothing(file);
        })
    }

    /// Forgets `login`'s windows that `forget` names (by scope and reset), under the lock:
    /// the user knows better than what was reported (`agent --unpark`). Returns the windows
    /// it forgot; the next report of one records it again. Their readings stay, for the
    /// forecast.
    pub fn forget(&self, login: &str, forget: &[Window]) -> anyhow::Result<Vec<Window>> {
        self.file.update(|file| {
            let Some(known) = file.logins.get_mut(login) else {
                return Vec::new();
            };
            let (gone, kept): (Vec<Window>, Vec<Window>) = known.drain(..).partition(|w| {
                forget
                    .iter()
                    .any(|f| f.scope == w.scope && f.resets_at == w.resets_at)
            });
            *known = kept;
            file.logins.retain(|_, windows| !windows.is_empty());
            forget_names_of_nothing(file);
            gone
        })
    }

    /// Records that `login` was the account `name`, just removed — when the file holds
    /// anything of that login (nothing to name otherwise).
    pub fn name_removed(&self, login: &str, name: &str) -> anyhow::Result<()> {
        self.file.update(|file| {
            if file.logins.contains_key(login) || file.history.contains_key(login) {
                file.removed.insert(login.to_string(), name.to_string());
            }
        })
    }

    /// `login` is an account again: no longer named as a removed one.
    pub fn forget_removed(&self, login: &str) -> anyhow::Result<()> {
        if !self.file.load().removed.contains_key(login) {
            return Ok(());
        }
        self.file.update(|file| {
            file.removed.remove(login);
        })
    }

    /// The removed account each login was, by login key.
    pub fn removed_names(&self) -> BTreeMap<String, String> {
        self.file.load().removed
    }

    /// The readings of `login`'s window of `scope` still in force at `now`, oldest first:
    /// what [`super::forecast::forecast`] goes by.
    pub fn history(&self, login: &str, scope: &Scope, now: Timestamp) -> Vec<Observation> {
        self.file
            .load()
            .history
            .remove(login)
            .unwrap_or_default()
            .into_iter()
            .filter(|r| r.scope == *scope && r.holds(now))
            .collect()
    }

    /// The windows of `login` still in force at `now`.
    pub fn known(&self, login: &str, now: Timestamp) -> Vec<Window> {
        self.file
            .load()
            .logins
            .remove(login)
            .unwrap_or_default()
            .into_iter()
            .filter(|w| !w.is_void(now))
            .collect()
    }

    /// Every login's windows still in force at `now`.
    pub fn all(&self, now: Timestamp) -> BTreeMap<String, Vec<Window>> {
        let mut logins = self.file.load().logins;
        for windows in logins.values_mut() {
            windows.retain(|w| !w.is_void(now));
        }
        logins.retain(|_, windows| !windows.is_empty());
        logins
    }
}

/// A removed account's name goes with the last of its login's windows and readings.
fn forget_names_of_nothing(file: &mut WindowsFile) {
    let WindowsFile {
        logins,
        history,
        removed,
    } = file;
    removed.retain(|login, _| logins.contains_key(login) || history.contains_key(login));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::window::{Scope, Source};

    fn window(scope: Scope, percent: f64, resets_in: i64, observed: i64, now: Timestamp) -> Window {
        Window::new(
            scope,
            percent,
            now + jiff::SignedDuration::from_secs(resets_in),
            Source::Statusline,
            now + jiff::SignedDuration::from_secs(observed),
        )
        .unwrap()
    }

    #[test]
    fn a_window_is_shared_replaced_by_newer_news_and_void_after_its_reset() {
        let dir = tempfile::tempdir().unwrap();
        let now = Timestamp::now();
        let store = Windows::new(dir.path());
        let older = window(Scope::FiveHour, 40.0, 3600, -60, now);
        let newer = window(Scope::FiveHour, 90.0, 3600, -10, now);
        let weekly = window(Scope::Weekly, 100.0, 10, -10, now);

        store
            .record(
                "claude:/home/me/.claude",
                &[newer.clone(), weekly.clone()],
                now,
            )
            .unwrap();
        store
            .record("claude:/home/me/.claude", &[older], now)
            .unwrap();

        // Another process sees the same, the newer report winning.
        let other = Windows::new(dir.path());
        let known = other.known("claude:/home/me/.claude", now);
        assert_eq!(known, vec![newer.clone(), weekly]);
        // Past the weekly reset, only the 5-hour window is left.
        let later = now + jiff::SignedDuration::from_secs(20);
        assert_eq!(other.known("claude:/home/me/.claude", later), vec![newer]);
        assert!(other.known("codex:/home/me/.codex", now).is_empty());
    }

    #[test]
    fn each_window_keeps_its_last_readings_for_the_forecast_and_a_plateau_keeps_two() {
        let dir = tempfile::tempdir().unwrap();
        let now = Timestamp::now();
        let store = Windows::new(dir.path());
        let login = "claude:/h";
        // Twenty readings a minute apart, rising a point a minute, ending now.
        for minute in 0..20 {
            let reading = window(
                Scope::FiveHour,
                f64::from(40 + minute),
                3600,
                60 * i64::from(minute - 19),
                now,
            );
            store.record(login, &[reading], now).unwrap();
        }
        let history = store.history(login, &Scope::FiveHour, now);
        assert_eq!(history.len(), HISTORY);
        assert!(same_figure(history.last().unwrap().used_percent, 59.0));
        assert!(same_figure(history[0].used_percent, 48.0));
        let f = crate::state::forecast::forecast(&history, now).unwrap();
        assert!((f.rate_per_hour - 60.0).abs() < 1e-6, "{f:?}");
        // 41 points left at a point a minute.
        assert_eq!(f.full_at, now + jiff::SignedDuration::from_mins(41));

        // The same figure again and again: the plateau's end moves, nothing is added.
        let plateau = window(Scope::FiveHour, 59.0, 3600, 0, now);
        for later in 1..5 {
            let at = now + jiff::SignedDuration::from_secs(later);
            let again = Window {
                observed_at: at,
                ..plateau.clone()
            };
            store.record(login, &[again], at).unwrap();
        }
        let at = now + jiff::SignedDuration::from_secs(4);
        let history = store.history(login, &Scope::FiveHour, at);
        assert_eq!(history.len(), HISTORY);
        assert!(same_figure(history[HISTORY - 2].used_percent, 59.0));
        assert_eq!(history[HISTORY - 1].observed_at, at);
        // An older report adds nothing; past the reset nothing is left.
        let older = window(Scope::FiveHour, 10.0, 3600, -3000, now);
        store.record(login, &[older], at).unwrap();
        assert_eq!(store.history(login, &Scope::FiveHour, at).len(), HISTORY);
        let after = now + jiff::SignedDuration::from_secs(3600);
        assert!(store.history(login, &Scope::FiveHour, after).is_empty());
        assert!(store.history(login, &Scope::Weekly, at).is_empty());
    }

    #[test]
    fn a_stored_window_beyond_its_length_is_left_out_and_the_others_kept() {
        let dir = tempfile::tempdir().unwrap();
        let now = Timestamp::now();
        let good = window(Scope::Weekly, 40.0, 3600, -10, now);
        let mut stuck =
            serde_json::to_value(window(Scope::FiveHour, 100.0, 3600, -10, now)).unwrap();
        stuck["resets_at"] = "9999-01-01T00:00:00Z".into();
        let file = serde_json::json!({"logins": {"claude:/h": [stuck, good]}});
        std::fs::write(dir.path().join("windows.json"), file.to_string()).unwrap();

        let store = Windows::new(dir.path());
        assert_eq!(store.known("claude:/h", now), vec![good.clone()]);
        // Not a corrupt file: nothing moved aside, and the next record drops it.
        store.record("claude:/h", &[], now).unwrap();
        let text = std::fs::read_to_string(dir.path().join("windows.json")).unwrap();
        assert!(!text.contains("9999-01-01"), "{text}");
        assert_eq!(store.known("claude:/h", now), vec![good]);
    }
}
