//! The relay's shared state: one [`Relay`] per `agent --relay serve`, built once when it
//! listens and held by every request handler — its configuration, the relay token and the
//! named clients, the upstream keys, the books, the gate, the HTTP client, and the answers
//! to "where does this upstream live" and "which health targets does this call speak for".

use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioTimer};

use super::accounting::Books;
use super::gate::Gate;
use super::keys::{Key, Keys};
use super::target::{Base, Target};
use super::token::Token;
use crate::config::Config;
use crate::config::relay::{Kind, RelayConfig, Upstream};
use crate::state::relay_clients::Clients;
use crate::state::target::Target as HealthTarget;

pub type HttpClient = Client<hyper_rustls::HttpsConnector<HttpConnector>, Full<Bytes>>;

/// Everything a request handler needs, shared by all of them.
pub struct Relay {
    pub config: RelayConfig,
    pub token: Token,
    /// The named clients, read afresh on each request that is not the team token's.
    pub clients: Clients,
    pub keys: Keys,
    pub books: Books,
    /// What shared health says before a call goes upstream.
    pub gate: Gate,
    pub client: HttpClient,
    /// Base URLs after `AGENT_RELAY_<NAME>_BASE`, parsed (`claude-cli` upstreams have none).
    bases: BTreeMap<String, Base>,
    /// How clients on this host reach the relay: `http://127.0.0.1:18790`.
    front: String,
    /// The address bound, for absolute-form targets naming the relay itself.
    local: SocketAddr,
    /// Set when the stop's grace period is over and the calls still in flight are cut.
    cutting: AtomicBool,
}

impl Relay {
    /// The state of a relay bound to `local`: its books and health under `state_dir`, its
    /// upstreams' parsed `bases`.
    pub fn open(
        config: &Config,
        state_dir: &Path,
        token: Token,
        clients: Clients,
        keys: Keys,
        bases: BTreeMap<String, Base>,
        local: SocketAddr,
    ) -> Relay {
        let front_ip = match local.ip() {
            ip if ip.is_unspecified() && ip.is_ipv4() => "127.0.0.1".to_string(),
            ip if ip.is_unspecified() => "[::1]".to_string(),
            IpAddr::V6(ip) => format!("[{ip}]"),
            IpAddr::V4(ip) => ip.to_string(),
        };
        Relay {
            client: http_client(&config.relay),
            books: Books::open(state_dir, config.budget, config.policy()),
            gate: Gate::new(crate::state::health::Store::new(state_dir)),
            keys,
            clients,
            front: format!("http://{front_ip}:{}", local.port()),
            config: config.relay.clone(),
            token,
            bases,
            local,
            cutting: AtomicBool::new(false),
        }
    }

    /// How clients on this host reach the relay: `http://127.0.0.1:18790`.
    pub fn front(&self) -> &str {
        &self.front
    }

    /// The stop's grace period is over: the calls still in flight are being cut.
    pub fn begin_cutting(&self) {
        self.cutting.store(true, Ordering::Relaxed);
    }

    /// Whether a call ending now is being cut by the relay's stop.
    pub fn is_cutting(&self) -> bool {
        self.cutting.load(Ordering::Relaxed)
    }

    /// The relay itself: a loopback name or address, or the address it is bound to.
    pub fn is_own_host(&self, host: &str) -> bool {
        let host = host.trim_start_matches('[').trim_end_matches(']');
        if host.eq_ignore_ascii_case("localhost") {
            return true;
        }
        match host.parse::<IpAddr>() {
            Ok(ip) => ip.is_loopback() || ip == self.local.ip(),
            Err(_) => false,
        }
    }

    /// The upstream's base URL, without a trailing slash.
    pub fn base(&self, upstream: &Upstream) -> &str {
        self.bases.get(&upstream.name).map_or("", Base::as_str)
    }

    /// The URL a checked target goes to on its upstream (`None`: the upstream has no base).
    pub fn upstream_uri(&self, upstream: &Upstream, target: &Target) -> Option<http::Uri> {
        self.bases.get(&upstream.name)?.join(target).ok()
    }

    /// The health targets a call to `path` with `model` speaks for, in the naming of
    /// `probe::plan` (`kind endpoint model @credential-source`):
    ///
    /// - the upstream as the relay calls it (`anthropic https://api.anthropic.com M
    ///   @env:AGENT_RELAY_ANTHROPIC_KEY`), which a launch probing the same endpoint with
    ///   the same credential variable shares;
    /// - for an `anthropic` upstream, the relay as the built-in `claude-proxy` rungs probe
    ///   it when `AGENT_PROXY_URL` is this relay (`anthropic http://127.0.0.1:18790/NAME M
    ///   @env:AGENT_PROXY_KEY`): the target a launch on this host skips when the relay has
    ///   just seen a quota.
    ///
    /// Only calls that generate (messages, chat completions, responses) and name a model
    /// speak for a target.
    pub fn targets(
        &self,
        upstream: &Upstream,
        key: &Key,
        path: &str,
        model: Option<&str>,
    ) -> Vec<String> {
        let Some(model) = model.filter(|m| !m.is_empty()) else {
            return Vec::new();
        };
        let suffixes: &[&str] = match upstream.kind {
            Kind::Anthropic => &["/v1/messages"],
            Kind::Openai => &["/chat/completions", "/responses", "/completions"],
            Kind::ClaudeCli => &[],
        };
        let Some(prefix) = suffixes.iter().find_map(|s| path.strip_suffix(s)) else {
            return Vec::new();
        };
        let mut targets = vec![HealthTarget {
            kind: upstream.kind.as_str().to_string(),
            endpoint: format!("{}{prefix}", self.base(upstream)),
            model: Some(model.to_string()),
            source: key.source.to_string(),
        }];
        if upstream.kind == Kind::Anthropic {
            // The credential the built-in claude-proxy rungs name (`env:AGENT_PROXY_KEY`).
            targets.push(HealthTarget {
                kind: "anthropic".to_string(),
                endpoint: format!("{}/{}{prefix}", self.front, upstream.name),
                model: Some(model.to_string()),
                source: "env:AGENT_PROXY_KEY".to_string(),
            });
        }
        targets.iter().map(HealthTarget::to_string).collect()
    }
}

/// The client every upstream call goes through. `TCP_NODELAY` on the upstream side too:
/// without it Nagle's algorithm meets delayed ACKs and adds ~40 ms to every small request.
fn http_client(config: &RelayConfig) -> HttpClient {
    let mut http = HttpConnector::new();
    http.set_nodelay(true);
    http.set_connect_timeout(Some(config.connect_timeout));
    http.enforce_http(false);
    let https = hyper_rustls::HttpsConnectorBuilder::new()
        .with_webpki_roots()
        .https_or_http()
        .enable_http1()
        .wrap_connector(http);
    Client::builder(TokioExecutor::new())
        .pool_idle_timeout(Duration::from_secs(60))
        .timer(TokioTimer::new())
        .build(https)
}
