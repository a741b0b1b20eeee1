//! The on-ramp, walked (issue 32): a newcomer's first hour by the README's quick start and
//! a night job from `~`, with the real CLIs against the mock and fixture logins in a
//! sandbox `HOME` — Claude Max in Claude Code (two logins, the default home among them),
//! ChatGPT Plus in Codex, opencode on its provider, and Gemini CLI installed but never set
//! up. Every step asserts that none of what the first walk-through found comes back.
//!
//! The walk is written down as Markdown (commands, exit codes, timings, what agent printed;
//! the sandbox's paths shown as `/home/you`), and `docs/on-ramp.md` is such a transcript: the
//! walk fails when the page is not what this build printed, compared as the pages' other
//! transcripts are (`tests/doc_blocks.rs`: only instants and made-up ids may differ, and
//! where a row wraps) — in a launch, agent's own lines only: what the real CLIs print of
//! themselves changes from run to run (Codex logs a race of its model cache now and then).
//! With `AGENT_ONRAMP_TRANSCRIPT=FILE` it is written to FILE instead.

use std::fmt::Write as _;

use super::*;

const MAX_ACCESS: &str = "sk-ant-oat01-e2e-onramp-PERSONAL-1111111111aaaa";
const MAX_REFRESH: &str = "sk-ant-ort01-e2e-onramp-PERSONAL-2222222222bbbb";
const WORK_ACCESS: &str = "sk-ant-oat01-e2e-onramp-WORK-3333333333cccc";
const WORK_REFRESH: &str = "sk-ant-ort01-e2e-onramp-WORK-4444444444dddd";
const CLAUDE_ANSWER: &str = "The bug is an off-by-one in the loop bound.";
const CODEX_ANSWER: &str = "Summary: three files changed, tests pass.";
const OPENCODE_ANSWER: &str = "opencode: three files changed.";
const NIGHT_PROMPT: &str = "summarize what changed today";
/// The width the walk's terminal has: every `--status` row fits it.
const COLUMNS: usize = 100;

/// The walk's transcript, kept as it goes.
struct Walk<'w> {
    w: &'w E2e,
    text: String,
    steps: usize,
    /// The working directory as the user would write it (`~`, `~/code/some-repo`).
    cwd: String,
}

impl<'w> Walk<'w> {
    fn new(w: &'w E2e) -> Self {
        Self {
            w,
            text: String::new(),
            steps: 0,
            cwd: "~".to_string(),
        }
    }

    /// Later commands run in `~/rel` (`.` for `~` itself).
    fn cd(&mut self, rel: &str) -> PathBuf {
        self.cwd = if rel == "." {
            "~".to_string()
        } else {
            format!("~/{rel}")
        };
        self.w.sb.set_cwd(rel)
    }

    /// A heading and the words under it.
    fn says(&mut self, heading: &str, words: &str) {
        self.steps += 1;
        let _ = write!(self.text, "\n## {}. {heading}\n\n{words}\n", self.steps);
    }

    /// Runs `agent ARGS` where the sandbox's working directory is, and writes it down.
    fn agent(&mut self, args: &[&str]) -> Run {
        let run = self.w.run(args);
        self.write_down(&format!("agent {}", shell_words(args)), &run);
        run
    }

