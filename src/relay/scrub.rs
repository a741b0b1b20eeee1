//! The injected keys never travel back: an upstream (or a gateway in front of it) that
//! echoes the key it was sent — in a header, an error, even a good answer — would hand it to
//! the token holder. Every key the relay has injected is masked in the answer's headers and
//! body, streams included, with `*` of the same length (a `content-length` stays true).
//!
//! A key may be split across two chunks, so the end of each chunk that could be the start of
//! a key (never more than its length − 1 bytes) is held back until the next chunk shows
//! whether it is, and let go at the end. An SSE event ends in `\n\n`, which starts no key:
//! streamed events pass without delay. A chunk with no key and no such tail passes through
//! untouched, without a copy; the search is memchr's SIMD `memmem`.

use std::sync::Arc;

use bytes::Bytes;
use http::{HeaderMap, HeaderValue};
use memchr::memmem::Finder;

/// One key to mask, with its searcher built once.
#[derive(Clone)]
pub struct Needle {
    finder: Finder<'static>,
}

impl Needle {
    pub fn new(key: &str) -> Needle {
        Needle {
            finder: Finder::new(key.as_bytes()).into_owned(),
        }
    }

    pub fn bytes(&self) -> &[u8] {
        self.finder.needle()
    }
}

/// The keys to mask in one answer, and what is held back of the last chunk.
pub struct Scrubber {
    needles: Arc<[Needle]>,
    held: Vec<u8>,
}

impl Scrubber {
    pub fn new(needles: Arc<[Needle]>) -> Scrubber {
        Scrubber {
            needles,
            held: Vec::new(),
        }
    }

    /// Masks every key in the answer's header values.
    pub fn headers(&self, headers: &mut HeaderMap) {
        for value in headers.values_mut() {
            if self
                .needles
                .iter()
                .any(|n| n.finder.find(value.as_bytes()).is_some())
            {
                let mut bytes = value.as_bytes().to_vec();
                self.mask(&mut bytes);
                *value = HeaderValue::from_bytes(&bytes)
                    .unwrap_or_else(|_| HeaderValue::from_static("[redacted]"));
            }
        }
    }

    /// The chunk as it may go to the client: keys masked, minus a tail that could start one.
    /// Empty when all of it is held back.
    pub fn chunk(&mut self, data: Bytes) -> Bytes {
        if self.held.is_empty() {
            let found = self.needles.iter().any(|n| n.finder.find(&data).is_some());
            if !found && self.partial_tail(&data) == 0 {
                return data;
            }
            self.held = data.to_vec();
        } else {
            self.held.extend_from_slice(&data);
        }
        let mut out = std::mem::take(&mut self.held);
        self.mask(&mut out);
        let keep = self.partial_tail(&out);
        self.held = out.split_off(out.len() - keep);
        Bytes::from(out)
    }

    /// What is still held back, once the answer has ended: not a key, since none followed.
    pub fn finish(&mut self) -> Bytes {
        Bytes::from(std::mem::take(&mut self.held))
    }

    /// Bytes held back so far.
    pub fn held(&self) -> usize {
        self.held.len()
    }

    fn mask(&self, bytes: &mut [u8]) {
        for needle in self.needles.iter() {
            let len = needle.bytes().len();
            let mut from = 0;
            while let Some(at) = needle.finder.find(&bytes[from..]) {
                let start = from + at;
                bytes[start..start + len].fill(b'*');
                from = start + len;
            }
        }
    }

    /// The length of the longest end of `bytes` that is the start of a key (shorter than
    /// the key: a whole one was masked already).
    fn partial_tail(&self, bytes: &[u8]) -> usize {
        let mut longest = 0;
        for needle in self.needles.iter() {
            let key = needle.bytes();
            let Some(&first) = key.first() else {
                continue;
            };
            let window = &bytes[bytes.len().saturating_sub(key.len() - 1)..];
            // The first place the key's first byte starts a match to the end is the longest.
            let tail = memchr::memchr_iter(first, window)
                .map(|at| &window[at..])
                .find(|tail| key.starts_with(tail))
                .map_or(0, <[u8]>::len);
            longest = longest.max(tail);
        }
        longest
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "sk-ant-api03-SCRUB-ME-0123456789";

    fn scrubber() -> Scrubber {
        Scrubber::new(Arc::from(vec![
            Needle::new(KEY),
            Needle::new("sk-other-key-abcdef"),
        ]))
    }

    fn through(chunks: &[&[u8]]) -> Vec<u8> {
        let mut s = scrubber();
        let mut out = Vec::new();
        for chunk in chunks {
            out.extend_from_slice(&s.chunk(Bytes::copy_from_slice(chunk)));
            assert!(s.held() < KEY.len(), "held back a whole key's length");
        }
        out.extend_from_slice(&s.finish());
        out
    }

    #[test]
    fn a_key_split_anywhere_across_chunks_is_masked_and_nothing_else_changes() {
        let text = format!("data: {{\"text\":\"echo {KEY} and {KEY}\"}}\n\nsk-ant tail sk-");
        let masked = text.replace(KEY, &"*".repeat(KEY.len()));
        for a in 0..=text.len() {
            for b in a..=text.len() {
                let bytes = text.as_bytes();
                let out = through(&[&bytes[..a], &bytes[a..b], &bytes[b..]]);
                assert_eq!(String::from_utf8(out).unwrap(), masked, "split at {a}, {b}");
            }
        }
    }

    #[test]
    fn a_clean_chunk_passes_as_it_is_and_an_event_end_is_never_held() {
        let mut s = scrubber();
        let chunk = Bytes::from_static(b"data: {\"x\":1}\n\n");
        let out = s.chunk(chunk.clone());
        assert_eq!(out.as_ptr(), chunk.as_ptr(), "copied a clean chunk");
        assert_eq!(s.held(), 0);
    }

    #[test]
    fn header_values_are_masked() {
        let mut headers = HeaderMap::new();
        headers.insert(
            "x-echo",
            HeaderValue::from_str(&format!("key={KEY};")).unwrap(),
        );
        headers.insert("x-fine", HeaderValue::from_static("nothing"));
        scrubber().headers(&mut headers);
        assert_eq!(
            headers["x-echo"],
            format!("key={};", "*".repeat(KEY.len())).as_str()
        );
        assert_eq!(headers["x-fine"], "nothing");
    }
}
