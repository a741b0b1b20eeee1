//! `agent --dashboard` (issue 14): the page over a sandbox of known state, loaded in
//! headless Chromium — one row per rung with its state, the login's window bars, one bar
//! group per day — behind a token, on loopback only, and asking no other host for anything.

use std::io::{BufRead as _, BufReader};
use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::{Child, Command, Stdio};

use jiff::{SignedDuration, Timestamp};
use serde_json::json;

use crate::support::clock;
use crate::support::relay::raw;
use crate::support::sandbox::kill_group;
use crate::support::{Reply, Rule, Sandbox, wait};
use crate::world::{CODEX_MODEL, GEMINI_MODEL, World, world};

const THREE_RUNGS: &str = r#"
[[rungs]]
backend = "claude"
probe_model = "opus"

[[rungs]]
backend = "codex"

[[rungs]]
backend = "gemini"
"#;

/// A running dashboard; dropping it kills it.
pub(crate) struct Dashboard {
    child: Option<Child>,
    /// The one-time URL it printed.
    url: String,
    /// `127.0.0.1:PORT`.
    pub(crate) addr: String,
}

impl Dashboard {
    pub(crate) fn start(sb: &Sandbox) -> Dashboard {
        Dashboard::start_with(sb, &[])
    }

    fn start_with(sb: &Sandbox, args: &[&str]) -> Dashboard {
        let mut argv = vec!["--dashboard"];
        argv.extend_from_slice(args);
        let mut cmd = sb.command(&argv);
        cmd.stdout(Stdio::piped())
            .stderr(Stdio::null())
            .process_group(0);
        let mut child = cmd.spawn().expect("spawn agent --dashboard");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("read the URL line");
        let url = line
            .trim()
            .strip_prefix("dashboard: ")
            .unwrap_or_else(|| panic!("no URL line: {line:?}"))
            .to_string();
        let addr = url
            .trim_start_matches("http://")
            .split('/')
            .next()
            .unwrap()
            .to_string();
        Dashboard {
            child: Some(child),
            url,
            addr,
        }
    }

    fn token(&self) -> &str {
        self.url.split("token=").nth(1).expect("a token in the URL")
    }

    /// Opens the printed URL (which works once) and returns its session as a request
    /// header line, `cookie: agent_dashboard=…`.
    pub(crate) fn log_in(&self) -> String {
        let login = get(&self.addr, &format!("/?token={}", self.token()), "");
        assert_eq!(login.status, 303, "{login:?}");
        format!("cookie: {}\n", session_pair(&login))
    }

    /// SIGINT (Ctrl-C), and its exit code.
    fn interrupt(&mut self) -> Option<i32> {
        let mut child = self.child.take()?;
        let _ = Command::new("kill")
            .args(["-s", "INT", &child.id().to_string()])
            .status();
        let status = wait::for_some("the dashboard stopping on Ctrl-C", || {
            child.try_wait().ok().flatten()
        });
        status.code()
    }
}

impl Drop for Dashboard {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            kill_group(child.id());
            let _ = child.wait();
        }
    }
}

pub(crate) fn get(addr: &str, path: &str, headers: &str) -> crate::support::relay::Answer {
    get_as(addr, addr, path, headers)
}

/// `GET path` from `addr`, naming `host` as the request's `Host`.
fn get_as(addr: &str, host: &str, path: &str, headers: &str) -> crate::support::relay::Answer {
    raw(
        addr,
        &format!("GET {path} HTTP/1.1\nhost: {host}\nconnection: close\n{headers}"),
        "",
    )
}

/// The `agent_dashboard=VALUE` a login's `Set-Cookie` sets.
fn session_pair(login: &crate::support::relay::Answer) -> String {
    let cookie = login.header("set-cookie").expect("a cookie");
    let pair = cookie.split(';').next().unwrap().trim().to_string();
    assert!(pair.starts_with("agent_dashboard="), "{cookie}");
    pair
}

/// The sandbox's state: a ledger of three weeks, claude's login parked by a full 5-hour
/// window (its weekly at 42 %), codex cooling after a rate limit, gemini probed OK, and
/// the watchdog's DOWN alert.
fn seeded() -> World {
    let w = world();
    w.sb.write_config(THREE_RUNGS);
    w.api.on(Rule::model(CODEX_MODEL).reply(Reply::openai_error(
        429,
        "rate_limit_exceeded",
        "slow down",
    )));
    let status = w.sb.run(&["--status"]);
    assert_eq!(status.code, Some(0), "{status:?}");

    let now = Timestamp::now();
    let window = |kind: &str, percent: f64, hours: i64| {
        json!({
            "scope": {"kind": kind},
            "used_percent": percent,
            "resets_at": (now + SignedDuration::from_hours(hours)).to_string(),
            "source": "statusline",
            "observed_at": now.to_string(),
        })
    };
    let login = format!("claude:{}", w.sb.home().join(".claude").display());
    std::fs::write(
        w.sb.state_dir().join("windows.json"),
        json!({"logins": {login: [window("five_hour", 100.0, 3), window("weekly", 42.0, 90)]}})
            .to_string(),
    )
    .unwrap();

    let mut ledger = String::new();
    let today = jiff::ZonedDateTime::now().date();
    for back in 0..21 {
        let day = today - jiff::Span::new().days(back);
        for (backend, model) in [("claude", "claude-opus-5"), ("gemini", GEMINI_MODEL)] {
            let line = json!({
                "time": clock::local_time_on(day, 12, 0),
                "run": "3f2a0c1d9e8b",
                "backend": backend,
                "model": model,
                "account": null,
                "upstream": "mock",
                "role": "probe",
                "status": 200,
                "error_kind": "ok",
                "tokens": {"input": 100 * (back + 1), "output": 10, "reasoning": 0, "cache_read": 50, "cache_write": 0},
                "estimated": false,
                "ttfb_s": 0.3,
                "duration_s": 0.31,
                "request_id": null,
                "day": day.to_string(),
            });
            ledger.push_str(&line.to_string());
            ledger.push('\n');
        }
    }
    std::fs::write(w.sb.state_dir().join("usage.jsonl"), ledger).unwrap();
    std::fs::write(
        w.sb.state_dir().join("watchdog.json"),
        json!({"state": "DOWN", "since": now.to_string(), "last_check": now.to_string(), "last_message": "DOWN: no provider-independent rung answers"}).to_string(),
    )
    .unwrap();
    let mut events = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(w.sb.state_dir().join("events.jsonl"))
        .unwrap();
    std::io::Write::write_all(
        &mut events,
        format!(
            "{}\n",
            json!({"time": now.to_string(), "event": "alert", "from": "OK", "to": "DOWN", "reason": "no provider-independent rung answers"})
        )
        .as_bytes(),
    )
    .unwrap();
    w
}

