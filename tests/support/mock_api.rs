//! An in-process mock of the Anthropic, `OpenAI` and Gemini HTTP APIs on `127.0.0.1:0`.
//!
//! Plain std: one thread accepts, one thread serves each connection (HTTP/1.1 with
//! keep-alive, `Content-Length` or chunked request bodies, `Connection: close`).
//! Unscripted calls succeed in the wire format of the route they hit, streaming (real SSE,
//! one flushed chunk per event) when the request asks for it. Tests script failures with
//! [`Rule`]s; the most recently added rule that matches wins.
//!
//! ```ignore
//! let api = MockApi::start();
//! api.on(Rule::model("claude-opus-5").reply(Reply::anthropic_error(429, "rate_limit_error", "slow down").header("retry-after", "90")));
//! // ... run agent with ANTHROPIC_BASE_URL = api.url() ...
//! assert_eq!(api.posts_for_model("claude-opus-5"), 1);
//! ```
//!
//! Routes (rules apply to every route except the `HEAD /` / `GET /` warm-ups):
//!
//! | route | API | model from | credential from |
//! |---|---|---|---|
//! | `POST /v1/messages` (any query) | Anthropic | body `model` | `x-api-key`, `Authorization: Bearer` |
//! | `POST [/v1]/chat/completions` | `OpenAI` chat | body `model` | `Authorization: Bearer` |
//! | `POST [/v1]/responses` | `OpenAI` Responses | body `model` | `Authorization: Bearer` |
//! | `GET [/v1]/models`, `GET /v1beta/models` | model list (OpenAI/Anthropic, Gemini) | — | as above |
//! | `POST /v1beta/models/{m}:generateContent`, `:streamGenerateContent` | Gemini | path | `x-goog-api-key`, `?key=` |
//! | `GET /api/oauth/usage` | Claude login's windows (research §1.2): 401 without `Authorization: Bearer sk-ant-oat…` and `anthropic-beta: oauth-2025-04-20`, whatever the rules say; else by default 200 with [`oauth_usage_body`] at 12 % / 30 % | — | `Authorization: Bearer` |
//! | `HEAD /`, `GET /` | warm-up: 200, empty | — | — |
//!
//! Anything else answers 404 unless a rule matches it.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

/// The mock server. Dropping it stops accepting, closes every open connection and
/// releases handlers that hang or delay.
pub struct MockApi {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept_thread: Option<thread::JoinHandle<()>>,
}

/// One request as the mock received it.
#[derive(Clone, Debug)]
pub struct Request {
    pub method: String,
    /// The path without the query string, e.g. `/v1/messages`.
    pub path: String,
    /// The query string without `?` (empty when there is none), e.g. `beta=true`.
    pub query: String,
    /// Header names as sent (compare with [`Request::header`], which ignores case).
    pub headers: Vec<(String, String)>,
    pub body: String,
    /// From the JSON body's `model`, or from the Gemini path.
    pub model: Option<String>,
    /// From `x-api-key`, `x-goog-api-key`, `Authorization: Bearer …` or `?key=`.
    pub credential: Option<String>,
}

impl Request {
    /// The first header with this name, ignoring case.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body parsed as JSON (`Value::Null` when it is not JSON).
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }

    /// Whether this is an API call rather than a `HEAD /` / `GET /` warm-up.
    pub fn is_post(&self) -> bool {
        self.method == "POST"
    }
}

/// Token counts reported by a success answer. `input` is uncached input; `output`
/// includes `reasoning`. Each API reports them its own way (`OpenAI` and Gemini count
/// cached tokens inside the prompt total, Gemini counts thoughts apart from candidates).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Usage {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    pub reasoning: u64,
}

impl Default for Usage {
    fn default() -> Self {
        Usage {
            input: 8,
            output: 1,
            cache_read: 0,
            cache_write: 0,
            reasoning: 0,
        }
    }
}

/// What to answer. Build with [`Reply::ok`], [`Reply::status`], the `*_error`
/// constructors, [`Reply::hang`] or [`Reply::close`], then refine with the methods.
#[derive(Clone, Debug)]
pub struct Reply {
    kind: ReplyKind,
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    delay: Duration,
    usage: Usage,
    event_gap: Duration,
    stall_after: Option<usize>,
    split_stream: Option<(String, usize)>,
    /// Answer only once this many requests have reached the mock (see [`Reply::together`]).
    together: Option<usize>,
    /// Answer only once the test released this gate (see [`Reply::held`]).
    held: Option<String>,
    /// For a streamed success: after this many events, go on only once the test released
    /// the gate (see [`Reply::pause_after`]).
    pause_after: Option<(usize, String)>,
}

/// A tool call in an Anthropic answer.
#[derive(Clone, Debug)]
struct ToolUse {
    name: String,
    input: Value,
}

#[derive(Clone, Debug)]
enum ReplyKind {
    /// Success in the request's own wire format; on the Anthropic route, `tool` adds a
    /// `tool_use` block after the text (the answer then stops for the tool).
    Success { text: String, tool: Option<ToolUse> },
    /// Exactly the status, headers and body given.
    Custom,
    /// Read the request, never answer (until the client gives up or the mock is dropped).
    Hang,
    /// Read the request, then close the connection without a word.
    Close,
}

impl Reply {
    /// Success in the request's own format, text `ok`; streams when the request asks.
    pub fn ok() -> Self {
        Self::ok_text("ok")
    }

    /// Success with this answer text.
    pub fn ok_text(text: &str) -> Self {
        Self::new(
            ReplyKind::Success {
                text: text.to_owned(),
                tool: None,
            },
            200,
        )
    }

    /// An Anthropic answer that says `text`, then calls the tool `name` with `input`
    /// (`stop_reason: "tool_use"`), streamed as the API streams it (the input as
    /// `input_json_delta`s): a CLI runs the tool and asks again with its result. Other
    /// routes answer `text` alone.
    pub fn anthropic_tool_use(text: &str, name: &str, input: Value) -> Self {
        Self::new(
            ReplyKind::Success {
                text: text.to_owned(),
                tool: Some(ToolUse {
                    name: name.to_owned(),
                    input,
                }),
            },
            200,
        )
    }

    /// A bare status with an empty body; add `.body(..)`, `.json(..)`, `.header(..)`.
    pub fn status(status: u16) -> Self {
        Self::new(ReplyKind::Custom, status)
    }

    /// Anthropic's error shape: `{"type":"error","error":{"type":…,"message":…}}`.
    pub fn anthropic_error(status: u16, error_type: &str, message: &str) -> Self {
        Self::status(status).json(json!({
            "type": "error",
            "error": { "type": error_type, "message": message },
            "request_id": "req_mock_error",
        }))
    }

