//! `agent --relay serve`: the listener, the routes and the connection rules. The tokio
//! runtime is built here and nowhere else — the launcher never starts one.
//!
//! - Loopback only, unless `--allow-remote`.
//! - `TCP_NODELAY` on every socket, client and upstream side: without it Nagle's algorithm
//!   meets delayed ACKs and adds ~40 ms to every small answer.
//! - A client must send its request (headers and body) within `client_timeout_seconds`;
//!   bodies over `body_limit_mb` get 413.
//! - Connections are capped in total and per remote address, and idle ones are closed
//!   after `idle_timeout_seconds` or to make room ([`super::connections`]).
//! - Origin-form and absolute-form targets are accepted, but an absolute-form target naming
//!   any other host is refused: the relay is never an open proxy.
//! - The path is checked before anything is used ([`Target`]): one leading `/`, no empty or
//!   dot segments; the upstream URL is built from the base's parts.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::Response;
use axum::routing::get;
use http::{Method, StatusCode};
use http_body_util::{BodyExt as _, Limited};
use hyper_util::rt::{TokioIo, TokioTimer};
use tower::ServiceExt as _;

use super::answer::{self, Readiness};
use super::caller::{Unadmitted, admit};
use super::connections::{BusyBody, Connections, Limits, Refused};
use super::keys::Keys;
use super::shared::Relay;
use super::target::{Base, Target};
use super::token::Token;
use crate::config::Config;
use crate::config::relay::Kind;
use crate::exit_codes::usage;
use crate::state::relay_clients::Clients;

/// Runs the relay until SIGTERM or SIGINT.
pub fn serve(
    config: &Config,
    listen: Option<&str>,
    allow_remote: bool,
) -> anyhow::Result<ExitCode> {
    let relay_config = &config.relay;
    let listen = listen.unwrap_or(&relay_config.listen).to_string();
    let addr = crate::access::listen_address("relay.listen", &listen, allow_remote)?;
    let token = Token::load_relay()?;
    if let Some(keys) = crate::paths::config_dir().map(|dir| dir.join(super::install::ENV_FILE)) {
        crate::access::warn_if_others_read(
            &keys,
            "the relay's keys",
            "replace those keys with their vendors",
        );
    }
    let mut bases = BTreeMap::new();
    for upstream in relay_config.upstreams.values() {
        if upstream.kind == Kind::ClaudeCli {
            continue;
        }
        let var = upstream.env_var("BASE");
        let (base, from) = match std::env::var(&var).ok().filter(|b| !b.trim().is_empty()) {
            Some(base) => (base, var),
            None => (
                upstream.base.clone().unwrap_or_default(),
                format!("relay.upstreams.{}.base", upstream.name),
            ),
        };
        let base =
            Base::parse(&base).map_err(|why| usage(format!("{from} = \"{base}\": {why}")))?;
        bases.insert(upstream.name.clone(), base);
    }
    let state_dir = crate::paths::state_dir();
    crate::state::file::ensure_state_dir(&state_dir)?;
    let clients = Clients::new(&state_dir);
    let keys = Keys::default();
    // A store away at the start cannot say; each such call asks again (`subscriptions`).
    if clients.list().is_ok_and(|list| !list.is_empty()) {
        let personal = super::subscriptions::personal_upstreams(relay_config, &keys);
        if !personal.is_empty() {
            return Err(usage(format!(
                "refusing to start: {}",
                super::subscriptions::why_refused(&personal)
            )));
        }
    }

    let open_files = super::connections::raise_open_file_limit();
    let limits = Limits::fitted(relay_config, open_files);
    if limits.total < relay_config.max_connections {
        crate::term::warn(&format!(
            "relay: the open-file limit is {open_files} (RLIMIT_NOFILE, already raised to its hard limit), enough for {} connections at once rather than relay.max_connections = {}; raise the hard limit (`LimitNOFILE=` in a systemd unit) for more",
            limits.total, relay_config.max_connections
        ));
    }

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(std::thread::available_parallelism().map_or(2, |n| n.get().min(8)))
        .thread_name("relay")
        .enable_all()
        .build()
        .context("starting the relay's runtime")?;
    let result = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("listening on {addr}"))?;
        let local = listener.local_addr()?;
        let relay = Arc::new(Relay::open(
            config, &state_dir, token, clients, keys, bases, local,
        ));
        // Before the line that says it listens: an upstream with nowhere to read a key from
        // answers every call 503, which nothing else says until the first call.
        for why in relay.config.upstreams.values().filter_map(super::keys::missing) {
            crate::term::warn(&format!(
                "{why}, then restart the relay; until then its calls answer 503 relay_credentials_missing"
            ));
        }
        announce(&relay, &state_dir);
        // The page, behind the relay's token, when `[relay] dashboard = true`.
        let pages = relay
            .config
            .dashboard
            .then(|| crate::dashboard::under_relay(config, relay.token.clone(), local.ip()));
        let outcome = accept_loop(&listener, &relay, pages, limits).await;
        relay.books.close();
        outcome
    });
    runtime.shutdown_timeout(Duration::from_secs(1));
    result.map(|()| ExitCode::SUCCESS)
}

