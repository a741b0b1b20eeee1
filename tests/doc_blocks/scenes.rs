//! The sandboxes the pages' transcripts run in: each scene sets up what its page's words
//! describe (who is logged in, which window is full, what the CLIs answer), and a
//! transcript's commands then run in it as a user's shell runs them — `/bin/sh`, agent on
//! `PATH`, stdout and stderr in one stream as a terminal shows them.
//!
//! What must differ from the page on this machine is named, both ways: the sandbox's paths
//! are written as the page writes them (`/home/you`), and an address the page names
//! (`https://proxy.example`) is the mock's on loopback — the page's word goes to agent,
//! the mock's address comes back as the page's word. Nothing else is rewritten.

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::process::Stdio;

use jiff::{SignedDuration, Timestamp};
use serde_json::json;

use crate::support::sandbox::{agent_binary, run_command};
use crate::support::{MockApi, Sandbox, wait};

/// Every scene a page may name.
pub const NAMES: &[&str] = &[
    "descent",
    "newcomer",
    "window-out",
    "window-out-resume",
    "task-chain",
    "task-chain-back",
    "watchdog-install",
    "second-login",
    "api-keys",
    "relay-client",
    "rungs-now",
    "fast-failure",
    "spend-limit",
    "far-reset",
    "all-parked",
    "waiting",
    "statusline",
    "key-pool",
    "login-pool",
    "usage",
    "usage-by-day",
    "reconcile",
    "budget",
    "dashboard",
];

/// The scene called `name`, set up afresh.
pub fn scene(name: &str) -> Option<Scene> {
    let scene = match name {
        "descent" => descent(),
        "newcomer" => newcomer(),
        "window-out" => window_out(3 * 3600),
        "window-out-resume" => window_out(3),
        "task-chain" => task_chain(3 * 3600, false),
        "task-chain-back" => task_chain(3, true),
        "watchdog-install" => watchdog_install(),
        "second-login" => second_login(),
        "api-keys" => api_keys(),
        "relay-client" => Scene::new(Sandbox::new()),
        "rungs-now" => rungs_now(),
        "fast-failure" => fast_failure(),
        "spend-limit" => spend_limit(),
        "far-reset" => far_reset(),
        "all-parked" => all_parked(SignedDuration::from_mins(42)),
        "waiting" => all_parked(SignedDuration::from_secs(3)),
        "statusline" => statusline(),
        "key-pool" => key_pool(),
        "login-pool" => login_pool(),
        "usage" => usage(),
        "usage-by-day" => usage_by_day(),
        "reconcile" => reconcile(),
        "budget" => budget(),
        "dashboard" => Scene::new(Sandbox::new()).until("Ctrl-C stops it"),
        _ => return None,
    };
    Some(scene)
}

/// Something done to a scene's sandbox.
type Step = Box<dyn Fn(&Sandbox)>;

/// A sandbox a transcript runs in, and how its words and the page's differ.
pub struct Scene {
    sb: Sandbox,
    /// What the scene holds open while it runs (a mock API); never read.
    held: Vec<Box<dyn std::any::Any>>,
    /// `(the page's word, this run's)`.
    names: Vec<(String, String)>,
    /// Done to the sandbox right before each command runs.
    just_before: Option<Step>,
    /// For a command that runs until stopped (a server): the words of its last line before
    /// it waits; it is stopped once it has printed them.
    until: Option<&'static str>,
}

impl Scene {
    fn new(sb: Sandbox) -> Self {
        let bin = sb.bin_dir().join("agent");
        std::os::unix::fs::symlink(agent_binary(), &bin).unwrap();
        let mut names: Vec<(String, String)> = vec![
            (
                "/home/you/.local/bin/agent".into(),
                Path::new(&agent_binary()).display().to_string(),
            ),
            (
                "/home/you/.local/bin".into(),
                sb.bin_dir().display().to_string(),
            ),
            (
                "/home/you/.local/state/agent".into(),
                sb.state_dir().display().to_string(),
            ),
            (
                "/home/you/.local/bin".into(),
                Path::new(&agent_binary())
                    .parent()
                    .unwrap()
                    .display()
                    .to_string(),
            ),
            ("/tmp".into(), sb.tmp_dir().display().to_string()),
            ("/home/you".into(), sb.home().display().to_string()),
        ];
        names.push(("/sandbox".into(), sb.root().display().to_string()));
        Scene {
            sb,
            held: Vec::new(),
            names,
            just_before: None,
            until: None,
        }
    }

