//! Which local calendar day a call belongs to: the system's time zone (DST-correct), or a
//! fixed `--tz-offset-hours N`. A million ledger lines share a few thousand hours, so the
//! days of an hour's minutes are worked out once per UTC hour and remembered.

use std::collections::HashMap;

use jiff::Timestamp;
use jiff::tz::{Offset, TimeZone};

use crate::exit_codes::usage;

/// A local calendar date, `YYYY-MM-DD`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Day([u8; 10]);

impl Day {
    pub fn as_str(&self) -> &str {
        // Built only from jiff's ASCII `YYYY-MM-DD` (see `Day::parse`).
        std::str::from_utf8(&self.0).unwrap_or("")
    }

    /// `YYYY-MM`: the month a plan's fee is spread over.
    pub fn month(&self) -> &str {
        &self.as_str()[..7]
    }

    /// A `YYYY-MM-DD` date as written on the command line.
    pub fn parse(text: &str) -> Option<Day> {
        let date: jiff::civil::Date = text.parse().ok()?;
        Day::from_date(date)
    }

    /// A unix-millisecond instant no later than the first moment of this day in any time
    /// zone (UTC−12 to UTC+14, with a day to spare): where a read of the calls since this
    /// day may start.
    pub fn earliest_ms(&self) -> Option<u64> {
        let date: jiff::civil::Date = self.as_str().parse().ok()?;
        let midnight_utc = date.to_zoned_datetime(TimeZone::UTC).ok()?.timestamp();
        let earliest = midnight_utc.as_millisecond() - 2 * 24 * 3600 * 1000;
        u64::try_from(earliest).ok()
    }

    fn from_date(date: jiff::civil::Date) -> Option<Day> {
        let text = date.to_string();
        let bytes: [u8; 10] = text.as_bytes().try_into().ok()?;
        Some(Day(bytes))
    }
}

/// Turns RFC 3339 times into local days.
#[derive(Debug, Clone)]
pub struct Clock {
    tz: TimeZone,
    /// UTC hour (`YYYY-MM-DDTHH` of a `…Z` time) → the local days of its minutes.
    memo: HashMap<[u8; 13], Hour>,
    last: Option<([u8; 13], Hour)>,
}

/// The local days of one UTC hour's minutes: `first` until minute `switch`, then `then`.
/// `None` when the zone's offset changes inside the hour (each time is then worked out).
type Hour = Option<(Day, u8, Day)>;

impl Clock {
    /// The system's time zone, or a fixed offset from UTC in hours (`-5`, `5.5`).
    pub fn new(offset_hours: Option<f64>) -> anyhow::Result<Clock> {
        let tz = match offset_hours {
            None => TimeZone::system(),
            Some(hours) => {
                let seconds = (hours * 3600.0).round();
                if !seconds.is_finite() || seconds.abs() > 25.0 * 3600.0 {
                    return Err(usage(format!(
                        "--tz-offset-hours {hours}: expected hours between -25 and 25"
                    )));
                }
                #[allow(clippy::cast_possible_truncation)]
                let offset = Offset::from_seconds(seconds as i32)
                    .map_err(|err| usage(format!("--tz-offset-hours {hours}: {err}")))?;
                TimeZone::fixed(offset)
            }
        };
        Ok(Clock {
            tz,
            memo: HashMap::new(),
            last: None,
        })
    }

    /// The local day of an RFC 3339 time; `None` when it is not one.
    pub fn day(&mut self, time: &str) -> Option<Day> {
        let bytes = time.as_bytes();
        // The fast path: a UTC time (`…Z`), as agent and the CLIs write them.
        let utc = bytes.len() >= 17
            && bytes[10] == b'T'
            && bytes[13] == b':'
            && bytes[bytes.len() - 1] == b'Z'
            && bytes[14].is_ascii_digit()
            && bytes[15].is_ascii_digit();
        if !utc {
            return self.slow(time);
        }
        let hour_key: [u8; 13] = bytes[..13].try_into().ok()?;
        let hour = match self.last {
            Some((key, hour)) if key == hour_key => hour,
            _ => {
                let hour = match self.memo.get(&hour_key) {
                    Some(hour) => *hour,
                    None => {
                        let hour = self.hour(&time[..13])?;
                        self.memo.insert(hour_key, hour);
                        hour
                    }
                };
                self.last = Some((hour_key, hour));
                hour
            }
        };
        let minute = (bytes[14] - b'0') * 10 + (bytes[15] - b'0');
        if minute >= 60 {
            return None;
        }
        match hour {
            Some((first, switch, then)) => Some(if minute < switch { first } else { then }),
            None => self.slow(time),
        }
    }

