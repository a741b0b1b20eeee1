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

/// The second net: a headless run that printed nothing (`silent`: a CLI whose exit code
/// says nothing of it, DESIGN §22) did not answer, whatever its code; exit 0 or 130 is
/// done; a signal is done; a run of at least `fastfail` is done with its own code (it
/// really worked, and re-running that work elsewhere is worse than showing the error);
/// anything else failed fast.
pub fn judge(ended: Ended, elapsed: Duration, fastfail: Duration, silent: bool) -> Verdict {
    match ended {
        Ended::Code(_) if silent => Verdict::FastFail,
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
        assert_eq!(judge(Ended::Code(0), soon, fastfail, false), Verdict::Final);
        assert_eq!(
            judge(Ended::Code(130), soon, fastfail, false),
            Verdict::Final
        );
        assert_eq!(
            judge(Ended::Signal(15), soon, fastfail, false),
            Verdict::Final
        );
        assert_eq!(
            judge(Ended::Code(1), soon, fastfail, false),
            Verdict::FastFail
        );
        assert_eq!(
            judge(Ended::Code(42), soon, fastfail, false),
            Verdict::FastFail
        );
        assert_eq!(judge(Ended::Code(1), late, fastfail, false), Verdict::Final);
        assert_eq!(
            judge(Ended::Code(0), soon, fastfail, true),
            Verdict::FastFail
        );
        assert_eq!(
            judge(Ended::Code(0), late, fastfail, true),
            Verdict::FastFail
        );
    }
}