    fn keep(mut self, thing: impl std::any::Any) -> Self {
        self.held.push(Box::new(thing));
        self
    }

    /// Right before each command runs, do `what` (a reset a few seconds ahead is set then,
    /// not when the scene was set up).
    fn just_before(mut self, what: impl Fn(&Sandbox) + 'static) -> Self {
        self.just_before = Some(Box::new(what));
        self
    }

    /// The scene's command serves until stopped: stop it once it has printed `words`.
    fn until(mut self, words: &'static str) -> Self {
        self.until = Some(words);
        self
    }

    /// The page writes `page` where this run has `real`.
    fn name(mut self, page: &str, real: &str) -> Self {
        self.names.push((page.to_string(), real.to_string()));
        self
    }

    /// `text` in this run's words: each page word replaced, the longest first.
    fn to_real(&self, text: &str) -> String {
        let mut names: Vec<&(String, String)> = self.names.iter().collect();
        names.sort_by_key(|(page, _)| std::cmp::Reverse(page.len()));
        let mut text = text.to_string();
        for (page, real) in names {
            text = text.replace(page.as_str(), real);
        }
        text
    }

    /// `text` in the page's words: each of this run's values replaced, the longest first.
    fn to_page(&self, text: &str) -> String {
        let mut names: Vec<&(String, String)> = self.names.iter().collect();
        names.sort_by_key(|(_, real)| std::cmp::Reverse(real.len()));
        let mut text = text.to_string();
        for (page, real) in names {
            text = text.replace(real.as_str(), page);
        }
        text
    }

    /// Runs the page's command, as typed at a shell in the sandbox, and returns
    /// the lines it printed (stdout and stderr as they came), in the page's words. An
    /// `export` line sets the variables for the commands after it.
    pub fn run(&self, command: &str) -> Vec<String> {
        if let Some(what) = &self.just_before {
            what(&self.sb);
        }
        let command = self.to_real(command);
        if let Some(assignments) = command.strip_prefix("export ") {
            let words = assignments.split('#').next().unwrap_or_default();
            for word in words.split_whitespace() {
                let (key, value) = word.split_once('=').unwrap_or((word, ""));
                self.sb.env(key, value);
            }
            return Vec::new();
        }
        let mut shell = self.sb.command_of(
            Path::new("/bin/sh"),
            &["-c", &format!("exec 2>&1\n{command}")],
        );
        shell.stdin(Stdio::null());
        let printed = match self.until {
            Some(words) => served(shell, words),
            None => {
                let run = run_command(shell, crate::support::sandbox::RUN_TIMEOUT);
                assert!(!run.timed_out, "`{command}` did not end: {run:?}");
                run.stdout
            }
        };
        self.to_page(&printed)
            .lines()
            .map(ToString::to_string)
            .collect()
    }
}

/// What a serving command printed up to the line holding `words`; then it is stopped, with
/// everything it started.
fn served(mut shell: std::process::Command, words: &str) -> String {
    use std::io::BufRead as _;
    use std::os::unix::process::CommandExt as _;
    shell.stdout(Stdio::piped()).process_group(0);
    let mut child = crate::support::sandbox::spawn(&mut shell).expect("the shell starts");
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            let _ = tx.send(line);
        }
    });
    let mut printed = String::new();
    loop {
        let line = rx
            .recv_timeout(wait::PATIENCE)
            .unwrap_or_else(|_| panic!("it never said {words:?}: {printed}"));
        printed.push_str(&line);
        printed.push('\n');
        if line.contains(words) {
            break;
        }
    }
    crate::support::sandbox::kill_group(child.id());
    let _ = child.wait();
    printed
}

