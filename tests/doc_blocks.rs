//! The README and the pages in `docs/` cannot rot (issue 43, item 5): every block that shows
//! what agent prints is a transcript (`$ agent …` and what followed) that this test runs,
//! in a sandbox set up as the page's words describe (its scene, named on the line above
//! the block: `<!-- output: NAME -->`), and compares with what this build prints. Only what
//! must differ from run to run is left out of the comparison ([`masks`]); the sandbox's
//! paths are put in the page's words (`/home/you`) first ([`scenes`]). A block fenced for a
//! language (`sh`, `toml` …) is what the user types; every `toml` block is a configuration
//! agent loads without a word of complaint.
//!
//! When a page's block and agent's output part, the failure prints agent's output in the
//! page's words, ready to paste once the change is the one meant; `AGENT_DOCS_SHOW=1` prints
//! every transcript so (`cargo test --test lib doc_blocks -- --nocapture`).
//!
//! `docs/on-ramp.md` is the transcript of a walk with the real CLIs; `tests/e2e/onramp.rs`
//! writes it and, in the end-to-end suite, holds it to the same masks.

pub mod masks;
pub mod page;
mod scenes;

use page::{Block, blocks, steps};

/// Pages whose blocks another test holds to agent's output.
const CHECKED_ELSEWHERE: &[(&str, &str)] = &[(
    "docs/on-ramp.md",
    "the real CLIs' walk: tests/e2e/onramp.rs writes it and compares it",
)];

fn checked_here(block: &Block) -> bool {
    !CHECKED_ELSEWHERE
        .iter()
        .any(|(page, _)| *page == block.page)
}