    /// `OpenAI`'s error shape; `code` is used as both `type` and `code`
    /// (e.g. `insufficient_quota`, `rate_limit_exceeded`, `invalid_api_key`).
    pub fn openai_error(status: u16, code: &str, message: &str) -> Self {
        Self::status(status).json(json!({
            "error": { "message": message, "type": code, "param": null, "code": code }
        }))
    }

    /// The ChatGPT backend's refusal of a Codex call at the login's usage limit: 429,
    /// `{"error":{"type":"usage_limit_reached","message":…,"plan_type":…,"resets_at":…,
    /// "resets_in_seconds":…}}`. Codex reads `type`, `plan_type` and `resets_at` (epoch
    /// seconds) of it (codex-rs `core/src/api_bridge.rs`, `map_api_error` and
    /// `UsageErrorBody`, openai/codex at 001cb8e2); the message and `resets_in_seconds` are
    /// as a third party's probe of the backend quoted them (one source). That probe also saw
    /// `x-codex-primary-*` headers, which codex turns into its `token_count` windows when
    /// present; they are left off here, so what codex says of the refusal itself is what is
    /// read (a test that wants them adds them with [`Reply::header`]).
    pub fn codex_usage_limit(plan_type: &str, resets_at: i64) -> Self {
        let now = jiff::Timestamp::now().as_second();
        Self::status(429).json(json!({
            "error": {
                "type": "usage_limit_reached",
                "message": "The usage limit has been reached",
                "plan_type": plan_type,
                "resets_at": resets_at,
                "resets_in_seconds": (resets_at - now).max(0),
            }
        }))
    }

    /// Gemini's error shape: `{"error":{"code":…,"message":…,"status":"INVALID_ARGUMENT"}}`.
    pub fn gemini_error(status: u16, grpc_status: &str, message: &str) -> Self {
        Self::status(status).json(json!({
            "error": { "code": status, "message": message, "status": grpc_status }
        }))
    }

    /// Accept and read the request, never answer; it ends when the client closes the
    /// connection (a call that timed out) or the mock is dropped.
    pub fn hang() -> Self {
        Self::new(ReplyKind::Hang, 0)
    }

    /// Accept and read the request, then close the connection without answering.
    pub fn close() -> Self {
        Self::new(ReplyKind::Close, 0)
    }

    /// The body, as given. Its content type is JSON when it looks like JSON, else text
    /// (a `.header("content-type", ..)` overrides either).
    pub fn body(mut self, body: &str) -> Self {
        self.body = body.as_bytes().to_vec();
        self
    }

    /// A JSON body with `content-type: application/json`.
    pub fn json(mut self, value: impl Into<Value>) -> Self {
        self.body = value.into().to_string().into_bytes();
        self.set_header("content-type", "application/json");
        self
    }

    /// Add a response header, replacing the mock's own header of that name if any.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Wait this long after reading the request before answering.
    pub fn delay(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    /// Hold the answer until `n` requests (this one counted) have reached the mock: a
    /// proof that a client sends them at once, with no clock in it. A client that sends
    /// them one by one is answered 503 after [`TOGETHER_PATIENCE`], as an overloaded
    /// server would, so its test fails instead of hanging.
    pub fn together(mut self, n: usize) -> Self {
        self.together = Some(n);
        self
    }

    /// Hold the answer until the test calls [`MockApi::release`] with `gate`: the call stays
    /// upstream for as long as the test needs, so what happens meanwhile (a row printed, a
    /// replica killed, a store flushed) is proved to happen while it is in flight, with no
    /// clock in it. Every reply held by one gate is let go at once; dropping the mock lets
    /// them go unanswered.
    pub fn held(mut self, gate: &str) -> Self {
        self.held = Some(gate.to_owned());
        self
    }

    /// For a streamed success: send the first `events` events, then hold the rest until the
    /// test calls [`MockApi::release`] with `gate` (a stream the client is proved to read
    /// while the upstream is still sending).
    pub fn pause_after(mut self, events: usize, gate: &str) -> Self {
        self.pause_after = Some((events, gate.to_owned()));
        self
    }

    /// Token counts for a success answer.
    pub fn usage(mut self, usage: Usage) -> Self {
        self.usage = usage;
        self
    }

    /// For a streamed success: pause this long before each event after the first.
    pub fn event_gap(mut self, gap: Duration) -> Self {
        self.event_gap = gap;
        self
    }

    /// For a streamed success: send the first `events` events, then go silent with the
    /// connection open (a stream that stalls after it started).
    pub fn stall_after(mut self, events: usize) -> Self {
        self.stall_after = Some(events);
        self
    }

    /// For a streamed success: send the whole stream as two chunks, the first ending
    /// `offset` bytes into the first occurrence of `text` (as a gateway or a TCP segment
    /// may cut an answer anywhere, not only between events).
    pub fn split_stream(mut self, text: &str, offset: usize) -> Self {
        self.split_stream = Some((text.to_owned(), offset));
        self
    }

    fn new(kind: ReplyKind, status: u16) -> Self {
        Reply {
            kind,
            status,
            headers: Vec::new(),
            body: Vec::new(),
            delay: Duration::ZERO,
            together: None,
            held: None,
            pause_after: None,
            usage: Usage::default(),
            event_gap: Duration::ZERO,
            stall_after: None,
            split_stream: None,
        }
    }

    fn set_header(&mut self, name: &str, value: &str) {
        self.headers.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
        self.headers.push((name.to_owned(), value.to_owned()));
    }
}

/// Which requests a reply applies to. All conditions given must hold.
#[derive(Clone, Debug, Default)]
pub struct Rule {
    model: Option<String>,
    credential: Option<String>,
    path: Option<String>,
    body: Option<String>,
    remaining: Option<usize>,
    reply: Option<Reply>,
}

impl Rule {
    /// Every request (but the `HEAD /` / `GET /` warm-ups).
    pub fn any() -> Self {
        Rule::default()
    }

    /// Requests for this model (body `model`, or the Gemini path).
    pub fn model(model: &str) -> Self {
        Rule::any().and_model(model)
    }

    /// Requests carrying this credential.
    pub fn credential(credential: &str) -> Self {
        Rule::any().and_credential(credential)
    }

    /// Requests whose path-and-query contains this string, e.g. `/v1/responses`.
    pub fn path_contains(fragment: &str) -> Self {
        Rule::any().and_path_contains(fragment)
    }

    /// Also require this model.
    pub fn and_model(mut self, model: &str) -> Self {
        self.model = Some(model.to_owned());
        self
    }

    /// Also require this credential.
    pub fn and_credential(mut self, credential: &str) -> Self {
        self.credential = Some(credential.to_owned());
        self
    }

    /// Also require this path fragment.
    pub fn and_path_contains(mut self, fragment: &str) -> Self {
        self.path = Some(fragment.to_owned());
        self
    }

