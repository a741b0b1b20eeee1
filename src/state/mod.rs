//! Every record agent keeps on disk, and the one door to each: `file` (locked, atomic,
//! no links followed, all-or-nothing appends), `json_file` (a JSON state file with the
//! corrupt rule), and the records themselves. Health records what probes found; it never
//! calls the network.

pub mod account_health;
pub mod budget;
pub mod events;
pub mod file;
pub mod forecast;
pub mod health;
pub mod json_file;
pub mod ledger;
pub mod meter;
pub mod relay_clients;
pub mod store;
pub mod target;
pub mod tasks;
pub mod window;
pub mod windows;
