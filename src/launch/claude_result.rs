//! Claude Code's `--output-format json` result document, written by agent for a rung whose
//! CLI prints another shape (issue 32): a script that runs `agent -p … --output-format json
//! | jq .result` reads the same object whichever rung answered. Codex's `exec --json`
//! events, Gemini CLI's `-o json` document and opencode's `run --format json` events are
//! read as their own check reads them (`SelfCheck::read`, measured against each real CLI
//! in `tests/fixtures/self_check/`):
//!
//! ```json
//! {"type": "result", "subtype": "success", "is_error": false, "result": "…",
//!  "session_id": "…", "duration_ms": 5230, "num_turns": 1,
//!  "usage": {"input_tokens": 8, "cache_creation_input_tokens": 0,
//!            "cache_read_input_tokens": 0, "output_tokens": 1},
//!  "agent_rung": "Codex (gpt-5.5)", "agent_cli": "codex"}
//! ```
//!
//! `agent_rung` is the rung as agent's notices and the outcome record's `label` name it;
//! `agent_cli` the CLI's command name. A run that failed says so as Claude Code does:
//! `is_error: true`, `subtype: "error_during_execution"`, its own error in `result`.

use std::time::Duration;

use serde_json::{Value, json};

use crate::adapter::Family;

/// The result document of a run of `family` that printed `stdout` and `stderr` and
/// exited `code` after `elapsed`, on the rung `label`.
pub fn document(
    family: Family,
    label: &str,
    stdout: &str,
    stderr: &str,
    code: i32,
    elapsed: Duration,
) -> Value {
    let said = family
        .self_check()
        .map(|check| (check.read)(stdout, stderr))
        .unwrap_or_default();
    let is_error = code != 0 || said.answer.is_none();
    let result = if is_error {
        said.error
            .or(said.answer)
            .or_else(|| crate::launch::held::words(stdout))
            .unwrap_or_else(|| format!("{label} exited {code} without an answer"))
    } else {
        said.answer.unwrap_or_default()
    };
    let tokens = said.tokens.unwrap_or_default();
    json!({
        "type": "result",
        "subtype": if is_error { "error_during_execution" } else { "success" },
        "is_error": is_error,
        "result": result,
        "session_id": said.session,
        "duration_ms": u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
        "num_turns": 1,
        "usage": {
            "input_tokens": tokens.input,
            "cache_creation_input_tokens": tokens.cache_write,
            "cache_read_input_tokens": tokens.cache_read,
            // Claude Code's output tokens include its thinking.
            "output_tokens": tokens.output.saturating_add(tokens.reasoning),
        },
        "agent_rung": label,
        "agent_cli": family.name(),
    })
}

/// What a run that failed fast said, from its machine-readable output: its own error,
/// else its words.
pub fn failure_words(family: Family, stdout: &str, stderr: &str) -> Option<String> {
    family
        .self_check()
        .and_then(|check| (check.read)(stdout, stderr).error)
        .map(|error| crate::text::snippet(&error))
        .or_else(|| crate::launch::held::words(stdout))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        let path = format!(
            "{}/tests/fixtures/self_check/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read_to_string(path).unwrap()
    }

    #[test]
    fn codexs_events_become_claude_codes_result() {
        let doc = document(
            Family::Codex,
            "Codex (gpt-e2e-codex)",
            &fixture("codex-answered.stdout"),
            "",
            0,
            Duration::from_millis(600),
        );
        assert_eq!(doc["type"], "result");
        assert_eq!(doc["subtype"], "success");
        assert_eq!(doc["is_error"], false);
        assert_eq!(doc["result"], "ok");
        assert_eq!(doc["session_id"], "01a23199-389d-7832-b91d-16adca99b323");
        assert_eq!(doc["usage"]["input_tokens"], 8);
        assert_eq!(doc["usage"]["output_tokens"], 1);
        assert_eq!(doc["agent_rung"], "Codex (gpt-e2e-codex)");
        assert_eq!(doc["agent_cli"], "codex");
    }

    #[test]
    fn a_failed_run_is_an_error_result_with_its_own_words() {
        let doc = document(
            Family::Codex,
            "Codex",
            &fixture("codex-limit.stdout"),
            "",
            1,
            Duration::from_millis(800),
        );
        assert_eq!(doc["is_error"], true);
        assert_eq!(doc["subtype"], "error_during_execution");
        assert!(
            doc["result"]
                .as_str()
                .unwrap()
                .contains("hit your usage limit")
        );
    }

    #[test]
    fn gemini_and_opencode_answers_read_the_same() {
        for (family, name) in [
            (Family::Gemini, "gemini-answered.stdout"),
            (Family::Opencode, "opencode-answered.stdout"),
        ] {
            let doc = document(family, "x", &fixture(name), "", 0, Duration::ZERO);
            assert_eq!(doc["result"], "ok", "{name}");
            assert_eq!(doc["is_error"], false, "{name}");
            assert!(doc["session_id"].is_string(), "{name}");
            assert_eq!(doc["usage"]["input_tokens"], 8, "{name}");
        }
    }
}
