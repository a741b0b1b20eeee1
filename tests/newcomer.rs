//! A newcomer's first ten minutes (issue 6/6): a HOME logged in to Claude Code, Codex and
//! Gemini CLI by subscription (fixture files), no API key, no proxy — `--doctor`,
//! `--status`, `--check-fallback`, `--install-statusline` — each report saying each thing
//! once, in rows a terminal can hold.

use std::collections::HashMap;

use crate::logins::logged_in;

/// Rows longer than this wrap on a laptop's terminal beside an editor.
const ROW_MAX: usize = 170;

fn rows(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .collect()
}

/// Every run of `words` consecutive words that appears on two rows or more.
fn repeated_phrases(lines: &[&str], words: usize) -> Vec<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    for line in lines {
        let tokens: Vec<&str> = line.split_whitespace().collect();
        let mut on_this_line = std::collections::HashSet::new();
        for window in tokens.windows(words) {
            on_this_line.insert(window.join(" "));
        }
        for phrase in on_this_line {
            *seen.entry(phrase).or_default() += 1;
        }
    }
    let mut repeated: Vec<String> = seen
        .into_iter()
        .filter(|(_, count)| *count > 1)
        .map(|(phrase, _)| phrase)
        .collect();
    repeated.sort();
    repeated
}

#[test]
fn a_subscription_users_first_reports_say_each_thing_once_in_rows_that_fit() {
    let (sb, _api) = logged_in();

    let doctor = sb.run(&["--doctor"]);
    let status = sb.run(&["--status"]);
    let check = sb.run(&["--check-fallback"]);
    let install = sb.run(&["--install-statusline"]);

    assert_eq!(doctor.code, Some(0), "{doctor:?}");
    assert_eq!(install.code, Some(0), "{install:?}");

    let status_rows = rows(&status.stdout);
    for row in &status_rows {
        assert!(
            row.chars().count() <= ROW_MAX,
            "{} chars: {row}",
            row.chars().count()
        );
    }
    // The 120-character sentence every login row used to end with is gone, and no
    // explanation is said on two rows: a phrase with no figure of its own (a time, a date,
    // a percent) on several rows is a shared sentence, which belongs once or nowhere.
    assert!(
        !status
            .stdout
            .contains("the fast-fail net guards the launch"),
        "{}",
        status.stdout
    );
    let repeated: Vec<String> = repeated_phrases(&status_rows, 8)
        .into_iter()
        .filter(|phrase| !phrase.chars().any(|c| c.is_ascii_digit()))
        .collect();
    assert!(
        repeated.is_empty(),
        "said on several rows: {repeated:?}\n{}",
        status.stdout
    );
    // The proxy backend nobody configured is one line, not one per rung.
    let proxy: Vec<&&str> = status_rows
        .iter()
        .filter(|row| row.contains("claude-proxy"))
        .collect();
    assert_eq!(proxy.len(), 1, "{}", status.stdout);
    assert!(proxy[0].starts_with("SKIP"), "{}", proxy[0]);
    assert!(proxy[0].contains("claude-proxy (2 rungs)"), "{}", proxy[0]);
    // A login row says how it was proved, never only that its file exists.
    let codex = status_rows
        .iter()
        .find(|row| row.contains(" codex "))
        .unwrap();
    assert!(codex.starts_with("OK"), "{codex}");
    assert!(codex.contains("answered the CLI's own check"), "{codex}");

    // --check-fallback: a verdict line, then one line per rung.
    let check_rows = rows(&check.stdout);
    let verdict = check_rows[0];
    assert!(
        verdict.chars().count() <= ROW_MAX,
        "{} chars: {verdict}",
        verdict.chars().count()
    );
    for row in &check_rows[1..] {
        assert!(
            row.starts_with("  ") || row.starts_with("primary vendor"),
            "one line per rung: {row}"
        );
        assert!(row.chars().count() <= ROW_MAX + 2, "{row}");
    }
    for rung in ["codex", "gemini", "agy"] {
        let lines = check_rows[1..]
            .iter()
            .filter(|row| row.contains(&format!(" {rung} ")))
            .count();
        assert_eq!(lines, 1, "{rung}: {}", check.stdout);
    }

    // What the other first commands say to a subscription user.
    let dry = sb.run(&["--dry-run", "-p", "hi"]);
    assert!(
        dry.stdout
            .starts_with("would run: Claude Code (its default model) — rung 1 of "),
        "the label names what runs, not the probe's model: {}",
        dry.stdout
    );
    let budget = sb.run(&["--budget", "status"]);
    assert!(
        budget.stdout.contains("counts agent's own calls"),
        "{}",
        budget.stdout
    );
    let accounts = sb.run(&["--accounts", "list"]);
    assert!(
        accounts.stdout.contains("its own login (max)"),
        "the CLI's own login, not 'no accounts' alone: {}",
        accounts.stdout
    );

    // The dashboard opens on a summary: what a launch runs now.
    let dashboard = crate::dashboard::Dashboard::start(&sb);
    let session = dashboard.log_in();
    let page = crate::dashboard::get(&dashboard.addr, "/", &session).body;
    assert!(page.contains("class=\"summary\""), "{page}");
    assert!(page.contains("A launch runs <strong>"), "{page}");
    assert!(!page.contains(" calls 1 "), "{page}");
}

