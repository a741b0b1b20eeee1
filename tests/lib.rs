//! One integration-test binary: it links once, which matters on two cores.

mod support;
mod world;

mod accounts;
mod budget;
mod checks;
mod choosing;
mod command_line;
mod launching;
mod mock_selftest;
mod relay;
mod secrets;
mod state;
mod usage;
mod watchdog;
