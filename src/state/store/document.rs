//! A JSON state document in the shared store: one string key per document, the same
//! bytes its file would hold. `JsonFile` comes here first when the document is shared.

use crate::state::store::{Down, Shared};

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
