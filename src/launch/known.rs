//! Each rung's state as already known, with no call made: what health, the windows and
//! the table say right now (the dashboard's rung table, the statusline's fallback word).
//! The facts are gathered here and judged by the one rule, [`rung_state::state`], that
//! the cascade and `--status` use too.

use crate::config::Config;
use crate::launch::parking::{Decision, Parking};
use crate::launch::resolve;
use crate::launch::rung::Rung;
use crate::launch::rung_state::{self, Check, Facts, Park, RungState, Unfit};
use crate::probe::Call;
use crate::probe::login::LoginRung;
use crate::state::health::{self, HealthFile, Outcome, Store};

/// One rung as known now.
#[derive(Debug)]
pub struct Known<'a> {
    pub rung: Rung<'a>,
    pub state: RungState,
    /// The rung a launch would start from now (the first that could run).
    pub would_pick: bool,
}

/// How `rung` can be proved, or why it cannot run: from its configuration alone.
pub fn check_of<'r>(rung: &'r Rung) -> Result<Check, Unfit<'r>> {
    let ready = rung.state.as_ref().map_err(|unusable| Unfit {
        class: unusable.class,
        reason: &unusable.reason,
        not_installed: unusable.skip,
    })?;
    Ok(match (&ready.plan.call, &ready.plan.login) {
        (
            Call::None,
            Some(LoginRung {
                refused: Some(why), ..
            }),
        ) => Check::Refused(why),
        (Call::None, Some(_)) if rung.backend.self_check => Check::SelfCheck,
        (Call::None, Some(_)) => Check::Off("self_check = false"),
        (Call::None, None) => Check::Off("probe kind none: the fast-fail net alone guards it"),
        (Call::Command { .. }, _) => Check::Command,
        _ => Check::Probe,
    })
}

/// The facts of one rung, and its state by the one rule.
pub struct Judge<'c> {
    pub config: &'c Config,
    pub health: HealthFile,
    pub now_ms: u64,
}

impl Judge<'_> {
    /// `rung`'s state, given what this process found (`fresh`) and the window that parks
    /// it (`parked`, when the caller parks it).
    pub fn state(&self, rung: &Rung, fresh: Option<&Outcome>, parked: Option<&Park>) -> RungState {
        let check = check_of(rung);
        let record = rung
            .state
            .as_ref()
            .ok()
            .and_then(|ready| self.health.get(&ready.plan.target));
        let trust = match &check {
            Ok(Check::SelfCheck) => self.config.self_check_cache,
            _ => self.config.probe_cache,
        };
        rung_state::state(&Facts {
            ready: check.as_ref().map_err(|unfit| *unfit),
            record,
            fresh,
            parked,
            trust,
            now_ms: self.now_ms,
        })
    }
}

/// The window that parks `rung` now, if one does.
pub fn park(config: &Config, parking: &Parking, rung: &Rung, now: jiff::Timestamp) -> Option<Park> {
    rung.state.as_ref().ok()?;
    match parking.check(config, rung, now) {
        Decision::Park { window, reason } => Some(Park {
            reason,
            until_ms: u64::try_from(window.resets_at.as_millisecond()).ok(),
            full: window.is_full(),
        }),
        Decision::Go => None,
    }
}

/// Every rung of the table, as known now. Reads health and the windows; calls and writes
/// nothing.
pub fn rungs(config: &Config) -> Vec<Known<'_>> {
    let state_dir = crate::paths::state_dir();
    let judge = Judge {
        config,
        health: Store::new(&state_dir).load(),
        now_ms: health::now_ms(),
    };
    // Looking writes nothing: what a launch would park is shown, and remembered by it.
    let parking = Parking::read_only(&state_dir);
    let now = jiff::Timestamp::now();
    let resolved: Vec<Rung> = config
        .rungs
        .iter()
        .enumerate()
        .map(|(i, def)| resolve::resolve(config, i + 1, def))
        .collect();
    let parks: Vec<Option<Park>> = resolved
        .iter()
        .map(|rung| park(config, &parking, rung, now))
        .collect();
    let mut known: Vec<Known> = Vec::with_capacity(resolved.len());
    // Bottom-up, as a launch parks: the last rung that could run is not parked before the
    // wall; a full window parks it all the same.
    let mut below_could_run = false;
    for (rung, park) in resolved.into_iter().zip(parks).rev() {
        let parked = park
            .as_ref()
            .filter(|park| park.applies(|| below_could_run));
        let state = judge.state(&rung, None, parked);
        below_could_run |= state.could_run();
        known.push(Known {
            rung,
            state,
            would_pick: false,
        });
    }
    known.reverse();
    if let Some(first) = known.iter_mut().find(|k| k.state.could_run()) {
        first.would_pick = true;
    }
    known
}