    /// Also require the request body to contain this string: one conversation's turns
    /// told apart by what they carry (its prompt, a `tool_result`), whoever else calls.
    pub fn and_body_contains(mut self, fragment: &str) -> Self {
        self.body = Some(fragment.to_owned());
        self
    }

    /// Apply to the first `n` matching requests only; later ones fall through to older
    /// rules or the default success.
    pub fn times(mut self, n: usize) -> Self {
        self.remaining = Some(n);
        self
    }

    /// The reply (default: [`Reply::ok`]).
    pub fn reply(mut self, reply: Reply) -> Self {
        self.reply = Some(reply);
        self
    }

    fn matches(&self, req: &Request, target: &str) -> bool {
        self.remaining != Some(0)
            && self
                .model
                .as_ref()
                .is_none_or(|m| req.model.as_ref() == Some(m))
            && self
                .credential
                .as_ref()
                .is_none_or(|c| req.credential.as_ref() == Some(c))
            && self.path.as_ref().is_none_or(|p| target.contains(p))
            && self.body.as_ref().is_none_or(|b| req.body.contains(b))
    }
}

struct Shared {
    state: Mutex<State>,
    changed: Condvar,
}

#[derive(Default)]
struct State {
    rules: Vec<Rule>,
    requests: Vec<Request>,
    open: HashMap<u64, TcpStream>,
    next_conn: u64,
    shutdown: bool,
    /// The gates the test has released (see [`Reply::held`]).
    released: std::collections::HashSet<String>,
    /// POSTs read and not yet answered in full (or given up on by their client).
    in_flight: usize,
    /// The most POSTs ever in flight at once.
    most_in_flight: usize,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sleep until `timeout` passes (`None`: forever) or the mock shuts down.
    /// Returns true when it shut down.
    fn wait_for_shutdown(&self, timeout: Option<Duration>) -> bool {
        self.wait_until(timeout, |state| state.shutdown)
    }

    /// Wait until the test released `gate` (true) or the mock shuts down (false).
    fn wait_for_release(&self, gate: &str) -> bool {
        self.wait_until(None, |state| {
            state.released.contains(gate) || state.shutdown
        });
        !self.lock().shutdown
    }

    /// Wait until `n` requests have arrived, `timeout` passes, or the mock shuts down;
    /// true when they arrived.
    fn wait_for_requests(&self, n: usize, timeout: Duration) -> bool {
        self.wait_until(Some(timeout), |state| {
            state.requests.len() >= n || state.shutdown
        });
        self.lock().requests.len() >= n
    }

    /// Sleep until `done` holds of the state or `timeout` passes (`None`: never); whether
    /// `done` held at the end.
    fn wait_until(&self, timeout: Option<Duration>, done: impl Fn(&State) -> bool) -> bool {
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut state = self.lock();
        while !done(&state) {
            match deadline {
                None => {
                    state = self
                        .changed
                        .wait(state)
                        .unwrap_or_else(PoisonError::into_inner);
                }
                Some(deadline) => {
                    let now = Instant::now();
                    if now >= deadline {
                        return false;
                    }
                    state = self
                        .changed
                        .wait_timeout(state, deadline - now)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0;
                }
            }
        }
        true
    }
}

/// How long a [`Reply::together`] answer waits for the others.
pub const TOGETHER_PATIENCE: Duration = Duration::from_secs(20);

impl MockApi {
    /// Bind `127.0.0.1:0` and start serving.
    pub fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind mock API on 127.0.0.1:0");
        let addr = listener.local_addr().expect("mock API address");
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
        });
        let accept_shared = Arc::clone(&shared);
        let accept_thread = thread::Builder::new()
            .name(format!("mock-api-{}", addr.port()))
            .spawn(move || accept_loop(&listener, &accept_shared))
            .expect("spawn mock API accept thread");
        MockApi {
            addr,
            shared,
            accept_thread: Some(accept_thread),
        }
    }

    /// `http://127.0.0.1:PORT`, no trailing slash.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Add a rule; it takes precedence over every rule added before it.
    pub fn on(&self, rule: Rule) {
        self.shared.lock().rules.push(rule);
    }

    /// Forget every rule (back to default success).
    pub fn clear_rules(&self) {
        self.shared.lock().rules.clear();
    }

    /// Every request received, warm-ups included, in arrival order.
    pub fn requests(&self) -> Vec<Request> {
        self.shared.lock().requests.clone()
    }

    /// The POST requests only (the API calls), in arrival order.
    pub fn post_requests(&self) -> Vec<Request> {
        self.shared
            .lock()
            .requests
            .iter()
            .filter(|r| r.is_post())
            .cloned()
            .collect()
    }

    /// How many POSTs (API calls) arrived.
    pub fn posts(&self) -> usize {
        self.shared
            .lock()
            .requests
            .iter()
            .filter(|r| r.is_post())
            .count()
    }

    /// How many POSTs asked for this model.
    pub fn posts_for_model(&self, model: &str) -> usize {
        self.shared
            .lock()
            .requests
            .iter()
            .filter(|r| r.is_post() && r.model.as_deref() == Some(model))
            .count()
    }

    /// Wait until at least `n` POSTs arrived. What a test waits for must come: past
    /// [`super::wait::PATIENCE`], which only keeps a broken test from hanging, it fails.
    pub fn wait_for_posts(&self, n: usize) {
        let came = self
            .shared
            .wait_until(Some(super::wait::PATIENCE), |state| {
                state.requests.iter().filter(|r| r.is_post()).count() >= n
            });
        assert!(
            came,
            "{} of the {n} calls awaited reached the mock",
            self.posts()
        );
    }

    /// Let every reply held by `gate` go, and every one that will be (see [`Reply::held`]).
    pub fn release(&self, gate: &str) {
        self.shared.lock().released.insert(gate.to_owned());
        self.shared.changed.notify_all();
    }

    /// Releases `gate` when dropped (or by [`Releasing::now`]). Made first thing in a
    /// `thread::scope` whose threads wait on held answers: when the test fails inside it,
    /// the answers go as it unwinds, the threads end, and the failure is reported instead
    /// of the scope waiting for ever.
    pub fn releasing(&self, gate: &str) -> Releasing<'_> {
        Releasing {
            api: self,
            gate: gate.to_owned(),
        }
    }

    /// How many API calls (POSTs) are upstream now: read by the mock and not yet answered
    /// in full, nor given up on by their client.
    pub fn posts_in_flight(&self) -> usize {
        self.shared.lock().in_flight
    }

    /// The most API calls (POSTs) that were ever upstream at once: read by the mock and
    /// not yet answered in full, nor given up on by their client.
    pub fn most_posts_in_flight(&self) -> usize {
        self.shared.lock().most_in_flight
    }
}

