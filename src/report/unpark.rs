//! `agent --unpark NAME`: forget what parks a login or a rung, for when the user knows
//! better than the last report (the window reset early, more usage was bought). Before,
//! the only way was deleting `parked.json` and `windows.json`. NAME is a rung's number, a
//! backend (each of its rungs), a login account, or a login's key as `windows.json` keeps
//! it. A rung forgets the windows that park it for its own model (a weekly Opus limit parks
//! no Sonnet rung) and a quota cooldown of its target; a login, every window that parks any
//! rung of it. Every write goes through the state files' own locked, atomic doors, and what
//! was forgotten is said — or that nothing was.

use std::fmt::Write as _;
use std::process::ExitCode;

use jiff::Timestamp;
use serde_json::json;

use crate::config::Config;
use crate::launch::parking::{self, Decision, Parking};
use crate::launch::resolve;
use crate::launch::rung::Rung;
use crate::state::health::Store;
use crate::state::window::Window;

/// What NAME named.
enum Named {
    /// Rungs of the table (a number, or a backend's every rung).
    Rungs(Vec<usize>),
    /// A login, by its key, and what the user called it.
    Login { key: String, park_at: f64 },
}

/// One thing forgotten: whose, and what.
struct Forgot {
    whose: String,
    what: String,
}