/// `(code, stderr)` of `agent --list` with `toml` as its configuration, in a sandbox where
/// every variable the pages' configurations name is set.
pub fn load_configuration(toml: &str) -> (Option<i32>, String) {
    let sb = Sandbox::new();
    for key in [
        "AGENT_TELEGRAM_TOKEN",
        "AGENT_PROXY_URL",
        "AGENT_PROXY_KEY",
        "CLAUDE_MAX_TOKEN",
    ] {
        sb.env(key, "set-for-the-page");
    }
    sb.env("AGENT_REDIS_URL", "redis://127.0.0.1:1/0");
    sb.write_config(toml);
    let run = sb.run(&["--list"]);
    (run.code, run.stderr)
}

/// A fake CLI that says `version` to `--version` and `answer` to anything else.
fn cli(sb: &Sandbox, name: &str, version: &str, answer: &str) {
    sb.fake_cli(name)
        .script(&format!(
            "case \"$1\" in --version) echo '{version}';; app-server) exit 0;; *) echo '{answer}';; esac"
        ))
        .install();
}

/// When a login's token expires: some months from now, as a fresh login's does.
fn expires() -> Timestamp {
    Timestamp::now() + SignedDuration::from_hours(24 * 280)
}

/// A home logged in to Claude Code (Max), Codex (ChatGPT Plus) and Gemini CLI (a Code
/// Assist licence) by subscription, no API key, no proxy; the home is a git repository
/// every CLI trusts; agy and opencode are not installed.
fn subscriber() -> (Sandbox, MockApi) {
    let api = MockApi::start();
    let sb = Sandbox::new();
    std::fs::set_permissions(sb.state_dir(), std::fs::Permissions::from_mode(0o700)).unwrap();
    sb.env("ANTHROPIC_BASE_URL", api.url());
    sb.env("GOOGLE_GEMINI_BASE_URL", api.url());
    sb.env("TZ", "UTC");
    log_claude_in(&sb, ".claude");
    let ms = expires().as_millisecond();
    let token = |claims: serde_json::Value| crate::logins::jwt(&claims);
    sb.write_file(
        ".codex/auth.json",
        &json!({"auth_mode": "chatgpt", "OPENAI_API_KEY": null, "tokens": {
            "id_token": token(json!({"https://api.openai.com/auth": {"chatgpt_plan_type": "plus"}})),
            "access_token": token(json!({"exp": ms / 1000, "sub": "docs"})),
            "refresh_token": "rt_docsREFRESH_0000", "account_id": "acct-docs"}})
        .to_string(),
    );
    sb.write_file(
        ".gemini/oauth_creds.json",
        &json!({"access_token": "ya29.docs", "refresh_token": "1//docs",
            "token_type": "Bearer", "expiry_date": ms})
        .to_string(),
    );
    sb.write_file(
        ".gemini/settings.json",
        r#"{"security": {"auth": {"selectedType": "oauth-personal"}}}"#,
    );
    sb.env("GOOGLE_CLOUD_PROJECT", "code-assist-licence");
    crate::logins::trusted_by_every_cli(&sb);
    cli(&sb, "claude", "2.1.332 (Claude Code)", "claude answered");
    cli(&sb, "codex", "codex-cli 0.171.0", "codex answered");
    cli(&sb, "gemini", "0.61.0", "gemini answered");
    (sb, api)
}

/// Claude Code (Max) logged in, its home at `~/DIR`.
fn log_claude_in(sb: &Sandbox, dir: &str) {
    sb.write_file(
        &format!("{dir}/.credentials.json"),
        &json!({"claudeAiOauth": {
            "accessToken": format!("sk-ant-oat01-docs-{dir}-access"),
            "refreshToken": format!("sk-ant-ort01-docs-{dir}-refresh"),
            "expiresAt": expires().as_millisecond(), "scopes": ["user:inference"],
            "subscriptionType": "max", "rateLimitTier": "default_claude_max_20x"}})
        .to_string(),
    );
}

/// One window: its scope, percent used and reset.
type Window = (serde_json::Value, f64, Timestamp);

/// The key `windows.json` files the Claude login at `~/DIR` under.
fn claude_login(sb: &Sandbox, dir: &str) -> String {
    format!("claude:{}", sb.home().join(dir).display())
}

/// `windows.json` holding `windows` of the Claude login at `~/DIR`, seen by the statusline
/// `seen` ago.
fn claude_windows(sb: &Sandbox, dir: &str, windows: &[Window], seen: SignedDuration) {
    write_windows(sb, &[(claude_login(sb, dir), windows.to_vec())], seen);
}

