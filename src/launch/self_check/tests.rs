//! The self-check judged on what the real CLIs printed (tests/fixtures/self_check/, see
//! its README), and run through [`run`] against fake CLIs (`#!/bin/sh` scripts).

use std::os::unix::fs::PermissionsExt as _;
use std::os::unix::process::ExitStatusExt as _;
use std::path::PathBuf;
use std::process::ExitStatus;

use super::*;
use crate::adapter::Family;
use crate::config::Backend;
use crate::probe::login::LoginRung;
use crate::probe::{Call, ProbePlan};
use crate::state::budget::Limits;

// ---- what the real CLIs printed ---------------------------------------------------------

macro_rules! fixture {
    ($name:literal) => {
        Captured {
            stdout: include_str!(concat!(
                "../../../tests/fixtures/self_check/",
                $name,
                ".stdout"
            )),
            stderr: include_str!(concat!(
                "../../../tests/fixtures/self_check/",
                $name,
                ".stderr"
            )),
            exit: include_str!(concat!(
                "../../../tests/fixtures/self_check/",
                $name,
                ".exit"
            )),
        }
    };
}

struct Captured {
    stdout: &'static str,
    stderr: &'static str,
    exit: &'static str,
}

/// The captured run judged as [`run`] judges a live one (no record read).
fn judged(family: Family, run: &Captured) -> Judged {
    let code: i32 = run.exit.trim().parse().expect("an exit code");
    judge(
        family.self_check().expect("an adapter"),
        &Printed {
            name: family.name(),
            end: Ok(ExitStatus::from_raw(code << 8)),
            stdout: run.stdout,
            stderr: run.stderr,
        },
        &[],
        Path::new("/work/project"),
    )
}

fn tokens(input: u64, output: u64) -> Tokens {
    Tokens {
        input,
        output,
        ..Tokens::default()
    }
}

#[test]
fn claude_codes_json_answer_passes_with_its_usage_and_session() {
    let j = judged(Family::Claude, &fixture!("claude-answered"));
    assert_eq!(j.class, ErrorClass::Ok, "{}", j.reason);
    assert_eq!(j.reason, "claude answered: ok");
    assert_eq!(j.said.tokens, Some(tokens(8, 1)));
    assert_eq!(
        j.said.session.as_deref(),
        Some("34261d69-c293-4154-b8f4-cc03381b4de8")
    );
}

#[test]
fn claude_codes_refused_key_and_missing_login_are_auth_with_its_login_fix() {
    for run in [fixture!("claude-401"), fixture!("claude-not-logged-in")] {
        let j = judged(Family::Claude, &run);
        assert_eq!(j.class, ErrorClass::Auth, "{}", j.reason);
        assert!(j.reason.contains("/login"), "{}", j.reason);
        assert!(j.reason.contains("claude setup-token"), "{}", j.reason);
    }
    let j = judged(Family::Claude, &fixture!("claude-401"));
    assert!(j.reason.contains("Invalid API key"), "{}", j.reason);
}

#[test]
fn claude_codes_usage_limit_is_quota_even_without_its_record() {
    let j = judged(Family::Claude, &fixture!("claude-limit"));
    assert_eq!(j.class, ErrorClass::Quota, "{}", j.reason);
    assert!(
        j.reason.contains("You've hit your 5-hour limit"),
        "{}",
        j.reason
    );
}

#[test]
fn codex_json_events_pass_with_the_turns_usage_and_thread_despite_its_warning_item() {
    let j = judged(Family::Codex, &fixture!("codex-answered"));
    assert_eq!(j.class, ErrorClass::Ok, "{}", j.reason);
    assert_eq!(j.said.answer.as_deref(), Some("ok"));
    assert_eq!(j.said.tokens, Some(tokens(8, 1)));
    assert_eq!(
        j.said.session.as_deref(),
        Some("01a23199-389d-7832-b91d-16adca99b323")
    );
}

#[test]
fn codex_401_is_auth_with_codex_login() {
    let j = judged(Family::Codex, &fixture!("codex-401"));
    assert_eq!(j.class, ErrorClass::Auth, "{}", j.reason);
    assert!(j.reason.contains("`codex login`"), "{}", j.reason);
    assert!(j.reason.contains("401 Unauthorized"), "{}", j.reason);
}

