//! The range every number a user gives agent must fall in — durations and counts from the
//! configuration file, the environment and the command line. Each is checked here, before
//! any arithmetic is done with it, so a huge, negative or non-finite number is a usage
//! error naming its key instead of an overflow panic later (`Instant + Duration`, `d * 60`)
//! or a wait that never ends.

use std::time::Duration;

pub const MINUTE: Duration = Duration::from_secs(60);
pub const HOUR: Duration = Duration::from_secs(60 * 60);
pub const DAY: Duration = Duration::from_secs(24 * 60 * 60);
/// The longest any duration setting may be: beyond every useful value, and short enough
/// that adding it to any clock reading (an `Instant`, milliseconds since 1970) cannot
/// overflow.
pub const YEAR: Duration = Duration::from_secs(365 * 24 * 60 * 60);

/// The unit a setting is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Millis,
    Seconds,
    Minutes,
    Hours,
    Days,
}

impl Unit {
    fn seconds(self) -> f64 {
        match self {
            Unit::Millis => 0.001,
            Unit::Seconds => 1.0,
            Unit::Minutes => 60.0,
            Unit::Hours => 3600.0,
            Unit::Days => 86_400.0,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Unit::Millis => "milliseconds",
            Unit::Seconds => "seconds",
            Unit::Minutes => "minutes",
            Unit::Hours => "hours",
            Unit::Days => "days",
        }
    }
}

/// What a duration setting may hold: from `min` (or, when `min_included` is false,
/// anything above it) to `max`.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    pub min: Duration,
    pub max: Duration,
    pub min_included: bool,
}

impl Bounds {
    /// 0 up to `max`.
    pub const fn up_to(max: Duration) -> Bounds {
        Bounds {
            min: Duration::ZERO,
            max,
            min_included: true,
        }
    }

    /// More than 0, up to `max`: for waits where 0 would make the thing impossible.
    pub const fn positive(max: Duration) -> Bounds {
        Bounds {
            min: Duration::ZERO,
            max,
            min_included: false,
        }
    }

    /// From `min` to `max`.
    pub const fn between(min: Duration, max: Duration) -> Bounds {
        Bounds {
            min,
            max,
            min_included: true,
        }
    }
}

/// `number` of `unit` as a duration, when it lies within `bounds`; else why not, in the
/// key's own unit.
pub fn duration(number: f64, unit: Unit, bounds: Bounds) -> Result<Duration, String> {
    // In f64 the product can at worst be infinite, which the range check refuses.
    let seconds = number * unit.seconds();
    let low_ok = if bounds.min_included {
        seconds >= bounds.min.as_secs_f64()
    } else {
        seconds > bounds.min.as_secs_f64()
    };
    if !(seconds.is_finite() && low_ok && seconds <= bounds.max.as_secs_f64()) {
        let in_unit = |d: Duration| trim(d.as_secs_f64() / unit.seconds());
        let low = if bounds.min_included {
            format!("from {}", in_unit(bounds.min))
        } else {
            format!("more than {}", in_unit(bounds.min))
        };
        return Err(format!(
            "must be a number of {} {low} to {} ({})",
            unit.name(),
            in_unit(bounds.max),
            humane(bounds.max)
        ));
    }
    // -0.0 and 0.0 alike are zero; anything else is now a finite, non-negative, bounded value.
    Ok(Duration::try_from_secs_f64(seconds).unwrap_or(Duration::ZERO))
}

/// `number` as a whole count from `min` to `max` (`max` at most 2^53, where every whole
/// number is exact in f64).
pub fn count(number: f64, min: u64, max: u64) -> Result<u64, String> {
    debug_assert!(max <= 1 << 53);
    #[allow(clippy::cast_precision_loss)]
    let fits =
        number.is_finite() && number.fract() == 0.0 && number >= min as f64 && number <= max as f64;
    if !fits {
        return Err(format!("must be a whole number from {min} to {max}"));
    }
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    Ok(number as u64)
}

/// An amount of money: finite, 0 or more, at most `max`.
pub fn amount(number: f64, max: f64) -> Result<f64, String> {
    if number.is_finite() && number >= 0.0 && number <= max {
        Ok(number)
    } else {
        Err(format!("must be a number from 0 to {}", trim(max)))
    }
}

/// `1800` not `1800.0`; `0.5` stays.
fn trim(number: f64) -> String {
    let text = format!("{number:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// `365 days`, `1 hour`, `30 minutes`.
fn humane(d: Duration) -> String {
    let secs = d.as_secs();
    let (n, unit) = if secs >= DAY.as_secs() && secs.is_multiple_of(DAY.as_secs()) {
        (secs / DAY.as_secs(), "day")
    } else if secs >= HOUR.as_secs() && secs.is_multiple_of(HOUR.as_secs()) {
        (secs / HOUR.as_secs(), "hour")
    } else if secs >= MINUTE.as_secs() && secs.is_multiple_of(MINUTE.as_secs()) {
        (secs / MINUTE.as_secs(), "minute")
    } else {
        (secs, "second")
    };
    format!("{n} {unit}{}", if n == 1 { "" } else { "s" })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_outside_their_bounds_are_refused_never_overflowing() {
        let any = Bounds::up_to(YEAR);
        for bad in [
            1e18,
            1e19,
            -1.0,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MAX,
        ] {
            for unit in [
                Unit::Millis,
                Unit::Seconds,
                Unit::Minutes,
                Unit::Hours,
                Unit::Days,
            ] {
                assert!(duration(bad, unit, any).is_err(), "{bad} {unit:?}");
            }
        }
        assert_eq!(
            duration(90.0, Unit::Minutes, any),
            Ok(Duration::from_secs(5400))
        );
        assert_eq!(duration(-0.0, Unit::Seconds, any), Ok(Duration::ZERO));
        assert_eq!(
            duration(0.0, Unit::Seconds, Bounds::positive(HOUR)),
            Err("must be a number of seconds more than 0 to 3600 (1 hour)".into())
        );
        assert_eq!(
            duration(2.0, Unit::Minutes, Bounds::between(5 * MINUTE, 30 * DAY)),
            Err("must be a number of minutes from 5 to 43200 (30 days)".into())
        );
    }

    #[test]
    fn counts_are_whole_and_bounded() {
        assert_eq!(count(5.0, 0, 10), Ok(5));
        for bad in [1.5, -1.0, 11.0, f64::NAN, f64::INFINITY, 1e19] {
            assert!(count(bad, 0, 10).is_err(), "{bad}");
        }
        assert_eq!(amount(12.5, 1e9), Ok(12.5));
        for bad in [-1.0, f64::NAN, f64::INFINITY, 1e10] {
            assert!(amount(bad, 1e9).is_err(), "{bad}");
        }
    }
}
