//! How many connections the relay holds, and which one goes when there are too many.
//!
//! A connection costs a descriptor while it is open and a second one (upstream) while a
//! call is in flight; past the open-file limit `accept` fails and every client waits. So:
//!
//! - The soft `RLIMIT_NOFILE` is raised to the hard limit at start, and the total cap is
//!   lowered to what the limit can back (two descriptors a connection, and a reserve for
//!   the state files, the store and `claude -p`'s pipes).
//! - A connection is *busy* while a request is in hand (from its parsed headers to the last
//!   byte of its answer) and *idle* otherwise: just opened, between two requests, or still
//!   sending its headers. An idle one is closed after `relay.idle_timeout_seconds`.
//! - At a cap — in total, or from one remote address — a new connection takes the place of
//!   the longest-idle one (of the same address at its cap; else of the address holding the
//!   most); only when every one is busy is it refused. Idle connections cost the relay
//!   nothing to drop and a client nothing to reopen, so any number of them cannot keep a
//!   real call out; and no call in flight is ever cut to make room.
//!
//! On loopback every client — an ssh tunnel's whole team too — is one address, 127.0.0.1:
//! the per-address cap then bounds the calls in flight on this host, and it is large.

use std::collections::HashMap;
use std::future::Future;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

use crate::config::relay::RelayConfig;

/// Descriptors kept for everything that is not a client connection or its upstream.
const RESERVE: u64 = 64;
/// Each connection, and its call's upstream connection.
const DESCRIPTORS_PER_CONNECTION: u64 = 2;
/// The refusals and evictions of one such period are said in one line.
const SAY_EVERY: Duration = Duration::from_secs(60);

/// The soft open-file limit, raised first to the hard one where the system allows it (an
/// unlimited hard limit is not a value the kernel takes: the largest it does is tried).
pub fn raise_open_file_limit() -> u64 {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE) else {
        return 1024;
    };
    // Linux's default `fs.nr_open`, then macOS's `OPEN_MAX`.
    for wanted in [hard, 1 << 20, 10_240] {
        if wanted <= soft {
            break;
        }
        if wanted <= hard && setrlimit(Resource::RLIMIT_NOFILE, wanted, hard).is_ok() {
            return wanted;
        }
    }
    soft
}

/// The open-file limit a service unit asks for: enough for `max_connections` and the
/// reserve, and never less than macOS's `OPEN_MAX`, which every system grants.
pub fn open_files_for(max_connections: usize) -> u64 {
    let connections = u64::try_from(max_connections).unwrap_or(u64::MAX);
    connections
        .saturating_mul(DESCRIPTORS_PER_CONNECTION)
        .saturating_add(RESERVE)
        .max(10_240)
}

/// The caps in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub total: usize,
    pub per_address: usize,
    pub idle: Duration,
}

impl Limits {
    /// The configured caps, the total lowered to what `open_files` descriptors back.
    pub fn fitted(config: &RelayConfig, open_files: u64) -> Limits {
        let backed = open_files.saturating_sub(RESERVE) / DESCRIPTORS_PER_CONNECTION;
        let total = config
            .max_connections
            .min(usize::try_from(backed).unwrap_or(usize::MAX))
            .max(1);
        Limits {
            total,
            per_address: config.max_connections_per_address.min(total),
            idle: config.idle_timeout,
        }
    }
}

/// Every connection open, by id.
pub struct Connections {
    limits: Limits,
    table: Mutex<Table>,
}

#[derive(Default)]
struct Table {
    next: u64,
    open: HashMap<u64, Entry>,
    /// Connections counted against the caps: open ones not already told to close.
    counted: usize,
    by_address: HashMap<IpAddr, usize>,
    /// What has not been said yet, and when the last line was.
    evicted: u64,
    refused: u64,
    said: Option<Instant>,
}

struct Entry {
    peer: IpAddr,
    busy: u32,
    idle_since: Instant,
    /// Told to close (idle too long, or making room): no request starts on it any more.
    closing: bool,
    close: Arc<Notify>,
}

/// Why a connection was not taken.
#[derive(Debug)]
pub struct Refused;

impl Connections {
    pub fn new(limits: Limits) -> Arc<Connections> {
        Arc::new(Connections {
            limits,
            table: Mutex::new(Table::default()),
        })
    }

