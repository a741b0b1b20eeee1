//! Who is calling the relay: the holder of the team token of `agent --relay init`, or a
//! named client of `agent --relay tokens add` — one token per person, each with daily caps
//! of its own, every call of theirs carrying their name into the ledger.

use std::sync::Arc;

use http::HeaderMap;

use super::shared::Relay;
use crate::config::limits::Limits;
use crate::state::budget::ClientCaps;

/// Who a request came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    /// The team token (`AGENT_RELAY_TOKEN` or the `--relay init` file).
    Team,
    /// A named client, with its own daily caps (0: none of its own).
    Named { name: String, limits: Limits },
}

impl Caller {
    /// The caps the budget checks for this caller beside the team's: `None` for the team
    /// token and for a client without caps of its own.
    pub fn caps(&self) -> Option<ClientCaps> {
        match self {
            Caller::Named { name, limits } if limits.calls > 0 || limits.tokens > 0 => {
                Some(ClientCaps {
                    name: name.clone(),
                    limits: *limits,
                })
            }
            _ => None,
        }
    }

    /// The name the ledger carries (`None` for the team token, as before named clients).
    pub fn name(&self) -> Option<&str> {
        match self {
            Caller::Team => None,
            Caller::Named { name, .. } => Some(name),
        }
    }
}

/// Why a request has no caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unadmitted {
    /// No token, or one nobody holds: 401.
    Unknown,
    /// A token that is not the team's, while the shared store that holds the named clients
    /// cannot be asked: 503, like every call then — a client is not told its token is
    /// wrong because the store is away. So even with `on_store_down = "local"`: with a
    /// store configured, the store alone says who the clients are, and this machine's
    /// file (tokens from before the store, revokes it never heard) is not asked instead.
    StoreDown(String),
}

/// The caller a request's token belongs to. The team token is checked first, in memory;
/// any other token against the named clients, read afresh — so a revoked token is refused
/// from the next request on, by every relay that shares the state.
pub async fn admit(relay: &Arc<Relay>, headers: &HeaderMap) -> Result<Caller, Unadmitted> {
    if relay.token.admits(headers) {
        return Ok(Caller::Team);
    }
    let presented: Vec<Vec<u8>> = crate::access::presented(headers)
        .filter(|token| !token.is_empty())
        .map(<[u8]>::to_vec)
        .collect();
    if presented.is_empty() {
        return Err(Unadmitted::Unknown);
    }
    let clients = relay.clients.clone();
    let found = tokio::task::spawn_blocking(move || clients.find(&presented)).await;
    match found {
        Ok(Ok(Some((name, client)))) => Ok(Caller::Named {
            limits: client.limits(),
            name,
        }),
        Ok(Err(down)) => Err(Unadmitted::StoreDown(down.to_string())),
        _ => Err(Unadmitted::Unknown),
    }
}
