//! When every rung that could run is parked until a known reset (DESIGN §18): a launch
//! exits 75 (EX_TEMPFAIL, so a cron wrapper tries again) naming the earliest reset and the
//! rung it reopens, or with `--wait[=MAX]` (or `AGENT_WAIT=MAX`) waits for it — a countdown
//! on a terminal, one line otherwise — and then lets the launch choose again, once.
//!
//! About every second the wait judges every rung again by the one rule the launch chooses
//! by ([`Cascade::choose`], health and the windows as they are then): a newer report
//! (Claude Code's statusline feed, a `windows.json` entry from another agent) that reopens
//! any rung early ends it early, whichever rung the countdown names. Ctrl-C during the
//! wait exits 130 and runs nothing.

use std::time::{Duration, Instant};

use jiff::{SignedDuration, Timestamp};

use crate::config::Config;
use crate::error_class::ErrorClass;
use crate::exit_codes::{ExitStatus, usage};
use crate::launch::cascade::Cascade;
use crate::launch::parking::{Decision, Parking};
use crate::launch::rung::Rung;
use crate::state::health::Verdict;
use crate::term;

/// How long `--wait` waits when it names no limit.
pub const DEFAULT_MAX: Duration = Duration::from_secs(6 * 60 * 60);
/// The longest wait asked for that is taken: a weekly window's length.
pub const LONGEST: Duration = Duration::from_secs(7 * 24 * 60 * 60);
/// The variable that asks for `--wait=MAX` in every launch (for scripts).
pub const ENV_VAR: &str = "AGENT_WAIT";

/// How often the windows store is read again during a wait.
const POLL: Duration = Duration::from_secs(1);
/// How often the countdown is redrawn (and Ctrl-C looked for).
const TICK: Duration = Duration::from_millis(200);

/// The longest wait of this launch: `--wait[=MAX]` (`flag`, its value or the default), else
/// `AGENT_WAIT`, else none (a launch with every rung parked exits 75).
pub fn max_from(flag: Option<&str>) -> anyhow::Result<Option<Duration>> {
    if let Some(text) = flag {
        return parse_max(text, "--wait").map(Some);
    }
    match std::env::var(ENV_VAR) {
        Ok(text) if !text.trim().is_empty() => parse_max(&text, ENV_VAR).map(Some),
        _ => Ok(None),
    }
}

/// `90s`, `45m`, `6h`, `2d` (or a sum, `1h30m`): more than 0, at most [`LONGEST`].
/// `what` names where it was given, for the error.
pub fn parse_max(text: &str, what: &str) -> anyhow::Result<Duration> {
    let expected = || {
        usage(format!(
            "{what}={text}: expected a duration such as 90s, 45m, 6h or 2d"
        ))
    };
    let mut rest = text.trim();
    if rest.is_empty() {
        return Err(expected());
    }
    let mut seconds: u64 = 0;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let (number, after) = rest.split_at(digits);
        let units = after
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(after.len());
        let (unit, after) = after.split_at(units);
        let unit_seconds: u64 = match unit {
            "s" => 1,
            "m" | "min" => 60,
            "h" => 3600,
            "d" => 86_400,
            _ => return Err(expected()),
        };
        // More digits than any wait needs would overflow: they are refused as too long.
        let number: u64 = number.parse().map_err(|_| expected())?;
        seconds = number
            .checked_mul(unit_seconds)
            .and_then(|part| seconds.checked_add(part))
            .unwrap_or(u64::MAX);
        rest = after;
    }
    if seconds == 0 {
        return Err(usage(format!("{what}={text}: must be more than 0")));
    }
    if seconds > LONGEST.as_secs() {
        return Err(usage(format!(
            "{what}={text}: at most 7d (a weekly window's length)"
        )));
    }
    Ok(Duration::from_secs(seconds))
}

/// The earliest a parked rung reopens: its label and the reset of the window that parks it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reopening {
    pub label: String,
    pub at: Timestamp,
}

/// Among `rungs` that could run but for their login's windows, the one that reopens first
/// (a rung is parked until the last of its windows over the mark resets).
pub fn reopening(
    config: &Config,
    rungs: &[Rung],
    parking: &Parking,
    now: Timestamp,
) -> Option<Reopening> {
    rungs
        .iter()
        .filter(|rung| rung.state.is_ok())
        .filter_map(|rung| match parking.check(config, rung, now) {
            Decision::Park { window, .. } => Some(Reopening {
                label: rung.label(),
                at: window.resets_at,
            }),
            Decision::Go => None,
        })
        .min_by_key(|reopening| reopening.at)
}

