//! The zero-cost credential check (DESIGN.md §7): `GET /v1/models` with the account's own
//! credential. 200 valid, 401 invalid, 403 organisation disabled, anything else (429, a
//! network error) unknown. A model list proves a key, never a model's liveness: probes do
//! that. It is one of agent's own calls, so it follows the retry discipline.

use std::time::Duration;

use super::AccountDef;
use crate::config::Backend;
use crate::retry::{self, Attempt, RealClock};

const DEADLINE: Duration = Duration::from_secs(12);
const ATTEMPT: Duration = Duration::from_secs(8);

pub use crate::state::account_health::CheckResult;

/// Where the account's API lives and how its credential is sent: the endpoint the
/// launched CLI would use with this account ([`crate::backend::resolve`]), so the check
/// reaches the host a probe and a launch reach, with the same credential.
fn endpoint(
    backend: &Backend,
    account: &AccountDef,
    secret: &str,
) -> Result<crate::backend::Endpoint, String> {
    let mut set = crate::backend::endpoint::backend_env(backend).map_err(|err| err.reason)?;
    let var = crate::accounts::secret_var(
        account,
        backend,
        &crate::adapter::Env::child(&set, &backend.env_remove),
    );
    set.retain(|(name, _)| name != &var);
    set.push((var.clone(), secret.to_string()));
    let child = crate::adapter::Env::child(&set, &backend.env_remove);
    let account = crate::backend::Account {
        name: &account.name,
        var: &var,
    };
    crate::backend::resolve(backend, Some(account), &child).map_err(|err| err.reason)
}

/// Checks `secret` for `account` of `backend`.
pub fn check(backend: &Backend, account: &AccountDef, secret: &str) -> CheckResult {
    crate::redact::register(secret);
    let (url, headers) = match endpoint(backend, account, secret) {
        Ok(endpoint) => (endpoint.models_url(), endpoint.headers()),
        Err(why) => return CheckResult::Unknown(format!("cannot tell where to check: {why}")),
    };
    let (result, _attempts) = retry::run(&RealClock, DEADLINE, ATTEMPT, |timeout| {
        let agent = crate::http::client(timeout.max(Duration::from_millis(200)));
        let mut call = agent.get(&url);
        for (name, value) in &headers {
            call = call.header(*name, value);
        }
        match call.call() {
            Ok(mut response) => {
                let status = response.status().as_u16();
                let body = response.body_mut().read_to_string().unwrap_or_default();
                let why = crate::text::snippet(&crate::redact::redact(&body));
                match status {
                    200..=299 => Attempt::Final(CheckResult::Valid),
                    401 => Attempt::Final(CheckResult::Invalid(why)),
                    403 => Attempt::Final(CheckResult::Disabled(why)),
                    s if retry::is_transient_status(s) => {
                        Attempt::Transient(CheckResult::Unknown(format!("HTTP {s}")))
                    }
                    s => Attempt::Final(CheckResult::Unknown(format!("HTTP {s}: {why}"))),
                }
            }
            Err(err) => Attempt::Transient(CheckResult::Unknown(crate::text::snippet(
                &crate::redact::redact(&err.to_string()),
            ))),
        }
    });
    result
}