#[test]
fn codex_usage_limit_is_quota() {
    let j = judged(Family::Codex, &fixture!("codex-limit"));
    assert_eq!(j.class, ErrorClass::Quota, "{}", j.reason);
    assert!(j.reason.contains("hit your usage limit"), "{}", j.reason);
}

#[test]
fn codex_outside_a_trusted_folder_tells_the_user_to_trust_it_not_to_skip_the_check() {
    let j = judged(Family::Codex, &fixture!("codex-untrusted"));
    assert_eq!(j.class, ErrorClass::Misconfigured, "{}", j.reason);
    assert!(j.reason.contains("/work/project"), "{}", j.reason);
    assert!(
        j.reason.contains("trust the folder in Codex"),
        "{}",
        j.reason
    );
    assert!(j.reason.contains("git repository"), "{}", j.reason);
}

#[test]
fn gemini_json_answer_passes_with_its_stats() {
    let j = judged(Family::Gemini, &fixture!("gemini-answered"));
    assert_eq!(j.class, ErrorClass::Ok, "{}", j.reason);
    assert_eq!(j.said.tokens, Some(tokens(8, 1)));
    assert_eq!(
        j.said.session.as_deref(),
        Some("585c4443-7a85-451b-abfc-82f99d1308d1")
    );
}

#[test]
fn gemini_failures_are_read_from_the_error_document_on_its_stderr() {
    let j = judged(Family::Gemini, &fixture!("gemini-bad-key"));
    assert_eq!(j.class, ErrorClass::Auth, "{}", j.reason);
    assert!(j.reason.contains("/auth"), "{}", j.reason);
    assert!(j.reason.contains("API key not valid"), "{}", j.reason);
    let j = judged(Family::Gemini, &fixture!("gemini-limit"));
    assert_eq!(j.class, ErrorClass::Quota, "{}", j.reason);
    assert!(j.reason.contains("exited 173"), "{}", j.reason);
}

#[test]
fn gemini_exit_55_is_an_untrusted_folder_with_its_fix() {
    let j = judged(Family::Gemini, &fixture!("gemini-untrusted"));
    assert_eq!(j.class, ErrorClass::Misconfigured, "{}", j.reason);
    assert!(j.reason.contains("exited 55"), "{}", j.reason);
    // agent's advice (after the CLI's own words) trusts that folder, never every folder.
    let (_, advice) = j.reason.rsplit_once(" — ").expect("agent's advice");
    assert!(
        advice.contains("trust /work/project in Gemini CLI"),
        "{advice}"
    );
    for global in ["GEMINI_CLI_TRUST_WORKSPACE", "folderTrust", "--skip-trust"] {
        assert!(!advice.contains(global), "{advice}");
    }
}

#[test]
fn opencode_json_events_pass_with_the_steps_tokens_and_a_401_is_auth() {
    let j = judged(Family::Opencode, &fixture!("opencode-answered"));
    assert_eq!(j.class, ErrorClass::Ok, "{}", j.reason);
    assert_eq!(j.said.tokens, Some(tokens(8, 1)));
    assert_eq!(
        j.said.session.as_deref(),
        Some("ses_dce6699ecffeNStcduTInpYUcz")
    );
    let j = judged(Family::Opencode, &fixture!("opencode-401"));
    assert_eq!(j.class, ErrorClass::Auth, "{}", j.reason);
    assert!(j.reason.contains("opencode auth login"), "{}", j.reason);
}

#[test]
fn agys_exit_0_on_a_spent_quota_is_no_pass() {
    // research §4.3: the final stream-json event of agy 1.2.2 on a spent quota, exit 0.
    let stdout = r#"{"event":"result","result":{"status":"ERROR","response":"","error":"API error (attempt 3): RESOURCE_EXHAUSTED (code 429): Individual quota reached. Please upgrade your subscription to increase your limits. Resets in 2h39m52s.","usage":{"total_tokens":0}}}"#;
    let j = judged(
        Family::Agy,
        &Captured {
            stdout,
            stderr: "[agy] print timeout after 23s with turn in progress; returning partial output\n",
            exit: "0",
        },
    );
    assert_eq!(j.class, ErrorClass::Quota, "{}", j.reason);
    assert!(
        j.reason.contains("Individual quota reached"),
        "{}",
        j.reason
    );
}