fn announce(relay: &Relay, state_dir: &Path) {
    let names: Vec<String> = relay
        .config
        .upstreams
        .values()
        .map(|u| format!("/{} ({})", u.name, u.kind.as_str()))
        .collect();
    crate::term::notice(&format!(
        "relay listening on {} — routes {}; calls recorded in {}",
        relay.front(),
        names.join(", "),
        state_dir.join("usage.jsonl").display()
    ));
}

async fn accept_loop(
    listener: &tokio::net::TcpListener,
    relay: &Arc<Relay>,
    pages: Option<Router>,
    limits: Limits,
) -> anyhow::Result<()> {
    let mut router = Router::new()
        .route("/healthz", get(healthz))
        .fallback(route)
        .with_state(Arc::clone(relay));
    if let Some(pages) = pages {
        router = router.merge(pages);
    }
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let caps = Connections::new(limits);
    let over_cap = answer::over_cap();
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(relay.config.client_timeout)
        .keep_alive(true);
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .context("watching SIGTERM")?;
    // Every connection's task, so a stop can cut what is still running and see it gone.
    let mut connections = tokio::task::JoinSet::new();
    while let Some(stream) = crate::access::next_connection(listener, &mut terminate, "relay").await
    {
        while connections.try_join_next().is_some() {}
        let Ok(peer) = stream.peer_addr() else {
            continue;
        };
        let slot = match caps.admit(peer.ip()) {
            Ok(slot) => slot,
            Err(Refused) => {
                // Never waiting: what the client sent already is read first, or closing
                // with it unread would reset the connection before the answer is seen.
                let mut sent = [0u8; 4096];
                for _ in 0..16 {
                    if !matches!(stream.try_read(&mut sent), Ok(n) if n > 0) {
                        break;
                    }
                }
                let _ = stream.try_write(&over_cap);
                continue;
            }
        };
        let router = router.clone();
        let relay = Arc::clone(relay);
        let held = slot.clone();
        let service =
            hyper::service::service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
                let router = router.clone();
                let relay = Arc::clone(&relay);
                let busy = held.begin();
                async move {
                    let Some(busy) = busy else {
                        return Ok::<_, Infallible>(answer::closing());
                    };
                    if let Some(refusal) = refuse_target(&relay, &request) {
                        return Ok(refusal);
                    }
                    let response = router.oneshot(request.map(Body::new)).await?;
                    // Busy until the answer's last byte is sent (or the body is dropped).
                    Ok(response.map(|body| Body::new(BusyBody::new(body, busy))))
                }
            });
        let connection = http.serve_connection(TokioIo::new(stream), service);
        let watched = graceful.watch(connection);
        connections.spawn(slot.serve(watched));
    }
    let grace = relay.config.stop_grace;
    crate::term::notice(&format!(
        "relay stopping: finishing the calls in flight ({:.1} s at most)",
        grace.as_secs_f64()
    ));
    if tokio::time::timeout(grace, graceful.shutdown())
        .await
        .is_err()
    {
        // Dropping a connection drops its call, which hands its ledger line (`relay_stopped`)
        // to the books; they are written before the relay exits.
        relay.begin_cutting();
        connections.abort_all();
        let mut cut = 0;
        while let Some(ended) = connections.join_next().await {
            cut += usize::from(ended.is_err_and(|e| e.is_cancelled()));
        }
        crate::term::notice(&format!(
            "relay stopping: cut {cut} connection(s) still busy after {:.1} s",
            grace.as_secs_f64()
        ));
    }
    Ok(())
}

