//! `agent -p` with no prompt (issue 32): Claude Code's `-p` takes its prompt from its
//! words, else from stdin, and refuses with neither ("Error: Input must be provided either
//! through stdin or as a prompt argument when using --print", exit 1) — as every other CLI
//! refuses its headless run without one. So agent refuses it first, as its own usage
//! error (exit 2): no CLI runs, no call is made, no rung is judged by a slip.

use std::ffi::OsString;
use std::os::fd::AsFd as _;

use crate::adapter::dialect;
use crate::exit_codes::usage;

/// A usage error when `args` (Claude Code's words) run headless with no prompt and stdin
/// holds nothing for one.
pub fn refuse(args: &[OsString]) -> anyhow::Result<()> {
    if dialect::headless_without_prompt(args) && stdin_holds_nothing() {
        return Err(usage(
            "-p needs a prompt: none follows it and stdin holds none — give one (`agent -p \"PROMPT\"`) or pipe it in (`… | agent -p`); no CLI was run",
        ));
    }
    Ok(())
}

/// Whether agent's stdin surely holds no prompt: a terminal (no one pipes a prompt into a
/// terminal), closed, `/dev/null`, a file read to its end, or a pipe whose writer has gone
/// with nothing in it. A pipe still open is not read: its prompt may still come.
fn stdin_holds_nothing() -> bool {
    use nix::sys::stat::{SFlag, fstat, stat};
    let stdin = std::io::stdin();
    if std::io::IsTerminal::is_terminal(&stdin) {
        return true;
    }
    let fd = stdin.as_fd();
    let info = match fstat(fd) {
        Ok(info) => info,
        Err(nix::errno::Errno::EBADF) => return true,
        Err(_) => return false,
    };
    let kind = SFlag::from_bits_truncate(info.st_mode) & SFlag::S_IFMT;
    if kind == SFlag::S_IFCHR {
        return stat("/dev/null").is_ok_and(|null| null.st_rdev == info.st_rdev);
    }
    if kind == SFlag::S_IFREG {
        let at = nix::unistd::lseek(fd, 0, nix::unistd::Whence::SeekCur).unwrap_or(0);
        return info.st_size <= at;
    }
    if kind == SFlag::S_IFIFO {
        use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
        let mut fds = [PollFd::new(fd, PollFlags::POLLIN)];
        let ready = poll(&mut fds, PollTimeout::ZERO).unwrap_or(0);
        let revents = fds[0].revents().unwrap_or(PollFlags::empty());
        // At its end with nothing left: hung up, and nothing to read.
        return ready > 0
            && revents.contains(PollFlags::POLLHUP)
            && !revents.contains(PollFlags::POLLIN);
    }
    false
}
