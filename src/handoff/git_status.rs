//! `git status --porcelain` of the folder a session worked in, for its brief — run so that
//! nothing the repository's own configuration names runs with it. A repository is the
//! session's, not agent's: its `.git/config` may name programs git would start on a plain
//! `git status` — an fsmonitor hook (`core.fsmonitor`), a clean filter (`filter.NAME.clean`
//! or `.process`, run to hash a changed file), and the same again in each submodule.
//! Here each of those is switched off on the command line, which wins over every
//! configuration file; the system configuration is not read; submodules are not entered;
//! nothing is written (`--no-optional-locks`); and the run is bounded in time and bytes.
//! A git that is missing, fails, or finds no repository gives nothing: a brief without a
//! status, never an error.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use crate::child::{self, Group, Job, Stopped};

/// How long each git run may take: a status of a large tree takes a second or two.
const TIMEOUT: Duration = Duration::from_secs(5);

/// The most of git's output kept: a brief names the changes, it does not list a tree.
const KEPT_BYTES: usize = 8 * 1024;

/// What `git status --porcelain` says in `cwd` (at most [`KEPT_BYTES`], whole lines and a
/// last line saying how many more there were); `None` when git gives nothing.
pub fn porcelain(cwd: &Path) -> Option<String> {
    let mut disarmed = vec!["core.fsmonitor=false".to_string()];
    for driver in filter_drivers(cwd) {
        for key in ["clean", "smudge", "process"] {
            disarmed.push(format!("filter.{driver}.{key}="));
        }
        disarmed.push(format!("filter.{driver}.required=false"));
    }
    let out = run(
        cwd,
        &disarmed,
        &["status", "--porcelain", "--ignore-submodules=all"],
    )?;
    Some(kept(&out.text, out.whole))
}

/// The filter drivers the repository's configuration names (`filter.NAME.*`). Reading the
/// configuration runs nothing.
fn filter_drivers(cwd: &Path) -> Vec<String> {
    let Some(out) = run(
        cwd,
        &[],
        &["config", "--name-only", "--get-regexp", r"^filter\."],
    ) else {
        return Vec::new();
    };
    let mut drivers: Vec<String> = out
        .text
        .lines()
        .filter_map(|name| {
            let rest = name.strip_prefix("filter.")?;
            let (driver, _key) = rest.rsplit_once('.')?;
            Some(driver.to_string())
        })
        .collect();
    drivers.sort();
    drivers.dedup();
    drivers
}

struct Out {
    text: String,
    /// Whether this is all git printed (not cut at the byte cap).
    whole: bool,
}

/// `git` with the settings that keep the repository's configuration from running
/// anything, and `config` (`KEY=VALUE` each) besides, in `cwd`.
fn run(cwd: &Path, config: &[String], args: &[&str]) -> Option<Out> {
    let mut command = crate::child_env::command("git");
    crate::child_env::start_in(&mut command, cwd)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .args(["--no-pager", "--no-optional-locks"])
        .args(["-c", "core.hooksPath=/dev/null"]);
    for setting in config {
        command.args(["-c", setting]);
    }
    command.args(args);
    let ran = child::run(&mut command, &Job::new(TIMEOUT, Group::Own)).ok()?;
    let whole = match ran.end {
        Ok(status) if status.success() => true,
        // More than the pipe's cap: what came first is still the status.
        Err(Stopped::Flooded(_)) => false,
        _ => return None,
    };
    Some(Out {
        text: String::from_utf8_lossy(&ran.stdout).into_owned(),
        whole,
    })
}

