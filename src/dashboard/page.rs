//! The page: server-rendered HTML, self-contained (inline CSS and SVG, a few lines of
//! script under a nonce), readable without JavaScript. Every string from state is escaped;
//! no token, secret or prompt is ever put in it.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;

use jiff::Timestamp;
use serde_json::Value;

use super::html::{empty_panel, escape};
use super::logins::{self, LoginName};
use super::usage_figures::{cost, efficiency, tokens_of};
use super::{documents, rungs, summary, words};
use crate::config::Config;
use crate::state::window::Window;
use crate::usage::follow::Follower;

/// The page's `Content-Security-Policy`: nothing from anywhere but the inline style and
/// script carrying this response's nonce, and requests only to the page's own origin.
pub fn content_security_policy(nonce: &str) -> String {
    format!(
        "default-src 'none'; style-src 'nonce-{nonce}'; script-src 'nonce-{nonce}'; img-src data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    )
}

const STYLE: &str = "
:root{color-scheme:light dark;--fg:#1b1f24;--bg:#fff;--mute:#667;--line:#d0d7de;--ok:#1a7f37;--bad:#cf222e;--warn:#9a6700;--bar:#0969da;--track:#eaeef2}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--bg:#0d1117;--mute:#8b949e;--line:#30363d;--ok:#3fb950;--bad:#f85149;--warn:#d29922;--bar:#58a6ff;--track:#21262d}}
body{font:14px/1.45 system-ui,sans-serif;color:var(--fg);background:var(--bg);margin:1.5rem auto;max-width:1200px;padding:0 1rem}
h1{font-size:1.3rem}h2{font-size:1.05rem;margin-top:1.6rem;border-bottom:1px solid var(--line)}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.25rem .5rem;border-bottom:1px solid var(--line);vertical-align:top}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
.state{font-weight:600}[data-state=ok] .state{color:var(--ok)}
[data-state=parked] .state,[data-state=cooling] .state,[data-state=not_proved] .state,[data-state=unknown] .state,[data-state=budget] .state{color:var(--warn)}[data-state=breaker_open] .state,[data-state=failed] .state{color:var(--bad)}
[data-state=skipped] .state,.mute{color:var(--mute)}
.pick{font-weight:600;color:var(--bar)}
.win{display:grid;grid-template-columns:8rem 1fr 24rem;gap:.5rem;align-items:center;margin:.2rem 0}
.track{background:var(--track);height:.8rem;border-radius:.4rem;overflow:hidden}
.bar{background:var(--bar);height:100%}.bar.full{background:var(--bad)}
svg{width:100%;height:auto}svg text{fill:var(--mute);font-size:10px}
:root{--c0:#0969da;--c1:#bf3989;--c2:#9a6700;--c3:#1a7f37;--c4:#8250df;--c5:#57606a}
@media (prefers-color-scheme:dark){:root{--c0:#58a6ff;--c1:#f778ba;--c2:#d29922;--c3:#3fb950;--c4:#bc8cff;--c5:#8b949e}}
svg .b0{fill:var(--c0)}svg .b1{fill:var(--c1)}svg .b2{fill:var(--c2)}svg .b3{fill:var(--c3)}svg .b4{fill:var(--c4)}svg .b5{fill:var(--c5)}
.key{display:inline-block;width:.8rem;height:.8rem;border-radius:.15rem;vertical-align:-.1rem}
.k0{background:var(--c0)}.k1{background:var(--c1)}.k2{background:var(--c2)}.k3{background:var(--c3)}.k4{background:var(--c4)}.k5{background:var(--c5)}
.legend span{margin-right:.8rem}
.sr{position:absolute;left:-10000px;width:1px;height:1px;overflow:hidden}
details{margin:.5rem 0}button{font:inherit}
";

/// The whole page, and the nonce its style and script carry.
pub fn render(
    config: &Config,
    follower: &Mutex<Follower>,
    base: &str,
    form: &str,
    nonce: &str,
) -> (String, String) {
    let state_dir = crate::paths::state_dir();
    let now = Timestamp::now();
    let rows = documents::status(config);
    let history = crate::state::windows::Windows::new(&state_dir);
    let names = logins::named(&rows, &history.removed_names());
    let windows = history.all(now);
    let watchdog = crate::watch::alerts::last_state(&state_dir);
    let mut html = String::with_capacity(64 * 1024);
    let _ = write!(
        html,
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\"><title>agent dashboard</title><style nonce=\"{nonce}\">{STYLE}"
    );
    // The bars' widths as classes: the policy allows no `style` attribute.
    for percent in 0..=100 {
        let _ = write!(html, ".w{percent}{{width:{percent}%}}");
    }
    let _ = write!(
        html,
        "</style></head><body data-base=\"{}\"><h1>agent dashboard</h1>",
        escape(base)
    );
    summary::draw(
        &mut html,
        &summary::Facts {
            config,
            rows: &rows,
            watchdog: &watchdog,
            windows: &windows,
            names: &names,
            now,
        },
    );
    rungs::draw(&mut html, &rows, base, form, now);
    let full_at = |login: &str, window: &Window| {
        let readings = history.history(login, &window.scope, now);
        crate::state::forecast::forecast(&readings, now).map(|f| f.full_at)
    };
    windows_panel(&mut html, &windows, &names, &full_at, now);
    budget(&mut html, config);
    usage(&mut html, config, follower);
    super::tasks::draw(&mut html, &state_dir, now);
    events(&mut html, &state_dir, &watchdog, now);
    let base = escape(base);
    let _ = write!(
        html,
        "<p class=\"mute\">As JSON: <a href=\"{base}/status.json\">status.json</a> · <a href=\"{base}/usage.json\">usage.json</a> · <a href=\"{base}/budget.json\">budget.json</a></p>"
    );
    let _ = write!(
        html,
        "<script nonce=\"{nonce}\">{SCRIPT}</script></body></html>"
    );
    (html, nonce.to_string())
}

/// Refreshes the rung table's states from `/status.json` every 10 s; the page is whole
/// without it.
const SCRIPT: &str = "setInterval(function(){fetch(document.body.dataset.base+'/status.json',{credentials:'same-origin'}).then(function(r){return r.ok?r.json():null}).then(function(rows){if(!rows)return;rows.forEach(function(row){var tr=document.querySelector('tr[data-rung=\"'+row.rung+'\"]');if(!tr)return;tr.dataset.state=row.state;var s=tr.querySelector('.state .word');if(s)s.textContent=row.state.split('_').join(' ');});});},10000);";

/// A short name for a window's scope, for `data-window`: `5h`, `7d`, `7d-opus`.
fn scope_key(scope: &crate::state::window::Scope) -> String {
    use crate::state::window::Scope;
    match scope {
        Scope::FiveHour => "5h".into(),
        Scope::Weekly => "7d".into(),
        Scope::ModelWeekly { family } => format!("7d-{family}"),
        Scope::ModelFiveHour { family } => format!("5h-{family}"),
        Scope::Other { minutes, family } => match family {
            Some(family) => format!("{minutes}m-{family}"),
            None => format!("{minutes}m"),
        },
        Scope::Unstated => "usage".into(),
        Scope::Credits => "credits".into(),
        Scope::SpendLimit => "spend".into(),
    }
}

fn windows_panel(
    html: &mut String,
    logins: &BTreeMap<String, Vec<Window>>,
    names: &BTreeMap<String, LoginName>,
    full_at: &dyn Fn(&str, &Window) -> Option<Timestamp>,
    now: Timestamp,
) {
    if logins.is_empty() {
        empty_panel(
            html,
            "windows",
            "Login windows",
            "unknown: no login has reported its windows yet",
        );
        return;
    }
    html.push_str("<h2>Login windows</h2>");
    for (login, windows) in logins {
        let name = names
            .get(login)
            .cloned()
            .unwrap_or_else(|| logins::of_key(login));
        let _ = write!(
            html,
            "<h3 title=\"{}\">{}</h3>",
            escape(&name.detail),
            escape(&name.label)
        );
        for window in windows {
            let percent = window.shown_percent().clamp(0.0, 100.0);
            // An estimate from its readings, shown only when it falls before the reset.
            let pace = full_at(login, window).map_or_else(String::new, |at| {
                format!(
                    "<span class=\"forecast\">full ≈{} at this pace</span> · ",
                    words::time_as(at, &crate::dashboard::words::clock(at))
                )
            });
            let _ = write!(
                html,
                "<div class=\"win\"><span>{}</span><div class=\"track\" role=\"img\" aria-label=\"{percent:.0} % used\"><div class=\"bar w{percent:.0}{}\" data-window=\"{}\" data-percent=\"{percent:.0}\"></div></div><span>{percent:.0} % · {pace}resets {} · <span class=\"mute\">seen {} by {}</span></span></div>",
                escape(&window.scope.describe()),
                if window.is_full() { " full" } else { "" },
                escape(&scope_key(&window.scope)),
                words::time(window.resets_at, now),
                words::time(window.observed_at, now),
                escape(window.source.describe())
            );
        }
    }
}

fn budget(html: &mut String, config: &Config) {
    let doc = documents::budget(config);
    let calls = doc["calls"].as_u64().unwrap_or(0);
    let tokens = doc["tokens"].as_u64().unwrap_or(0);
    let call_cap = doc["limits"]["calls"].as_u64().unwrap_or(0);
    let token_cap = doc["limits"]["tokens"].as_u64().unwrap_or(0);
    if calls == 0 && tokens == 0 {
        let limit = |cap: u64, what: &str| (cap > 0).then(|| words::count(cap, what));
        let limits: Vec<String> = [limit(call_cap, "call"), limit(token_cap, "token")]
            .into_iter()
            .flatten()
            .collect();
        let limits = if limits.is_empty() {
            "no limit set".to_string()
        } else {
            format!("limit {} a day", limits.join(", "))
        };
        empty_panel(
            html,
            "budget",
            "Today's budget",
            &format!("nothing spent today; {limits}"),
        );
        return;
    }
    html.push_str("<h2 data-panel=\"budget\">Today's budget</h2>");
    for (what, used, cap) in [("call", calls, call_cap), ("token", tokens, token_cap)] {
        #[allow(clippy::cast_precision_loss)]
        let percent = if cap == 0 {
            0.0
        } else {
            (used as f64 * 100.0 / cap as f64).min(100.0)
        };
        let cap_text = if cap == 0 {
            "no limit".to_string()
        } else {
            format!("of {}", words::grouped(cap))
        };
        let _ = write!(
            html,
            "<div class=\"win\"><span>{what}s</span><div class=\"track\"><div class=\"bar w{percent:.0}{}\" data-budget=\"{what}s\" data-percent=\"{percent:.0}\"></div></div><span>{} {cap_text}</span></div>",
            if percent >= 100.0 { " full" } else { "" },
            words::count(used, what)
        );
    }
}

/// Whether the report puts a price on anything: a flat-fee login's calls cost nothing
/// per token, and a column of zeros says nothing.
fn priced(total: &Value) -> bool {
    total["cost_usd"]
        .as_f64()
        .or_else(|| total["cost_usd_known"].as_f64())
        .is_some_and(|usd| usd > 0.0)
}

fn usage(html: &mut String, config: &Config, follower: &Mutex<Follower>) {
    let doc = documents::usage(config, follower).unwrap_or(Value::Null);
    let total = &doc["total"];
    let calls = total["calls"].as_u64().unwrap_or(0);
    if calls == 0 {
        empty_panel(
            html,
            "usage",
            "Usage, last 30 days",
            "no calls in the ledger or the CLIs' records",
        );
        return;
    }
    html.push_str("<h2 data-panel=\"usage\">Usage, last 30 days</h2>");
    let groups: BTreeMap<String, &Value> = doc["groups"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|g| Some((g["key"].as_str()?.to_string(), g)))
        .collect();
    let first = documents::first_day().parse::<jiff::civil::Date>().ok();
    let days: Vec<String> = (0..documents::DAYS)
        .filter_map(|i| first?.checked_add(jiff::Span::new().days(i)).ok())
        .map(|d| d.to_string())
        .collect();
    let priced = priced(total);
    super::chart::draw(html, &days, &groups, priced);
    let _ = write!(
        html,
        "<p>30 days: {}, {}{}; cache efficiency {}</p>",
        words::count(calls, "call"),
        words::count(tokens_of(total), "token"),
        if priced {
            format!(", {}", escape(&cost(total)))
        } else {
            String::new()
        },
        efficiency(total)
    );
    let _ = write!(
        html,
        "<h3>Per model</h3><table><thead><tr><th>model</th><th class=\"n\">calls</th><th class=\"n\">tokens</th>{}<th class=\"n\">cache efficiency</th></tr></thead><tbody>",
        if priced {
            "<th class=\"n\">cost (USD)</th>"
        } else {
            ""
        }
    );
    let models = documents::usage_by(config, follower, "model").unwrap_or(Value::Null);
    for group in models["groups"].as_array().into_iter().flatten() {
        group_row(
            html,
            group["key"].as_str().unwrap_or("(none)"),
            group,
            priced,
        );
    }
    html.push_str("</tbody></table>");
    if !priced {
        html.push_str("<p class=\"mute\" data-panel=\"cost\">Cost: none per token (flat-fee logins, or models with no price)</p>");
    }
}

fn group_row(html: &mut String, key: &str, group: &Value, priced: bool) {
    let _ = write!(
        html,
        "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>{}<td class=\"n\">{}</td></tr>",
        escape(key),
        words::grouped(group["calls"].as_u64().unwrap_or(0)),
        words::grouped(tokens_of(group)),
        if priced {
            format!("<td class=\"n\">{}</td>", escape(&cost(group)))
        } else {
            String::new()
        },
        escape(&efficiency(group))
    );
}

fn events(
    html: &mut String,
    state_dir: &std::path::Path,
    watchdog: &crate::watch::alerts::WatchdogState,
    now: Timestamp,
) {
    match &watchdog.state {
        Some(state) => {
            let since = words::time_of(watchdog.since.as_deref(), now)
                .map_or_else(String::new, |at| format!(" since {at}"));
            let checked = words::time_of(watchdog.last_check.as_deref(), now)
                .map_or_else(String::new, |at| format!(", last check {at}"));
            let message = watchdog
                .last_message
                .as_deref()
                .filter(|m| !m.is_empty())
                .map_or_else(String::new, |m| format!(": {}", escape(m)));
            let _ = write!(
                html,
                "<h2>Watchdog</h2><p data-watchdog=\"{}\"><strong>{}</strong>{since}{checked}{message}</p>",
                escape(state),
                escape(state),
            );
        }
        None => empty_panel(
            html,
            "watchdog",
            "Watchdog",
            "no verdict yet (agent --install-watchdog checks the fallback on a schedule)",
        ),
    }
    let recent = crate::state::events::recent(state_dir, 20);
    if recent.is_empty() {
        empty_panel(html, "events", "Recent events", "none");
        return;
    }
    html.push_str("<h2>Recent events</h2>");
    // The newest hand-off may be older than the events listed: said on its own line.
    if let Some(event) = crate::report::status::last_handoff(state_dir) {
        let [time, _, from, to, reason] = event_cells(&event, now);
        let said = match (
            event["refused"].as_str(),
            crate::report::status::brief_of(event["reason"].as_str().unwrap_or("")),
        ) {
            (Some(why), _) => format!(
                "<strong class=\"refused\">refused</strong> — {to} {}",
                escape(why)
            ),
            (None, Some(brief)) => format!("<code>{}</code>", escape(brief)),
            (None, None) => reason,
        };
        let _ = write!(
            html,
            "<p data-last-handoff>last hand-off: {time} {from} → {to}: {said}</p>"
        );
    }
    html.push_str("<table><thead><tr><th>time</th><th>event</th><th>from</th><th>to</th><th>why</th></tr></thead><tbody>");
    for (at, event) in recent.iter().enumerate().rev() {
        let [time, kind, from, to, reason] = event_cells(event, now);
        // A hand-off the rung it went to did not take up is listed as such.
        let shown = if event["event"] == "handoff"
            && crate::report::status::refusal_after(event, &recent[at + 1..]).is_some()
        {
            format!("{kind} (refused)")
        } else {
            kind.clone()
        };
        let _ = write!(
            html,
            "<tr data-event=\"{kind}\"><td>{time}</td><td>{shown}</td><td>{from}</td><td>{to}</td><td>{reason}</td></tr>",
        );
    }
    html.push_str("</tbody></table>");
}

/// An event's time (a `<time>`), kind, from, to and reason, escaped.
fn event_cells(event: &serde_json::Value, now: Timestamp) -> [String; 5] {
    let field = |k: &str| escape(event[k].as_str().unwrap_or(""));
    let time = words::time_of(event["time"].as_str(), now).unwrap_or_else(|| field("time"));
    [
        time,
        field("event"),
        field("from"),
        field("to"),
        field("reason"),
    ]
}
