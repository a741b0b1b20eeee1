//! Reads an answer on the side, as it passes through: the provider's token counts and the
//! id of the answer. SSE is read line by line as chunks arrive (Anthropic's
//! `message_start` + `message_delta`, OpenAI's final usage chunk, the Responses API's
//! `response.completed`); a JSON answer is kept (up to a limit) and read at its end.
//! Nothing here ever holds up a chunk: the caller forwards it first, or at once after.

use serde_json::Value;

use crate::probe::usage_tokens;
use crate::state::ledger::Tokens;

/// A JSON answer longer than this is forwarded whole but not read for usage.
const JSON_LIMIT: usize = 16 * 1024 * 1024;
/// An SSE line longer than this is skipped (no usage event is anywhere near it).
const LINE_LIMIT: usize = 4 * 1024 * 1024;

pub struct UsageReader {
    sse: bool,
    /// An SSE line that spans chunks.
    line: Vec<u8>,
    /// Skipping the rest of an overlong line.
    skipping: bool,
    /// A JSON answer (or an error body), while it fits.
    body: Vec<u8>,
    body_limit: usize,
    overflowed: bool,
    tokens: Option<Tokens>,
    message_id: Option<String>,
    /// An `error` event inside a stream that started well: the status it stands for and
    /// the event's JSON.
    stream_error: Option<(u16, String)>,
    pub bytes: u64,
}

impl UsageReader {
    /// `content_type` of the answer decides SSE or not; an error answer's body is kept to
    /// `body_limit` bytes for classification.
    pub fn new(content_type: &str, body_limit: usize) -> UsageReader {
        let sse = content_type
            .to_ascii_lowercase()
            .starts_with("text/event-stream");
        UsageReader {
            sse,
            line: Vec::new(),
            skipping: false,
            body: Vec::new(),
            body_limit: body_limit.min(JSON_LIMIT),
            overflowed: false,
            tokens: None,
            message_id: None,
            stream_error: None,
            bytes: 0,
        }
    }

    pub fn feed(&mut self, chunk: &[u8]) {
        self.bytes += chunk.len() as u64;
        if self.sse {
            self.feed_sse(chunk);
            if self.body.len() < self.body_limit {
                let room = self.body_limit - self.body.len();
                self.body.extend_from_slice(&chunk[..chunk.len().min(room)]);
            }
        } else if !self.overflowed {
            if self.body.len() + chunk.len() <= self.body_limit {
                self.body.extend_from_slice(chunk);
            } else {
                self.overflowed = true;
                let room = self.body_limit - self.body.len();
                self.body.extend_from_slice(&chunk[..room]);
            }
        }
    }

    /// The start of the answer's body, as far as it was kept (for an error's reason).
    pub fn body(&self) -> &[u8] {
        &self.body
    }

    /// An `error` event the stream carried (Anthropic sends `overloaded_error` this way
    /// after a 200): the status it stands for and the event's JSON.
    pub fn stream_error(&self) -> Option<&(u16, String)> {
        self.stream_error.as_ref()
    }

    /// The token counts and the answer's id, once the answer is complete.
    pub fn finish(&mut self) -> (Option<Tokens>, Option<String>) {
        if self.sse {
            if !self.line.is_empty() {
                let line = std::mem::take(&mut self.line);
                self.sse_line(&line);
            }
        } else if !self.overflowed
            && let Ok(value) = serde_json::from_slice::<Value>(&self.body)
        {
            if self.message_id.is_none() {
                self.message_id = value.get("id").and_then(Value::as_str).map(str::to_string);
            }
            if value.get("usage").is_some_and(Value::is_object) {
                self.tokens = usage_tokens(&value);
            }
        }
        (self.tokens, self.message_id.clone())
    }

    fn feed_sse(&mut self, mut chunk: &[u8]) {
        while let Some(at) = chunk.iter().position(|&b| b == b'\n') {
            let (head, rest) = chunk.split_at(at);
            if self.skipping {
                self.skipping = false;
            } else if self.line.is_empty() {
                self.sse_line(head);
            } else {
                let mut line = std::mem::take(&mut self.line);
                line.extend_from_slice(head);
                self.sse_line(&line);
                line.clear();
                self.line = line;
            }
            chunk = &rest[1..];
        }
        if chunk.is_empty() || self.skipping {
            return;
        }
        if self.line.len() + chunk.len() > LINE_LIMIT {
            self.line.clear();
            self.skipping = true;
        } else {
            self.line.extend_from_slice(chunk);
        }
    }