/// See [`MockApi::releasing`].
pub struct Releasing<'a> {
    api: &'a MockApi,
    gate: String,
}

impl Releasing<'_> {
    /// Release the gate now.
    pub fn now(self) {
        drop(self);
    }
}

impl Drop for Releasing<'_> {
    fn drop(&mut self) {
        self.api.release(&self.gate);
    }
}

impl Drop for MockApi {
    fn drop(&mut self) {
        {
            let mut state = self.shared.lock();
            state.shutdown = true;
            for (_, conn) in state.open.drain() {
                let _ = conn.shutdown(Shutdown::Both);
            }
        }
        self.shared.changed.notify_all();
        // Wake the blocking accept() so the thread sees the flag and exits.
        let woke = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1)).is_ok();
        if let Some(handle) = self.accept_thread.take()
            && woke
        {
            let _ = handle.join();
        }
    }
}

fn accept_loop(listener: &TcpListener, shared: &Arc<Shared>) {
    for stream in listener.incoming() {
        let Ok(stream) = stream else {
            if shared.lock().shutdown {
                return;
            }
            continue;
        };
        let _ = stream.set_nodelay(true);
        let id = {
            let mut state = shared.lock();
            if state.shutdown {
                return;
            }
            state.next_conn += 1;
            let id = state.next_conn;
            if let Ok(clone) = stream.try_clone() {
                state.open.insert(id, clone);
            }
            id
        };
        let conn_shared = Arc::clone(shared);
        let spawned = thread::Builder::new()
            .name(format!("mock-api-conn-{id}"))
            .spawn(move || {
                serve_connection(&conn_shared, stream);
                conn_shared.lock().open.remove(&id);
            });
        if spawned.is_err() {
            shared.lock().open.remove(&id);
        }
    }
}

/// A request as parsed off the wire.
struct Incoming {
    method: String,
    target: String,
    keep_alive: bool,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

fn serve_connection(shared: &Shared, stream: TcpStream) {
    let Ok(read_half) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(read_half);
    let mut writer = stream;
    while let Ok(Some(incoming)) = read_request(&mut reader, &mut writer) {
        let keep_alive = incoming.keep_alive;
        match handle(shared, &mut writer, incoming) {
            Ok(true) if keep_alive => {}
            _ => break,
        }
    }
    let _ = writer.shutdown(Shutdown::Both);
}

fn read_request(
    reader: &mut BufReader<TcpStream>,
    writer: &mut TcpStream,
) -> io::Result<Option<Incoming>> {
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            return Ok(None);
        }
        if !line.trim().is_empty() {
            break;
        }
    }
    let mut parts = line.split_whitespace();
    let (Some(method), Some(target)) = (parts.next(), parts.next()) else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "bad request line",
        ));
    };
    let (method, target) = (method.to_owned(), target.to_owned());
    let http10 = parts.next() == Some("HTTP/1.0");

    let mut headers = Vec::new();
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            return Ok(None);
        }
        let trimmed = line.trim_end_matches(['\r', '\n']);
        if trimmed.is_empty() {
            break;
        }
        if let Some((name, value)) = trimmed.split_once(':') {
            headers.push((name.trim().to_owned(), value.trim().to_owned()));
        }
    }
    let find = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.to_ascii_lowercase())
    };
    let connection = find("connection").unwrap_or_default();
    let keep_alive = if http10 {
        connection.contains("keep-alive")
    } else {
        !connection.contains("close")
    };
    if find("expect").is_some_and(|v| v.contains("100-continue")) {
        writer.write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
    }
    let body = if find("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
        read_chunked(reader)?
    } else {
        let length = find("content-length")
            .and_then(|v| v.parse::<usize>().ok())
            .unwrap_or(0);
        let mut body = vec![0; length];
        reader.read_exact(&mut body)?;
        body
    };
    Ok(Some(Incoming {
        method,
        target,
        keep_alive,
        headers,
        body,
    }))
}

fn read_chunked(reader: &mut BufReader<TcpStream>) -> io::Result<Vec<u8>> {
    let mut body = Vec::new();
    let mut line = String::new();
    loop {
        line.clear();
        reader.read_line(&mut line)?;
        let size_text = line.trim().split(';').next().unwrap_or("").trim();
        let size = usize::from_str_radix(size_text, 16)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "bad chunk size"))?;
        if size == 0 {
            // Trailers, then the empty line.
            loop {
                line.clear();
                if reader.read_line(&mut line)? == 0 || line.trim().is_empty() {
                    return Ok(body);
                }
            }
        }
        let start = body.len();
        body.resize(start + size, 0);
        reader.read_exact(&mut body[start..])?;
        line.clear();
        reader.read_line(&mut line)?; // the CRLF after the chunk
    }
}

/// Which API a route belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Route {
    Warmup,
    Anthropic,
    OpenAiChat,
    OpenAiResponses,
    Models,
    /// Gemini's own model list, `{"models": [{"name": "models/…"}]}`.
    GeminiModels,
    /// Anthropic's undocumented `GET /api/oauth/usage`.
    OAuthUsage,
    Gemini {
        stream: bool,
    },
    Unknown,
}

/// Where Codex on a ChatGPT login sends its turns (under `chatgpt_base_url`).
const CHATGPT_CODEX_RESPONSES: &str = "/backend-api/codex/responses";
/// Where it asks for its model list.
const CHATGPT_CODEX_MODELS: &str = "/backend-api/codex/models";

fn route(method: &str, path: &str) -> Route {
    let post = method == "POST";
    match path {
        "/" if method == "HEAD" || method == "GET" => Route::Warmup,
        "/v1/messages" if post => Route::Anthropic,
        "/v1/chat/completions" | "/chat/completions" if post => Route::OpenAiChat,
        // ChatGPT's backend for Codex speaks the Responses API too.
        "/v1/responses" | "/responses" | CHATGPT_CODEX_RESPONSES if post => Route::OpenAiResponses,
        "/v1/models" | "/models" if method == "GET" => Route::Models,
        "/v1beta/models" if method == "GET" => Route::GeminiModels,
        "/api/oauth/usage" if method == "GET" => Route::OAuthUsage,
        _ if post && gemini_model(path).is_some() => Route::Gemini {
            stream: path.ends_with(":streamGenerateContent"),
        },
        _ => Route::Unknown,
    }
}

/// `/v1beta/models/{model}:generateContent` → `model`.
fn gemini_model(path: &str) -> Option<&str> {
    let rest = path
        .strip_prefix("/v1beta/models/")
        .or_else(|| path.strip_prefix("/v1/models/"))?;
    let (model, method) = rest.split_once(':')?;
    (matches!(method, "generateContent" | "streamGenerateContent") && !model.is_empty())
        .then_some(model)
}

