//! Subscription logins are per person (DESIGN.md §12, §14): a Claude Pro/Max login — run
//! through `claude -p` by a `claude-cli` upstream, or its OAuth token (`sk-ant-oat…`) as an
//! upstream's key — is for its owner's own use under the vendors' terms. A relay with named
//! clients serves a team, so it refuses to start with such an upstream, and refuses such
//! calls if a client is added while it runs. API-key pools are the team case.

use std::sync::Arc;

use axum::response::Response;
use http::StatusCode;

use super::answer;
use super::caller::Caller;
use super::keys::{Key, Keys};
use super::shared::Relay;
use crate::config::relay::{Kind, RelayConfig, Upstream};

/// The upstreams that spend a subscription login, each with why. Reads the keys (a
/// `secret_cmd` runs) to tell an OAuth token from an API key.
pub fn personal_upstreams(config: &RelayConfig, keys: &Keys) -> Vec<String> {
    config
        .upstreams
        .values()
        .filter_map(|upstream| personal(upstream, keys.get(upstream).ok().as_ref()))
        .collect()
}

/// Why `upstream` with `key` spends a subscription login, or `None` when it does not.
fn personal(upstream: &Upstream, key: Option<&Key>) -> Option<String> {
    match upstream.kind {
        Kind::ClaudeCli => Some(format!(
            "/{} (claude-cli) runs this host's Claude Code login",
            upstream.name
        )),
        Kind::Anthropic | Kind::Openai => key.filter(|k| k.is_subscription_login()).map(|k| {
            format!(
                "/{}'s key from {} is a Claude subscription (OAuth) token",
                upstream.name, k.source
            )
        }),
    }
}

/// The refusal, naming the upstreams and the way out.
pub fn why_refused(personal: &[String]) -> String {
    format!(
        "a relay with named clients serves more than one person, and {}: the vendors' terms reserve subscription plans for their owner's own use. Serve a team from API keys: remove those upstreams (or give them an API key), or revoke the named clients (`agent --relay tokens list`, `agent --relay tokens revoke NAME`)",
        personal.join("; ")
    )
}

/// A call about to spend a subscription login while named clients exist (added after the
/// relay started): 403, and nothing is sent. Reads the clients only for such upstreams,
/// and only when the caller is not itself a named client; while the store that holds them
/// is away, 503 `store_unavailable` (it alone can say there are none).
pub async fn refusal(
    relay: &Arc<Relay>,
    caller: &Caller,
    upstream: &Upstream,
    key: Option<&Key>,
) -> Option<Response> {
    let why = personal(upstream, key)?;
    let named = match caller {
        Caller::Named { .. } => true,
        Caller::Team => {
            let clients = relay.clients.clone();
            match tokio::task::spawn_blocking(move || clients.list()).await {
                Ok(Ok(list)) => !list.is_empty(),
                // A store away cannot say there are none, and this machine's file may not.
                Ok(Err(down)) => {
                    return Some(answer::error(
                        StatusCode::SERVICE_UNAVAILABLE,
                        "store_unavailable",
                        &format!(
                            "relay: {down}, and it holds the named clients; {why}, which is served only while the store can say there are none; nothing was sent"
                        ),
                    ));
                }
                Err(_) => true,
            }
        }
    };
    named.then(|| {
        answer::error(
            StatusCode::FORBIDDEN,
            "relay_subscription_per_person",
            &format!(
                "relay: {}; nothing was sent",
                why_refused(std::slice::from_ref(&why))
            ),
        )
    })
}
