//! `usage.jsonl`: one line per LLM call agent makes (DESIGN.md §6) — probes now, relayed
//! calls and credential checks later. Never a key, a token or message text: only who,
//! where, what came back, and how many tokens.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Token counts of one call. The five figures are disjoint: `input` excludes cache reads
/// and writes, `output` excludes `reasoning` (an OpenAI `output_tokens` of 70 with 20
/// reasoning tokens is `output: 50, reasoning: 20`), so [`Tokens::total`] is their sum.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tokens {
    #[serde(default)]
    pub input: u64,
    #[serde(default)]
    pub output: u64,
    #[serde(default)]
    pub reasoning: u64,
    #[serde(default)]
    pub cache_read: u64,
    #[serde(default)]
    pub cache_write: u64,
}

impl Tokens {
    /// What counts against the daily token cap: everything the call consumed.
    pub fn total(&self) -> u64 {
        self.input
            .saturating_add(self.output)
            .saturating_add(self.reasoning)
            .saturating_add(self.cache_read)
            .saturating_add(self.cache_write)
    }

    /// Adds another call's counts, saturating: a ledger line from anywhere cannot wrap a sum.
    pub fn add(&mut self, more: &Tokens) {
        self.input = self.input.saturating_add(more.input);
        self.output = self.output.saturating_add(more.output);
        self.reasoning = self.reasoning.saturating_add(more.reasoning);
        self.cache_read = self.cache_read.saturating_add(more.cache_read);
        self.cache_write = self.cache_write.saturating_add(more.cache_write);
    }
}

/// One line of the ledger.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CallRecord {
    /// RFC 3339, UTC.
    pub time: String,
    /// The agent process (or relayed run) the call belongs to.
    pub run: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rung: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend: Option<String>,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub account: Option<String>,
    /// The host called (or the command run).
    #[serde(default)]
    pub upstream: String,
    /// What the call was for: `probe`, `check`, `relay` …
    #[serde(default)]
    pub role: String,
    /// HTTP status, when there was an answer.
    #[serde(default)]
    pub status: Option<u16>,
    /// The error class, `ok` on success.
    #[serde(default)]
    pub error_kind: String,
    #[serde(default)]
    pub tokens: Tokens,
    /// The tokens are agent's estimate, not the provider's count.
    #[serde(default)]
    pub estimated: bool,
    #[serde(default)]
    pub ttfb_s: Option<f64>,
    #[serde(default)]
    pub duration_s: f64,
    /// The provider's request id (Anthropic's `request-id` header, which Claude Code
    /// records as `requestId`): `--usage` uses it to count a relayed call once.
    #[serde(default)]
    pub request_id: Option<String>,
    /// The provider's id of the answer (Anthropic `msg_…`, OpenAI Responses `resp_…`, which
    /// Codex records as `response_id`): a second key for counting a relayed call once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    /// The client's own session id (Claude Code's `X-Claude-Code-Session-Id` header,
    /// Codex's `session-id`): ties a relayed call to the CLI's transcript of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// A relayed call's workflow node and attempt number (`X-Agent-Node`,
    /// `X-Agent-Attempt`); its run and role come from `X-Agent-Run` and `X-Agent-Role`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt: Option<u32>,
    /// The local day whose budget the call was reserved against.
    #[serde(default)]
    pub day: String,
}

#[derive(Debug, Clone)]
pub struct Ledger {
    path: PathBuf,
}

impl Ledger {
    pub fn new(state_dir: &Path) -> Ledger {
        Ledger {
            path: state_dir.join("usage.jsonl"),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one call. The caller has already redacted nothing: a record holds no text.
    pub fn append(&self, record: &CallRecord) -> anyhow::Result<()> {
        let line = serde_json::to_string(record)?;
        crate::state::file::append_line(&self.path, &line)
    }

    /// Every readable line, oldest first (a line that is not UTF-8 or does not parse is
    /// skipped, and the read goes on).
    pub fn read_all(&self) -> Vec<CallRecord> {
        crate::state::file::read_jsonl(&self.path)
    }

    /// The last `n` records.
    pub fn tail(&self, n: usize) -> Vec<CallRecord> {
        let mut all = self.read_all();
        let skip = all.len().saturating_sub(n);
        all.drain(..skip);
        all
    }
}

/// A stable id for this agent process: ties its ledger lines together.
pub fn run_id() -> &'static str {
    static RUN: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    RUN.get_or_init(|| {
        std::env::var("AGENT_RUN_ID")
            .ok()
            .filter(|id| !id.is_empty())
            .unwrap_or_else(|| format!("{:012x}", fastrand::u64(..) & 0xffff_ffff_ffff))
    })
}
