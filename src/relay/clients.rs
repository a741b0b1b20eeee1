//! `agent --relay tokens add|list|revoke`: the relay's named clients — one token per
//! person, each with daily caps of its own — kept in the state (or the shared store) that
//! every replica reads. Who a request is from is [`super::caller`]'s.

use std::fmt::Write as _;
use std::process::ExitCode;

use serde_json::json;

use crate::cli::relay::TokensCommand;
use crate::config::Config;
use crate::config::limits::Limits;
use crate::exit_codes::usage;
use crate::state::relay_clients::Clients;

/// `agent --relay tokens add|list|revoke`.
pub fn run(config: &Config, command: TokensCommand) -> anyhow::Result<ExitCode> {
    let state_dir = crate::paths::state_dir();
    let clients = Clients::new(&state_dir);
    // A change only this machine's file heard would leave a revoked token working on every
    // replica (or a new one unknown to them): with the store away, nothing is changed.
    let unchanged = |err: anyhow::Error| match err.downcast::<crate::state::store::Down>() {
        Ok(down) => anyhow::anyhow!("{down}; the relay clients were not changed"),
        Err(err) => err,
    };
    match command {
        TokensCommand::Add {
            name,
            daily_calls,
            daily_tokens,
            force,
        } => {
            let limits = Limits {
                calls: daily_calls,
                tokens: daily_tokens,
            };
            let token = clients.add(&name, limits, force).map_err(unchanged)?;
            // The token alone on stdout, for `TOKEN=$(agent --relay tokens add NAME)`; it is
            // printed this once and kept nowhere.
            crate::term::emit(&format!("{token}\n"))?;
            let kept_in = match crate::state::store::shared() {
                Some(_) => "the shared store".to_string(),
                None => clients.path().display().to_string(),
            };
            crate::term::notice(&format!(
                "relay client \"{name}\" added ({}); its token is the line above, shown this once (only its SHA-256 is kept, in {kept_in}). `agent --relay tokens revoke {name}` ends it",
                caps_text(limits),
            ));
            let personal = super::subscriptions::personal_upstreams(
                &config.relay,
                &super::keys::Keys::default(),
            );
            if !personal.is_empty() {
                crate::term::warn(&format!(
                    "{}; `agent --relay serve` will refuse to start until then",
                    super::subscriptions::why_refused(&personal)
                ));
            }
            Ok(ExitCode::SUCCESS)
        }
        TokensCommand::List { json } => {
            // The store's clients alone: this machine's file may hold tokens it never had.
            let list = clients
                .list()
                .map_err(|down| anyhow::anyhow!("{down}; it holds the relay clients"))?;
            if json {
                let rows: Vec<serde_json::Value> = list
                    .iter()
                    .map(|(name, client)| {
                        json!({
                            "name": name,
                            "daily_calls": client.daily_calls,
                            "daily_tokens": client.daily_tokens,
                            "created": client.created,
                            "sha256_tail": client.hash_tail(),
                        })
                    })
                    .collect();
                crate::term::emit_json(&json!({ "clients": rows }))?;
                return Ok(ExitCode::SUCCESS);
            }
            if list.is_empty() {
                crate::term::emit(
                    "no named relay clients (the team token still works); add one with `agent --relay tokens add NAME [--daily-calls N] [--daily-tokens N]`\n",
                )?;
                return Ok(ExitCode::SUCCESS);
            }
            let width = list.keys().map(String::len).max().unwrap_or(4).max(4);
            let mut out = format!(
                "{:width$}  {:>10}  {:>12}  {:20}  SHA-256\n",
                "NAME", "CALLS/DAY", "TOKENS/DAY", "CREATED"
            );
            for (name, client) in &list {
                let _ = writeln!(
                    out,
                    "{name:width$}  {:>10}  {:>12}  {:20}  …{}",
                    cap_text(client.daily_calls),
                    cap_text(client.daily_tokens),
                    client.created.split('.').next().unwrap_or(&client.created),
                    client.hash_tail()
                );
            }
            crate::term::emit(&out)?;
            Ok(ExitCode::SUCCESS)
        }
        TokensCommand::Revoke { name } => {
            if !clients.revoke(&name).map_err(unchanged)? {
                return Err(usage(format!(
                    "no relay client named \"{name}\" (see `agent --relay tokens list`)"
                )));
            }
            crate::term::notice(&format!(
                "relay client \"{name}\" revoked: its token is refused from its next request on"
            ));
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn cap_text(cap: u64) -> String {
    if cap == 0 {
        "-".to_string()
    } else {
        cap.to_string()
    }
}

fn caps_text(limits: Limits) -> String {
    let one = |cap: u64, unit: &str| {
        if cap == 0 {
            format!("no {unit} cap of its own")
        } else {
            format!("{cap} {unit}s a day")
        }
    };
    format!(
        "{}, {}; the team's caps hold too",
        one(limits.calls, "call"),
        one(limits.tokens, "token")
    )
}
