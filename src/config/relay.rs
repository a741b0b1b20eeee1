//! The `[relay]` section of the configuration file: where the relay listens, its limits,
//! and the upstreams it forwards to. Built-in upstreams `anthropic` and `openai` exist
//! without a file; a file's `[relay.upstreams.NAME]` overrides one key by key or adds one.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;

use crate::bounds::{Bounds, Unit};
use toml::Spanned;

pub const DEFAULT_LISTEN: &str = "127.0.0.1:18790";
const DEFAULT_BODY_LIMIT_MB: u64 = 32;
const DEFAULT_CLIENT_TIMEOUT: Duration = Duration::from_secs(30);
const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
const DEFAULT_UPSTREAM_TIMEOUT: Duration = Duration::from_secs(600);
const DEFAULT_STOP_GRACE: Duration = Duration::from_secs(10);
const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(30);
const DEFAULT_MAX_CONNECTIONS: usize = 512;
/// Every client behind one ssh tunnel or on this host is one address (127.0.0.1): half the
/// total leaves the other half to everyone else without starving a tunnel's team.
const DEFAULT_MAX_CONNECTIONS_PER_ADDRESS: usize = 256;
/// More connections than this could never be backed by descriptors on any system.
const MAX_CONNECTIONS: u64 = 1 << 20;
/// Any of the relay's timeouts: more than 0 (a zero timeout fails every call), at most a
/// day (tokio and hyper add it to the clock).
const TIMEOUT: Bounds = Bounds::positive(crate::bounds::DAY);

/// What an upstream speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// The Anthropic Messages API: the key goes in `x-api-key` (an OAuth token as a bearer).
    Anthropic,
    /// An OpenAI-compatible API: the key goes in `Authorization: Bearer`.
    Openai,
    /// `claude -p` on this host's own Claude Code login, answering in Anthropic's format.
    ClaudeCli,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Anthropic => "anthropic",
            Kind::Openai => "openai",
            Kind::ClaudeCli => "claude-cli",
        }
    }
}

/// One configured upstream, merged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upstream {
    pub name: String,
    pub kind: Kind,
    /// The API's base URL (`https://api.anthropic.com`; OpenAI-style without `/v1`).
    pub base: Option<String>,
    /// A command whose first line of output is the key (`gopass show -o ai/x`).
    pub secret_cmd: Option<String>,
    /// `claude-cli`: the CLI to run.
    pub command: Option<String>,
}

impl Upstream {
    /// `AGENT_RELAY_<NAME>_<WHAT>`: the name upper-cased, every other character `_`.
    pub fn env_var(&self, what: &str) -> String {
        let name: String = self
            .name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_uppercase()
                } else {
                    '_'
                }
            })
            .collect();
        format!("AGENT_RELAY_{name}_{what}")
    }
}

/// The relay's settings, merged from the built-in defaults and the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RelayConfig {
    pub listen: String,
    /// Request bodies larger than this are refused with 413.
    pub body_limit: u64,
    /// How long a client may take to send a request's headers and body.
    pub client_timeout: Duration,
    /// How long a connection with no request in hand (just opened, between two requests,
    /// or still sending its headers) is kept.
    pub idle_timeout: Duration,
    /// Connections served at once, in total and from one remote address; the total is
    /// lowered at start to what the open-file limit can back.
    pub max_connections: usize,
    pub max_connections_per_address: usize,
    pub connect_timeout: Duration,
    /// The longest silence from an upstream: before its answer starts, between two chunks
    /// of it, and the longest a `claude-cli` run may take.
    pub upstream_timeout: Duration,
    /// On SIGTERM, how long calls in flight may take to finish before they are cut.
    pub stop_grace: Duration,
    pub upstreams: BTreeMap<String, Upstream>,
    /// Whether the relay also serves the dashboard's page at `/dashboard`.
    pub dashboard: bool,
}

impl Default for RelayConfig {
    fn default() -> RelayConfig {
        let builtin = |name: &str, kind, base: &str| {
            (
                name.to_string(),
                Upstream {
                    name: name.to_string(),
                    kind,
                    base: Some(base.to_string()),
                    secret_cmd: None,
                    command: None,
                },
            )
        };
        RelayConfig {
            listen: DEFAULT_LISTEN.to_string(),
            body_limit: DEFAULT_BODY_LIMIT_MB * 1024 * 1024,
            client_timeout: DEFAULT_CLIENT_TIMEOUT,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            max_connections_per_address: DEFAULT_MAX_CONNECTIONS_PER_ADDRESS,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            upstream_timeout: DEFAULT_UPSTREAM_TIMEOUT,
            stop_grace: DEFAULT_STOP_GRACE,
            dashboard: false,
            upstreams: BTreeMap::from([
                builtin("anthropic", Kind::Anthropic, "https://api.anthropic.com"),
                builtin("openai", Kind::Openai, "https://api.openai.com"),
            ]),
        }
    }
}

