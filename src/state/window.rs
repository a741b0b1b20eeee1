//! A login's usage window: how much of it is used and when it resets, with where agent
//! learnt that and when. Windows are health facts shared by every process (DESIGN §12), so
//! they serialize, and a window read back from a state file is checked like one just parsed.
//!
//! Windows are classified by their **length**, not by the slot a vendor put them in: Codex
//! has moved the weekly window into `primary` with `secondary` empty (research §2.2), so
//! `window_minutes = 10080` is weekly wherever it sits.
//!
//! A window is **plausible or refused** (DESIGN §19): it resets within its own length of
//! when it was seen (or of now, for one stamped later). [`plausible`] is that rule, and
//! [`Window::new`] — which every source, and every window read back from a state file,
//! goes through — applies it, so a feed, a limit row or `codex app-server` naming a reset
//! in year 9999 parks nothing.

use std::sync::atomic::{AtomicBool, Ordering};

use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};

/// Five hours, the "session" window of Claude, Codex and Antigravity.
pub const FIVE_HOURS_MINUTES: u64 = 5 * 60;
/// Seven days.
pub const WEEK_MINUTES: u64 = 7 * 24 * 60;
/// The longest window any vendor has: a month of paid usage credits (Claude's
/// `extra_usage.monthly_limit`). A window said to be longer is refused.
pub const LONGEST_MINUTES: u64 = 31 * 24 * 60;
/// How far past its length a reset may lie: a minute for clocks that disagree, and the
/// minute Claude Code's reset text loses (its instant is the end of the minute shown).
pub const CLOCK_SLACK: SignedDuration = SignedDuration::from_mins(2);

/// Which calls a window counts, and over how long.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Scope {
    /// The login-wide five-hour ("session") window.
    FiveHour,
    /// The login-wide weekly window.
    Weekly,
    /// A weekly window of one model family (Claude's Opus, Sonnet or a named model; a
    /// Codex per-model limit; an Antigravity pool): it parks only that family's rungs.
    ModelWeekly { family: String },
    /// A five-hour window of one model family (Antigravity's pools; Codex's per-model
    /// limits have their own `primary`).
    ModelFiveHour { family: String },
    /// A window of another length, login-wide or of one family.
    Other {
        minutes: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        family: Option<String>,
    },
    /// Login-wide, but the CLI did not say which window ("You've hit your usage limit",
    /// "Claude AI usage limit reached|…"): it parks the whole login until its reset.
    Unstated,
    /// Paid overage ("usage credits", "extra usage"): when this is full the login runs
    /// only inside its subscription windows.
    Credits,
    /// A Claude apps gateway's per-developer spend limit (daily, weekly or monthly; 429 at
    /// the cap), as Claude Code's statusline reports it (`rate_limits.spend_limit`). The
    /// gateway's cap is the wall whatever credits the subscription has: it parks the whole
    /// login until its period resets.
    SpendLimit,
}

impl Scope {
    /// The scope of a window `minutes` long, of `family` when the vendor scoped it to
    /// some models.
    pub fn from_minutes(minutes: u64, family: Option<String>) -> Scope {
        match (minutes, family) {
            (FIVE_HOURS_MINUTES, None) => Scope::FiveHour,
            (WEEK_MINUTES, None) => Scope::Weekly,
            (FIVE_HOURS_MINUTES, Some(family)) => Scope::ModelFiveHour { family },
            (WEEK_MINUTES, Some(family)) => Scope::ModelWeekly { family },
            (minutes, family) => Scope::Other { minutes, family },
        }
    }

    /// The model family the window is limited to; `None` for a login-wide window.
    pub fn family(&self) -> Option<&str> {
        match self {
            Scope::ModelWeekly { family } | Scope::ModelFiveHour { family } => Some(family),
            Scope::Other { family, .. } => family.as_deref(),
            Scope::FiveHour
            | Scope::Weekly
            | Scope::Unstated
            | Scope::Credits
            | Scope::SpendLimit => None,
        }
    }

    /// Whether a call to `model` counts against this window. A login-wide window counts
    /// every call; a family window only its family's (see [`family_matches`]).
    pub fn applies_to_model(&self, model: &str) -> bool {
        self.family()
            .is_none_or(|family| family_matches(family, model))
    }

