//! When a window fills at its current rate (DESIGN §18): from a login's observations of one
//! window over time (percent used at instants), its burn rate and the instant it reaches
//! 100 %. Pure arithmetic: `windows.json` keeps the observations ([`super::windows`]), the
//! faces show the answer.
//!
//! Only observations of the same window count — the same scope and the same reset — so a
//! reset between two observations starts the count again. The rate is the least-squares
//! slope through the points (with two points, the line through them), and the fill is
//! reckoned from the latest point at that rate. No forecast when the rate is not rising,
//! or when the window resets before it would fill.

use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};

use super::window::{Scope, Window, plausible, rfc3339};

/// One reading of one window: how much of it was used when.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Observation {
    pub scope: Scope,
    #[serde(with = "rfc3339")]
    pub resets_at: Timestamp,
    /// 0 to 100.
    pub used_percent: f64,
    #[serde(with = "rfc3339")]
    pub observed_at: Timestamp,
}

impl Observation {
    /// What `window` says of its use when it was observed.
    pub fn of(window: &Window) -> Observation {
        Observation {
            scope: window.scope.clone(),
            resets_at: window.resets_at,
            used_percent: window.used_percent,
            observed_at: window.observed_at,
        }
    }

    /// Whether both are readings of the same window (same scope, same reset).
    pub fn same_window(&self, other: &Observation) -> bool {
        self.scope == other.scope && self.resets_at == other.resets_at
    }

    /// Whether it can be believed at `now` (read back from a file another agent wrote): a
    /// percent from 0 to 100, a window that has not reset, and [`plausible`].
    pub fn holds(&self, now: Timestamp) -> bool {
        (0.0..=100.0).contains(&self.used_percent)
            && self.resets_at > now
            && plausible(&self.scope, self.resets_at, self.observed_at, now).is_ok()
    }
}

/// When a window fills at its current rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Forecast {
    /// The instant it reaches 100 % (already passed when it is full).
    pub full_at: Timestamp,
    /// Percentage points used per hour.
    pub rate_per_hour: f64,
}

/// The forecast of the window last observed in `history` (one login's observations, any
/// order), from its observations up to `now`: `None` with fewer than two of them at
/// different instants, when it is void at `now`, when the rate is 0 or less, or when it
/// would fill only at or after its reset.
pub fn forecast(history: &[Observation], now: Timestamp) -> Option<Forecast> {
    let seen = || history.iter().filter(|o| o.observed_at <= now);
    let latest = seen().max_by_key(|o| o.observed_at)?;
    if latest.resets_at <= now {
        return None;
    }
    let mut points: Vec<&Observation> = seen().filter(|o| o.same_window(latest)).collect();
    points.sort_by_key(|o| o.observed_at);
    let first = points.first()?.observed_at;
    let hours = |at: Timestamp| at.duration_since(first).as_secs_f64() / 3600.0;
    let rate = slope(
        points
            .iter()
            .map(|o| (hours(o.observed_at), o.used_percent)),
    )?;
    if rate.is_nan() || rate <= 0.0 {
        return None;
    }
    let left = (100.0 - latest.used_percent).max(0.0);
    let until_reset = latest
        .resets_at
        .duration_since(latest.observed_at)
        .as_secs_f64();
    let seconds = left / rate * 3600.0;
    if seconds >= until_reset {
        return None;
    }
    let full_at = latest
        .observed_at
        .checked_add(SignedDuration::try_from_secs_f64(seconds).ok()?)
        .ok()?;
    Some(Forecast {
        full_at,
        rate_per_hour: rate,
    })
}

