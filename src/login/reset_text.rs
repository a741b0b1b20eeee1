//! The reset time in the CLIs' limit texts: Claude Code's `3pm (Europe/Berlin)`, `1:20am
//! (Europe/Berlin)`, `Sep 20, 3:30pm (Asia/Seoul)`, `Sep 20, 2027, 9am (UTC)`, and Codex's
//! `9:19 AM`, `Dec 3rd, 2026 9:19 AM` (no zone: its own local time, see [`local_reset_after`]).
//!
//! Claude Code 2.1.197 writes it with `Vee(resetsAt, true)` (read in the pinned binary):
//! within 24 hours `toLocaleTimeString("en-US", {hour: "numeric", minute: minutes ? "2-digit"
//! : undefined, hour12: true})`, beyond that `toLocaleString` with `month: "short", day:
//! "numeric"` in front (and `year` when it is not this year), then ` AM` → `am`, then the
//! process's IANA zone in parentheses. No epoch is written, so the instant is rebuilt as
//! the next such local time, in that zone, after the row was written.
//!
//! Two losses in that text are dealt with here:
//! - **Seconds are dropped** (`getMinutes` truncates): the reset lies within the minute
//!   shown, so the instant returned is the *end* of that minute — the login is never tried
//!   before its reset, at the price of at most a minute.
//! - **A local time can happen twice** when the clocks go back: `2:30am` on that night is
//!   ambiguous, and the earlier one is taken (a retry an hour early costs one fast
//!   failure, which then reads the limit again; a retry an hour late costs nothing but time).

use jiff::civil::{Date, DateTime, Time};
use jiff::tz::TimeZone;
use jiff::{SignedDuration, Timestamp, ToSpan as _};

const MONTHS: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];

/// The reset instant `text` names (`3pm (Europe/Berlin)`, what follows "resets "), the
/// next one after `written` (the row's timestamp); `None` when the text or its zone is not
/// understood.
pub fn reset_after(text: &str, written: Timestamp) -> Option<Timestamp> {
    let open = text.find('(')?;
    let close = open + text[open..].find(')')?;
    let zone = TimeZone::get(text[open + 1..close].trim()).ok()?;
    next_after(parse_when(&text[..open])?, &zone, written)
}

/// The reset instant a text with no zone names (`9:19 AM`, `Dec 3rd, 2026 9:19 AM`), read in
/// `zone` (the zone of the process that wrote it), the next one after `written`. Codex 0.171.0 writes its reset so:
/// chrono's `Local` (the `TZ` variable, else the system's zone — the same rule jiff's
/// system zone follows, and agent's children inherit its `TZ`), `%-I:%M %p` on the same
/// local day, else `%b %-d{st|nd|rd|th}, %Y %-I:%M %p` (codex-rs `core/src/error.rs`,
/// `format_retry_timestamp`, openai/codex at 001cb8e2; matched by the 0.171.0 binary's
/// `%-I:%M %p` string and its output against the mock).
pub fn local_reset_after(text: &str, zone: &TimeZone, written: Timestamp) -> Option<Timestamp> {
    next_after(parse_when(text)?, zone, written)
}