#[test]
fn each_cli_is_given_its_own_headless_words_with_the_rungs_model() {
    let dir = tempfile::tempdir().unwrap();
    let gemini_prompt = format!("--prompt={PROMPT}");
    let cases: [(&str, &str, &[&str]); 5] = [
        (
            "claude",
            "claude-opus-5",
            &[
                "--model",
                "claude-opus-5",
                "-p",
                PROMPT,
                "--output-format",
                "json",
                "--tools",
                "",
                "--strict-mcp-config",
            ],
        ),
        (
            "codex",
            "gpt-6",
            &["exec", "-m", "gpt-6", "--json", "--", PROMPT],
        ),
        (
            "gemini",
            "gemini-3-pro",
            &["-m", "gemini-3-pro", "-o", "json", &gemini_prompt],
        ),
        (
            "opencode",
            "mock/gpt-x",
            // Titled, so it makes one call, not a title call first.
            &[
                "run",
                "-m",
                "mock/gpt-x",
                "--format",
                "json",
                "--title",
                "agent check",
                "--",
                PROMPT,
            ],
        ),
        (
            "agy",
            "gemini-3-flash",
            &[
                "--model",
                "gemini-3-flash",
                "-p",
                PROMPT,
                "--output-format",
                "json",
            ],
        ),
    ];
    for (name, model, expected) in cases {
        let backend = backend(name, &dir.path().join(name));
        let fake = Fake::new(dir.path(), name, "exit 0");
        let rung = fake.rung(&backend, Some(model));
        assert_eq!(words_of(&rung), expected, "{name}");
    }
}

/// The words a check of `rung` gives its binary.
fn words_of(rung: &Rung) -> Vec<String> {
    argv(rung, &[])
        .unwrap()
        .into_iter()
        .map(|w| w.into_string().unwrap())
        .collect()
}

#[test]
fn a_rung_that_runs_the_clis_default_is_checked_with_no_model_whatever_its_probe_model() {
    let dir = tempfile::tempdir().unwrap();
    let backend = backend("claude", &dir.path().join("claude"));
    let fake = Fake::new(dir.path(), "claude", "exit 0");
    let mut rung = fake.rung(&backend, None);
    rung.probe_model = Some("claude-opus-5".into());
    assert_eq!(
        words_of(&rung),
        [
            "-p",
            PROMPT,
            "--output-format",
            "json",
            "--tools",
            "",
            "--strict-mcp-config"
        ]
    );
}

#[test]
fn two_rungs_share_a_check_only_when_they_would_run_the_same_one() {
    let dir = tempfile::tempdir().unwrap();
    let backend = backend("claude", &dir.path().join("claude"));
    let fake = Fake::new(dir.path(), "claude", "exit 0");
    let default = |probe: &str| {
        let mut rung = fake.rung(&backend, None);
        rung.probe_model = Some(probe.into());
        rung
    };
    let (opus, sonnet) = (default("claude-opus-5"), default("claude-sonnet-5"));
    assert!(key(&opus).is_some());
    assert_eq!(
        key(&opus),
        key(&sonnet),
        "one login, the CLI's default twice"
    );
    let named = fake.rung(&backend, Some("claude-sonnet-5"));
    assert_ne!(key(&opus), key(&named), "another model");
    let mut other_home = default("claude-opus-5");
    if let Ok(ready) = &mut other_home.state {
        ready
            .env
            .push(("CLAUDE_CONFIG_DIR".into(), "/home/u/.claude-work".into()));
    }
    assert_ne!(key(&opus), key(&other_home), "another login");
}

// ---- through `run`, against fake CLIs ---------------------------------------------------

fn backend(name: &str, command: &Path) -> Backend {
    let mut backend = crate::config::builtin::backends()[name].clone();
    backend.command = command.to_string_lossy().into_owned();
    backend
}

/// A fake CLI: a `#!/bin/sh` script named for the CLI in its own directory, run with its
/// home at `dir` (where the CLIs' trust records are read).
struct Fake {
    binary: PathBuf,
    home: PathBuf,
}

