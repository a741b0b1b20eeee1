//! No child agent starts sees agent's own secrets (DESIGN §23): the relay's token and
//! upstream keys, the alert tokens, a store URL with its password, the proxy's key by its
//! own name — nor another vendor's key than the rung's CLI reads. Every way a child is
//! started is tried here with each of them set to a value to search for; each child copies
//! its own `/proc/PID/environ` to a file, and no value may be in any copy.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::relay::{ANTHROPIC_KEY, OPENAI_KEY, TOKEN, messages_body, relay_world};
use crate::support::relay::RelayProc;
use crate::support::{Sandbox, wait};
use crate::world::{GEMINI_KEY, PROXY_KEY, world};

/// agent's own secrets, each under the name agent reads it from.
const OWN: &[(&str, &str)] = &[
    ("AGENT_RELAY_TOKEN", "agr-CHILDENV-relay-token-0123456789"),
    (
        "AGENT_RELAY_ANTHROPIC_KEY",
        "sk-ant-api03-CHILDENV-relay-upstream-0123456789",
    ),
    (
        "AGENT_TELEGRAM_TOKEN",
        "4242:CHILDENV-telegram-token-0123456789",
    ),
    // Named by the configuration below: an alert's token and the store's URL.
    (
        "CHILDENV_ALERT_TOKEN",
        "CHILDENV-alert-token-by-config-0123456789",
    ),
    (
        "CHILDENV_STORE_URL",
        "redis://:CHILDENV-store-password-0123@127.0.0.1:1/0",
    ),
];

/// Keys of vendors whose CLI is not Claude Code's.
const OPENAI_API_KEY: &str = "sk-proj-CHILDENV-openai-key-0123456789";

/// The rung's own vendor's key: Claude Code reads it, so it stays.
const ANTHROPIC_API_KEY: &str = "sk-ant-api03-CHILDENV-own-vendor-key-0123";

/// What the configuration adds to any table: the variables it names for secrets.
const NAMING_SECRETS: &str = r#"
[alerts.telegram]
bot_token = "${CHILDENV_ALERT_TOKEN}"
chat_id = "1"
api_url = "http://127.0.0.1:1"

[store]
kind = "redis"
url = "${CHILDENV_STORE_URL}"
on_store_down = "local"
"#;

/// Sets every one of agent's own secrets in `sb`'s environment.
fn with_own_secrets(sb: &Sandbox) {
    for (name, value) in OWN {
        sb.env(name, *value);
    }
}

/// Where the children's copies of their environments go.
fn dumps(sb: &Sandbox) -> PathBuf {
    let dir = sb.root().join("environ");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// An `sh` line that copies the running process's own environment to `<tag>.<pid>`.
fn copy_environ(sb: &Sandbox, tag: &str) -> String {
    format!("cat /proc/$$/environ > '{}/{tag}.'$$", dumps(sb).display())
}

/// A fake `name` that copies its environment, then runs `rest`.
fn dumping(sb: &Sandbox, name: &str, rest: &str) {
    sb.fake_cli(name)
        .script(&format!("{}\n{rest}", copy_environ(sb, name)))
        .install();
}

/// Each copy tagged `tag`, as variables.
fn environs(sb: &Sandbox, tag: &str) -> Vec<BTreeMap<String, String>> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dumps(sb)).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.rsplit_once('.').map(|(t, _)| t) != Some(tag) {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        let vars = bytes
            .split(|b| *b == 0)
            .filter_map(|pair| {
                let pair = String::from_utf8_lossy(pair);
                let (k, v) = pair.split_once('=')?;
                Some((k.to_string(), v.to_string()))
            })
            .collect();
        found.push(vars);
    }
    found
}

