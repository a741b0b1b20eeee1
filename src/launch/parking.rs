//! Parking a subscription login's rungs by its usage windows (DESIGN §12 "Decisions"): a
//! rung whose login has a window used up — or past `park_at_percent` — is skipped with no
//! call until the window resets, and the notice names the window and the reset. Windows
//! come from `windows.json` (every source records there); after a fast failure this file
//! also reads *that run's* own record and records what it names, so the next launch parks
//! the login instead of running it again into the same wall.
//!
//! Which login a rung runs on is its CLI's adapter's answer (`crate::adapter`), from the
//! environment its CLI will get, decided once when the rung is resolved:
//! - Claude Code with a key (`ANTHROPIC_API_KEY`, `ANTHROPIC_AUTH_TOKEN`) runs on no login;
//!   with an `oauth` account on `account:NAME`; with `CLAUDE_CODE_OAUTH_TOKEN` on that
//!   token (`token:` and its fingerprint); else on its own login, named by its
//!   configuration directory.
//! - Codex runs on its ChatGPT login (named by its home) when its `auth.json` says so and
//!   no custom provider or account is in the way.
//!
//! Hysteresis: a login parked before the wall stays parked until its percent drops below
//! `park_at_percent − 5` (or the window resets), so a figure wobbling around the mark does
//! not flip the choice from one launch to the next. Which windows are parked is kept in
//! `parked.json`, shared like every health fact.

use std::collections::BTreeMap;
use std::path::Path;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::launch::rung::Rung;
use crate::login;
use crate::probe::login::LoginRung;
use crate::state::json_file::JsonFile;
use crate::state::window::{self, Scope, Source, Window, rfc3339};
use crate::state::windows::Windows;

/// How far below `park_at_percent` a parked window must fall to be released.
pub const HYSTERESIS_PERCENT: f64 = 5.0;

/// The login `rung` runs on, when it runs on a subscription login whose CLI's run records
/// name its windows (Claude Code's transcripts, Codex's rollouts): resolved once with the
/// rung ([`Ready::login`](crate::launch::rung::Ready)), read here. Gemini CLI and
/// Antigravity report no windows agent parks by here.
pub fn login_of(rung: &Rung) -> Option<LoginRung> {
    let login = rung.state.as_ref().ok()?.login.as_ref()?;
    login.records.is_some().then(|| login.clone())
}

/// What the windows say of one rung.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    Go,
    /// Skip it with no call until `window.resets_at`.
    Park {
        window: Window,
        reason: String,
    },
}

impl Decision {
    /// Whether it parks the rung even when no rung below could run: a full window is the
    /// wall itself (the run would only be refused until the reset, so the launch says when
    /// it reopens instead), while a login only past `park_at_percent` still has room and
    /// runs when nothing else can.
    pub fn parks_the_last_rung(&self) -> bool {
        matches!(self, Decision::Park { window, .. } if window.is_full())
    }
}

/// The rules a backend's rungs are parked by.
#[derive(Debug, Clone, Copy)]
pub struct Policy {
    pub park_at_percent: f64,
    pub extra_usage: bool,
}

/// Whether a rung running `model` (`None`: the CLI's own default, unknown here) on a login
/// whose windows over the mark are `over` (see [`Parking::over`]) is parked. A window of
/// one model family parks only that family's rungs; with an unknown model it parks none
/// (unknown is not dead: the fast-fail net still guards the run).
pub fn decide(over: &[Window], all: &[Window], model: Option<&str>, policy: Policy) -> Decision {
    let credits_spent = all.iter().any(|w| w.scope == Scope::Credits && w.is_full());
    let parks = |w: &&Window| {
        let applies = match w.scope.family() {
            None => true,
            Some(_) => model.is_some_and(|model| w.scope.applies_to_model(model)),
        };
        if !applies {
            return false;
        }
        // A row the CLI wrote when it was refused is the wall itself, whatever was paid.
        let refused = w.source == Source::Transcript && w.is_full();
        match w.scope {
            Scope::Credits => refused,
            // A gateway's cap is the developer's own budget, not a window others drain
            // while this launch runs: the gateway answers until it is spent (DESIGN §22,
            // "parks at 100 %"), and then no usage credits run past it.
            Scope::SpendLimit => w.is_full(),
            _ if policy.extra_usage && !refused => w.is_full() && credits_spent,
            _ => true,
        }
    };
    // The window that ends last keeps the login out longest: name that one.
    match over.iter().filter(parks).max_by_key(|w| w.resets_at) {
        Some(window) => Decision::Park {
            window: window.clone(),
            reason: describe(window, policy.park_at_percent),
        },
        None => Decision::Go,
    }
}

