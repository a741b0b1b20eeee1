//! What Claude Code's command line says of the session it runs and the prompt it carries —
//! read by the same [`Reader`] the translation reads with, so a flag's value is never taken
//! for the prompt. A session that ran out of its window mid-work (DESIGN §21) is continued
//! elsewhere with the user's flags and a new prompt, or resumed by id: both are the user's
//! words with the prompt and the session words replaced.

use std::ffi::OsString;

use super::{Form, Read, Reader};

/// Claude Code's sub-commands (2.1.332 `--help`, "Commands:"): a command line that starts
/// one runs no session of agent's naming.
const SUBCOMMANDS: &[&str] = &[
    "agents",
    "attach",
    "auth",
    "auto-mode",
    "doctor",
    "gateway",
    "import",
    "install",
    "kill",
    "logs",
    "mcp",
    "plugin",
    "plugins",
    "purge",
    "respawn",
    "rm",
    "setup-token",
    "stop",
    "ultrareview",
    "update",
    "upgrade",
];

/// Claude Code's flags that choose the session (or make none to choose): given any, agent
/// names none of its own.
const SESSION_FLAGS: &[&str] = &[
    "--session-id",
    "--fork-session",
    "--from-pr",
    "--teleport",
    "--no-session-persistence",
];

/// The prompt `args` carry: the positional words (and every word after the first `--`),
/// joined by spaces; `None` when there are none.
pub fn prompt_of(args: &[OsString]) -> Option<String> {
    let words: Vec<String> = Reader::new(args)
        .filter_map(|read| match read {
            Read::Prompt(word) => Some(word.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    (!words.is_empty()).then(|| words.join(" "))
}

/// Whether `args` leave the session to agent: they neither name one (`--session-id`,
/// `--resume`, `--continue`, …) nor start one of Claude Code's sub-commands.
pub fn leaves_the_session_to_agent(args: &[OsString]) -> bool {
    let names_none = Reader::new(args).all(|read| match read {
        Read::Claude { flag, name, .. } => {
            !matches!(flag.form, Form::Continue | Form::Resume)
                && !SESSION_FLAGS.contains(&name.as_str())
        }
        Read::Other { .. } | Read::Prompt(_) => true,
    });
    // A sub-command is the first word of the prompt before any `--`: after it, `update` is
    // a prompt like any other (`agent -p -- update`), and its session is agent's to name.
    let before_the_marker = args
        .iter()
        .position(|word| word == "--")
        .map_or(args, |at| &args[..at]);
    let starts_a_command = Reader::new(before_the_marker)
        .find_map(|read| match read {
            Read::Prompt(word) => Some(word),
            _ => None,
        })
        .is_some_and(|word| SUBCOMMANDS.iter().any(|c| word == *c));
    names_none && !starts_a_command
}

/// Whether `args` continue the folder's last session (`-c`, `--continue`) and name no other
/// session: what `agent -c` continues is the folder's task, where it lives now.
pub fn continues_the_last(args: &[OsString]) -> bool {
    let mut continues = false;
    for read in Reader::new(args) {
        if let Read::Claude { flag, name, .. } = read {
            match flag.form {
                Form::Continue => continues = true,
                Form::Resume => return false,
                _ if SESSION_FLAGS.contains(&name.as_str()) => return false,
                _ => {}
            }
        }
    }
    continues
}

/// The session `args` name by id: `--session-id ID`, or `--resume ID`.
pub fn named_session(args: &[OsString]) -> Option<String> {
    Reader::new(args).find_map(|read| match read {
        Read::Claude {
            flag, name, value, ..
        } if flag.form == Form::Resume || name == "--session-id" => {
            value.map(|value| value.to_string_lossy().into_owned())
        }
        _ => None,
    })
}

/// `args` with their prompt and session words replaced: the user's other flags as given,
/// then `session` (the words naming the session to run, if any), then `--` and `prompt`.
/// The `--` keeps every prompt word data, whatever it starts with.
pub fn with_prompt(args: &[OsString], session: &[OsString], prompt: Option<&str>) -> Vec<OsString> {
    let mut out = Vec::new();
    for read in Reader::new(args) {
        match read {
            Read::Prompt(_) => {}
            Read::Claude {
                flag,
                name,
                value,
                inline,
                word,
            } => {
                if matches!(flag.form, Form::Continue | Form::Resume)
                    || SESSION_FLAGS.contains(&name.as_str())
                {
                    continue;
                }
                out.push(word);
                if let (false, Some(value)) = (inline, value) {
                    out.push(value);
                }
            }
            Read::Other { word, .. } => out.push(word),
        }
    }
    out.extend(session.iter().cloned());
    if let Some(prompt) = prompt {
        out.push("--".into());
        out.push(prompt.into());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(words: &[&str]) -> Vec<OsString> {
        words.iter().map(OsString::from).collect()
    }

    #[test]
    fn only_a_plain_continue_continues_the_folders_last_session() {
        assert!(continues_the_last(&os(&["-c"])));
        assert!(continues_the_last(&os(&["--continue", "-p", "go on"])));
        assert!(!continues_the_last(&os(&["-p", "go on"])));
        assert!(!continues_the_last(&os(&["-c", "--resume", "abc"])));
        assert!(!continues_the_last(&os(&["-c", "--fork-session"])));
        // A prompt word is never a flag.
        assert!(!continues_the_last(&os(&["-p", "--", "-c"])));
    }

    #[test]
    fn the_prompt_is_the_positional_words_never_a_flags_value() {
        let args = os(&["--model", "opus", "-p", "fix", "the", "--", "-tests"]);
        assert_eq!(prompt_of(&args).as_deref(), Some("fix the -tests"));
        assert_eq!(prompt_of(&os(&["--model", "opus"])), None);
    }

    #[test]
    fn a_session_the_user_named_or_a_sub_command_is_never_agents_to_name() {
        assert!(leaves_the_session_to_agent(&os(&["-p", "fix it"])));
        assert!(leaves_the_session_to_agent(&os(&[])));
        // A word that is a sub-command's name later in the prompt is only a word.
        assert!(leaves_the_session_to_agent(&os(&["-p", "fix", "doctor"])));
        // After `--` every word is the prompt's, a sub-command's name too.
        assert!(leaves_the_session_to_agent(&os(&["-p", "--", "update"])));
        assert!(leaves_the_session_to_agent(&os(&[
            "--model", "opus", "--", "mcp"
        ])));
        for named in [
            &["-c"][..],
            &["--resume", "abc"],
            &["-r"],
            &["--session-id", "abc", "-p", "x"],
            &["--fork-session", "-c"],
            &["doctor"],
            &["mcp", "list"],
        ] {
            assert!(!leaves_the_session_to_agent(&os(named)), "{named:?}");
        }
    }

    #[test]
    fn the_named_session_is_the_id_given_to_session_id_or_resume() {
        assert_eq!(
            named_session(&os(&["--session-id", "s-1", "-p", "x"])).as_deref(),
            Some("s-1")
        );
        assert_eq!(
            named_session(&os(&["--resume=s-2"])).as_deref(),
            Some("s-2")
        );
        assert_eq!(named_session(&os(&["-r"])), None);
        assert_eq!(named_session(&os(&["-p", "--session-id"])), None);
    }

    #[test]
    fn a_new_prompt_keeps_the_users_flags_and_drops_the_old_prompt_and_session() {
        let args = os(&[
            "--session-id",
            "s-1",
            "--model",
            "opus",
            "-p",
            "fix the tests",
            "--permission-mode=acceptEdits",
        ]);
        assert_eq!(
            with_prompt(&args, &os(&["--resume", "s-1"]), Some("-go on")),
            os(&[
                "--model",
                "opus",
                "-p",
                "--permission-mode=acceptEdits",
                "--resume",
                "s-1",
                "--",
                "-go on"
            ])
        );
        assert_eq!(with_prompt(&os(&["-c", "hi"]), &[], None), os(&[]));
    }
}
