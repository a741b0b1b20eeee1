//! The closing line when no rung is left (issue 32): when every rung that ran failed the
//! same way, what that was and its likeliest cause — a folder they all refused, logins they
//! all refused, one exit code — rather than "no rung is available" alone. Rungs that never
//! ran (parked, skipped, not installed) say nothing of it; rungs passed over for the
//! arguments point at the arguments.

use crate::adapter::self_check::Meaning;

use super::rung::Rung;

/// How one rung that ran failed at once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum How {
    /// Its CLI refused the folder.
    Folder,
    /// It exited with this code, its stderr saying, in its adapter's words, this.
    Exited(i32, Option<Meaning>),
    /// It printed nothing for a headless prompt.
    Silent,
}

impl How {
    /// How `rung` failed: exit `code`, `stderr_head` read by its adapter's words.
    pub fn of(rung: &Rung, code: i32, stderr_head: &str, silent: bool) -> How {
        if silent {
            return How::Silent;
        }
        let meaning = rung
            .backend
            .family
            .self_check()
            .and_then(|check| check.meaning(stderr_head))
            .map(|(meaning, _)| meaning)
            .filter(|meaning| *meaning != Meaning::Failure);
        How::Exited(code, meaning)
    }
}

/// The line naming the failure every rung that ran shared, and its likeliest cause; `refused`:
/// the flags that passed the other rungs over. `None` when they differ, or one rung ran
/// and nothing was passed over for the arguments.
pub fn summary(ran: &[How], refused: &[&str]) -> Option<String> {
    let first = ran.first()?;
    if ran.len() + refused.len() < 2 {
        return None;
    }
    let one = ran.len() == 1;
    let every = |what: &str| {
        if one {
            format!("the one rung that ran {what}")
        } else {
            format!("every rung that ran {what}")
        }
    };
    let same = ran.iter().all(|how| how == first);
    let same_code = match first {
        How::Exited(code, _) => ran
            .iter()
            .all(|how| matches!(how, How::Exited(c, _) if c == code))
            .then_some(*code),
        _ => None,
    };
    let (how, cause) = match (same, first) {
        (true, How::Folder) => (
            every("refused this folder"),
            "the cause is the folder, not the vendors — each line above says its CLI's fix",
        ),
        (true, How::Exited(_, Some(Meaning::Auth))) => (
            every("said its login or key was refused"),
            "the cause is the logins, not an outage — `agent --status` says how to log each in again",
        ),
        (true, How::Exited(_, Some(Meaning::Limit))) => (
            every("said it is out of its usage limit"),
            "the cause is spent windows, not an outage — `agent --status` shows each reset",
        ),
        (true, How::Exited(_, Some(Meaning::RateLimited))) => (
            every("was rate-limited by its service"),
            "the cause is a short rate limit, not an outage — try again in a minute",
        ),
        (true, How::Silent) => (
            every("printed nothing for a headless prompt"),
            "the likeliest cause is what they share — the arguments or the working directory — rather than every vendor at once",
        ),
        _ => {
            let how = match same_code {
                Some(code) if one => every(&format!("exited {code} at once")),
                Some(code) => every(&format!("exited {code} at once, the same way")),
                None => every("failed at once"),
            };
            (
                how,
                "the likeliest cause is what they share — the arguments or the working directory — rather than every vendor at once",
            )
        }
    };
    let cause = if refused.is_empty() {
        cause.to_string()
    } else {
        format!(
            "the likeliest cause is the arguments, not an outage ({})",
            refused.join("; ")
        )
    };
    Some(format!(
        "{how}: {cause}; `agent --dry-run ARGS` shows each command line"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rungs_that_ran_the_same_way_are_named_and_different_ways_are_not_one_cause() {
        let auth = How::Exited(1, Some(Meaning::Auth));
        assert!(
            summary(&[auth.clone(), auth.clone()], &[])
                .unwrap()
                .starts_with("every rung that ran said its login or key was refused: ")
        );
        assert!(
            summary(&[How::Folder, How::Folder], &[])
                .unwrap()
                .starts_with("every rung that ran refused this folder: ")
        );
        let mixed = summary(&[auth, How::Exited(1, None)], &[]).unwrap();
        assert!(mixed.starts_with("every rung that ran exited 1 at once, the same way: "));
        assert!(
            summary(&[How::Exited(1, None), How::Exited(2, None)], &[])
                .unwrap()
                .starts_with("every rung that ran failed at once: ")
        );
        assert_eq!(summary(&[How::Exited(1, None)], &[]), None);
        assert_eq!(summary(&[], &["Codex cannot take --x"]), None);
    }
}
