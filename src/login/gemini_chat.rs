//! One Gemini CLI chat record, replayed to the conversation it leaves (0.61,
//! `ChatRecordingService`): `~/.gemini/tmp/<project>/chats/session-<time>-<id[..8]>.jsonl`,
//! the first line the session's metadata (`sessionId`, `projectHash`, `startTime`, `kind`),
//! then one line per message (`id`, `timestamp`, `type`: `user`, `gemini`, `info`,
//! `warning` or `error`, `content`). A message is written again with the same `id` as it
//! grows (the last wins), `{"$set": {"messages": […]}}` rewrites the conversation and
//! `{"$rewindTo": id}` drops a message and what followed. Older releases wrote one `.json`
//! object with `sessionId` and `messages`. Its calls (`gemini_calls`) and its session
//! (`gemini_session`) are read from the same replay.

use std::path::Path;

use serde_json::Value;

use super::records;
use crate::bounded_read;

/// A chat as its file leaves it.
#[derive(Debug, Default)]
pub struct Chat {
    /// The session id its metadata names.
    pub session: Option<String>,
    /// The conversation, in order.
    pub messages: Vec<Value>,
    /// Messages written again (their last form kept).
    pub rewritten: u64,
    /// Lines that were not JSON.
    pub unreadable: u64,
}

/// The chat in `path`; `None` when a `.json` chat cannot be read whole.
pub fn replay(path: &Path) -> Option<Chat> {
    if path.extension().is_some_and(|e| e == "json") {
        let chat = bounded_read::json(path, bounded_read::CHAT)?;
        return Some(Chat {
            session: chat
                .get("sessionId")
                .and_then(Value::as_str)
                .map(String::from),
            messages: chat
                .get("messages")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default(),
            ..Chat::default()
        });
    }
    let mut chat = Chat::default();
    for line in records::lines(path) {
        let Ok(record) = serde_json::from_str::<Value>(&line) else {
            chat.unreadable += 1;
            continue;
        };
        chat.add(record);
    }
    Some(chat)
}

impl Chat {
    fn add(&mut self, record: Value) {
        if let Some(id) = record.get("sessionId").and_then(Value::as_str) {
            self.session.get_or_insert_with(|| id.to_string());
        }
        if let Some(all) = record.pointer("/$set/messages").and_then(Value::as_array) {
            self.messages.clone_from(all);
        } else if let Some(id) = record.get("$rewindTo").and_then(Value::as_str) {
            if let Some(at) = self.messages.iter().position(|m| id_of(m) == Some(id)) {
                self.messages.truncate(at);
            }
        } else if let Some(id) = id_of(&record) {
            match self.messages.iter_mut().find(|m| id_of(m) == Some(id)) {
                Some(known) => {
                    self.rewritten += 1;
                    *known = record;
                }
                None => self.messages.push(record),
            }
        }
    }
}

/// Whether the chat in `path` may be session `id`'s, by its first line alone (a JSONL
/// record's metadata): the others are not replayed whole. A legacy `.json` chat may be.
pub fn names_session(path: &Path, id: &str) -> bool {
    if path.extension().is_some_and(|e| e == "json") {
        return true;
    }
    records::lines(path).next().is_some_and(|line| {
        serde_json::from_str::<Value>(&line)
            .ok()
            .and_then(|meta| {
                meta.get("sessionId")
                    .and_then(Value::as_str)
                    .map(|s| s == id)
            })
            .unwrap_or(false)
    })
}

/// A message's id.
pub fn id_of(message: &Value) -> Option<&str> {
    message.get("id").and_then(Value::as_str)
}

/// A message's kind: `user`, `gemini`, `info`, `warning`, `error`.
pub fn kind_of(message: &Value) -> Option<&str> {
    message.get("type").and_then(Value::as_str)
}

/// The text of a message's `content`: a string, or the `text` of its parts.
pub fn text_of(message: &Value) -> String {
    match message.get("content") {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|part| part.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}
