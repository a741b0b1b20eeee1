//! The listener and the routes. A request whose `Host` is not the address listened on is
//! refused (421) before anything; `/?token=…` (the one-time URL) and `/?once=…` open a
//! session, set its cookie and redirect to `/`; every other route needs the cookie or the
//! relay's token, or answers 401.

use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::Response;
use axum::routing::{get, post};
use http::{HeaderValue, StatusCode, header};
use hyper_util::rt::{TokioIo, TokioTimer};
use tower::ServiceExt as _;

use super::access::{Access, COOKIE, SESSION_FOR, host_is_served, query_value};
use super::{documents, page};
use crate::access::Token;
use crate::config::Config;

/// What every handler shares.
pub struct Dashboard {
    pub config: Config,
    access: Access,
    /// The address listened on, which a request's `Host` must name.
    listening: IpAddr,
    /// Where the page is: `""` for `agent --dashboard` (the page at `/`), `/dashboard`
    /// under the relay. Every link, the redirect and the cookie's path start with it.
    base: &'static str,
    /// The ledger's sums, kept between loads.
    usage: std::sync::Mutex<crate::usage::follow::Follower>,
    /// The per-page tokens a "probe now" form may carry (the last few pages served).
    forms: std::sync::Mutex<std::collections::VecDeque<String>>,
}

/// How many pages' "probe now" forms stay valid at once.
const FORMS_KEPT: usize = 32;

impl Dashboard {
    pub fn new(
        config: &Config,
        access: Access,
        base: &'static str,
        listening: IpAddr,
    ) -> Dashboard {
        Dashboard {
            config: config.clone(),
            access,
            listening,
            base,
            usage: std::sync::Mutex::default(),
            forms: std::sync::Mutex::new(std::collections::VecDeque::new()),
        }
    }

    /// The page's own address.
    fn home(&self) -> &'static str {
        if self.base.is_empty() { "/" } else { self.base }
    }

    /// 421 for a request that does not name the address the page is served on: the first
    /// thing every route asks.
    fn misdirected(&self, request: &Request) -> Option<Response> {
        (!host_is_served(request.headers(), request.uri(), self.listening)).then(|| {
            text(
                StatusCode::MISDIRECTED_REQUEST,
                "421: the dashboard answers only at the address it listens on (an IP address or localhost); open the URL it printed\n",
            )
        })
    }
}

/// Runs the dashboard until SIGTERM or SIGINT; with `open`, in the browser too.
pub fn serve(config: &Config, addr: SocketAddr, open: bool) -> anyhow::Result<ExitCode> {
    let login = Token::fresh("agd-")?;
    // The relay's token opens the page too, when there is one; without it the printed
    // URL is enough.
    let relay = Token::load_relay().ok();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("dashboard")
        .enable_all()
        .build()
        .context("starting the dashboard's runtime")?;
    let result = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("listening on {addr}"))?;
        let local = listener.local_addr()?;
        // The one line that shows the login token (stdout, unredacted): everywhere else it
        // is redacted like any secret. It opens one session, then is spent.
        let url_token = login.expose().to_string();
        let dashboard = Arc::new(Dashboard::new(
            config,
            Access::new(Some(login), relay),
            "",
            local.ip(),
        ));
        let host = match local.ip() {
            ip if ip.is_unspecified() && ip.is_ipv4() => "127.0.0.1".to_string(),
            ip if ip.is_unspecified() => "[::1]".to_string(),
            IpAddr::V6(ip) => format!("[{ip}]"),
            IpAddr::V4(ip) => ip.to_string(),
        };
        crate::term::emit(&format!(
            "dashboard: http://{host}:{}/?token={url_token}\n",
            local.port(),
        ))?;
        crate::term::notice(&format!(
            "dashboard: the URL above opens one browser session ({} hours) and then no more; Ctrl-C stops it",
            SESSION_FOR.as_secs() / 3600
        ));
        if open {
            let once = dashboard.access.issue_once()?;
            super::browser::open(&format!("http://{host}:{}/?once={once}", local.port()));
        }
        accept_loop(&listener, &dashboard).await
    });
    runtime.shutdown_timeout(Duration::from_secs(1));
    result.map(|()| ExitCode::SUCCESS)
}

