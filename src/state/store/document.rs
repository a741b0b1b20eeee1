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

/// Moves a corrupt document aside under a name of its own (kept a month), as a corrupt
/// file is; returns that name.
pub fn keep_aside(shared: &Shared, name: &str) -> Result<String, Down> {
    let key = shared.key(name);
    let aside = format!(
        "{key}.corrupt-{}-{}-{:04x}",
        jiff::Timestamp::now().as_second(),
        std::process::id(),
        fastrand::u16(..)
    );
    shared.run(|c| {
        redis::pipe()
            .atomic()
            .cmd("RENAME")
            .arg(&key)
            .arg(&aside)
            .ignore()
            .cmd("EXPIRE")
            .arg(&aside)
            .arg(30 * 24 * 3600)
            .ignore()
            .query::<()>(c)
    })?;
    Ok(aside)
}