/// Whether every rung that could run (installed, with a login or key) is parked now — its
/// login until a window's reset, or its target skipped until a spent quota clears. One
/// that cannot take these words could run, and is not parked.
fn every_one_that_could_run_is_parked(
    config: &Config,
    rungs: &[Rung],
    cascade: &Cascade,
    now: Timestamp,
) -> bool {
    let health = cascade.store().load();
    let now_ms = crate::state::health::now_ms();
    rungs.iter().all(|rung| match &rung.state {
        Ok(ready) => {
            matches!(
                cascade.parking().check(config, rung, now),
                Decision::Park { .. }
            ) || matches!(
                health.verdict(&ready.plan.target, config.probe_cache, now_ms),
                Verdict::Cooling {
                    class: ErrorClass::Quota,
                    until_ms: Some(_),
                    ..
                }
            )
        }
        Err(unusable) => unusable.class != ErrorClass::BadArguments,
    })
}

/// What a launch with no rung left does when some rung is parked.
#[derive(Debug)]
pub enum Parked {
    /// The wait is over: choose again (once).
    Reopened,
    /// End with this code: 75 (nothing waited for), or 130 (Ctrl-C during the wait).
    Exit(u8),
}

/// No rung is left to run: when every rung that could run is parked until a known reset,
/// exit 75 naming the earliest; with `--wait`, when one is, wait for it up to `max`.
/// `None`: no rung is available — none is parked, or one that could run was passed over for
/// another reason (its arguments, the folder, a failure, its health): a retry would not
/// find it open at a reset, so 75 would tell cron a lie.
pub fn every_rung_parked(
    config: &Config,
    cascade: &mut Cascade,
    max: Option<Duration>,
) -> Option<Parked> {
    let rungs: Vec<Rung> = (0..cascade.len())
        .map(|index| cascade.rung(index).clone())
        .collect();
    let now = Timestamp::now();
    let first = reopening(config, &rungs, cascade.parking(), now)?;
    let parked = || ExitStatus::Parked.code();
    let Some(max) = max else {
        if !every_one_that_could_run_is_parked(config, &rungs, cascade, now) {
            return None;
        }
        term::notice(&format!(
            "every rung is parked: {} reopens at {} ({}) — agent --wait runs it then",
            first.label,
            clock_words(first.at, now),
            in_words(first.at.duration_since(now))
        ));
        return Some(Parked::Exit(parked()));
    };
    let deadline = SignedDuration::try_from(max)
        .ok()
        .and_then(|max| now.checked_add(max).ok())
        .unwrap_or(Timestamp::MAX);
    if first.at > deadline {
        term::notice(&beyond_max(&first, now, max));
        return Some(Parked::Exit(parked()));
    }
    let parking = Parking::read_only(cascade.store().state_dir());
    // The launch's own choice, made again: any rung it would now run (or probe, and the
    // probe answered) ends the wait — not only the one that reopens first.
    let judged = |now: Timestamp| {
        cascade.refresh();
        if cascade.choose(0).winner.is_some() {
            return None;
        }
        reopening(config, &rungs, &parking, now)
    };
    Some(wait(first, deadline, max, judged))
}

/// After a limit ending that is to be resumed (DESIGN §21): waits, as `--wait` does, until
/// rung `index` reopens — at most `max`, with the same countdown and Ctrl-C (130, nothing
/// run); `announce` says the wait once it is sure to begin. A reset beyond `max` is not
/// waited for (said instead): the launch ends as a parked one (75).
///
/// It reopens no sooner than `not_before`, the reset the ending named: a limit only the
/// CLI's final error named parks no login (its target is skipped instead), and resuming
/// before the reset would only run into the same wall.
pub fn until_reopens(
    config: &Config,
    cascade: &mut Cascade,
    index: usize,
    not_before: Timestamp,
    max: Duration,
    announce: &dyn Fn(),
) -> Parked {
    let rungs = [cascade.rung(index).clone()];
    let label = rungs[0].label();
    let reset = move |now: Timestamp| {
        (now < not_before).then(|| Reopening {
            label: label.clone(),
            at: not_before,
        })
    };
    let now = Timestamp::now();
    let Some(first) = reopening(config, &rungs, cascade.parking(), now).or_else(|| reset(now))
    else {
        return Parked::Reopened;
    };
    let deadline = SignedDuration::try_from(max)
        .ok()
        .and_then(|max| now.checked_add(max).ok())
        .unwrap_or(Timestamp::MAX);
    if first.at > deadline {
        term::notice(&format!(
            "{} reopens at {} ({}), beyond the {} a wait takes — not waiting",
            first.label,
            clock_words(first.at, now),
            in_words(first.at.duration_since(now)),
            max_words(max)
        ));
        return Parked::Exit(ExitStatus::Parked.code());
    }
    announce();
    let parking = Parking::read_only(cascade.store().state_dir());
    wait(first, deadline, max, |now| {
        reopening(config, &rungs, &parking, now).or_else(|| reset(now))
    })
}