// ---- the file's shape -------------------------------------------------------------------

/// `[relay]` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RelayFile {
    listen: Option<Spanned<String>>,
    body_limit_mb: Option<Spanned<f64>>,
    client_timeout_seconds: Option<Spanned<f64>>,
    idle_timeout_seconds: Option<Spanned<f64>>,
    max_connections: Option<Spanned<f64>>,
    max_connections_per_address: Option<Spanned<f64>>,
    connect_timeout_seconds: Option<Spanned<f64>>,
    upstream_timeout_seconds: Option<Spanned<f64>>,
    stop_grace_seconds: Option<Spanned<f64>>,
    dashboard: Option<bool>,
    #[serde(default)]
    upstreams: BTreeMap<String, Spanned<UpstreamFile>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct UpstreamFile {
    kind: Option<Kind>,
    base: Option<Spanned<String>>,
    secret_cmd: Option<String>,
    command: Option<Spanned<String>>,
}

/// A mistake in `[relay]`: where (a byte offset into the file), which key, and what.
#[derive(Debug)]
pub struct FileError {
    pub offset: usize,
    pub key: String,
    pub message: String,
}

fn error(offset: usize, key: impl Into<String>, message: impl Into<String>) -> FileError {
    FileError {
        offset,
        key: key.into(),
        message: message.into(),
    }
}