/// `windows.json` holding each login's windows, all seen by the statusline `seen` ago.
fn write_windows(sb: &Sandbox, logins: &[(String, Vec<Window>)], seen: SignedDuration) {
    let observed = (Timestamp::now() - seen).to_string();
    let mut map = serde_json::Map::new();
    for (login, windows) in logins {
        let rows: Vec<serde_json::Value> = windows
            .iter()
            .map(|(scope, percent, resets)| {
                json!({"scope": scope, "used_percent": percent, "resets_at": resets.to_string(),
                       "source": "statusline", "observed_at": observed})
            })
            .collect();
        map.insert(login.clone(), serde_json::Value::Array(rows));
    }
    std::fs::write(
        sb.state_dir().join("windows.json"),
        json!({ "logins": map }).to_string(),
    )
    .unwrap();
}

fn in_hours(hours: i64) -> Timestamp {
    Timestamp::now() + SignedDuration::from_hours(hours)
}

/// A subscriber whose weekly Opus window is full: rung 1 is parked, Sonnet answers.
fn descent() -> Scene {
    let (sb, api) = subscriber();
    cli(
        &sb,
        "claude",
        "2.1.332 (Claude Code)",
        "The bug is an off-by-one in the loop bound.",
    );
    claude_windows(
        &sb,
        ".claude",
        &[(
            json!({"kind": "model_weekly", "family": "opus"}),
            100.0,
            in_hours(40),
        )],
        SignedDuration::from_mins(3),
    );
    Scene::new(sb).keep(api)
}

/// A subscriber's first reports: nothing configured, a `settings.json` of their own.
fn newcomer() -> Scene {
    let (sb, api) = subscriber();
    sb.write_file(".claude/settings.json", "{\n  \"theme\": \"dark\"\n}\n");
    Scene::new(sb).keep(api)
}

/// A subscriber's Claude Code session that works past `fastfail_seconds` (1 s here), edits
/// a file and runs out of its 5-hour window, which resets `reset_in` seconds later; resumed,
/// it picks up where it stopped; Codex, below it, finishes the task.
fn window_out(reset_in: i64) -> Scene {
    let (sb, api) = subscriber();
    claude_runs_out(
        &sb,
        reset_in,
        "fix the failing tests",
        ("src/parser.rs", "pub fn parse() {}\n", "{ Ok(()) }"),
        "The parser rejects an empty file; fixing that first.",
    );
    cli(
        &sb,
        "codex",
        "codex-cli 0.171.0",
        "Fixed: the parser accepts an empty file; cargo test passes.",
    );
    Scene::new(sb).keep(api)
}

/// A one-second fast-failure threshold, and a Claude Code session that takes `task`, says
/// `said`, edits `file` (its path, its text, the new text of the edit) and runs out of its
/// 5-hour window, the reset `reset_in` seconds after it ends.
fn claude_runs_out(sb: &Sandbox, reset_in: i64, task: &str, file: (&str, &str, &str), said: &str) {
    use crate::support::claude_code::{
        FakeClaude, assistant_row, five_hour_limit_row_332, prompt_row,
    };
    let (path, text, new_text) = file;
    sb.write_config("fastfail_seconds = 1\n");
    let edited = sb.write_file(path, text);
    let rows = [
        prompt_row(task),
        assistant_row(&json!([
            {"type": "text", "text": said},
            {"type": "tool_use", "id": "t1", "name": "Edit",
             "input": {"file_path": edited.to_string_lossy(), "old_string": "{}", "new_string": new_text}},
        ])),
        five_hour_limit_row_332(),
    ];
    FakeClaude::new(sb)
        .works("1.3")
        .reset_in(reset_in)
        .edits(&edited)
        .rows(&rows)
        .install();
}