fn chromium(profile: &Path, args: &[&str]) -> std::process::Output {
    let binary = if Path::new("/usr/bin/chromium").exists() {
        "/usr/bin/chromium"
    } else {
        "chromium"
    };
    let mut cmd = Command::new(binary);
    // Chromium draws what the dashboard rendered on the test's clock; under libfaketime
    // its timer threads crawl, so it runs on the machine's.
    clock::without_faked_clock(&mut cmd);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        // Chromium's own background calls (network time, hints), which are not the
        // page's: off, and no name resolves but loopback, so nothing leaves the machine.
        "--disable-features=NetworkTimeServiceQuerying,OptimizationHints,MediaRouter,Translate,AutofillServerCommunication",
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .args(args)
    .stdin(Stdio::null());
    let output = cmd
        .output()
        .expect("run chromium (Debian's package `chromium`; .ci/run installs it)");
    assert!(
        output.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// The URLs of every request Chromium started for the page at 127.0.0.1 (its network
/// isolation key names that site, or its initiator is that origin).
fn page_requests(net_log: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(net_log).expect("the net log");
    let log: serde_json::Value = serde_json::from_str(&text)
        .or_else(|_| serde_json::from_str(&format!("{}]}}", text.trim_end().trim_end_matches(','))))
        .expect("the net log parses");
    let start_job = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"].clone();
    log["events"]
        .as_array()
        .expect("events")
        .iter()
        .filter(|event| event["type"] == start_job)
        .filter(|event| {
            let params = &event["params"];
            let nik = params["network_isolation_key"].as_str().unwrap_or("");
            let initiator = params["initiator"].as_str().unwrap_or("");
            nik.contains("http://127.0.0.1") || initiator.starts_with("http://127.0.0.1")
        })
        .filter_map(|event| event["params"]["url"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn the_page_in_chromium_shows_each_rungs_state_the_windows_and_a_bar_group_per_day() {
    let w = seeded();
    let mut dashboard = Dashboard::start(&w.sb);
    let net_log = w.sb.tmp_dir().join("netlog.json");
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let shot = shots.join("dashboard.png");
    let _ = std::fs::remove_file(&shot);
    // One run for the DOM and the screenshot: the printed URL opens one session only.
    let dom = chromium(
        &w.sb.tmp_dir().join("chromium-dom"),
        &[
            &format!("--log-net-log={}", net_log.display()),
            "--dump-dom",
            &format!("--screenshot={}", shot.display()),
            "--window-size=1280,1600",
            &dashboard.url,
        ],
    );
    let dom = String::from_utf8_lossy(&dom.stdout).into_owned();

    assert!(
        dom.contains("<h1>agent dashboard</h1>"),
        "not the page: {dom}"
    );
    for (rung, state) in [(1, "parked"), (2, "cooling"), (3, "ok")] {
        assert_eq!(
            dom.matches(&format!("<tr data-rung=\"{rung}\" ")).count(),
            1,
            "rung {rung}: {dom}"
        );
        assert!(
            dom.contains(&format!("<tr data-rung=\"{rung}\" data-state=\"{state}\">")),
            "rung {rung} is not {state}: {dom}"
        );
    }
    assert_eq!(dom.matches("<tr data-rung=").count(), 3, "{dom}");
    assert!(
        dom.contains("data-window=\"5h\" data-percent=\"100\""),
        "{dom}"
    );
    assert!(
        dom.contains("data-window=\"7d\" data-percent=\"42\""),
        "{dom}"
    );
    assert_eq!(dom.matches("<g class=\"day\"").count(), 30, "{dom}");
    let today = jiff::ZonedDateTime::now().date();
    let old = today - jiff::Span::new().days(25);
    assert!(
        dom.contains(&format!("data-day=\"{today}\" data-tokens=\"320\"")),
        "{dom}"
    );
    assert!(
        dom.contains(&format!("data-day=\"{old}\" data-tokens=\"0\"")),
        "{dom}"
    );
    // Stacked by backend: a segment per backend on each day with calls, none on a day
    // without; the same colour for a backend on every day; a legend; a column per backend
    // in the table behind the chart.
    for (colour, backend) in [(0, "claude"), (1, "gemini")] {
        assert_eq!(
            dom.matches(&format!(
                "<rect class=\"b{colour}\" data-backend=\"{backend}\" "
            ))
            .count(),
            21,
            "{backend}: {dom}"
        );
        assert!(
            dom.contains(&format!("data-backend=\"{backend}\" data-tokens=\"160\"")),
            "{dom}"
        );
        assert!(dom.contains(&format!("data-legend=\"{backend}\"")), "{dom}");
        assert!(
            dom.contains(&format!("<th class=\"n\">{backend} tokens</th>")),
            "{dom}"
        );
    }
    assert_eq!(dom.matches("<rect ").count(), 42, "{dom}");
    let old_day = dom
        .split(&format!("data-day=\"{old}\" data-tokens=\"0\">"))
        .nth(1)
        .and_then(|rest| rest.split("</g>").next())
        .unwrap();
    assert!(!old_day.contains("<rect"), "{old_day}");
    assert!(dom.contains("data-watchdog=\"DOWN\""), "{dom}");
    assert!(dom.contains("<tr data-event=\"alert\">"), "{dom}");
    assert!(!dom.contains(dashboard.token()), "the token is in the page");
    assert!(
        !dom.contains(crate::world::PROXY_KEY),
        "a key is in the page"
    );

    // Every request the page made went to the dashboard itself. The page's requests are
    // the ones keyed to its site (Chromium's network isolation key); Chromium's own
    // background calls carry other keys, and resolve nowhere here.
    let own = format!("http://{}/", dashboard.addr);
    let page_requests = page_requests(&net_log);
    assert!(
        page_requests.contains(&own),
        "the page itself is not in the net log: {page_requests:?}"
    );
    for url in &page_requests {
        assert!(url.starts_with(&own), "the page asked another host: {url}");
    }

    assert!(
        std::fs::metadata(&shot).is_ok_and(|m| m.len() > 0),
        "no screenshot at {}",
        shot.display()
    );
    assert_eq!(dashboard.interrupt(), Some(0), "Ctrl-C is a clean stop");
}

#[test]
fn without_the_token_the_page_and_every_document_answer_401() {
    let w = world();
    w.sb.write_config(THREE_RUNGS);
    let dashboard = Dashboard::start(&w.sb);
    for path in ["/", "/status.json", "/usage.json", "/budget.json"] {
        let answer = get(&dashboard.addr, path, "");
        assert_eq!(answer.status, 401, "{path}: {answer:?}");
        let answer = get(&dashboard.addr, path, "cookie: agent_dashboard=agd-wrong\n");
        assert_eq!(answer.status, 401, "{path} with a wrong cookie: {answer:?}");
    }
    let wrong = get(&dashboard.addr, "/?token=agd-wrong", "");
    assert_eq!(wrong.status, 401, "{wrong:?}");

    // The one-time URL sets the cookie and leaves the address bar; the cookie opens all.
    let login = get(
        &dashboard.addr,
        &format!("/?token={}", dashboard.token()),
        "",
    );
    assert_eq!(login.status, 303, "{login:?}");
    assert_eq!(login.header("location"), Some("/"));
    let cookie = login.header("set-cookie").expect("a cookie");
    assert!(
        cookie.contains("HttpOnly")
            && cookie.contains("SameSite=Strict")
            && cookie.contains("Path=/"),
        "{cookie}"
    );
    let pair = cookie.split(';').next().unwrap();
    for path in ["/", "/status.json", "/usage.json", "/budget.json"] {
        let answer = get(&dashboard.addr, path, &format!("cookie: {pair}\n"));
        assert_eq!(answer.status, 200, "{path}: {answer:?}");
    }
    let page = get(&dashboard.addr, "/", &format!("cookie: {pair}\n"));
    let csp = page.header("content-security-policy").expect("a CSP");
    assert!(
        csp.contains("default-src 'none'") && csp.contains("frame-ancestors 'none'"),
        "{csp}"
    );
    // The printed token opens a session; it is no bearer.
    let bearer = get(
        &dashboard.addr,
        "/budget.json",
        &format!("authorization: Bearer {}\n", dashboard.token()),
    );
    assert_eq!(bearer.status, 401, "{bearer:?}");
}

#[test]
fn the_relay_token_opens_the_dashboard_too() {
    let w = world();
    w.sb.write_config(THREE_RUNGS);
    let relay_token = "agr-relay-token-for-the-dashboard-0123456789";
    w.sb.env("AGENT_RELAY_TOKEN", relay_token);
    let dashboard = Dashboard::start(&w.sb);
    let answer = get(
        &dashboard.addr,
        "/status.json",
        &format!("authorization: Bearer {relay_token}\n"),
    );
    assert_eq!(answer.status, 200, "{answer:?}");
    let rows = answer.json();
    assert_eq!(rows.as_array().map(Vec::len), Some(3), "{rows}");
}

#[test]
fn the_json_documents_are_the_reports_own() {
    let w = seeded();
    let dashboard = Dashboard::start(&w.sb);
    let session = dashboard.log_in();
    let budget = get(&dashboard.addr, "/budget.json", &session).json();
    let report = w.sb.run(&["--budget", "status", "--json"]);
    let report: serde_json::Value = serde_json::from_str(&report.stdout).unwrap();
    assert_eq!(budget, report);

    let usage = get(&dashboard.addr, "/usage.json", &session).json();
    let since = (jiff::ZonedDateTime::now().date() - jiff::Span::new().days(29)).to_string();
    let report =
        w.sb.run(&["--usage", "--by", "day", "--since", &since, "--json"]);
    let report: serde_json::Value = serde_json::from_str(&report.stdout).unwrap();
    assert_eq!(usage, report);
    assert_eq!(
        usage["groups"].as_array().map(Vec::len),
        Some(21),
        "{usage}"
    );

    // No probe: the status document is what health already knows.
    let posts = w.api.requests().len();
    let status = get(&dashboard.addr, "/status.json", &session).json();
    assert_eq!(w.api.requests().len(), posts, "the status document probed");
    let states: Vec<&str> = status
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["state"].as_str().unwrap())
        .collect();
    assert_eq!(states, ["parked", "cooling", "ok"], "{status}");
    assert_eq!(status[2]["would_pick"], true, "{status}");
}

/// The day bar's tokens for `day` in a page.
fn day_tokens(page: &str, day: &str) -> u64 {
    page.split(&format!("data-day=\"{day}\" data-tokens=\""))
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no bar for {day}: {page}"))
}

#[test]
fn lines_appended_to_the_ledger_between_two_loads_show_on_the_second() {
    let w = seeded();
    let dashboard = Dashboard::start(&w.sb);
    let session = dashboard.log_in();
    let date = jiff::ZonedDateTime::now().date();
    let today = date.to_string();
    let first = get(&dashboard.addr, "/", &session);
    assert_eq!(first.status, 200, "{first:?}");
    assert_eq!(day_tokens(&first.body, &today), 320);

    // One whole line, and one still being written (no newline yet).
    let line = |input: u64| {
        json!({"time": clock::local_time_on(date, 12, 30), "run": "77aa", "backend": "codex", "model": CODEX_MODEL, "role": "probe", "error_kind": "ok", "tokens": {"input": input}}).to_string()
    };
    let mut ledger = std::fs::OpenOptions::new()
        .append(true)
        .open(w.sb.state_dir().join("usage.jsonl"))
        .unwrap();
    std::io::Write::write_all(
        &mut ledger,
        format!("{}\n{}", line(1000), line(5)).as_bytes(),
    )
    .unwrap();
    let second = get(&dashboard.addr, "/", &session);
    assert_eq!(
        day_tokens(&second.body, &today),
        1325,
        "the appended lines are not counted"
    );
    assert!(
        second.body.contains(CODEX_MODEL),
        "no row for the new model"
    );

    // The torn line's end arrives; then the same document as `--usage --json`.
    std::io::Write::write_all(&mut ledger, b"\n").unwrap();
    std::io::Write::write_all(&mut ledger, format!("{}\n", line(2)).as_bytes()).unwrap();
    let third = get(&dashboard.addr, "/", &session);
    assert_eq!(day_tokens(&third.body, &today), 1327);
    let usage = get(&dashboard.addr, "/usage.json", &session).json();
    let since = (jiff::ZonedDateTime::now().date() - jiff::Span::new().days(29)).to_string();
    let report =
        w.sb.run(&["--usage", "--by", "day", "--since", &since, "--json"]);
    let report: serde_json::Value = serde_json::from_str(&report.stdout).unwrap();
    assert_eq!(usage, report);

    // A ledger replaced by a shorter one is read anew.
    std::fs::write(
        w.sb.state_dir().join("usage.jsonl"),
        format!("{}\n", line(7)),
    )
    .unwrap();
    let fourth = get(&dashboard.addr, "/", &session);
    assert_eq!(day_tokens(&fourth.body, &today), 7);
}

/// Every file under `dir`: its contents and modification time.
fn files_and_times(
    dir: &Path,
) -> std::collections::BTreeMap<std::path::PathBuf, (Vec<u8>, std::time::SystemTime)> {
    let mut files = std::collections::BTreeMap::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                let modified = std::fs::metadata(&path).unwrap().modified().unwrap();
                files.insert(path.clone(), (std::fs::read(&path).unwrap(), modified));
            }
        }
    }
    files
}

#[test]
fn loading_the_page_and_its_documents_writes_nothing_in_the_state_directory() {
    // A login past the mark that no launch has parked yet: deciding it parked is what a
    // launch remembers in parked.json; a page that only looks must not.
    let w = seeded();
    assert!(!w.sb.state_dir().join("parked.json").exists());
    let dashboard = Dashboard::start(&w.sb);
    let session = dashboard.log_in();
    let before = files_and_times(w.sb.state_dir());
    for path in ["/", "/status.json", "/usage.json", "/budget.json", "/"] {
        let answer = get(&dashboard.addr, path, &session);
        assert_eq!(answer.status, 200, "{path}: {answer:?}");
    }
    let page = get(&dashboard.addr, "/", &session);
    assert!(
        page.body.contains("data-rung=\"1\" data-state=\"parked\""),
        "{}",
        page.body
    );
    let after = files_and_times(w.sb.state_dir());
    let changed: Vec<_> = after
        .iter()
        .filter(|(path, file)| before.get(*path) != Some(file))
        .map(|(path, _)| path)
        .chain(before.keys().filter(|path| !after.contains_key(*path)))
        .collect();
    assert!(changed.is_empty(), "a page load wrote {changed:?}");
}

#[test]
fn the_relay_serves_the_page_at_dashboard_behind_its_token_only_when_configured_to() {
    use crate::relay::{TOKEN, relay_world};
    use crate::support::relay::RelayProc;
    let (sb, _api) = relay_world();
    sb.write_config(&format!("{THREE_RUNGS}\n[relay]\ndashboard = true\n"));
    let relay = RelayProc::start(&sb, &[]);
    for path in [
        "/dashboard",
        "/dashboard/status.json",
        "/dashboard/usage.json",
        "/dashboard/budget.json",
    ] {
        assert_eq!(relay.get(path, None).status, 401, "{path}");
        assert_eq!(relay.get(path, Some("agr-wrong")).status, 401, "{path}");
        assert_eq!(relay.get(path, Some(TOKEN)).status, 200, "{path}");
    }
    let page = relay.get("/dashboard", Some(TOKEN));
    assert!(
        page.body.contains("<h1>agent dashboard</h1>"),
        "{}",
        page.body
    );
    assert_eq!(
        page.body.matches("<tr data-rung=").count(),
        3,
        "{}",
        page.body
    );
    // Every link stays under /dashboard; the token is never in the page.
    assert!(
        page.body.contains("action=\"/dashboard/probe\""),
        "{}",
        page.body
    );
    assert!(
        page.body.contains("href=\"/dashboard/usage.json\""),
        "{}",
        page.body
    );
    assert!(!page.body.contains(TOKEN), "the relay token is in the page");
    let login = get(&relay.addr, &format!("/dashboard?token={TOKEN}"), "");
    assert_eq!(login.status, 303, "{login:?}");
    assert_eq!(login.header("location"), Some("/dashboard"));
    assert!(
        login
            .header("set-cookie")
            .is_some_and(|c| c.contains("Path=/dashboard")),
        "{login:?}"
    );
    drop(relay);

    // Off by default: the relay has no such route, whoever asks.
    sb.write_config(THREE_RUNGS);
    let relay = RelayProc::start(&sb, &[]);
    assert_eq!(relay.get("/dashboard", Some(TOKEN)).status, 404);
    assert_eq!(relay.get("/dashboard/status.json", Some(TOKEN)).status, 404);
}

#[test]
fn open_hands_the_browser_a_one_time_address_and_never_the_token() {
    let w = world();
    w.sb.write_config(THREE_RUNGS);
    w.sb.fake_cli("xdg-open").install();
    let dashboard = Dashboard::start_with(&w.sb, &["--open"]);
    wait::until("xdg-open run", || !w.sb.calls("xdg-open").is_empty());
    let calls = w.sb.calls("xdg-open");
    assert_eq!(calls.len(), 1, "xdg-open ran {} times", calls.len());
    let argv = &calls[0].argv;
    assert_eq!(argv.len(), 1, "{argv:?}");
    for arg in argv {
        assert!(
            !arg.contains(dashboard.token()),
            "the token is in the browser's argv: {arg}"
        );
    }
    let url = &argv[0];
    let path = url
        .strip_prefix(&format!("http://{}", dashboard.addr))
        .unwrap_or_else(|| panic!("not the dashboard's address: {url}"));
    assert!(path.starts_with("/?once="), "{url}");

    // The address opens the page once: a cookie, then the page with it.
    let first = get(&dashboard.addr, path, "");
    assert_eq!(first.status, 303, "{first:?}");
    let cookie = first.header("set-cookie").expect("a cookie");
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    let pair = cookie.split(';').next().unwrap();
    let page = get(&dashboard.addr, "/", &format!("cookie: {pair}\n"));
    assert_eq!(page.status, 200, "{page:?}");
    assert!(page.body.contains("<h1>agent dashboard</h1>"));
    // Used up: the same address again, or a made-up one, is refused.
    assert_eq!(get(&dashboard.addr, path, "").status, 401);
    assert_eq!(get(&dashboard.addr, "/?once=ago-0123", "").status, 401);
}

#[test]
fn a_non_loopback_listen_address_without_allow_remote_is_refused() {
    let w = world();
    let run = w.sb.run(&["--dashboard", "--listen", "0.0.0.0:0"]);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(run.stderr.contains("--allow-remote"), "{}", run.stderr);
    assert!(run.stdout.is_empty(), "it printed a URL: {}", run.stdout);
}

#[test]
fn probe_now_needs_the_pages_own_form_token_and_probes_as_status_does() {
    let w = world();
    w.sb.write_config(THREE_RUNGS);
    let dashboard = Dashboard::start(&w.sb);
    let session = dashboard.log_in();
    let post = |body: &str, auth: &str| {
        raw(
            &dashboard.addr,
            &format!(
                "POST /probe HTTP/1.1\nhost: {}\ncontent-type: application/x-www-form-urlencoded\ncontent-length: {}\nconnection: close\n{auth}",
                dashboard.addr,
                body.len()
            ),
            body,
        )
    };
    let page = get(&dashboard.addr, "/", &session);
    assert_eq!(page.status, 200, "{page:?}");
    let form = page
        .body
        .split("name=\"form\" value=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("a form token in the page")
        .to_string();
    assert_eq!(w.api.posts(), 0, "the page probed on its own");

    assert_eq!(post("form=forged", &session).status, 403);
    assert_eq!(post(&format!("form={form}"), "").status, 401);
    assert_eq!(w.api.posts(), 0, "a refused form probed");

    let answer = post(&format!("form={form}"), &session);
    assert_eq!(answer.status, 303, "{answer:?}");
    assert_eq!(answer.header("location"), Some("/"));
    assert!(
        w.api.posts_for_model(GEMINI_MODEL) >= 1 && w.api.posts_for_model(CODEX_MODEL) >= 1,
        "probe now did not probe every rung: {:?}",
        w.api.requests()
    );
    // Each form serves once.
    assert_eq!(post(&format!("form={form}"), &session).status, 403);
}

#[test]
fn the_printed_url_opens_one_session_and_a_second_use_is_refused() {
    let w = world();
    w.sb.write_config(THREE_RUNGS);
    let dashboard = Dashboard::start(&w.sb);
    let session = dashboard.log_in();
    assert_eq!(get(&dashboard.addr, "/", &session).status, 200);

    // Whoever finds the URL afterwards (a browser's history, a shared screen) has nothing.
    let again = get(
        &dashboard.addr,
        &format!("/?token={}", dashboard.token()),
        "",
    );
    assert_eq!(again.status, 401, "{again:?}");
    assert!(again.header("set-cookie").is_none(), "{again:?}");
    // The session it opened goes on.
    assert_eq!(get(&dashboard.addr, "/status.json", &session).status, 200);
}

#[test]
fn the_cookie_is_a_session_of_this_process_never_a_token_that_works_elsewhere() {
    let w = world();
    w.sb.write_config(THREE_RUNGS);
    let relay_token = "agr-relay-token-for-the-dashboard-0123456789";
    w.sb.env("AGENT_RELAY_TOKEN", relay_token);
    let (here, there) = (Dashboard::start(&w.sb), Dashboard::start(&w.sb));

    let printed = get(&here.addr, &format!("/?token={}", here.token()), "");
    let by_relay = get(&here.addr, &format!("/?token={relay_token}"), "");
    for login in [&printed, &by_relay] {
        assert_eq!(login.status, 303, "{login:?}");
        let cookie = login.header("set-cookie").expect("a cookie");
        for part in ["HttpOnly", "SameSite=Strict", "Path=/", "Max-Age="] {
            assert!(cookie.contains(part), "{part} missing: {cookie}");
        }
        let pair = session_pair(login);
        let value = pair.trim_start_matches("agent_dashboard=");
        assert!(
            !value.contains(here.token()) && !value.contains(relay_token),
            "the cookie is a token: {cookie}"
        );
        assert_eq!(
            get(&here.addr, "/", &format!("cookie: {pair}\n")).status,
            200
        );
        // Cookies are not kept to a port: the other dashboard on this host gets it too, and
        // it opens nothing there — not as the cookie, not as a bearer.
        for header in [
            format!("cookie: {pair}\n"),
            format!("authorization: Bearer {value}\n"),
            format!("x-api-key: {value}\n"),
        ] {
            let answer = get(&there.addr, "/status.json", &header);
            assert_eq!(answer.status, 401, "{header}: {answer:?}");
        }
    }
    // Two logins, two sessions.
    assert_ne!(session_pair(&printed), session_pair(&by_relay));
}

#[test]
fn the_relays_dashboard_cookie_is_no_relay_token_and_its_api_refuses_it() {
    use crate::relay::{MODEL, TOKEN, messages_body, relay_world};
    use crate::support::relay::RelayProc;
    let (sb, api) = relay_world();
    api.on(Rule::any().reply(Reply::ok()));
    sb.write_config(&format!("{THREE_RUNGS}\n[relay]\ndashboard = true\n"));
    let relay = RelayProc::start(&sb, &[]);

    let login = get(&relay.addr, &format!("/dashboard?token={TOKEN}"), "");
    assert_eq!(login.status, 303, "{login:?}");
    let cookie = login.header("set-cookie").expect("a cookie");
    for part in ["HttpOnly", "SameSite=Strict", "Path=/dashboard", "Max-Age="] {
        assert!(cookie.contains(part), "{part} missing: {cookie}");
    }
    let pair = session_pair(&login);
    let value = pair.trim_start_matches("agent_dashboard=");
    assert!(
        !value.contains(TOKEN),
        "the cookie is the relay token: {cookie}"
    );
    let page = get(&relay.addr, "/dashboard", &format!("cookie: {pair}\n"));
    assert_eq!(page.status, 200, "{page:?}");

    // What a browser holds spends no key: the relay's routes refuse it in every place.
    let body = messages_body(MODEL);
    let as_key = relay.post("/anthropic/v1/messages", Some(value), &body, &[]);
    assert_eq!(as_key.status, 401, "{as_key:?}");
    let bearer = format!("Bearer {value}");
    let as_bearer = relay.post(
        "/anthropic/v1/messages",
        None,
        &body,
        &[("authorization", &bearer)],
    );
    assert_eq!(as_bearer.status, 401, "{as_bearer:?}");
    let as_cookie = relay.post("/anthropic/v1/messages", None, &body, &[("cookie", &pair)]);
    assert_eq!(as_cookie.status, 401, "{as_cookie:?}");
    assert_eq!(api.posts(), 0, "a call went upstream");
    // The relay token itself still works as a key, and opens the page as a bearer.
    assert_eq!(
        relay
            .post("/anthropic/v1/messages", Some(TOKEN), &body, &[])
            .status,
        200
    );
    assert_eq!(relay.get("/dashboard/status.json", Some(TOKEN)).status, 200);
}

#[test]
fn a_request_naming_another_host_is_refused_before_anything() {
    use crate::relay::{TOKEN, relay_world};
    use crate::support::relay::RelayProc;
    let w = world();
    w.sb.write_config(THREE_RUNGS);
    let dashboard = Dashboard::start(&w.sb);
    let port = dashboard.addr.rsplit(':').next().unwrap().to_string();
    let evil = format!("evil.example:{port}");

    // A page at evil.example whose name now resolves to 127.0.0.1 (DNS rebinding) sends
    // its own name: refused, and the printed URL is not spent by it.
    let login = get_as(
        &dashboard.addr,
        &evil,
        &format!("/?token={}", dashboard.token()),
        "",
    );
    assert_eq!(login.status, 421, "{login:?}");
    assert!(login.header("set-cookie").is_none(), "{login:?}");
    let session = dashboard.log_in();
    for path in [
        "/",
        "/status.json",
        "/usage.json",
        "/budget.json",
        "/elsewhere",
    ] {
        let answer = get_as(&dashboard.addr, &evil, path, &session);
        assert_eq!(answer.status, 421, "{path}: {answer:?}");
    }
    // The names it is served on.
    for host in [dashboard.addr.clone(), format!("localhost:{port}")] {
        assert_eq!(
            get_as(&dashboard.addr, &host, "/", &session).status,
            200,
            "{host}"
        );
    }

    // The relay's page too.
    let (sb, _api) = relay_world();
    sb.write_config(&format!("{THREE_RUNGS}\n[relay]\ndashboard = true\n"));
    let relay = RelayProc::start(&sb, &[]);
    let port = relay.addr.rsplit(':').next().unwrap().to_string();
    let bearer = format!("authorization: Bearer {TOKEN}\n");
    for path in ["/dashboard", "/dashboard/status.json"] {
        let answer = get_as(&relay.addr, &format!("evil.example:{port}"), path, &bearer);
        assert_eq!(answer.status, 421, "{path}: {answer:?}");
        assert_eq!(get(&relay.addr, path, &bearer).status, 200, "{path}");
    }
}

/// The page of `w`'s sandbox, open in headless Chromium (its one-time URL spent on it).
fn browse(w: &World, dashboard: &Dashboard) -> crate::support::cdp::Browser {
    crate::support::cdp::Browser::open(
        &w.sb.tmp_dir().join("chromium-cdp"),
        &dashboard.url,
        1280,
        1000,
    )
}

fn text_of(value: &serde_json::Value) -> String {
    value.as_str().unwrap_or_default().to_string()
}

#[test]
fn the_summary_at_the_top_names_the_rung_a_launch_would_run_the_fallback_and_the_tightest_window() {
    let w = seeded();
    let dashboard = Dashboard::start(&w.sb);
    let mut page = browse(&w, &dashboard);
    // First thing after the title.
    assert_eq!(
        page.eval("document.querySelector('h1').nextElementSibling.id"),
        "summary"
    );
    let summary = text_of(&page.eval("document.getElementById('summary').innerText"));
    assert!(
        summary.contains(&format!("A launch runs gemini / {GEMINI_MODEL} (rung 3")),
        "{summary}"
    );
    assert_eq!(
        page.eval("document.getElementById('summary').dataset.pick"),
        "3"
    );
    assert!(summary.contains("Fallback: DOWN"), "{summary}");
    // Codex, a fallback to Claude, cools after its rate limit: said beside the verdict.
    assert!(
        summary.contains(&format!("now codex / {CODEX_MODEL} is cooling")),
        "{summary}"
    );
    // Claude's full 5-hour window (reset in 3 h), named by its login, not its directory.
    assert!(
        summary.contains("Tightest window: Claude Code login 5-hour at 100 %, resets in "),
        "{summary}"
    );
    assert_resets_within_the_seeded_three_hours(&summary);
    assert!(!summary.contains(".claude"), "{summary}");
}

/// The seeded 5-hour window resets 3 h after the sandbox was made: the page says so in
/// relative words, however long the page took to load (a loaded machine, a faked clock).
fn assert_resets_within_the_seeded_three_hours(text: &str) {
    let rest = text
        .split("resets in ")
        .nth(1)
        .unwrap_or_else(|| panic!("no 'resets in' in {text}"));
    let words: Vec<&str> = rest.split_whitespace().take(4).collect();
    let minutes = match words.as_slice() {
        [h, "h", m, min, ..] if min.starts_with("min") => {
            h.parse::<u64>().unwrap() * 60 + m.parse::<u64>().unwrap()
        }
        [h, "h", ..] => h.parse::<u64>().unwrap() * 60,
        other => panic!("not a relative time: {other:?} in {text}"),
    };
    assert!(
        (120..=180).contains(&minutes),
        "resets in {minutes} min: {text}"
    );
}

#[test]
fn the_page_text_says_times_relatively_and_never_a_question_mark_or_a_raw_timestamp() {
    let w = seeded();
    let dashboard = Dashboard::start(&w.sb);
    let mut page = browse(&w, &dashboard);
    let text = text_of(&page.eval("document.body.innerText"));
    assert!(!text.contains('?'), "a ? in the page: {text}");
    let stamp = page.eval(r"/\d{4}-\d\d-\d\dT\d\d:\d\d/.test(document.body.innerText)");
    assert_eq!(stamp, false, "an RFC 3339 stamp in the page: {text}");
    // Each time is relative, with its absolute local time on hover.
    assert_resets_within_the_seeded_three_hours(&text);
    // What was seeded a moment ago reads so (`just now`, or `N s ago` on a loaded machine).
    assert!(
        text.contains("just now") || text.contains(" s ago"),
        "{text}"
    );
    let untitled = page
        .eval("[...document.querySelectorAll('time')].filter(t => !t.title || !t.dateTime).length");
    assert_eq!(untitled, 0);
    assert!(
        page.eval("document.querySelectorAll('time').length")
            .as_u64()
            .unwrap()
            >= 5
    );
}

#[test]
fn a_rung_not_proved_is_not_coloured_as_one_that_answered() {
    let w = world();
    w.sb.write_config(
        "[backends.codex]\nprobe = { kind = \"none\" }\n\n[[rungs]]\nbackend = \"codex\"\n\n[[rungs]]\nbackend = \"gemini\"\n",
    );
    let status = w.sb.run(&["--status"]);
    assert_eq!(status.code, Some(0), "{status:?}");
    let dashboard = Dashboard::start(&w.sb);
    let mut page = browse(&w, &dashboard);
    let state = |page: &mut crate::support::cdp::Browser, rung: u32| {
        page.eval(&format!(
            "(() => {{ const tr = document.querySelector('tr[data-rung=\"{rung}\"]'); const s = tr.querySelector('.state'); return [tr.dataset.state, s.innerText, getComputedStyle(s).color]; }})()"
        ))
    };
    let not_proved = state(&mut page, 1);
    let ok = state(&mut page, 2);
    assert_eq!(not_proved[0], "not_proved", "{not_proved}");
    assert_eq!(ok[0], "ok", "{ok}");
    assert!(
        text_of(&not_proved[1]).starts_with("not proved"),
        "{not_proved}"
    );
    assert_ne!(
        not_proved[2], ok[2],
        "not proved is drawn as ok: {not_proved} {ok}"
    );
}

#[test]
fn one_call_is_one_call_and_large_counts_are_grouped() {
    let w = world();
    w.sb.write_config(THREE_RUNGS);
    let today = jiff::ZonedDateTime::now().date();
    let line = json!({
        "time": clock::local_time_on(today, 9, 0),
        "run": "3f2a0c1d9e8b",
        "backend": "gemini",
        "model": GEMINI_MODEL,
        "account": null,
        "upstream": "mock",
        "role": "launch",
        "status": 200,
        "error_kind": "ok",
        "tokens": {"input": 12_000, "output": 345, "reasoning": 0, "cache_read": 0, "cache_write": 0},
        "estimated": false,
        "ttfb_s": 0.3,
        "duration_s": 4.2,
        "request_id": null,
        "day": today.to_string(),
    });
    std::fs::write(w.sb.state_dir().join("usage.jsonl"), format!("{line}\n")).unwrap();
    let dashboard = Dashboard::start(&w.sb);
    let mut page = browse(&w, &dashboard);
    let text = text_of(&page.eval("document.body.innerText"));
    assert!(text.contains("30 days: 1 call, 12,345 tokens"), "{text}");
    assert!(!text.contains("1 calls"), "{text}");
}

#[test]
fn panels_with_nothing_to_show_are_one_line_each() {
    let w = world();
    w.sb.write_config(THREE_RUNGS);
    let dashboard = Dashboard::start(&w.sb);
    let mut page = browse(&w, &dashboard);
    for heading in [
        "Today's budget",
        "Usage, last 30 days",
        "Recent events",
        "Login windows",
    ] {
        let found = page.eval(&format!(
            "(() => {{ const h = [...document.querySelectorAll('h2')].find(h => h.innerText.startsWith(\"{heading}\")); if (!h) return null; const line = parseFloat(getComputedStyle(h).lineHeight); return [h.nextElementSibling ? h.nextElementSibling.tagName : 'END', h.getBoundingClientRect().height / line, h.innerText]; }})()"
        ));
        assert!(found.is_array(), "no {heading} panel");
        // Nothing under the heading but the next panel, and the heading one line high.
        assert!(
            ["H2", "P", "SCRIPT", "END"].contains(&found[0].as_str().unwrap())
                && (found[0] == "H2" || heading == "Recent events"),
            "{heading}: {found}"
        );
        assert!(found[1].as_f64().unwrap() < 1.5, "{heading}: {found}");
    }
    let budget = text_of(&page.eval(
        "[...document.querySelectorAll('h2')].find(h => h.innerText.startsWith(\"Today's budget\")).innerText",
    ));
    assert!(budget.contains("nothing spent"), "{budget}");
    assert_eq!(
        page.eval("document.querySelectorAll('[data-budget]').length"),
        0
    );
}

/// `docs/dashboard.png`, from a sandbox that looks like a subscriber's day: Claude Code on
/// a Max login parked by its full 5-hour window, Codex on a ChatGPT Pro login proved by
/// its own check with its 5-hour window at 62 %, Gemini on an API key probed OK, a week of
/// usage, the watchdog's OK. Only when `AGENT_DASHBOARD_SCREENSHOT` names the file to
/// write (`scripts/dashboard-screenshot.sh` sets it).
#[test]
fn the_readme_screenshot() {
    let Some(shot) = std::env::var_os("AGENT_DASHBOARD_SCREENSHOT") else {
        return;
    };
    let api = crate::support::MockApi::start();
    api.on(Rule::any().reply(Reply::ok()));
    let sb = crate::support::Sandbox::new();
    sb.env("ANTHROPIC_BASE_URL", api.url());
    sb.env("GOOGLE_GEMINI_BASE_URL", api.url());
    let now = Timestamp::now();
    let in_ms = |hours: i64| (now + SignedDuration::from_hours(hours)).as_millisecond();
    sb.write_file(
        ".claude/.credentials.json",
        &json!({"claudeAiOauth": {
            "accessToken": "sk-ant-oat01-screenshot", "refreshToken": "sk-ant-ort01-screenshot",
            "expiresAt": in_ms(24 * 20), "scopes": ["user:inference"],
            "subscriptionType": "max", "rateLimitTier": "default_claude_max_20x"}})
        .to_string(),
    );
    let jwt = |claims: serde_json::Value| {
        let part = |v: &serde_json::Value| base64url(v.to_string().as_bytes());
        format!("{}.{}.sig", part(&json!({"alg": "none"})), part(&claims))
    };
    sb.write_file(".codex/config.toml", "model = \"gpt-5.5\"\n");
    sb.write_file(
        ".codex/auth.json",
        &json!({"auth_mode": "chatgpt", "OPENAI_API_KEY": null, "tokens": {
            "id_token": jwt(json!({"https://api.openai.com/auth": {"chatgpt_plan_type": "pro"}})),
            "access_token": jwt(json!({"exp": in_ms(240) / 1000})),
            "refresh_token": "rt-screenshot", "account_id": "acct-1"}})
        .to_string(),
    );
    sb.write_file(
        ".gemini/settings.json",
        r#"{"model": {"name": "gemini-3-pro"}, "security": {"auth": {"selectedType": "oauth-personal"}}}"#,
    );
    sb.write_file(
        ".gemini/oauth_creds.json",
        &json!({"access_token": "ya29.screenshot", "refresh_token": "1//screenshot",
            "token_type": "Bearer", "expiry_date": in_ms(1)})
        .to_string(),
    );
    let answered = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/self_check/codex-answered.stdout"),
    )
    .unwrap()
    .replace("gpt-e2e-codex", "gpt-5.5");
    let gemini = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/self_check/gemini-answered.stdout"),
    )
    .unwrap();
    sb.fake_cli("claude").stdout("ok\n").install();
    sb.fake_cli("codex").stdout(&answered).install();
    sb.fake_cli("gemini").stdout(&gemini).install();
    sb.write_config(
        r#"
[[rungs]]
backend = "claude"
probe_model = "claude-opus-5"

[[rungs]]
backend = "codex"
probe_model = "gpt-5.5"

[[rungs]]
backend = "gemini"
probe_model = "gemini-3-pro"
"#,
    );
    let window = |kind: &str, percent: f64, minutes: i64, seen: i64, source: &str| {
        json!({
            "scope": {"kind": kind},
            "used_percent": percent,
            "resets_at": (now + SignedDuration::from_mins(minutes)).to_string(),
            "source": source,
            "observed_at": (now - SignedDuration::from_mins(seen)).to_string(),
        })
    };
    let claude = crate::support::claude_dir_login(sb.home());
    let codex = format!("codex:{}", sb.home().join(".codex").display());
    std::fs::write(
        sb.state_dir().join("windows.json"),
        json!({"logins": {
            &claude: [window("five_hour", 100.0, 100, 4, "statusline"), window("weekly", 38.0, 4 * 1440 + 200, 4, "statusline")],
            &codex: [window("five_hour", 62.0, 130, 9, "app_server"), window("weekly", 24.0, 5 * 1440 + 60, 9, "app_server")],
        }})
        .to_string(),
    )
    .unwrap();
    let status = sb.run(&["--status", "--json"]);
    let rows: serde_json::Value = serde_json::from_str(&status.stdout).expect("--status --json");
    for key in [&claude, &codex] {
        assert!(
            rows.as_array()
                .unwrap()
                .iter()
                .any(|row| row["login"]["key"] == key.as_str()),
            "no login {key}: {rows}"
        );
    }

    let mut ledger = String::new();
    let today = jiff::ZonedDateTime::now().date();
    for back in 0..7i64 {
        let day = today - jiff::Span::new().days(back);
        let weekday = i64::from(day.weekday().to_monday_zero_offset());
        let busy = if weekday >= 5 {
            1
        } else {
            3 + (back * 7 + 3) % 4
        };
        for (backend, model, calls, input, output, cached) in [
            ("claude", "claude-opus-5", busy * 9, 21_000, 1_900, 310_000),
            ("codex", "gpt-5.5", busy * 5, 18_000, 2_400, 140_000),
            ("gemini", "gemini-3-pro", busy, 9_000, 800, 20_000),
        ] {
            for call in 0..calls {
                let line = json!({
                    "time": clock::local_time_on(day, i8::try_from(9 + call % 9).unwrap(), i8::try_from((call * 7) % 60).unwrap()),
                    "run": format!("{:012x}", back * 1000 + call),
                    "backend": backend,
                    "model": model,
                    "account": null,
                    "upstream": "cli",
                    "role": "launch",
                    "status": 200,
                    "error_kind": "ok",
                    "tokens": {"input": input + call * 137, "output": output, "reasoning": 0, "cache_read": cached, "cache_write": input / 3},
                    "estimated": false,
                    "ttfb_s": 0.9,
                    "duration_s": 41.0,
                    "request_id": null,
                    "day": day.to_string(),
                });
                ledger.push_str(&line.to_string());
                ledger.push('\n');
            }
        }
    }
    std::fs::write(sb.state_dir().join("usage.jsonl"), ledger).unwrap();
    let ago = |minutes: i64| (now - SignedDuration::from_mins(minutes)).to_string();
    std::fs::write(
        sb.state_dir().join("watchdog.json"),
        json!({"state": "OK", "since": ago(2 * 1440 + 75), "last_check": ago(12),
            "last_message": "codex / gpt-5.5 and gemini / gemini-3-pro answer"})
        .to_string(),
    )
    .unwrap();
    let mut events = String::new();
    for event in [
        json!({"time": ago(2 * 1440 + 80), "event": "alert", "from": "OK", "to": "DEGRADED", "reason": "gemini / gemini-3-pro: 503 overloaded"}),
        json!({"time": ago(2 * 1440 + 75), "event": "alert", "from": "DEGRADED", "to": "OK", "reason": "every fallback rung answers"}),
    ] {
        events.push_str(&event.to_string());
        events.push('\n');
    }
    // The checks' own health events say where the mock listens: the watchdog's instead.
    std::fs::write(sb.state_dir().join("events.jsonl"), events).unwrap();

    let dashboard = Dashboard::start(&sb);
    let mut page = crate::support::cdp::Browser::open(
        &sb.tmp_dir().join("chromium-shot"),
        &dashboard.url,
        1100,
        900,
    );
    let text = text_of(&page.eval("document.body.innerText"));
    for leak in ["agent-test", "-test-", "/tmp/"] {
        assert!(
            !text.contains(leak),
            "test data in the screenshot ({leak}): {text}"
        );
    }
    let size = page
        .eval("new TextEncoder().encode(document.documentElement.outerHTML).length")
        .as_u64()
        .unwrap();
    assert!(size < 100_000, "the page is {size} bytes");
    page.screenshot(Path::new(&shot), 1100);
    println!("{text}\n\n{size} bytes");
}

