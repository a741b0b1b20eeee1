//! The watchdog's face: alerts on a change of verdict, and the schedules and service files
//! that run `--check-fallback` unattended.

pub mod alerts;
pub mod schedule;
