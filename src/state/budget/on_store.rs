//! The daily budget on the shared store: a reservation is one Lua script — the store's
//! epoch checked, the caps in force, the team's counts and a named client's counts read,
//! checked and counted in one atomic step on the server — so replicas can never let more
//! calls through than the cap between them. Always one call per reservation: a block held
//! by one replica would be refused to another. A reservation that names another epoch than
//! the store's is refused as [`Stale`] (the store forgot: see [`epoch`]), and one made
//! while the day's count is being rebuilt is told to wait.

use crate::config::limits::Limits;
use crate::state::budget::day::Day;
use crate::state::budget::epoch::{self, Stale};
use crate::state::budget::keys::{KEEP_SECONDS, client_key, day_key, limits_key};
use crate::state::budget::reservation::{ClientCaps, Refusal, Reservation};
use crate::state::store::{Down, Shared};

const RESERVE: &str = r"
local epoch = redis.call('MGET', KEYS[1], KEYS[2])
if epoch[1] ~= ARGV[1] then
  return {-2}
end
local since = epoch[2]
if since then
  local time = redis.call('TIME')
  local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  if now - tonumber(since) < tonumber(ARGV[5]) or #redis.call('SDIFF', KEYS[5], KEYS[6]) > 0 then
    return {-3}
  end
  redis.call('DEL', KEYS[2])
end
local set = redis.call('HMGET', KEYS[4], 'calls', 'tokens')
local seeded = 0
if set[1] or set[2] then
  seeded = 1
end
local capc = tonumber(set[1] or ARGV[2])
local capt = tonumber(set[2] or ARGV[3])
local day = redis.call('HMGET', KEYS[3], 'calls', 'tokens')
local c = tonumber(day[1] or '0')
local t = tonumber(day[2] or '0')
local named = #KEYS > 6
local mc, mt, cc, ct = 0, 0, 0, 0
if named then
  mc = tonumber(ARGV[6])
  mt = tonumber(ARGV[7])
  local own = redis.call('HMGET', KEYS[7], 'calls', 'tokens')
  cc = tonumber(own[1] or '0')
  ct = tonumber(own[2] or '0')
end
local answer
if (capc > 0 and c >= capc) or (capt > 0 and t >= capt) then
  answer = {0, c, t, capc, capt, seeded}
elseif named and ((mc > 0 and cc >= mc) or (mt > 0 and ct >= mt)) then
  answer = {-1, cc, ct, mc, mt, 0}
else
  if named then
    redis.call('HINCRBY', KEYS[7], 'calls', 1)
    redis.call('EXPIRE', KEYS[7], ARGV[4])
  end
  redis.call('HINCRBY', KEYS[3], 'calls', 1)
  redis.call('EXPIRE', KEYS[3], ARGV[4])
  answer = {1, c + 1, t, capc, capt, seeded}
end
return answer";

/// What the server said to a reservation.
#[derive(Debug)]
pub enum Reserved {
    /// Reserved or refused; and the caps set with `agent --budget set`, when the store
    /// holds some (this machine keeps a copy to put back if the store forgets them).
    Answered {
        answer: Result<Reservation, Refusal>,
        set: Option<Limits>,
    },
    /// The store's epoch is not the one named: rejoin first.
    Stale(Stale),
    /// The day's count is being rebuilt after the store forgot: ask again in a moment.
    Rebuilding,
}

/// Reserves one call on `day`, counted in `epoch`, or says why not.
pub fn reserve(
    shared: &Shared,
    epoch: u64,
    day: &str,
    configured: Limits,
    client: Option<&ClientCaps>,
) -> Result<Reserved, Down> {
    let script = redis::Script::new(RESERVE);
    let mut invocation = script.key(epoch::epoch_key(shared));
    invocation
        .key(epoch::rebuilding_key(shared))
        .key(day_key(shared, day))
        .key(limits_key(shared))
        .key(epoch::expected_key(shared))
        .key(epoch::joined_key(shared));
    invocation
        .arg(epoch)
        .arg(configured.calls)
        .arg(configured.tokens)
        .arg(KEEP_SECONDS)
        .arg(epoch::millis(epoch::REBUILD_AT_LEAST));
    if let Some(client) = client {
        invocation
            .key(client_key(shared, day, &client.name))
            .arg(client.limits.calls)
            .arg(client.limits.tokens);
    }
    let answer: Vec<i64> = shared.run(|c| invocation.invoke(c))?;
    let count = |i: usize| answer.get(i).map_or(0, |&n| u64::try_from(n).unwrap_or(0));
    let used = Day {
        calls: count(1),
        tokens: count(2),
    };
    let limits = Limits {
        calls: count(3),
        tokens: count(4),
    };
    let mut set = (count(5) == 1).then_some(limits);
    let answered = match answer.first() {
        Some(-2) => return Ok(Reserved::Stale(Stale)),
        Some(-3) => return Ok(Reserved::Rebuilding),
        Some(1) => Ok(Reservation {
            day: day.to_string(),
            client: client.map(|c| c.name.clone()),
            epoch,
            // Given by the caller, which writes it down.
            id: String::new(),
        }),
        Some(-1) => {
            // The caps in this answer are the client's own.
            set = None;
            Err(Refusal::ClientExhausted {
                name: client.map(|c| c.name.clone()).unwrap_or_default(),
                used,
                limits,
            })
        }
        _ => Err(Refusal::Exhausted { used, limits }),
    };
    Ok(Reserved::Answered {
        answer: answered,
        set,
    })
}