    fn table(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A connection from `peer`, taken in the place of an idle one when a cap is reached;
    /// refused when every connection in its way is busy. A line about it, at most one a
    /// minute, goes to stderr.
    pub fn admit(self: &Arc<Self>, peer: IpAddr) -> Result<Slot, Refused> {
        let peer = address_of(peer);
        let (admitted, line) = {
            let mut table = self.table();
            let full =
                if table.by_address.get(&peer).copied().unwrap_or(0) >= self.limits.per_address {
                    Some(Some(peer))
                } else if table.counted >= self.limits.total {
                    Some(None)
                } else {
                    None
                };
            let admitted = match full {
                None => true,
                Some(among) => match table.longest_idle(among) {
                    Some(id) => {
                        table.close(id);
                        table.evicted += 1;
                        true
                    }
                    None => {
                        table.refused += 1;
                        false
                    }
                },
            };
            let line = full.and_then(|_| table.line_due(self.limits));
            let admitted = admitted.then(|| table.insert(peer));
            (admitted, line)
        };
        if let Some(line) = line {
            crate::term::warn(&line);
        }
        let (id, close) = admitted.ok_or(Refused)?;
        Ok(Slot(Arc::new(Held {
            connections: Arc::clone(self),
            id,
            close,
        })))
    }
}

/// The address a cap counts a peer under: IPv4 as itself (an IPv4-mapped IPv6 peer too),
/// IPv6 by its /64 — one host is handed a whole /64, and could pick any address in it.
fn address_of(peer: IpAddr) -> IpAddr {
    match peer.to_canonical() {
        IpAddr::V6(v6) => {
            let [a, b, c, d, ..] = v6.segments();
            IpAddr::from([a, b, c, d, 0, 0, 0, 0])
        }
        v4 @ IpAddr::V4(_) => v4,
    }
}

impl Table {
    fn insert(&mut self, peer: IpAddr) -> (u64, Arc<Notify>) {
        let id = self.next;
        self.next += 1;
        let close = Arc::new(Notify::new());
        self.open.insert(
            id,
            Entry {
                peer,
                busy: 0,
                idle_since: Instant::now(),
                closing: false,
                close: Arc::clone(&close),
            },
        );
        self.counted += 1;
        *self.by_address.entry(peer).or_default() += 1;
        (id, close)
    }

    /// The idle connection to close for room: of `peer` when it is the one at its cap,
    /// else of the address holding the most connections; the longest idle of those.
    fn longest_idle(&self, peer: Option<IpAddr>) -> Option<u64> {
        let held = |address: &IpAddr| self.by_address.get(address).copied().unwrap_or(0);
        self.open
            .iter()
            .filter(|(_, e)| !e.closing && e.busy == 0 && peer.is_none_or(|p| e.peer == p))
            .min_by_key(|(_, e)| (std::cmp::Reverse(held(&e.peer)), e.idle_since))
            .map(|(id, _)| *id)
    }

    /// Tells a connection to close; it stops counting against the caps at once.
    fn close(&mut self, id: u64) {
        let Some(entry) = self.open.get_mut(&id) else {
            return;
        };
        if entry.closing {
            return;
        }
        entry.closing = true;
        entry.close.notify_one();
        let peer = entry.peer;
        self.uncount(peer);
    }

    fn uncount(&mut self, peer: IpAddr) {
        self.counted = self.counted.saturating_sub(1);
        if let Some(n) = self.by_address.get_mut(&peer) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.by_address.remove(&peer);
            }
        }
    }

    /// The line saying what the caps did since the last one, when one is due.
    fn line_due(&mut self, limits: Limits) -> Option<String> {
        if self.said.is_some_and(|at| at.elapsed() < SAY_EVERY) {
            return None;
        }
        self.said = Some(Instant::now());
        let line = format!(
            "relay: at its connection cap ({} in all, {} from one address; relay.max_connections, relay.max_connections_per_address): closed {} idle connection(s) to make room and refused {} while every one was busy, since the last such line",
            limits.total, limits.per_address, self.evicted, self.refused
        );
        self.evicted = 0;
        self.refused = 0;
        Some(line)
    }
}

/// One admitted connection, shared by its task and its requests; dropping the last holder
/// lets it go.
#[derive(Clone)]
pub struct Slot(Arc<Held>);

struct Held {
    connections: Arc<Connections>,
    id: u64,
    close: Arc<Notify>,
}

impl Drop for Held {
    fn drop(&mut self) {
        let mut table = self.connections.table();
        if let Some(entry) = table.open.remove(&self.id)
            && !entry.closing
        {
            table.uncount(entry.peer);
        }
    }
}

/// A request in hand; dropped with the last byte of its answer.
pub struct Busy(Slot);

impl Drop for Busy {
    fn drop(&mut self) {
        let held = &self.0.0;
        let mut table = held.connections.table();
        if let Some(entry) = table.open.get_mut(&held.id) {
            entry.busy = entry.busy.saturating_sub(1);
            if entry.busy == 0 {
                entry.idle_since = Instant::now();
            }
        }
    }
}

/// An answer's body that keeps its connection busy until it is sent or dropped; its size
/// passes through, so a known length is still sent as `content-length` in one write.
pub struct BusyBody<B> {
    body: B,
    _busy: Busy,
}

impl<B> BusyBody<B> {
    pub fn new(body: B, busy: Busy) -> BusyBody<B> {
        BusyBody { body, _busy: busy }
    }
}

impl<B: http_body::Body + Unpin> http_body::Body for BusyBody<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        std::pin::Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

impl Slot {
    /// A request starts on this connection, unless it was told to close.
    pub fn begin(&self) -> Option<Busy> {
        let held = &self.0;
        let mut table = held.connections.table();
        let entry = table.open.get_mut(&held.id)?;
        if entry.closing {
            return None;
        }
        entry.busy += 1;
        Some(Busy(self.clone()))
    }