#[test]
fn every_block_that_shows_agents_output_is_what_this_build_prints() {
    let mut failures = Vec::new();
    let mut checked = 0;
    let mut used = std::collections::BTreeSet::new();
    for block in blocks().iter().filter(|block| checked_here(block)) {
        if !block.shows_output() {
            if block.scene.is_some() {
                failures.push(format!(
                    "{}: a ```{} block is what the user types; a transcript is fenced ```console",
                    block.at(),
                    block.lang
                ));
            }
            continue;
        }
        let Some(name) = &block.scene else {
            failures.push(format!(
                "{}: this block shows output but names no scene to prove it (`<!-- output: NAME -->` above its fence)",
                block.at()
            ));
            continue;
        };
        used.insert(name.clone());
        let steps = match steps(block) {
            Ok(steps) => steps,
            Err(why) => {
                failures.push(why);
                continue;
            }
        };
        let Some(scene) = scenes::scene(name) else {
            failures.push(format!("{}: no scene called {name:?}", block.at()));
            continue;
        };
        checked += 1;
        let mut printed = String::new();
        let mut mismatch = None;
        for step in &steps {
            let actual = scene.run(&step.command);
            printed.push_str("$ ");
            printed.push_str(&step.command);
            printed.push('\n');
            for line in &actual {
                printed.push_str(line);
                printed.push('\n');
            }
            if mismatch.is_none()
                && let Err(why) = masks::matches(&step.printed, &actual)
            {
                mismatch = Some(format!("`{}`: {why}", step.command));
            }
        }
        if std::env::var_os("AGENT_DOCS_SHOW").is_some() {
            eprintln!("{} ({name}):\n{printed}---", block.at());
        }
        if let Some(why) = mismatch {
            failures.push(format!(
                "{} ({name}): {why}\n--- agent printed, in the page's words:\n{printed}---",
                block.at()
            ));
        }
    }
    for name in scenes::NAMES {
        if !used.contains(*name) {
            failures.push(format!("the scene {name:?} shows no block of any page"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(
        checked >= 20,
        "only {checked} transcripts checked: is the search right?"
    );
}

#[test]
fn a_block_the_user_types_holds_no_transcript() {
    let mut failures = Vec::new();
    for block in blocks().iter().filter(|block| block.lang == "sh") {
        for line in &block.body {
            if line.starts_with("$ ") || line.starts_with("[agent]") {
                failures.push(format!(
                    "{}: {line:?} is output or a prompt: fence the block ```console and name its scene",
                    block.at()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_configuration_on_a_page_is_one_agent_loads_without_complaint() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for block in blocks().iter().filter(|block| block.lang == "toml") {
        checked += 1;
        let (code, said) = scenes::load_configuration(&block.body.join("\n"));
        if code != Some(0) || !said.trim().is_empty() {
            failures.push(format!(
                "{}: `agent --list` with this configuration exits {code:?}:\n{said}",
                block.at()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(checked >= 8, "only {checked} configurations found");
}

#[test]
fn every_page_is_linked_from_the_readme_and_named_at_the_foot_of_help() {
    let readme = std::fs::read_to_string(page::repo().join("README.md")).unwrap();
    let help = crate::support::Sandbox::new().run(&["--help"]);
    assert_eq!(help.code, Some(0), "{help:?}");
    let mut missing = Vec::new();
    for path in page::pages().iter().skip(1) {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !readme.contains(&format!("](docs/{name}")) {
            missing.push(format!("README.md links no docs/{name}"));
        }
        if !help.stdout.contains(&format!("docs/{name}")) {
            missing.push(format!("--help names no docs/{name}"));
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

#[test]
fn the_masks_let_through_a_different_instant_and_nothing_else() {
    let page = |lines: &[&str]| lines.iter().map(ToString::to_string).collect::<Vec<_>>();
    let same = [
        (
            "[agent] Claude Code (claude-opus-5) unavailable — weekly Opus limit, resets Thu 09:00",
            "[agent] Claude Code (claude-opus-5) unavailable — weekly Opus limit, resets 23:41",
        ),
        (
            "OK       codex    answered the CLI's own check, 4.2 s · login (plus), token expires 2026-09-14; window unknown",
            "OK       codex    answered the CLI's own check, 12 ms · login (plus), token expires 2027-12-03; window unknown",
        ),
        (
            "[agent] waiting for Claude Code (claude-opus-5) — reopens 15:00, 41:12 left (Ctrl-C to stop)",
            "[agent] waiting for Claude Code (claude-opus-5) — reopens Fri 00:02, 2:00:13 left (Ctrl-C to stop)",
        ),
        (
            "… in 42 min; `claude --resume 5f0c1e9a-1111-4222-8333-944455556666`",
            "… in 1 h 3 min; `claude --resume 0b9e2c1d-2222-4333-8444-a55566667777`",
        ),
        (
            "dashboard: http://127.0.0.1:40117/?token=agd-5f0c1e9a0b9e2c1d",
            "dashboard: http://127.0.0.1:5121/?token=agd-0b9e2c1d5f0c1e9a",
        ),
        (
            r#"{"seconds": 3612.5, "reset": "2026-12-02T15:00:00Z"}"#,
            r#"{"seconds": 1.31, "reset": "2026-12-04T11:09:14Z"}"#,
        ),
    ];
    for (shown, printed) in same {
        assert_eq!(
            masks::matches(&page(&[shown]), &page(&[printed])),
            Ok(()),
            "{shown}"
        );
    }
    let differ = [
        ("resets Thu 09:00", "resets at 9am Thursday"),
        ("5h 42% ↺15:00 · 7d 81%", "5h 42% ↺15:00 · 7d 82%"),
        (
            "exited 1 after 2s — treating as unavailable",
            "exited 1 after 2s — passed over",
        ),
        ("token expires 2026-09-14", "token expires 14/09/2026"),
        ("0 of 500 calls", "0 of 5000 calls"),
        ("rung 1 of 8", "rung 1 of 7"),
    ];
    for (shown, printed) in differ {
        assert!(
            masks::matches(&page(&[shown]), &page(&[printed])).is_err(),
            "{shown:?} let {printed:?} through"
        );
    }
    // `…` alone: one line or more left out; at a line's end: the rest of that line.
    let printed = page(&["a", "b", "c", "d long line"]);
    assert_eq!(
        masks::matches(&page(&["a", "…", "d long …"]), &printed),
        Ok(())
    );
    assert!(masks::matches(&page(&["a", "…", "b", "d long …"]), &printed).is_err());
    assert!(masks::matches(&page(&["a", "b", "c"]), &printed).is_err());
    assert!(masks::matches(&page(&["a", "…", "c", "d", "e"]), &printed).is_err());
}
