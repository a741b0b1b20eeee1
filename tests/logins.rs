//! Subscription logins as a credential source (DESIGN §12): a login is never sent a prompt
//! — the real API refuses a subscription token from anything but Claude Code, and the mock
//! does the same — so a rung on a login runs unprobed ("window unknown" until a CLI reports
//! its windows), and a machine where every CLI is logged in, with no proxy and no API key,
//! has nothing wrong with it.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::{MockApi, Reply, Rule, Sandbox};
use crate::world::world;

const ENV_TOKEN: &str = "sk-ant-oat01-ENVloginTOKEN-0123456789abcdefghij";
const ACCOUNT_TOKEN: &str = "sk-ant-oat01-ACCOUNTloginTOKEN-9876543210zyxw";
const CLAUDE_ACCESS: &str = "sk-ant-oat01-STOREclaudeACCESS-55555555aaaa";
const CLAUDE_REFRESH: &str = "sk-ant-ort01-STOREclaudeREFRESH-66666666bbbb";
const CODEX_REFRESH: &str = "rt_STOREcodexREFRESH_77777777cccc";
const GEMINI_ACCESS: &str = "ya29.STOREgeminiACCESS-88888888dddd";
const GEMINI_REFRESH: &str = "1//STOREgeminiREFRESH-99999999eeee";
const OPENCODE_KEY: &str = "sk-STOREopencodeKEY-44444444ffff";
/// 2026-09-14T12:00:00Z in milliseconds.
const EXPIRES_MS: u64 = 1_789_387_200_000;

/// The local day of [`EXPIRES_MS`], as reports show it (2026-09-15 east of UTC+12).
fn expires_day() -> String {
    let ms = i64::try_from(EXPIRES_MS).unwrap();
    jiff::Timestamp::from_millisecond(ms)
        .unwrap()
        .to_zoned_datetime(jiff::tz::TimeZone::system())
        .date()
        .to_string()
}

const CLAUDE_RUNGS: &str = r#"
[[rungs]]
backend = "claude"
probe_model = "opus"

[[rungs]]
backend = "claude"
probe_model = "sonnet"
run_model = "sonnet"
"#;

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

