//! The relay's named clients (DESIGN.md §14): one token per person instead of one shared
//! token, each with its own daily caps. Only a token's SHA-256 is kept — the token itself
//! is shown once, when it is made — so `relay_clients.json` hands nobody a working token.
//!
//! Everything about the clients lives in this one JSON state document — in the shared
//! store when one is configured — read afresh for every request that is not the team
//! token's: a revoke takes effect on the next request of every relay that shares the
//! state. With a store configured, the store alone says who the clients are: while it is
//! away they are not known, and this machine's file (which may hold tokens from before
//! the store, or a revoke the store never heard) is not read instead.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use subtle::ConstantTimeEq as _;

use crate::config::limits::Limits;
use crate::exit_codes::usage;
use crate::state::budget::epoch;
use crate::state::json_file::JsonFile;
use crate::state::store::Down;

/// The longest client name: it is written on every ledger line of the client's calls.
const NAME_LIMIT: usize = 64;

/// One named client, as stored: never its token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Client {
    /// SHA-256 of the token, lower-case hex.
    pub sha256: String,
    /// Daily caps for this client alone (0: no cap of its own; the team's still holds).
    pub daily_calls: u64,
    pub daily_tokens: u64,
    /// RFC 3339, UTC.
    pub created: String,
}

impl Client {
    pub fn limits(&self) -> Limits {
        Limits {
            calls: self.daily_calls,
            tokens: self.daily_tokens,
        }
    }