    /// Runs `agent ARGS > FILE` (stdout a file, as a script's is).
    fn agent_into_file(&mut self, args: &[&str], file: &Path) -> Run {
        let mut command = self.w.sb.command(args);
        command.stdout(fs::File::create(file).expect("the output file"));
        let started = std::time::Instant::now();
        let output = command.output().expect("agent runs");
        let run = Run {
            code: output.status.code(),
            signal: None,
            stdout: fs::read_to_string(file).unwrap_or_default(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
            elapsed: started.elapsed(),
            timed_out: false,
        };
        let shown = format!(
            "agent {} > {}",
            shell_words(args),
            file.file_name().unwrap_or_default().to_string_lossy()
        );
        self.write_down(&shown, &run);
        run
    }

    fn write_down(&mut self, command: &str, run: &Run) {
        let _ = write!(
            self.text,
            "\n```console\n{}$ {}\n{}{}```\n_exit {}, {:.2} s_\n",
            self.cwd,
            self.shown(command).trim_end(),
            self.shown(&run.stdout),
            self.shown(&run.stderr),
            run.code.map_or("signal".to_string(), |c| c.to_string()),
            run.elapsed.as_secs_f64()
        );
    }

    /// Text as a user would see it on their machine: the sandbox's home as `/home/you`,
    /// agent's own directory as where `install.sh` puts it, the mock's address as
    /// `http://127.0.0.1:PORT`, a CLI's own colour sequences (which the terminal would act
    /// on) left out, ending with a newline.
    fn shown(&self, text: &str) -> String {
        let binary = std::path::PathBuf::from(support::sandbox::agent_binary());
        let mut shown = without_colours(text)
            .replace(
                &binary.parent().unwrap_or(&binary).display().to_string(),
                "/home/you/.local/bin",
            )
            .replace(&self.w.sb.home().display().to_string(), "/home/you")
            .replace(&self.w.sb.root().display().to_string(), "/sandbox")
            .replace(&self.w.api.url(), "http://127.0.0.1:PORT");
        if !shown.is_empty() && !shown.ends_with('\n') {
            shown.push('\n');
        }
        shown
    }

    /// Writes the transcript where `AGENT_ONRAMP_TRANSCRIPT` says; without it, holds
    /// `docs/on-ramp.md` to it.
    fn keep(&self) {
        let head = String::from(
            "# The on-ramp, walked\n\n\
             A newcomer's first hour, by the README's quick start, then a night job from `~` \
             (issue 32's second walk-through). Written by `tests/e2e/onramp.rs`:\n\n\
             ```sh\nAGENT_ONRAMP_TRANSCRIPT=docs/on-ramp.md \
             AGENT_E2E_BIN=$(scripts/install-real-clis.sh | tail -n 1) \
             cargo test --test e2e onramp\n```\n\n\
             The real Claude Code, Codex, Gemini CLI and opencode (the pinned versions) run \
             against the suite's mock API on loopback, in a sandbox `HOME` (shown as \
             `/home/you`) with fixture logins: Claude Max in Claude Code (the default home, \
             and a second login in `~/.claude-work`), ChatGPT Plus in Codex, opencode on its \
             provider, and Gemini CLI installed but never set up. Timings are this machine's \
             (2 cores) and include the real CLIs' own start-up. Each step's assertions are in \
             the test; the test fails when any of the first walk-through's findings comes back.\n",
        );
        let walked = format!("{head}{}", self.text);
        if let Some(path) = env::var_os("AGENT_ONRAMP_TRANSCRIPT") {
            fs::write(path, walked).expect("write the transcript");
            return;
        }
        let page =
            fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/on-ramp.md"))
                .expect("docs/on-ramp.md");
        if let Err(why) = crate::masks::matches(&agents_own(&page), &agents_own(&walked)) {
            panic!(
                "docs/on-ramp.md is not what this walk printed ({why}); write it again with AGENT_ONRAMP_TRANSCRIPT=docs/on-ramp.md:\n{walked}"
            );
        }
    }
}

/// The lines of a transcript agent answers for: every line, but in a launch's block (a
/// command with `-p`) only agent's own — its notices (`[agent] …`), its errors (`agent: …`)
/// and the result document it writes (`{…}`) — and not the CLIs' words around them.
fn agents_own(text: &str) -> Vec<String> {
    let mut kept = Vec::new();
    let mut launch = false;
    for line in unwrapped(text) {
        if line.starts_with("```") {
            launch = false;
        } else if line.contains("$ agent ") {
            launch = line.split_whitespace().any(|word| word == "-p");
        } else if launch
            && !["[agent]", "agent:", "{"]
                .iter()
                .any(|own| line.starts_with(own))
        {
            continue;
        }
        kept.push(line);
    }
    kept
}

/// `text`'s lines, a row's wrapped continuation (a line indented as deep as the rows'
/// text column) joined to the line before it: where a row wraps depends on the widths of
/// its latencies and ages, which differ from run to run.
fn unwrapped(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for line in text.lines() {
        let indent = line.len() - line.trim_start().len();
        match lines.last_mut() {
            Some(row) if indent >= 20 && !line.trim().is_empty() => {
                row.push(' ');
                row.push_str(line.trim());
            }
            _ => lines.push(line.to_string()),
        }
    }
    lines
}

/// `text` without its CSI sequences (`ESC [ … letter`), as a terminal shows it.
fn without_colours(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.next() == Some('[') {
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn shell_words(args: &[&str]) -> String {
    args.iter()
        .map(|a| {
            if a.is_empty() || a.contains(|c: char| c.is_whitespace() || "\"'$`\\*?".contains(c)) {
                format!("\"{}\"", a.replace('"', "\\\""))
            } else {
                (*a).to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn onramp_a_newcomers_first_hour_by_the_readme_and_a_night_job_from_home() {
    let w = e2e();
    let home = w.sb.home().to_path_buf();
    // agent makes its state directory 0700; the sandbox's is made for it.
    fs::set_permissions(w.sb.state_dir(), fs::Permissions::from_mode(0o700))
        .expect("chmod the state directory");
    let mut walk = Walk::new(&w);
    let project = walk.cd("code/some-repo");
    git_init(&project);
    // A subscription user: no API keys in the environment; Gemini CLI installed, never set up.
    for key in [
        "ANTHROPIC_API_KEY",
        "GEMINI_API_KEY",
        "GEMINI_CLI_TRUST_WORKSPACE",
    ] {
        w.sb.env_remove(key);
    }
    let _ = fs::remove_file(home.join(".gemini/settings.json"));
    w.sb.env("TZ", "UTC");
    w.sb.env("COLUMNS", COLUMNS.to_string());
    log_claude_in(
        &home.join(".claude"),
        &home.join(".claude.json"),
        MAX_ACCESS,
        MAX_REFRESH,
        &project,
    );
    let work = home.join(".claude-work");
    log_claude_in(
        &work,
        &work.join(".claude.json"),
        WORK_ACCESS,
        WORK_REFRESH,
        &project,
    );
    log_codex_in_with_chatgpt(&w, jiff::Timestamp::now().as_second() + 30 * 86_400, true);
    let later = jiff::Timestamp::now().as_second() + 3 * 3600;
    w.api.on(Rule::path_contains("/wham/usage")
        .reply(wham_usage((10, later), (20, later + 86_400))));
    w.api.on(Rule::path_contains("/backend-api/codex/responses")
        .reply(Reply::ok_text(CODEX_ANSWER)));
    w.api
        .on(Rule::path_contains("/v1/messages").reply(Reply::ok_text(CLAUDE_ANSWER)));
    // Claude Code, seen on its way in: its arguments and environment are recorded.
    let real_claude = fs::read_link(w.sb.bin_dir().join("claude")).expect("the claude symlink");
    fs::remove_file(w.sb.bin_dir().join("claude")).expect("replace the symlink");
    w.sb.fake_cli("claude")
        .script(&format!("exec '{}' \"$@\"", real_claude.display()))
        .install();

    // 2. --doctor: calls nothing; Gemini CLI is "not set up", not a failure.
    walk.says(
        "`agent --doctor`",
        "No config file: the built-in table. Gemini CLI is installed but has no login and no key.",
    );
    let posts = w.api.posts();
    let doctor = walk.agent(&["--doctor"]);
    assert_eq!(doctor.code, Some(0), "{doctor:?}");
    assert_eq!(w.api.posts(), posts, "--doctor called nothing");
    let gemini_row = doctor
        .stdout
        .lines()
        .find(|l| l.contains("rung") && l.contains("gemini"))
        .unwrap_or_else(|| panic!("{}", doctor.stdout));
    assert!(gemini_row.contains("not set up"), "{gemini_row}");

    // 3. --status: each rung by its CLI's own check; rows fit the terminal.
    walk.says(
        "`agent --status`",
        "Each rung proved by its CLI's own check, in the project.",
    );
    let status = walk.agent(&["--status"]);
    assert_eq!(status.code, Some(0), "{status:?}");
    for line in status.stdout.lines() {
        assert!(
            line.chars().count() <= COLUMNS,
            "a row wider than COLUMNS={COLUMNS}: {line:?}"
        );
        assert!(
            !line.contains('\u{1b}') && !line.contains("[0m"),
            "{line:?}"
        );
    }
    let checks: Vec<Request> = w.claude_code_calls();
    assert!(!checks.is_empty(), "Claude Code's own check ran");
    for check in &checks {
        assert!(
            check
                .json()
                .get("tools")
                .is_none_or(|t| t.as_array().is_some_and(Vec::is_empty)),
            "the self-check carries no tools: {}",
            check.body.len()
        );
    }

    // 4. The first launch: Claude Code on its default model, with the user's own config.
    walk.says(
        "`agent -p \"explain this bug\"`",
        "The top rung runs Claude Code as typing `claude` would: its default home, no home variable.",
    );
    let before = w.claude_code_calls().len();
    let first = walk.agent(&["-p", "explain this bug"]);
    assert_eq!(first.code, Some(0), "{first:?}");
    assert_eq!(first.stdout.trim(), CLAUDE_ANSWER, "{first:?}");
    let launch = w.claude_code_calls()[before..]
        .iter()
        .find(|r| r.body.contains("explain this bug"))
        .cloned()
        .expect("the launch's request");
    let check_models: Vec<String> = models(&checks);
    assert!(
        check_models.contains(&launch.json()["model"].as_str().unwrap_or("").to_string()),
        "the self-check proved {check_models:?}, the launch ran {}",
        launch.json()["model"]
    );

    // 5. The statusline.
    walk.says("`agent --install-statusline`", "");
    let statusline = walk.agent(&["--install-statusline"]);
    assert_eq!(statusline.code, Some(0), "{statusline:?}");

    // 6. The watchdog, by cron (the sandbox has no user systemd), alerts to a webhook.
    let crontab = w.sb.root().join("crontab.txt");
    fs::write(&crontab, "").expect("the crontab file");
    w.sb.fake_cli("crontab")
        .script(&format!(
            "if [ \"$1\" = -l ]; then cat '{0}'; else cat > '{0}'; fi",
            crontab.display()
        ))
        .install();
    w.api.on(Rule::path_contains("/hook").reply(Reply::ok()));
    // The real opencode's check starts cold in a scratch directory: on a loaded 2-core
    // machine it took past the default 10 s (`status_fails_only_the_rung_with_the_broken_key`
    // says the same), and the night job's `--check-fallback` then saw a dead rung. The bound
    // is the one opencode's own test uses; the walk is about the newcomer, not that timing.
    w.sb.write_config(&format!(
        "probe_timeout_seconds = 60\n[alerts.webhook]\nurl = \"{}/hook\"\n",
        w.api.url()
    ));
    walk.says(
        "`agent --install-watchdog --dir ~/code/some-repo`",
        "An alert channel first (a webhook), then the watchdog, by cron.",
    );
    let install = walk.agent(&[
        "--install-watchdog",
        "--scheduler",
        "cron",
        "--dir",
        &project.display().to_string(),
    ]);
    assert_eq!(install.code, Some(0), "{install:?}");
    let line = fs::read_to_string(&crontab).expect("the crontab");
    assert!(line.contains("--check-fallback"), "{line}");

    // 7. Both logins in a pool, the default home included.
    walk.says(
        "`agent --accounts add` (the README's step 7: a second subscription, yours included)",
        "",
    );
    let personal = walk.agent(&[
        "--accounts",
        "add",
        "personal",
        "--backend",
        "claude",
        "--kind",
        "login",
        "--dir",
        &home.join(".claude").display().to_string(),
    ]);
    assert_eq!(personal.code, Some(0), "{personal:?}");
    let added = walk.agent(&[
        "--accounts",
        "add",
        "work",
        "--backend",
        "claude",
        "--kind",
        "login",
        "--dir",
        &work.display().to_string(),
    ]);
    assert_eq!(added.code, Some(0), "{added:?}");
    let calls_before = w.sb.calls("claude").len();
    let pooled = walk.agent(&["-p", "explain this bug"]);
    assert_eq!(pooled.code, Some(0), "{pooled:?}");
    assert!(
        !pooled.stderr.contains("configuration file not found"),
        "{pooled:?}"
    );
    assert!(
        !home.join(".claude/.claude.json").exists(),
        "Claude Code made a second configuration in ~/.claude"
    );
    for call in &w.sb.calls("claude")[calls_before..] {
        let dir = call.env.get("CLAUDE_CONFIG_DIR").map(String::as_str);
        assert!(
            dir.is_none() || dir == Some(work.to_str().unwrap()),
            "the default home launched with CLAUDE_CONFIG_DIR={dir:?}"
        );
    }

    // 8. `agent -p` with no prompt: agent's own usage error, nothing runs.
    walk.says("A slip: `agent -p` with no prompt", "");
    let posts = w.api.posts();
    let runs = w.sb.calls("claude").len();
    let slip = walk.agent(&["-p"]);
    assert_eq!(slip.code, Some(2), "{slip:?}");
    assert_eq!(w.api.posts(), posts, "a usage slip called nothing");
    assert_eq!(w.sb.calls("claude").len(), runs, "a usage slip ran nothing");

    // 9. The night: both Claude logins are out of their 5-hour window; the job runs from `~`.
    let reset = (jiff::Timestamp::now().as_second() + 3600) / 60 * 60;
    w.api.clear_rules();
    w.api.on(Rule::path_contains("/hook").reply(Reply::ok()));
    w.api.on(Rule::path_contains("/wham/usage")
        .reply(wham_usage((10, later), (20, later + 86_400))));
    w.api.on(Rule::path_contains("/backend-api/codex/responses")
        .reply(Reply::ok_text(CODEX_ANSWER)));
    w.api
        .on(Rule::path_contains("/v1/messages").reply(unified_limit(reset)));
    w.api
        .on(Rule::model(OPENCODE_MODEL).reply(Reply::ok_text(OPENCODE_ANSWER)));
    walk.cd(".");
    walk.says(
        "The night job, from `~` (not a repository), stdout to a file",
        "Both Claude logins have run out of their 5-hour window, and `codex exec` will not start outside a git repository.",
    );
    let out = w.sb.root().join("out.txt");
    let first_night = walk.agent_into_file(&["-p", NIGHT_PROMPT], &out);
    assert_eq!(first_night.code, Some(0), "{first_night:?}");
    assert_eq!(
        first_night.stdout.trim(),
        OPENCODE_ANSWER,
        "out.txt holds the answering rung's words alone: {first_night:?}"
    );
    assert!(
        first_night.stderr.contains("refused this folder")
            && first_night.stderr.contains("headless_args"),
        "the launch says why Codex did not run, and the fix: {first_night:?}"
    );
    assert!(
        !first_night
            .stderr
            .lines()
            .any(|l| l.contains("Codex") && l.contains("treating as unavailable")),
        "a refused folder is no dead rung: {first_night:?}"
    );

    // 10. The fix the notice named: Codex's own words, for Codex only.
    w.sb.write_config(&format!(
        "probe_timeout_seconds = 60\n[alerts.webhook]\nurl = \"{}/hook\"\n\n[backends.codex]\nheadless_args = [\"--skip-git-repo-check\"]\n",
        w.api.url()
    ));
    walk.says(
        "The next night, with Codex's own words in the config",
        "`[backends.codex] headless_args = [\"--skip-git-repo-check\"]` lets `codex exec` run outside a repository; Claude Code never sees the flag. The refused folder left Codex healthy: it is tried again at once.",
    );
    let night = walk.agent_into_file(&["-p", NIGHT_PROMPT], &out);
    assert_eq!(night.code, Some(0), "{night:?}");
    assert_eq!(
        night.stdout.trim(),
        CODEX_ANSWER,
        "out.txt holds Codex's answer alone: {night:?}"
    );
    let json_out = w.sb.root().join("out.json");
    let night_json =
        walk.agent_into_file(&["-p", NIGHT_PROMPT, "--output-format", "json"], &json_out);
    assert_eq!(night_json.code, Some(0), "{night_json:?}");
    let result: Value = serde_json::from_str(night_json.stdout.trim())
        .unwrap_or_else(|e| panic!("one JSON object: {e}: {}", night_json.stdout));
    assert_eq!(result["result"], CODEX_ANSWER, "{result}");
    assert_eq!(result["is_error"], false, "{result}");

    // 11. The watchdog's own check: Gemini CLI, never set up, is no dead rung.
    walk.says(
        "`agent --check-fallback` (what the watchdog runs)",
        "Gemini CLI was never set up: no cover, and no alert about it.",
    );
    walk.cd("code/some-repo");
    let hooks_before = w.posts_to("/hook").len();
    let check = walk.agent(&["--check-fallback"]);
    assert!(
        !check.stdout.contains("died") && !check.stderr.contains("died"),
        "{check:?}"
    );
    for alert in &w.posts_to("/hook")[hooks_before..] {
        assert!(!alert.body.contains("gemini"), "{}", alert.body);
    }
    walk.keep();
}
