//! The shared store's lock: a lease on `KEY:lock` (`SET NX PX` with a random holder id,
//! given back only by its holder) — the single-server lock Redis documents, standing where
//! a file lock stands for the state directory's files. The lease outlives a crashed holder
//! by at most [`LEASE`]; waits are bounded like the file lock's.

use std::time::{Duration, Instant};

use crate::state::store::{Down, Shared};

/// Longer than any read-change-write of a document takes; what a crashed holder costs.
const LEASE: Duration = Duration::from_secs(5);
/// How long a caller waits for a lease before giving up (as for the file lock).
const WAIT: Duration = Duration::from_secs(2);

const RELEASE: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0";

/// A held lease; given back on drop.
pub struct Lease {
    shared: &'static Shared,
    key: String,
    holder: String,
}

/// Why no lease was taken.
#[derive(Debug)]
pub enum NotTaken {
    Down(Down),
    /// Another holder kept it for the whole wait.
    Busy(String),
}

/// Takes the lease on `name`'s document, waiting at most [`WAIT`].
pub fn take(shared: &'static Shared, name: &str) -> Result<Lease, NotTaken> {
    let key = shared.key(&format!("{name}:lock"));
    let holder = format!("{:016x}{:016x}", fastrand::u64(..), fastrand::u64(..));
    let started = Instant::now();
    let lease_ms = u64::try_from(LEASE.as_millis()).unwrap_or(u64::MAX);
    loop {
        let taken: Option<String> = shared
            .run(|c| {
                redis::cmd("SET")
                    .arg(&key)
                    .arg(&holder)
                    .arg("NX")
                    .arg("PX")
                    .arg(lease_ms)
                    .query(c)
            })
            .map_err(NotTaken::Down)?;
        if taken.is_some() {
            return Ok(Lease {
                shared,
                key,
                holder,
            });
        }
        if started.elapsed() >= WAIT {
            return Err(NotTaken::Busy(format!(
                "{key} on {} is held by another process",
                shared.place
            )));
        }
        // Short and jittered: holders keep a lease for a millisecond or two.
        std::thread::sleep(Duration::from_micros(500 + fastrand::u64(..1500)));
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        let script = redis::Script::new(RELEASE);
        let _ = self
            .shared
            .run(|c| script.key(&self.key).arg(&self.holder).invoke::<i64>(c));
    }
}
