//! A sandbox wired to a mock API: every vendor's base URL points at the mock (no test may
//! reach a public address), the CLIs agent can launch are fakes that record their argv,
//! and each credential has a recognisable value to search for in outputs.

use crate::support::{MockApi, Sandbox};

pub const PROXY_KEY: &str = "sk-proxy-SECRET-0123456789abcdefXYZ";
pub const OPENAI_KEY: &str = "sk-openai-SECRET-9876543210fedcbaQRS";
pub const GEMINI_KEY: &str = "AIza-gemini-SECRET-5555666677778888";
pub const CODEX_MODEL: &str = "gpt-test-codex";
pub const GEMINI_MODEL: &str = "gemini-test-pro";

pub struct World {
    pub sb: Sandbox,
    pub api: MockApi,
}

/// The full built-in table over one mock API; claude, codex and gemini installed as fakes
/// that exit 0 at once (agy is not installed).
pub fn world() -> World {
    let api = MockApi::start();
    let sb = sandbox_on(&api);
    World { sb, api }
}

/// [`world`]'s sandbox over a mock that is already running: another HOME (another person,
/// another machine) calling the same vendors with the same credentials.
pub fn sandbox_on(api: &MockApi) -> Sandbox {
    let sb = Sandbox::new();
    let url = api.url();
    sb.env("AGENT_PROXY_URL", &url);
    sb.env("AGENT_PROXY_KEY", PROXY_KEY);
    sb.env("ANTHROPIC_BASE_URL", &url);
    sb.env("GOOGLE_GEMINI_BASE_URL", &url);
    sb.env("GEMINI_API_KEY", GEMINI_KEY);
    sb.env("MOCK_OPENAI_KEY", OPENAI_KEY);
    sb.write_file(
        ".codex/config.toml",
        &format!(
            "model = \"{CODEX_MODEL}\"\nmodel_provider = \"mock\"\n\n[model_providers.mock]\nname = \"mock\"\nbase_url = \"{url}/v1\"\nenv_key = \"MOCK_OPENAI_KEY\"\nwire_api = \"responses\"\n"
        ),
    );
    sb.write_file(
        ".gemini/settings.json",
        &format!("{{\"model\": {{\"name\": \"{GEMINI_MODEL}\"}}}}"),
    );
    // A folder Gemini CLI trusts, as a user's project is: a launch there would run.
    sb.write_file(
        ".gemini/trustedFolders.json",
        &serde_json::json!({ sb.home().to_string_lossy(): "TRUST_FOLDER" }).to_string(),
    );
    for cli in ["claude", "codex", "gemini"] {
        sb.fake_cli(cli)
            .stdout(&format!("{cli} answered\n"))
            .install();
    }
    sb
}

/// A two-rung table: Claude Code on opus (the CLI's default model), then codex.
pub const CLAUDE_THEN_CODEX: &str = r#"
[[rungs]]
backend = "claude"
probe_model = "opus"

[[rungs]]
backend = "codex"
"#;

/// The `health.json` entry whose target names `model`, parsed.
pub fn health_of(sb: &Sandbox, model: &str) -> serde_json::Value {
    let text =
        std::fs::read_to_string(sb.state_dir().join("health.json")).expect("health.json exists");
    let health: serde_json::Value = serde_json::from_str(&text).expect("health.json parses");
    let targets = health["targets"].as_object().expect("targets");
    targets
        .iter()
        .find(|(target, _)| target.contains(model))
        .map_or_else(
            || panic!("no health for {model} in {text}"),
            |(_, entry)| entry.clone(),
        )
}
