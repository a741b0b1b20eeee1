//! One answer to "what will this CLI use": the account check (`--accounts add`, `--accounts
//! test`, `--doctor`),
//! the probe (`--status`) and the launch of one backend reach the same host with the same
//! credential — for the built-in backends and for backends with their own `env` or probe
//! `url`. A decoy API sits wherever a second, divergent answer used to point (agent's own
//! `ANTHROPIC_BASE_URL`, `OPENAI_BASE_URL`, `GOOGLE_GEMINI_BASE_URL`, the proxy) and must
//! hear nothing.

use crate::support::MockApi;
use crate::world::{World, world};

const ACCOUNT_KEY: &str = "sk-account-SECRET-one-endpoint-4242";
const BACKEND_KEY: &str = "sk-backend-SECRET-probe-key-7777";

/// The variables each CLI reads a credential from: a launch with an account has its own
/// and no other.
fn credential_vars(cli: &str) -> &'static [&'static str] {
    match cli {
        "claude" => &[
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_AUTH_TOKEN",
            "CLAUDE_CODE_OAUTH_TOKEN",
        ],
        "gemini" => &["GEMINI_API_KEY", "GOOGLE_API_KEY"],
        _ => &["OPENAI_API_KEY", "MOCK_OPENAI_KEY"],
    }
}

struct Case {
    name: &'static str,
    /// The backend the account belongs to, and the `[[rungs]]` it is probed and launched on.
    backend: &'static str,
    probe_model: &'static str,
    /// Extra configuration; `{API}` is the real endpoint's URL.
    config: &'static str,
    /// Environment of agent itself; `{API}` and `{DECOY}` are replaced.
    env: &'static [(&'static str, &'static str)],
    /// The fake CLI that is launched.
    cli: &'static str,
    /// The launched CLI's variable holding the base URL (`None`: the CLI reads its own
    /// config file, as codex does), and the one holding the account's credential.
    base_var: Option<&'static str>,
    credential_var: &'static str,
    /// The path of the probe's call on the real endpoint.
    probe_path: &'static str,
    models_path: &'static str,
}

const CASES: &[Case] = &[
    Case {
        name: "built-in claude (the CLI's own ANTHROPIC_BASE_URL; the proxy is not the account's)",
        backend: "claude",
        probe_model: "opus",
        config: "",
        env: &[
            ("ANTHROPIC_BASE_URL", "{API}"),
            ("AGENT_PROXY_URL", "{DECOY}"),
        ],
        cli: "claude",
        base_var: Some("ANTHROPIC_BASE_URL"),
        credential_var: "ANTHROPIC_API_KEY",
        probe_path: "/v1/messages",
        models_path: "/v1/models",
    },
    Case {
        name: "built-in claude-proxy (its env points at AGENT_PROXY_URL)",
        backend: "claude-proxy",
        probe_model: "opus",
        config: "",
        env: &[
            ("AGENT_PROXY_URL", "{API}"),
            ("AGENT_PROXY_KEY", BACKEND_KEY),
            ("ANTHROPIC_BASE_URL", "{DECOY}"),
        ],
        cli: "claude",
        base_var: Some("ANTHROPIC_BASE_URL"),
        credential_var: "ANTHROPIC_API_KEY",
        probe_path: "/v1/messages",
        models_path: "/v1/models",
    },
    Case {
        name: "a gateway backend whose probe names its own url and key",
        backend: "gateway",
        probe_model: "claude-opus-5",
        config: r#"
[backends.gateway]
command = "claude"
vendor = "anthropic"
env = { ANTHROPIC_BASE_URL = "${GATEWAY_URL}" }
probe = { kind = "anthropic", url = "${GATEWAY_URL}", key = "${GATEWAY_KEY}" }
"#,
        env: &[
            ("GATEWAY_URL", "{API}"),
            ("GATEWAY_KEY", BACKEND_KEY),
            ("ANTHROPIC_BASE_URL", "{DECOY}"),
        ],
        cli: "claude",
        base_var: Some("ANTHROPIC_BASE_URL"),
        credential_var: "ANTHROPIC_API_KEY",
        probe_path: "/v1/messages",
        models_path: "/v1/models",
    },
    Case {
        name: "built-in codex (its config.toml provider; codex ignores OPENAI_BASE_URL)",
        backend: "codex",
        probe_model: "",
        config: "",
        env: &[("OPENAI_BASE_URL", "{DECOY}/v1")],
        cli: "codex",
        base_var: None,
        credential_var: "MOCK_OPENAI_KEY",
        probe_path: "/v1/responses",
        models_path: "/v1/models",
    },
    Case {
        name: "a gemini backend with its own GOOGLE_GEMINI_BASE_URL in env",
        backend: "gem",
        probe_model: "gemini-test-pro",
        config: r#"
[backends.gem]
command = "gemini"
vendor = "google"
env = { GOOGLE_GEMINI_BASE_URL = "${GEM_URL}" }
probe = { kind = "gemini" }
"#,
        env: &[("GEM_URL", "{API}"), ("GOOGLE_GEMINI_BASE_URL", "{DECOY}")],
        cli: "gemini",
        base_var: Some("GOOGLE_GEMINI_BASE_URL"),
        credential_var: "GEMINI_API_KEY",
        probe_path: "/v1beta/models/gemini-test-pro:generateContent",
        models_path: "/v1beta/models",
    },
];

