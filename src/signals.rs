//! Signals while a child runs (just's `signal_handler.rs`): INT and QUIT are only noted — the
//! terminal already sends them to the whole process group, so the CLI gets them itself —
//! and TERM and HUP are forwarded to the child, which decides how to end. Either way the
//! user asked to stop, so the child's ending is final: no next rung.
//!
//! A signal agent inherited as ignored (`nohup agent …`, a background job of a shell
//! without job control) is left ignored: agent installs no handler for it, so the child
//! inherits the ignoring too (an ignored signal survives `exec`, a handler does not).

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

use nix::libc;
use nix::sys::signal::{self, SaFlags, SigAction, SigHandler, SigSet, Signal};
use nix::unistd::Pid;

/// The signals agent handles while a child runs.
const HANDLED: [Signal; 4] = [
    Signal::SIGINT,
    Signal::SIGQUIT,
    Signal::SIGTERM,
    Signal::SIGHUP,
];

/// The running child's pid, or 0 between children.
static CHILD: AtomicI32 = AtomicI32::new(0);
/// Set once a signal asking agent to end reached it while a child ran: whoever sent it
/// wants agent to end, so the child's ending is final — no fallback to the next rung.
static STOP_ASKED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(signo: libc::c_int) {
    let pid = CHILD.load(Ordering::SeqCst);
    let Ok(sig) = Signal::try_from(signo) else {
        return;
    };
    if pid > 0 {
        STOP_ASKED.store(true, Ordering::SeqCst);
        if matches!(sig, Signal::SIGTERM | Signal::SIGHUP) {
            // kill(2) is async-signal-safe.
            let _ = signal::kill(Pid::from_raw(pid), sig);
        }
    } else {
        // No child yet: behave as if no handler were installed.
        let _ = set(sig, SigHandler::SigDfl);
        let _ = signal::raise(sig);
    }
}

fn set(sig: Signal, handler: SigHandler) -> nix::Result<()> {
    let action = SigAction::new(handler, SaFlags::SA_RESTART, SigSet::empty());
    // SAFETY: the handlers installed here only call async-signal-safe functions.
    unsafe { signal::sigaction(sig, &action) }.map(|_| ())
}

/// Whether `sig` was ignored when agent started. Read once, before agent installs any
/// handler of its own.
fn inherited_ignored(sig: Signal) -> bool {
    static IGNORED: OnceLock<Vec<Signal>> = OnceLock::new();
    IGNORED
        .get_or_init(|| HANDLED.into_iter().filter(|&s| ignored_now(s)).collect())
        .contains(&sig)
}

fn ignored_now(sig: Signal) -> bool {
    let mut current = std::mem::MaybeUninit::<libc::sigaction>::zeroed();
    // SAFETY: with a null new action, sigaction(2) only writes the current one into
    // `current`, which is valid for writes.
    let rc = unsafe { libc::sigaction(sig as libc::c_int, std::ptr::null(), current.as_mut_ptr()) };
    // SAFETY: zeroed is a valid `sigaction`, and on success the kernel filled it in.
    rc == 0 && unsafe { current.assume_init() }.sa_sigaction == libc::SIG_IGN
}

/// Installs the handlers (never over an inherited ignore); call before spawning so no
/// signal is lost.
pub fn forward_to_children() {
    for sig in HANDLED {
        if !inherited_ignored(sig) {
            let _ = set(sig, SigHandler::Handler(on_signal));
        }
    }
}

/// Marks `pid` as the child to forward to.
pub fn child_started(pid: u32) {
    CHILD.store(i32::try_from(pid).unwrap_or(0), Ordering::SeqCst);
}

/// The child is gone: signals act on agent again as they would without a handler.
pub fn child_ended() {
    CHILD.store(0, Ordering::SeqCst);
}

/// Whether agent was asked to end while the child ran: a TERM or HUP it forwarded, or an
/// INT or QUIT (Ctrl-C, Ctrl-\) the terminal sent to agent and the child alike.
pub fn was_told_to_stop() -> bool {
    STOP_ASKED.load(Ordering::SeqCst)
}

/// What runs just before [`die_by`] ends agent, given the code agent ends with (128+N).
/// Set by a floor above (the launch's outcome record, which must be written on this way
/// out too); a leaf cannot name it, so it is handed down.
static BEFORE_DYING: OnceLock<fn(i32)> = OnceLock::new();

/// Has `hook` run just before [`die_by`] ends agent (the first hook set stays).
pub fn before_dying(hook: fn(i32)) {
    let _ = BEFORE_DYING.set(hook);
}

/// Dies the way the child died, so the shell sees the same signal; exits 128+N if that
/// signal does not end a process by default.
pub fn die_by(signo: i32) -> ! {
    if let Some(hook) = BEFORE_DYING.get() {
        // Before the signal is raised: once it is, nothing of agent runs again.
        hook(128 + signo);
    }
    if let Ok(sig) = Signal::try_from(signo) {
        let _ = set(sig, SigHandler::SigDfl);
        let mut set = SigSet::empty();
        set.add(sig);
        let _ = set.thread_unblock();
        let _ = signal::raise(sig);
    }
    std::process::exit(128 + signo);
}

/// Set by an INT or QUIT while agent waits with no child (`--wait`).
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_interrupt(_signo: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// While agent waits with no child (`--wait`): Ctrl-C and Ctrl-\ are only noted, so the
/// waiter can finish its line and end as it says ([`interrupted`]); TERM and HUP end agent
/// as they would without a handler (with no child, [`forward_to_children`]'s handler acts
/// so too). A signal inherited as ignored stays ignored.
pub fn note_interrupts() {
    for sig in [Signal::SIGINT, Signal::SIGQUIT] {
        if !inherited_ignored(sig) {
            let _ = set(sig, SigHandler::Handler(on_interrupt));
        }
    }
}

/// The wait is over: INT and QUIT act on agent again as they would without a handler.
pub fn stop_noting_interrupts() {
    for sig in [Signal::SIGINT, Signal::SIGQUIT] {
        if !inherited_ignored(sig) {
            let _ = set(sig, SigHandler::SigDfl);
        }
    }
}

/// Whether Ctrl-C or Ctrl-\ reached agent since [`note_interrupts`].
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}
