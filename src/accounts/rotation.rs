//! The order in which a backend's accounts are tried (DESIGN.md §7): `priority`,
//! `least-cost` (subscription before pay-per-token, then the most monthly budget left),
//! `round-robin` (a turn shared by every agent process) and `failover` (stay on the account
//! that last worked until it fails), and for logins `soonest-reset` (DESIGN.md §18): spend
//! first the login whose window resets soonest — what is left in it is lost at the reset —
//! and rank a login running ahead of its weekly pace after one behind it.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};

use jiff::{SignedDuration, Timestamp};

use super::{AccountDef, Kind};
use crate::config::Backend;
use crate::state::json_file::JsonFile;
use crate::state::window::{Scope, Window};

pub use crate::config::accounts::Rotation;

/// `rotation.json`: the shared turn of round-robin backends, the current account of
/// failover ones.
#[derive(Debug, Default, Serialize, Deserialize)]
struct RotationState {
    #[serde(default)]
    turns: BTreeMap<String, u64>,
    #[serde(default)]
    current: BTreeMap<String, String>,
}

/// Lost, it starts again at the first turn: worth no `fsync`.
fn file(state_dir: &Path) -> JsonFile<RotationState> {
    JsonFile::new(state_dir, "rotation.json").shared()
}

fn read(state_dir: &Path) -> RotationState {
    file(state_dir).load()
}

/// Changes `rotation.json` under its lock.
fn update<T>(state_dir: &Path, change: impl FnOnce(&mut RotationState) -> T) -> Option<T> {
    match file(state_dir).update(change) {
        Ok(result) => Some(result),
        Err(err) => {
            crate::term::debug(&format!("could not record the rotation: {err:#}"));
            None
        }
    }
}

/// The accounts of `backend` in the order they are tried. `advance`: this is a launch, and
/// a round-robin backend moves on to its next turn (under the lock, so concurrent launches
/// each get their own turn).
pub fn order(
    backend: &Backend,
    accounts: &[&AccountDef],
    pricing: &crate::config::pricing::Pricing,
    state_dir: &Path,
    advance: bool,
) -> Vec<String> {
    let mut sorted: Vec<&AccountDef> = accounts.to_vec();
    sorted.sort_by(|a, b| {
        a.priority
            .cmp(&b.priority)
            .then_with(|| a.name.cmp(&b.name))
    });
    let mut names: Vec<String> = sorted.iter().map(|a| a.name.clone()).collect();
    match super::rotation_of(backend, accounts) {
        Rotation::Priority => {}
        Rotation::SoonestReset => {
            let now = Timestamp::now();
            let windows = crate::state::windows::Windows::new(state_dir);
            let figures: Vec<Figures> = sorted
                .iter()
                .map(|a| {
                    let known = super::login_key(backend, a)
                        .map(|key| windows.known(&key, now))
                        .unwrap_or_default();
                    Figures::of(&a.name, &known, now)
                })
                .collect();
            names = rank(&figures)
                .into_iter()
                .map(|i| figures[i].name.clone())
                .collect();
        }
        Rotation::LeastCost => {
            // Subscriptions first (already paid for), then the most monthly budget left;
            // an account without a cap has the most.
            let capped: Vec<&str> = sorted
                .iter()
                .filter(|a| a.monthly_budget_usd > 0.0)
                .map(|a| a.name.as_str())
                .collect();
            let spent = crate::state::account_health::monthly_spends(state_dir, pricing, &capped);
            let remaining = |a: &AccountDef| match spent.get(&a.name) {
                Some(spent) => a.monthly_budget_usd - spent,
                None => f64::INFINITY,
            };
            sorted.sort_by(|a, b| {
                let kind = |k: Kind| u8::from(k != Kind::Oauth);
                kind(a.kind)
                    .cmp(&kind(b.kind))
                    .then_with(|| remaining(b).total_cmp(&remaining(a)))
                    .then_with(|| a.priority.cmp(&b.priority))
            });
            names = sorted.iter().map(|a| a.name.clone()).collect();
        }
        Rotation::RoundRobin => {
            let turn = if advance {
                update(state_dir, |state| {
                    let turn = state.turns.entry(backend.name.clone()).or_insert(0);
                    let now = *turn;
                    *turn += 1;
                    now
                })
                .unwrap_or(0)
            } else {
                read(state_dir)
                    .turns
                    .get(&backend.name)
                    .copied()
                    .unwrap_or(0)
            };
            let len = names.len() as u64;
            if len > 0 {
                names.rotate_left(usize::try_from(turn % len).unwrap_or(0));
            }
        }
        Rotation::Failover => {
            if let Some(current) = read(state_dir).current.get(&backend.name)
                && let Some(at) = names.iter().position(|n| n == current)
            {
                let name = names.remove(at);
                names.insert(0, name);
            }
        }
    }
    names
}

