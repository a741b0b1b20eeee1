//! Whether a launch here could run any rung at all, judged without a call (issue 43):
//! `--doctor` once said "no problems found" in a cron job's environment where no CLI was on
//! the `PATH`, and in a home with no login anywhere, while `agent -p hi` there ended 69. A
//! rung is out when its CLI is not on this `PATH` (nor in the usual install directories),
//! it has no login or key agent can see, its backend is off, or its proxy is unset; with
//! every rung out, the doctor names why each is, and how to bring one in.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::error_class::ErrorClass;
use crate::launch::rung::Rung;
use crate::probe::Call;

/// Why a rung cannot run here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Why {
    /// Its CLI is on neither this `PATH` nor in the usual install directories.
    NotOnPath { command: String },
    /// Its CLI has no login and no key agent can see: the way in, in the CLI's own words.
    NoLogin { way_in: String },
    /// Its backend is turned off.
    Off { backend: String },
    /// It goes through the user's proxy, and none is set.
    NoProxy,
    /// Anything else, said as its row says it (a variable unset, an account refused).
    Other { reason: String },
}

/// How the doctor heads each kind of [`Why`] but the last, in its order.
const HEADINGS: [&str; 4] = [
    "not on this PATH nor in the usual install directories",
    "no login and no key",
    "off (enabled = false)",
    "no proxy (AGENT_PROXY_URL unset)",
];

impl Why {
    /// The heading rungs out for this reason are listed under; `None` for a reason each
    /// rung says in its own words.
    fn heading(&self) -> Option<&'static str> {
        match self {
            Why::NotOnPath { .. } => Some(HEADINGS[0]),
            Why::NoLogin { .. } => Some(HEADINGS[1]),
            Why::Off { .. } => Some(HEADINGS[2]),
            Why::NoProxy => Some(HEADINGS[3]),
            Why::Other { .. } => None,
        }
    }
}

/// A rung that cannot run here: its place in the table, its backend, and why.
#[derive(Debug, Clone)]
pub struct Out {
    pub index: usize,
    pub backend: String,
    pub why: Why,
}

/// Why `rung` cannot run here, or `None` when a launch could run it (after a probe, for
/// some; a window may still park it for a while, which is no fault of the setup).
pub fn out(rung: &Rung) -> Option<Out> {
    let why = match &rung.state {
        Err(unusable) => match unusable.class {
            ErrorClass::BinaryMissing => Why::NotOnPath {
                command: rung.backend.command.clone(),
            },
            ErrorClass::Disabled => Why::Off {
                backend: rung.backend.name.clone(),
            },
            ErrorClass::NotSetUp => Why::NoLogin {
                way_in: way_in_of(&unusable.reason),
            },
            _ if unusable.skip => Why::NoProxy,
            _ => Why::Other {
                reason: unusable.reason.clone(),
            },
        },
        Ok(ready) => match (&ready.plan.call, &ready.plan.login) {
            (_, Some(login)) => Why::Other {
                reason: login.refused?.to_string(),
            },
            // No credential, no login, and the vendor's own API: the CLI would be started
            // with nothing to sign in with (a gateway of the user's at another base may
            // need none).
            (Call::Reach { base }, None)
                if base.trim_end_matches('/') == crate::backend::endpoint::ANTHROPIC_API =>
            {
                let family = rung.backend.family;
                let var = family.credential_vars().first().copied().unwrap_or("a key");
                Why::NoLogin {
                    way_in: way_in_of(&crate::backend::PlanError::not_set_up(family, var).reason),
                }
            }
            _ => return None,
        },
    };
    Some(Out {
        index: rung.index,
        backend: rung.backend.name.clone(),
        why,
    })
}

/// The way in a not-set-up reason names after its dash (`log in (codex login) or set
/// OPENAI_API_KEY`), else the whole reason.
fn way_in_of(reason: &str) -> String {
    reason
        .rsplit_once(" — ")
        .map_or(reason, |(_, way_in)| way_in)
        .to_string()
}