/// The page's routes under `dashboard.base`. Alone (`agent --dashboard`) anything else is
/// a 404; under the relay, anything else is the relay's.
pub fn router(dashboard: &Arc<Dashboard>) -> Router {
    let base = dashboard.base;
    Router::new()
        .route(dashboard.home(), get(index))
        .route(&format!("{base}/status.json"), get(status_json))
        .route(&format!("{base}/usage.json"), get(usage_json))
        .route(&format!("{base}/budget.json"), get(budget_json))
        .route(&format!("{base}/probe"), post(probe))
        .with_state(Arc::clone(dashboard))
}

async fn accept_loop(
    listener: &tokio::net::TcpListener,
    dashboard: &Arc<Dashboard>,
) -> anyhow::Result<()> {
    let shown = Arc::clone(dashboard);
    let router = router(dashboard).fallback(move |request: Request| {
        let shown = Arc::clone(&shown);
        async move {
            shown
                .misdirected(&request)
                .unwrap_or_else(|| text(StatusCode::NOT_FOUND, "404\n"))
        }
    });
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(Duration::from_secs(10));
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .context("watching SIGTERM")?;
    let mut connections = tokio::task::JoinSet::new();
    while let Some(stream) =
        crate::access::next_connection(listener, &mut terminate, "dashboard").await
    {
        while connections.try_join_next().is_some() {}
        let router = router.clone();
        let service =
            hyper::service::service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
                let router = router.clone();
                async move {
                    Ok::<_, Infallible>(
                        router
                            .oneshot(request.map(Body::new))
                            .await
                            .unwrap_or_else(|never| match never {}),
                    )
                }
            });
        let connection = http.serve_connection(TokioIo::new(stream), service);
        connections.spawn(async move {
            let _ = connection.await;
        });
    }
    // A page being read is no call in flight: nothing to finish.
    connections.abort_all();
    crate::term::notice("dashboard stopped");
    Ok(())
}

fn unauthorized() -> Response {
    text(
        StatusCode::UNAUTHORIZED,
        "401: open a one-time URL (agent --dashboard prints a new one at each start; each works once), or send the relay token as a bearer\n",
    )
}

fn text(status: StatusCode, body: &'static str) -> Response {
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    no_store(response)
}

fn no_store(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    response
}

/// To the page; with `session`, its cookie set: as tight as plain http on loopback allows
/// (no `Secure` without TLS, and no cookie is kept to one port, which is why its value
/// opens nothing but this process's page).
fn redirect_home(home: &'static str, session: Option<&str>) -> Response {
    let mut response = Response::new(Body::empty());
    *response.status_mut() = StatusCode::SEE_OTHER;
    response
        .headers_mut()
        .insert(header::LOCATION, HeaderValue::from_static(home));
    if let Some(session) = session
        && let Ok(value) = HeaderValue::from_str(&format!(
            "{COOKIE}={session}; HttpOnly; SameSite=Strict; Path={home}; Max-Age={}",
            SESSION_FOR.as_secs()
        ))
    {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    no_store(response)
}

/// `/`: the one-time URL's token (or `?once=`) opens a session, whose cookie is set as the
/// token leaves the address bar; with a session or the relay token, the page.
async fn index(State(dashboard): State<Arc<Dashboard>>, request: Request) -> Response {
    if let Some(refused) = dashboard.misdirected(&request) {
        return refused;
    }
    let query = request.uri().query();
    let login = if let Some(once) = query_value(query, "once") {
        Some(dashboard.access.log_in_once(once))
    } else {
        query_value(query, "token").map(|token| dashboard.access.log_in(token))
    };
    match login {
        Some(Ok(Some(session))) => return redirect_home(dashboard.home(), Some(&session)),
        Some(Ok(None)) => return unauthorized(),
        Some(Err(_)) => return text(StatusCode::INTERNAL_SERVER_ERROR, "no randomness\n"),
        None => {}
    }
    if !dashboard.access.admits(request.headers()) {
        return unauthorized();
    }
    let Ok(nonce) = crate::access::generate("") else {
        return text(StatusCode::INTERNAL_SERVER_ERROR, "no randomness\n");
    };
    let form = nonce[..32].to_string();
    {
        let mut forms = dashboard
            .forms
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if forms.len() >= FORMS_KEPT {
            forms.pop_front();
        }
        forms.push_back(form.clone());
    }
    let shown = Arc::clone(&dashboard);
    let html = tokio::task::spawn_blocking(move || {
        page::render(&shown.config, &shown.usage, shown.base, &form, &nonce[32..])
    })
    .await;
    let Ok((html, nonce)) = html else {
        return text(
            StatusCode::INTERNAL_SERVER_ERROR,
            "the page could not be drawn\n",
        );
    };
    let mut response = Response::new(Body::from(html));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    if let Ok(csp) = HeaderValue::from_str(&page::content_security_policy(&nonce)) {
        headers.insert(header::CONTENT_SECURITY_POLICY, csp);
    }
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    no_store(response)
}

async fn document(
    dashboard: Arc<Dashboard>,
    admitted: bool,
    make: fn(&Dashboard) -> anyhow::Result<serde_json::Value>,
) -> Response {
    if !admitted {
        return unauthorized();
    }
    let made = tokio::task::spawn_blocking(move || make(&dashboard)).await;
    let (status, body) = match made {
        Ok(Ok(value)) => (StatusCode::OK, value),
        Ok(Err(err)) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            serde_json::json!({"error": crate::redact::redact(&format!("{err:#}"))}),
        ),
        Err(_) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            serde_json::json!({"error": "the document could not be made"}),
        ),
    };
    let mut response = Response::new(Body::from(
        serde_json::to_string_pretty(&body).unwrap_or_default(),
    ));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    no_store(response)
}

