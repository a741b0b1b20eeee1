//! A removed account's history on the dashboard (issue 5/5 item 8): the windows a login
//! account's CLI reported outlive `agent --accounts remove`, and the page names them by the
//! account they were — "removed account work" — not as an unnamed "Claude Code login".

use jiff::{SignedDuration, Timestamp};
use serde_json::json;

use crate::dashboard::{Dashboard, get};
use crate::world::world;

/// The `<h3>` the page's windows panel heads the login kept in `dir` with.
fn heading_of(page: &str, dir: &str) -> String {
    let start = format!("<h3 title=\"{dir}\">");
    let Some((_, rest)) = page.split_once(&start) else {
        panic!("no heading for {dir} in {page}");
    };
    rest.split_once("</h3>").unwrap().0.to_string()
}

fn page(sb: &crate::support::Sandbox) -> String {
    let dashboard = Dashboard::start(sb);
    let session = dashboard.log_in();
    let page = get(&dashboard.addr, "/", &session);
    assert_eq!(page.status, 200, "{page:?}");
    page.body
}

/// `agent --accounts add work` of the Claude login in `dir`.
fn add_work(sb: &crate::support::Sandbox, dir: &str) -> crate::support::Run {
    sb.run(&[
        "--accounts",
        "add",
        "work",
        "--backend",
        "claude",
        "--kind",
        "login",
        "--dir",
        dir,
    ])
}

/// A Claude login account `work` in `~/.claude-work` over a Claude rung then Codex, with
/// a 5-hour window its statusline reported; and the directory.
fn work_with_a_window() -> (crate::world::World, String) {
    let w = world();
    w.sb.env_remove("AGENT_PROXY_URL");
    w.sb.env_remove("AGENT_PROXY_KEY");
    let dir = w.sb.home().join(".claude-work").display().to_string();
    w.sb.write_file(
        ".claude-work/.credentials.json",
        &json!({"claudeAiOauth": {
            "accessToken": "sk-ant-oat01-WORKaccess-2222", "refreshToken": "sk-ant-ort01-WORKrefresh-3333",
            "expiresAt": 1_789_387_200_000_u64, "scopes": ["user:inference"],
            "subscriptionType": "max"}})
        .to_string(),
    );
    w.sb.write_config("[[rungs]]\nbackend = \"claude\"\n\n[[rungs]]\nbackend = \"codex\"\n");
    let added = add_work(&w.sb, &dir);
    assert_eq!(added.code, Some(0), "{added:?}");
    let now = Timestamp::now();
    std::fs::write(
        w.sb.state_dir().join("windows.json"),
        json!({"logins": {format!("claude:{dir}"): [{"scope": {"kind": "five_hour"},
            "used_percent": 40.0, "resets_at": (now + SignedDuration::from_hours(3)).to_string(),
            "source": "statusline", "observed_at": now.to_string()}]}})
        .to_string(),
    )
    .unwrap();
    (w, dir)
}

#[test]
fn a_login_accounts_windows_are_named_by_its_account() {
    let (w, dir) = work_with_a_window();
    assert_eq!(
        heading_of(&page(&w.sb), &dir),
        "Claude Code Max login · work"
    );
}

#[test]
fn a_removed_login_accounts_windows_are_named_by_the_account_they_were() {
    let (w, dir) = work_with_a_window();

    let removed = w.sb.run(&["--accounts", "remove", "work"]);
    assert_eq!(removed.code, Some(0), "{removed:?}");
    let after = heading_of(&page(&w.sb), &dir);
    assert_eq!(after, "Claude Code login · removed account work");

    // Added again, it is an account again: its row names it, nothing calls it removed.
    let again = add_work(&w.sb, &dir);
    assert_eq!(again.code, Some(0), "{again:?}");
    let windows = std::fs::read_to_string(w.sb.state_dir().join("windows.json")).unwrap();
    assert!(!windows.contains("\"removed\""), "{windows}");
    assert_eq!(
        heading_of(&page(&w.sb), &dir),
        "Claude Code Max login · work"
    );
}