/// The doctor's finding when no rung can run: what is out and why, grouped by why (`claude
/// (rungs 1, 2), codex (rung 5)`), then the fix — for CLIs off the `PATH` the line a cron or
/// launchd job needs (naming the directory where each is installed, when agent finds it),
/// for logins the way into each CLI, for what is off the key. `path` is this process's
/// `PATH`; `found_elsewhere` says where a command is installed outside it, if anywhere.
pub fn nothing_runs(
    outs: &[Out],
    path: &str,
    found_elsewhere: &dyn Fn(&str) -> Option<PathBuf>,
) -> (String, String) {
    let mut detail = String::from("no rung can run in this environment, so a launch here ends 69:");
    for heading in HEADINGS {
        let named = named_by_cli(outs.iter().filter(|out| out.why.heading() == Some(heading)));
        if !named.is_empty() {
            let _ = write!(detail, "\n{heading}: {named}");
        }
    }
    for out in outs {
        if let Why::Other { reason } = &out.why {
            let _ = write!(detail, "\nrung {} {}: {reason}", out.index, out.backend);
        }
    }
    let mut fixes: Vec<String> = Vec::new();
    if let Some(fix) = path_fix(outs, path, found_elsewhere) {
        fixes.push(fix);
    }
    let mut ways_in: Vec<&str> = Vec::new();
    for out in outs {
        if let Why::NoLogin { way_in } = &out.why
            && !ways_in.contains(&way_in.as_str())
        {
            ways_in.push(way_in);
        }
    }
    if !ways_in.is_empty() {
        fixes.push(format!("set one of them up: {}", ways_in.join("; ")));
    }
    let mut off: Vec<&str> = Vec::new();
    for out in outs {
        if let Why::Off { backend } = &out.why
            && !off.contains(&backend.as_str())
        {
            off.push(backend);
        }
    }
    if !off.is_empty() {
        fixes.push(format!(
            "or turn one back on: remove `enabled = false` under {}",
            off.iter()
                .map(|name| format!("[backends.{name}]"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if fixes.is_empty() && outs.iter().any(|out| out.why == Why::NoProxy) {
        fixes.push("set AGENT_PROXY_URL (and AGENT_PROXY_KEY) for the proxy rungs".to_string());
    }
    if fixes.is_empty() {
        fixes.push("see each rung's row above; `agent --list` shows the table".to_string());
    }
    (detail, fixes.join("\n"))
}

/// `claude (rungs 1, 2), codex (rung 5)`: the backends of `outs`, each with its rungs.
fn named_by_cli<'a>(outs: impl Iterator<Item = &'a Out>) -> String {
    let mut backends: Vec<(&str, Vec<usize>)> = Vec::new();
    for out in outs {
        match backends.iter_mut().find(|(name, _)| *name == out.backend) {
            Some((_, rungs)) => rungs.push(out.index),
            None => backends.push((&out.backend, vec![out.index])),
        }
    }
    backends
        .iter()
        .map(|(name, rungs)| {
            let numbers: Vec<String> = rungs.iter().map(ToString::to_string).collect();
            let word = if rungs.len() == 1 { "rung" } else { "rungs" };
            format!("{name} ({word} {})", numbers.join(", "))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// For CLIs off this `PATH`: the `PATH` line a cron or launchd job needs, naming the
/// directories where agent finds them installed, else how to find them. Said only when it
/// may be the cause: a CLI is installed elsewhere, or no rung's CLI is on this `PATH` at all
/// (a job's bare environment); one CLI missing beside others found is simply not installed.
fn path_fix(
    outs: &[Out],
    path: &str,
    found_elsewhere: &dyn Fn(&str) -> Option<PathBuf>,
) -> Option<String> {
    let mut missing: Vec<&str> = Vec::new();
    for out in outs {
        if let Why::NotOnPath { command } = &out.why
            && !missing.contains(&command.as_str())
        {
            missing.push(command);
        }
    }
    let first = *missing.first()?;
    let mut dirs: Vec<PathBuf> = Vec::new();
    let mut found: Vec<&str> = Vec::new();
    for command in &missing {
        if let Some(dir) = found_elsewhere(command)
            .as_deref()
            .and_then(Path::parent)
            .map(Path::to_path_buf)
        {
            found.push(command);
            if !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
    }
    let none_on_path = outs
        .iter()
        .all(|out| matches!(out.why, Why::NotOnPath { .. }));
    if dirs.is_empty() && !none_on_path {
        return None;
    }
    let mut fix = String::from("for a cron or launchd job, put the CLIs on its PATH");
    if dirs.is_empty() {
        let _ = write!(
            fix,
            ": `command -v {first}` in your shell names the directory; then in the job\nPATH=<that directory>:{path}"
        );
    } else {
        let joined: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
        let _ = write!(
            fix,
            " ({} found in {}):\nPATH={}:{path}",
            found.join(", "),
            joined.join(", "),
            joined.join(":")
        );
    }
    fix.push_str(
        "\n(`agent --install-watchdog`, run from your shell, pins such a PATH for the watchdog)",
    );
    Some(fix)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(index: usize, backend: &str, why: Why) -> Out {
        Out {
            index,
            backend: backend.into(),
            why,
        }
    }

    fn missing(command: &str) -> Why {
        Why::NotOnPath {
            command: command.into(),
        }
    }

    #[test]
    fn clis_off_the_path_get_the_jobs_path_line_naming_where_they_are() {
        let outs = [
            out(1, "claude", missing("claude")),
            out(2, "claude", missing("claude")),
            out(5, "codex", missing("codex")),
        ];
        let found = |command: &str| {
            (command == "claude")
                .then(|| PathBuf::from("/home/u/.nvm/versions/node/v20/bin/claude"))
        };
        let (detail, fix) = nothing_runs(&outs, "/usr/bin:/bin", &found);
        assert!(
            detail.ends_with(
                "\nnot on this PATH nor in the usual install directories: claude (rungs 1, 2), codex (rung 5)"
            ),
            "{detail}"
        );
        assert!(
            fix.contains(
                "(claude found in /home/u/.nvm/versions/node/v20/bin):\nPATH=/home/u/.nvm/versions/node/v20/bin:/usr/bin:/bin"
            ),
            "{fix}"
        );

        let (_, fix) = nothing_runs(&outs, "/usr/bin:/bin", &|_| None);
        assert!(
            fix.contains(
                "`command -v claude` in your shell names the directory; then in the job\nPATH=<that directory>:/usr/bin:/bin"
            ),
            "{fix}"
        );
    }

    #[test]
    fn clis_with_no_login_get_each_ones_way_in_once_and_a_cli_simply_not_installed_no_path_line() {
        let codex = Why::NoLogin {
            way_in: way_in_of(
                "not set up: no login and no OPENAI_API_KEY — log in (codex login) or set OPENAI_API_KEY",
            ),
        };
        let claude = Why::NoLogin {
            way_in: "log in (claude, then /login) or set ANTHROPIC_API_KEY".into(),
        };
        let outs = [
            out(1, "claude", claude.clone()),
            out(2, "claude", claude),
            out(3, "claude-proxy", Why::NoProxy),
            out(5, "codex", codex),
            out(6, "agy", missing("agy")),
            out(
                7,
                "gemini",
                Why::Off {
                    backend: "gemini".into(),
                },
            ),
        ];
        let (detail, fix) = nothing_runs(&outs, "/usr/bin", &|_| None);
        assert!(
            detail.contains("\nno login and no key: claude (rungs 1, 2), codex (rung 5)\n"),
            "{detail}"
        );
        assert!(
            detail.ends_with("\nno proxy (AGENT_PROXY_URL unset): claude-proxy (rung 3)"),
            "{detail}"
        );
        assert_eq!(
            fix,
            "set one of them up: log in (claude, then /login) or set ANTHROPIC_API_KEY; log in (codex login) or set OPENAI_API_KEY\nor turn one back on: remove `enabled = false` under [backends.gemini]"
        );
    }
}
