//! Which transcript calls went through the relay, and in which run: what the ledger's scan
//! ([`scan`](super::scan)) finds directly and a [`RelayIndex`](super::relay_index) finds
//! later, so a call the relay carried is counted on the relay's side only.

use std::collections::HashMap;

/// Which transcript calls went through the relay, and in which run.
#[derive(Debug, Default)]
pub struct Links {
    /// Transcript call (index) → the run of the relay line with the same request or
    /// message id.
    pub by_id: Vec<(usize, Box<str>)>,
    /// CLI session → the run of a relay line that carried it.
    pub by_session: HashMap<Box<str>, Box<str>>,
}

impl Links {
    /// Adds another part's links: every call's, and a session's run unless this part has
    /// one already.
    pub fn merge(&mut self, other: Links) {
        self.by_id.extend(other.by_id);
        for (session, run) in other.by_session {
            self.by_session.entry(session).or_insert(run);
        }
    }
}
