//! Waiting for an event. A test waits for what proves the behaviour — a file written, a
//! line printed, a call arriving — never for a stretch of time, and never asserts that
//! something took less than so long: a loaded machine stretches every duration, and a
//! bound belongs in a benchmark. [`PATIENCE`] only keeps a test whose event never comes
//! from hanging CI; reaching it fails the test.

use std::fmt::Display;
use std::thread;
use std::time::{Duration, Instant};

/// How long a test waits for an event before it fails. No event a test waits for takes
/// more than a few seconds on a quiet machine: this is for a broken one, not a slow one.
pub const PATIENCE: Duration = Duration::from_secs(60);

/// Polls `done` until it holds; fails naming `what` after [`PATIENCE`].
pub fn until(what: impl Display, mut done: impl FnMut() -> bool) {
    for_some(what, || done().then_some(()));
}

/// Polls `done` until it holds (true) or [`PATIENCE`] has passed (false): for a test that
/// has something to clean up before it fails.
pub fn eventually(mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + PATIENCE;
    loop {
        if done() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        thread::sleep(Duration::from_millis(10));
    }
}

/// Polls `found` until it gives a value, and returns that; fails naming `what` after
/// [`PATIENCE`].
pub fn for_some<T>(what: impl Display, mut found: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + PATIENCE;
    loop {
        if let Some(value) = found() {
            return value;
        }
        assert!(
            Instant::now() < deadline,
            "waited {PATIENCE:?} in vain for {what}"
        );
        thread::sleep(Duration::from_millis(10));
    }
}