async fn status_json(State(dashboard): State<Arc<Dashboard>>, request: Request) -> Response {
    if let Some(refused) = dashboard.misdirected(&request) {
        return refused;
    }
    let admitted = dashboard.access.admits(request.headers());
    document(dashboard, admitted, |shown| {
        Ok(documents::status(&shown.config))
    })
    .await
}

async fn usage_json(State(dashboard): State<Arc<Dashboard>>, request: Request) -> Response {
    if let Some(refused) = dashboard.misdirected(&request) {
        return refused;
    }
    let admitted = dashboard.access.admits(request.headers());
    document(dashboard, admitted, |shown| {
        documents::usage(&shown.config, &shown.usage)
    })
    .await
}

async fn budget_json(State(dashboard): State<Arc<Dashboard>>, request: Request) -> Response {
    if let Some(refused) = dashboard.misdirected(&request) {
        return refused;
    }
    let admitted = dashboard.access.admits(request.headers());
    document(dashboard, admitted, |shown| {
        Ok(documents::budget(&shown.config))
    })
    .await
}

/// "probe now": the page's form, with its per-page token; probes as `--status` does
/// (budgeted), then back to the page.
async fn probe(State(dashboard): State<Arc<Dashboard>>, request: Request) -> Response {
    if let Some(refused) = dashboard.misdirected(&request) {
        return refused;
    }
    if !dashboard.access.admits(request.headers()) {
        return unauthorized();
    }
    let (_, body) = request.into_parts();
    let Ok(body) = axum::body::to_bytes(body, 4096).await else {
        return text(StatusCode::BAD_REQUEST, "400: the form could not be read\n");
    };
    let body = String::from_utf8_lossy(&body);
    let presented = body
        .split('&')
        .find_map(|pair| pair.strip_prefix("form="))
        .unwrap_or("");
    let known = {
        let mut forms = dashboard
            .forms
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let token = Token::from_text(presented);
        let found = forms.iter().position(|f| token.matches(f.as_bytes()));
        found.map(|at| forms.remove(at)).is_some()
    };
    if presented.is_empty() || !known {
        return text(
            StatusCode::FORBIDDEN,
            "403: this form is stale or not the dashboard's; reload the page and press \"probe now\" again\n",
        );
    }
    let home = dashboard.home();
    let _ = tokio::task::spawn_blocking(move || documents::probe(&dashboard.config)).await;
    redirect_home(home, None)
}