/// A launch ran on `account`: a failover backend stays on it from now on.
pub fn ran_on(backend: &Backend, account: &str, state_dir: &Path) {
    if backend.rotation != Some(Rotation::Failover) {
        return;
    }
    let current = read(state_dir).current.get(&backend.name).cloned();
    if current.as_deref() != Some(account) {
        update(state_dir, |state| {
            state
                .current
                .insert(backend.name.clone(), account.to_string());
        });
    }
}

/// What `soonest-reset` knows of one login: the soonest reset of its login-wide windows,
/// and its weekly pace.
#[derive(Debug, Clone, PartialEq)]
pub struct Figures {
    pub name: String,
    /// The login-wide window (5-hour, weekly…) that resets first, and when.
    pub soonest: Option<(Scope, Timestamp)>,
    pub weekly: Option<Pace>,
}

/// How far into its weekly window a login is: percent used against percent of the week gone.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pace {
    pub used_percent: f64,
    pub week_gone_percent: f64,
}

impl Pace {
    /// Using its week faster than the week passes: it would hit the weekly wall early.
    pub fn is_ahead(self) -> bool {
        self.used_percent > self.week_gone_percent
    }
}

const WEEK: SignedDuration = SignedDuration::from_hours(7 * 24);

impl Figures {
    /// The figures of login `name` from its windows known at `now`.
    pub fn of(name: &str, windows: &[Window], now: Timestamp) -> Figures {
        let login_wide = |w: &&Window| {
            matches!(
                w.scope,
                Scope::FiveHour | Scope::Weekly | Scope::Other { family: None, .. }
            ) && w.resets_at > now
        };
        let soonest = windows
            .iter()
            .filter(login_wide)
            .min_by_key(|w| w.resets_at)
            .map(|w| (w.scope.clone(), w.resets_at));
        let weekly = windows
            .iter()
            .find(|w| w.scope == Scope::Weekly && w.resets_at > now)
            .map(|w| {
                let left = w.resets_at.duration_since(now).as_secs_f64();
                let gone = (1.0 - left / WEEK.as_secs_f64()).clamp(0.0, 1.0) * 100.0;
                Pace {
                    used_percent: w.used_percent,
                    week_gone_percent: gone,
                }
            });
        Figures {
            name: name.to_string(),
            soonest,
            weekly,
        }
    }
}

/// The `soonest-reset` order of `figures` (given in priority order), as indices: logins
/// behind (or with no known) weekly pace before those ahead of it; within each, the soonest
/// reset first, a login with no window known after every known one; ties keep the given
/// order.
pub fn rank(figures: &[Figures]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..figures.len()).collect();
    order.sort_by(|&a, &b| {
        let (a, b) = (&figures[a], &figures[b]);
        let ahead = |f: &Figures| f.weekly.is_some_and(Pace::is_ahead);
        let reset = |f: &Figures| f.soonest.as_ref().map(|(_, at)| *at);
        ahead(a)
            .cmp(&ahead(b))
            .then_with(|| match (reset(a), reset(b)) {
                (Some(a), Some(b)) => a.cmp(&b),
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (None, None) => std::cmp::Ordering::Equal,
            })
    });
    order
}

/// Why `soonest-reset` runs `chosen`, with the figures behind it: `5h resets 14:10 (work
/// 15:00); weekly 40% used at 55% of the week`.
pub fn explain(figures: &[Figures], chosen: &str) -> String {
    let Some(this) = figures.iter().find(|f| f.name == chosen) else {
        return "no window known".to_string();
    };
    let mut text = match &this.soonest {
        Some((scope, at)) => format!("{} resets {}", short_scope(scope), clock(*at)),
        None => "no window known".to_string(),
    };
    let others: Vec<String> = figures
        .iter()
        .filter(|f| f.name != chosen)
        .map(|f| match &f.soonest {
            Some((_, at)) => format!("{} {}", f.name, clock(*at)),
            None => format!("{} unknown", f.name),
        })
        .collect();
    if !others.is_empty() {
        let _ = write!(text, " ({})", others.join(", "));
    }
    if let Some(pace) = this.weekly {
        let _ = write!(
            text,
            "; weekly {:.0}% used at {:.0}% of the week{}",
            pace.used_percent,
            pace.week_gone_percent,
            if pace.is_ahead() {
                ", ahead of pace"
            } else {
                ""
            }
        );
    }
    for other in figures.iter().filter(|f| f.name != chosen) {
        if let Some(pace) = other.weekly.filter(|p| p.is_ahead()) {
            let _ = write!(
                text,
                "; {} ahead of its weekly pace ({:.0}% used at {:.0}%)",
                other.name, pace.used_percent, pace.week_gone_percent
            );
        }
    }
    text
}

