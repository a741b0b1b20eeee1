//! The built-in table (DESIGN.md §4), compiled in: every launch starts from it, and parsing
//! it as TOML was a fifth of a warm launch's instructions. `builtin.toml` writes the same
//! table the way a user's file would; a test proves the two equal, so they cannot drift.

use std::collections::BTreeMap;

use super::backend::{Auth, Backend, OpenAiApi, ProbeDef, ProbeKind};
use super::rung::RungDef;

/// The built-in backends, by name.
pub fn backends() -> BTreeMap<String, Backend> {
    let claude = Backend {
        models: claude_models(),
        // No url or key: the proxy at AGENT_PROXY_URL when set, else the user's own
        // Anthropic credential, else only whether the API host is reachable.
        probe: probe(ProbeKind::Anthropic),
        ..backend("claude", "Claude Code", "claude", "anthropic")
    };
    let claude_proxy = Backend {
        models: claude_models(),
        env: strings([
            ("ANTHROPIC_BASE_URL", "${AGENT_PROXY_URL}"),
            ("ANTHROPIC_AUTH_TOKEN", "${AGENT_PROXY_KEY}"),
        ]),
        // The user's own key must not travel to the proxy next to the proxy's token.
        env_remove: vec!["ANTHROPIC_API_KEY".into()],
        probe: ProbeDef {
            url: Some("${AGENT_PROXY_URL}".into()),
            key: Some("${AGENT_PROXY_KEY}".into()),
            auth: Some(Auth::Bearer),
            ..probe(ProbeKind::Anthropic)
        },
        ..backend(
            "claude-proxy",
            "Claude Code via proxy",
            "claude",
            "anthropic",
        )
    };
    let codex = Backend {
        // No url or key: the provider codex itself uses, else api.openai.com.
        probe: ProbeDef {
            api: OpenAiApi::Responses,
            ..probe(ProbeKind::Openai)
        },
        ..backend("codex", "Codex", "codex", "openai")
    };
    let agy = Backend {
        probe: probe(ProbeKind::Command),
        ..backend("agy", "Antigravity", "agy", "google")
    };
    let gemini = Backend {
        probe: probe(ProbeKind::Gemini),
        ..backend("gemini", "Gemini CLI", "gemini", "google")
    };
    let opencode = Backend {
        // Run itself (`opencode run hi`): it talks to whichever provider its settings name.
        probe: probe(ProbeKind::Command),
        ..backend("opencode", "opencode", "opencode", "opencode")
    };
    [claude, claude_proxy, codex, agy, gemini, opencode]
        .into_iter()
        .map(|backend| (backend.name.clone(), backend))
        .collect()
}

/// The built-in rungs, in the order they are tried.
pub fn rungs() -> Vec<RungDef> {
    [
        // An empty run model keeps the CLI's own default (a profile's opus[1m] and its 1M
        // context).
        ("claude", "opus", ""),
        ("claude", "sonnet", "sonnet"),
        ("claude-proxy", "opus", "opus"),
        ("claude-proxy", "sonnet", "sonnet"),
        ("codex", "", ""),
        ("agy", "", ""),
        ("gemini", "", ""),
        ("opencode", "", ""),
    ]
    .into_iter()
    .map(|(backend, probe_model, run_model)| RungDef {
        backend: backend.into(),
        probe_model: probe_model.into(),
        run_model: run_model.into(),
        account: None,
        logins: Vec::new(),
    })
    .collect()
}

fn backend(name: &str, label: &str, command: &str, vendor: &str) -> Backend {
    Backend::new(name, label, command, vendor, true)
}

fn probe(kind: ProbeKind) -> ProbeDef {
    ProbeDef {
        kind,
        ..ProbeDef::default()
    }
}

fn claude_models() -> BTreeMap<String, String> {
    strings([
        ("opus", "${AGENT_OPUS_MODEL:-claude-opus-5}"),
        ("sonnet", "${AGENT_SONNET_MODEL:-claude-sonnet-5}"),
        ("haiku", "claude-haiku-4-5"),
    ])
}

fn strings<const N: usize>(pairs: [(&str, &str); N]) -> BTreeMap<String, String> {
    pairs
        .into_iter()
        .map(|(key, value)| (key.into(), value.into()))
        .collect()
}