impl Fake {
    fn new(dir: &Path, name: &str, body: &str) -> Fake {
        let bin = dir.join(format!("bin-{name}-{}", fastrand::u32(..)));
        std::fs::create_dir_all(&bin).unwrap();
        let binary = bin.join(name);
        std::fs::write(&binary, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&binary, std::fs::Permissions::from_mode(0o755)).unwrap();
        Fake {
            binary,
            home: dir.to_path_buf(),
        }
    }

    fn rung<'b>(&self, backend: &'b Backend, model: Option<&str>) -> Rung<'b> {
        self.rung_with(backend, model, Vec::new(), None)
    }

    fn rung_with<'b>(
        &self,
        backend: &'b Backend,
        model: Option<&str>,
        mut env: Vec<(String, String)>,
        login: Option<LoginRung>,
    ) -> Rung<'b> {
        env.push(("HOME".into(), self.home.to_string_lossy().into_owned()));
        Rung {
            index: 1,
            backend,
            probe_model: None,
            run_model: model.map(str::to_string),
            run_alias: None,
            runs_words: std::sync::OnceLock::new(),
            account: None,
            pool: None,
            state: Ok(Ready {
                binary: self.binary.clone(),
                env,
                env_remove: Vec::new(),
                plan: ProbePlan {
                    target: format!("{}|login", backend.name),
                    call: Call::None,
                    model: None,
                    timeout: Duration::from_secs(5),
                    info: CallInfo {
                        rung: Some(1),
                        backend: Some(backend.name.clone()),
                        account: Some("max-personal".into()),
                        ..CallInfo::default()
                    },
                    login: None,
                    endpoint: None,
                },
                login,
            }),
        }
    }
}

struct World {
    _root: tempfile::TempDir,
    root: PathBuf,
    state: PathBuf,
    project: PathBuf,
    meter: Meter,
    parking: Parking,
}

/// A world whose project every CLI's own record trusts (a git repository, trusted by
/// Claude Code, Codex and Gemini CLI in their files under the world's home).
fn world() -> World {
    let w = world_with(Limits::default());
    w.trust_project();
    w
}

fn world_with(limits: Limits) -> World {
    let root_dir = tempfile::tempdir().unwrap();
    let root = root_dir.path().to_path_buf();
    let state = root.join("state");
    let project = root.join("project");
    std::fs::create_dir_all(&state).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o700)).unwrap();
    World {
        meter: Meter::new(&state, limits),
        parking: Parking::new(&state),
        _root: root_dir,
        root,
        state,
        project,
    }
}

impl World {
    fn trust_project(&self) {
        let project = self.project.to_string_lossy().into_owned();
        std::fs::create_dir_all(self.project.join(".git")).unwrap();
        let json = serde_json::json!({"projects": {&project: {"hasTrustDialogAccepted": true}}});
        std::fs::write(self.root.join(".claude.json"), json.to_string()).unwrap();
        std::fs::create_dir_all(self.root.join(".codex")).unwrap();
        std::fs::write(
            self.root.join(".codex/config.toml"),
            format!("[projects.\"{project}\"]\ntrust_level = \"trusted\"\n"),
        )
        .unwrap();
        std::fs::create_dir_all(self.root.join(".gemini")).unwrap();
        let json = serde_json::json!({ &project: "TRUST_FOLDER" });
        std::fs::write(
            self.root.join(".gemini/trustedFolders.json"),
            json.to_string(),
        )
        .unwrap();
    }

    fn ledger(&self) -> Vec<crate::state::ledger::CallRecord> {
        self.meter.ledger.read_local()
    }

    fn check(&self, rung: &Rung, timeout: Duration) -> Finding {
        run(
            rung,
            &self.parking,
            &self.project,
            &self.state,
            timeout,
            &self.meter,
        )
    }
}

const SECOND: Duration = Duration::from_secs(1);

/// Claude Code's answer as 2.1.332 prints it (fixture claude-answered), trimmed.
const CLAUDE_ANSWER: &str = r#"{"type":"result","subtype":"success","is_error":false,"result":"ok","session_id":"sess-answered-1","usage":{"input_tokens":12,"cache_creation_input_tokens":3,"cache_read_input_tokens":40,"output_tokens":2}}"#;

