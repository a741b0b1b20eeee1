//! The entry point: `main` only calls [`agent::run`].
//!
//! agent starts without Rust's runtime start (`no_main`): a warm launch is a few hundred
//! microseconds of agent's own work, and that start was a tenth of it — it reads
//! `/proc/self/maps` to find the main thread's stack for an overflow message and installs
//! handlers for it (`scripts/bench-launch.sh`, docs/performance.md). What of it agent
//! relies on is done here instead ([`start_as_std_does`]), and stdout is flushed on the way
//! out as the runtime's exit would.
#![cfg_attr(not(test), no_main)]
// The test build keeps std's `main` (its harness's): the entry's parts go unused there.
#![cfg_attr(test, allow(dead_code))]

use std::process::ExitCode;

#[cfg(not(test))]
#[unsafe(no_mangle)]
extern "C" fn main(
    _argc: std::ffi::c_int,
    _argv: *const *const std::ffi::c_char,
) -> std::ffi::c_int {
    start_as_std_does();
    let code = run();
    // Rust's runtime flushes a line-buffered stdout at exit; a C `main` returning does not.
    let _ = std::io::Write::flush(&mut std::io::stdout());
    exit_status(code)
}

fn run() -> ExitCode {
    match agent::run() {
        Ok(code) => code,
        Err(err) => {
            // Every way out writes the `--outcome` record (a no-op without one, or when the
            // launch wrote it already).
            if agent::is_broken_pipe(&err) {
                agent::launch::outcome::finish(0);
                return ExitCode::SUCCESS;
            }
            agent::term::error(&format!("{err:#}"));
            let status = agent::exit_codes::ExitStatus::from_error(&err);
            agent::launch::outcome::finish(i32::from(status.code()));
            status.into()
        }
    }
}

/// What Rust's runtime start does that agent relies on: a write to a closed pipe is an
/// error agent handles (`agent --status | head -1` ends quietly), not a SIGPIPE that kills
/// it; and a standard descriptor the caller closed is `/dev/null`, so the first file agent
/// opens never becomes its stdout. (Children get SIGPIPE back: `Command` resets it.)
fn start_as_std_does() {
    use nix::libc;
    // SAFETY: setting a signal's disposition to ignore, before any thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
    for fd in 0..=2 {
        // SAFETY: fcntl on a descriptor number only asks whether it is open.
        let closed = unsafe { libc::fcntl(fd, libc::F_GETFD) } == -1;
        if closed {
            // SAFETY: a path literal; the lowest free descriptor is `fd` itself, as every
            // lower one is open.
            unsafe {
                libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
            }
        }
    }
}

/// The number an `ExitCode` stands for: std does not say it outside its own `main`, and
/// every code agent returns is made from a `u8`.
fn exit_status(code: ExitCode) -> std::ffi::c_int {
    (0..=u8::MAX)
        .find(|n| ExitCode::from(*n) == code)
        .map_or(1, std::ffi::c_int::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_exit_code_is_the_number_it_was_made_from() {
        for n in 0..=u8::MAX {
            assert_eq!(exit_status(ExitCode::from(n)), std::ffi::c_int::from(n));
        }
        assert_eq!(exit_status(ExitCode::SUCCESS), 0);
        assert_eq!(exit_status(ExitCode::FAILURE), 1);
    }
}
