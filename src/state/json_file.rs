//! The one door to a JSON state file (`health.json`, `budget.json`, `accounts.json`,
//! `rotation.json`, `watchdog.json`): read without a lock (files are replaced atomically),
//! changed under the lock after a fresh read, and — DESIGN.md §6 — a corrupt file is moved
//! aside under a name of its own, a `corrupt_state` event is written, and the state is
//! rebuilt.
//!
//! A document marked [`JsonFile::shared`] lives in the shared store when one is configured
//! (DESIGN.md §14): the same bytes under `PREFIX:NAME`, a lease where the file has its
//! lock, and this machine's file again whenever the store cannot be reached. Which one a
//! call uses is decided call by call, so a store that comes back is used again at once.
//!
//! A document marked [`JsonFile::kept`] (what nothing else could bring back: the relay's
//! named clients, their hashes and caps, never a token) is also kept on this machine as
//! last read, in `store_documents.json` (0600, synced), for its owner's put-back to return
//! to the store when the store forgets it (the budget's epoch does, when it rejoins).

use std::collections::BTreeMap;
use std::io::Read as _;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::state::events;
use crate::state::file::{self as state_file, Durability, Locked};
use crate::state::store::{self, Down, Shared, document, lease};

/// What a kept document's owner does when it finds the document missing from the store:
/// puts this machine's copies back if the store forgot them, and says whether it did.
pub type PutBack = fn(&Shared, &Path) -> Result<bool, Down>;

pub struct JsonFile<T> {
    path: PathBuf,
    durability: Durability,
    pretty: bool,
    /// How the state comes back after a corrupt file, for the warning.
    rebuilt: &'static str,
    /// Lives in the shared store when one is configured.
    shared: bool,
    /// Kept on this machine too, and how it is put back when the store forgets it.
    kept: Option<PutBack>,
    _contents: PhantomData<fn() -> T>,
}

impl<T> Clone for JsonFile<T> {
    fn clone(&self) -> Self {
        JsonFile {
            path: self.path.clone(),
            durability: self.durability,
            pretty: self.pretty,
            rebuilt: self.rebuilt,
            shared: self.shared,
            kept: self.kept,
            _contents: PhantomData,
        }
    }
}

impl<T> std::fmt::Debug for JsonFile<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JsonFile")
            .field("path", &self.path)
            .field("durability", &self.durability)
            .field("pretty", &self.pretty)
            .field("rebuilt", &self.rebuilt)
            .field("shared", &self.shared)
            .finish_non_exhaustive()
    }
}

/// The file was corrupt: it is kept aside at `aside` (a file, or a key of the shared
/// store), and the event is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Corrupt {
    pub aside: PathBuf,
}

/// The largest JSON state file read: agent's own are kilobytes; one past this is corrupt
/// (moved aside), never read into memory whole.
const MAX_BYTES: u64 = 64 * 1024 * 1024;

/// What [`JsonFile::lock`] holds: the file's lock, or the shared store's lease.
pub enum Held {
    File(Locked),
    Lease(lease::Lease),
}

impl<T: Serialize + DeserializeOwned + Default> JsonFile<T> {
    /// `NAME` in `state_dir`, written compact and [`Durability::Unsynced`] unless told.
    pub fn new(state_dir: &Path, name: &str) -> JsonFile<T> {
        JsonFile {
            path: state_dir.join(name),
            durability: Durability::Unsynced,
            pretty: false,
            rebuilt: "started afresh",
            shared: false,
            kept: None,
            _contents: PhantomData,
        }
    }

    /// Kept in the shared store when `[store]` names one: state that replicas and
    /// machines must agree on (health, parked logins, rotation, alerts…).
    #[must_use]
    pub fn shared(mut self) -> Self {
        self.shared = true;
        self
    }

    /// [`JsonFile::shared`], and kept on this machine as last read from the store
    /// ([`kept_copies`]), for `put_back` to return when the store forgets it: for what
    /// nothing else could rebuild. Only through [`JsonFile::load_without_fallback`] and
    /// [`JsonFile::update_without_fallback`].
    #[must_use]
    pub fn kept(mut self, put_back: PutBack) -> Self {
        self.shared = true;
        self.kept = Some(put_back);
        self
    }