#[test]
fn the_on_ramps_install_step_says_what_it_would_put_where_and_changes_nothing() {
    let prefix = tempfile::tempdir().unwrap();
    let target = prefix.path().join("opt");
    let root = env!("CARGO_MANIFEST_DIR");
    let out = std::process::Command::new("sh")
        .arg(format!("{root}/install.sh"))
        .args(["--dry-run", "--prefix"])
        .arg(&target)
        .current_dir(root)
        .output()
        .unwrap();
    let stderr = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{stderr}");
    for (from, to) in [
        ("target/release/agent", "bin/agent"),
        ("man/agent.1", "share/man/man1/agent.1"),
        ("completions/_agent", "share/zsh/site-functions/_agent"),
    ] {
        let line = format!("would install {root}/{from} -> {}/{to}", target.display());
        assert!(stderr.contains(&line), "{line}\n{stderr}");
    }
    assert!(stderr.contains("dry run: nothing was changed"), "{stderr}");
    assert!(!target.exists(), "a dry run made {}", target.display());
}

/// `install.sh` in `--dry-run` under `prefix`, its shell `SHELL=shell`: what it says.
fn install_says(prefix: &std::path::Path, shell: &str) -> String {
    let root = env!("CARGO_MANIFEST_DIR");
    let out = std::process::Command::new("sh")
        .arg(format!("{root}/install.sh"))
        .args(["--dry-run", "--no-build", "--prefix"])
        .arg(prefix)
        .env("SHELL", shell)
        .current_dir(root)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn the_install_says_how_to_turn_the_completions_on_in_the_users_shell() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("opt");

    let zsh = install_says(&prefix, "/bin/zsh");
    let fish = install_says(&prefix, "/usr/bin/fish");
    let bash = install_says(&prefix, "/bin/bash");
    let other = install_says(&prefix, "/bin/dash");

    let site = prefix.join("share/zsh/site-functions");
    assert!(
        zsh.contains(&format!(
            "completions for zsh: add to ~/.zshrc, before compinit runs:\n    fpath=(\"{}\" $fpath)\n    autoload -Uz compinit && compinit",
            site.display()
        )),
        "{zsh}"
    );
    assert!(!zsh.contains("completions for fish"), "{zsh}");
    assert!(
        fish.contains(&format!(
            "set -p fish_complete_path \"{}\"",
            prefix.join("share/fish/vendor_completions.d").display()
        )),
        "{fish}"
    );
    assert!(
        bash.contains(&format!(
            "source \"{}\"",
            prefix
                .join("share/bash-completion/completions/agent")
                .display()
        )),
        "{bash}"
    );
    // A shell it does not know: all three.
    for shell in ["bash", "zsh", "fish"] {
        assert!(
            other.contains(&format!("completions for {shell}:")),
            "{other}"
        );
    }
    assert!(!prefix.exists());
}