fn query_param<'a>(query: &'a str, name: &str) -> Option<&'a str> {
    query
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

fn credential_of(headers: &[(String, String)], query: &str) -> Option<String> {
    let find = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    };
    find("x-api-key")
        .or_else(|| find("x-goog-api-key"))
        .or_else(|| {
            find("authorization").and_then(|v| {
                v.strip_prefix("Bearer ")
                    .or_else(|| v.strip_prefix("bearer "))
                    .map(str::trim)
            })
        })
        .or_else(|| query_param(query, "key"))
        .map(str::to_owned)
}

/// Record the request, pick the reply, answer. Returns whether the connection may
/// serve another request.
fn handle(shared: &Shared, out: &mut TcpStream, incoming: Incoming) -> io::Result<bool> {
    let (path, query) = match incoming.target.split_once('?') {
        Some((p, q)) => (p.to_owned(), q.to_owned()),
        None => (incoming.target.clone(), String::new()),
    };
    let route = route(&incoming.method, &path);
    let body = String::from_utf8_lossy(&incoming.body).into_owned();
    let json_body: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    let model = match route {
        Route::Gemini { .. } => gemini_model(&path).map(str::to_owned),
        _ => json_body
            .get("model")
            .and_then(Value::as_str)
            .map(str::to_owned),
    };
    let request = Request {
        method: incoming.method,
        credential: credential_of(&incoming.headers, &query),
        path,
        query,
        headers: incoming.headers,
        body,
        model,
    };
    let (seq, reply) = record_and_choose(shared, &request, route, &incoming.target);
    let _flight = request.is_post().then(|| InFlight::start(shared));

    let answer = Answer {
        route,
        seq,
        head_only: request.method == "HEAD",
        keep_alive: incoming.keep_alive,
    };
    if !reply.delay.is_zero() && shared.wait_for_shutdown(Some(reply.delay)) {
        return Ok(false);
    }
    if let Some(gate) = &reply.held
        && !shared.wait_for_release(gate)
    {
        return Ok(false);
    }
    if let Some(n) = reply.together
        && !shared.wait_for_requests(n, TOGETHER_PATIENCE)
    {
        let overloaded = Reply::status(503).body("the others never came");
        return answer.write(
            out,
            overloaded.status,
            &default_headers(route, seq),
            &overloaded.body,
        );
    }
    match &reply.kind {
        ReplyKind::Hang => {
            // Until the client closes the connection (a read of 0 bytes) or the mock
            // shuts it down, which ends the read the same way.
            let mut byte = [0u8; 1];
            while matches!(out.read(&mut byte), Ok(n) if n > 0) {}
            Ok(false)
        }
        ReplyKind::Close => Ok(false),
        ReplyKind::Custom => {
            let mut headers = default_headers(route, seq);
            if route != Route::Warmup {
                let looks_json = matches!(reply.body.trim_ascii_start().first(), Some(b'{' | b'['));
                let content_type = if looks_json {
                    "application/json"
                } else {
                    "text/plain; charset=utf-8"
                };
                headers.push(("content-type".to_owned(), content_type.to_owned()));
            }
            merge_headers(&mut headers, &reply.headers);
            answer.write(out, reply.status, &headers, &reply.body)
        }
        ReplyKind::Success { text, tool } => {
            let success = Success {
                tool: tool.clone(),
                seq,
                model: request
                    .model
                    .clone()
                    .unwrap_or_else(|| "mock-model".to_owned()),
                text: text.clone(),
                usage: reply.usage,
                created: unix_now(),
            };
            success.answer(shared, out, &answer, &reply, &json_body)
        }
    }
}

/// A POST counted in flight while its handler runs (see [`MockApi::most_posts_in_flight`]).
struct InFlight<'a>(&'a Shared);

impl<'a> InFlight<'a> {
    fn start(shared: &'a Shared) -> Self {
        let mut state = shared.lock();
        state.in_flight += 1;
        state.most_in_flight = state.most_in_flight.max(state.in_flight);
        InFlight(shared)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.lock().in_flight -= 1;
    }
}

/// Record the request and pick its reply: the newest matching rule, else the route's
/// default. Returns the request's sequence number (1-based) too.
fn record_and_choose(
    shared: &Shared,
    request: &Request,
    route: Route,
    target: &str,
) -> (usize, Reply) {
    let (seq, ruled, mut known_models) = {
        let mut state = shared.lock();
        let seq = state.requests.len() + 1;
        let ruled = if route == Route::Warmup {
            None
        } else {
            state
                .rules
                .iter_mut()
                .rev()
                .find(|rule| rule.matches(request, target))
                .map(|rule| {
                    if let Some(n) = rule.remaining.as_mut() {
                        *n -= 1;
                    }
                    rule.reply.clone().unwrap_or_else(Reply::ok)
                })
        };
        let known_models: Vec<String> =
            state.rules.iter().filter_map(|r| r.model.clone()).collect();
        state.requests.push(request.clone());
        (seq, ruled, known_models)
    };
    shared.changed.notify_all();
    // The real API refuses a subscription (OAuth) token from anything but Claude Code,
    // whatever else is configured: no rule can make such a call succeed.
    if route == Route::Anthropic && refuses_subscription_token(request) {
        return (
            seq,
            Reply::anthropic_error(400, "invalid_request_error", OAUTH_REFUSAL),
        );
    }
    // ChatGPT's backend answers only a login's bearer token.
    if request.path == CHATGPT_CODEX_RESPONSES && request.credential.is_none() {
        return (
            seq,
            Reply::openai_error(
                401,
                "invalid_api_key",
                "Missing bearer or basic authentication in header",
            ),
        );
    }
    if route == Route::OAuthUsage && !is_oauth_usage_caller(request) {
        return (
            seq,
            Reply::anthropic_error(401, "authentication_error", "OAuth token required"),
        );
    }
    let reply = ruled.unwrap_or_else(|| match route {
        // Codex on a ChatGPT login refreshes its model list from the backend at start-up;
        // an empty list is a real answer (it keeps its built-in models).
        Route::Unknown if request.path == CHATGPT_CODEX_MODELS && request.method == "GET" => {
            Reply::status(200).json(json!({ "models": [] }))
        }
        Route::Warmup => Reply::status(200),
        Route::OAuthUsage => Reply::status(200).json(oauth_usage_body(12.0, 30.0)),
        Route::Unknown => Reply::status(404).json(json!({
            "error": { "message": format!("mock API: no route for {} {target}", request.method) }
        })),
        Route::Models => {
            known_models.sort();
            known_models.dedup();
            if known_models.is_empty() {
                known_models.push("mock-model".to_owned());
            }
            let data: Vec<Value> = known_models
                .iter()
                .map(|id| json!({"id": id, "object": "model", "type": "model", "created": 0, "owned_by": "mock"}))
                .collect();
            Reply::status(200).json(json!({"object": "list", "data": data, "has_more": false}))
        }
        Route::GeminiModels => {
            known_models.sort();
            known_models.dedup();
            if known_models.is_empty() {
                known_models.push("gemini-mock".to_owned());
            }
            let models: Vec<Value> = known_models
                .iter()
                .map(|id| json!({"name": format!("models/{id}"), "displayName": id, "supportedGenerationMethods": ["generateContent"]}))
                .collect();
            Reply::status(200).json(json!({"models": models}))
        }
        _ => Reply::ok(),
    });
    (seq, reply)
}

