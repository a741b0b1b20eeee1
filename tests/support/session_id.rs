//! The session id agent gives Claude Code: a launch whose words name no session gets
//! `--session-id <random v4 UUID>` from agent (DESIGN §21), so agent knows which session
//! it started. Tests that compare what Claude Code received check that id here and then
//! compare the rest — the user's words as they became — exactly.

/// The words a Claude Code (or Gemini CLI) launch received, less the `--session-id <UUID>`
/// agent gave it.
///
/// Panics unless the flags (the words before any `--`) hold `--session-id` exactly once,
/// followed by a version 4 UUID: a launch whose id is missing, doubled or malformed fails
/// its test rather than passing on the rest of its words.
pub fn launched_words(argv: &[String]) -> Vec<String> {
    let flags = argv.iter().position(|w| w == "--").unwrap_or(argv.len());
    let named: Vec<usize> = argv[..flags]
        .iter()
        .enumerate()
        .filter(|(_, w)| *w == "--session-id" || w.starts_with("--session-id="))
        .map(|(i, _)| i)
        .collect();
    let [at] = named[..] else {
        panic!("the CLI was not given exactly one --session-id: {argv:?}");
    };
    assert_eq!(
        argv[at], "--session-id",
        "agent's id is a word of its own: {argv:?}"
    );
    let id = argv
        .get(at + 1)
        .unwrap_or_else(|| panic!("--session-id has no id: {argv:?}"));
    assert!(is_v4_uuid(id), "not a v4 UUID: {id:?} in {argv:?}");
    let mut words = argv.to_vec();
    words.drain(at..at + 2);
    words
}

/// `8-4-4-4-12` lowercase hex digits with version nibble 4 and the RFC 4122 variant
/// (`8`, `9`, `a` or `b`) — the form Claude Code's `--session-id` takes.
pub fn is_v4_uuid(text: &str) -> bool {
    let groups: Vec<&str> = text.split('-').collect();
    let lengths_ok = groups.iter().map(|g| g.len()).eq([8, 4, 4, 4, 12]);
    let hex_ok = groups.iter().all(|g| {
        g.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    });
    lengths_ok
        && hex_ok
        && groups[2].starts_with('4')
        && groups[3].starts_with(['8', '9', 'a', 'b'])
}
