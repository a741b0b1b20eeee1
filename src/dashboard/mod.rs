//! `agent --dashboard`: a local page of health, windows, budget and usage, drawn from the
//! same documents as `--status --json`, `--usage --json` and `--budget status --json`.
//! Loopback only unless `--allow-remote`; every route but the one-time login answers 401
//! without a session (opened by the URL printed, once) or the relay's token.
//!
//! The tokio runtime is built here, only for this mode: the launcher never starts one.

mod access;
mod browser;
mod chart;
mod documents;
mod html;
mod logins;
pub mod page;
mod rungs;
mod server;
mod summary;
mod tasks;
mod usage_figures;
mod words;

use std::process::ExitCode;

use crate::cli::dashboard::DashboardCli;
use crate::config::Config;

/// The page and its documents at `/dashboard…`, for `agent --relay serve` with `[relay]
/// dashboard = true`, on the relay's address `listening`: the relay's token, as the relay
/// loaded it, opens them, as a bearer or in `/dashboard?token=…`, which opens a session of
/// the page's own (there is no printed URL).
pub fn under_relay(
    config: &Config,
    relay_token: crate::access::Token,
    listening: std::net::IpAddr,
) -> axum::Router {
    let access = access::Access::new(None, Some(relay_token));
    server::router(&std::sync::Arc::new(server::Dashboard::new(
        config,
        access,
        "/dashboard",
        listening,
    )))
}

/// `agent --dashboard …`.
pub fn run(config: &Config, args: &[String]) -> anyhow::Result<ExitCode> {
    let cli: DashboardCli = match crate::cli::parse_sub(args) {
        Ok(cli) => cli,
        Err(code) => return Ok(code),
    };
    let addr = crate::access::listen_address("--listen", &cli.listen, cli.allow_remote)?;
    server::serve(config, addr, cli.open)
}

/// Tests only: the one rule's states, fed to every face — here because the dashboard is the
/// face that may draw on all the others.
#[cfg(test)]
mod rung_faces_tests;

/// Tests only: a CLI registered once (the test build's stand-in) is seen by every face that
/// lists the CLIs — here for the same reason.
#[cfg(test)]
mod every_cli_tests;