/// What the real API answers a prompt sent with a Claude subscription token by anything
/// but Claude Code.
pub const OAUTH_REFUSAL: &str = "This credential is only authorized for use with Claude Code and cannot be used for other API requests.";

/// A prompt carrying a subscription token (`sk-ant-oat…`) from a client that is not Claude
/// Code (whose `User-Agent` is `claude-cli/VERSION …`).
fn refuses_subscription_token(request: &Request) -> bool {
    let is_claude_code = request
        .header("user-agent")
        .is_some_and(|agent| agent.starts_with("claude-cli/"));
    request
        .credential
        .as_deref()
        .is_some_and(|c| c.starts_with("sk-ant-oat"))
        && !is_claude_code
}

/// Whether a `/api/oauth/usage` call carries what the real endpoint demands: a
/// subscription bearer token and the OAuth beta header (without either: 401).
fn is_oauth_usage_caller(request: &Request) -> bool {
    let bearer = request
        .header("authorization")
        .and_then(|v| v.strip_prefix("Bearer "))
        .is_some_and(|token| token.starts_with("sk-ant-oat"));
    let beta = request
        .header("anthropic-beta")
        .is_some_and(|v| v.split(',').any(|b| b.trim() == "oauth-2025-04-20"));
    bearer && beta
}

/// The real endpoint's answer (research §1.2) with a five-hour window `five_hour` % used
/// (resetting in 3 hours) and a weekly one `seven_day` % used (in 3 days).
pub fn oauth_usage_body(five_hour: f64, seven_day: f64) -> Value {
    let at = |secs: u64| {
        let at = jiff::Timestamp::from_second(i64::try_from(unix_now() + secs).unwrap_or(0))
            .unwrap_or(jiff::Timestamp::UNIX_EPOCH);
        at.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
    };
    json!({
        "five_hour": { "utilization": five_hour, "resets_at": at(3 * 3600) },
        "seven_day": { "utilization": seven_day, "resets_at": at(3 * 86400) },
        "seven_day_oauth_apps": null,
        "seven_day_opus": null,
        "seven_day_sonnet": null,
        "extra_usage": { "is_enabled": false, "monthly_limit": null, "used_credits": null, "utilization": null },
        "limits": [
            { "kind": "session", "group": "session", "percent": five_hour, "resets_at": at(3 * 3600) },
            { "kind": "weekly_all", "group": "weekly", "percent": seven_day, "resets_at": at(3 * 86400) }
        ]
    })
}

/// How to frame the answer to one request.
struct Answer {
    route: Route,
    seq: usize,
    head_only: bool,
    keep_alive: bool,
}

