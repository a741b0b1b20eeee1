//! A CLI's exit ends agent's run (issue 39, item 6): whatever the CLI left behind may keep
//! printing into the pipe agent copies, and agent still exits once its CLI has — with the
//! CLI's answer and code — instead of copying the leftover's output forever.

use std::path::Path;

use crate::world::{CLAUDE_THEN_CODEX, world};

/// The printer's rounds: it stops by itself after this many (a minute).
const ROUNDS: u32 = 600;

/// A Claude Code that answers, leaves a printer behind that writes how many rounds it has
/// printed to `rounds`, and exits 0. The printer outlives agent's end of the pipe (it
/// ignores SIGPIPE).
fn answers_and_leaves_a_printer(sb: &crate::support::Sandbox, rounds: &Path) {
    sb.fake_cli("claude")
        .script(&format!(
            "echo 'the answer'\n( trap '' PIPE; i=0; while [ $i -lt {ROUNDS} ]; do echo tick; echo tock >&2; i=$((i+1)); echo $i > '{}'; sleep 0.1; done ) &\nexit 0",
            rounds.display()
        ))
        .install();
}

#[test]
fn agent_exits_with_its_cli_while_a_leftover_keeps_printing() {
    let w = world();
    w.sb.write_config(CLAUDE_THEN_CODEX);
    let rounds = w.sb.root().join("printer.rounds");
    answers_and_leaves_a_printer(&w.sb, &rounds);

    // Headless, stdout a pipe: agent copies (and holds) the CLI's stdout.
    let run = w.sb.run(&["-p", "hi"]);

    // The sandbox ends what agent's group left running once agent is gone: the rounds the
    // printer had printed by then show it was still at it.
    let printed: u32 = std::fs::read_to_string(&rounds)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(!run.timed_out, "agent never ended: {run:?}");
    assert!(
        printed < ROUNDS,
        "the printer had finished: the test proves nothing"
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(run.stdout.starts_with("the answer\n"), "{run:?}");
    assert!(
        run.stdout
            .lines()
            .all(|line| line == "the answer" || line == "tick"),
        "{run:?}"
    );
    assert_eq!(w.sb.calls("codex").len(), 0, "{run:?}");
}