/// "weekly Opus limit, resets Thu 09:00"; "5-hour limit at 96 % (parked from 95 %),
/// resets 15:00"; "spend limit, resets Oct 1 00:00".
pub fn describe(window: &Window, park_at_percent: f64) -> String {
    let when = reset_words(window.resets_at);
    let name = scope_words(&window.scope);
    match window.scope {
        Scope::Credits => format!("out of usage credits, resets {when}"),
        // "spend limit" is already the limit's name.
        Scope::SpendLimit if window.is_full() => format!("{name}, resets {when}"),
        Scope::SpendLimit => format!(
            "{name} at {:.0} % (parked from {} %), resets {when}",
            window.used_percent.floor(),
            park_at_percent
        ),
        _ if window.is_full() => format!("{name} limit, resets {when}"),
        _ => format!(
            "{name} limit at {:.0} % (parked from {} %), resets {when}",
            window.used_percent.floor(),
            park_at_percent
        ),
    }
}

/// "weekly Opus": the scope's words with the model family capitalized as people write it
/// (the CLIs' records keep it in lowercase).
fn scope_words(scope: &Scope) -> String {
    let words = scope.describe();
    let Some(family) = scope.family().map(crate::text::printable) else {
        return words;
    };
    let capitalized: String = family
        .split(' ')
        .map(|word| {
            let mut chars = word.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_uppercase().chain(chars).collect()
            })
        })
        .collect::<Vec<_>>()
        .join(" ");
    words.replace(&family, &capitalized)
}

/// The reset in local time: `Thu 09:00`; `Oct 1 00:00` more than a week ahead.
fn reset_words(at: Timestamp) -> String {
    at.to_zoned_datetime(jiff::tz::TimeZone::system())
        .strftime(window::other_day_format(at, Timestamp::now()))
        .to_string()
}

