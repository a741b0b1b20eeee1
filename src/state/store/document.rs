//! A JSON state document in the shared store: one string key per document, the same
//! bytes its file would hold. `JsonFile` comes here first when the document is shared.
//!
//! A document nothing else could bring back (the relay's named clients: their hashes and
//! caps, never a token) is also kept on this machine as last read, in
//! `store_documents.json` (0600, synced), and put back when the store forgets it (see
//! [`super::epoch`]).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::state::json_file::JsonFile;
use crate::state::store::{Down, Shared};

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Kept {
    #[serde(default)]
    documents: BTreeMap<String, String>,
}

fn kept_file(state_dir: &Path) -> JsonFile<Kept> {
    JsonFile::new(state_dir, "store_documents.json").synced()
}

/// The documents this machine keeps to put back, by name.
pub fn kept(state_dir: &Path) -> BTreeMap<String, String> {
    kept_file(state_dir).load().documents
}

/// Keeps `bytes` as this machine's copy of the document `name`, unless it is the copy
/// kept already: a read of the store costs a comparison, a change one write.
pub fn keep(state_dir: &Path, name: &str, bytes: &[u8]) {
    static LAST: Mutex<BTreeMap<String, Vec<u8>>> = Mutex::new(BTreeMap::new());
    let mut last = LAST
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if last.get(name).is_some_and(|kept| kept == bytes) {
        return;
    }
    let Ok(text) = std::str::from_utf8(bytes) else {
        return;
    };
    let kept = kept_file(state_dir).update(|kept| {
        kept.documents.insert(name.to_string(), text.to_string());
    });
    if let Err(err) = kept {
        crate::term::warn(&format!(
            "could not keep this machine's copy of {name} from the shared store (it could not be put back if the store forgot it): {err:#}"
        ));
    }
    // Told once per change, not once per read.
    last.insert(name.to_string(), bytes.to_vec());
}

/// The document's bytes; `None` when it was never written.
pub fn get(shared: &Shared, name: &str) -> Result<Option<Vec<u8>>, Down> {
    let key = shared.key(name);
    shared.run(|c| redis::cmd("GET").arg(&key).query(c))
}

pub fn set(shared: &Shared, name: &str, bytes: &[u8]) -> Result<(), Down> {
    let key = shared.key(name);
    shared.run(|c| redis::cmd("SET").arg(&key).arg(bytes).query(c))
}

/// How long a document kept aside stays on the server.
const KEPT_ASIDE_SECONDS: u64 = 30 * 24 * 3600;

/// Moves the document aside only if it still holds `found`: readers that found the same
/// corrupt bytes race to keep them, and a writer may have replaced them since (a
/// document written under the lease is not what this reader found corrupt).
const KEEP_ASIDE: &str = r"
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
redis.call('RENAME', KEYS[1], KEYS[2])
redis.call('EXPIRE', KEYS[2], ARGV[2])
return 1";

/// Moves a corrupt document aside under a name of its own (kept a month), as a corrupt
/// file is, and returns that name — `None` when the document no longer holds the bytes
/// `found` (another reader kept them first, or a writer replaced them): nothing to report.
pub fn keep_aside(shared: &Shared, name: &str, found: &[u8]) -> Result<Option<String>, Down> {
    let key = shared.key(name);
    let aside = format!(
        "{key}.corrupt-{}-{}-{:04x}",
        jiff::Timestamp::now().as_second(),
        std::process::id(),
        fastrand::u16(..)
    );
    let script = redis::Script::new(KEEP_ASIDE);
    let moved: i64 = shared.run(|c| {
        script
            .key(&key)
            .key(&aside)
            .arg(found)
            .arg(KEPT_ASIDE_SECONDS)
            .invoke(c)
    })?;
    Ok((moved == 1).then_some(aside))
}