    /// Works out the days of the hour `YYYY-MM-DDTHH` (UTC).
    fn hour(&self, hour: &str) -> Option<Hour> {
        let start: Timestamp = format!("{hour}:00:00Z").parse().ok()?;
        let end = start + jiff::SignedDuration::from_secs(59 * 60);
        if self.tz.to_offset(start) != self.tz.to_offset(end) {
            return Some(None);
        }
        let local = self.tz.to_datetime(start);
        let first = Day::from_date(local.date())?;
        let minutes_into_day = i32::from(local.hour()) * 60 + i32::from(local.minute());
        let until_midnight = 24 * 60 - minutes_into_day;
        if until_midnight >= 60 {
            return Some(Some((first, 60, first)));
        }
        let then = Day::from_date(local.date().tomorrow().ok()?)?;
        Some(Some((first, u8::try_from(until_midnight).ok()?, then)))
    }

    fn slow(&self, time: &str) -> Option<Day> {
        let ts: Timestamp = time.parse().ok()?;
        Day::from_date(self.tz.to_datetime(ts).date())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_days_earliest_instant_is_before_its_midnight_in_every_zone() {
        let day = Day::parse("2026-11-30").unwrap();
        let earliest = day.earliest_ms().unwrap();
        // Midnight at UTC+14 is 2026-11-29T10:00Z; a day to spare before that.
        let kiribati_midnight: Timestamp = "2026-11-29T10:00:00Z".parse().unwrap();
        let earliest = Timestamp::from_millisecond(i64::try_from(earliest).unwrap()).unwrap();
        assert!(earliest < kiribati_midnight, "{earliest}");
        assert_eq!(earliest.to_string(), "2026-11-28T00:00:00Z");
    }

    #[test]
    fn a_fixed_offset_moves_the_day() {
        let mut utc = Clock::new(Some(0.0)).unwrap();
        let mut tokyo = Clock::new(Some(9.0)).unwrap();
        let mut new_york = Clock::new(Some(-5.0)).unwrap();
        let mut india = Clock::new(Some(5.5)).unwrap();
        let time = "2026-11-30T18:40:00.123Z";
        assert_eq!(utc.day(time).unwrap().as_str(), "2026-11-30");
        assert_eq!(tokyo.day(time).unwrap().as_str(), "2026-12-01");
        assert_eq!(new_york.day(time).unwrap().as_str(), "2026-11-30");
        assert_eq!(india.day(time).unwrap().as_str(), "2026-12-01");
        assert_eq!(
            india.day("2026-11-30T18:29:59Z").unwrap().as_str(),
            "2026-11-30",
            "the half hour decides"
        );
        assert_eq!(
            new_york.day("2026-12-01T03:00:00Z").unwrap().as_str(),
            "2026-11-30"
        );
    }

    #[test]
    fn the_hourly_memo_agrees_with_working_out_every_time() {
        // Zones with DST, half-hour offsets and a half-hour DST shift (Lord Howe).
        let mut zones = 0;
        for name in [
            "America/New_York",
            "Asia/Kolkata",
            "Australia/Lord_Howe",
            "Europe/London",
        ] {
            let Ok(tz) = TimeZone::get(name) else {
                continue;
            };
            zones += 1;
            let mut clock = Clock {
                tz,
                memo: HashMap::new(),
                last: None,
            };
            let start: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
            // Every 7 minutes for a year: every hour is hit at several minutes.
            for step in 0..(366 * 24 * 60 / 7) {
                let time = (start + jiff::SignedDuration::from_mins(step * 7)).to_string();
                assert_eq!(clock.day(&time), clock.slow(&time), "{name} {time}");
            }
        }
        assert!(zones > 0, "no time zone database here");
    }

    #[test]
    fn times_with_an_offset_and_garbage_are_understood_or_refused() {
        let mut utc = Clock::new(Some(0.0)).unwrap();
        assert_eq!(
            utc.day("2026-11-30T23:30:00-02:00").unwrap().as_str(),
            "2026-12-01"
        );
        assert!(utc.day("yesterday").is_none());
        assert!(utc.day("2026-13-45T99:99Z").is_none());
        assert_eq!(Day::parse("2026-02-03").unwrap().month(), "2026-02");
        assert!(Day::parse("2026-2-3x").is_none());
    }
}