/// At least one child tagged `tag` ran, and none of `secrets` is in any child's environment,
/// under any name.
fn assert_none_holds(sb: &Sandbox, tag: &str, secrets: &[&str], what: &str) {
    let seen = environs(sb, tag);
    assert!(!seen.is_empty(), "{tag} never ran ({what})");
    let mut copies: Vec<PathBuf> = std::fs::read_dir(dumps(sb))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    // The child asked about first, then every other child the run started.
    copies.sort_by_key(|path| !path.file_name().unwrap().to_string_lossy().starts_with(tag));
    for path in copies {
        let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
        for secret in secrets {
            assert!(
                !text.contains(secret),
                "{} holds {secret} ({what}): {}",
                path.display(),
                text.replace('\0', "\n")
            );
        }
    }
}

/// Every value agent holds for itself.
fn own_values() -> Vec<&'static str> {
    OWN.iter().map(|(_, value)| *value).collect()
}

/// A world with Claude Code first, agent's secrets and two vendors' keys set.
fn claude_world(table: &str) -> crate::world::World {
    let w = world();
    with_own_secrets(&w.sb);
    w.sb.env("OPENAI_API_KEY", OPENAI_API_KEY);
    w.sb.env("ANTHROPIC_API_KEY", ANTHROPIC_API_KEY);
    w.sb.write_config(&format!("{table}\n{NAMING_SECRETS}"));
    dumping(&w.sb, "claude", "echo claude answered");
    w
}

const CLAUDE_ONLY: &str = "[[rungs]]\nbackend = \"claude\"\nprobe_model = \"opus\"\n";

/// What a Claude Code child may not hold: agent's secrets, the proxy's key (this rung does
/// not go through the proxy) and the other vendors' keys.
fn not_for_claude() -> Vec<&'static str> {
    let mut values = own_values();
    values.extend([PROXY_KEY, OPENAI_API_KEY, GEMINI_KEY]);
    values
}