fn short_scope(scope: &Scope) -> String {
    match scope {
        Scope::FiveHour => "5h".to_string(),
        other => other.describe(),
    }
}

/// A reset in local time: `14:10` within a day, else `Thu 14:10`.
fn clock(at: Timestamp) -> String {
    let format = if at.duration_since(Timestamp::now()) < SignedDuration::from_hours(24) {
        "%H:%M"
    } else {
        "%a %H:%M"
    };
    at.to_zoned_datetime(jiff::tz::TimeZone::system())
        .strftime(format)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::window::Source;

    fn window(scope: Scope, percent: f64, resets_in: SignedDuration, now: Timestamp) -> Window {
        Window::new(scope, percent, now + resets_in, Source::Statusline, now).unwrap()
    }

    fn hours(h: i64) -> SignedDuration {
        SignedDuration::from_hours(h)
    }

    #[test]
    fn the_login_whose_window_resets_soonest_is_spent_first() {
        let now = Timestamp::now();
        let work = Figures::of("work", &[window(Scope::FiveHour, 30.0, hours(3), now)], now);
        let personal = Figures::of(
            "personal",
            &[window(Scope::FiveHour, 60.0, hours(1), now)],
            now,
        );
        let idle = Figures::of("idle", &[], now);
        let figures = [idle, work, personal];
        let names: Vec<&str> = rank(&figures)
            .into_iter()
            .map(|i| figures[i].name.as_str())
            .collect();
        assert_eq!(names, ["personal", "work", "idle"]);
    }

    #[test]
    fn a_login_ahead_of_its_weekly_pace_ranks_after_one_behind_it_even_with_a_sooner_reset() {
        let now = Timestamp::now();
        // Three days left of the week: 4/7 of it gone, 57 %.
        let ahead = Figures::of(
            "ahead",
            &[
                window(Scope::FiveHour, 10.0, hours(1), now),
                window(Scope::Weekly, 80.0, hours(72), now),
            ],
            now,
        );
        let behind = Figures::of(
            "behind",
            &[
                window(Scope::FiveHour, 10.0, hours(2), now),
                window(Scope::Weekly, 20.0, hours(72), now),
            ],
            now,
        );
        assert!(ahead.weekly.unwrap().is_ahead());
        assert!(!behind.weekly.unwrap().is_ahead());
        let figures = [ahead, behind];
        assert_eq!(rank(&figures), [1, 0]);
        // At equal resets too.
        let at = |name: &str, weekly: f64| {
            Figures::of(
                name,
                &[
                    window(Scope::FiveHour, 10.0, hours(2), now),
                    window(Scope::Weekly, weekly, hours(72), now),
                ],
                now,
            )
        };
        let figures = [at("a", 90.0), at("b", 30.0)];
        assert_eq!(rank(&figures), [1, 0]);
        let figures = [at("a", 30.0), at("b", 90.0)];
        assert_eq!(rank(&figures), [0, 1]);
    }

    #[test]
    fn equal_figures_keep_the_priority_order_and_model_windows_do_not_count_as_resets() {
        let now = Timestamp::now();
        let opus = Scope::ModelWeekly {
            family: "opus".into(),
        };
        let a = Figures::of("a", &[window(opus, 100.0, hours(1), now)], now);
        assert_eq!(a.soonest, None);
        let b = Figures::of("b", &[], now);
        assert_eq!(rank(&[a, b]), [0, 1]);
    }

    #[test]
    fn the_explanation_names_the_resets_and_the_pace() {
        let now = Timestamp::now();
        let figures = [
            Figures::of("work", &[window(Scope::FiveHour, 30.0, hours(3), now)], now),
            Figures::of(
                "personal",
                &[
                    window(Scope::FiveHour, 60.0, hours(1), now),
                    window(Scope::Weekly, 40.0, hours(72), now),
                ],
                now,
            ),
        ];
        let text = explain(&figures, "personal");
        assert!(text.starts_with("5h resets "), "{text}");
        assert!(text.contains(" (work "), "{text}");
        assert!(
            text.contains("; weekly 40% used at 57% of the week"),
            "{text}"
        );
    }
}