/// "every rung is parked: X reopens at Thu 09:00 (in 20 h 5 min), beyond the 6 h --wait
/// takes — not waiting".
fn beyond_max(reopening: &Reopening, now: Timestamp, max: Duration) -> String {
    format!(
        "every rung is parked: {} reopens at {} ({}), beyond the {} --wait takes — not waiting",
        reopening.label,
        clock_words(reopening.at, now),
        in_words(reopening.at.duration_since(now)),
        max_words(max)
    )
}

/// The longest wait as it was asked for: `6 h`, `45 min`, `90 s`, `2 d`.
fn max_words(max: Duration) -> String {
    match max.as_secs() {
        s if s % 86_400 == 0 => format!("{} d", s / 86_400),
        s if s % 3600 == 0 => format!("{} h", s / 3600),
        s if s % 60 == 0 => format!("{} min", s / 60),
        s => format!("{s} s"),
    }
}

/// Waits until `first.at`, or until `judged` (asked about every second) finds nothing
/// parked any more, showing how long is left; Ctrl-C ends it with 130. `judged` answers
/// what is still waited for: the earliest reopening, or `None` when the wait is over.
fn wait(
    mut first: Reopening,
    deadline: Timestamp,
    max: Duration,
    mut judged: impl FnMut(Timestamp) -> Option<Reopening>,
) -> Parked {
    crate::signals::note_interrupts();
    let began = Instant::now();
    let in_place = term::notices_on_terminal();
    if !in_place {
        let now = Timestamp::now();
        term::notice(&format!(
            "waiting for {} — reopens {} ({}); Ctrl-C to stop",
            first.label,
            clock_words(first.at, now),
            in_words(first.at.duration_since(now))
        ));
    }
    let mut polled = Instant::now();
    let mut drawn = String::new();
    let end = |in_place: bool| {
        if in_place {
            term::end_in_place();
        }
        crate::signals::stop_noting_interrupts();
        crate::launch::outcome::waited(began.elapsed());
    };
    loop {
        if crate::signals::interrupted() {
            end(in_place);
            term::notice("stopped waiting — nothing ran");
            return Parked::Exit(130);
        }
        let now = Timestamp::now();
        if now >= first.at {
            end(in_place);
            term::notice(&format!("{} reopened", first.label));
            return Parked::Reopened;
        }
        if polled.elapsed() >= POLL {
            polled = Instant::now();
            match judged(now) {
                None => {
                    end(in_place);
                    term::notice("a newer report of the windows reopened a rung early");
                    return Parked::Reopened;
                }
                Some(later) if later.at > deadline => {
                    end(in_place);
                    term::notice(&beyond_max(&later, now, max));
                    return Parked::Exit(ExitStatus::Parked.code());
                }
                Some(next) => first = next,
            }
        }
        if in_place {
            let line = format!(
                "waiting for {} — reopens {}, {} left (Ctrl-C to stop)",
                first.label,
                clock_words(first.at, now),
                countdown(first.at.duration_since(now))
            );
            if line != drawn {
                term::notice_in_place(&line);
                drawn = line;
            }
        }
        let left = Duration::try_from(first.at.duration_since(now)).unwrap_or(Duration::ZERO);
        std::thread::sleep(TICK.min(left.max(Duration::from_millis(1))));
    }
}