fn set_up(case: &Case) -> (World, MockApi) {
    let w = world();
    let decoy = MockApi::start();
    let fill = |text: &str| {
        text.replace("{API}", &w.api.url())
            .replace("{DECOY}", &decoy.url())
    };
    for (name, value) in case.env {
        w.sb.env(name, fill(value));
    }
    w.sb.env("ACCOUNT_KEY", ACCOUNT_KEY);
    w.sb.write_config(&format!(
        "{}\n[[rungs]]\nbackend = \"{}\"\nprobe_model = \"{}\"\n\n[[accounts]]\nname = \"acc\"\nbackend = \"{}\"\nkind = \"api_key\"\nsecret_env = \"ACCOUNT_KEY\"\n",
        case.config, case.backend, case.probe_model, case.backend
    ));
    (w, decoy)
}

/// `agent --accounts add added --backend B --kind api_key`, the key on stdin.
fn add_account(w: &World, backend: &str) -> std::process::Output {
    use std::io::Write as _;
    use std::process::Stdio;
    let mut command = w.sb.command(&[
        "--accounts",
        "add",
        "added",
        "--backend",
        backend,
        "--kind",
        "api_key",
    ]);
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("agent starts");
    child
        .stdin
        .take()
        .expect("a pipe")
        .write_all(format!("{ACCOUNT_KEY}\n").as_bytes())
        .expect("agent reads the key");
    child.wait_with_output().expect("agent ends")
}

#[test]
fn the_account_check_the_doctor_the_probe_and_the_launch_use_one_endpoint() {
    for case in CASES {
        let (w, decoy) = set_up(case);
        let name = case.name;

        let add = add_account(&w, case.backend);
        let test = w.sb.run(&["--accounts", "test", "acc"]);
        let doctor = w.sb.run(&["--doctor"]);
        let status = w.sb.run(&["--status"]);
        let launch = w.sb.run(&["-p", "hi"]);

        assert_eq!(add.status.code(), Some(0), "{name}: {add:?}");
        assert_eq!(test.code, Some(0), "{name}: {test:?}");
        assert!(test.stdout.contains("valid"), "{name}: {}", test.stdout);
        assert_eq!(status.code, Some(0), "{name}: {status:?}");
        assert_eq!(launch.code, Some(0), "{name}: {launch:?}");
        let _ = doctor;

        let requests = w.api.requests();
        let checks: Vec<_> = requests
            .iter()
            .filter(|r| r.method == "GET" && r.path == case.models_path)
            .collect();
        assert_eq!(
            checks.len(),
            4,
            "{name}: --accounts add, --accounts test and --doctor (two accounts) each check on the CLI's endpoint: {requests:#?}"
        );
        let probes: Vec<_> = requests
            .iter()
            .filter(|r| r.is_post() && r.path == case.probe_path)
            .collect();
        assert!(
            !probes.is_empty(),
            "{name}: the probe reached the endpoint: {requests:#?}"
        );
        for request in checks.iter().chain(&probes) {
            assert_eq!(
                request.credential.as_deref(),
                Some(ACCOUNT_KEY),
                "{name}: {} {} carried another credential",
                request.method,
                request.path
            );
        }
        assert_eq!(
            decoy.requests().len(),
            0,
            "{name}: the decoy heard {:#?}",
            decoy.requests()
        );

        let calls = w.sb.calls(case.cli);
        let launched = calls.last().expect("the CLI ran");
        assert_eq!(
            launched.env.get(case.credential_var).map(String::as_str),
            Some(ACCOUNT_KEY),
            "{name}: the launched CLI's credential"
        );
        for var in credential_vars(case.cli) {
            if *var != case.credential_var {
                assert_eq!(
                    launched.env.get(*var),
                    None,
                    "{name}: the launched CLI got a second credential in {var}"
                );
            }
        }
        if let Some(var) = case.base_var {
            assert_eq!(
                launched.env.get(var).map(String::as_str),
                Some(w.api.url().as_str()),
                "{name}: the launched CLI's base URL"
            );
        }
    }
}