#[test]
fn an_answer_passes_and_writes_one_ledger_line_with_the_clis_own_tokens_and_session() {
    let w = world();
    let fake = Fake::new(
        &w.root,
        "claude",
        &format!(
            "pwd > \"$0.cwd\"; echo \"$@\" > \"$0.args\"; cat > \"$0.stdin\"; echo '{CLAUDE_ANSWER}'"
        ),
    );
    let backend = backend("claude", &fake.binary);
    let rung = fake.rung(&backend, Some("claude-opus-5"));

    let found = w.check(&rung, 10 * SECOND);

    assert_eq!(
        found.outcome.class,
        ErrorClass::Ok,
        "{}",
        found.outcome.reason
    );
    assert_eq!(found.outcome.reason, "claude answered: ok");
    assert!(found.window.is_none());
    let spent = Tokens {
        input: 12,
        output: 2,
        reasoning: 0,
        cache_read: 40,
        cache_write: 3,
    };
    assert_eq!(found.tokens, Some(spent));
    assert_eq!(found.session.as_deref(), Some("sess-answered-1"));
    let ran_in = std::fs::read_to_string(fake.binary.with_extension("cwd")).unwrap();
    assert_eq!(
        Path::new(ran_in.trim()).canonicalize().unwrap(),
        w.project.canonicalize().unwrap()
    );
    let args = std::fs::read_to_string(fake.binary.with_extension("args")).unwrap();
    assert!(args.contains("--model claude-opus-5"), "{args}");
    assert!(args.contains("--output-format json"), "{args}");
    assert_eq!(
        std::fs::read(fake.binary.with_extension("stdin")).unwrap(),
        b"",
        "stdin closed"
    );

    let ledger = w.ledger();
    assert_eq!(ledger.len(), 1, "{ledger:?}");
    let line = &ledger[0];
    assert_eq!(line.role, ROLE);
    assert_eq!(line.backend.as_deref(), Some("claude"));
    assert_eq!(line.model.as_deref(), Some("claude-opus-5"));
    assert_eq!(line.account.as_deref(), Some("max-personal"));
    assert_eq!(line.tokens, spent);
    assert!(!line.estimated, "the CLI's own count");
    assert_eq!(line.session.as_deref(), Some("sess-answered-1"));
    assert_eq!(line.error_kind, "ok");
}

#[test]
fn codexs_own_401_words_are_auth_with_codex_login_and_the_call_is_still_on_the_ledger() {
    let w = world();
    // codex-401.stdout as the real codex printed it, then exit 1.
    let fake = Fake::new(
        &w.root,
        "codex",
        &format!(
            "cat <<'EOF'\n{}EOF\necho 'Reading additional input from stdin...' >&2\nexit 1",
            include_str!("../../../tests/fixtures/self_check/codex-401.stdout")
        ),
    );
    let backend = backend("codex", &fake.binary);
    let rung = fake.rung(&backend, None);

    let found = w.check(&rung, 10 * SECOND);

    assert_eq!(
        found.outcome.class,
        ErrorClass::Auth,
        "{}",
        found.outcome.reason
    );
    assert!(
        found.outcome.reason.contains("run `codex login`"),
        "{}",
        found.outcome.reason
    );
    assert!(
        found
            .outcome
            .reason
            .starts_with("codex exited 1: unexpected status 401"),
        "{}",
        found.outcome.reason
    );
    assert_eq!(
        found.session.as_deref(),
        Some("01a23199-3aef-7c42-b3ed-d25b1d214760")
    );
    let ledger = w.ledger();
    assert_eq!(ledger.len(), 1);
    assert_eq!(ledger[0].error_kind, "auth");
    assert!(
        ledger[0].estimated,
        "codex counted nothing: an estimate, marked"
    );
}