/// A subscriber whose Claude Code session ports a parser and runs out of its 5-hour window
/// (the reset `reset_in` seconds after it ends), and a Codex that carries the task it is
/// handed. `handed_off`: that has happened already, and Claude Code's window has reset, by
/// the time the transcript runs.
fn task_chain(reset_in: i64, handed_off: bool) -> Scene {
    use crate::support::claude_code::resets;
    let (sb, api) = subscriber();
    claude_runs_out(
        &sb,
        reset_in,
        "port the parser to nom 8",
        ("src/lexer.rs", "pub fn lex() {}\n", "{ todo!() }"),
        "Porting the lexer first.",
    );
    crate::support::codex::carrying_a_task(&sb);
    let scene = Scene::new(sb);
    if handed_off {
        let run = scene
            .sb
            .run(&["--on-limit=continue", "-p", "port the parser to nom 8"]);
        assert_eq!(
            run.code,
            Some(0),
            "the hand-off the scene starts from: {run:?}"
        );
        let reset = resets(&scene.sb)[0];
        wait::until("Claude Code's window to reset", || {
            Timestamp::now().as_second() >= reset
        });
    }
    scene.keep(api)
}

/// A subscriber with an alert channel, a project every CLI trusts, and a systemd to
/// enable the job with (a stand-in: the machine's own is never touched).
fn watchdog_install() -> Scene {
    let (sb, api) = subscriber();
    sb.write_config(
        "[alerts.telegram]\nbot_token = \"${AGENT_TELEGRAM_TOKEN}\"\nchat_id = \"123456\"\n",
    );
    sb.env("AGENT_TELEGRAM_TOKEN", "7012345678:docs-bot-token");
    let repo = sb.set_cwd("code/some-repo");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    let folder = repo.to_string_lossy().into_owned();
    sb.write_file(
        ".claude.json",
        &json!({"projects": {&folder: {"hasTrustDialogAccepted": true}}}).to_string(),
    );
    sb.write_file(
        ".codex/config.toml",
        &format!("[projects.\"{folder}\"]\ntrust_level = \"trusted\"\n"),
    );
    sb.write_file(
        ".gemini/trustedFolders.json",
        &json!({ &folder: "TRUST_FOLDER" }).to_string(),
    );
    sb.fake_cli("systemctl").install();
    Scene::new(sb).keep(api)
}

/// A subscriber whose own login's windows the statusline reported 3 minutes ago, with a
/// second Claude Max logged in in `~/.claude-work`.
fn second_login() -> Scene {
    let (sb, api) = subscriber();
    log_claude_in(&sb, ".claude-work");
    claude_windows(
        &sb,
        ".claude",
        &[
            (json!({"kind": "five_hour"}), 42.0, in_hours(3)),
            (json!({"kind": "weekly"}), 81.0, in_hours(3 * 24)),
        ],
        SignedDuration::from_mins(3),
    );
    Scene::new(sb).keep(api)
}

/// Keys for every vendor, and a proxy: the page's `https://proxy.example` is the mock.
fn api_keys() -> Scene {
    let w = crate::world::world();
    let url = w.api.url();
    let host = url.trim_start_matches("http://").to_string();
    for key in ["AGENT_PROXY_URL", "AGENT_PROXY_KEY", "GEMINI_API_KEY"] {
        w.sb.env_remove(key);
    }
    // Codex's own provider is the mock too (codex ignores OPENAI_BASE_URL), with the key
    // the page exports.
    w.sb.write_file(
        ".codex/config.toml",
        &format!(
            "model = \"gpt-5.5\"\nmodel_provider = \"openai-compatible\"\n\n[model_providers.openai-compatible]\nname = \"openai\"\nbase_url = \"{url}/v1\"\nenv_key = \"OPENAI_API_KEY\"\nwire_api = \"responses\"\n"
        ),
    );
    w.sb.write_file(
        ".gemini/settings.json",
        r#"{"model": {"name": "gemini-3.1-pro"}}"#,
    );
    Scene::new(w.sb)
        .keep(w.api)
        .name("https://proxy.example", &url)
        .name("proxy.example", &host)
        .name(
            "ANTHROPIC_API_KEY=sk-ant-…",
            "ANTHROPIC_API_KEY=sk-ant-api03-docs-0123456789abcdef",
        )
        .name(
            "OPENAI_API_KEY=sk-…",
            "OPENAI_API_KEY=sk-proj-docs-0123456789abcdef",
        )
        .name(
            "GEMINI_API_KEY=…",
            "GEMINI_API_KEY=AIzaSyDocs0123456789abcdef",
        )
        .name(
            "AGENT_PROXY_KEY=…",
            "AGENT_PROXY_KEY=sk-proxy-docs-0123456789abcdef",
        )
}

