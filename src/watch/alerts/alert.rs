//! One alert: the watchdog's verdict changed, said once to every configured channel. What
//! `watchdog.json` keeps while it is owed, and what [`super::deliver`] sends.

use serde::{Deserialize, Serialize};

/// One alert, as queued and delivered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Alert {
    pub state: String,
    pub previous: String,
    pub message: String,
    pub rungs: serde_json::Value,
    pub time: String,
}