pub(crate) fn jwt(claims: &Value) -> String {
    format!(
        "{}.{}.c2lnbmF0dXJl",
        base64url(br#"{"alg":"RS256","typ":"JWT"}"#),
        base64url(claims.to_string().as_bytes())
    )
}

fn codex_id_token() -> String {
    jwt(&json!({"https://api.openai.com/auth": {"chatgpt_plan_type": "plus"}}))
}

fn codex_access_token() -> String {
    jwt(&json!({"exp": EXPIRES_MS / 1000, "sub": "STOREcodexACCESS"}))
}

/// Every token of every fixture login: none may appear anywhere agent writes or sends.
pub(crate) fn login_tokens() -> Vec<String> {
    vec![
        ENV_TOKEN.into(),
        ACCOUNT_TOKEN.into(),
        CLAUDE_ACCESS.into(),
        CLAUDE_REFRESH.into(),
        CODEX_REFRESH.into(),
        codex_id_token(),
        codex_access_token(),
        GEMINI_ACCESS.into(),
        GEMINI_REFRESH.into(),
        OPENCODE_KEY.into(),
    ]
}

/// A sandbox HOME where Claude Code, Codex and Gemini CLI are logged in by subscription (and
/// opencode to one provider by key, in its own store),
/// with no API key and no proxy; every base URL a CLI reads points at the mock, so a leak
/// would be heard there.
pub(crate) fn logged_in() -> (Sandbox, MockApi) {
    use std::os::unix::fs::PermissionsExt as _;
    let api = MockApi::start();
    let sb = Sandbox::new();
    std::fs::set_permissions(sb.state_dir(), std::fs::Permissions::from_mode(0o700)).unwrap();
    sb.env("ANTHROPIC_BASE_URL", api.url());
    sb.env("GOOGLE_GEMINI_BASE_URL", api.url());
    sb.write_file(
        ".claude/.credentials.json",
        &json!({"claudeAiOauth": {
            "accessToken": CLAUDE_ACCESS, "refreshToken": CLAUDE_REFRESH,
            "expiresAt": EXPIRES_MS, "scopes": ["user:inference"],
            "subscriptionType": "max", "rateLimitTier": "default_claude_max_20x"}})
        .to_string(),
    );
    sb.write_file(
        ".codex/auth.json",
        &json!({"auth_mode": "chatgpt", "OPENAI_API_KEY": null, "tokens": {
            "id_token": codex_id_token(), "access_token": codex_access_token(),
            "refresh_token": CODEX_REFRESH, "account_id": "acct-1"},
            "last_refresh": "2026-09-04T12:00:00Z"})
        .to_string(),
    );
    sb.write_file(
        ".gemini/oauth_creds.json",
        &json!({"access_token": GEMINI_ACCESS, "refresh_token": GEMINI_REFRESH,
            "token_type": "Bearer", "expiry_date": EXPIRES_MS})
        .to_string(),
    );
    sb.write_file(
        ".gemini/settings.json",
        r#"{"security": {"auth": {"selectedType": "oauth-personal"}}}"#,
    );
    // opencode logged in to one provider with a key in its own store.
    sb.write_file(
        ".local/share/opencode/auth.json",
        &json!({"openai": {"type": "api", "key": OPENCODE_KEY}}).to_string(),
    );
    // A Code Assist licence's Google login, which names its project: Gemini CLI refuses a
    // personal one since 2026-06-18 (tests/gemini_personal.rs).
    sb.env("GOOGLE_CLOUD_PROJECT", "agent-fixture-code-assist");
    trusted_by_every_cli(&sb);
    for cli in ["claude", "codex", "gemini"] {
        sb.fake_cli(cli)
            .stdout(&format!("{cli} answered\n"))
            .install();
    }
    sb.fake_cli("agy")
        .script(r#"case "$1" in --version) echo "agy 1.0.3";; *) echo "agy answered";; esac"#)
        .install();
    (sb, api)
}

/// The home (every folder under it) is a git repository each CLI's own record trusts, as a
/// project the user works in is: their checks run in it (DESIGN §23).
pub(crate) fn trusted_by_every_cli(sb: &Sandbox) {
    let home = sb.home().to_string_lossy().into_owned();
    std::fs::create_dir_all(sb.home().join(".git")).unwrap();
    sb.write_file(
        ".claude.json",
        &json!({"projects": {&home: {"hasTrustDialogAccepted": true}}}).to_string(),
    );
    sb.write_file(
        ".codex/config.toml",
        &format!("[projects.\"{home}\"]\ntrust_level = \"trusted\"\n"),
    );
    sb.write_file(
        ".gemini/trustedFolders.json",
        &json!({ &home: "TRUST_FOLDER" }).to_string(),
    );
}

/// No request the mock heard carries any login's token, in a header, its query or its body.
pub(crate) fn assert_no_token_sent(api: &MockApi) {
    for request in api.requests() {
        let seen = format!("{:?} {} {}", request.headers, request.query, request.body);
        for token in login_tokens() {
            assert!(
                !seen.contains(&token),
                "a login token reached the mock: {} {}",
                request.method,
                request.path
            );
        }
    }
}

/// No login token in any text agent printed or any file it wrote.
pub(crate) fn assert_no_token_shown(sb: &Sandbox, outputs: &[&str]) {
    let mut texts: Vec<(String, String)> = outputs
        .iter()
        .map(|text| ("output".to_string(), (*text).to_string()))
        .collect();
    texts.extend(
        sb.state_files()
            .into_iter()
            .map(|(path, text)| (path.display().to_string(), text)),
    );
    for (place, text) in texts {
        for token in login_tokens() {
            assert!(!text.contains(&token), "a login token in {place}: {text}");
        }
    }
}

/// The runs of `cli` on the launch's `-p hi` (not the CLI's own checks of `--status`).
fn launches(sb: &Sandbox, cli: &str) -> Vec<crate::support::Invocation> {
    sb.calls(cli)
        .into_iter()
        .filter(|run| run.argv.iter().any(|arg| arg == "hi"))
        .collect()
}

fn claude_lines(stdout: &str) -> Vec<&str> {
    stdout
        .lines()
        .filter(|line| line.split_whitespace().nth(1) == Some("claude"))
        .collect()
}

#[test]
fn the_mock_refuses_a_subscription_token_from_anything_but_claude_code() {
    let api = MockApi::start();
    api.on(Rule::any().reply(Reply::ok()));
    let client: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(10)))
        .build()
        .into();
    let post = |agent: &str| {
        let mut response = client
            .post(&format!("{}/v1/messages", api.url()))
            .header("authorization", &format!("Bearer {ENV_TOKEN}"))
            .header("user-agent", agent)
            .send(r#"{"model":"claude-opus-5","max_tokens":1,"messages":[]}"#)
            .unwrap();
        let status = response.status().as_u16();
        (status, response.body_mut().read_to_string().unwrap())
    };

    let (status, body) = post("agent/0.1");
    assert_eq!(status, 400, "{body}");
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["error"]["type"], "invalid_request_error");
    assert_eq!(
        body["error"]["message"],
        "This credential is only authorized for use with Claude Code and cannot be used for other API requests."
    );
    let (status, body) = post("claude-cli/2.1.197 (external, cli)");
    assert_eq!(status, 200, "Claude Code itself may use it: {body}");
}