    /// The last four hex digits of the hash: enough to tell two tokens apart in a list,
    /// nothing to guess a token from.
    pub fn hash_tail(&self) -> &str {
        &self.sha256[self.sha256.len().saturating_sub(4)..]
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClientsFile {
    #[serde(default)]
    pub clients: BTreeMap<String, Client>,
}

/// The named clients of the relay.
#[derive(Debug, Clone)]
pub struct Clients {
    file: JsonFile<ClientsFile>,
}

impl Clients {
    pub fn new(state_dir: &Path) -> Clients {
        Clients {
            // The hashes cannot be rebuilt from anything: written with fsync, and kept on
            // this machine too, to put back if the shared store forgets them.
            file: JsonFile::new(state_dir, "relay_clients.json")
                .pretty()
                .synced()
                .kept(epoch::rejoin_if_forgot)
                .rebuilt_by(
                    "with no named clients: add them again with `agent --relay tokens add`",
                ),
        }
    }

    pub fn path(&self) -> &Path {
        self.file.path()
    }

    /// Every named client, by name: from the shared store when one is configured (and
    /// [`Down`] while it is away, never this machine's file), else from the file.
    pub fn list(&self) -> Result<BTreeMap<String, Client>, Down> {
        self.file.load_without_fallback().map(|file| file.clients)
    }

    /// Makes a client and its token; returns the token, which is not kept anywhere. An
    /// existing name is an error unless `replace` (its old token then stops working).
    pub fn add(&self, name: &str, limits: Limits, replace: bool) -> anyhow::Result<String> {
        check_name(name)?;
        let token = crate::access::generate("agr-")?;
        let client = Client {
            sha256: crate::digest::sha256_hex(token.as_bytes()),
            daily_calls: limits.calls,
            daily_tokens: limits.tokens,
            created: jiff::Timestamp::now().to_string(),
        };
        let added = self.file.update_without_fallback(|file| {
            if file.clients.contains_key(name) && !replace {
                return false;
            }
            file.clients.insert(name.to_string(), client);
            true
        })?;
        if !added {
            return Err(usage(format!(
                "a relay client named \"{name}\" already exists; `agent --relay tokens add {name} --force` gives it a new token (the old one stops working), or pick another name"
            )));
        }
        Ok(token)
    }

    /// Removes a client: its token is refused from the next request on. `false` when there
    /// was no such client.
    pub fn revoke(&self, name: &str) -> anyhow::Result<bool> {
        self.file
            .update_without_fallback(|file| file.clients.remove(name).is_some())
    }

    /// The client one of the `presented` tokens belongs to, the clients read afresh (once,
    /// as [`Clients::list`] reads them: [`Down`] while the store that holds them is away).
    /// Every stored hash is compared with every token, each in constant time, whichever
    /// matches.
    pub fn find(&self, presented: &[impl AsRef<[u8]>]) -> Result<Option<(String, Client)>, Down> {
        let wanted: Vec<String> = presented
            .iter()
            .map(|token| crate::digest::sha256_hex(token.as_ref()))
            .collect();
        let mut found = None;
        for (name, client) in self.list()? {
            let same = wanted.iter().fold(false, |same, hash| {
                same | bool::from(client.sha256.as_bytes().ct_eq(hash.as_bytes()))
            });
            if same && found.is_none() {
                found = Some((name, client));
            }
        }
        Ok(found)
    }
}

/// A client name: what the ledger and `--usage --by client` show, so one short line of
/// letters, digits and `.`, `_`, `-`, `@`, starting with a letter or digit.
pub fn check_name(name: &str) -> anyhow::Result<()> {
    let first_ok = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric());
    let all_ok = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '@'));
    if !first_ok || !all_ok || name.len() > NAME_LIMIT {
        return Err(usage(format!(
            "relay client name {:?}: use 1 to {NAME_LIMIT} letters, digits, '.', '_', '-' or '@', starting with a letter or digit (e.g. alice or alice@example.com)",
            name.chars().take(NAME_LIMIT + 8).collect::<String>()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_one_short_line_of_a_plain_charset() {
        for good in [
            "alice",
            "bob.smith",
            "carol@example.com",
            "ci-runner_2",
            "7",
        ] {
            assert!(check_name(good).is_ok(), "{good}");
        }
        let long = "a".repeat(NAME_LIMIT + 1);
        for bad in [
            "",
            "-alice",
            "al ice",
            "alice\nbob",
            "alice/bob",
            "ålice",
            "a\u{1b}[31m",
            &long,
        ] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_token_is_found_by_its_hash_and_only_while_its_client_exists() {
        let dir = tempfile::tempdir().unwrap();
        let clients = Clients::new(dir.path());
        let limits = Limits {
            calls: 3,
            tokens: 0,
        };
        let alice = clients.add("alice", limits, false).unwrap();
        let bob = clients.add("bob", Limits::default(), false).unwrap();
        assert_eq!(
            clients.find(&[alice.as_bytes()]).unwrap().unwrap().0,
            "alice"
        );
        assert_eq!(
            clients
                .find(&[alice.as_bytes()])
                .unwrap()
                .unwrap()
                .1
                .limits(),
            limits
        );
        assert_eq!(clients.find(&[bob.as_bytes()]).unwrap().unwrap().0, "bob");
        assert!(clients.find(&[b"agr-not-a-token"]).unwrap().is_none());
        assert!(clients.find(&[&alice.as_bytes()[1..]]).unwrap().is_none());

        assert!(clients.revoke("alice").unwrap());
        assert!(!clients.revoke("alice").unwrap());
        assert!(clients.find(&[alice.as_bytes()]).unwrap().is_none());
        assert_eq!(clients.find(&[bob.as_bytes()]).unwrap().unwrap().0, "bob");
    }

    #[test]
    fn adding_a_name_twice_keeps_the_first_token_unless_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let clients = Clients::new(dir.path());
        let first = clients.add("alice", Limits::default(), false).unwrap();
        let err = clients.add("alice", Limits::default(), false).unwrap_err();
        assert!(format!("{err:#}").contains("--force"), "{err:#}");
        assert!(
            clients.find(&[first.as_bytes()]).unwrap().is_some(),
            "nothing lost"
        );

        let second = clients.add("alice", Limits::default(), true).unwrap();
        assert!(clients.find(&[first.as_bytes()]).unwrap().is_none());
        assert!(clients.find(&[second.as_bytes()]).unwrap().is_some());
    }
}