fn base64url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

/// Issue 43, item 6: the page said "last check: not yet" of rungs `--status` had checked
/// minutes earlier. Every rung a check reached says how long ago, whatever state it is in
/// now (its answer no longer trusted, its login parked by what the check found).
#[test]
fn every_rung_a_status_checked_says_when_on_the_page() {
    let (sb, _api) = crate::logins::logged_in();
    sb.write_config(
        "probe_cache_seconds = 0\nself_check_cache_seconds = 0\n\n[[rungs]]\nbackend = \"claude\"\nprobe_model = \"opus\"\n\n[[rungs]]\nbackend = \"claude\"\nprobe_model = \"sonnet\"\nrun_model = \"sonnet\"\n\n[[rungs]]\nbackend = \"codex\"\n",
    );
    assert_eq!(sb.run(&["--status"]).code, Some(0));

    let dashboard = Dashboard::start(&sb);
    let session = dashboard.log_in();
    let rows = get(&dashboard.addr, "/status.json", &session).json();
    let page = get(&dashboard.addr, "/", &session).body;

    for row in rows.as_array().unwrap() {
        assert!(
            row["checked_age_seconds"].is_u64(),
            "rung {} was checked: {row}",
            row["rung"]
        );
    }
    assert!(!page.contains(">not yet<"), "{page}");
}
