//! Signals while a child runs (just's `signal_handler.rs`): INT and QUIT are ignored — the
//! terminal already sends them to the whole process group, so the CLI gets them itself —
//! and TERM and HUP are forwarded to the child, which decides how to end.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

use nix::sys::signal::{self, SaFlags, SigAction, SigHandler, SigSet, Signal};
use nix::unistd::Pid;

/// The running child's pid, or 0 between children.
static CHILD: AtomicI32 = AtomicI32::new(0);
/// Set once a TERM or HUP has been forwarded: whoever sent it wants agent to end, so the
/// child's ending is final — no fallback to the next rung.
static FORWARDED: AtomicBool = AtomicBool::new(false);

extern "C" fn forward(signo: nix::libc::c_int) {
    let pid = CHILD.load(Ordering::SeqCst);
    if pid > 0 {
        FORWARDED.store(true, Ordering::SeqCst);
        // kill(2) is async-signal-safe.
        let _ = signal::kill(Pid::from_raw(pid), Signal::try_from(signo).ok());
    } else if let Ok(sig) = Signal::try_from(signo) {
        // No child yet: behave as if no handler were installed.
        let _ = reset(sig);
        let _ = signal::raise(sig);
    }
}

fn set(sig: Signal, handler: SigHandler) -> nix::Result<()> {
    let action = SigAction::new(handler, SaFlags::SA_RESTART, SigSet::empty());
    // SAFETY: the handlers installed here only call async-signal-safe functions.
    unsafe { signal::sigaction(sig, &action) }.map(|_| ())
}

fn reset(sig: Signal) -> nix::Result<()> {
    set(sig, SigHandler::SigDfl)
}

/// Installs the forwarding handlers; call before spawning so no TERM is lost.
pub fn forward_to_children() {
    let _ = set(Signal::SIGTERM, SigHandler::Handler(forward));
    let _ = set(Signal::SIGHUP, SigHandler::Handler(forward));
}

/// Marks `pid` as the child to forward to, and starts ignoring INT and QUIT.
pub fn child_started(pid: u32) {
    CHILD.store(i32::try_from(pid).unwrap_or(0), Ordering::SeqCst);
    let _ = set(Signal::SIGINT, SigHandler::SigIgn);
    let _ = set(Signal::SIGQUIT, SigHandler::SigIgn);
}

/// The child is gone: INT and QUIT act on agent again.
pub fn child_ended() {
    CHILD.store(0, Ordering::SeqCst);
    let _ = reset(Signal::SIGINT);
    let _ = reset(Signal::SIGQUIT);
}

/// Whether agent was asked to end (a TERM or HUP reached the child through it).
pub fn was_told_to_stop() -> bool {
    FORWARDED.load(Ordering::SeqCst)
}

/// Dies the way the child died, so the shell sees the same signal; exits 128+N if that
/// signal does not end a process by default.
pub fn die_by(signo: i32) -> ! {
    if let Ok(sig) = Signal::try_from(signo) {
        let _ = reset(sig);
        let mut set = SigSet::empty();
        set.add(sig);
        let _ = set.thread_unblock();
        let _ = signal::raise(sig);
    }
    std::process::exit(128 + signo);
}