/// A subscriber whose 5-hour window is full, whose Gemini CLI fails, and whose last launch
/// failed fast on it.
fn rungs_now() -> Scene {
    let (sb, api) = subscriber();
    // Every rung proved, as the reports proved them a while ago.
    let status = sb.run(&["--status"]);
    assert_eq!(status.code, Some(0), "{status:?}");
    // Then the 5-hour window filled, and a launch (Codex turned off for it) found Gemini CLI
    // failing at once.
    claude_windows(
        &sb,
        ".claude",
        &[(json!({"kind": "five_hour"}), 100.0, in_hours(3))],
        SignedDuration::from_mins(3),
    );
    sb.fake_cli("gemini").exit(1).install();
    sb.write_config("[backends.codex]\nenabled = false\n");
    let launch = sb.run(&["-p", "hi"]);
    assert_eq!(launch.code, Some(69), "{launch:?}");
    sb.write_config("");
    Scene::new(sb).keep(api)
}

/// Claude Code's statusline feed: these windows (percent, reset), as 2.1.332 pipes them.
fn feed(windows: &[(&str, f64, Timestamp)]) -> String {
    let limits: serde_json::Map<String, serde_json::Value> = windows
        .iter()
        .map(|(name, percent, resets)| {
            (
                (*name).to_string(),
                json!({"used_percentage": percent, "resets_at": resets.as_second()}),
            )
        })
        .collect();
    json!({"session_id": "abc123", "cwd": "/tmp",
           "model": {"id": "claude-opus-4-8", "display_name": "Opus 4.8"},
           "version": "2.1.332", "rate_limits": limits})
    .to_string()
}

/// A subscriber behind a Claude apps gateway whose monthly spend limit is past its cap,
/// as Claude Code's statusline reported it; the period ends ten days ahead.
fn spend_limit() -> Scene {
    let (sb, api) = subscriber();
    let end = Timestamp::from_second(in_hours(10 * 24).as_second() / 60 * 60).unwrap();
    let mut line: serde_json::Value =
        serde_json::from_str(&feed(&[("five_hour", 12.0, in_hours(2))])).unwrap();
    line["rate_limits"]["spend_limit"] = json!({"used_percentage": 104.0, "resets_at": end.as_second(),
        "used_usd": 52.0, "limit_usd": 50.0, "period": "monthly"});
    sb.write_file("feed.json", &line.to_string());
    let mut statusline = sb.command(&["--statusline"]);
    statusline.stdin(std::fs::File::open(sb.home().join("feed.json")).unwrap());
    let fed = run_command(statusline, crate::support::sandbox::RUN_TIMEOUT);
    assert_eq!(fed.code, Some(0), "{fed:?}");
    cli(&sb, "codex", "codex-cli 0.171.0", "codex answered");
    Scene::new(sb).keep(api)
}

/// A statusline feed whose windows reset in year 9999.
fn far_reset() -> Scene {
    let (sb, api) = subscriber();
    let year_9999 = Timestamp::from_second(253_370_764_800).unwrap();
    sb.write_file("feed.json", &feed(&[("five_hour", 42.0, year_9999)]));
    Scene::new(sb).keep(api)
}

/// Only Claude Code's rungs, its login's 5-hour window full for `left` more.
fn all_parked(left: SignedDuration) -> Scene {
    let (sb, api) = subscriber();
    sb.write_config(
        "[[rungs]]\nbackend = \"claude\"\nprobe_model = \"opus\"\nrun_model = \"opus\"\n\n[[rungs]]\nbackend = \"claude\"\nprobe_model = \"sonnet\"\nrun_model = \"sonnet\"\n",
    );
    cli(
        &sb,
        "claude",
        "2.1.332 (Claude Code)",
        "The bug is an off-by-one in the loop bound.",
    );
    // The window is filed as the command starts, however long the scene took to set up.
    Scene::new(sb).keep(api).just_before(move |sb| {
        claude_windows(
            sb,
            ".claude",
            &[(json!({"kind": "five_hour"}), 100.0, Timestamp::now() + left)],
            SignedDuration::from_mins(3),
        );
    })
}