#[test]
fn a_limit_row_in_the_runs_transcript_parks_with_its_window() {
    let w = world();
    let config_dir = w.root.join("claude-home");
    let project_dir = crate::login::claude_transcript::project_dir_for(&config_dir, &w.project);
    std::fs::create_dir_all(&project_dir).unwrap();
    let resets = (Timestamp::now() + jiff::SignedDuration::from_hours(2)).as_second();
    // The row Claude Code 2.1.332 wrote (fixture claude-limit.transcript.jsonl), stamped now.
    let row = serde_json::json!({
        "type": "assistant", "sessionId": "sess-limit", "timestamp": "@NOW@",
        "message": {"model": "<synthetic>", "role": "assistant",
                    "content": [{"type": "text", "text": "You've hit your 5-hour limit · resets 2:34pm (UTC)"}]},
        "apiError": "usage_limit_reached",
        "apiErrorParams": {"rate_limit_info": {"status": "rejected", "resetsAt": resets, "rateLimitType": "five_hour"}},
        "error": "rate_limit", "isApiErrorMessage": true, "apiErrorStatus": 429,
    })
    .to_string();
    let template = w.root.join("limit-row.json");
    std::fs::write(&template, format!("{row}\n")).unwrap();
    let fake = Fake::new(
        &w.root,
        "claude",
        &format!(
            "sleep 0.01; now=$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)\nsed \"s/@NOW@/$now/\" '{}' > '{dir}/sess-limit.jsonl'\ntouch -d \"$now\" '{dir}/sess-limit.jsonl'\necho 'API Error'\nexit 1",
            template.display(),
            dir = project_dir.display()
        ),
    );
    let backend = backend("claude", &fake.binary);
    let login = LoginRung {
        family: Family::Claude,
        key: format!("claude:{}", config_dir.display()),
        origin: "store".into(),
        plan: None,
        expires_at: None,
        records: Some(config_dir.clone()),
        refused: None,
    };
    let rung = fake.rung_with(
        &backend,
        Some("claude-opus-5"),
        Vec::new(),
        Some(login.clone()),
    );

    let found = w.check(&rung, 10 * SECOND);

    assert_eq!(
        found.outcome.class,
        ErrorClass::Quota,
        "{}",
        found.outcome.reason
    );
    let window = found.window.expect("the full window");
    assert!(window.is_full());
    assert_eq!(window.resets_at.as_second(), resets);
    assert!(
        found.outcome.reason.contains("5-hour limit, resets"),
        "{}",
        found.outcome.reason
    );
    assert!(found.outcome.clears_at.is_some());
    // Filed under the login's key, as a launch's fast failure would have it.
    let known = w.parking.windows().known(&login.key, Timestamp::now());
    assert!(known.iter().any(Window::is_full), "{known:?}");
}

#[test]
fn exit_0_with_limit_words_is_no_pass() {
    let w = world();
    let fake = Fake::new(
        &w.root,
        "agy",
        "echo '{\"event\":\"result\",\"result\":{\"status\":\"ERROR\",\"response\":\"\",\"error\":\"RESOURCE_EXHAUSTED (code 429): Individual quota reached. Resets in 2h39m52s.\"}}'\necho '[agy] print timeout after 23s with turn in progress; returning partial output' >&2\nexit 0",
    );
    let backend = backend("agy", &fake.binary);
    let rung = fake.rung(&backend, None);

    let found = w.check(&rung, 10 * SECOND);

    assert_eq!(
        found.outcome.class,
        ErrorClass::Quota,
        "{}",
        found.outcome.reason
    );
    assert!(
        found.outcome.reason.contains("agy exited 0"),
        "{}",
        found.outcome.reason
    );
}

#[test]
fn exit_0_with_an_answer_that_says_its_own_failure_words_is_no_pass() {
    let w = world();
    let fake = Fake::new(
        &w.root,
        "agy",
        "echo 'partial'\necho '[agy] print timeout after 23s with turn in progress; returning partial output' >&2",
    );
    let backend = backend("agy", &fake.binary);
    let found = w.check(&fake.rung(&backend, None), 10 * SECOND);
    assert_ne!(
        found.outcome.class,
        ErrorClass::Ok,
        "{}",
        found.outcome.reason
    );
}