#[test]
fn an_oauth_token_in_the_environment_is_a_login_never_probed_and_claude_code_runs() {
    let w = world();
    w.sb.env_remove("AGENT_PROXY_URL");
    w.sb.env("CLAUDE_CODE_OAUTH_TOKEN", ENV_TOKEN);
    w.sb.write_config(CLAUDE_RUNGS);

    let status = w.sb.run(&["--status"]);
    let launch = w.sb.run(&["-p", "hi"]);

    let lines = claude_lines(&status.stdout);
    assert_eq!(lines.len(), 2, "{status:?}");
    // The login is described on its first row, and named on the rows after it.
    for (i, line) in lines.iter().enumerate() {
        assert!(line.starts_with("OK"), "not dead: {line}");
        let said = if i == 0 {
            "; window unknown"
        } else {
            " as above"
        };
        assert!(
            line.contains(&format!(
                "login (Claude Code, from env:CLAUDE_CODE_OAUTH_TOKEN){said}"
            )),
            "{line}"
        );
    }
    assert_eq!(launch.code, Some(0), "{launch:?}");
    let runs = launches(&w.sb, "claude");
    assert_eq!(runs.len(), 1, "Claude Code ran");
    assert_eq!(
        runs[0]
            .env
            .get("CLAUDE_CODE_OAUTH_TOKEN")
            .map(String::as_str),
        Some(ENV_TOKEN),
        "the CLI gets its own login"
    );
    assert_no_token_sent(&w.api);
    assert!(
        w.api.requests().iter().all(|r| r.path != "/v1/messages"),
        "no prompt was sent as a probe"
    );
    assert_no_token_shown(
        &w.sb,
        &[
            &status.stdout,
            &status.stderr,
            &launch.stdout,
            &launch.stderr,
        ],
    );
}

#[test]
fn an_oauth_account_is_a_login_never_probed_and_claude_code_runs() {
    let w = world();
    w.sb.env_remove("AGENT_PROXY_URL");
    w.sb.env("KEY_A", ACCOUNT_TOKEN);
    w.sb.write_config(&format!(
        "{CLAUDE_RUNGS}\n[[accounts]]\nname = \"max\"\nbackend = \"claude\"\nkind = \"oauth\"\nsecret_env = \"KEY_A\"\n"
    ));

    let status = w.sb.run(&["--status"]);
    let list = w.sb.run(&["--list", "--json"]);
    let launch = w.sb.run(&["-p", "hi"]);

    let lines = claude_lines(&status.stdout);
    assert!(!lines.is_empty(), "{status:?}");
    // The login is described on its first row, and named on the rows after it.
    for (i, line) in lines.iter().enumerate() {
        assert!(line.starts_with("OK"), "not dead: {line}");
        let said = if i == 0 {
            "; window unknown"
        } else {
            " as above"
        };
        assert!(
            line.contains(&format!("login (Claude Code, from account:max){said}")),
            "{line}"
        );
    }
    let list: Value = serde_json::from_str(&list.stdout).unwrap();
    assert_eq!(list["rungs"][0]["login"]["origin"], "account:max", "{list}");
    assert_eq!(launch.code, Some(0), "{launch:?}");
    assert_eq!(launches(&w.sb, "claude").len(), 1, "Claude Code ran");
    assert!(
        w.api.requests().iter().all(|r| r.path != "/v1/messages"),
        "no prompt was sent as a probe"
    );
    assert_no_token_sent(&w.api);
    assert_no_token_shown(
        &w.sb,
        &[
            &status.stdout,
            &status.stderr,
            &launch.stdout,
            &launch.stderr,
        ],
    );
}