pub fn run(config: &Config, name: &str, json: bool) -> anyhow::Result<ExitCode> {
    let state_dir = crate::paths::state_dir();
    let parking = Parking::new(&state_dir);
    let store = Store::new(&state_dir);
    let now = Timestamp::now();
    let rungs = resolve::all(config);
    let asked = named(config, &parking, name, now)?;
    let described = match &asked {
        Named::Rungs(indexes) => indexes
            .iter()
            .map(|&i| format!("rung {} {}", i + 1, rungs[i].short_name()))
            .collect::<Vec<_>>()
            .join(", "),
        Named::Login { key, .. } => format!("login {key}"),
    };
    // Which rungs its windows held before, to say which run again after: forgetting a
    // login's window releases every rung on that login, not only the one named.
    let looks = Parking::read_only(&state_dir);
    let held = |rung: &Rung| matches!(looks.check(config, rung, now), Decision::Park { .. });
    let held_before: Vec<usize> = (0..rungs.len()).filter(|&i| held(&rungs[i])).collect();
    let forgot = match asked {
        Named::Rungs(indexes) => {
            let mut forgot = Vec::new();
            for index in indexes {
                forgot.extend(unpark_rung(config, &parking, &store, &rungs[index], now)?);
            }
            forgot
        }
        Named::Login { key, park_at } => {
            let windows = parking.parking_windows(&key, park_at, now);
            forget_windows(&parking, &key, &windows)?
                .iter()
                .map(|window| Forgot {
                    whose: format!("login {key}"),
                    what: parking::describe(window, park_at),
                })
                .collect()
        }
    };
    for forgotten in &forgot {
        crate::state::events::record(
            &state_dir,
            crate::state::events::Kind::Unparked,
            &forgotten.whose,
            "",
            &forgotten.what,
        );
    }
    if json {
        let rows: Vec<_> = forgot
            .iter()
            .map(|f| json!({"whose": f.whose, "forgot": f.what}))
            .collect();
        crate::report::emit_json(&json!({"name": name, "forgot": rows}))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = String::new();
    if forgot.is_empty() {
        let _ = writeln!(
            out,
            "nothing to forget: {} — no window parks it, no quota cooldown holds it",
            crate::text::printable(&described)
        );
    }
    for forgotten in &forgot {
        let _ = writeln!(
            out,
            "forgot for {}: {}",
            crate::text::printable(&forgotten.whose),
            crate::text::printable(&forgotten.what)
        );
    }
    if !forgot.is_empty() {
        let looks = Parking::read_only(&state_dir);
        let released: Vec<String> = held_before
            .iter()
            .filter(|&&i| !matches!(looks.check(config, &rungs[i], now), Decision::Park { .. }))
            .map(|&i| format!("rung {} {}", i + 1, rungs[i].short_name()))
            .collect();
        if !released.is_empty() {
            let _ = writeln!(
                out,
                "no longer parked: {}",
                crate::text::printable(&released.join(", "))
            );
        }
        out.push_str(
            "a launch may run it now; if its CLI reports the window again, agent parks it again\n",
        );
    }
    crate::report::emit(&out)?;
    Ok(ExitCode::SUCCESS)
}

/// Forgets what parks `rung`: each window that parks it for its own model (asked again
/// until none does), and a quota cooldown of its target.
fn unpark_rung(
    config: &Config,
    parking: &Parking,
    store: &Store,
    rung: &Rung,
    now: Timestamp,
) -> anyhow::Result<Vec<Forgot>> {
    let whose = format!("rung {} {}", rung.index, rung.short_name());
    let mut forgot = Vec::new();
    let looks = Parking::read_only(store.state_dir());
    // Each pass forgets the window that keeps it out longest; a rung has a handful.
    for _ in 0..16 {
        let Decision::Park { window, reason } = looks.check(config, rung, now) else {
            break;
        };
        let Some(login) = parking::login_of(rung) else {
            break;
        };
        if forget_windows(parking, &login.key, std::slice::from_ref(&window))?.is_empty() {
            break;
        }
        forgot.push(Forgot {
            whose: whose.clone(),
            what: reason,
        });
    }
    if let Ok(ready) = &rung.state
        && let Some(reason) =
            store.forget_quota(&ready.plan.target, crate::state::health::now_ms())?
    {
        forgot.push(Forgot {
            whose,
            what: format!("quota cooldown: {reason}"),
        });
    }
    Ok(forgot)
}

/// Forgets `windows` of `login` in `windows.json` and in the parked memory; the ones it
/// forgot.
fn forget_windows(
    parking: &Parking,
    login: &str,
    windows: &[Window],
) -> anyhow::Result<Vec<Window>> {
    if windows.is_empty() {
        return Ok(Vec::new());
    }
    let gone = parking.windows().forget(login, windows)?;
    parking.forget(login, windows)?;
    Ok(gone)
}

/// What `name` names: a rung's number, a backend with rungs, a login account, or a login
/// key agent keeps windows under; else a usage error naming the nearest name.
fn named(config: &Config, parking: &Parking, name: &str, now: Timestamp) -> anyhow::Result<Named> {
    let count = config.rungs.len();
    if let Ok(number) = name.trim_start_matches("rung").trim().parse::<usize>() {
        if (1..=count).contains(&number) {
            return Ok(Named::Rungs(vec![number - 1]));
        }
        return Err(crate::exit_codes::usage(format!(
            "--unpark {number}: the table has {count} rungs (`agent --list` shows them)"
        )));
    }
    let of_backend: Vec<usize> = config
        .rungs
        .iter()
        .enumerate()
        .filter(|(_, def)| def.backend == name)
        .map(|(i, _)| i)
        .collect();
    if !of_backend.is_empty() {
        return Ok(Named::Rungs(of_backend));
    }
    if let Some(account) = config.accounts.iter().find(|a| a.name == name)
        && let Some(backend) = config.backends.get(&account.backend)
    {
        let Some(key) = crate::accounts::login_key(backend, account) else {
            return Err(crate::exit_codes::usage(format!(
                "--unpark {name}: account {name} is no login (a key is never parked; its cooldown shows in `agent --status`)"
            )));
        };
        return Ok(Named::Login {
            key,
            park_at: config.park_at_percent(backend),
        });
    }
    let keys = parking.windows().all(now).into_keys().collect::<Vec<_>>();
    if keys.iter().any(|key| key == name) {
        return Ok(Named::Login {
            key: name.to_string(),
            park_at: config.park_at_percent,
        });
    }
    let mut names: Vec<&str> = config.backends.keys().map(String::as_str).collect();
    names.extend(config.accounts.iter().map(|a| a.name.as_str()));
    names.extend(keys.iter().map(String::as_str));
    let hint = crate::text::closest(name, names.iter().copied())
        .map_or(String::new(), |close| format!(" — did you mean {close}?"));
    Err(crate::exit_codes::usage(format!(
        "--unpark: no rung, backend, login account or login named \"{}\"{hint} (a rung's number, a backend or a login account; `agent --list` shows them)",
        crate::text::printable(name)
    )))
}