/// The windows of each login parked before the wall, for hysteresis. (An older agent kept
/// when each login was asked for its windows here too, `asked`: now `launch::ask_windows`'s,
/// and ignored.)
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct ParkedFile {
    #[serde(default)]
    pub logins: BTreeMap<String, Vec<ParkedWindow>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParkedWindow {
    pub scope: Scope,
    #[serde(with = "rfc3339")]
    pub resets_at: Timestamp,
}

impl ParkedWindow {
    /// Whether this memory still holds at `now`: its window has not reset, and it resets
    /// within the window's length of now (the rule of [`window::plausible`]; a memory
    /// written before that rule, of a reset in year 9999, is forgotten).
    fn holds(&self, now: Timestamp) -> bool {
        self.resets_at > now && window::plausible(&self.scope, self.resets_at, now, now).is_ok()
    }
}

/// The windows store and the parked memory, read for one launch.
#[derive(Debug, Clone)]
pub struct Parking {
    windows: Windows,
    parked: JsonFile<ParkedFile>,
    /// Whether a change of what is parked is written to `parked.json` (a launch's
    /// decision), or only reported (a page that looks, and must not write).
    remember: bool,
}

impl Parking {
    pub fn new(state_dir: &Path) -> Parking {
        Parking {
            windows: Windows::new(state_dir),
            parked: JsonFile::new(state_dir, "parked.json")
                .rebuilt_by("parked again at the next launch past the mark")
                .shared(),
            remember: true,
        }
    }

    /// Decides as [`Parking::new`] does ([`Parking::check`]) and records nothing: the next
    /// launch does. For a page that looks.
    pub fn read_only(state_dir: &Path) -> Parking {
        Parking {
            remember: false,
            ..Parking::new(state_dir)
        }
    }

    pub fn windows(&self) -> &Windows {
        &self.windows
    }

    /// What the windows say of `rung` at `now`.
    pub fn check(&self, config: &Config, rung: &Rung, now: Timestamp) -> Decision {
        let Some(login) = login_of(rung) else {
            return Decision::Go;
        };
        let all = self.windows.known(&login.key, now);
        if all.is_empty() {
            return Decision::Go;
        }
        let policy = Policy {
            park_at_percent: config.park_at_percent(rung.backend),
            extra_usage: rung.backend.extra_usage,
        };
        let over = self.over(&login.key, &all, policy.park_at_percent, now);
        let model = rung.run_model.as_deref().or(rung.probe_model.as_deref());
        decide(&over, &all, model, policy)
    }

    /// The windows of `login` at or past the mark: `park_at_percent`, or for a window
    /// parked before, `park_at_percent − 5`. Remembers the change, if any.
    pub fn over(&self, login: &str, all: &[Window], park_at: f64, now: Timestamp) -> Vec<Window> {
        let remembered: Vec<ParkedWindow> = self
            .parked
            .load()
            .logins
            .remove(login)
            .unwrap_or_default()
            .into_iter()
            .filter(|p| p.holds(now))
            .collect();
        let over: Vec<Window> = all
            .iter()
            .filter(|w| {
                let was_parked = remembered
                    .iter()
                    .any(|p| p.scope == w.scope && p.resets_at == w.resets_at);
                let mark = if was_parked {
                    park_at - HYSTERESIS_PERCENT
                } else {
                    park_at
                };
                w.is_full() || w.used_percent >= mark
            })
            .cloned()
            .collect();
        let now_parked: Vec<ParkedWindow> = over
            .iter()
            .map(|w| ParkedWindow {
                scope: w.scope.clone(),
                resets_at: w.resets_at,
            })
            .collect();
        if self.remember && now_parked != remembered {
            let result = self.parked.update(|file| {
                file.logins.insert(login.to_string(), now_parked);
                for parked in file.logins.values_mut() {
                    parked.retain(|p| p.holds(now));
                }
                file.logins.retain(|_, parked| !parked.is_empty());
            });
            if let Err(err) = result {
                crate::term::debug(&format!("parked.json not updated: {err:#}"));
            }
        }
        over
    }

    /// Forgets that `login`'s `windows` parked it (`parked.json`, the memory hysteresis
    /// keeps), under the lock: with the windows themselves forgotten, nothing holds it.
    pub fn forget(&self, login: &str, windows: &[Window]) -> anyhow::Result<()> {
        self.parked.update(|file| {
            if let Some(parked) = file.logins.get_mut(login) {
                parked.retain(|p| {
                    !windows
                        .iter()
                        .any(|w| w.scope == p.scope && w.resets_at == p.resets_at)
                });
            }
            file.logins.retain(|_, parked| !parked.is_empty());
        })
    }

    /// The windows of `login` that park some rung of it now — full, or past the mark
    /// (`park_at`, less the hysteresis for one parked before) — whatever the rung's model;
    /// recorded nowhere.
    pub fn parking_windows(&self, login: &str, park_at: f64, now: Timestamp) -> Vec<Window> {
        let all = self.windows.known(login, now);
        let quiet = Parking {
            remember: false,
            ..self.clone()
        };
        quiet.over(login, &all, park_at, now)
    }

    /// After `rung` failed fast: read the record that run left (never an older one) and
    /// record the windows it names. Returns those windows (empty when it named none, or
    /// only a short rate limit of the service, which is not a window).
    pub fn learn_from_run(
        &self,
        rung: &Rung,
        cwd: &Path,
        start: Timestamp,
        now: Timestamp,
    ) -> Vec<Window> {
        let found = run_windows(rung, cwd, start, None);
        self.file(rung, &found, now);
        found
    }

    /// Records `found`, windows a run of `rung` named, under its login.
    pub fn file(&self, rung: &Rung, found: &[Window], now: Timestamp) {
        let Some(login) = login_of(rung) else { return };
        if !found.is_empty()
            && let Err(err) = self.windows.record(&login.key, found, now)
        {
            crate::term::debug(&format!("windows.json not updated: {err:#}"));
        }
    }
}

/// The windows the record of the run of `rung` that started at `start` in `cwd` names
/// (never an older run's), read and not recorded: empty when it named none, or only a short
/// rate limit of the service, which is not a window.
pub fn run_windows(rung: &Rung, cwd: &Path, start: Timestamp, id: Option<&str>) -> Vec<Window> {
    let Some(login) = login_of(rung) else {
        return Vec::new();
    };
    let Some(home) = &login.records else {
        return Vec::new();
    };
    login::readers::run_windows(login.family, home, cwd, start, id)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(scope: Scope, percent: f64, source: Source) -> Window {
        let now = Timestamp::now();
        Window::new(
            scope,
            percent,
            now + jiff::SignedDuration::from_hours(3),
            source,
            now,
        )
        .unwrap()
    }

    const POLICY: Policy = Policy {
        park_at_percent: 95.0,
        extra_usage: false,
    };

    #[test]
    fn a_family_window_parks_only_that_familys_models_and_never_an_unknown_model() {
        let opus = window(
            Scope::ModelWeekly {
                family: "opus".into(),
            },
            100.0,
            Source::Transcript,
        );
        let over = [opus.clone()];
        assert!(matches!(
            decide(&over, &over, Some("claude-opus-5"), POLICY),
            Decision::Park { .. }
        ));
        assert_eq!(
            decide(&over, &over, Some("claude-sonnet-5"), POLICY),
            Decision::Go
        );
        assert_eq!(decide(&over, &over, None, POLICY), Decision::Go);
        let Decision::Park { reason, .. } = decide(&over, &over, Some("claude-opus-5"), POLICY)
        else {
            unreachable!()
        };
        assert!(reason.starts_with("weekly Opus limit, resets "), "{reason}");
    }

    #[test]
    fn a_window_named_by_a_vendor_is_described_without_its_control_or_bidi_characters() {
        let w = window(
            Scope::ModelWeekly {
                family: "\u{202E}opus\u{1b}[2J".into(),
            },
            100.0,
            Source::UsageEndpoint,
        );
        let reason = describe(&w, 95.0);
        assert!(
            reason.starts_with("weekly Opus limit, resets "),
            "{reason:?}"
        );
    }

    #[test]
    fn extra_usage_runs_past_the_subscription_wall_until_the_credits_are_spent() {
        let paid = Policy {
            extra_usage: true,
            ..POLICY
        };
        let five = window(Scope::FiveHour, 100.0, Source::Statusline);
        let over = [five.clone()];
        assert_eq!(decide(&over, &over, Some("m"), paid), Decision::Go);
        assert!(matches!(
            decide(&over, &over, Some("m"), POLICY),
            Decision::Park { .. }
        ));
        let credits = window(Scope::Credits, 100.0, Source::UsageEndpoint);
        let all = [five.clone(), credits];
        assert!(matches!(
            decide(&over, &all, Some("m"), paid),
            Decision::Park { .. }
        ));
        // The CLI's own refusal is the wall, paid or not.
        let refused = [window(Scope::FiveHour, 100.0, Source::Transcript)];
        assert!(matches!(
            decide(&refused, &refused, Some("m"), paid),
            Decision::Park { .. }
        ));
    }

    #[test]
    fn a_spend_limit_parks_the_whole_login_past_any_credits_and_is_named_once() {
        let paid = Policy {
            extra_usage: true,
            ..POLICY
        };
        let spend = window(Scope::SpendLimit, 100.0, Source::Statusline);
        let over = [spend];
        for policy in [POLICY, paid] {
            for model in [Some("claude-sonnet-5"), Some("claude-opus-5"), None] {
                let Decision::Park { reason, .. } = decide(&over, &over, model, policy) else {
                    panic!("{model:?} not parked");
                };
                assert!(reason.starts_with("spend limit, resets "), "{reason}");
            }
        }
        let near = window(Scope::SpendLimit, 96.0, Source::Statusline);
        let near_over = [near.clone()];
        assert_eq!(
            decide(&near_over, &near_over, Some("claude-opus-5"), POLICY),
            Decision::Go,
            "a spend limit short of 100 % parks nothing"
        );
        assert!(
            describe(&near, 95.0).starts_with("spend limit at 96 % (parked from 95 %), resets "),
            "{}",
            describe(&near, 95.0)
        );
    }

    #[test]
    fn the_mark_has_hysteresis_and_a_reset_forgets_it() {
        let dir = tempfile::tempdir().unwrap();
        let parking = Parking::new(dir.path());
        let now = Timestamp::now();
        let resets = now + jiff::SignedDuration::from_hours(2);
        let at = |percent| {
            vec![Window::new(Scope::FiveHour, percent, resets, Source::Statusline, now).unwrap()]
        };
        let key = "claude:/x";
        assert!(parking.over(key, &at(94.0), 95.0, now).is_empty());
        assert_eq!(parking.over(key, &at(96.0), 95.0, now).len(), 1);
        // Parked: it stays parked down to 90 %.
        assert_eq!(parking.over(key, &at(92.0), 95.0, now).len(), 1);
        assert_eq!(parking.over(key, &at(90.0), 95.0, now).len(), 1);
        assert!(parking.over(key, &at(89.0), 95.0, now).is_empty());
        // Released: it parks again only at the mark.
        assert!(parking.over(key, &at(92.0), 95.0, now).is_empty());
        assert_eq!(parking.over(key, &at(95.0), 95.0, now).len(), 1);
        // A new window (another reset) starts unparked.
        let next = now + jiff::SignedDuration::from_hours(4);
        let fresh =
            vec![Window::new(Scope::FiveHour, 92.0, next, Source::Statusline, now).unwrap()];
        assert!(parking.over(key, &fresh, 95.0, now).is_empty());
    }

    #[test]
    fn parked_json_never_keeps_a_reset_beyond_its_windows_length() {
        let dir = tempfile::tempdir().unwrap();
        let now = Timestamp::now();
        // Written before the rule: another login parked until year 9999.
        std::fs::write(
            dir.path().join("parked.json"),
            serde_json::json!({"logins": {"claude:/other": [
                {"scope": {"kind": "five_hour"}, "resets_at": "9999-01-01T00:00:00Z"}]}})
            .to_string(),
        )
        .unwrap();
        let parking = Parking::new(dir.path());
        let resets = now + jiff::SignedDuration::from_hours(2);
        let full =
            vec![Window::new(Scope::FiveHour, 96.0, resets, Source::Statusline, now).unwrap()];
        assert_eq!(parking.over("claude:/x", &full, 95.0, now).len(), 1);
        let text = std::fs::read_to_string(dir.path().join("parked.json")).unwrap();
        assert!(text.contains("claude:/x"), "{text}");
        assert!(!text.contains("9999"), "{text}");
    }
}