/// `CONNECT`, and absolute-form targets naming another host, are refused before anything
/// else: whatever their path, the relay is not a proxy for the world.
fn refuse_target<B>(relay: &Relay, request: &hyper::Request<B>) -> Option<Response> {
    if request.method() == Method::CONNECT {
        return Some(answer::error(
            StatusCode::METHOD_NOT_ALLOWED,
            "relay_not_a_proxy",
            "relay: CONNECT is not served; the relay forwards only to its configured upstreams",
        ));
    }
    let host = request.uri().host()?;
    if relay.is_own_host(host) {
        return None;
    }
    Some(answer::error(
        StatusCode::FORBIDDEN,
        "relay_not_a_proxy",
        &format!(
            "relay: the request names the host \"{host}\"; the relay forwards only to its configured upstreams, by path"
        ),
    ))
}

/// `GET /healthz`: `{"ok":true}` for anyone; with the token, each upstream's kind and
/// whether its key (or CLI) is there — true or false, never the key.
async fn healthz(State(relay): State<Arc<Relay>>, request: Request) -> Response {
    let mut upstreams = None;
    if admit(&relay, request.headers()).await.is_ok() {
        let probe = Arc::clone(&relay);
        let found = tokio::task::spawn_blocking(move || {
            probe
                .config
                .upstreams
                .values()
                .map(|upstream| {
                    let ready = match upstream.kind {
                        Kind::ClaudeCli => {
                            let command = upstream.command.as_deref().unwrap_or("claude");
                            crate::backend::discover::find(command).is_some()
                        }
                        _ => probe.keys.get(upstream).is_ok(),
                    };
                    let kind = upstream.kind;
                    (upstream.name.clone(), Readiness { kind, ready })
                })
                .collect()
        })
        .await
        .unwrap_or_default();
        upstreams = Some(found);
    }
    answer::health(upstreams)
}

/// `/{upstream}/…`: the token, the upstream, the body's size and time, then the upstream's
/// own kind of forwarding.
async fn route(State(relay): State<Arc<Relay>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let caller = match admit(&relay, &parts.headers).await {
        Ok(caller) => caller,
        Err(Unadmitted::Unknown) => {
            return answer::error(
                StatusCode::UNAUTHORIZED,
                "authentication_error",
                "relay: missing or wrong relay token (send it as x-api-key or Authorization: Bearer)",
            );
        }
        Err(Unadmitted::StoreDown(why)) => {
            return answer::error(
                StatusCode::SERVICE_UNAVAILABLE,
                "store_unavailable",
                &format!(
                    "relay: {why}, and it holds the named clients' tokens; nothing was sent upstream"
                ),
            );
        }
    };
    let target = match Target::parse(&parts.uri) {
        Ok(target) => target,
        Err(why) => {
            return answer::error(
                StatusCode::BAD_REQUEST,
                "invalid_request_error",
                &format!(
                    "relay: {why}; the relay forwards only /{{upstream}}/… paths of plain segments, and nothing was sent upstream"
                ),
            );
        }
    };
    let name = target.name.as_str();
    let Some(upstream) = relay.config.upstreams.get(name).cloned() else {
        let known: Vec<&str> = relay.config.upstreams.keys().map(String::as_str).collect();
        return answer::error(
            StatusCode::NOT_FOUND,
            "not_found_error",
            &format!(
                "relay: no upstream named \"{name}\" (routes: /{}/…)",
                known.join("/…, /")
            ),
        );
    };

    let limit = relay.config.body_limit;
    let declared = parts
        .headers
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit) {
        return answer::too_large(limit);
    }
    let limited = Limited::new(body, usize::try_from(limit).unwrap_or(usize::MAX));
    let body = match tokio::time::timeout(relay.config.client_timeout, limited.collect()).await {
        Ok(Ok(collected)) => collected.to_bytes(),
        Ok(Err(err)) if err.is::<http_body_util::LengthLimitError>() => {
            return answer::too_large(limit);
        }
        Ok(Err(_)) => {
            return answer::error(
                StatusCode::BAD_REQUEST,
                "invalid_request_error",
                "relay: the request body could not be read",
            );
        }
        Err(_) => {
            return answer::error(
                StatusCode::REQUEST_TIMEOUT,
                "request_timeout",
                &format!(
                    "relay: the request body did not arrive within {}s",
                    relay.config.client_timeout.as_secs()
                ),
            );
        }
    };
    match upstream.kind {
        Kind::ClaudeCli => {
            super::claude_cli::answer(relay, &upstream, &caller, parts, target.rest(), body).await
        }
        Kind::Anthropic | Kind::Openai => {
            super::proxy::forward(relay, &upstream, &caller, parts, &target, body).await
        }
    }
}
