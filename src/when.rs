//! An instant as a report says it to a person: in local time, and short — `23:36` today,
//! `Wed 23:36` within a week either way, `Dec 3 23:36` beyond. Reports once printed the
//! stored stamp as it was (`2026-12-03T23:36:28.664433127Z`): right for a file, unreadable
//! in a row. `--json` keeps the stamp; only the words go through here.

use jiff::tz::TimeZone;
use jiff::{SignedDuration, Timestamp};

/// How far either side of now a weekday names the day unambiguously.
const WITHIN_A_WEEK: SignedDuration = SignedDuration::from_hours(6 * 24);

/// `at` as seen from `now`, in the system's time zone.
pub fn short(at: Timestamp, now: Timestamp) -> String {
    short_in(at, now, &TimeZone::system())
}

/// A stored RFC 3339 stamp as [`short`] says it; the stamp as it is when it does not parse
/// (a file another version wrote), so nothing is lost.
pub fn short_stamp(stamp: &str, now: Timestamp) -> String {
    match stamp.parse::<Timestamp>() {
        Ok(at) => short(at, now),
        Err(_) => stamp.to_string(),
    }
}

/// [`short`] in the zone `zone`.
fn short_in(at: Timestamp, now: Timestamp, zone: &TimeZone) -> String {
    let local = at.to_zoned_datetime(zone.clone());
    let today = now.to_zoned_datetime(zone.clone()).date();
    let format = if local.date() == today {
        "%H:%M"
    } else if at.duration_since(now).abs() < WITHIN_A_WEEK {
        "%a %H:%M"
    } else {
        "%b %-d %H:%M"
    };
    local.strftime(format).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(stamp: &str) -> Timestamp {
        stamp.parse().unwrap()
    }

    #[test]
    fn an_instant_is_said_in_local_time_and_no_longer_than_its_distance_needs() {
        let zone = TimeZone::get("Europe/Berlin").unwrap();
        let now = at("2026-12-03T20:00:00Z");
        // The same local day: the clock alone (Berlin is an hour ahead in December).
        assert_eq!(
            short_in(at("2026-12-03T22:36:28.664433127Z"), now, &zone),
            "23:36"
        );
        // Another day within a week, either way: its weekday.
        assert_eq!(
            short_in(at("2026-12-01T07:05:00Z"), now, &zone),
            "Tue 08:05"
        );
        assert_eq!(
            short_in(at("2026-12-05T07:05:00Z"), now, &zone),
            "Sat 08:05"
        );
        // Further: the date, never a weekday that names the wrong week.
        assert_eq!(
            short_in(at("2026-11-03T07:05:00Z"), now, &zone),
            "Nov 3 08:05"
        );
        assert_eq!(
            short_in(at("2027-01-10T07:05:00Z"), now, &zone),
            "Jan 10 08:05"
        );
    }

    #[test]
    fn a_stamp_that_does_not_parse_is_shown_as_it_is() {
        let now = at("2026-12-03T20:00:00Z");
        assert_eq!(short_stamp("yesterday-ish", now), "yesterday-ish");
        assert!(!short_stamp("2026-12-03T19:36:28.664433127Z", now).contains('T'));
    }
}