#[test]
fn a_machine_logged_in_everywhere_with_no_proxy_and_no_key_has_no_problem() {
    let (sb, api) = logged_in();

    let doctor = sb.run(&["--doctor"]);
    let check = sb.run(&["--check-fallback"]);
    let status = sb.run(&["--status"]);
    let list = sb.run(&["--list", "--json"]);

    assert_eq!(doctor.code, Some(0), "{doctor:?}");
    assert!(
        doctor.stdout.contains("no problems found"),
        "{}",
        doctor.stdout
    );
    // Why the login is not checked, said as a sentence.
    assert!(
        doctor.stdout.contains(
            "Claude Code's own login (max): not checked, as agent never calls with a login's token;"
        ),
        "{}",
        doctor.stdout
    );
    // Each CLI answered its own check; an agy too old to report its quota without a prompt
    // proves nothing, so the fallbacks are covered but not all proved.
    assert!(
        check.stdout.starts_with(
            "DEGRADED: still covered by codex, gemini but not proved: agy (agy older than"
        ),
        "{check:?}"
    );
    assert_eq!(check.code, Some(1), "{check:?}");
    let expires = expires_day();
    for (rung, shown) in [
        (
            "claude",
            format!("login (max), token expires {expires}; window unknown"),
        ),
        (
            "codex",
            format!("login (plus), token expires {expires}; window unknown"),
        ),
        (
            "gemini",
            format!("login (Gemini CLI), token expires {expires}; window unknown"),
        ),
        ("agy", "login (Antigravity); window unknown".to_string()),
    ] {
        let line = status
            .stdout
            .lines()
            .find(|line| line.contains(&format!(" {rung} ")))
            .unwrap_or_else(|| panic!("no {rung} in {}", status.stdout));
        if rung == "agy" {
            assert!(line.starts_with("UNPROVED"), "{line}");
            assert!(line.contains("cannot report its quota"), "{line}");
        } else {
            assert!(line.starts_with("OK"), "{line}");
            assert!(line.contains("answered the CLI's own check"), "{line}");
        }
        assert!(line.contains(&shown), "{line}");
    }
    for line in status.stdout.lines().filter(|l| l.contains("claude-proxy")) {
        assert!(
            line.starts_with("SKIP") && line.contains("no proxy (AGENT_PROXY_URL unset)"),
            "{line}"
        );
    }
    let list: Value = serde_json::from_str(&list.stdout).unwrap();
    let first = &list["rungs"][0]["login"];
    assert_eq!(first["plan"], "max", "{list}");
    assert_eq!(first["token_expires"], expires_day(), "{list}");
    // agy older than the version gate is asked nothing but its version.
    for run in sb.calls("agy") {
        assert!(run.argv == ["--version"], "agy was sent {:?}", run.argv);
    }
    assert!(
        api.requests().iter().all(|r| !r.is_post()),
        "no model call at all: {:?}",
        api.requests().iter().map(|r| &r.path).collect::<Vec<_>>()
    );
    assert_no_token_sent(&api);
    assert_no_token_shown(
        &sb,
        &[
            &doctor.stdout,
            &doctor.stderr,
            &check.stdout,
            &check.stderr,
            &status.stdout,
            &status.stderr,
        ],
    );
}

#[test]
fn agy_past_the_version_gate_reports_its_windows_without_a_prompt() {
    let (sb, _api) = logged_in();
    // A 5-hour window resets within five hours of when it is seen.
    let reset = (jiff::Timestamp::now() + jiff::SignedDuration::from_hours(2)).to_string();
    let usage = json!({"command": {"name": "usage", "data": {"groups": [
        {"name": "Gemini Models", "buckets": [
            {"id": "gemini-5h", "window": "5h", "remaining_fraction": 0.58, "reset_time": reset}]},
    ]}}});
    sb.fake_cli("agy")
        .script(&format!(
            "case \"$1\" in --version) echo 'agy 1.2.14';; --print) printf '%s' '{usage}';; *) echo 'agy answered';; esac"
        ))
        .install();
    sb.write_config("[[rungs]]\nbackend = \"agy\"\n");

    let status = sb.run(&["--status"]);

    let line = status.stdout.lines().find(|l| l.contains("agy")).unwrap();
    assert!(line.starts_with("OK"), "{line}");
    assert!(line.contains("5-hour gemini 42%"), "{line}");
    for run in sb.calls("agy") {
        assert!(
            run.argv == ["--version"]
                || run.argv == ["--print", "/usage", "--output-format", "json"],
            "agy was sent {:?}",
            run.argv
        );
    }
    let windows = std::fs::read_to_string(sb.state_dir().join("windows.json")).unwrap();
    assert!(windows.contains("agy_usage"), "{windows}");
}

