//! Token counts from each API's own `usage` block — what the provider says it billed.

use serde_json::Value;

use crate::state::ledger::Tokens;

fn count(value: &Value, path: &[&str]) -> u64 {
    path.iter()
        .try_fold(value, |v, key| v.get(key))
        .and_then(crate::tokens::count)
        .unwrap_or(0)
}

/// The usage of a JSON answer from any of the three APIs, when it has one.
pub fn tokens(answer: &Value) -> Option<Tokens> {
    if let Some(meta) = answer.get("usageMetadata") {
        // Gemini: the prompt count includes cached tokens.
        let cached = count(meta, &["cachedContentTokenCount"]);
        return Some(Tokens {
            input: count(meta, &["promptTokenCount"]).saturating_sub(cached),
            output: count(meta, &["candidatesTokenCount"]),
            reasoning: count(meta, &["thoughtsTokenCount"]),
            cache_read: cached,
            cache_write: 0,
        });
    }
    let usage = answer.get("usage")?;
    if usage.get("prompt_tokens").is_some() {
        // OpenAI chat completions: prompt tokens include cached ones.
        let cached = count(usage, &["prompt_tokens_details", "cached_tokens"]);
        let reasoning = count(usage, &["completion_tokens_details", "reasoning_tokens"]);
        return Some(Tokens {
            input: count(usage, &["prompt_tokens"]).saturating_sub(cached),
            output: count(usage, &["completion_tokens"]).saturating_sub(reasoning),
            reasoning,
            cache_read: cached,
            cache_write: 0,
        });
    }
    if usage.get("input_tokens_details").is_some() || usage.get("output_tokens_details").is_some() {
        // OpenAI Responses API.
        let cached = count(usage, &["input_tokens_details", "cached_tokens"]);
        let reasoning = count(usage, &["output_tokens_details", "reasoning_tokens"]);
        return Some(Tokens {
            input: count(usage, &["input_tokens"]).saturating_sub(cached),
            output: count(usage, &["output_tokens"]).saturating_sub(reasoning),
            reasoning,
            cache_read: cached,
            cache_write: 0,
        });
    }
    // Anthropic: input excludes cache reads and writes, which are counted apart.
    Some(Tokens {
        input: count(usage, &["input_tokens"]),
        output: count(usage, &["output_tokens"]),
        reasoning: 0,
        cache_read: count(usage, &["cache_read_input_tokens"]),
        cache_write: count(usage, &["cache_creation_input_tokens"]),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_api_reports_its_own_way() {
        let anthropic = json!({"usage": {"input_tokens": 8, "output_tokens": 1, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 20}});
        assert_eq!(
            tokens(&anthropic),
            Some(Tokens {
                input: 8,
                output: 1,
                reasoning: 0,
                cache_read: 100,
                cache_write: 20
            })
        );
        let chat = json!({"usage": {"prompt_tokens": 10, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 4}, "completion_tokens_details": {"reasoning_tokens": 2}}});
        assert_eq!(
            tokens(&chat),
            Some(Tokens {
                input: 6,
                output: 3,
                reasoning: 2,
                cache_read: 4,
                cache_write: 0
            })
        );
        let responses = json!({"usage": {"input_tokens": 10, "output_tokens": 16, "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 12}}});
        assert_eq!(
            tokens(&responses),
            Some(Tokens {
                input: 10,
                output: 4,
                reasoning: 12,
                cache_read: 0,
                cache_write: 0
            })
        );
        let gemini = json!({"usageMetadata": {"promptTokenCount": 7, "candidatesTokenCount": 1, "thoughtsTokenCount": 3}});
        assert_eq!(
            tokens(&gemini),
            Some(Tokens {
                input: 7,
                output: 1,
                reasoning: 3,
                cache_read: 0,
                cache_write: 0
            })
        );
        assert_eq!(tokens(&json!({"type": "message"})), None);
    }

    #[test]
    fn absurd_counts_are_clamped_per_field() {
        let huge = json!({"usage": {"input_tokens": u64::MAX, "output_tokens": u64::MAX, "cache_read_input_tokens": 1e300, "cache_creation_input_tokens": u64::MAX}});
        let t = tokens(&huge).unwrap();
        assert_eq!(
            (t.input, t.output, t.cache_write),
            (
                crate::tokens::MAX_PER_FIELD,
                crate::tokens::MAX_PER_FIELD,
                crate::tokens::MAX_PER_FIELD
            )
        );
        assert_eq!(t.cache_read, 0, "a float is not a count");
    }
}
