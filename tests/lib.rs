//! One integration-test binary: it links once, which matters on two cores.

mod support;
mod world;

mod accounts;
mod alerts_replicas;
mod bad_input;
mod budget;
mod checks;
mod children;
mod choosing;
mod command_line;
mod config_errors;
mod dashboard;
mod endpoints;
mod foreign_files;
mod launching;
mod layers;
mod login_usage;
mod logins;
mod logins_pool;
mod mock_selftest;
mod parking;
mod relay;
mod relay_clients;
mod relay_hostile;
mod relay_shared_health;
mod secrets;
mod self_checks;
mod service_files;
mod state;
mod statusline;
mod team_relay;
mod team_state;
mod usage;
mod waiting;
mod watchdog;