/// The reset on the local clock: `15:00` today, else `Thu 09:00` (`Oct 1 00:00` beyond a
/// week).
fn clock_words(at: Timestamp, now: Timestamp) -> String {
    let zone = jiff::tz::TimeZone::system();
    let at = at.to_zoned_datetime(zone.clone());
    let format = if at.date() == now.to_zoned_datetime(zone).date() {
        "%H:%M"
    } else {
        crate::state::window::other_day_format(at.timestamp(), now)
    };
    at.strftime(format).to_string()
}

/// `in 42 min`, `in 3 h 12 min`, `in 2 d 3 h`, `in 30 s`.
fn in_words(left: SignedDuration) -> String {
    format!("in {}", length_words(left))
}

/// `42 min`, `3 h 12 min`, `2 d 3 h`, `30 s`, `1 min 10 s` (under ten minutes the seconds
/// are said: "2 min" for 70 s was a minute's lie; past that, minutes rounded up — it is not
/// open before).
fn length_words(length: SignedDuration) -> String {
    let seconds = u64::try_from(length.as_secs()).unwrap_or(0);
    if seconds < 60 {
        return format!("{seconds} s");
    }
    if seconds < 600 {
        return match seconds % 60 {
            0 => format!("{} min", seconds / 60),
            rest => format!("{} min {rest} s", seconds / 60),
        };
    }
    let minutes = seconds.div_ceil(60);
    let (days, hours, minutes) = (minutes / 1440, minutes / 60 % 24, minutes % 60);
    match (days, hours, minutes) {
        (0, 0, m) => format!("{m} min"),
        (0, h, 0) => format!("{h} h"),
        (0, h, m) => format!("{h} h {m} min"),
        (d, 0, _) => format!("{d} d"),
        (d, h, _) => format!("{d} d {h} h"),
    }
}

/// `41:12`, `3:41:12` (hours past a day keep counting: `51:41:12`).
fn countdown(left: SignedDuration) -> String {
    let seconds = u64::try_from(left.as_millis()).unwrap_or(0).div_ceil(1000);
    let (hours, minutes, seconds) = (seconds / 3600, seconds / 60 % 60, seconds % 60);
    if hours == 0 {
        format!("{minutes}:{seconds:02}")
    } else {
        format!("{hours}:{minutes:02}:{seconds:02}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_is_written_in_seconds_minutes_hours_or_days_up_to_a_week() {
        let secs = |text: &str| parse_max(text, "--wait").map(|d| d.as_secs());
        assert_eq!(secs("90s").unwrap(), 90);
        assert_eq!(secs("45m").unwrap(), 45 * 60);
        assert_eq!(secs("6h").unwrap(), 6 * 3600);
        assert_eq!(secs("2d").unwrap(), 2 * 86_400);
        assert_eq!(secs("1h30m").unwrap(), 5400);
        assert_eq!(secs("7d").unwrap(), 7 * 86_400);
        for bad in [
            "",
            "6",
            "h",
            "6x",
            "-1h",
            "1.5h",
            "8d",
            "0s",
            "99999999999999999999d",
        ] {
            assert!(secs(bad).is_err(), "{bad:?}");
        }
        let err = parse_max("8d", "AGENT_WAIT").unwrap_err().to_string();
        assert!(err.starts_with("AGENT_WAIT=8d: at most 7d"), "{err}");
    }

    #[test]
    fn how_long_is_left_reads_as_a_person_says_it() {
        let s = SignedDuration::from_secs;
        assert_eq!(in_words(s(30)), "in 30 s");
        assert_eq!(in_words(s(70)), "in 1 min 10 s");
        assert_eq!(in_words(s(120)), "in 2 min");
        assert_eq!(in_words(s(9 * 60 + 59)), "in 9 min 59 s");
        assert_eq!(in_words(s(42 * 60 - 10)), "in 42 min");
        assert_eq!(in_words(s(3 * 3600 + 12 * 60)), "in 3 h 12 min");
        assert_eq!(in_words(s(6 * 3600)), "in 6 h");
        assert_eq!(in_words(s(2 * 86_400 + 3 * 3600 + 5)), "in 2 d 3 h");
        assert_eq!(countdown(s(41 * 60 + 12)), "41:12");
        assert_eq!(countdown(SignedDuration::from_millis(2_100)), "0:03");
        assert_eq!(countdown(s(3 * 3600 + 41 * 60 + 12)), "3:41:12");
        assert_eq!(max_words(Duration::from_secs(90)), "90 s");
        assert_eq!(max_words(DEFAULT_MAX), "6 h");
    }
}