    /// How long the window lasts, so how far from when it was seen it can reset; `None`
    /// for a length no vendor has (longer than [`LONGEST_MINUTES`]). A window the CLI did
    /// not name is at most the weekly one; usage credits and a gateway's spend limit (its
    /// longest period) are monthly.
    pub fn length(&self) -> Option<SignedDuration> {
        let minutes = match self {
            Scope::FiveHour | Scope::ModelFiveHour { .. } => FIVE_HOURS_MINUTES,
            Scope::Weekly | Scope::ModelWeekly { .. } | Scope::Unstated => WEEK_MINUTES,
            Scope::Credits | Scope::SpendLimit => LONGEST_MINUTES,
            Scope::Other { minutes, .. } => *minutes,
        };
        if minutes > LONGEST_MINUTES {
            return None;
        }
        Some(SignedDuration::from_mins(i64::try_from(minutes).ok()?))
    }

    /// Words for a notice: "5-hour", "weekly Opus". A family is the vendor's text: printed
    /// without its control and bidi characters.
    pub fn describe(&self) -> String {
        let family = |family: &str| crate::text::printable(family);
        match self {
            Scope::FiveHour => "5-hour".to_string(),
            Scope::Weekly => "weekly".to_string(),
            Scope::ModelWeekly { family: name } => format!("weekly {}", family(name)),
            Scope::ModelFiveHour { family: name } => format!("5-hour {}", family(name)),
            Scope::Other {
                minutes,
                family: None,
            } => length_words(*minutes),
            Scope::Other {
                minutes,
                family: Some(name),
            } => format!("{} {}", length_words(*minutes), family(name)),
            Scope::Unstated => "usage".to_string(),
            Scope::Credits => "usage credits".to_string(),
            Scope::SpendLimit => "spend limit".to_string(),
        }
    }
}

fn length_words(minutes: u64) -> String {
    if minutes.is_multiple_of(24 * 60) {
        format!("{}-day", minutes / (24 * 60))
    } else if minutes.is_multiple_of(60) {
        format!("{}-hour", minutes / 60)
    } else {
        format!("{minutes}-minute")
    }
}

/// Whether `model` (an id such as `claude-opus-4-8` or `gemini-3-pro-preview`) belongs to
/// `family`. A family is lowercase words (`opus`, `fable 5`), or alternatives joined by
/// `|` (`claude|gpt`, Antigravity's "Claude and GPT models" pool); it matches when every
/// word of one alternative is a word of the model id (split at `-`, `_`, `.`, `/`,
/// spaces), so `opus` matches `claude-opus-4-8` and not `claude-sonnet-5`.
pub fn family_matches(family: &str, model: &str) -> bool {
    let model_words = words(model);
    family.split('|').any(|alternative| {
        let wanted = words(alternative);
        !wanted.is_empty() && wanted.iter().all(|w| model_words.contains(w))
    })
}

/// The lowercase words of a model id or family name.
fn words(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|c: char| c.is_whitespace() || matches!(c, '-' | '_' | '.' | '/' | ':' | '[' | ']'))
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

/// Where a window's figures came from, best first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// Claude Code's statusline feed (stdin of `agent --statusline`).
    Statusline,
    /// A Claude Code transcript row written after a refused call.
    Transcript,
    /// A Codex rollout's `token_count` line.
    CodexRecord,
    /// `codex app-server` `account/rateLimits/read`.
    AppServer,
    /// `agy --print /usage --output-format json`.
    AgyUsage,
    /// The opt-in read-only usage endpoint.
    UsageEndpoint,
    /// A CLI's own final error naming its quota (Gemini CLI's `TerminalQuotaError`), for a
    /// CLI whose records name no window: the reset it gave, else `quota_minutes` on.
    CliError,
}

/// Why a window is not believed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Implausible {
    /// It resets further from when it was seen than the window lasts.
    ResetsTooLate { length: SignedDuration },
    /// It claims a length no vendor has.
    TooLong,
}

