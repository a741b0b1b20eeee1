//! Retries for the calls agent makes for itself — credential checks, alert deliveries,
//! usage fetches (seed 001, DESIGN.md §5). Transient failures are retried at most twice,
//! with jittered waits of 3–4.5 s then 6–7.5 s; each attempt's timeout is the smaller of
//! its own and what is left of the deadline, and a retry is skipped when the deadline left
//! is shorter than the wait plus 2 s. Probes do not use this: a 429 or 529 is a probe's
//! answer, never retried.

use std::time::{Duration, Instant};

/// Statuses worth another attempt. 400, 401, 403 and 404 never are.
pub fn is_transient_status(status: u16) -> bool {
    matches!(status, 408 | 409 | 425 | 429 | 500 | 502 | 503 | 504)
}

/// What one attempt came to.
#[derive(Debug, PartialEq, Eq)]
pub enum Attempt<T> {
    /// Done, well or badly: no retry (a success, or a 400/401/403/404).
    Final(T),
    /// A transient failure (a transient status or a network error): may be retried.
    Transient(T),
}

/// Time, for the retry loop: real in agent, scripted in tests.
pub trait Clock {
    fn now(&self) -> Instant;
    fn sleep(&self, duration: Duration);
}

pub struct RealClock;

impl Clock for RealClock {
    fn now(&self) -> Instant {
        Instant::now()
    }

    fn sleep(&self, duration: Duration) {
        std::thread::sleep(duration);
    }
}

/// The jittered wait before retry `n` (1 or 2).
fn wait_before(retry: u32) -> Duration {
    let (low, high) = if retry == 1 {
        (3_000, 4_500)
    } else {
        (6_000, 7_500)
    };
    Duration::from_millis(fastrand::u64(low..=high))
}

const MAX_RETRIES: u32 = 2;
const MARGIN: Duration = Duration::from_secs(2);

/// Runs `attempt` (given its timeout) until it is final, retries run out, or the deadline
/// leaves no room for another wait. Returns the last attempt's result and how many
/// attempts were made — each one is a call against the budget.
pub fn run<T>(
    clock: &dyn Clock,
    deadline: Duration,
    per_attempt: Duration,
    mut attempt: impl FnMut(Duration) -> Attempt<T>,
) -> (T, u32) {
    let start = clock.now();
    let mut attempts = 0;
    loop {
        let left = deadline.saturating_sub(clock.now() - start);
        attempts += 1;
        let result = attempt(per_attempt.min(left));
        let value = match result {
            Attempt::Final(value) => return (value, attempts),
            Attempt::Transient(value) => value,
        };
        if attempts > MAX_RETRIES {
            return (value, attempts);
        }
        let wait = wait_before(attempts);
        let left = deadline.saturating_sub(clock.now() - start);
        if left < wait + MARGIN {
            return (value, attempts);
        }
        clock.sleep(wait);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// A clock that only moves when slept on (or told to).
    struct FakeClock {
        start: Instant,
        elapsed: Cell<Duration>,
        slept: Cell<Vec<Duration>>,
    }

    impl FakeClock {
        fn new() -> FakeClock {
            FakeClock {
                start: Instant::now(),
                elapsed: Cell::new(Duration::ZERO),
                slept: Cell::new(Vec::new()),
            }
        }

        fn advance(&self, d: Duration) {
            self.elapsed.set(self.elapsed.get() + d);
        }
    }

    impl Clock for FakeClock {
        fn now(&self) -> Instant {
            self.start + self.elapsed.get()
        }

        fn sleep(&self, duration: Duration) {
            let mut slept = self.slept.take();
            slept.push(duration);
            self.slept.set(slept);
            self.advance(duration);
        }
    }

    #[test]
    fn a_transient_failure_is_retried_twice_with_jittered_waits() {
        let clock = FakeClock::new();
        let (value, attempts) = run(
            &clock,
            Duration::from_secs(60),
            Duration::from_secs(10),
            |_| Attempt::Transient(503),
        );
        assert_eq!((value, attempts), (503, 3));
        let slept = clock.slept.take();
        assert_eq!(slept.len(), 2);
        assert!(
            (Duration::from_secs(3)..=Duration::from_millis(4_500)).contains(&slept[0]),
            "{slept:?}"
        );
        assert!(
            (Duration::from_secs(6)..=Duration::from_millis(7_500)).contains(&slept[1]),
            "{slept:?}"
        );
    }

    #[test]
    fn a_final_answer_is_never_retried() {
        let clock = FakeClock::new();
        let (value, attempts) = run(
            &clock,
            Duration::from_secs(60),
            Duration::from_secs(10),
            |_| Attempt::Final(401),
        );
        assert_eq!((value, attempts), (401, 1));
        assert!(
            !is_transient_status(400)
                && !is_transient_status(401)
                && !is_transient_status(403)
                && !is_transient_status(404)
        );
        assert!(is_transient_status(429) && is_transient_status(503) && is_transient_status(408));
    }

    #[test]
    fn no_retry_when_the_deadline_cannot_hold_the_wait_plus_two_seconds() {
        let clock = FakeClock::new();
        // Each attempt takes 2 s; the deadline is 6 s: after the first, 4 s are left —
        // less than a 3 s wait plus the 2 s margin.
        let ((), attempts) = run(
            &clock,
            Duration::from_secs(6),
            Duration::from_secs(10),
            |timeout| {
                assert!(timeout <= Duration::from_secs(6));
                clock.advance(Duration::from_secs(2));
                Attempt::Transient(())
            },
        );
        assert_eq!(attempts, 1);
    }

    #[test]
    fn each_attempt_gets_the_smaller_of_its_timeout_and_the_deadline_left() {
        let clock = FakeClock::new();
        let mut timeouts = Vec::new();
        let _ = run(
            &clock,
            Duration::from_secs(20),
            Duration::from_secs(10),
            |timeout| {
                timeouts.push(timeout);
                clock.advance(Duration::from_secs(1));
                Attempt::Transient(())
            },
        );
        assert_eq!(timeouts[0], Duration::from_secs(10));
        assert!(timeouts[1] <= Duration::from_secs(10));
        // By the third attempt 1 + ~4 + 1 + ~7 s have passed: what is left is under 10 s.
        assert!(
            timeouts.get(2).is_none_or(|t| *t < Duration::from_secs(10)),
            "{timeouts:?}"
        );
    }
}
