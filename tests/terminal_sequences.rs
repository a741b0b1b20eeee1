//! A CLI's colours never reach what agent says of it (issue 32, item 8): the words agent
//! quotes from a CLI — a probe's output in a notice, a `--status` row, an alert — keep
//! their text and lose every terminal sequence, whole, and what is left of one whose ESC
//! was lost or cut off (`[0m`, `[91m`).

use crate::support::{MockApi, Reply, Rule};
use crate::world::world;

/// What opencode prints when it fails: coloured words, a fragment whose ESC was lost,
/// and a sequence cut off at the end.
const COLOURED: &str = "\x1b[91mError:\x1b[0m provider refused the key[0m\n\x1b[2K\x1b[1;3";

/// What must not be left of [`COLOURED`] anywhere agent writes.
const PIECES: [&str; 5] = ["\x1b", "[0m", "[91m", "[2K", "[1;3"];

#[test]
fn a_clis_colour_sequences_reach_neither_the_notice_nor_the_row_nor_the_alert() {
    let w = world();
    let hook = MockApi::start();
    hook.on(Rule::path_contains("/hook").reply(Reply::status(200).body("ok")));
    w.sb.write_config(&format!(
        "[alerts.webhook]\nurl = \"{}/hook\"\n\n[[rungs]]\nbackend = \"claude\"\nprobe_model = \"opus\"\n\n[[rungs]]\nbackend = \"opencode\"\n\n[[rungs]]\nbackend = \"codex\"\n",
        hook.url()
    ));
    // opencode's probe is opencode itself (`opencode run hi`): it fails in colour.
    w.sb.fake_cli("opencode").stderr(COLOURED).exit(1).install();
    w.api
        .on(Rule::model("claude-opus-5").reply(Reply::status(503).body("down")));

    let launch = w.sb.run(&["-p", "hi"]);
    let status = w.sb.run(&["--status"]);
    let check = w.sb.run(&["--check-fallback"]);

    assert_eq!(launch.code, Some(0), "{launch:?}");
    assert_eq!(w.sb.calls("codex").len(), 1, "{launch:?}");
    let notice = launch
        .stderr
        .lines()
        .find(|l| l.starts_with("[agent] ") && l.contains("provider refused the key"))
        .unwrap_or_else(|| panic!("no notice quotes opencode: {}", launch.stderr));
    let row = status
        .stdout
        .lines()
        .find(|l| l.contains("opencode") && l.contains("provider refused the key"))
        .unwrap_or_else(|| panic!("no row quotes opencode: {status:?}"));
    let alerts = hook.post_requests();
    assert_eq!(alerts.len(), 1, "{check:?}");
    let alert = alerts[0].json();
    let message = alert["message"].as_str().unwrap();
    assert!(message.contains("provider refused the key"), "{message}");
    for (place, text) in [
        ("the launch's notice", notice.to_string()),
        ("the --status row", row.to_string()),
        ("the alert's message", message.to_string()),
        ("the alert's rows", alert["rungs"].to_string()),
        ("--check-fallback", check.stdout.clone()),
    ] {
        for piece in PIECES {
            assert!(!text.contains(piece), "{place} holds {piece:?}: {text}");
        }
        assert!(
            text.contains("Error: provider refused the key"),
            "{place} lost opencode's words: {text}"
        );
    }
}