/// The one rule every window passes (DESIGN §19): a window of `scope` seen at `seen_at`
/// resets within its own length of then, or of `now` when it claims to be seen later
/// (plus [`CLOCK_SLACK`]). A reset in the past is no lie, only old news: the window is
/// void.
///
/// A window "seen after now" is kept, measured from now: that is what a clock stepped
/// back looks like to the windows agent itself filed a minute before, and refusing them
/// unparked every login into its wall (during a `--wait` too). A forged stamp gains
/// nothing by it: its reset must still lie within the window's length of now.
pub fn plausible(
    scope: &Scope,
    resets_at: Timestamp,
    seen_at: Timestamp,
    now: Timestamp,
) -> Result<(), Implausible> {
    let length = scope.length().ok_or(Implausible::TooLong)?;
    let seen = seen_at.min(now);
    if resets_at.duration_since(seen) > length.saturating_add(CLOCK_SLACK) {
        return Err(Implausible::ResetsTooLate { length });
    }
    Ok(())
}

/// Says once per process that a window was refused (a feed repeats itself every few
/// seconds; one line is enough to explain why a login is not parked).
fn refused(scope: &Scope, source: Source, resets_at: Timestamp, why: Implausible) {
    static SAID: AtomicBool = AtomicBool::new(false);
    if SAID.swap(true, Ordering::Relaxed) {
        return;
    }
    let what = match why {
        Implausible::ResetsTooLate { length } => format!(
            "it resets {resets_at}, more than its {} after it was seen",
            duration_words(length)
        ),
        Implausible::TooLong => "no window is that long".to_string(),
    };
    crate::term::notice(&format!(
        "ignored a {} window from {}: {what}",
        scope.describe(),
        source.describe()
    ));
}

/// "5 hours", "7 days", "1 day".
fn duration_words(length: SignedDuration) -> String {
    let (count, unit) = match length.as_mins() {
        m if m > 0 && m % (24 * 60) == 0 => (m / (24 * 60), "day"),
        m if m > 0 && m % 60 == 0 => (m / 60, "hour"),
        m => (m, "minute"),
    };
    let s = if count == 1 { "" } else { "s" };
    format!("{count} {unit}{s}")
}

impl Source {
    /// Where it came from, for a notice.
    pub fn describe(self) -> &'static str {
        match self {
            Source::Statusline => "Claude Code's statusline feed",
            Source::Transcript => "a Claude Code transcript",
            Source::CodexRecord => "a Codex rollout",
            Source::AppServer => "codex app-server",
            Source::AgyUsage => "agy /usage",
            Source::UsageEndpoint => "the usage endpoint",
            Source::CliError => "its CLI's final error",
        }
    }
}

/// One usage window of one login.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "Unchecked")]
pub struct Window {
    pub scope: Scope,
    /// 0 to 100.
    pub used_percent: f64,
    #[serde(with = "rfc3339")]
    pub resets_at: Timestamp,
    pub source: Source,
    #[serde(with = "rfc3339")]
    pub observed_at: Timestamp,
}

impl Window {
    /// A window, with `used_percent` clamped to 0..=100; `None` when it is not a number
    /// (a NaN would compare false with every threshold and never park anything), or when
    /// it is not [`plausible`] now (said once on stderr).
    pub fn new(
        scope: Scope,
        used_percent: f64,
        resets_at: Timestamp,
        source: Source,
        observed_at: Timestamp,
    ) -> Option<Window> {
        if used_percent.is_nan() {
            return None;
        }
        if let Err(why) = plausible(&scope, resets_at, observed_at, Timestamp::now()) {
            refused(&scope, source, resets_at, why);
            return None;
        }
        Some(Window {
            scope,
            used_percent: used_percent.clamp(0.0, 100.0),
            resets_at,
            source,
            observed_at,
        })
    }

    /// Whether the window has reset since it was observed: its figures say nothing any
    /// more, and the login may be tried again.
    pub fn is_void(&self, now: Timestamp) -> bool {
        now >= self.resets_at
    }

    /// Whether the window is used up.
    pub fn is_full(&self) -> bool {
        self.used_percent >= 100.0
    }

    /// The used percent as the whole number every face shows: rounded, except that a window
    /// that is not full never reads 100 (99.5 % read `100%` beside a login rightly not
    /// parked), and one past its cap keeps what it says.
    pub fn shown_percent(&self) -> f64 {
        if self.is_full() {
            self.used_percent.floor()
        } else {
            self.used_percent.round().min(99.0)
        }
    }
}

/// A window as it is written, before the checks [`Window::new`] makes.
#[derive(Deserialize)]
struct Unchecked {
    scope: Scope,
    used_percent: f64,
    #[serde(with = "rfc3339")]
    resets_at: Timestamp,
    source: Source,
    #[serde(with = "rfc3339")]
    observed_at: Timestamp,
}

