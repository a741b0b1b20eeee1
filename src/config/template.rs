//! `agent --config-template`: a commented configuration with every key the file may hold and
//! its default. The keys come from the loader's own section types ([`super::fields`]), in
//! their order, and the defaults from the loader's own starting point
//! ([`super::defaults`] over the built-in table): a key the loader learns is a key of the
//! template, and a default changed there is changed here. What this file adds is only the
//! words for each key; a key with none is still printed (and a test fails on it).
//!
//! A line that starts with `# ` is a key at its default: remove the `#` and it reads the
//! same as no file (`tests::the_template_uncommented_loads_as_no_file_at_all` holds it to
//! that). A line that starts with `## ` says what a key means, or shows a key with no value
//! of its own — a section that exists only when written (`[alerts.telegram]`), a key whose
//! absence means "the top-level one" — as an example to copy.

use std::fmt::Write as _;
use std::time::Duration;

use super::backend::Backend;
use super::{Config, fields};

/// One key's line: at its default, or an example when it has none of its own.
enum Shown {
    /// `# key = value`: uncommented, it changes nothing.
    Default(String),
    /// `## key = value  (note)`: an example; the note says what its absence means.
    Example(String, &'static str),
}

/// The template, as `--config-template` prints it.
pub fn render() -> String {
    let config = super::defaults(super::builtin::backends(), super::builtin::rungs());
    let mut out = String::new();
    out.push_str(HEADER);
    for key in fields::of::<super::FileConfig>() {
        match *key {
            "backends" => backends(&mut out, &config),
            "rungs" => rungs(&mut out, &config),
            "budget" => {
                section::<super::BudgetSection>(&mut out, "budget", &|key| budget(&config, key));
            }
            "breaker" => {
                section::<super::BreakerSection>(&mut out, "breaker", &|key| breaker(&config, key));
            }
            "alerts" => alerts(&mut out),
            "pricing" => pricing(&mut out),
            "accounts" => accounts(&mut out),
            "relay" => relay(&mut out, &config),
            "store" => section::<super::store::StoreFile>(&mut out, "store", &store),
            key => line(&mut out, key, top_level(&config, key)),
        }
    }
    out
}

const HEADER: &str = "\
## agent's configuration: every key it reads, each with its default.
## Printed by `agent --config-template`; save it as ~/.config/agent/config.toml (or name it
## with --config FILE or $AGENT_CONFIG). A line `# key = value` is a key at its default:
## remove the `#` to change it. A line `## …` says what a key means, or shows one with no
## default of its own (a section that exists only when written) as an example to copy.
## No file at all means exactly these defaults.

";

/// Writes a key's words and its line; a key this file has no words for is still listed.
fn line(out: &mut String, key: &str, shown: Option<(&'static str, Shown)>) {
    said_line(out, key, shown, true);
}

/// [`line`], with its words only when `words` (a section like one above says them once).
fn said_line(out: &mut String, key: &str, shown: Option<(&'static str, Shown)>, words: bool) {
    let Some((says, shown)) = shown else {
        let _ = writeln!(out, "## {key}: (no description)\n");
        return;
    };
    if words {
        for said in says.lines() {
            let _ = writeln!(out, "## {said}");
        }
    }
    let gap = if words { "\n" } else { "" };
    match shown {
        Shown::Default(value) => {
            let _ = writeln!(out, "# {key} = {value}{gap}");
        }
        Shown::Example(value, note) => {
            let _ = writeln!(out, "## {key} = {value}   ({note}){gap}");
        }
    }
}

/// A section of named keys, `[name]`, each key by `shown`.
fn section<'de, T: serde::Deserialize<'de>>(
    out: &mut String,
    name: &str,
    shown: &dyn Fn(&str) -> Option<(&'static str, Shown)>,
) {
    let _ = writeln!(out, "# [{name}]\n");
    for key in fields::of::<T>() {
        line(out, key, shown(key));
    }
}

/// A TOML string.
fn string(text: &str) -> String {
    toml::Value::String(text.to_string()).to_string()
}

/// A TOML array of strings.
fn strings(words: &[String]) -> String {
    let items: Vec<String> = words.iter().map(|word| string(word)).collect();
    format!("[{}]", items.join(", "))
}

/// A TOML inline table of strings, its keys bare where TOML allows.
fn table<'a>(pairs: impl IntoIterator<Item = (&'a String, &'a String)>) -> String {
    let items: Vec<String> = pairs
        .into_iter()
        .map(|(key, value)| {
            let bare = !key.is_empty()
                && key
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            let key = if bare { key.clone() } else { string(key) };
            format!("{key} = {}", string(value))
        })
        .collect();
    if items.is_empty() {
        "{}".to_string()
    } else {
        format!("{{ {} }}", items.join(", "))
    }
}

/// A number as the file writes it: `25`, `0.5`.
fn number(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{value:.0}")
    } else {
        value.to_string()
    }
}

fn seconds(duration: Duration) -> String {
    number(duration.as_secs_f64())
}

// Each key's arm of a match is an answer; the arm of a key with no words is `None`.
#[allow(clippy::unnecessary_wraps)]
fn default(says: &'static str, value: String) -> Option<(&'static str, Shown)> {
    Some((says, Shown::Default(value)))
}

#[allow(clippy::unnecessary_wraps)]
fn example(says: &'static str, value: &str, note: &'static str) -> Option<(&'static str, Shown)> {
    Some((says, Shown::Example(value.to_string(), note)))
}

fn top_level(config: &Config, key: &str) -> Option<(&'static str, Shown)> {
    match key {
        "fastfail_seconds" => default(
            "A launched CLI that fails sooner than this never really started: the next rung runs\nwith the same words. One that ran longer is not re-run (its code is agent's).",
            seconds(config.fastfail),
        ),
        "probe_timeout_seconds" => default(
            "How long a probe may take ($AGENT_PROBE_TIMEOUT wins).",
            seconds(config.probe_timeout),
        ),
        "probe_cache_seconds" => default(
            "How long a good probe is trusted without another call.",
            seconds(config.probe_cache),
        ),
        "self_check_cache_seconds" => default(
            "How long a CLI's own check (a subscription login's proof) is trusted.",
            seconds(config.self_check_cache),
        ),
        "hedge_ms" => default(
            "Start the next rung's probe when this one has not answered after this long.",
            number(config.hedge.as_secs_f64() * 1000.0),
        ),
        "quota_minutes" => default(
            "How long a rung out of quota is skipped when its answer names no reset.",
            number(config.quota_cooldown.as_secs_f64() / 60.0),
        ),
        "park_at_percent" => default(
            "A subscription login's window this full (percent) parks its rungs before the wall.",
            number(config.park_at_percent),
        ),
        "app_server_seconds" => default(
            "How long `codex app-server` may take to say its login's windows.",
            seconds(config.app_server_timeout),
        ),
        "on_limit" => example(
            "What a launch does when a session runs out of its window mid-work: ask, continue,\nresume or stop (--on-limit and $AGENT_ON_LIMIT win).",
            &string("continue"),
            "unset: ask on a terminal, stop off one",
        ),
        _ => None,
    }
}

fn budget(config: &Config, key: &str) -> Option<(&'static str, Shown)> {
    match key {
        "calls" => default(
            "Calls agent may make a day (probes, checks, relayed calls); 0: no cap.",
            config.budget.calls.to_string(),
        ),
        "tokens" => default(
            "Tokens those calls may spend a day; 0: no cap. A call in flight can cross it.",
            config.budget.tokens.to_string(),
        ),
        _ => None,
    }
}

fn breaker(config: &Config, key: &str) -> Option<(&'static str, Shown)> {
    let policy = &config.breaker;
    match key {
        "threshold" => default(
            "Consecutive failures of a target that open its breaker (0: never by count).",
            policy.threshold.to_string(),
        ),
        "error_rate" => default(
            "A failure rate above this over window_seconds opens it too.",
            number(policy.error_rate),
        ),
        "window_seconds" => default("The window the rate is taken over.", seconds(policy.window)),
        "min_calls" => default(
            "Results the window needs before the rate counts.",
            policy.min_calls.to_string(),
        ),
        "backoff_seconds" => default(
            "How long an open breaker skips its target first; it doubles on each failed retry.",
            seconds(policy.backoff),
        ),
        "max_backoff_seconds" => default("The longest it skips.", seconds(policy.max_backoff)),
        _ => None,
    }
}

fn store(key: &str) -> Option<(&'static str, Shown)> {
    match key {
        "kind" => default(
            "Where shared state lives: \"files\" in the state directory, or \"redis\".",
            string("files"),
        ),
        "url" => example(
            "The Redis server (kind = \"redis\"); ${VAR} keeps a password out of this file.",
            &string("redis://127.0.0.1:6379/0"),
            "no default: needed for redis",
        ),
        "prefix" => example(
            "The prefix of agent's keys on a shared server.",
            &string(super::store::DEFAULT_PREFIX),
            "unset: agent",
        ),
        "on_store_down" => default(
            "What the relay does while the server is away: \"refuse\" (503) or \"local\".",
            string("refuse"),
        ),
        _ => None,
    }
}

/// Every built-in backend with each of its keys at its value; a file overrides them key
/// by key, or adds a backend of its own (which needs `command`).
fn backends(out: &mut String, config: &Config) {
    out.push_str(
        "## [backends.NAME]: one way to run a CLI. The built-in ones are below, each key at its\n## value; a file changes them key by key, or adds one (it needs `command`).\n\n",
    );
    for (nth, backend) in config.backends.values().enumerate() {
        // What each key means is said with the first backend; the others list their values.
        let words = nth == 0;
        let _ = writeln!(out, "# [backends.{}]\n", backend.name);
        // Its probe is a table of its own, so it comes after the backend's other keys.
        let keys = fields::of::<super::BackendFile>();
        for key in keys.iter().filter(|key| **key != "probe") {
            said_line(out, key, backend_key(config, backend, key), words);
        }
        let _ = writeln!(out, "\n# [backends.{}.probe]\n", backend.name);
        for key in fields::of::<super::ProbeFile>()
            .iter()
            .filter(|_| keys.contains(&"probe"))
        {
            said_line(out, key, probe(backend, key), words);
        }
        out.push('\n');
    }
}

fn backend_key(config: &Config, backend: &Backend, key: &str) -> Option<(&'static str, Shown)> {
    let own = &backend.own_args;
    match key {
        "label" => default("What notices call it.", string(&backend.label)),
        "command" => default(
            "The program it runs (a name on PATH, or a path).",
            string(&backend.command),
        ),
        "vendor" => default(
            "Whose service it calls: a rung of another vendor than rung 1's is a fallback.",
            string(&backend.vendor),
        ),
        "model_flag" => default(
            "The flag that names a model (\"\": it takes none).",
            string(backend.model_flag.as_deref().unwrap_or("")),
        ),
        "default_model" => match &backend.default_model {
            Some(model) => default(
                "The model a probe asks for when nothing names one.",
                string(model),
            ),
            None => example(
                "The model a probe asks for when nothing names one.",
                &string("MODEL"),
                "unset: the CLI's own settings, else the model it last ran",
            ),
        },
        "models" => default(
            "Aliases a rung may name (opus) and the ids they stand for; ${VAR:-default} expands.",
            table(&backend.models),
        ),
        "env" => default(
            "Variables the launched CLI gets (on top of agent's).",
            table(&backend.env),
        ),
        "env_remove" => default("Variables it does not get.", strings(&backend.env_remove)),
        "rotation" => example(
            "How its accounts take turns: priority, least-cost, round-robin, failover, soonest-reset.",
            &string("priority"),
            "unset: soonest-reset for logins, else priority",
        ),
        "park_at_percent" => example(
            "park_at_percent for its logins.",
            &number(config.park_at_percent),
            "unset: the top-level one",
        ),
        "extra_usage" => default(
            "Paid overage counts as available: a full window does not park while credits last.",
            backend.extra_usage.to_string(),
        ),
        "login_usage" => default(
            "Ask Anthropic's usage endpoint for its Claude login's windows (opt-in).",
            backend.login_usage.to_string(),
        ),
        "translate" => default(
            "Say Claude Code's command line in this CLI's own words.",
            backend.translate.to_string(),
        ),
        "self_check" => default(
            "--status may run the CLI itself to prove a login rung.",
            backend.self_check.to_string(),
        ),
        "on_limit" => example(
            "on_limit for its sessions.",
            &string("resume"),
            "unset: the top-level one",
        ),
        "args" => default(
            "Its own words, after the translation, in both forms.",
            strings(&own.args),
        ),
        "headless_args" => default(
            "Its own words when it runs headless (-p).",
            strings(&own.headless),
        ),
        "interactive_args" => default(
            "Its own words when it runs with a screen.",
            strings(&own.interactive),
        ),
        "enabled" => default(
            "false turns it off: its rungs never run, probe or check.",
            backend.enabled.to_string(),
        ),
        _ => None,
    }
}

fn probe(backend: &Backend, key: &str) -> Option<(&'static str, Shown)> {
    let def = &backend.probe;
    match key {
        "kind" => default(
            "How its rungs are proved: anthropic, openai, gemini (a one-token call), command\n(the CLI itself, headless), none (the fast-fail net alone).",
            string(def.kind.as_str()),
        ),
        "url" => match &def.url {
            Some(url) => default("The API the probe calls.", string(url)),
            None => example(
                "The API the probe calls.",
                &string("https://…"),
                "unset: where the CLI itself calls",
            ),
        },
        "key" => match &def.key {
            Some(key) => default(
                "The probe's credential (${VAR}, never a literal).",
                string(key),
            ),
            None => example(
                "The probe's credential (${VAR}, never a literal).",
                &string("${VAR}"),
                "unset: the one the CLI itself sends",
            ),
        },
        "auth" => match def.auth {
            Some(super::Auth::Bearer) => default("How an Anthropic key is sent.", string("bearer")),
            Some(super::Auth::XApiKey) => {
                default("How an Anthropic key is sent.", string("x-api-key"))
            }
            None => example(
                "How an Anthropic key is sent.",
                &string("bearer"),
                "unset: x-api-key, bearer for a token",
            ),
        },
        "api" => default(
            "An openai probe's API: chat or responses.",
            string(match def.api {
                super::OpenAiApi::Chat => "chat",
                super::OpenAiApi::Responses => "responses",
            }),
        ),
        "argv" => match &def.argv {
            Some(argv) => default("A command probe's words.", strings(argv)),
            None => example(
                "A command probe's words.",
                &strings(&["mycli".to_string(), "--ping".to_string()]),
                "unset: the CLI's own headless prompt",
            ),
        },
        _ => None,
    }
}

/// The built-in table, as `[[rungs]]` would write it: written in a file, a table replaces
/// it whole (and a missing CLI there is a failure, not a skip), so it is shown, not set.
fn rungs(out: &mut String, config: &Config) {
    out.push_str(
        "## [[rungs]]: the table, tried in order. Unset, it is the built-in one below; a file's\n## [[rungs]] replace it whole. backend names a backend; probe_model the model a probe asks\n## about (an alias or an id; empty: what the CLI runs); run_model the model a launch\n## passes (empty: none, the CLI keeps its own default).\n",
    );
    for rung in &config.rungs {
        out.push_str("## [[rungs]]\n");
        for key in fields::of::<super::RungFile>() {
            let value = match *key {
                "backend" => &rung.backend,
                "probe_model" => &rung.probe_model,
                "run_model" => &rung.run_model,
                _ => {
                    let _ = writeln!(out, "## {key}: (no description)");
                    continue;
                }
            };
            let _ = writeln!(out, "## {key} = {}", string(value));
        }
    }
    out.push('\n');
}

fn alerts(out: &mut String) {
    out.push_str(
        "## [alerts]: where the watchdog (--check-fallback) tells a change of state. None is set\n## unless written.\n\n",
    );
    for key in fields::of::<super::alerts::AlertsConfig>() {
        match *key {
            "telegram" => {
                out.push_str("## [alerts.telegram]\n");
                for key in fields::of::<super::alerts::TelegramConfig>() {
                    let (value, note) = match *key {
                        "bot_token" => (string("${AGENT_TELEGRAM_TOKEN}"), "or bot_token_cmd"),
                        "bot_token_cmd" => {
                            (string("gopass show -o tg/bot"), "a command that prints it")
                        }
                        "chat_id" => (string("123456"), "needed"),
                        "api_url" => (
                            string(&super::alerts::default_telegram_api()),
                            "the default",
                        ),
                        key => {
                            let _ = writeln!(out, "## {key}: (no description)");
                            continue;
                        }
                    };
                    let _ = writeln!(out, "## {key} = {value}   ({note})");
                }
                out.push('\n');
            }
            "webhook" => {
                out.push_str(
                    "## [alerts.webhook]   (a JSON POST {state, previous, message, rungs})\n",
                );
                for key in fields::of::<super::alerts::WebhookConfig>() {
                    let _ = writeln!(out, "## {key} = {}", string("https://hooks.example/agent"));
                }
                out.push('\n');
            }
            "command" => {
                out.push_str("## [alerts.command]   (run without a shell, the message last)\n");
                for key in fields::of::<super::alerts::CommandConfig>() {
                    let _ = writeln!(
                        out,
                        "## {key} = {}",
                        strings(&["notify-send".to_string(), "agent".to_string()])
                    );
                }
                out.push('\n');
            }
            "deadline_seconds" => line(
                out,
                &format!("alerts.{key}"),
                example(
                    "How long one run's deliveries may take, retries included.",
                    &seconds(super::alerts::DEFAULT_DEADLINE),
                    "unset: this",
                ),
            ),
            key => line(out, key, None),
        }
    }
}

fn pricing(out: &mut String) {
    out.push_str("## [pricing]: prices for --usage's cost. None is set unless written.\n");
    out.push_str("## [pricing.models.\"claude-opus-5\"]   (USD per million tokens)\n");
    for key in fields::of::<super::pricing::ModelPriceFile>() {
        let value = match *key {
            "input" => "15.0",
            "output" | "reasoning" => "75.0",
            "cache_read" => "1.5",
            "cache_write" => "18.75",
            key => {
                let _ = writeln!(out, "## {key}: (no description)");
                continue;
            }
        };
        let _ = writeln!(out, "## {key} = {value}");
    }
    out.push_str("## [pricing.plans.claude-max]   (a flat monthly plan: its tokens cost the fee ÷ the month's tokens)\n");
    for key in fields::of::<super::pricing::PlanFile>() {
        let value = match *key {
            "monthly_usd" => "200".to_string(),
            "accounts" => strings(&["max-personal".to_string()]),
            key => {
                let _ = writeln!(out, "## {key}: (no description)");
                continue;
            }
        };
        let _ = writeln!(out, "## {key} = {value}");
    }
    out.push('\n');
}

fn accounts(out: &mut String) {
    out.push_str("## [[accounts]]: credential pools of a backend. None unless written (or added with\n## `agent --accounts add`, which keeps the secret 0600 in credentials.toml).\n## [[accounts]]\n");
    for key in fields::of::<super::accounts::AccountDef>() {
        let (value, note) = match *key {
            "name" => (string("work"), "needed"),
            "backend" => (string("claude"), "needed"),
            "kind" => (string("api_key"), "needed: oauth, api_key or login"),
            "secret_env" => (string("WORK_ANTHROPIC_KEY"), "or secret_cmd"),
            "secret_cmd" => (string("gopass show -o ai/work"), "a command that prints it"),
            "secret" => (string("…"), "never here: --accounts add stores it 0600"),
            "secret_var" => (string("ANTHROPIC_API_KEY"), "unset: by CLI and kind"),
            "priority" => ("100".to_string(), "the default; lower goes first"),
            "monthly_budget_usd" => ("0".to_string(), "the default: no cap"),
            "expires" => (string("2027-03-01"), "warns 30 and 7 days ahead"),
            "dir" => (string("~/.claude-work"), "a login account's home"),
            "unverified" => ("false".to_string(), "set by --accounts add offline"),
            key => {
                let _ = writeln!(out, "## {key}: (no description)");
                continue;
            }
        };
        let _ = writeln!(out, "## {key} = {value}   ({note})");
    }
    out.push('\n');
}

fn relay(out: &mut String, config: &Config) {
    let relay = &config.relay;
    let mb = relay.body_limit / (1024 * 1024);
    out.push_str("# [relay]\n\n");
    for key in fields::of::<super::relay::RelayFile>() {
        let shown = match *key {
            "listen" => default(
                "Where `agent --relay serve` listens (loopback unless --allow-remote).",
                string(&relay.listen),
            ),
            "body_limit_mb" => default("Larger request bodies are refused (413).", mb.to_string()),
            "client_timeout_seconds" => default(
                "How long a client may take to send a request.",
                seconds(relay.client_timeout),
            ),
            "idle_timeout_seconds" => default(
                "How long an idle connection is kept.",
                seconds(relay.idle_timeout),
            ),
            "max_connections" => default(
                "Connections served at once.",
                relay.max_connections.to_string(),
            ),
            "max_connections_per_address" => default(
                "Of them, from one address.",
                relay.max_connections_per_address.to_string(),
            ),
            "connect_timeout_seconds" => default(
                "How long connecting to an upstream may take.",
                seconds(relay.connect_timeout),
            ),
            "upstream_timeout_seconds" => default(
                "The longest silence from an upstream.",
                seconds(relay.upstream_timeout),
            ),
            "stop_grace_seconds" => default(
                "On SIGTERM, how long calls in flight may finish.",
                seconds(relay.stop_grace),
            ),
            "dashboard" => default(
                "Also serve the dashboard at /dashboard.",
                relay.dashboard.to_string(),
            ),
            "upstreams" => {
                relay_upstreams(out, config);
                continue;
            }
            _ => None,
        };
        line(out, key, shown);
    }
}

fn relay_upstreams(out: &mut String, config: &Config) {
    out.push_str("## [relay.upstreams.NAME]: where /NAME/… is forwarded. The built-in ones below; a file\n## changes them key by key or adds one (kind anthropic, openai or claude-cli).\n\n");
    for (nth, upstream) in config.relay.upstreams.values().enumerate() {
        let words = nth == 0;
        let _ = writeln!(out, "# [relay.upstreams.{}]\n", upstream.name);
        for key in fields::of::<super::relay::UpstreamFile>() {
            let shown = match *key {
                "kind" => default("What it speaks.", string(upstream.kind.as_str())),
                "base" => match &upstream.base {
                    Some(base) => {
                        default("Its base URL (AGENT_RELAY_<NAME>_BASE wins).", string(base))
                    }
                    None => example(
                        "Its base URL.",
                        &string("https://…"),
                        "needed for anthropic and openai",
                    ),
                },
                "secret_cmd" => example(
                    "A command that prints its key.",
                    &string("gopass show -o ai/key"),
                    "unset: AGENT_RELAY_<NAME>_KEY",
                ),
                "command" => example(
                    "For claude-cli: the claude to run.",
                    &string("claude"),
                    "unset: claude",
                ),
                _ => None,
            };
            said_line(out, key, shown, words);
        }
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The template with every `# ` line made live: each default key set to its default.
    fn uncommented(template: &str) -> String {
        template
            .lines()
            .map(|line| line.strip_prefix("# ").unwrap_or(line))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The configuration a file's text loads to, with the file's own name taken out.
    fn loaded(text: &str) -> String {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, text).unwrap();
        let mut config =
            super::super::load(Some((path, true))).unwrap_or_else(|e| panic!("{e:#}\n{text}"));
        config.source = None;
        format!("{config:?}")
    }

    #[test]
    fn the_template_uncommented_loads_as_no_file_at_all() {
        let template = render();
        let live = uncommented(&template);
        assert!(live.contains("\nfastfail_seconds = 25\n"), "{live}");
        assert!(live.contains("\n[backends.claude]\n"), "{live}");
        let with_file = loaded(&live);
        let mut without = super::super::load(None).unwrap();
        without.source = None;
        assert_eq!(with_file, format!("{without:?}"));
        // And as printed, all comments, it is no file at all either.
        assert_eq!(loaded(&template), format!("{without:?}"));
    }

    #[test]
    fn every_key_the_loader_reads_is_in_the_template_with_words_for_it() {
        let template = render();
        assert!(
            !template.contains("(no description)"),
            "a key the loader reads has no words in the template:\n{}",
            template
                .lines()
                .filter(|l| l.contains("(no description)"))
                .collect::<Vec<_>>()
                .join("\n")
        );
        let sections: [(&str, &[&str]); 16] = [
            ("", fields::of::<super::super::FileConfig>()),
            ("budget", fields::of::<super::super::BudgetSection>()),
            ("breaker", fields::of::<super::super::BreakerSection>()),
            ("backends", fields::of::<super::super::BackendFile>()),
            ("probe", fields::of::<super::super::ProbeFile>()),
            ("rungs", fields::of::<super::super::RungFile>()),
            ("alerts", fields::of::<super::super::alerts::AlertsConfig>()),
            (
                "telegram",
                fields::of::<super::super::alerts::TelegramConfig>(),
            ),
            (
                "webhook",
                fields::of::<super::super::alerts::WebhookConfig>(),
            ),
            (
                "command",
                fields::of::<super::super::alerts::CommandConfig>(),
            ),
            (
                "models",
                fields::of::<super::super::pricing::ModelPriceFile>(),
            ),
            ("plans", fields::of::<super::super::pricing::PlanFile>()),
            (
                "accounts",
                fields::of::<super::super::accounts::AccountDef>(),
            ),
            ("relay", fields::of::<super::super::relay::RelayFile>()),
            (
                "upstreams",
                fields::of::<super::super::relay::UpstreamFile>(),
            ),
            ("store", fields::of::<super::super::store::StoreFile>()),
        ];
        for (section, keys) in sections {
            assert!(!keys.is_empty(), "{section}: no keys read");
            for key in keys {
                let written = template.lines().any(|line| {
                    let line = line.trim_start_matches('#').trim_start();
                    line.starts_with(&format!("{key} = "))
                        || line.starts_with(&format!("alerts.{key} = "))
                        || line.starts_with(&format!("[{key}]"))
                        || line.starts_with(&format!("[[{key}]]"))
                        || line.starts_with(&format!("[{key}."))
                        || line.contains(&format!(".{key}]"))
                        || line.contains(&format!(".{key}."))
                });
                assert!(written, "{section}: {key} is not in the template");
            }
        }
    }
}
