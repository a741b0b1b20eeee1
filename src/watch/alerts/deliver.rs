//! Delivering one alert to one channel: Telegram's `sendMessage`, a webhook's JSON POST,
//! or a command with the message as its last argument. HTTP deliveries follow the retry
//! discipline of agent's own calls within what is left of the run's deadline.

use std::time::Duration;

use anyhow::{Context as _, anyhow, bail};
use serde_json::json;

use super::AlertsConfig;
use super::alert::Alert;
use crate::retry::{self, Attempt, RealClock};

/// Each HTTP attempt's own limit (the deadline may shorten it).
const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(15);

pub fn send(
    config: &AlertsConfig,
    channel: &str,
    alert: &Alert,
    left: Duration,
) -> anyhow::Result<()> {
    match channel {
        "telegram" => {
            let telegram = config
                .telegram
                .as_ref()
                .ok_or_else(|| anyhow!("telegram is not configured"))?;
            let token = crate::secret::resolve(
                telegram.bot_token.as_deref(),
                telegram.bot_token_cmd.as_deref(),
                "alerts.telegram.bot_token",
            )?;
            let url = format!(
                "{}/bot{token}/sendMessage",
                telegram.api_url.trim_end_matches('/')
            );
            let body = json!({"chat_id": telegram.chat_id, "text": alert.message, "disable_web_page_preview": true});
            post(&url, &body, left)
        }
        "webhook" => {
            let webhook = config
                .webhook
                .as_ref()
                .ok_or_else(|| anyhow!("the webhook is not configured"))?;
            let url = crate::expand::expand(&webhook.url).context("alerts.webhook.url")?;
            let body = json!({
                "state": alert.state,
                "previous": alert.previous,
                "message": alert.message,
                "rungs": alert.rungs,
                "time": alert.time,
            });
            post(&url, &body, left)
        }
        "command" => {
            let command = config
                .command
                .as_ref()
                .ok_or_else(|| anyhow!("the command is not configured"))?;
            run_command(&command.argv, &alert.message, left)
        }
        other => bail!("unknown alert channel {other}"),
    }
}

fn post(url: &str, body: &serde_json::Value, deadline: Duration) -> anyhow::Result<()> {
    let text = body.to_string();
    let (result, attempts) = retry::run(&RealClock, deadline, ATTEMPT_TIMEOUT, |timeout| {
        let agent = crate::http::client(timeout.max(Duration::from_millis(100)));
        match agent
            .post(url)
            .header("content-type", "application/json")
            .send(text.as_str())
        {
            Ok(response) if response.status().is_success() => Attempt::Final(Ok(())),
            Ok(response) => {
                let status = response.status().as_u16();
                let failure = Err(anyhow!("HTTP {status}"));
                if retry::is_transient_status(status) {
                    Attempt::Transient(failure)
                } else {
                    Attempt::Final(failure)
                }
            }
            Err(err) => {
                Attempt::Transient(Err(anyhow!("{}", crate::probe::snippet(&err.to_string()))))
            }
        }
    });
    result.with_context(|| format!("{} attempt(s) to {}", attempts, crate::probe::host(url)))
}

fn run_command(argv: &[String], message: &str, deadline: Duration) -> anyhow::Result<()> {
    let Some((program, args)) = argv.split_first() else {
        bail!("alerts.command.argv is empty")
    };
    let limit = deadline.min(Duration::from_secs(30));
    let output = crate::child::run(
        crate::child_env::command(program).args(args).arg(message),
        &crate::child::Job::new(limit, crate::child::Group::Shared),
    )
    .with_context(|| format!("starting {program}"))?
    .output();
    match output {
        Ok(output) if output.status.success() => Ok(()),
        Ok(output) => bail!("{program} exited {}", output.status.code().unwrap_or(-1)),
        Err(stopped) => bail!("{program} {stopped}"),
    }
}