impl TryFrom<Unchecked> for Window {
    type Error = &'static str;

    fn try_from(raw: Unchecked) -> Result<Window, &'static str> {
        if !(0.0..=100.0).contains(&raw.used_percent) {
            // NaN fails this test too.
            return Err("used_percent is not between 0 and 100");
        }
        Window::new(
            raw.scope,
            raw.used_percent,
            raw.resets_at,
            raw.source,
            raw.observed_at,
        )
        .ok_or("used_percent is not a number, or the window is not plausible")
    }
}

/// Timestamps as RFC 3339 text, the form every other state file uses.
pub(crate) mod rfc3339 {
    use jiff::Timestamp;
    use serde::{Deserialize as _, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(at: &Timestamp, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(at)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Timestamp, D::Error> {
        let text = std::borrow::Cow::<str>::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }

    /// For `Option<Timestamp>` fields.
    pub mod option {
        use jiff::Timestamp;
        use serde::{Deserialize as _, Deserializer, Serializer};

        #[allow(clippy::ref_option)] // the signature serde's `with` calls
        pub fn serialize<S: Serializer>(
            at: &Option<Timestamp>,
            serializer: S,
        ) -> Result<S::Ok, S::Error> {
            match at {
                Some(at) => serializer.collect_str(at),
                None => serializer.serialize_none(),
            }
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(
            deserializer: D,
        ) -> Result<Option<Timestamp>, D::Error> {
            Option::<std::borrow::Cow<str>>::deserialize(deserializer)?
                .map(|text| text.parse().map_err(serde::de::Error::custom))
                .transpose()
        }
    }
}

/// How a reset on another day is written: `%a %H:%M` (`Thu 09:00`) within a week of
/// `now`, `%b %-d %H:%M` (`Oct 1 00:00`) beyond — a monthly period (a gateway's spend
/// limit, usage credits), where a weekday would name the wrong week.
pub fn other_day_format(at: Timestamp, now: Timestamp) -> &'static str {
    if at.duration_since(now) > SignedDuration::from_hours(7 * 24) {
        "%b %-d %H:%M"
    } else {
        "%a %H:%M"
    }
}

/// An instant from epoch seconds as the CLIs write them (integer or float); `None` for
/// values no clock could show.
pub fn from_epoch_seconds(seconds: f64) -> Option<Timestamp> {
    if !seconds.is_finite() {
        return None;
    }
    #[allow(clippy::cast_possible_truncation)] // checked by Timestamp's own range below
    let whole = seconds.floor() as i64;
    Timestamp::from_second(whole).ok()
}

/// An instant from epoch milliseconds (Claude's `expiresAt`, Gemini's `expiry_date`).
pub fn from_epoch_millis(millis: f64) -> Option<Timestamp> {
    if !millis.is_finite() {
        return None;
    }
    #[allow(clippy::cast_possible_truncation)]
    let whole = millis.floor() as i64;
    Timestamp::from_millisecond(whole).ok()
}

#[cfg(test)]
#[allow(clippy::float_cmp)] // figures parsed, not computed
mod tests {
    use super::*;

    fn at(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    fn window(used: f64) -> Option<Window> {
        Window::new(
            Scope::FiveHour,
            used,
            at("2026-09-14T15:00:00Z"),
            Source::Statusline,
            at("2026-09-14T12:00:00Z"),
        )
    }

    #[test]
    fn windows_are_classified_by_length_not_slot() {
        assert_eq!(Scope::from_minutes(300, None), Scope::FiveHour);
        assert_eq!(Scope::from_minutes(10080, None), Scope::Weekly);
        assert_eq!(
            Scope::from_minutes(10080, Some("spark".into())),
            Scope::ModelWeekly {
                family: "spark".into()
            }
        );
        assert_eq!(
            Scope::from_minutes(1440, None),
            Scope::Other {
                minutes: 1440,
                family: None
            }
        );
    }

    #[test]
    fn percent_is_clamped_and_nan_refused() {
        assert_eq!(window(130.0).unwrap().used_percent, 100.0);
        assert_eq!(window(-3.0).unwrap().used_percent, 0.0);
        assert!(window(f64::NAN).is_none());
        assert!(window(100.0).unwrap().is_full());
        assert!(!window(99.9).unwrap().is_full());
    }

    #[test]
    fn a_window_is_void_once_its_reset_has_passed() {
        let w = window(100.0).unwrap();
        assert!(!w.is_void(at("2026-09-14T14:59:59Z")));
        assert!(w.is_void(at("2026-09-14T15:00:00Z")));
        assert!(w.is_void(at("2026-09-15T00:00:00Z")));
    }

    #[test]
    fn a_window_round_trips_through_json_and_hostile_figures_are_refused() {
        let w = Window::new(
            Scope::ModelWeekly {
                family: "opus".into(),
            },
            97.5,
            at("2026-09-20T00:00:00Z"),
            Source::Transcript,
            at("2026-09-14T12:03:11Z"),
        )
        .unwrap();
        let text = serde_json::to_string(&w).unwrap();
        assert!(
            text.contains(r#""scope":{"kind":"model_weekly","family":"opus"}"#),
            "{text}"
        );
        assert!(
            text.contains(r#""resets_at":"2026-09-20T00:00:00Z""#),
            "{text}"
        );
        assert_eq!(serde_json::from_str::<Window>(&text).unwrap(), w);
        for bad in ["101.0", "-1", "1e400"] {
            let hostile = text.replace("97.5", bad);
            assert!(
                serde_json::from_str::<Window>(&hostile).is_err(),
                "{hostile}"
            );
        }
        let no_time = text.replace("2026-09-20T00:00:00Z", "next thursday");
        assert!(serde_json::from_str::<Window>(&no_time).is_err());
    }

    #[test]
    fn a_window_resets_within_its_own_length_of_when_it_was_seen_or_is_refused() {
        let now = Timestamp::now();
        let family = || "opus".to_string();
        let scopes = [
            (Scope::FiveHour, 5),
            (Scope::ModelFiveHour { family: family() }, 5),
            (Scope::Weekly, 7 * 24),
            (Scope::ModelWeekly { family: family() }, 7 * 24),
            (Scope::Unstated, 7 * 24),
            (Scope::Credits, 31 * 24),
            (Scope::SpendLimit, 31 * 24),
            (Scope::from_minutes(24 * 60, None), 24),
        ];
        let new = |scope: &Scope, resets_at, observed_at| {
            Window::new(
                scope.clone(),
                100.0,
                resets_at,
                Source::Statusline,
                observed_at,
            )
        };
        for (scope, hours) in &scopes {
            let length = SignedDuration::from_hours(*hours);
            // Seen a while ago: the reset counts from then, not from now.
            let seen = now - SignedDuration::from_hours(1);
            assert!(new(scope, seen + length, seen).is_some(), "{scope:?}");
            assert!(
                new(scope, seen + length + SignedDuration::from_mins(1), seen).is_some(),
                "{scope:?}: within the slack"
            );
            assert!(
                new(
                    scope,
                    seen + length + CLOCK_SLACK + SignedDuration::from_secs(1),
                    seen
                )
                .is_none(),
                "{scope:?}: past its length"
            );
            // 9999-01-01, within any clock's range.
            let year_9999 = Timestamp::from_second(253_370_764_800).unwrap();
            assert!(new(scope, year_9999, now).is_none(), "{scope:?}");
        }
        // A reset already past is old news, not a lie: kept, and void.
        let old = new(&Scope::FiveHour, now - SignedDuration::from_hours(30), now).unwrap();
        assert!(old.is_void(now));
        // Stamped in the future (a row from year 9998): measured from now, so its reset,
        // years ahead, is refused.
        let year_9998 = Timestamp::from_second(253_339_228_800).unwrap();
        assert!(new(&Scope::FiveHour, year_9998, year_9998).is_none());
        // Seen an hour "later" (the clock stepped back an hour since agent filed it): the
        // window still resets within its length of now, and is kept.
        let later = now + SignedDuration::from_hours(1);
        assert!(
            new(
                &Scope::FiveHour,
                later + SignedDuration::from_hours(1),
                later
            )
            .is_some()
        );
        assert!(
            new(
                &Scope::FiveHour,
                now + SignedDuration::from_hours(5) + CLOCK_SLACK + SignedDuration::from_secs(1),
                later
            )
            .is_none()
        );
        assert!(
            new(
                &Scope::FiveHour,
                now + SignedDuration::from_hours(1),
                now + SignedDuration::from_secs(30)
            )
            .is_some()
        );
        // A length no vendor has is no window, whatever its reset.
        let endless = Scope::from_minutes(LONGEST_MINUTES + 1, None);
        assert!(new(&endless, now + SignedDuration::from_hours(1), now).is_none());
        assert_eq!(endless.length(), None);
    }

    #[test]
    fn a_refusal_names_the_windows_length_in_words() {
        let words = |minutes| duration_words(SignedDuration::from_mins(minutes));
        assert_eq!(words(300), "5 hours");
        assert_eq!(words(10_080), "7 days");
        assert_eq!(words(1440), "1 day");
        assert_eq!(words(90), "90 minutes");
        assert_eq!(words(0), "0 minutes");
    }

    #[test]
    fn a_stored_window_is_checked_by_the_same_rule() {
        let now = Timestamp::now();
        let w = Window::new(
            Scope::FiveHour,
            100.0,
            now + SignedDuration::from_hours(2),
            Source::Transcript,
            now,
        )
        .unwrap();
        let text = serde_json::to_string(&w).unwrap();
        assert!(serde_json::from_str::<Window>(&text).is_ok());
        let stuck = text.replace(&w.resets_at.to_string(), "9999-01-01T00:00:00Z");
        assert!(serde_json::from_str::<Window>(&stuck).is_err(), "{stuck}");
    }

    #[test]
    fn a_window_named_by_a_vendor_is_described_without_control_or_bidi_characters() {
        let family = "opus\u{202E}\u{1b}[2J".to_string();
        assert_eq!(
            Scope::ModelWeekly {
                family: family.clone()
            }
            .describe(),
            "weekly opus"
        );
        assert_eq!(
            Scope::ModelFiveHour {
                family: family.clone()
            }
            .describe(),
            "5-hour opus"
        );
        assert_eq!(
            Scope::Other {
                minutes: 1440,
                family: Some(family)
            }
            .describe(),
            "1-day opus"
        );
    }

    #[test]
    fn a_model_family_matches_its_models_only() {
        let opus = Scope::ModelWeekly {
            family: "opus".into(),
        };
        assert!(opus.applies_to_model("claude-opus-4-8"));
        assert!(opus.applies_to_model("claude-opus-4-8[1m]"));
        assert!(!opus.applies_to_model("claude-sonnet-5"));
        assert!(Scope::Weekly.applies_to_model("claude-sonnet-5"));
        assert!(family_matches("fable 5", "claude-fable-5"));
        assert!(!family_matches("fable 5", "claude-fable-6"));
        assert!(family_matches("claude|gpt", "gpt-oss-120b"));
        assert!(family_matches("claude|gpt", "Claude Sonnet 4.5"));
        assert!(!family_matches("claude|gpt", "gemini-3-pro"));
        assert!(!family_matches("", "anything"));
        assert!(family_matches("GPT-5.3-Codex-Spark", "gpt-5.3-codex-spark"));
        assert!(!family_matches("GPT-5.3-Codex-Spark", "gpt-5.3-codex"));
    }

    #[test]
    fn a_reset_beyond_a_week_is_written_with_its_date_not_a_weekday() {
        let now = at("2026-09-14T12:00:00Z");
        assert_eq!(
            other_day_format(at("2026-09-20T09:00:00Z"), now),
            "%a %H:%M"
        );
        assert_eq!(
            other_day_format(at("2026-09-21T12:00:00Z"), now),
            "%a %H:%M"
        );
        assert_eq!(
            other_day_format(at("2026-10-01T00:00:00Z"), now),
            "%b %-d %H:%M"
        );
    }

    #[test]
    fn epoch_values_out_of_any_clock_are_refused() {
        assert_eq!(
            from_epoch_seconds(1_789_400_000.0).unwrap(),
            Timestamp::from_second(1_789_400_000).unwrap()
        );
        assert!(from_epoch_seconds(f64::INFINITY).is_none());
        assert!(from_epoch_seconds(1e30).is_none());
        assert_eq!(
            from_epoch_millis(1_789_400_000_123.0).unwrap(),
            Timestamp::from_millisecond(1_789_400_000_123).unwrap()
        );
    }
}