impl Answer {
    fn write(
        &self,
        out: &mut TcpStream,
        status: u16,
        headers: &[(String, String)],
        body: &[u8],
    ) -> io::Result<bool> {
        let framing = format!("content-length: {}", body.len());
        let mut bytes = head_text(status, headers, &framing, self.keep_alive).into_bytes();
        if !self.head_only {
            bytes.extend_from_slice(body);
        }
        out.write_all(&bytes)?;
        out.flush()?;
        Ok(true)
    }
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn default_headers(route: Route, seq: usize) -> Vec<(String, String)> {
    let id = format!("req_mock_{seq:04}");
    match route {
        Route::Anthropic => vec![("request-id".to_owned(), id)],
        Route::OpenAiChat | Route::OpenAiResponses | Route::Models => {
            vec![("x-request-id".to_owned(), id)]
        }
        _ => Vec::new(),
    }
}

fn merge_headers(headers: &mut Vec<(String, String)>, custom: &[(String, String)]) {
    for (name, value) in custom {
        headers.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
        headers.push((name.clone(), value.clone()));
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        402 => "Payment Required",
        403 => "Forbidden",
        404 => "Not Found",
        408 => "Request Timeout",
        409 => "Conflict",
        413 => "Payload Too Large",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        529 => "Overloaded",
        _ => "Mock",
    }
}

fn head_text(status: u16, headers: &[(String, String)], framing: &str, keep_alive: bool) -> String {
    let mut text = format!("HTTP/1.1 {status} {}\r\n", reason(status));
    for (name, value) in headers {
        let _ = write!(text, "{name}: {value}\r\n");
    }
    let connection = if keep_alive { "keep-alive" } else { "close" };
    let _ = write!(text, "{framing}\r\nconnection: {connection}\r\n\r\n");
    text
}

/// Send the events as a chunked `text/event-stream`, one chunk (one TCP write) each.
fn write_stream(
    shared: &Shared,
    out: &mut TcpStream,
    reply: &Reply,
    headers: &[(String, String)],
    events: &[String],
    keep_alive: bool,
) -> io::Result<bool> {
    out.write_all(
        head_text(
            reply.status,
            headers,
            "transfer-encoding: chunked",
            keep_alive,
        )
        .as_bytes(),
    )?;
    out.flush()?;
    let split;
    let events = match &reply.split_stream {
        Some((text, offset)) => {
            let whole = events.concat();
            let at = whole
                .find(text.as_str())
                .map_or(whole.len(), |i| i + offset);
            let (first, second) = whole.split_at(at.min(whole.len()));
            split = [first.to_owned(), second.to_owned()];
            &split[..]
        }
        None => events,
    };
    for (i, event) in events.iter().enumerate() {
        if reply.stall_after == Some(i) {
            shared.wait_for_shutdown(None);
            return Ok(false);
        }
        if let Some((_, gate)) = reply.pause_after.as_ref().filter(|(n, _)| *n == i)
            && !shared.wait_for_release(gate)
        {
            return Ok(false);
        }
        if i > 0 && !reply.event_gap.is_zero() && shared.wait_for_shutdown(Some(reply.event_gap)) {
            return Ok(false);
        }
        if event.is_empty() {
            // A zero-size chunk would end the stream.
            continue;
        }
        out.write_all(format!("{:x}\r\n{event}\r\n", event.len()).as_bytes())?;
        out.flush()?;
    }
    if reply.stall_after == Some(events.len()) {
        shared.wait_for_shutdown(None);
        return Ok(false);
    }
    out.write_all(b"0\r\n\r\n")?;
    out.flush()?;
    Ok(true)
}

/// Everything a success answer is built from.
struct Success {
    seq: usize,
    model: String,
    text: String,
    tool: Option<ToolUse>,
    usage: Usage,
    created: u64,
}

/// `event: NAME` + `data: JSON` (Anthropic and the Responses API name their events).
fn named_event(name: &str, data: &Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

impl Success {
    /// Answer in the route's own format: SSE when the request asked to stream.
    fn answer(
        &self,
        shared: &Shared,
        out: &mut TcpStream,
        answer: &Answer,
        reply: &Reply,
        request_body: &Value,
    ) -> io::Result<bool> {
        let stream = request_body.get("stream").and_then(Value::as_bool) == Some(true);
        let events = match answer.route {
            Route::Anthropic if stream => Some(self.anthropic_events()),
            Route::OpenAiChat if stream => {
                let include_usage = request_body
                    .pointer("/stream_options/include_usage")
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                Some(self.chat_events(include_usage))
            }
            Route::OpenAiResponses if stream => Some(self.responses_events()),
            Route::Gemini { stream: true } => Some(self.gemini_events()),
            _ => None,
        };
        let mut headers = default_headers(answer.route, answer.seq);
        if let Some(events) = events {
            headers.push((
                "content-type".to_owned(),
                "text/event-stream; charset=utf-8".to_owned(),
            ));
            headers.push(("cache-control".to_owned(), "no-cache".to_owned()));
            merge_headers(&mut headers, &reply.headers);
            return write_stream(shared, out, reply, &headers, &events, answer.keep_alive);
        }
        let body = match answer.route {
            Route::Anthropic => self.anthropic_message(),
            Route::OpenAiChat => self.chat_completion(),
            Route::OpenAiResponses => self.response_object("completed", true),
            Route::Gemini { .. } => self.gemini_chunk(&self.text, true, true),
            // A success on a route of no API: say so plainly.
            _ => json!({ "ok": true, "text": self.text }),
        };
        headers.push(("content-type".to_owned(), "application/json".to_owned()));
        merge_headers(&mut headers, &reply.headers);
        answer.write(out, reply.status, &headers, body.to_string().as_bytes())
    }

    fn anthropic_usage(&self) -> Value {
        json!({
            "input_tokens": self.usage.input,
            "cache_creation_input_tokens": self.usage.cache_write,
            "cache_read_input_tokens": self.usage.cache_read,
            "output_tokens": self.usage.output,
            "service_tier": "standard",
        })
    }

    /// The `tool_use` block's id: one per answer, as the API's `toolu_…` ids are.
    fn tool_use_id(&self) -> String {
        format!("toolu_mock_{:04}", self.seq)
    }

    fn anthropic_stop_reason(&self) -> &'static str {
        if self.tool.is_some() {
            "tool_use"
        } else {
            "end_turn"
        }
    }

    fn anthropic_message(&self) -> Value {
        let mut content = vec![json!({ "type": "text", "text": self.text })];
        if let Some(tool) = &self.tool {
            content.push(json!({
                "type": "tool_use", "id": self.tool_use_id(), "name": tool.name, "input": tool.input,
            }));
        }
        json!({
            "id": format!("msg_mock_{:04}", self.seq),
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": content,
            "stop_reason": self.anthropic_stop_reason(),
            "stop_sequence": null,
            "usage": self.anthropic_usage(),
        })
    }

    /// `message_start`, `content_block_start`, `ping`, `content_block_delta`,
    /// `content_block_stop`, `message_delta`, `message_stop` — as the API sends them. A
    /// tool call is a second block that starts with an empty `input` and streams it as
    /// `input_json_delta` pieces (the first one empty, as the API's is).
    fn anthropic_events(&self) -> Vec<String> {
        let mut start = self.anthropic_message();
        start["content"] = json!([]);
        start["stop_reason"] = Value::Null;
        start["usage"]["output_tokens"] = json!(1);
        let mut events = vec![
            named_event(
                "message_start",
                &json!({ "type": "message_start", "message": start }),
            ),
            named_event(
                "content_block_start",
                &json!({ "type": "content_block_start", "index": 0, "content_block": { "type": "text", "text": "" } }),
            ),
            named_event("ping", &json!({ "type": "ping" })),
            named_event(
                "content_block_delta",
                &json!({ "type": "content_block_delta", "index": 0, "delta": { "type": "text_delta", "text": self.text } }),
            ),
            named_event(
                "content_block_stop",
                &json!({ "type": "content_block_stop", "index": 0 }),
            ),
        ];
        if let Some(tool) = &self.tool {
            let input = tool.input.to_string();
            let cut = input
                .char_indices()
                .nth(input.chars().count() / 2)
                .map_or(0, |(i, _)| i);
            events.push(named_event(
                "content_block_start",
                &json!({
                    "type": "content_block_start", "index": 1,
                    "content_block": { "type": "tool_use", "id": self.tool_use_id(), "name": tool.name, "input": {} },
                }),
            ));
            for piece in ["", &input[..cut], &input[cut..]] {
                events.push(named_event(
                    "content_block_delta",
                    &json!({ "type": "content_block_delta", "index": 1, "delta": { "type": "input_json_delta", "partial_json": piece } }),
                ));
            }
            events.push(named_event(
                "content_block_stop",
                &json!({ "type": "content_block_stop", "index": 1 }),
            ));
        }
        events.push(named_event(
            "message_delta",
            &json!({
                "type": "message_delta",
                "delta": { "stop_reason": self.anthropic_stop_reason(), "stop_sequence": null },
                "usage": self.anthropic_usage(),
            }),
        ));
        events.push(named_event(
            "message_stop",
            &json!({ "type": "message_stop" }),
        ));
        events
    }

    fn chat_usage(&self) -> Value {
        let prompt = self.usage.input + self.usage.cache_read;
        json!({
            "prompt_tokens": prompt,
            "completion_tokens": self.usage.output,
            "total_tokens": prompt + self.usage.output,
            "prompt_tokens_details": { "cached_tokens": self.usage.cache_read },
            "completion_tokens_details": { "reasoning_tokens": self.usage.reasoning },
        })
    }

    fn chat_completion(&self) -> Value {
        json!({
            "id": format!("chatcmpl-mock{:04}", self.seq),
            "object": "chat.completion",
            "created": self.created,
            "model": self.model,
            "choices": [{
                "index": 0,
                "message": { "role": "assistant", "content": self.text, "refusal": null },
                "logprobs": null,
                "finish_reason": "stop",
            }],
            "usage": self.chat_usage(),
            "system_fingerprint": null,
        })
    }

    /// Chat chunks (role, content, finish), a usage chunk when asked, `[DONE]`.
    fn chat_events(&self, include_usage: bool) -> Vec<String> {
        let chunk = |delta: Value, finish: Value| {
            let mut chunk = json!({
                "id": format!("chatcmpl-mock{:04}", self.seq),
                "object": "chat.completion.chunk",
                "created": self.created,
                "model": self.model,
                "system_fingerprint": null,
                "choices": [{ "index": 0, "delta": delta, "logprobs": null, "finish_reason": finish }],
            });
            if include_usage {
                chunk["usage"] = Value::Null;
            }
            format!("data: {chunk}\n\n")
        };
        let mut events = vec![
            chunk(
                json!({ "role": "assistant", "content": "", "refusal": null }),
                Value::Null,
            ),
            chunk(json!({ "content": self.text }), Value::Null),
            chunk(json!({}), json!("stop")),
        ];
        if include_usage {
            let last = json!({
                "id": format!("chatcmpl-mock{:04}", self.seq),
                "object": "chat.completion.chunk",
                "created": self.created,
                "model": self.model,
                "system_fingerprint": null,
                "choices": [],
                "usage": self.chat_usage(),
            });
            events.push(format!("data: {last}\n\n"));
        }
        events.push("data: [DONE]\n\n".to_owned());
        events
    }

    fn responses_usage(&self) -> Value {
        let input = self.usage.input + self.usage.cache_read;
        json!({
            "input_tokens": input,
            "input_tokens_details": { "cached_tokens": self.usage.cache_read },
            "output_tokens": self.usage.output,
            "output_tokens_details": { "reasoning_tokens": self.usage.reasoning },
            "total_tokens": input + self.usage.output,
        })
    }

    fn item_id(&self) -> String {
        format!("msg_mock_{:04}", self.seq)
    }

    fn output_text_part(text: &str) -> Value {
        json!({ "type": "output_text", "text": text, "annotations": [], "logprobs": [] })
    }

    fn output_message(&self, done: bool) -> Value {
        json!({
            "type": "message",
            "id": self.item_id(),
            "status": if done { "completed" } else { "in_progress" },
            "role": "assistant",
            "content": if done { json!([Self::output_text_part(&self.text)]) } else { json!([]) },
        })
    }

    /// A Responses API `response` object; `done` adds the output and usage.
    fn response_object(&self, status: &str, done: bool) -> Value {
        json!({
            "id": format!("resp_mock_{:04}", self.seq),
            "object": "response",
            "created_at": self.created,
            "status": status,
            "background": false,
            "error": null,
            "incomplete_details": null,
            "instructions": null,
            "max_output_tokens": null,
            "model": self.model,
            "output": if done { json!([self.output_message(true)]) } else { json!([]) },
            "parallel_tool_calls": true,
            "previous_response_id": null,
            "reasoning": { "effort": null, "summary": null },
            "service_tier": "default",
            "store": false,
            "temperature": 1.0,
            "text": { "format": { "type": "text" }, "verbosity": "medium" },
            "tool_choice": "auto",
            "tools": [],
            "top_p": 1.0,
            "truncation": "disabled",
            "usage": if done { self.responses_usage() } else { Value::Null },
            "user": null,
            "metadata": {},
        })
    }

    /// The Responses API's event sequence for one text message, with `sequence_number`s.
    fn responses_events(&self) -> Vec<String> {
        let item_id = self.item_id();
        let bodies = [
            json!({ "type": "response.created", "response": self.response_object("in_progress", false) }),
            json!({ "type": "response.in_progress", "response": self.response_object("in_progress", false) }),
            json!({ "type": "response.output_item.added", "output_index": 0, "item": self.output_message(false) }),
            json!({
                "type": "response.content_part.added", "item_id": item_id, "output_index": 0,
                "content_index": 0, "part": Self::output_text_part(""),
            }),
            json!({
                "type": "response.output_text.delta", "item_id": item_id, "output_index": 0,
                "content_index": 0, "delta": self.text, "logprobs": [],
            }),
            json!({
                "type": "response.output_text.done", "item_id": item_id, "output_index": 0,
                "content_index": 0, "text": self.text, "logprobs": [],
            }),
            json!({
                "type": "response.content_part.done", "item_id": item_id, "output_index": 0,
                "content_index": 0, "part": Self::output_text_part(&self.text),
            }),
            json!({ "type": "response.output_item.done", "output_index": 0, "item": self.output_message(true) }),
            json!({ "type": "response.completed", "response": self.response_object("completed", true) }),
        ];
        bodies
            .into_iter()
            .enumerate()
            .map(|(i, mut body)| {
                body["sequence_number"] = json!(i);
                let name = body["type"].as_str().unwrap_or_default().to_owned();
                named_event(&name, &body)
            })
            .collect()
    }

    /// One `generateContent` answer (or stream chunk); `last` adds `finishReason`,
    /// `with_usage` adds `usageMetadata`.
    fn gemini_chunk(&self, text: &str, last: bool, with_usage: bool) -> Value {
        let mut candidate = json!({
            "content": { "parts": [{ "text": text }], "role": "model" },
            "index": 0,
        });
        if last {
            candidate["finishReason"] = json!("STOP");
        }
        let mut chunk = json!({
            "candidates": [candidate],
            "modelVersion": self.model,
            "responseId": format!("mock{:04}", self.seq),
        });
        if with_usage {
            let prompt = self.usage.input + self.usage.cache_read;
            let candidates = self.usage.output.saturating_sub(self.usage.reasoning);
            let mut usage = json!({
                "promptTokenCount": prompt,
                "candidatesTokenCount": candidates,
                "totalTokenCount": prompt + self.usage.output,
                "promptTokensDetails": [{ "modality": "TEXT", "tokenCount": prompt }],
            });
            if self.usage.cache_read > 0 {
                usage["cachedContentTokenCount"] = json!(self.usage.cache_read);
            }
            if self.usage.reasoning > 0 {
                usage["thoughtsTokenCount"] = json!(self.usage.reasoning);
            }
            chunk["usageMetadata"] = usage;
        }
        chunk
    }

    /// `data: {…}\r\n\r\n` chunks: the text split in two (when it has two characters),
    /// the last one with `finishReason` and usage.
    fn gemini_events(&self) -> Vec<String> {
        let split = self.text.char_indices().nth(self.text.chars().count() / 2);
        let parts: Vec<&str> = match split {
            Some((at, _)) if at > 0 => vec![&self.text[..at], &self.text[at..]],
            _ => vec![self.text.as_str()],
        };
        let n = parts.len();
        parts
            .iter()
            .enumerate()
            .map(|(i, part)| {
                let last = i + 1 == n;
                format!("data: {}\r\n\r\n", self.gemini_chunk(part, last, true))
            })
            .collect()
    }
}