#[test]
fn a_launched_cli_holds_none_of_agents_secrets_nor_another_vendors_key() {
    let w = claude_world(CLAUDE_ONLY);

    let run = w.sb.run(&["-p", "hi"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    assert_none_holds(&w.sb, "claude", &not_for_claude(), "launch");
    let env = &environs(&w.sb, "claude")[0];
    assert_eq!(
        env.get("ANTHROPIC_API_KEY").map(String::as_str),
        Some(ANTHROPIC_API_KEY),
        "the key Claude Code reads still reaches it"
    );
    assert!(
        env.contains_key("HOME") && env.contains_key("PATH"),
        "{env:?}"
    );
}

#[test]
fn a_cli_run_by_use_holds_none_of_agents_secrets() {
    let w = claude_world(CLAUDE_ONLY);

    let run = w.sb.run(&["--use", "claude", "-p", "hi"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    assert_none_holds(&w.sb, "claude", &not_for_claude(), "--use");
}

#[test]
fn the_proxy_rung_gets_the_proxys_key_as_claude_codes_token_and_not_by_agents_name() {
    let w = claude_world(
        "[[rungs]]\nbackend = \"claude-proxy\"\nprobe_model = \"opus\"\nrun_model = \"opus\"\n",
    );

    let run = w.sb.run(&["-p", "hi"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    let mut forbidden = own_values();
    forbidden.extend([OPENAI_API_KEY, GEMINI_KEY, ANTHROPIC_API_KEY]);
    assert_none_holds(&w.sb, "claude", &forbidden, "claude-proxy launch");
    let env = &environs(&w.sb, "claude")[0];
    assert_eq!(
        env.get("ANTHROPIC_AUTH_TOKEN").map(String::as_str),
        Some(PROXY_KEY),
        "{env:?}"
    );
    assert!(!env.contains_key("AGENT_PROXY_KEY"), "{env:?}");
}

#[test]
fn a_command_probe_holds_none_of_agents_secrets() {
    let w = world();
    with_own_secrets(&w.sb);
    w.sb.env("OPENAI_API_KEY", OPENAI_API_KEY);
    w.sb.env("ANTHROPIC_API_KEY", ANTHROPIC_API_KEY);
    w.sb.write_config(&format!(
        "[backends.gemini]\nprobe = {{ kind = \"command\" }}\n\n[[rungs]]\nbackend = \"gemini\"\n{NAMING_SECRETS}"
    ));
    dumping(&w.sb, "gemini", "echo gemini answered");

    let run = w.sb.run(&["--status"]);

    assert!(run.stdout.contains("gemini answered"), "{run:?}");
    let mut forbidden = own_values();
    forbidden.extend([PROXY_KEY, OPENAI_API_KEY, ANTHROPIC_API_KEY]);
    assert_none_holds(&w.sb, "gemini", &forbidden, "command probe");
}

#[test]
fn a_self_check_holds_none_of_agents_secrets() {
    let (sb, _api) = crate::logins::logged_in();
    with_own_secrets(&sb);
    sb.env("AGENT_PROXY_KEY", PROXY_KEY);
    sb.env("ANTHROPIC_API_KEY", ANTHROPIC_API_KEY);
    sb.write_config(&format!(
        "[[rungs]]\nbackend = \"codex\"\n\n[[rungs]]\nbackend = \"gemini\"\n{NAMING_SECRETS}"
    ));
    dumping(&sb, "codex", "echo '{\"type\":\"turn.completed\"}'");
    dumping(&sb, "gemini", "echo '{\"response\":\"hi\"}'");

    let run = sb.run(&["--status"]);

    assert!(run.stdout.contains("codex"), "{run:?}");
    let mut forbidden = own_values();
    forbidden.extend([PROXY_KEY, ANTHROPIC_API_KEY]);
    assert_none_holds(&sb, "codex", &forbidden, "codex's self-check");
    assert_none_holds(&sb, "gemini", &forbidden, "gemini's self-check");
}

#[test]
fn an_alert_command_holds_none_of_agents_secrets() {
    let w = world();
    with_own_secrets(&w.sb);
    w.sb.write_config(&format!(
        "[alerts.command]\nargv = [\"notify\"]\n{NAMING_SECRETS}"
    ));
    dumping(&w.sb, "notify", "exit 0");
    crate::watchdog::break_gemini(&w);

    let run = w.sb.run(&["--check-fallback"]);

    assert_eq!(run.code, Some(1), "{run:?}");
    let mut forbidden = own_values();
    forbidden.push(PROXY_KEY);
    assert_none_holds(&w.sb, "notify", &forbidden, "alert command");
}

#[test]
fn a_secret_command_holds_none_of_agents_secrets() {
    let w = claude_world(CLAUDE_ONLY);
    let key = "sk-ant-api03-FROM-THE-SECRET-COMMAND-0123456789";
    w.sb.write_config(&format!(
        "{CLAUDE_ONLY}\n[[accounts]]\nname = \"a\"\nbackend = \"claude\"\nkind = \"api_key\"\nsecret_cmd = \"{}; echo {key}\"\n{NAMING_SECRETS}",
        copy_environ(&w.sb, "secret_cmd")
    ));

    let run = w.sb.run(&["-p", "hi"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    let mut forbidden = own_values();
    forbidden.push(PROXY_KEY);
    assert_none_holds(&w.sb, "secret_cmd", &forbidden, "secret_cmd");
    assert_eq!(
        environs(&w.sb, "claude")[0]
            .get("ANTHROPIC_API_KEY")
            .map(String::as_str),
        Some(key),
        "the account's key is the one Claude Code gets"
    );
}

#[test]
fn the_relays_claude_cli_holds_none_of_the_relays_secrets() {
    let (sb, _api) = relay_world();
    sb.env("AGENT_TELEGRAM_TOKEN", OWN[2].1);
    sb.env("CHILDENV_ALERT_TOKEN", OWN[3].1);
    sb.env("OPENAI_API_KEY", OPENAI_API_KEY);
    sb.write_config(
        "[relay.upstreams.claude-cli]\nkind = \"claude-cli\"\n\n[alerts.telegram]\nbot_token = \"${CHILDENV_ALERT_TOKEN}\"\nchat_id = \"1\"\napi_url = \"http://127.0.0.1:1\"\n",
    );
    let answer = r#"{"type":"result","subtype":"success","is_error":false,"result":"cli says hi","stop_reason":"end_turn","usage":{"input_tokens":4,"output_tokens":5}}"#;
    dumping(
        &sb,
        "claude",
        &format!("cat > /dev/null\nprintf '%s' '{answer}'"),
    );
    let relay = RelayProc::start(&sb, &[]);

    let answer = relay.post(
        "/claude-cli/v1/messages",
        Some(TOKEN),
        &messages_body("claude-opus-5"),
        &[],
    );

    assert_eq!(answer.status, 200, "{answer:?}");
    assert_none_holds(
        &sb,
        "claude",
        &[
            TOKEN,
            ANTHROPIC_KEY,
            OPENAI_KEY,
            OWN[2].1,
            OWN[3].1,
            OPENAI_API_KEY,
        ],
        "relay claude-cli",
    );
}

#[test]
fn the_previous_statusline_command_holds_none_of_agents_secrets() {
    let w = world();
    w.sb.write_config(NAMING_SECRETS);
    w.sb.write_file(
        ".claude/settings.json",
        &serde_json::json!({"statusLine": {"type": "command", "command": format!("{}; echo theirs", copy_environ(&w.sb, "previous"))}})
            .to_string(),
    );
    let install = w.sb.run(&["--install-statusline"]);
    assert_eq!(install.code, Some(0), "{install:?}");
    with_own_secrets(&w.sb);
    let feed = w.sb.write_file(
        "feed.json",
        r#"{"session_id":"abc123","model":{"id":"claude-opus-4-8","display_name":"Opus 4.8"}}"#,
    );

    let mut command = w.sb.command(&["--statusline"]);
    command.stdin(Stdio::from(std::fs::File::open(&feed).unwrap()));
    let line = command.output().unwrap();

    let line = String::from_utf8_lossy(&line.stdout);
    assert!(line.ends_with(" │ theirs\n"), "{line}");
    let mut forbidden = own_values();
    forbidden.push(PROXY_KEY);
    assert_none_holds(&w.sb, "previous", &forbidden, "previous statusline");
}

#[test]
fn codex_app_server_holds_none_of_agents_secrets_nor_another_vendors_key() {
    let w = world();
    crate::parking::codex_on_chatgpt(&w.sb);
    with_own_secrets(&w.sb);
    w.sb.env("ANTHROPIC_API_KEY", ANTHROPIC_API_KEY);
    let table = std::fs::read_to_string(w.sb.config_path()).unwrap();
    w.sb.write_config(&format!("{table}\n{NAMING_SECRETS}"));
    w.sb.fake_cli("codex")
        .script(&format!(
            "if [ \"$1\" = app-server ]; then\n  {}\n  exit 0\nfi\necho codex answered",
            copy_environ(&w.sb, "app-server")
        ))
        .install();

    let run = w.sb.run(&["-p", "hi"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    let mut forbidden = own_values();
    forbidden.extend([PROXY_KEY, ANTHROPIC_API_KEY, GEMINI_KEY]);
    assert_none_holds(&w.sb, "app-server", &forbidden, "codex app-server");
}

#[test]
fn agy_asked_for_its_usage_holds_none_of_agents_secrets_nor_another_vendors_key() {
    let (sb, _api) = crate::logins::logged_in();
    with_own_secrets(&sb);
    sb.env("AGENT_PROXY_KEY", PROXY_KEY);
    sb.env("GEMINI_API_KEY", GEMINI_KEY);
    sb.write_config(&format!("[[rungs]]\nbackend = \"agy\"\n{NAMING_SECRETS}"));
    dumping(
        &sb,
        "agy",
        "case \"$1\" in --version) echo 'agy 1.2.14';; *) echo '{}';; esac",
    );

    let run = sb.run(&["--status"]);

    assert!(run.stdout.contains("agy"), "{run:?}");
    let mut forbidden = own_values();
    forbidden.extend([PROXY_KEY, GEMINI_KEY]);
    assert_none_holds(&sb, "agy", &forbidden, "agy /usage");
}

/// Lines of `src/` outside `child_env.rs` and outside unit tests (which may start what they
/// like) that hold `needle`.
fn lines_outside_the_door(needle: &str) -> Vec<String> {
    fn walk(dir: &Path, needle: &str, found: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, needle, found);
            } else if path.extension().is_some_and(|e| e == "rs") && !path.ends_with("child_env.rs")
            {
                let text = std::fs::read_to_string(&path).unwrap();
                let code = text.split("#[cfg(test)]").next().unwrap_or("");
                for (at, line) in code.lines().enumerate() {
                    if line.contains(needle) {
                        found.push(format!("{}:{}: {}", path.display(), at + 1, line.trim()));
                    }
                }
            }
        }
    }
    let mut found = Vec::new();
    walk(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        needle,
        &mut found,
    );
    found
}

/// The one way a child is made: every `Command` in `src/` comes from `child_env::command`,
/// so no new way of starting a child can forget the list.
#[test]
fn every_child_is_made_by_the_one_door() {
    let found = lines_outside_the_door("Command::new(");
    assert!(
        found.is_empty(),
        "make children with crate::child_env::command:\n{}",
        found.join("\n")
    );
}

/// The one way a child is given a directory: `child_env::start_in` sets its `PWD` with it,
/// so no child starts in agent's scratch directory with a `PWD` naming the user's
/// repository (opencode loaded that repository's plugins from it).
#[test]
fn every_childs_directory_is_set_by_the_one_door() {
    let found = lines_outside_the_door(".current_dir(");
    assert!(
        found.is_empty(),
        "start children elsewhere with crate::child_env::start_in:\n{}",
        found.join("\n")
    );
}

/// Whether process `pid` is gone (a zombie no one reaps yet counts as gone: it runs nothing).
fn is_gone(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z')),
    }
}

#[test]
fn a_hung_secret_command_runs_once_for_two_rungs_and_leaves_nothing_running() {
    let w = world();
    let home = w.sb.home().display().to_string();
    // It counts its runs, starts a grandchild that writes its pid, and never answers.
    w.sb.write_config(&format!(
        "[[rungs]]\nbackend = \"claude\"\nprobe_model = \"opus\"\n\n[[rungs]]\nbackend = \"claude\"\nprobe_model = \"sonnet\"\nrun_model = \"sonnet\"\n\n[[accounts]]\nname = \"a\"\nbackend = \"claude\"\nkind = \"api_key\"\nsecret_cmd = \"echo ran >> '{home}/runs'; sh -c 'echo $$ > {home}/grandchild; exec sleep 1000' & sleep 1000\"\n"
    ));

    // Not `Sandbox::run`, whose clean-up kills agent's whole process group: what agent left
    // behind must be gone by agent's own doing.
    let run = w.sb.command(&["-p", "hi"]).output().unwrap();

    let grandchild = std::fs::read_to_string(w.sb.home().join("grandchild")).unwrap();
    let grandchild = grandchild.trim();
    // agent ends once it has sent the kill; the grandchild, no child of agent's, dies when
    // the kernel delivers it, which on a loaded machine may be after agent is gone.
    let outlived = !wait::eventually(|| is_gone(grandchild));
    if outlived {
        let _ = Command::new("kill").args(["-9", grandchild]).status();
    }
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_ne!(
        run.status.code(),
        Some(0),
        "no rung had its secret: {stderr}"
    );
    assert!(stderr.contains("did not finish within 20.0s"), "{stderr}");
    assert!(
        !outlived,
        "the secret command's grandchild {grandchild} outlived agent"
    );
    let runs = std::fs::read_to_string(w.sb.home().join("runs")).unwrap();
    assert_eq!(runs.lines().count(), 1, "two rungs, one run: {runs:?}");
    assert!(w.sb.calls("claude").is_empty(), "{stderr}");
}