    /// How long until this connection has been idle for the idle timeout; `None` while
    /// busy. At zero, it is told to close.
    fn idle_left(&self) -> Option<Duration> {
        let held = &self.0;
        let idle = held.connections.limits.idle;
        let mut table = held.connections.table();
        let entry = table.open.get(&held.id)?;
        if entry.busy > 0 {
            return None;
        }
        let left = idle.saturating_sub(entry.idle_since.elapsed());
        if left.is_zero() {
            table.close(held.id);
        }
        Some(left)
    }

    /// Serves `connection` until it ends, it is told to close (room for another), or it
    /// has been idle for the idle timeout. Ending it drops the socket: it has no request
    /// in hand.
    pub async fn serve<F: Future>(self, connection: F) {
        let idle = self.0.connections.limits.idle;
        tokio::pin!(connection);
        loop {
            let wait = match self.idle_left() {
                Some(left) if left.is_zero() => return,
                Some(left) => left,
                // Busy: look again after a whole timeout; the answer's end resets the clock.
                None => idle,
            };
            tokio::select! {
                _ = &mut connection => return,
                () = self.0.close.notified() => return,
                () = tokio::time::sleep(wait) => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(total: usize, per_address: usize) -> Limits {
        Limits {
            total,
            per_address,
            idle: Duration::from_secs(60),
        }
    }

    fn address(last: u8) -> IpAddr {
        IpAddr::from([127, 0, 0, last])
    }

    #[test]
    fn the_total_is_lowered_to_what_the_open_file_limit_backs() {
        let config = RelayConfig::default();
        let fitted = Limits::fitted(&config, 1024);
        assert_eq!(fitted.total, 480);
        assert_eq!(fitted.per_address, 256);
        assert_eq!(
            Limits::fitted(&config, 1 << 20).total,
            config.max_connections
        );
        let tiny = Limits::fitted(&config, 10);
        assert_eq!((tiny.total, tiny.per_address), (1, 1));
        // What a service unit asks for backs the configured total.
        let asked = open_files_for(config.max_connections);
        assert_eq!(Limits::fitted(&config, asked).total, config.max_connections);
        assert_eq!(
            Limits::fitted(&config, open_files_for(100_000)).total,
            config.max_connections
        );
        assert_eq!(open_files_for(100_000), 200_064);
    }

    #[test]
    fn at_a_cap_the_longest_idle_connection_makes_room_and_a_busy_one_never_does() {
        let connections = Connections::new(limits(3, 2));
        let first = connections.admit(address(1)).unwrap();
        let second = connections.admit(address(1)).unwrap();
        let _busy = second.begin().unwrap();
        // The address at its cap: its idle connection goes, not the busy one.
        let third = connections.admit(address(1)).unwrap();
        assert!(
            first.begin().is_none(),
            "the longest idle was told to close"
        );
        let _also_busy = third.begin().unwrap();
        // Both of its connections busy: the address gets no more, another one does.
        assert!(connections.admit(address(1)).is_err());
        let other = connections.admit(address(2)).unwrap();
        let _other_busy = other.begin().unwrap();
        // In all at the cap, every one busy: refused.
        assert!(connections.admit(address(3)).is_err());
    }

    #[test]
    fn at_the_total_the_address_holding_the_most_gives_up_its_idle_one() {
        let connections = Connections::new(limits(3, 3));
        let mine = connections.admit(address(1)).unwrap();
        let flood: Vec<Slot> = (0..2)
            .map(|_| connections.admit(address(2)).unwrap())
            .collect();
        let _newcomer = connections.admit(address(3)).unwrap();
        assert!(
            mine.begin().is_some(),
            "the older idle of a lone address stays"
        );
        assert_eq!(
            flood.iter().filter(|slot| slot.begin().is_none()).count(),
            1
        );
    }

    #[test]
    fn an_ipv6_host_is_one_address_whichever_of_its_64_it_uses() {
        let connections = Connections::new(limits(10, 1));
        let first: IpAddr = "2001:db8:1:2::1".parse().unwrap();
        let second: IpAddr = "2001:db8:1:2:ffff::9".parse().unwrap();
        let _busy = connections.admit(first).unwrap().begin().unwrap();
        assert!(connections.admit(second).is_err());
        assert!(
            connections
                .admit("2001:db8:1:3::1".parse().unwrap())
                .is_ok()
        );
        let mapped: IpAddr = "::ffff:127.0.0.1".parse().unwrap();
        let _local = connections.admit(address(1)).unwrap().begin().unwrap();
        assert!(connections.admit(mapped).is_err(), "the same IPv4 peer");
    }

    #[test]
    fn a_connection_that_ends_frees_its_place() {
        let connections = Connections::new(limits(1, 1));
        let slot = connections.admit(address(1)).unwrap();
        let busy = slot.begin().unwrap();
        assert!(connections.admit(address(1)).is_err());
        drop(busy);
        drop(slot);
        assert!(connections.admit(address(1)).is_ok());
    }
}