/// The least-squares slope of `(x, y)` points; `None` for fewer than two distinct `x`.
fn slope(points: impl Iterator<Item = (f64, f64)> + Clone) -> Option<f64> {
    let count = points.clone().count();
    if count < 2 {
        return None;
    }
    #[allow(clippy::cast_precision_loss)] // a dozen points
    let n = count as f64;
    let mean_x = points.clone().map(|(x, _)| x).sum::<f64>() / n;
    let mean_y = points.clone().map(|(_, y)| y).sum::<f64>() / n;
    let (mut across, mut spread) = (0.0, 0.0);
    for (x, y) in points {
        across += (x - mean_x) * (y - mean_y);
        spread += (x - mean_x) * (x - mean_x);
    }
    (spread > 0.0).then(|| across / spread)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t0() -> Timestamp {
        "2026-03-02T08:00:00Z".parse().unwrap()
    }

    fn at_mins(minutes: i64) -> Timestamp {
        t0() + SignedDuration::from_mins(minutes)
    }

    fn seen(scope: &Scope, resets_at: Timestamp, minutes: i64, percent: f64) -> Observation {
        Observation {
            scope: scope.clone(),
            resets_at,
            used_percent: percent,
            observed_at: at_mins(minutes),
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn two_observations_give_the_rate_between_them_and_the_fill_from_the_latest() {
        let reset = at_mins(240);
        let history = [
            seen(&Scope::FiveHour, reset, 0, 50.0),
            seen(&Scope::FiveHour, reset, 30, 60.0),
        ];
        let f = forecast(&history, at_mins(31)).unwrap();
        assert!(close(f.rate_per_hour, 20.0), "{f:?}");
        // 40 points left at 20 an hour: two hours after the latest.
        assert_eq!(f.full_at, at_mins(150));
    }

    #[test]
    fn three_observations_give_the_least_squares_rate() {
        let reset = at_mins(7 * 24 * 60);
        // In any order.
        let history = [
            seen(&Scope::Weekly, reset, 120, 40.0),
            seen(&Scope::Weekly, reset, 0, 10.0),
            seen(&Scope::Weekly, reset, 60, 20.0),
        ];
        let f = forecast(&history, at_mins(120)).unwrap();
        // x = 0, 1, 2 h; y = 10, 20, 40: slope 30 / 2 = 15 an hour.
        assert!(close(f.rate_per_hour, 15.0), "{f:?}");
        // 60 points left from 40 % at 2 h: 4 hours later.
        assert_eq!(f.full_at, at_mins(360));
    }

    #[test]
    fn a_reset_between_observations_starts_the_count_again() {
        let (old, new) = (at_mins(90), at_mins(90 + 300));
        let mut history = vec![
            seen(&Scope::FiveHour, old, 0, 10.0),
            seen(&Scope::FiveHour, old, 60, 50.0),
            seen(&Scope::FiveHour, new, 120, 5.0),
        ];
        // One observation of the new window: nothing to go by (the old window's say nothing).
        assert_eq!(forecast(&history, at_mins(120)), None);
        history[2].used_percent = 60.0;
        history.push(seen(&Scope::FiveHour, new, 180, 70.0));
        let f = forecast(&history, at_mins(180)).unwrap();
        // 10 an hour, from the new window's two readings alone.
        assert!(close(f.rate_per_hour, 10.0), "{f:?}");
        assert_eq!(f.full_at, at_mins(360));
        // Another scope's observations do not mix in either.
        history.push(seen(&Scope::Weekly, at_mins(5000), 100, 90.0));
        assert_eq!(
            forecast(&history, at_mins(180)).unwrap().full_at,
            at_mins(360)
        );
    }

    #[test]
    fn a_window_that_resets_before_it_fills_has_no_forecast() {
        let reset = at_mins(240);
        let history = [
            seen(&Scope::FiveHour, reset, 0, 10.0),
            seen(&Scope::FiveHour, reset, 60, 12.0),
        ];
        // 88 points at 2 an hour: 44 hours, long after the reset.
        assert_eq!(forecast(&history, at_mins(60)), None);
    }

    #[test]
    fn one_observation_or_a_rate_not_rising_has_no_forecast() {
        let reset = at_mins(240);
        assert_eq!(
            forecast(&[seen(&Scope::FiveHour, reset, 0, 50.0)], at_mins(1)),
            None
        );
        assert_eq!(forecast(&[], at_mins(1)), None);
        let flat = [
            seen(&Scope::FiveHour, reset, 0, 50.0),
            seen(&Scope::FiveHour, reset, 30, 50.0),
        ];
        assert_eq!(forecast(&flat, at_mins(31)), None);
        let falling = [
            seen(&Scope::FiveHour, reset, 0, 50.0),
            seen(&Scope::FiveHour, reset, 30, 40.0),
        ];
        assert_eq!(forecast(&falling, at_mins(31)), None);
        // Two readings of the same instant are one point.
        let same_instant = [
            seen(&Scope::FiveHour, reset, 30, 40.0),
            seen(&Scope::FiveHour, reset, 30, 60.0),
        ];
        assert_eq!(forecast(&same_instant, at_mins(31)), None);
    }

    #[test]
    fn a_void_window_or_observations_after_now_are_not_forecast() {
        let reset = at_mins(240);
        let history = [
            seen(&Scope::FiveHour, reset, 0, 50.0),
            seen(&Scope::FiveHour, reset, 30, 60.0),
        ];
        assert_eq!(forecast(&history, at_mins(240)), None);
        // At 10 minutes only the first reading had been made.
        assert_eq!(forecast(&history, at_mins(10)), None);
    }
}