    /// The shared store, if this document lives there.
    fn store(&self) -> Option<&'static Shared> {
        if self.shared { store::shared() } else { None }
    }

    fn name(&self) -> String {
        self.path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned()
    }

    /// Written indented, for a person reading it.
    #[must_use]
    pub fn pretty(mut self) -> Self {
        self.pretty = true;
        self
    }

    /// Written with `fsync`: what it holds cannot be rebuilt.
    #[must_use]
    pub fn synced(mut self) -> Self {
        self.durability = Durability::Synced;
        self
    }

    /// What the warning says happens after a corrupt file (default "started afresh").
    #[must_use]
    pub fn rebuilt_by(mut self, how: &'static str) -> Self {
        self.rebuilt = how;
        self
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The contents. Missing or unreadable (an I/O error, a refused directory, a link):
    /// empty. Corrupt: moved aside with a warning and an event, and the caller is told, to
    /// rebuild (or refuse the call that found it).
    pub fn read(&self) -> Result<T, Corrupt> {
        if self.shared
            && let Some(found) = store::answered(|shared| {
                Ok(match document::get(shared, &self.name())? {
                    None => Ok(T::default()),
                    Some(bytes) => self.parse_shared(shared, &bytes),
                })
            })
        {
            return found;
        }
        let mut bytes = Vec::new();
        // One byte past the cap tells a file too large to be agent's from one that fits.
        let read = state_file::open_read(&self.path)
            .and_then(|f| f.take(MAX_BYTES + 1).read_to_end(&mut bytes));
        match read {
            Ok(_) => {}
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(T::default()),
            Err(err) => {
                crate::term::debug(&format!("reading {}: {err}", self.path.display()));
                return Ok(T::default());
            }
        }
        let why = if bytes.len() as u64 > MAX_BYTES {
            format!("over {} MiB", MAX_BYTES >> 20)
        } else {
            match serde_json::from_slice(&bytes) {
                Ok(value) => return Ok(value),
                Err(err) => err.to_string(),
            }
        };
        // Another process may have moved it aside first: then nothing is ours to report.
        let Ok(aside) = state_file::quarantine(&self.path) else {
            return Ok(T::default());
        };
        crate::term::warn(&format!(
            "{} was unreadable ({why}); kept aside as {}, {}",
            self.path.display(),
            aside.display(),
            self.rebuilt
        ));
        let dir = self.path.parent().unwrap_or(Path::new(""));
        let name = self.path.file_name().unwrap_or_default().to_string_lossy();
        events::record(
            dir,
            events::Kind::CorruptState,
            &name,
            &aside.to_string_lossy(),
            &why,
        );
        Err(Corrupt { aside })
    }

    /// A document from the shared store; a corrupt one follows the file's rule, kept
    /// aside under a key of its own.
    fn parse_shared(&self, shared: &Shared, bytes: &[u8]) -> Result<T, Corrupt> {
        let why = match serde_json::from_slice(bytes) {
            Ok(value) => return Ok(value),
            Err(err) => err.to_string(),
        };
        let name = self.name();
        // Not moved: another reader kept these bytes first, or a writer replaced them.
        let Ok(Some(aside)) = document::keep_aside(shared, &name, bytes) else {
            return Ok(T::default());
        };
        crate::term::warn(&format!(
            "{name} in the shared store was unreadable ({why}); kept aside as {aside}, {}",
            self.rebuilt
        ));
        let dir = self.path.parent().unwrap_or(Path::new(""));
        events::record(dir, events::Kind::CorruptState, &name, &aside, &why);
        Err(Corrupt {
            aside: PathBuf::from(aside),
        })
    }

    /// [`JsonFile::read`], a corrupt file counting as empty.
    pub fn load(&self) -> T {
        self.read().unwrap_or_default()
    }

    /// [`JsonFile::load`] without the fallback: a document in the shared store is read
    /// from the store alone, and [`store::Down`] while it is away — never this machine's
    /// file in its place. For what only the store may answer once one is configured (who
    /// may call the relay). A document not in a store is read from its file.
    pub fn load_without_fallback(&self) -> Result<T, store::Down> {
        match self.store() {
            Some(shared) => self.load_from(shared),
            None => Ok(self.load()),
        }
    }

    /// [`JsonFile::update`] without the fallback, for the same documents: in the shared
    /// store under its lease, and an error (nothing changed anywhere) while it is away,
    /// never a change only this machine's file hears.
    pub fn update_without_fallback<R>(
        &self,
        change: impl FnOnce(&mut T) -> R,
    ) -> anyhow::Result<R> {
        let Some(shared) = self.store() else {
            return self.update(change);
        };
        let _lease = lease::take(shared, &self.name()).map_err(|why| match why {
            lease::NotTaken::Down(down) => anyhow::Error::new(down),
            lease::NotTaken::Busy(why) => anyhow::anyhow!("{why}"),
        })?;
        let mut value = self.load_from(shared)?;
        let result = change(&mut value);
        let bytes = self.bytes(&value)?;
        document::set(shared, &self.name(), &bytes)?;
        if self.kept.is_some() {
            keep_copy(self.state_dir(), &self.name(), &bytes);
        }
        Ok(result)
    }

    fn state_dir(&self) -> &Path {
        self.path.parent().unwrap_or(Path::new(""))
    }

    /// The document as the store holds it; corrupt counts as empty, as in
    /// [`JsonFile::load`]. One this machine keeps, found missing, is first put back if the
    /// store forgot it.
    fn load_from(&self, shared: &Shared) -> Result<T, store::Down> {
        let mut found = document::get(shared, &self.name())?;
        if found.is_none()
            && let Some(put_back) = self.kept
            && put_back(shared, self.state_dir())?
        {
            found = document::get(shared, &self.name())?;
        }
        Ok(match found {
            None => T::default(),
            Some(bytes) => match self.parse_shared(shared, &bytes) {
                Ok(value) => {
                    if self.kept.is_some() {
                        keep_copy(self.state_dir(), &self.name(), &bytes);
                    }
                    value
                }
                Err(_) => T::default(),
            },
        })
    }

    fn bytes(&self, value: &T) -> serde_json::Result<Vec<u8>> {
        if self.pretty {
            serde_json::to_vec_pretty(value)
        } else {
            serde_json::to_vec(value)
        }
    }

    /// The file's lock, for a change that spans more than [`JsonFile::update`] does. Only
    /// in a state directory [`state_file::check_dir`] accepts.
    /// A shared document's lock is the store's lease (this machine's file lock while the
    /// store is away).
    pub fn lock(&self) -> anyhow::Result<Held> {
        if let Some(shared) = self.store() {
            match lease::take(shared, &self.name()) {
                Ok(lease) => return Ok(Held::Lease(lease)),
                Err(lease::NotTaken::Busy(why)) => anyhow::bail!("{why}"),
                Err(lease::NotTaken::Down(down)) => shared.tell_fallback(&down),
            }
        }
        state_file::ensure_state_dir(self.path.parent().unwrap_or(Path::new("")))?;
        state_file::lock(&self.path).map(Held::File)
    }

    /// Replaces the file (or the shared document). Call it while holding
    /// [`JsonFile::lock`].
    pub fn save(&self, value: &T) -> anyhow::Result<()> {
        let json = self.bytes(value)?;
        if self.shared
            && let Some(()) = store::answered(|shared| document::set(shared, &self.name(), &json))
        {
            return Ok(());
        }
        state_file::write_atomic(&self.path, &json, self.durability)
    }

    /// Changes the file under its lock: re-read, change, replace atomically.
    pub fn update<R>(&self, change: impl FnOnce(&mut T) -> R) -> anyhow::Result<R> {
        let _lock = self.lock()?;
        let mut value = self.load();
        let result = change(&mut value);
        self.save(&value)?;
        Ok(result)
    }
}

