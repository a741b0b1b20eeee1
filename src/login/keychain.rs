//! Reading a generic password from the macOS Keychain, the way the CLIs read their own:
//! `security find-generic-password [-a ACCOUNT] -w -s SERVICE`. Never anything that writes,
//! and never waiting on a prompt: a locked Keychain that asks the user is given up on.

use std::process::Command;
use std::time::Duration;

/// How long `security` may take.
const TIMEOUT: Duration = Duration::from_secs(5);

/// The password of the generic item `service` (of `account`, else of `$USER` as Claude
/// Code asks), registered for redaction at once; `None` when there is none.
pub fn read(service: &str, account: Option<&str>) -> Option<String> {
    let mut command = crate::child_env::command("/usr/bin/security");
    command.arg("find-generic-password");
    let user = std::env::var("USER").ok().filter(|u| !u.is_empty());
    if let Some(account) = account.or(user.as_deref()) {
        command.args(["-a", account]);
    }
    command.args(["-w", "-s", service]);
    let job = crate::child::Job::new(TIMEOUT, crate::child::Group::Shared);
    let output = crate::child::run(&mut command, &job).ok()?.output().ok()?;
    let text = String::from_utf8(output.stdout).ok()?.trim().to_string();
    super::forget_token(Some(&text));
    (output.status.success() && !text.is_empty()).then_some(text)
}
