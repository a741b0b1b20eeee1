//! The connection to the Redis server: a few connections kept for reuse, timeouts sized so a
//! stall shorter than one command's timeout is waited out, and the outage rule — after a
//! failure that took a timeout the server is not asked again for a moment, so a store that
//! is away costs each call nothing but a check, and it is found again on its own (no
//! restart) once it answers. A kept connection the server dropped (it restarted) is not an
//! outage: the command is sent once more on a new connection.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use redis::{Client, Connection, RedisResult};

use crate::config::store::{OnStoreDown, RedisStore};

/// How long one command may take: a server that stops answering is an outage.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(2);
/// How long a connection attempt may take (its handshake is a command the server answers):
/// as long as a command, so a server that stalls for less than that (a fork to save, a slow
/// script, a pause) is waited out by a new connection as by a kept one.
const CONNECT_TIMEOUT: Duration = COMMAND_TIMEOUT;
/// After a failure that took a timeout, the server is left alone this long before it is
/// asked again. A refused connection costs nothing to try again: it starts no such pause.
const RETRY_AFTER: Duration = Duration::from_millis(250);
/// Idle connections kept for reuse (the relay asks from many threads at once).
const KEPT: usize = 16;

/// The store could not be reached; the reason is redacted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Down(pub String);

impl std::fmt::Display for Down {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the shared store is unreachable ({})", self.0)
    }
}

impl std::error::Error for Down {}

/// Who is asking: only the relay may refuse calls while the store is away, and only relay
/// replicas are waited for when a count is rebuilt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Relay,
    /// Launches, reports, the watchdog: always fall back to this machine's files.
    Local,
}

pub struct Shared {
    client: Client,
    /// Where the server is, without any password: for messages.
    pub place: String,
    pub prefix: String,
    pub on_down: OnStoreDown,
    idle: Mutex<Vec<Connection>>,
    outage: Mutex<Outage>,
    /// Who is asking: set once the store is installed for this process.
    pub role: Role,
}

#[derive(Default)]
struct Outage {
    /// When the last failure was seen; `None` while the server answers.
    since: Option<Instant>,
    /// Whether that failure took a timeout: only then is the server left alone a moment.
    slow: bool,
    /// Whether this outage was already told to the user.
    told: bool,
}

impl Shared {
    pub fn new(store: &RedisStore, on_down: OnStoreDown) -> anyhow::Result<Shared> {
        let place = crate::redact::strip_url_credentials(&store.url).into_owned();
        let client = Client::open(store.url.as_str()).map_err(|err| {
            anyhow::anyhow!(
                "store.url {place}: {}",
                crate::redact::redact(&err.to_string())
            )
        })?;
        Ok(Shared {
            client,
            place,
            prefix: store.prefix.clone(),
            on_down,
            idle: Mutex::new(Vec::new()),
            outage: Mutex::new(Outage::default()),
            role: Role::Local,
        })
    }

    /// `PREFIX:NAME`: every key agent writes carries the team's prefix.
    pub fn key(&self, name: &str) -> String {
        format!("{}:{name}", self.prefix)
    }

    /// Whether a caller that cannot reach the store goes on with this machine's files.
    pub fn falls_back(&self) -> bool {
        self.on_down == OnStoreDown::Local
    }

    /// Runs `op` on a connection. A kept connection that turns out dropped (the server
    /// restarted since it was last used) is replaced and `op` sent once more: that is a
    /// reconnection, not an outage. Any other failure drops the kept connections and starts
    /// an outage; after a timeout, for [`RETRY_AFTER`] every call is answered [`Down`]
    /// without asking the server.
    pub fn run<R>(&self, mut op: impl FnMut(&mut Connection) -> RedisResult<R>) -> Result<R, Down> {
        {
            let outage = self.lock_outage();
            if let Some(since) = outage.since
                && outage.slow
                && since.elapsed() < RETRY_AFTER
            {
                return Err(Down("it did not answer a moment ago".into()));
            }
        }
        let (mut connection, kept) = match self.take() {
            Ok(taken) => taken,
            Err(err) => return Err(self.failed(&err)),
        };
        let mut answer = op(&mut connection);
        if kept && matches!(&answer, Err(err) if lost(err) && !err.is_timeout()) {
            // Every kept connection is as old as this one.
            self.forget_kept();
            connection = match self.connect() {
                Ok(connection) => connection,
                Err(err) => return Err(self.failed(&err)),
            };
            answer = op(&mut connection);
        }
        match answer {
            Ok(value) => {
                self.answered();
                self.keep(connection);
                Ok(value)
            }
            // The server answered, with an error of its own (a wrong type, a script's):
            // the connection is good and the server is up, so no outage starts.
            Err(err) if !lost(&err) => {
                self.keep(connection);
                Err(Down(crate::redact::redact(&err.to_string())))
            }
            Err(err) => Err(self.failed(&err)),
        }
    }

    /// Whether the last thing asked of the server found it away (rather than answered with
    /// an error of its own): what was not delivered is worth sending again.
    pub fn away(&self) -> bool {
        self.lock_outage().since.is_some()
    }

    /// Whether the server answers, and its version (for `--doctor`).
    pub fn ping(&self) -> Result<String, Down> {
        let info: String = self.run(|c| redis::cmd("INFO").arg("server").query(c))?;
        Ok(info
            .lines()
            .find_map(|line| line.strip_prefix("redis_version:"))
            .unwrap_or("unknown")
            .trim()
            .to_string())
    }

    /// Says once per outage that this process goes on with its own files.
    pub fn tell_fallback(&self, down: &Down) {
        let mut outage = self.lock_outage();
        if !outage.told {
            outage.told = true;
            crate::term::warn(&format!(
                "{down} at {}; using this machine's state files until it answers",
                self.place
            ));
        }
    }

    /// A kept connection (`true`), else a new one.
    fn take(&self) -> RedisResult<(Connection, bool)> {
        let kept = self
            .idle
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .pop();
        match kept {
            Some(connection) => Ok((connection, true)),
            None => Ok((self.connect()?, false)),
        }
    }

    fn connect(&self) -> RedisResult<Connection> {
        let connection = self.client.get_connection_with_timeout(CONNECT_TIMEOUT)?;
        connection.set_read_timeout(Some(COMMAND_TIMEOUT))?;
        connection.set_write_timeout(Some(COMMAND_TIMEOUT))?;
        Ok(connection)
    }

    fn forget_kept(&self) {
        self.idle
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clear();
    }

    fn keep(&self, connection: Connection) {
        let mut idle = self
            .idle
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if idle.len() < KEPT {
            idle.push(connection);
        }
    }

    fn failed(&self, err: &redis::RedisError) -> Down {
        // Every kept connection is suspect after a failure.
        self.forget_kept();
        let mut outage = self.lock_outage();
        outage.since = Some(Instant::now());
        outage.slow = err.is_timeout();
        Down(crate::redact::redact(&err.to_string()))
    }

    fn answered(&self) {
        let mut outage = self.lock_outage();
        if outage.since.take().is_some() && outage.told {
            outage.told = false;
            crate::term::notice(&format!("the shared store at {} answers again", self.place));
        }
    }

    fn lock_outage(&self) -> std::sync::MutexGuard<'_, Outage> {
        self.outage
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Whether `err` says the connection or the server is gone, rather than a command's own
/// error.
fn lost(err: &redis::RedisError) -> bool {
    err.is_io_error()
        || err.is_connection_dropped()
        || err.is_timeout()
        || err.is_connection_refusal()
        || err.is_unrecoverable_error()
}