#[test]
fn a_cli_that_does_not_finish_is_stopped_at_the_timeout() {
    let w = world();
    let pid_file = w.root.join("grandchild");
    // A grandchild that says its pid, then would outlive the CLI's deadline.
    let fake = Fake::new(
        &w.root,
        "claude",
        &format!(
            "sh -c 'echo $$ > {p}.new && mv {p}.new {p} && exec sleep 30' &\nwhile [ ! -e {p} ]; do sleep 0.01; done\nsleep 30",
            p = pid_file.display()
        ),
    );
    let backend = backend("claude", &fake.binary);

    let found = w.check(&fake.rung(&backend, None), Duration::from_millis(400));

    assert_eq!(
        found.outcome.class,
        ErrorClass::Unreachable,
        "{}",
        found.outcome.reason
    );
    assert!(
        found.outcome.reason.contains("did not finish within 0.4s"),
        "{}",
        found.outcome.reason
    );
    assert_eq!(w.ledger().len(), 1, "the call was made and counts");
    // What it started was killed with it: gone once the kernel has delivered the kill (one
    // that had not said its pid yet was killed before it could).
    if pid_file.exists() {
        assert!(
            crate::child::test_events::eventually(|| !crate::child::test_events::runs(&pid_file)),
            "what it started outlived it"
        );
    }
}

#[test]
fn a_refused_budget_runs_nothing() {
    let w = world_with(Limits {
        calls: 1,
        tokens: 0,
    });
    let _spent = w.meter.reserve().unwrap();
    let marker = w.root.join("ran");
    let fake = Fake::new(
        &w.root,
        "claude",
        &format!("touch '{}'; echo '{CLAUDE_ANSWER}'", marker.display()),
    );
    let backend = backend("claude", &fake.binary);

    let found = w.check(&fake.rung(&backend, None), 10 * SECOND);

    assert_eq!(
        found.outcome.class,
        ErrorClass::Budget,
        "{}",
        found.outcome.reason
    );
    assert!(!marker.exists(), "the CLI ran");
    assert!(w.ledger().is_empty());
}

#[test]
fn a_key_in_the_launch_environment_never_reaches_the_reason_or_the_ledger() {
    let w = world();
    let key = "sk-ant-api03-selfcheck-9f8e7d6c5b4a39281706";
    let fake = Fake::new(
        &w.root,
        "claude",
        "echo \"Invalid API key · Fix external API key ($ANTHROPIC_API_KEY)\"; echo \"$@\" > \"$0.args\"; exit 1",
    );
    let backend = backend("claude", &fake.binary);
    let rung = fake.rung_with(
        &backend,
        None,
        vec![("ANTHROPIC_API_KEY".into(), key.into())],
        None,
    );

    let found = w.check(&rung, 10 * SECOND);

    assert_eq!(
        found.outcome.class,
        ErrorClass::Auth,
        "{}",
        found.outcome.reason
    );
    assert!(
        !found.outcome.reason.contains("9f8e7d6c5b4a"),
        "{}",
        found.outcome.reason
    );
    let ledger = std::fs::read_to_string(w.state.join("usage.jsonl")).unwrap();
    assert!(!ledger.contains("9f8e7d6c5b4a"), "{ledger}");
    let args = std::fs::read_to_string(fake.binary.with_extension("args")).unwrap();
    assert!(!args.contains(key), "{args}");
}

#[test]
fn checks_of_several_rungs_run_at_once_each_with_its_own_answer() {
    let w = world();
    // Each answers only once all four have started: checked one at a time, the first
    // would wait for the others until its deadline, and have no session to show.
    let started = w.root.join("started");
    std::fs::create_dir_all(&started).unwrap();
    let fakes: Vec<Fake> = (0..4)
        .map(|n| {
            Fake::new(
                &w.root,
                "claude",
                &format!(
                    "touch '{dir}/{n}'\nwhile [ \"$(ls '{dir}' | wc -l)\" -lt 4 ]; do sleep 0.01; done\necho '{}'",
                    CLAUDE_ANSWER.replace("sess-answered-1", &format!("sess-{n}")),
                    dir = started.display()
                ),
            )
        })
        .collect();
    let backends: Vec<Backend> = fakes.iter().map(|f| backend("claude", &f.binary)).collect();
    let sessions: Vec<Option<String>> = std::thread::scope(|scope| {
        let handles: Vec<_> = fakes
            .iter()
            .zip(&backends)
            .map(|(fake, backend)| {
                let w = &w;
                // A deadline that only keeps a broken test from hanging.
                scope.spawn(move || w.check(&fake.rung(backend, None), 60 * SECOND).session)
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let want: Vec<Option<String>> = (0..4).map(|n| Some(format!("sess-{n}"))).collect();
    assert_eq!(sessions, want);
    assert_eq!(w.ledger().len(), 4);
}
