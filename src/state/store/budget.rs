//! The daily budget on the shared store: a reservation is one Lua script — the caps in
//! force, the team's counts and a named client's counts read, checked and counted in one
//! atomic step on the server — so replicas can never let more calls through than the cap
//! between them. Always one call per reservation: a block held by one replica would be
//! refused to another.

use crate::state::budget::{ClientCaps, Day, Limits, Refusal, Reservation};
use crate::state::ledger::Tokens;
use crate::state::store::{Down, Shared};

/// Counts are kept as long as `budget.json` keeps its days.
const KEEP_SECONDS: u64 = 40 * 24 * 3600;

const RESERVE: &str = r"
local capc = tonumber(redis.call('HGET', KEYS[2], 'calls') or ARGV[1])
local capt = tonumber(redis.call('HGET', KEYS[2], 'tokens') or ARGV[2])
local c = tonumber(redis.call('HGET', KEYS[1], 'calls') or '0')
local t = tonumber(redis.call('HGET', KEYS[1], 'tokens') or '0')
if (capc > 0 and c >= capc) or (capt > 0 and t >= capt) then
  return {0, c, t, capc, capt}
end
if #KEYS > 2 then
  local mc = tonumber(ARGV[4])
  local mt = tonumber(ARGV[5])
  local cc = tonumber(redis.call('HGET', KEYS[3], 'calls') or '0')
  local ct = tonumber(redis.call('HGET', KEYS[3], 'tokens') or '0')
  if (mc > 0 and cc >= mc) or (mt > 0 and ct >= mt) then
    return {-1, cc, ct, mc, mt}
  end
  redis.call('HINCRBY', KEYS[3], 'calls', 1)
  redis.call('EXPIRE', KEYS[3], ARGV[3])
end
redis.call('HINCRBY', KEYS[1], 'calls', 1)
redis.call('EXPIRE', KEYS[1], ARGV[3])
return {1, c + 1, t, capc, capt}";

fn day_key(shared: &Shared, day: &str) -> String {
    shared.key(&format!("budget:{day}"))
}

fn client_key(shared: &Shared, day: &str, name: &str) -> String {
    shared.key(&format!("budget:{day}:client:{name}"))
}

fn limits_key(shared: &Shared) -> String {
    shared.key("budget:limits")
}

/// Reserves one call on `day`, or says why not.
pub fn reserve(
    shared: &Shared,
    day: &str,
    configured: Limits,
    client: Option<&ClientCaps>,
) -> Result<Result<Reservation, Refusal>, Down> {
    let script = redis::Script::new(RESERVE);
    let mut invocation = script.key(day_key(shared, day));
    invocation.key(limits_key(shared));
    invocation
        .arg(configured.calls)
        .arg(configured.tokens)
        .arg(KEEP_SECONDS);
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
    Ok(match answer.first() {
        Some(1) => Ok(Reservation {
            day: day.to_string(),
            client: client.map(|c| c.name.clone()),
        }),
        Some(-1) => Err(Refusal::ClientExhausted {
            name: client.map(|c| c.name.clone()).unwrap_or_default(),
            used,
            limits,
        }),
        _ => Err(Refusal::Exhausted { used, limits }),
    })
}

/// Adds a finished call's tokens to its day (and its client's).
pub fn record(shared: &Shared, reservation: &Reservation, tokens: &Tokens) -> Result<(), Down> {
    let n = i64::try_from(tokens.total()).unwrap_or(i64::MAX);
    let mut pipe = redis::pipe();
    let day = day_key(shared, &reservation.day);
    pipe.cmd("HINCRBY").arg(&day).arg("tokens").arg(n).ignore();
    pipe.cmd("EXPIRE").arg(&day).arg(KEEP_SECONDS).ignore();
    if let Some(name) = &reservation.client {
        let client = client_key(shared, &reservation.day, name);
        pipe.cmd("HINCRBY")
            .arg(&client)
            .arg("tokens")
            .arg(n)
            .ignore();
        pipe.cmd("EXPIRE").arg(&client).arg(KEEP_SECONDS).ignore();
    }
    shared.run(|c| pipe.query::<()>(c))
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

/// `day`'s counts, and the caps set by `agent --budget set` if any.
pub fn status(shared: &Shared, day: &str) -> Result<(Day, Option<Limits>), Down> {
    let (calls, tokens, cap_calls, cap_tokens): (
        Option<u64>,
        Option<u64>,
        Option<u64>,
        Option<u64>,
    ) = shared.run(|c| {
        redis::pipe()
            .cmd("HMGET")
            .arg(day_key(shared, day))
            .arg("calls")
            .arg("tokens")
            .cmd("HMGET")
            .arg(limits_key(shared))
            .arg("calls")
            .arg("tokens")
            .query::<((Option<u64>, Option<u64>), (Option<u64>, Option<u64>))>(c)
            .map(|((calls, tokens), (cap_calls, cap_tokens))| {
                (calls, tokens, cap_calls, cap_tokens)
            })
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
