//! The watchdog's alerts (DESIGN.md §9): sent only when the verdict of
//! `--check-fallback` changes (OK → DEGRADED → DOWN → OK), exactly one recovery message,
//! to Telegram, a webhook and/or a command. The last verdict and any undelivered alert are
//! kept in `watchdog.json`; a failed delivery is retried within the run (the retry
//! discipline of agent's own calls) and on the next run, and never changes the exit code.
//! However many watchdogs share that state, each alert is sent once: the change is seen by
//! one run only, and an owed alert is sent only by the run that [claims](claim) it.

mod alert;
mod claim;
mod deliver;

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::state::json_file::JsonFile;
use alert::Alert;
use claim::Claim;

pub use crate::config::alerts::{AlertsConfig, CommandConfig, TelegramConfig, WebhookConfig};

/// What to set when no alert channel is configured: each channel's keys, in the file
/// `config` was read from (or would be: a file named explicitly must exist), with a short
/// example of each. `--install-watchdog` warns with it; `--doctor` gives it as the fix.
pub fn no_channel_fix(config: &crate::config::Config) -> String {
    let file = config
        .source
        .clone()
        .or_else(|| crate::paths::config_file(None).map(|(path, _)| path))
        .map_or_else(
            || "~/.config/agent/config.toml".to_string(),
            |path| path.display().to_string(),
        );
    format!(
        "set one of [alerts.telegram] bot_token + chat_id, [alerts.webhook] url, [alerts.command] argv in {file}:\n{CHANNEL_EXAMPLES}"
    )
}

const CHANNEL_EXAMPLES: &str = r#"    [alerts.telegram]
    bot_token = "${AGENT_TELEGRAM_TOKEN}"    # or bot_token_cmd = "gopass show -o tg/bot"
    chat_id = "123456"

    [alerts.webhook]
    url = "https://hooks.example/agent"      # a JSON POST {state, previous, message, rungs}

    [alerts.command]
    argv = ["notify-send", "agent"]          # the message is appended as the last argument"#;

/// An alert still owed to one channel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Pending {
    channel: String,
    alert: Alert,
    attempts: u32,
    last_error: String,
    /// Set while a run delivers it; others leave it alone until the claim lapses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    claim: Option<Claim>,
}

/// `watchdog.json`.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct WatchdogState {
    /// The last verdict: `OK`, `DEGRADED` or `DOWN`.
    #[serde(default)]
    pub state: Option<String>,
    #[serde(default)]
    pub since: Option<String>,
    #[serde(default)]
    pub last_check: Option<String>,
    #[serde(default)]
    pub last_message: Option<String>,
    #[serde(default)]
    pending: Vec<Pending>,
    /// Per vendor: whether every account was auth-dead at the last look.
    #[serde(default)]
    pub accounts_down: std::collections::BTreeMap<String, bool>,
}

/// At most this many undelivered alerts are kept per channel (oldest dropped).
const PENDING_KEPT: usize = 20;

/// `watchdog.json`: fsynced, as an owed alert cannot be rebuilt.
fn state_file(state_dir: &Path) -> JsonFile<WatchdogState> {
    JsonFile::new(state_dir, "watchdog.json")
        .pretty()
        .synced()
        .shared()
}

/// The watchdog's last verdict, for `--doctor`.
pub fn last_state(state_dir: &Path) -> WatchdogState {
    state_file(state_dir).load()
}

/// Records this run's verdict and sends what is owed: an alert when the verdict changed
/// (the first run counts as coming from OK, so an OK start is silent), then every
/// delivery still owed that no other run is making. Problems are reported on stderr, never returned.
pub fn after_check(
    config: &AlertsConfig,
    state_dir: &Path,
    verdict: &str,
    message: &str,
    rungs: &serde_json::Value,
) {
    raise(config, state_dir, |state, now| {
        let previous = state.state.clone().unwrap_or_else(|| "OK".to_string());
        state.state = Some(verdict.to_string());
        state.last_check = Some(now.to_string());
        state.last_message = Some(message.to_string());
        if previous == verdict {
            return None;
        }
        state.since = Some(now.to_string());
        let text = if verdict == "OK" {
            format!("agent watchdog on {}: recovered — {message}", host())
        } else {
            format!("agent watchdog on {}: {message}", host())
        };
        Some(Alert {
            state: verdict.to_string(),
            previous,
            message: text,
            rungs: rungs.clone(),
            time: now.to_string(),
        })
    });
}

/// One alert when every account of a vendor is auth-dead at once, quiet while it lasts,
/// and one notice when one of them is back (DESIGN.md §7). Run after credential checks and
/// by the watchdog.
pub fn after_account_checks(config: &crate::config::Config, state_dir: &Path) {
    let now_ms = crate::state::health::now_ms();
    let mut vendors: Vec<&str> = config
        .accounts
        .iter()
        .filter_map(|a| config.backends.get(&a.backend).map(|b| b.vendor.as_str()))
        .collect();
    vendors.sort_unstable();
    vendors.dedup();
    for vendor in vendors {
        let dead: Vec<String> = config
            .accounts
            .iter()
            .filter(|a| {
                config
                    .backends
                    .get(&a.backend)
                    .is_some_and(|b| b.vendor == vendor)
            })
            .map(|a| {
                crate::state::account_health::skip_reason(state_dir, &a.name, now_ms)
                    .ok_or(a.name.clone())
            })
            .collect::<Result<_, _>>()
            .unwrap_or_default();
        let all_dead = !dead.is_empty();
        raise(&config.alerts, state_dir, |state, now| {
            let was = state.accounts_down.get(vendor).copied().unwrap_or(false);
            state.accounts_down.insert(vendor.to_string(), all_dead);
            if was == all_dead {
                return None;
            }
            let (to, from, message) = if all_dead {
                (
                    "ACCOUNTS_DOWN",
                    "ACCOUNTS_OK",
                    format!("every {vendor} account is auth-dead: {}", dead.join("; ")),
                )
            } else {
                (
                    "ACCOUNTS_OK",
                    "ACCOUNTS_DOWN",
                    format!("a {vendor} account answers again: the pool is back"),
                )
            };
            Some(Alert {
                state: to.to_string(),
                previous: from.to_string(),
                message: format!("agent on {}: {message}", host()),
                rungs: serde_json::Value::Array(Vec::new()),
                time: now.to_string(),
            })
        });
    }
}

