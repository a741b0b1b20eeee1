//! How the page says numbers and times: relative times with the local time on hover,
//! plurals, and digits grouped with a comma as the CLI's own tables group them.

use jiff::Timestamp;

use super::html::escape;

/// `12,345`: as `--usage` groups digits on a terminal.
pub fn grouped(value: u64) -> String {
    let digits = value.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `1 call`, `12,345 tokens`.
pub fn count(value: u64, noun: &str) -> String {
    if value == 1 {
        format!("1 {noun}")
    } else {
        format!("{} {noun}s", grouped(value))
    }
}

/// `45 s`, `12 min`, `3 h 5 min`, `4 days`.
pub fn span(seconds: i64) -> String {
    match seconds.max(0) {
        s if s < 60 => format!("{s} s"),
        s if s < 3600 => format!("{} min", s / 60),
        s if s < 48 * 3600 => match (s % 3600) / 60 {
            0 => format!("{} h", s / 3600),
            m => format!("{} h {m} min", s / 3600),
        },
        s => format!("{} days", s / 86_400),
    }
}

/// `in 42 min`, `5 min ago`, `just now`: `at` as seen from `now`.
pub fn relative(at: Timestamp, now: Timestamp) -> String {
    let ahead = at.as_second() - now.as_second();
    match ahead {
        -4..=4 => "just now".to_string(),
        a if a > 0 => format!("in {}", span(a)),
        a => format!("{} ago", span(-a)),
    }
}

/// `14:20`, local time: the clock reading of an instant.
pub fn clock(at: Timestamp) -> String {
    at.to_zoned_datetime(jiff::tz::TimeZone::system())
        .strftime("%H:%M")
        .to_string()
}

/// `<time datetime="…" title="Thu 12 Mar 14:05 CET">in 42 min</time>`: the relative time
/// as text, the absolute local time on hover.
pub fn time(at: Timestamp, now: Timestamp) -> String {
    time_as(at, &relative(at, now))
}

/// A `<time>` of `at` whose text is `text` (already plain, escaped here).
pub fn time_as(at: Timestamp, text: &str) -> String {
    let local = at.to_zoned_datetime(jiff::tz::TimeZone::system());
    format!(
        "<time datetime=\"{}\" title=\"{}\">{}</time>",
        at.round(jiff::Unit::Second).unwrap_or(at),
        escape(&local.strftime("%a %-d %b %Y %H:%M %Z").to_string()),
        escape(text)
    )
}

/// [`time`] of an RFC 3339 stamp; `None` for anything else.
pub fn time_of(stamp: Option<&str>, now: Timestamp) -> Option<String> {
    stamp?.parse::<Timestamp>().ok().map(|at| time(at, now))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_are_grouped_by_three_with_a_comma() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(12_345), "12,345");
        assert_eq!(grouped(1_234_567), "1,234,567");
    }

    #[test]
    fn one_is_singular() {
        assert_eq!(count(1, "call"), "1 call");
        assert_eq!(count(0, "call"), "0 calls");
        assert_eq!(count(12_345, "token"), "12,345 tokens");
    }

    #[test]
    fn times_read_as_from_now() {
        let now: Timestamp = "2026-03-12T10:00:00Z".parse().unwrap();
        let at = |s: &str| s.parse::<Timestamp>().unwrap();
        assert_eq!(relative(at("2026-03-12T10:42:10Z"), now), "in 42 min");
        assert_eq!(relative(at("2026-03-12T09:55:00Z"), now), "5 min ago");
        assert_eq!(relative(at("2026-03-12T11:40:00Z"), now), "in 1 h 40 min");
        assert_eq!(relative(at("2026-03-12T13:00:00Z"), now), "in 3 h");
        assert_eq!(relative(at("2026-03-09T10:00:00Z"), now), "3 days ago");
        assert_eq!(relative(now, now), "just now");
    }

    #[test]
    fn a_time_tag_carries_the_second_not_the_nanosecond() {
        let at: Timestamp = "2026-12-01T07:44:26.548806539Z".parse().unwrap();
        let tag = time(at, at);
        assert!(
            tag.starts_with("<time datetime=\"2026-12-01T07:44:27Z\" title=\""),
            "{tag}"
        );
        assert!(tag.ends_with(">just now</time>"), "{tag}");
    }
}