/// What a finished call (or a batch of them) owes the store: its tokens. Never the call
/// itself: its reservation counted it, and if the store forgot that, the rebuild counted
/// it again from this home's disk (its ledger line, or its reservation still open).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owed {
    pub day: String,
    pub client: Option<String>,
    /// The epoch these counts belong in.
    pub epoch: u64,
    pub tokens: u64,
}

/// `MGET` for the epoch: one of the wrong type reads as another epoch (a rejoin rewrites
/// it) instead of failing the script.
const RECORD: &str = r"
if redis.call('MGET', KEYS[1])[1] ~= ARGV[1] then
  return 0
end
for i = 2, #KEYS do
  redis.call('HINCRBY', KEYS[i], 'tokens', ARGV[2])
  redis.call('EXPIRE', KEYS[i], ARGV[3])
end
return 1";

/// Adds what is owed to its day (and its client's), if the store is still in its epoch.
pub fn record(shared: &Shared, owed: &Owed) -> Result<Result<(), Stale>, Down> {
    let script = redis::Script::new(RECORD);
    let mut invocation = script.key(epoch::epoch_key(shared));
    invocation.key(day_key(shared, &owed.day));
    if let Some(name) = &owed.client {
        invocation.key(client_key(shared, &owed.day, name));
    }
    invocation
        .arg(owed.epoch)
        .arg(owed.tokens)
        .arg(KEEP_SECONDS);
    let done: i64 = shared.run(|c| invocation.invoke(c))?;
    Ok(if done == 1 { Ok(()) } else { Err(Stale) })
}

/// Gives back calls reserved on `day` that were never sent.
pub fn release(shared: &Shared, day: &str, calls: u64) -> Result<(), Down> {
    let n = i64::try_from(calls).unwrap_or(i64::MAX);
    let key = day_key(shared, day);
    shared.run(|c| {
        redis::cmd("HINCRBY")
            .arg(&key)
            .arg("calls")
            .arg(-n)
            .query::<()>(c)
    })
}

/// `day`'s counts, the caps set by `agent --budget set` if any, and the store's epoch (0:
/// none, the store has forgotten or never counted).
pub fn status(shared: &Shared, day: &str) -> Result<(Day, Option<Limits>, u64), Down> {
    type Pair = (Option<u64>, Option<u64>);
    let ((calls, tokens), (cap_calls, cap_tokens), epoch): (Pair, Pair, Vec<Option<String>>) =
        shared.run(|c| {
            redis::pipe()
                .cmd("HMGET")
                .arg(day_key(shared, day))
                .arg("calls")
                .arg("tokens")
                .cmd("HMGET")
                .arg(limits_key(shared))
                .arg("calls")
                .arg("tokens")
                // An epoch of the wrong type reads as none, for a rejoin to rewrite.
                .cmd("MGET")
                .arg(epoch::epoch_key(shared))
                .query(c)
        })?;
    let set = match (cap_calls, cap_tokens) {
        (None, None) => None,
        (calls, tokens) => Some(Limits {
            calls: calls.unwrap_or(0),
            tokens: tokens.unwrap_or(0),
        }),
    };
    Ok((
        Day {
            calls: calls.unwrap_or(0),
            tokens: tokens.unwrap_or(0),
        },
        set,
        epoch
            .into_iter()
            .next()
            .flatten()
            .and_then(|e| e.parse().ok())
            .unwrap_or(0),
    ))
}

/// `agent --budget set` on the shared store: every replica's next reservation uses them.
pub fn set_limits(shared: &Shared, limits: Limits) -> Result<(), Down> {
    let key = limits_key(shared);
    shared.run(|c| {
        redis::cmd("HSET")
            .arg(&key)
            .arg("calls")
            .arg(limits.calls)
            .arg("tokens")
            .arg(limits.tokens)
            .query::<()>(c)
    })
}