/// Updates `watchdog.json` with `change` (which may raise one alert), queues the alert for
/// every configured channel, then delivers what is owed and no other run is delivering.
fn raise(
    config: &AlertsConfig,
    state_dir: &Path,
    change: impl FnOnce(&mut WatchdogState, &str) -> Option<Alert>,
) {
    let file = state_file(state_dir);
    let lock = match file.lock() {
        Ok(lock) => lock,
        Err(err) => {
            crate::term::warn(&format!("alerts: {err:#}"));
            return;
        }
    };
    let mut state = file.load();
    let now = jiff::Timestamp::now();
    if let Some(alert) = change(&mut state, &now.to_string()) {
        crate::state::events::record(
            state_dir,
            crate::state::events::Kind::Alert,
            &alert.previous,
            &alert.state,
            &alert.message,
        );
        for channel in channels(config) {
            state.pending.push(Pending {
                channel,
                alert: alert.clone(),
                attempts: 0,
                last_error: String::new(),
                claim: None,
            });
        }
    }
    keep_configured_and_newest(config, &mut state);
    // Claimed under the same lock that found them owed: a run that loads the state before
    // this one has delivered sees them held and sends nothing.
    let me = claim::claimer_id(&host());
    let claim = Claim::new(&me, now, config.deadline());
    let mut mine = Vec::new();
    for pending in &mut state.pending {
        if pending.claim.as_ref().is_some_and(|c| c.holds_at(now)) {
            continue;
        }
        pending.claim = Some(claim.clone());
        mine.push(pending.clone());
    }
    // Saved before sending: a crash mid-delivery leaves the alert owed (its claim lapses),
    // not lost.
    save(&file, &state);
    drop(lock);
    if mine.is_empty() {
        return;
    }

    let (delivered, failed) = deliver_claimed(config, &claim, mine);

    // Re-read under the lock: another run may have queued alerts meanwhile.
    let Ok(_lock) = file.lock() else {
        return;
    };
    let mut latest = file.load();
    latest
        .pending
        .retain(|p| !delivered.iter().any(|d| d.is_same(p)));
    for mut f in failed {
        // Released for the next run, unless our claim lapsed and another run holds it now.
        if let Some(slot) = latest
            .pending
            .iter_mut()
            .find(|p| p.is_same(&f) && p.claim.as_ref().is_some_and(|c| c.by == me))
        {
            f.claim = None;
            *slot = f;
        }
    }
    save(&file, &latest);
}

/// Sends each claimed alert within the run's deadline; what failed, or was left unsent
/// because the claim was about to lapse, is returned for the next run.
fn deliver_claimed(
    config: &AlertsConfig,
    claim: &Claim,
    mine: Vec<Pending>,
) -> (Vec<Pending>, Vec<Pending>) {
    let deadline = std::time::Instant::now() + config.deadline();
    let mut delivered = Vec::new();
    let mut failed = Vec::new();
    for mut pending in mine {
        // Past the claim, another run may be sending it already.
        if !claim.holds_at(jiff::Timestamp::now()) {
            failed.push(pending);
            continue;
        }
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match deliver::send(config, &pending.channel, &pending.alert, left) {
            Ok(()) => {
                crate::term::debug(&format!("alert delivered by {}", pending.channel));
                delivered.push(pending);
            }
            Err(err) => {
                pending.attempts += 1;
                pending.last_error = crate::redact::redact(&format!("{err:#}"));
                crate::term::warn(&format!(
                    "alert by {} not delivered ({}); it will be retried on the next run",
                    pending.channel, pending.last_error
                ));
                failed.push(pending);
            }
        }
    }
    (delivered, failed)
}

/// Channels no longer configured are forgotten; each keeps its newest alerts only.
fn keep_configured_and_newest(config: &AlertsConfig, state: &mut WatchdogState) {
    let configured = channels(config);
    state.pending.retain(|p| configured.contains(&p.channel));
    for channel in &configured {
        let count = state
            .pending
            .iter()
            .filter(|p| &p.channel == channel)
            .count();
        let mut drop = count.saturating_sub(PENDING_KEPT);
        state.pending.retain(|p| {
            if drop > 0 && &p.channel == channel {
                drop -= 1;
                return false;
            }
            true
        });
    }
}

impl Pending {
    fn is_same(&self, other: &Pending) -> bool {
        self.channel == other.channel && self.alert == other.alert
    }
}

fn save(file: &JsonFile<WatchdogState>, state: &WatchdogState) {
    if let Err(err) = file.save(state) {
        crate::term::warn(&format!(
            "alerts: could not save {}: {err:#}",
            file.path().display()
        ));
    }
}

fn channels(config: &AlertsConfig) -> Vec<String> {
    let mut channels = Vec::new();
    if config.telegram.is_some() {
        channels.push("telegram".to_string());
    }
    if config.webhook.is_some() {
        channels.push("webhook".to_string());
    }
    if config.command.is_some() {
        channels.push("command".to_string());
    }
    channels
}

fn host() -> String {
    nix::unistd::gethostname()
        .ok()
        .and_then(|name| name.into_string().ok())
        .unwrap_or_else(|| "this machine".to_string())
}
