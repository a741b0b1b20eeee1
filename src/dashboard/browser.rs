//! `--open`: the page in the user's browser. The browser's command line is readable by
//! every local user (`ps`), so it carries no token: only a one-time address
//! ([`super::access::Onces`]) that opens the page once, within a minute.

use std::process::Stdio;

/// The browser command: `$BROWSER` (its first entry, as `xdg-open` reads it), else `open`
/// on macOS and `xdg-open` elsewhere.
fn command() -> String {
    std::env::var("BROWSER")
        .ok()
        .and_then(|list| {
            list.split(':')
                .map(str::trim)
                .find(|entry| !entry.is_empty())
                .map(str::to_string)
        })
        .unwrap_or_else(|| {
            if cfg!(target_os = "macos") {
                "open".to_string()
            } else {
                "xdg-open".to_string()
            }
        })
}

/// Starts the browser on `url` and lets it run; a browser that cannot start is a notice,
/// not a failure (the printed URL still works).
pub fn open(url: &str) {
    let program = command();
    let started = crate::child_env::command(&program)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    match started {
        Ok(mut child) => {
            // Reaped when it exits (xdg-open returns at once; `$BROWSER` may stay).
            std::thread::spawn(move || child.wait());
        }
        Err(err) => crate::term::notice(&format!(
            "dashboard: could not start {program} ({err}); open the URL above instead"
        )),
    }
}