/// `store_documents.json`: this machine's copies of the kept documents.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct KeptCopies {
    #[serde(default)]
    documents: BTreeMap<String, String>,
}

fn kept_copies_file(state_dir: &Path) -> JsonFile<KeptCopies> {
    JsonFile::new(state_dir, "store_documents.json").synced()
}

/// The documents this machine keeps to put back, by name.
pub fn kept_copies(state_dir: &Path) -> BTreeMap<String, String> {
    kept_copies_file(state_dir).load().documents
}

/// Keeps `bytes` as this machine's copy of the document `name`, unless it is the copy
/// kept already: a read of the store costs a comparison, a change one write.
fn keep_copy(state_dir: &Path, name: &str, bytes: &[u8]) {
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
    let kept = kept_copies_file(state_dir).update(|kept| {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileTypeExt as _;

    #[derive(Debug, Default, PartialEq, Serialize, serde::Deserialize)]
    struct Counter {
        n: u32,
    }

    #[test]
    fn a_corrupt_file_is_kept_aside_reported_and_started_afresh() {
        let dir = tempfile::tempdir().unwrap();
        let file: JsonFile<Counter> = JsonFile::new(dir.path(), "rotation.json");
        std::fs::write(file.path(), "{\"n\": 4").unwrap();

        let Err(Corrupt { aside }) = file.read() else {
            panic!("corrupt file read as good")
        };
        assert_eq!(std::fs::read_to_string(&aside).unwrap(), "{\"n\": 4");
        let events = std::fs::read_to_string(dir.path().join("events.jsonl")).unwrap();
        assert!(events.contains("\"event\":\"corrupt_state\""), "{events}");
        assert!(events.contains("\"from\":\"rotation.json\""), "{events}");

        assert_eq!(file.update(|c| c.n += 1).unwrap(), ());
        assert_eq!(file.load(), Counter { n: 1 });
    }

    #[test]
    fn a_fifo_in_a_state_files_place_is_not_waited_on_and_stays_a_fifo() {
        let dir = tempfile::tempdir().unwrap();
        let file: JsonFile<Counter> = JsonFile::new(dir.path(), "tasks.json");
        nix::unistd::mkfifo(file.path(), nix::sys::stat::Mode::S_IRWXU).unwrap();
        // No writer ever opens it: a read that waited would never return.
        assert_eq!(file.load(), Counter::default());
        assert!(
            std::fs::symlink_metadata(file.path())
                .unwrap()
                .file_type()
                .is_fifo()
        );
    }

    #[test]
    fn a_state_file_over_the_cap_is_kept_aside_unread() {
        let dir = tempfile::tempdir().unwrap();
        let file: JsonFile<Counter> = JsonFile::new(dir.path(), "tasks.json");
        let big = std::fs::File::create(file.path()).unwrap();
        big.set_len(MAX_BYTES + 1).unwrap();
        let Err(Corrupt { aside }) = file.read() else {
            panic!("a file over the cap was read")
        };
        assert_eq!(std::fs::metadata(aside).unwrap().len(), MAX_BYTES + 1);
        let events = std::fs::read_to_string(dir.path().join("events.jsonl")).unwrap();
        assert!(events.contains("over 64 MiB"), "{events}");
    }
}