/// `text`'s first whole lines within [`KEPT_BYTES`], and how many were left out.
fn kept(text: &str, whole: bool) -> String {
    let mut out = String::new();
    let mut lines = text.lines();
    let mut left_out = 0;
    for line in lines.by_ref() {
        if out.len() + line.len() + 1 > KEPT_BYTES {
            left_out = 1;
            break;
        }
        out.push_str(line);
        out.push('\n');
    }
    left_out += lines.count();
    let _ = match (left_out, whole) {
        (0, true) => Ok(()),
        (n, true) => writeln!(out, "… and {n} more lines"),
        (n, false) => writeln!(out, "… and {n} more lines, and more after them"),
    };
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;
    use std::process::Command;

    fn git(dir: &Path, args: &[&str]) {
        let status = Command::new("git")
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .output()
            .unwrap();
        assert!(status.status.success(), "git {args:?}: {status:?}");
    }

    /// A script that leaves `marker` behind when anything runs it.
    fn trap(dir: &Path, marker: &Path) -> std::path::PathBuf {
        let script = dir.join("trap.sh");
        std::fs::write(
            &script,
            format!("#!/bin/sh\ntouch '{}'\ncat\n", marker.display()),
        )
        .unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        script
    }

    #[test]
    fn the_status_of_a_repository_is_listed_and_a_folder_outside_one_gives_nothing() {
        let repo = tempfile::tempdir().unwrap();
        git(repo.path(), &["init", "-q"]);
        std::fs::write(repo.path().join("tracked.rs"), "fn a() {}\n").unwrap();
        git(repo.path(), &["add", "tracked.rs"]);
        git(repo.path(), &["commit", "-qm", "one"]);
        std::fs::write(repo.path().join("tracked.rs"), "fn b() {}\n// more\n").unwrap();
        std::fs::write(repo.path().join("new.md"), "hi\n").unwrap();
        assert_eq!(
            porcelain(repo.path()).as_deref(),
            Some(" M tracked.rs\n?? new.md\n")
        );
        let plain = tempfile::tempdir().unwrap();
        assert_eq!(porcelain(plain.path()), None);
    }

    /// A repository with one committed file changed since (same size, new content and
    /// time: git must read it to know), whose configuration then gets `key = <a trap>`.
    /// Returns the repository and where the trap leaves its mark.
    fn armed_repository(key: &str) -> (tempfile::TempDir, tempfile::TempDir, std::path::PathBuf) {
        let outside = tempfile::tempdir().unwrap();
        let repo = tempfile::tempdir().unwrap();
        let marker = outside.path().join("ran");
        let script = trap(outside.path(), &marker);
        git(repo.path(), &["init", "-q"]);
        std::fs::write(repo.path().join(".gitattributes"), "*.txt filter=trap\n").unwrap();
        std::fs::write(repo.path().join("a.txt"), "one\n").unwrap();
        git(repo.path(), &["add", "."]);
        git(repo.path(), &["commit", "-qm", "one"]);
        // Armed after the commit, so that only a status can set it off.
        git(repo.path(), &["config", key, &script.display().to_string()]);
        std::fs::write(repo.path().join("a.txt"), "two\n").unwrap();
        let later = std::time::SystemTime::now() + Duration::from_secs(5);
        std::fs::File::options()
            .write(true)
            .open(repo.path().join("a.txt"))
            .unwrap()
            .set_modified(later)
            .unwrap();
        (outside, repo, marker)
    }

    fn never_runs(key: &str) {
        let (_outside, repo, marker) = armed_repository(key);

        let status = porcelain(repo.path());

        assert!(!marker.exists(), "the repository's {key} ran");
        assert_eq!(status.as_deref(), Some(" M a.txt\n"));
        // The trap is real: a plain `git status` springs it.
        git(repo.path(), &["status", "--porcelain"]);
        assert!(marker.exists(), "{key} never ran: the test proves nothing");
    }

    #[test]
    fn the_repositorys_fsmonitor_is_never_run() {
        never_runs("core.fsmonitor");
    }

    #[test]
    fn the_repositorys_clean_filter_is_never_run() {
        never_runs("filter.trap.clean");
    }

    #[test]
    fn a_long_status_keeps_its_first_lines_and_counts_the_rest() {
        let text: String = (0..2000)
            .map(|n| format!("?? file-{n:04}.txt"))
            .collect::<Vec<_>>()
            .join("\n");
        let out = kept(&text, true);
        assert!(out.len() <= KEPT_BYTES + 64, "{}", out.len());
        assert!(out.starts_with("?? file-0000.txt\n"));
        let shown = out.lines().count() - 1;
        assert!(
            out.ends_with(&format!("… and {} more lines\n", 2000 - shown)),
            "{out}"
        );
        assert_eq!(kept("?? a\n", true), "?? a\n");
    }
}
