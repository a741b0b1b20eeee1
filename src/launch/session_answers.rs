//! What agent can answer of a CLI's sessions when a window runs out mid-session (DESIGN
//! §21): which session a run was, whether it ended on its limit and when that resets, what
//! it did (the brief's reader) and how to resume it. Each answer comes from the CLI's
//! adapter and readers — never a list of CLIs here — and a CLI that cannot answer one says
//! why, in `--list` and `--dry-run`, so `on_limit` offers only what it can do.

use serde_json::json;

use crate::adapter::Family;
use crate::login::readers;

/// A stand-in id, to show the resume words' shape.
const ID: &str = "ID";

/// One CLI's answers: each `Ok` is how, each `Err` why not.
pub struct Answers {
    pub session: Result<&'static str, &'static str>,
    pub limit: Result<&'static str, &'static str>,
    pub brief: Result<&'static str, &'static str>,
    /// The command that resumes a session with a screen (`codex resume ID`).
    pub resume: Result<String, &'static str>,
}

/// What agent can answer of `family`'s sessions.
pub fn of(family: Family) -> Answers {
    let reads = readers::of(family);
    let session = if family.takes_a_session_id() {
        Ok("named by agent (--session-id)")
    } else if reads.is_some_and(|r| r.session_in_output.is_some() || r.run_session.is_some()) {
        Ok("id from its output or record")
    } else {
        Err("id unknown (it names its own, and agent reads it nowhere)")
    };
    let limit = match reads {
        Some(r) if r.run_windows.is_some() => Ok("limit from its record"),
        Some(r) if r.limit_in_output.is_some() => Ok("limit from its record or final error"),
        Some(r) if r.run_session.is_some() && r.session_costs_a_run => {
            Ok("limit from its record, read after a run that failed")
        }
        Some(r) if r.run_session.is_some() => Ok("limit from its record"),
        _ => Err(
            "limit unread (its records name none: a refused quota is skipped for quota_minutes)",
        ),
    };
    let brief = match reads {
        Some(r) if r.run_session.is_some() => Ok("brief from its record"),
        _ => Err(
            "brief of the task and the repository's changes only (agent reads no record of its sessions)",
        ),
    };
    let resume = family
        .resume_words(ID, false)
        .map(|words| {
            format!(
                "resume: {} {}",
                family.name(),
                crate::text::shell_join(&words)
            )
        })
        .ok_or("no resume (agent knows no way to resume one of its sessions by id)");
    Answers {
        session,
        limit,
        brief,
        resume,
    }
}

impl Answers {
    /// One line: each answer, or why not.
    pub fn line(&self) -> String {
        let said = |answer: Result<&str, &str>| match answer {
            Ok(said) | Err(said) => said.to_string(),
        };
        [
            said(self.session),
            said(self.limit),
            said(self.brief),
            said(self.resume.as_deref().map_err(|why| *why)),
        ]
        .join(" · ")
    }

    pub fn json(&self) -> serde_json::Value {
        let answer = |answer: Result<&str, &str>| match answer {
            Ok(how) => json!({"can": true, "how": how}),
            Err(why) => json!({"can": false, "why": why}),
        };
        json!({
            "session": answer(self.session),
            "limit": answer(self.limit),
            "brief": answer(self.brief),
            "resume": answer(self.resume.as_deref().map_err(|why| *why)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_cli_says_how_it_answers_or_why_it_cannot() {
        let claude = of(Family::Claude);
        assert_eq!(claude.resume.as_deref(), Ok("resume: claude --resume ID"));
        assert!(claude.session.is_ok() && claude.limit.is_ok() && claude.brief.is_ok());
        let codex = of(Family::Codex);
        assert_eq!(codex.resume.as_deref(), Ok("resume: codex resume ID"));
        assert_eq!(codex.session, Ok("id from its output or record"));
        let gemini = of(Family::Gemini);
        assert_eq!(gemini.resume.as_deref(), Ok("resume: gemini --resume ID"));
        assert_eq!(gemini.limit, Ok("limit from its record or final error"));
        let opencode = of(Family::Opencode);
        assert_eq!(
            opencode.resume.as_deref(),
            Ok("resume: opencode --session ID")
        );
        assert_eq!(
            opencode.limit,
            Ok("limit from its record, read after a run that failed")
        );
        let agy = of(Family::Agy);
        assert!(agy.resume.is_err() && agy.brief.is_err() && agy.session.is_err());
        assert!(of(Family::Other).line().contains("no resume ("));
    }
}