/// Claude Code's own statusLine command, fed its JSON, in a Claude Code agent launched
/// (`AGENT_RUNG`), after a watchdog check that found every fallback answering.
fn statusline() -> Scene {
    let (sb, api) = subscriber();
    let check = sb.run(&["--check-fallback"]);
    assert_eq!(check.code, Some(0), "{check:?}");
    sb.write_file(
        "feed.json",
        &feed(&[
            ("five_hour", 42.0, in_hours(2)),
            ("seven_day", 81.4, in_hours(3 * 24)),
        ]),
    );
    sb.env("AGENT_RUNG", "Claude Code (claude-opus-5)");
    Scene::new(sb).keep(api)
}

/// Two API keys of Claude's, the first at its usage limit.
fn key_pool() -> Scene {
    use crate::support::{Reply, Rule};
    let w = crate::world::world();
    w.sb.env_remove("AGENT_PROXY_URL");
    w.sb.env("KEY_MAIN", "sk-ant-api03-docs-MAIN-0123456789");
    w.sb.env("KEY_SPARE", "sk-ant-api03-docs-SPARE-9876543210");
    w.sb.write_config(
        "[[accounts]]\nname = \"main\"\nbackend = \"claude\"\nkind = \"api_key\"\nsecret_env = \"KEY_MAIN\"\npriority = 1\n\n[[accounts]]\nname = \"spare\"\nbackend = \"claude\"\nkind = \"api_key\"\nsecret_env = \"KEY_SPARE\"\npriority = 2\n",
    );
    w.api.on(
        Rule::credential("sk-ant-api03-docs-MAIN-0123456789").reply(Reply::anthropic_error(
            429,
            "rate_limit_error",
            "You have reached your usage limit",
        )),
    );
    cli(
        &w.sb,
        "claude",
        "2.1.332 (Claude Code)",
        "The bug is an off-by-one in the loop bound.",
    );
    Scene::new(w.sb).keep(w.api)
}

/// Two Claude Max logins in one pool, yours (`~/.claude`) and work's (`~/.claude-work`):
/// work's 5-hour window resets sooner but is full; yours resets later, and its week runs
/// behind its pace.
fn login_pool() -> Scene {
    let (sb, api) = subscriber();
    log_claude_in(&sb, ".claude-work");
    sb.write_config(
        "[[accounts]]\nname = \"work\"\nbackend = \"claude\"\nkind = \"login\"\ndir = \"~/.claude-work\"\npriority = 1\n\n[[accounts]]\nname = \"personal\"\nbackend = \"claude\"\nkind = \"login\"\ndir = \"~/.claude\"\npriority = 2\n",
    );
    cli(
        &sb,
        "claude",
        "2.1.332 (Claude Code)",
        "The bug is an off-by-one in the loop bound.",
    );
    let week_left = SignedDuration::from_secs(7 * 24 * 3600 * 45 / 100);
    write_windows(
        &sb,
        &[
            (
                claude_login(&sb, ".claude-work"),
                vec![(json!({"kind": "five_hour"}), 100.0, in_hours(1))],
            ),
            (
                claude_login(&sb, ".claude"),
                vec![
                    (json!({"kind": "five_hour"}), 30.0, in_hours(3)),
                    (
                        json!({"kind": "weekly"}),
                        40.0,
                        Timestamp::now() + week_left,
                    ),
                ],
            ),
        ],
        SignedDuration::from_mins(3),
    );
    Scene::new(sb).keep(api)
}

/// agent's ledger (four probes), Claude Code's transcript (three answers, one written
/// twice) and one Codex session, with Opus priced.
fn usage() -> Scene {
    let sb = Sandbox::new();
    sb.write_config(
        "[pricing.models.\"claude-opus-5\"]\ninput = 15.0\noutput = 75.0\ncache_read = 1.5\ncache_write = 18.75\n",
    );
    crate::usage::write_transcript(&sb);
    crate::usage::write_ledger(&sb, &[json!({}), json!({}), json!({}), json!({})]);
    let rollout = [
        json!({"timestamp": "2026-11-30T05:25:49.317Z", "type": "session_meta", "payload": {"id": "01a2", "session_id": "01a2", "cwd": "/w", "cli_version": "0.171.0"}}),
        json!({"timestamp": "2026-11-30T05:25:49.400Z", "type": "turn_context", "payload": {"turn_id": "t1", "model": "gpt-5.1-codex"}}),
        json!({"timestamp": "2026-11-30T05:25:49.476Z", "type": "token_usage_record", "payload": {"session_id": "01a2", "turn_id": "t1", "response_id": "resp_1", "usage": {"input_tokens": 1100, "cached_input_tokens": 1000, "cache_write_input_tokens": 0, "output_tokens": 70, "reasoning_output_tokens": 20, "total_tokens": 1170}}}),
    ];
    let text = rollout
        .iter()
        .fold(String::new(), |text, line| text + &format!("{line}\n"));
    sb.write_file(
        ".codex/sessions/2026/11/30/rollout-2026-11-30T05-25-49-01a2.jsonl",
        &text,
    );
    Scene::new(sb)
}

