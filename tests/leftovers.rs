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

/// A held headless stdout has a cap (issue 39, item 7): a CLI that prints 100 MB in its first
/// seconds, with agent's stdout a pipe, gets every byte through in order, and agent's spool
/// never holds more than its 64 MiB on disk — measured by the CLI itself, through agent's
/// open files, once it has written everything (agent has read all but a pipe's worth).
#[test]
fn a_flood_of_held_output_flows_through_in_order_and_never_fills_the_disk() {
    let w = world();
    w.sb.write_config(CLAUDE_THEN_CODEX);
    let spooled = w.sb.root().join("spooled");
    w.sb.fake_cli("claude")
        .script(&format!(
            r#"head -c 104857600 /dev/zero | tr '\0' x
most=0
for fd in /proc/$PPID/fd/*; do
  case "$(readlink "$fd")" in *agent-stdout*) size=$(stat -L -c %s "$fd"); [ "$size" -gt "$most" ] && most=$size;; esac
done
echo "$most" > '{}'
exit 0"#,
            spooled.display()
        ))
        .install();

    let run = w.sb.run(&["-p", "hi"]);

    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(run.stdout.len(), 104_857_600, "{}", run.stderr);
    assert!(run.stdout.bytes().all(|b| b == b'x'));
    let most: u64 = std::fs::read_to_string(&spooled)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(most <= 64 << 20, "agent spooled {most} bytes to disk");
    assert!(
        run.stderr.contains("written through as it comes"),
        "{}",
        run.stderr
    );
}
