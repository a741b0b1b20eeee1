//! The brief's shape as a Markdown reader sees it, for the tests that check it: its
//! sections in order, and the headings outside every fence (what a quoted prompt could forge
//! if it closed its fence).

/// The brief's sections below its title, in order.
pub(super) const SECTIONS: [&str; 7] = [
    "## The task",
    "## The plan",
    "## What is done",
    "## The commands it ran",
    "## Where it stopped",
    "## What to do next",
    "## Source",
];

/// The headings a Markdown reader sees: those outside every fence (a fence closes only on a
/// line of at least as many backticks as opened it).
pub(super) fn headings(text: &str) -> Vec<&str> {
    let mut open: Option<usize> = None;
    let mut found = Vec::new();
    for line in text.lines() {
        let ticks = line.len() - line.trim_start_matches('`').len();
        match open {
            Some(n) if ticks >= n && line.trim_start_matches('`').trim().is_empty() => {
                open = None;
            }
            None if ticks >= 3 => open = Some(ticks),
            None if line.starts_with('#') => found.push(line),
            Some(_) | None => {}
        }
    }
    found
}