/// Five days of relayed calls, the last of them today (local days, in UTC).
fn usage_by_day() -> Scene {
    let sb = Sandbox::new();
    sb.env("TZ", "UTC");
    let today = Timestamp::now()
        .to_zoned_datetime(jiff::tz::TimeZone::UTC)
        .date();
    let day = |back: i64| {
        today
            .checked_sub(SignedDuration::from_hours(24 * back))
            .unwrap()
    };
    let mut lines = Vec::new();
    for (back, calls) in [
        (4, vec![52_000]),
        (3, vec![120_000, 120_000]),
        (2, vec![91_000]),
        (1, vec![12_000]),
        (0, vec![100_000, 70_000]),
    ] {
        for input in calls {
            lines.push(json!({
                "time": day(back).at(10, 0, 0, 0).to_zoned_datetime(jiff::tz::TimeZone::UTC).unwrap().timestamp().to_string(),
                "backend": "relay:anthropic", "role": "relay",
                "tokens": {"input": input, "output": input / 20, "reasoning": 0, "cache_read": input * 3, "cache_write": 0}
            }));
        }
    }
    crate::usage::write_ledger(&sb, &lines);
    Scene::new(sb).name("2026-11-26", &day(4).to_string())
}

/// A run relayed call by call, whose transcript Claude Code kept.
fn reconcile() -> Scene {
    let sb = Sandbox::new();
    crate::usage::write_transcript(&sb);
    crate::usage::write_ledger(&sb, &crate::usage::relay_lines("3f2a0c1d9e8b", 1.0));
    Scene::new(sb)
}

/// Keys, and a `--status` that spent four probes of today's budget.
fn budget() -> Scene {
    let scene = api_keys();
    for (key, value) in [
        ("ANTHROPIC_API_KEY", "sk-ant-api03-docs-0123456789abcdef"),
        ("OPENAI_API_KEY", "sk-proj-docs-0123456789abcdef"),
        ("GEMINI_API_KEY", "AIzaSyDocs0123456789abcdef"),
    ] {
        scene.sb.env(key, value);
    }
    let status = scene.sb.run(&["--status"]);
    assert_eq!(status.code, Some(0), "{status:?}");
    // The ledger lines of those probes, in one order and with one duration each (the
    // probes ran at once, so their lines come in any order).
    let now = Timestamp::now().to_string();
    let probes: Vec<serde_json::Value> = [
        ("claude", "claude-opus-5", 0.41),
        ("claude", "claude-sonnet-5", 0.39),
        ("codex", "gpt-5.5", 0.38),
        ("gemini", "gemini-3.1-pro", 0.35),
    ]
    .into_iter()
    .map(|(backend, model, seconds)| {
        json!({"time": now, "backend": backend, "model": model, "duration_s": seconds,
               "tokens": {"input": 8, "output": 1, "reasoning": 0, "cache_read": 0, "cache_write": 0}})
    })
    .collect();
    crate::usage::write_ledger(&scene.sb, &probes);
    scene
}

/// A subscriber whose Claude Code refuses at once (an API error, exit 1); Codex answers.
fn fast_failure() -> Scene {
    let (sb, api) = subscriber();
    sb.fake_cli("claude")
        .stderr("API Error: 500 {\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"Internal server error\"}}\n")
        .exit(1)
        .install();
    cli(
        &sb,
        "codex",
        "codex-cli 0.171.0",
        "The bug is an off-by-one in the loop bound.",
    );
    Scene::new(sb).keep(api)
}
