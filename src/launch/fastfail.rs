//! The second net (DESIGN.md §5.4): after the chosen CLI ends, decide whether it ever
//! really started. Exit 0 or 130, a signal, or a run past `fastfail_seconds` is final;
//! anything sooner failed fast and hands the same arguments to the next rung.

use std::time::Duration;

use super::child::Ended;

/// What the second net makes of an ending.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Done: pass this ending through.
    Final,
    /// Failed sooner than `fastfail_seconds`: it never really started; try the next rung.
    FastFail,
}

/// The second net: exit 0 or 130 is done; a signal is done; a run of at least `fastfail`
/// is done with its own code (it really worked, and re-running that work elsewhere is
/// worse than showing the error); anything else failed fast.
pub fn judge(ended: Ended, elapsed: Duration, fastfail: Duration) -> Verdict {
    match ended {
        Ended::Code(0 | 130) | Ended::Signal(_) => Verdict::Final,
        Ended::Code(_) if elapsed >= fastfail => Verdict::Final,
        Ended::Code(_) => Verdict::FastFail,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_second_net() {
        let fastfail = Duration::from_secs(25);
        let soon = Duration::from_secs(2);
        let late = Duration::from_secs(30);
        assert_eq!(judge(Ended::Code(0), soon, fastfail), Verdict::Final);
        assert_eq!(judge(Ended::Code(130), soon, fastfail), Verdict::Final);
        assert_eq!(judge(Ended::Signal(15), soon, fastfail), Verdict::Final);
        assert_eq!(judge(Ended::Code(1), soon, fastfail), Verdict::FastFail);
        assert_eq!(judge(Ended::Code(42), soon, fastfail), Verdict::FastFail);
        assert_eq!(judge(Ended::Code(1), late, fastfail), Verdict::Final);
    }
}