fn next_after(when: When, zone: &TimeZone, written: Timestamp) -> Option<Timestamp> {
    let written_here = written.to_zoned_datetime(zone.clone());
    let candidate_days: Vec<Date> = match when.date {
        Some(Calendar {
            month,
            day,
            year: Some(year),
        }) => vec![Date::new(year, month, day).ok()?],
        Some(Calendar {
            month,
            day,
            year: None,
        }) => {
            let year = written_here.year();
            [year, year + 1]
                .into_iter()
                .filter_map(|y| Date::new(y, month, day).ok())
                .collect()
        }
        None => {
            let today = written_here.date();
            (0..=2)
                .filter_map(|n| today.checked_add(n.days()).ok())
                .collect()
        }
    };
    let minute = SignedDuration::from_mins(1);
    candidate_days
        .into_iter()
        .flat_map(|date| {
            let ambiguous = zone.to_ambiguous_timestamp(DateTime::from_parts(date, when.time));
            [ambiguous.earlier().ok(), ambiguous.later().ok()]
        })
        .flatten()
        .filter_map(|start| start.checked_add(minute).ok())
        .filter(|end_of_minute| *end_of_minute > written)
        .min()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Calendar {
    month: i8,
    day: i8,
    year: Option<i16>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct When {
    date: Option<Calendar>,
    time: Time,
}

/// `3pm`, `3:05 PM`, `Sep 20, 3pm`, `Sep 20, 2027, 3pm`, `Sep 20 at 3pm`, `Dec 3rd, 2026 9:19 AM`.
fn parse_when(text: &str) -> Option<When> {
    // ICU puts a narrow no-break space before AM/PM; Claude Code replaces only a plain one.
    let text = text
        .replace(['\u{202f}', '\u{a0}'], " ")
        .replace(',', " ")
        .to_lowercase();
    let mut words: Vec<&str> = text.split_whitespace().filter(|w| *w != "at").collect();
    let date = match words.first().and_then(|w| month_number(w)) {
        Some(month) => {
            // Codex writes the day with its English ordinal (`3rd`).
            let day = words.get(1)?;
            let day = ["st", "nd", "rd", "th"]
                .iter()
                .find_map(|suffix| day.strip_suffix(suffix))
                .unwrap_or(day);
            let day: i8 = day.parse().ok()?;
            let year = words.get(2).and_then(|w| {
                (w.len() == 4 && w.bytes().all(|b| b.is_ascii_digit()))
                    .then(|| w.parse::<i16>().ok())
                    .flatten()
            });
            words.drain(..if year.is_some() { 3 } else { 2 });
            Some(Calendar { month, day, year })
        }
        None => None,
    };
    let time = parse_clock(&words.concat())?;
    Some(When { date, time })
}

fn month_number(word: &str) -> Option<i8> {
    let word = word.trim_end_matches('.');
    if word.len() < 3 {
        return None;
    }
    let index = MONTHS.iter().position(|m| word.starts_with(m))?;
    i8::try_from(index + 1).ok()
}

/// `3pm`, `3:05pm`, `12am`.
fn parse_clock(text: &str) -> Option<Time> {
    let (digits, pm) = if let Some(rest) = text.strip_suffix("pm") {
        (rest, true)
    } else {
        (text.strip_suffix("am")?, false)
    };
    let (hour, minute) = match digits.split_once(':') {
        Some((hour, minute)) if minute.len() == 2 => (hour, minute.parse::<i8>().ok()?),
        Some(_) => return None,
        None => (digits, 0),
    };
    let hour: i8 = hour.parse().ok()?;
    if !(1..=12).contains(&hour) {
        return None;
    }
    let hour = match (hour, pm) {
        (12, false) => 0,
        (12, true) => 12,
        (hour, false) => hour,
        (hour, true) => hour + 12,
    };
    Time::new(hour, minute, 0, 0).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    #[test]
    fn a_time_of_day_is_the_next_one_after_the_row_in_that_zone() {
        // 12:03 UTC is 14:03 in Berlin (summer): 3pm is the same day, 15:00 CEST = 13:00 UTC.
        assert_eq!(
            reset_after("3pm (Europe/Berlin)", at("2026-09-14T12:03:11Z")),
            Some(at("2026-09-14T13:01:00Z"))
        );
        // 1:20am is after midnight: the next day.
        assert_eq!(
            reset_after("1:20am (Europe/Berlin)", at("2026-04-17T20:00:00Z")),
            Some(at("2026-04-17T23:21:00Z"))
        );
        assert_eq!(
            reset_after("11pm (America/Anchorage)", at("2026-01-10T10:00:00Z")),
            Some(at("2026-01-11T08:01:00Z"))
        );
        assert_eq!(
            reset_after("12am (UTC)", at("2026-01-10T10:00:00Z")),
            Some(at("2026-01-11T00:01:00Z"))
        );
        assert_eq!(
            reset_after("12:30pm (UTC)", at("2026-01-10T10:00:00Z")),
            Some(at("2026-01-10T12:31:00Z"))
        );
    }

    #[test]
    fn a_reset_in_the_minute_the_row_was_written_is_still_that_minute() {
        // Written at 15:00:20 for a reset at 15:00:45: "3pm" is this minute, not tomorrow.
        assert_eq!(
            reset_after("3pm (UTC)", at("2026-01-10T15:00:20Z")),
            Some(at("2026-01-10T15:01:00Z"))
        );
    }

    #[test]
    fn dates_and_years_are_read_in_each_form_claude_writes() {
        let written = at("2026-09-14T12:00:00Z");
        for text in [
            "Sep 20, 3pm (UTC)",
            "Sep 20, 3 PM (UTC)",
            "Sep 20, 3\u{202f}PM (UTC)",
            "Sep 20 at 3pm (UTC)",
            "Sep 20, 2026, 3pm (UTC)",
        ] {
            assert_eq!(
                reset_after(text, written),
                Some(at("2026-09-20T15:01:00Z")),
                "{text}"
            );
        }
        assert_eq!(
            reset_after("Jan 2, 9:30am (Asia/Seoul)", at("2026-12-30T00:00:00Z")),
            Some(at("2027-01-02T00:31:00Z"))
        );
        assert_eq!(
            reset_after("Jan 2, 2028, 9am (UTC)", written),
            Some(at("2028-01-02T09:01:00Z"))
        );
    }

    #[test]
    fn codexs_reset_is_its_own_local_time_today_or_a_dated_one() {
        let york = TimeZone::get("America/New_York").unwrap();
        // 06:02 UTC is 01:02 in New York (winter): "9:19 AM" is that day, 14:19 UTC.
        assert_eq!(
            local_reset_after("9:19 AM", &york, at("2026-12-02T06:02:14Z")),
            Some(at("2026-12-02T14:20:00Z"))
        );
        assert_eq!(
            local_reset_after("Dec 3rd, 2026 9:19 AM", &york, at("2026-12-02T06:02:14Z")),
            Some(at("2026-12-03T14:20:00Z"))
        );
        assert_eq!(
            local_reset_after(
                "Jan 1st, 2027 12:05 AM",
                &TimeZone::UTC,
                at("2026-12-30T06:00:00Z")
            ),
            Some(at("2027-01-01T00:06:00Z"))
        );
        assert_eq!(
            local_reset_after("later", &york, at("2026-12-02T06:02:14Z")),
            None
        );
    }

    #[test]
    fn texts_that_are_not_a_time_or_name_no_zone_are_nothing() {
        let written = at("2026-09-14T12:00:00Z");
        for text in [
            "3pm",
            "3pm (Mars/Olympus)",
            "soon (UTC)",
            "13pm (UTC)",
            "3:5pm (UTC)",
            "0am (UTC)",
            "Foo 20, 3pm (UTC)",
            "",
        ] {
            assert_eq!(reset_after(text, written), None, "{text}");
        }
    }

    /// Claude Code's `Vee(reset, true)` as read in the 2.1.197 binary, for `now`.
    fn claude_text(reset: Timestamp, now: Timestamp, zone: &str) -> String {
        let local = reset.to_zoned_datetime(TimeZone::get(zone).unwrap());
        let hour12 = match local.hour() {
            0 => 12,
            h if h > 12 => h - 12,
            h => h,
        };
        let ampm = if local.hour() < 12 { "am" } else { "pm" };
        let clock = if local.minute() == 0 {
            format!("{hour12}{ampm}")
        } else {
            format!("{hour12}:{:02}{ampm}", local.minute())
        };
        if reset.as_second() - now.as_second() > 24 * 3600 {
            let month = [
                "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
            ][usize::try_from(local.month() - 1).unwrap()];
            let year = now.to_zoned_datetime(TimeZone::get(zone).unwrap()).year();
            if local.year() == year {
                format!("{month} {}, {clock} ({zone})", local.day())
            } else {
                format!(
                    "{month} {}, {}, {clock} ({zone})",
                    local.day(),
                    local.year()
                )
            }
        } else {
            format!("{clock} ({zone})")
        }
    }

    #[test]
    fn every_reset_claude_can_write_is_recovered_across_daylight_saving_changes() {
        let mut rng = fastrand::Rng::with_seed(13);
        // Both Berlin changes of 2026 and 2027 lie in this range.
        let start = at("2026-01-01T00:00:00Z").as_second();
        let end = at("2027-12-31T00:00:00Z").as_second();
        for zone in [
            "Europe/Berlin",
            "America/Los_Angeles",
            "Australia/Lord_Howe",
        ] {
            let tz = TimeZone::get(zone).unwrap();
            for case in 0..2000 {
                let reset = Timestamp::from_second(rng.i64(start..end)).unwrap();
                // Written up to 8 days before the reset (weekly windows), half within a day.
                let ahead = if case % 2 == 0 {
                    rng.i64(1..24 * 3600)
                } else {
                    rng.i64(1..8 * 24 * 3600)
                };
                let written = Timestamp::from_second(reset.as_second() - ahead).unwrap();
                let text = claude_text(reset, written, zone);
                let got = reset_after(&text, written)
                    .unwrap_or_else(|| panic!("{text} written {written}: not understood"));
                let shown_minute = got - SignedDuration::from_mins(1);
                let exact = shown_minute <= reset && reset < got;
                // The later of two equal local times (clocks going back) reads as the
                // earlier one, by design.
                let local = reset.to_zoned_datetime(tz.clone()).datetime();
                let earlier_twin = tz.to_ambiguous_timestamp(local).earlier().unwrap();
                let twin = earlier_twin != tz.to_ambiguous_timestamp(local).later().unwrap()
                    && shown_minute.as_second() / 60 == earlier_twin.as_second() / 60;
                assert!(
                    exact || twin,
                    "{zone} case {case}: reset {reset} written {written} as {text:?} read as {got}"
                );
            }
        }
    }
}