#[test]
fn usage_reads_gemini_cli_chat_records_once_per_answer() {
    let sb = Sandbox::new();
    let lines = [
        r#"{"sessionId":"g-1","projectHash":"h","startTime":"2026-09-14T10:00:00Z","kind":"main"}"#,
        r#"{"id":"1","timestamp":"2026-09-14T10:00:01Z","type":"user","content":[{"text":"hi"}]}"#,
        r#"{"id":"2","timestamp":"2026-09-14T10:00:02Z","type":"gemini","content":"","model":"gemini-3-pro-preview"}"#,
        r#"{"id":"2","timestamp":"2026-09-14T10:00:02Z","type":"gemini","content":"hello","model":"gemini-3-pro-preview","tokens":{"input":1000,"output":50,"cached":400,"thoughts":30,"tool":0,"total":1080}}"#,
        r#"{"id":"3","timestamp":"2026-09-14T10:00:05Z","type":"gemini","content":"more","model":"gemini-3-pro-preview","tokens":{"input":2000,"output":70,"cached":1500,"thoughts":0,"tool":0,"total":2070}}"#,
    ]
    .join("\n");
    sb.write_file(
        ".gemini/tmp/abc123/chats/session-2026-09-14T10-00-5f0c1a2b.jsonl",
        &lines,
    );

    let run = sb.run(&["--usage", "--json", "--since", "2026-09-01"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    let group = report["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["key"] == "gemini-3-pro-preview")
        .unwrap_or_else(|| panic!("no gemini group: {report:#}"));
    assert_eq!(group["calls"], 2, "{group:#}");
    assert_eq!(
        group["tokens"],
        json!({"input": 1100, "output": 120, "reasoning": 30, "cache_read": 1900, "cache_write": 0, "total": 3150})
    );
    assert_eq!(report["sources"]["gemini"]["calls"], 2, "{report:#}");
    let text = sb.run(&["--usage", "--since", "2026-09-01"]).stdout;
    assert!(text.contains("Gemini CLI 2 calls"), "{text}");
}

#[test]
fn a_logins_known_windows_are_shown_with_percent_reset_source_and_age() {
    let (sb, _api) = logged_in();
    sb.write_config(CLAUDE_RUNGS);
    let key = format!("claude:{}", sb.home().join(".claude").display());
    let observed = jiff::Timestamp::now() - jiff::SignedDuration::from_mins(3);
    let reset = (observed + jiff::SignedDuration::from_hours(4)).to_string();
    std::fs::write(
        sb.state_dir().join("windows.json"),
        json!({"logins": {key: [{
            "scope": {"kind": "five_hour"}, "used_percent": 42.0,
            "resets_at": reset, "source": "statusline",
            "observed_at": observed.to_string()}]}})
        .to_string(),
    )
    .unwrap();

    let status = sb.run(&["--status"]);
    let doctor = sb.run(&["--doctor"]);
    let list = sb.run(&["--list", "--json"]);

    for text in [&status.stdout, &doctor.stdout] {
        // The first rung on Claude Code's login, whatever the report calls it.
        let line = text
            .lines()
            .find(|l| l.contains("claude") && l.contains("login (max)"))
            .unwrap_or_else(|| panic!("{text}"));
        assert!(line.contains("login (max)"), "{line}");
        assert!(line.contains("5-hour 42% (resets "), "{line}");
        assert!(line.contains(", statusline, 3 min ago)"), "{line}");
        assert!(!line.contains("window unknown"), "{line}");
    }
    let list: Value = serde_json::from_str(&list.stdout).unwrap();
    let window = &list["rungs"][0]["login"]["windows"][0];
    assert_eq!(window["used_percent"], 42.0, "{list}");
    assert_eq!(window["source"], "statusline", "{list}");
    assert_eq!(window["resets_at"], reset.as_str(), "{list}");
    assert!(window["age_seconds"].as_i64().unwrap() >= 180, "{list}");
}

#[test]
fn a_model_the_cli_last_ran_is_listed_without_control_or_bidi_characters() {
    let w = world();
    // Codex's settings name no model: the one its records last name is the probe's.
    w.sb.write_file(".codex/config.toml", "");
    w.sb.write_file(
        ".codex/sessions/2026/09/14/rollout-2026-09-14T10-00-00-abc.jsonl",
        r#"{"timestamp":"2026-09-14T10:00:00Z","type":"turn_context","payload":{"cwd":"/w","model":"gpt\u202e-last\u001b-ran"}}"#,
    );
    w.sb.write_config("[[rungs]]\nbackend = \"codex\"\n");

    let list = w.sb.run(&["--list"]);

    assert_eq!(list.code, Some(0), "{list:?}");
    assert!(list.stdout.contains("  gpt-last-ran  "), "{list:?}");
    let odd: Vec<char> = list
        .stdout
        .chars()
        .filter(|&c| c != '\n' && agent::text::is_unprintable(c))
        .collect();
    assert!(odd.is_empty(), "{odd:?} in {:?}", list.stdout);
}

#[test]
fn a_probe_that_needs_a_model_uses_the_one_the_cli_last_ran() {
    let w = world();
    let url = w.api.url();
    // Codex's settings name no model; its last session ran one.
    w.sb.write_file(
        ".codex/config.toml",
        &format!(
            "model_provider = \"mock\"\n\n[model_providers.mock]\nname = \"mock\"\nbase_url = \"{url}/v1\"\nenv_key = \"MOCK_OPENAI_KEY\"\nwire_api = \"responses\"\n"
        ),
    );
    w.sb.write_file(
        ".codex/sessions/2026/09/14/rollout-2026-09-14T10-00-00-abc.jsonl",
        r#"{"timestamp":"2026-09-14T10:00:00Z","type":"turn_context","payload":{"cwd":"/w","model":"gpt-last-ran"}}"#,
    );
    w.sb.write_config("[[rungs]]\nbackend = \"codex\"\n");

    let status = w.sb.run(&["--status"]);
    let launch = w.sb.run(&["-p", "hi"]);

    assert!(status.stdout.starts_with("OK"), "{status:?}");
    assert_eq!(w.api.posts_for_model("gpt-last-ran"), 1, "{status:?}");
    assert_eq!(launch.code, Some(0), "{launch:?}");
    assert!(
        !w.sb.calls("codex")[0].argv.contains(&"--model".to_string()),
        "the CLI runs its own default: {:?}",
        w.sb.calls("codex")[0].argv
    );
}

#[test]
fn agy_with_every_pool_spent_fails_until_the_reset_whatever_its_exit_code() {
    let (sb, _api) = logged_in();
    let in_hours =
        |hours| (jiff::Timestamp::now() + jiff::SignedDuration::from_hours(hours)).to_string();
    let usage = json!({"command": {"name": "usage", "data": {"groups": [
        {"name": "Gemini Models", "buckets": [
            {"id": "gemini-5h", "window": "5h", "remaining_fraction": 0.0, "reset_time": in_hours(2)}]},
        {"name": "Claude and GPT models", "buckets": [
            {"id": "cg-5h", "window": "5h", "remaining_fraction": 0.0, "reset_time": in_hours(3)}]},
    ]}}});
    // agy exits 0 even with its quota spent: only its own report says so.
    sb.fake_cli("agy")
        .script(&format!(
            "case \"$1\" in --version) echo 'agy 1.2.14';; --print) printf '%s' '{usage}';; *) echo 'agy answered';; esac"
        ))
        .install();
    sb.write_config("[[rungs]]\nbackend = \"agy\"\n\n[[rungs]]\nbackend = \"gemini\"\n");

    let status = sb.run(&["--status"]);
    let launch = sb.run(&["-p", "hi"]);

    let line = status.stdout.lines().find(|l| l.contains("agy")).unwrap();
    assert!(line.starts_with("FAIL"), "{line}");
    assert!(line.contains("limit reached"), "{line}");
    assert_eq!(launch.code, Some(0), "{launch:?}");
    let gemini_launches = sb
        .calls("gemini")
        .iter()
        .filter(|run| run.argv.iter().any(|arg| arg == "--prompt=hi"))
        .count();
    assert_eq!(
        gemini_launches, 1,
        "the next rung ran (besides its own check)"
    );
    assert!(
        sb.calls("agy")
            .iter()
            .all(|run| run.argv.first().map(String::as_str) != Some("-p")),
        "agy was never sent the prompt"
    );
}