    fn sse_line(&mut self, line: &[u8]) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let Some(data) = line.strip_prefix(b"data:") else {
            return;
        };
        let data = data.trim_ascii_start();
        // Only the first event (the answer's id), usage and error events are worth parsing.
        if self.message_id.is_some() && !contains(data, b"usage") && !contains(data, b"error") {
            return;
        }
        let Ok(event) = serde_json::from_slice::<Value>(data) else {
            return;
        };
        self.sse_event(&event);
    }

    fn sse_event(&mut self, event: &Value) {
        let kind = event.get("type").and_then(Value::as_str).unwrap_or("");
        match kind {
            "error" => {
                let status = match event.pointer("/error/type").and_then(Value::as_str) {
                    Some("overloaded_error") => 529,
                    Some("rate_limit_error") => 429,
                    Some("authentication_error") => 401,
                    Some("permission_error") => 403,
                    Some("not_found_error") => 404,
                    Some("invalid_request_error") => 400,
                    _ => 500,
                };
                self.stream_error = Some((status, event.to_string()));
            }
            // Anthropic: input and cache counts at the start, output (and, lately, final
            // input counts) in message_delta.
            "message_start" => {
                let message = &event["message"];
                self.set_id(message.get("id"));
                if message.get("usage").is_some_and(Value::is_object) {
                    self.tokens = usage_tokens(message);
                }
            }
            "message_delta" => {
                if let Some(usage) = event.get("usage").filter(|u| u.is_object()) {
                    let mut tokens = self.tokens.unwrap_or_default();
                    let field = |name: &str| usage.get(name).and_then(crate::tokens::count);
                    if let Some(n) = field("input_tokens") {
                        tokens.input = n;
                    }
                    if let Some(n) = field("output_tokens") {
                        tokens.output = n;
                    }
                    if let Some(n) = field("cache_read_input_tokens") {
                        tokens.cache_read = n;
                    }
                    if let Some(n) = field("cache_creation_input_tokens") {
                        tokens.cache_write = n;
                    }
                    self.tokens = Some(tokens);
                }
            }
            // The Responses API: the id from the first event, usage on completion.
            _ if kind.starts_with("response.") => {
                if let Some(response) = event.get("response") {
                    self.set_id(response.get("id"));
                    if response.get("usage").is_some_and(Value::is_object) {
                        self.tokens = usage_tokens(response);
                    }
                }
            }
            // OpenAI chat chunks: usage in the last one (`stream_options.include_usage`).
            _ => {
                self.set_id(event.get("id"));
                if event.get("usage").is_some_and(Value::is_object) {
                    self.tokens = usage_tokens(event);
                }
            }
        }
    }

    fn set_id(&mut self, id: Option<&Value>) {
        if self.message_id.is_none() {
            self.message_id = id.and_then(Value::as_str).map(str::to_string);
        }
        if self.message_id.is_none() {
            // No id in the first event: do not parse every later one looking for it.
            self.message_id = Some(String::new());
        }
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(content_type: &str, chunks: &[&str]) -> (Option<Tokens>, Option<String>) {
        let mut reader = UsageReader::new(content_type, 1024);
        for chunk in chunks {
            reader.feed(chunk.as_bytes());
        }
        reader.finish()
    }

    #[test]
    fn anthropic_usage_is_read_from_start_and_delta_across_chunk_boundaries() {
        let (tokens, id) = read(
            "text/event-stream; charset=utf-8",
            &[
                "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"usage\":{\"input_tokens\":10,\"cache_read_input_tokens\":5,\"output_tokens\":1}}}\n\n",
                "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"delta\":{\"text\":\"hi\"}}\n\nevent: message_del",
                "ta\ndata: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":42}}\n\n",
            ],
        );
        assert_eq!(id.as_deref(), Some("msg_1"));
        assert_eq!(
            tokens,
            Some(Tokens {
                input: 10,
                output: 42,
                reasoning: 0,
                cache_read: 5,
                cache_write: 0
            })
        );
    }

    #[test]
    fn openai_usage_comes_from_the_last_chunk() {
        let (tokens, id) = read(
            "text/event-stream",
            &[
                "data: {\"id\":\"chatcmpl-1\",\"choices\":[{\"delta\":{\"content\":\"hi\"}}],\"usage\":null}\n\n",
                "data: {\"id\":\"chatcmpl-1\",\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":3}}\n\ndata: [DONE]\n\n",
            ],
        );
        assert_eq!(id.as_deref(), Some("chatcmpl-1"));
        assert_eq!(tokens.map(|t| (t.input, t.output)), Some((7, 3)));
    }

    #[test]
    fn responses_usage_comes_with_completion() {
        let (tokens, id) = read(
            "text/event-stream",
            &[
                "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"resp_1\",\"usage\":null}}\n\n",
                "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"resp_1\",\"usage\":{\"input_tokens\":4,\"output_tokens\":2,\"input_tokens_details\":{\"cached_tokens\":0},\"output_tokens_details\":{\"reasoning_tokens\":0}}}}\n\n",
            ],
        );
        assert_eq!(id.as_deref(), Some("resp_1"));
        assert_eq!(tokens.map(|t| (t.input, t.output)), Some((4, 2)));
    }

    #[test]
    fn a_json_answer_is_read_at_its_end() {
        let (tokens, id) = read(
            "application/json",
            &[
                "{\"id\":\"msg_2\",\"type\":\"message\",",
                "\"usage\":{\"input_tokens\":8,\"output_tokens\":1}}",
            ],
        );
        assert_eq!(id.as_deref(), Some("msg_2"));
        assert_eq!(tokens.map(|t| (t.input, t.output)), Some((8, 1)));
    }
}