impl RelayConfig {
    /// Applies a file's `[relay]` on top of these settings.
    pub fn merge(&mut self, file: RelayFile) -> Result<(), FileError> {
        if let Some(listen) = file.listen {
            let span = listen.span();
            let text = listen.into_inner();
            if text.trim().is_empty() {
                return Err(error(span.start, "relay.listen", "must not be empty"));
            }
            self.listen = text;
        }
        let seconds =
            |value: Option<Spanned<f64>>, key: &str| -> Result<Option<Duration>, FileError> {
                value
                    .map(|spanned| {
                        crate::bounds::duration(*spanned.get_ref(), Unit::Seconds, TIMEOUT)
                            .map_err(|why| error(spanned.span().start, key, why))
                    })
                    .transpose()
            };
        if let Some(d) = seconds(file.client_timeout_seconds, "relay.client_timeout_seconds")? {
            self.client_timeout = d;
        }
        if let Some(d) = seconds(file.idle_timeout_seconds, "relay.idle_timeout_seconds")? {
            self.idle_timeout = d;
        }
        let connections =
            |value: Option<Spanned<f64>>, key: &str| -> Result<Option<usize>, FileError> {
                value
                    .map(|spanned| {
                        crate::bounds::count(*spanned.get_ref(), 1, MAX_CONNECTIONS)
                            .map(|n| usize::try_from(n).unwrap_or(usize::MAX))
                            .map_err(|why| error(spanned.span().start, key, why))
                    })
                    .transpose()
            };
        if let Some(n) = connections(file.max_connections, "relay.max_connections")? {
            self.max_connections = n;
        }
        if let Some(n) = connections(
            file.max_connections_per_address,
            "relay.max_connections_per_address",
        )? {
            self.max_connections_per_address = n;
        }
        if let Some(d) = seconds(
            file.connect_timeout_seconds,
            "relay.connect_timeout_seconds",
        )? {
            self.connect_timeout = d;
        }
        if let Some(d) = seconds(
            file.upstream_timeout_seconds,
            "relay.upstream_timeout_seconds",
        )? {
            self.upstream_timeout = d;
        }
        if let Some(d) = seconds(file.stop_grace_seconds, "relay.stop_grace_seconds")? {
            self.stop_grace = d;
        }
        if let Some(dashboard) = file.dashboard {
            self.dashboard = dashboard;
        }
        if let Some(limit) = file.body_limit_mb {
            let span = limit.span();
            let mb = *limit.get_ref();
            if !(mb > 0.0 && mb <= 4096.0) {
                return Err(error(
                    span.start,
                    "relay.body_limit_mb",
                    "must be more than 0 and at most 4096",
                ));
            }
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let bytes = (mb * 1024.0 * 1024.0) as u64;
            self.body_limit = bytes;
        }
        for (name, spanned) in file.upstreams {
            let span = spanned.span();
            let over = spanned.into_inner();
            let key = format!("relay.upstreams.{name}");
            if name.is_empty()
                || name == "healthz"
                || !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            {
                return Err(error(
                    span.start,
                    &key,
                    "a name is letters, digits, '-' and '_' (and not \"healthz\"): it is the first segment of the route",
                ));
            }
            let mut upstream = match self.upstreams.remove(&name) {
                Some(existing) => existing,
                None => {
                    let Some(kind) = over.kind else {
                        return Err(error(
                            span.start,
                            &key,
                            "a new upstream needs `kind` (anthropic, openai or claude-cli)",
                        ));
                    };
                    Upstream {
                        name: name.clone(),
                        kind,
                        base: None,
                        secret_cmd: None,
                        command: None,
                    }
                }
            };
            if let Some(kind) = over.kind {
                upstream.kind = kind;
            }
            if let Some(base) = over.base {
                let at = base.span().start;
                let base = base.into_inner();
                if !(base.starts_with("http://") || base.starts_with("https://")) {
                    return Err(error(
                        at,
                        format!("{key}.base"),
                        "must start with http:// or https://",
                    ));
                }
                upstream.base = Some(base.trim_end_matches('/').to_string());
            }
            if let Some(command) = over.secret_cmd {
                upstream.secret_cmd = (!command.trim().is_empty()).then_some(command);
            }
            if let Some(command) = over.command {
                let at = command.span().start;
                let command = command.into_inner();
                if command.trim().is_empty() {
                    return Err(error(at, format!("{key}.command"), "must not be empty"));
                }
                upstream.command = Some(command);
            }
            match upstream.kind {
                Kind::ClaudeCli => {
                    if upstream.command.is_none() {
                        upstream.command = Some("claude".to_string());
                    }
                }
                Kind::Anthropic | Kind::Openai => {
                    if upstream.base.is_none() {
                        return Err(error(
                            span.start,
                            format!("{key}.base"),
                            "an anthropic or openai upstream needs `base` (its API's base URL)",
                        ));
                    }
                }
            }
            self.upstreams.insert(name, upstream);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn merged(text: &str) -> Result<RelayConfig, FileError> {
        #[derive(Deserialize)]
        struct Wrapper {
            relay: RelayFile,
        }
        let file: Wrapper = toml::from_str(text).expect("parses");
        let mut config = RelayConfig::default();
        config.merge(file.relay)?;
        Ok(config)
    }

    #[test]
    fn builtin_upstreams_are_overridden_key_by_key_and_new_ones_added() {
        let config = merged(
            "[relay]\nlisten = \"127.0.0.1:9\"\n[relay.upstreams.anthropic]\nsecret_cmd = \"pass x\"\n[relay.upstreams.cli]\nkind = \"claude-cli\"\n",
        )
        .unwrap();
        assert_eq!(config.listen, "127.0.0.1:9");
        let anthropic = &config.upstreams["anthropic"];
        assert_eq!(anthropic.base.as_deref(), Some("https://api.anthropic.com"));
        assert_eq!(anthropic.secret_cmd.as_deref(), Some("pass x"));
        assert_eq!(config.upstreams["cli"].command.as_deref(), Some("claude"));
        assert_eq!(
            config.upstreams["cli"].env_var("KEY"),
            "AGENT_RELAY_CLI_KEY"
        );
    }

    #[test]
    fn a_new_http_upstream_needs_a_kind_and_a_base() {
        let err = merged("[relay.upstreams.x]\nbase = \"https://x\"\n").unwrap_err();
        assert_eq!(err.key, "relay.upstreams.x");
        let err = merged("[relay.upstreams.x]\nkind = \"openai\"\n").unwrap_err();
        assert_eq!(err.key, "relay.upstreams.x.base");
    }

    #[test]
    fn names_are_route_segments() {
        let err = merged("[relay.upstreams.\"a/b\"]\nkind = \"claude-cli\"\n").unwrap_err();
        assert!(err.message.contains("letters, digits"), "{}", err.message);
    }

    #[test]
    fn connection_caps_are_whole_and_positive_and_the_idle_timeout_too() {
        let config = merged(
            "[relay]\nmax_connections = 64\nmax_connections_per_address = 8\nidle_timeout_seconds = 2.5\n",
        )
        .unwrap();
        assert_eq!(config.max_connections, 64);
        assert_eq!(config.max_connections_per_address, 8);
        assert_eq!(config.idle_timeout, Duration::from_millis(2500));
        for (text, key) in [
            ("max_connections = 0", "relay.max_connections"),
            ("max_connections = 1.5", "relay.max_connections"),
            (
                "max_connections_per_address = -1",
                "relay.max_connections_per_address",
            ),
            ("idle_timeout_seconds = 0", "relay.idle_timeout_seconds"),
        ] {
            let err = merged(&format!("[relay]\n{text}\n")).unwrap_err();
            assert_eq!(err.key, key, "{text}");
        }
    }

    #[test]
    fn env_names_replace_dashes() {
        let upstream = Upstream {
            name: "claude-cli".into(),
            kind: Kind::ClaudeCli,
            base: None,
            secret_cmd: None,
            command: None,
        };
        assert_eq!(upstream.env_var("BASE"), "AGENT_RELAY_CLAUDE_CLI_BASE");
    }
}
