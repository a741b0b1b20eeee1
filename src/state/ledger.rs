//! `usage.jsonl`: one line per LLM call agent makes or relays (DESIGN.md §6): each probe's
//! (written through `meter`) and each relayed call's (batched by `relay::accounting`). A
//! credential check lists models, spends no tokens and writes no line. Never a key, a token
//! or message text: only who, where, what came back, and how many tokens.

use std::path::{Path, PathBuf};

use crate::state::store::{self, stream, stream::Stream};

use serde::{Deserialize, Serialize};

pub use crate::tokens::Tokens;

/// The `error_kind` of a call the relay turned away because its upstream was cooling down
/// or its breaker was open: it reached the relay, but nothing was sent and no budget spent,
/// so it is not a call in the budget's or the usage report's counts.
pub const COOLING: &str = "cooling";

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
    /// The relay's named client that made the call (`agent --relay tokens add`); absent
    /// for the team token and for agent's own calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// The local day whose budget the call was reserved against.
    #[serde(default)]
    pub day: String,
    /// The relay refused the call before anything went upstream (its budget, the shared
    /// store): a line so every call that reached the relay is on record, but not a call
    /// that counts or costs.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub refused: bool,
    /// The reservation on the shared store the call was counted by: a rebuild of the day's
    /// count after the store forgot counts the call by this line, not again by its
    /// reservation still open on the disk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reservation: Option<String>,
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
        self.append_lines(&[serde_json::to_string(record)?])
    }

    /// Appends calls already written as JSON lines, in one write (never interleaved with
    /// another process's lines), and to the shared store's stream when one is configured.
    /// The local file is the one that must be written; the stream's failure is told once.
    pub fn append_lines(&self, lines: &[String]) -> anyhow::Result<()> {
        if lines.is_empty() {
            return Ok(());
        }
        store::answered(|shared| stream::append(shared, Stream::Ledger, lines));
        crate::state::file::append_line(&self.path, &lines.join("\n"))
    }

    /// Appends calls already written as JSON lines to this machine's file only, in one
    /// write: for a writer that sends them to the shared stream itself (the relay keeps
    /// what the store did not take, to send again).
    pub fn append_local(&self, lines: &[String]) -> anyhow::Result<()> {
        if lines.is_empty() {
            return Ok(());
        }
        crate::state::file::append_line(&self.path, &lines.join("\n"))
    }

    /// Every readable line of this machine's file, oldest first, whatever the store holds.
    pub fn read_local(&self) -> Vec<CallRecord> {
        crate::state::file::read_jsonl(&self.path)
    }

    /// Every readable line, oldest first (a line that is not UTF-8 or does not parse is
    /// skipped, and the read goes on) — the team's stream when a shared store is
    /// configured and answers, else this machine's file.
    pub fn read_all(&self) -> Vec<CallRecord> {
        if let Some(documents) = store::answered(|shared| stream::read_all(shared, Stream::Ledger))
        {
            return parse_all(&documents);
        }
        crate::state::file::read_jsonl(&self.path)
    }

    /// The last `n` records.
    pub fn tail(&self, n: usize) -> Vec<CallRecord> {
        if let Some(documents) = store::answered(|shared| stream::recent(shared, Stream::Ledger, n))
        {
            return parse_all(&documents);
        }
        let mut all = crate::state::file::read_jsonl(&self.path);
        let skip = all.len().saturating_sub(n);
        all.drain(..skip);
        all
    }
}

/// The records among `documents` that parse (a bad one is skipped, as a bad line is).
fn parse_all(documents: &[Vec<u8>]) -> Vec<CallRecord> {
    documents
        .iter()
        .filter_map(|document| serde_json::from_slice(document).ok())
        .collect()
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
