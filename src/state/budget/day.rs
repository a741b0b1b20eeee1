//! The budget's days: local calendar days (a call counts on the day it was reserved, in
//! this machine's zone), a day's counts, and whether they reached the caps.

use serde::{Deserialize, Serialize};

use crate::config::limits::Limits;

/// What one day (or one named client on one day) has used.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Day {
    pub calls: u64,
    pub tokens: u64,
}

/// Today's local calendar date, `YYYY-MM-DD`.
pub fn today() -> String {
    day_of(jiff::Timestamp::now())
}

/// The local calendar date of an instant: the day a record stamped `at` is counted on (one
/// clock reading gives both, so a record made at midnight never has a time of one day and
/// a day of the next).
pub fn day_of(at: jiff::Timestamp) -> String {
    at.to_zoned_datetime(jiff::tz::TimeZone::system())
        .date()
        .to_string()
}

/// The local calendar date of an RFC 3339 time.
pub fn local_day(time: &str) -> Option<String> {
    let ts: jiff::Timestamp = time.parse().ok()?;
    Some(day_of(ts))
}

/// Whether `used` has reached either of `limits`' caps (0 = no cap).
pub fn spent(used: Day, limits: Limits) -> bool {
    (limits.calls > 0 && used.calls >= limits.calls)
        || (limits.tokens > 0 && used.tokens >= limits.tokens)
}
