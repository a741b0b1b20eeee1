//! A login as a person knows it — by its CLI, plan and account, `Claude Code Max login ·
//! work` — with the directory or fingerprint it is keyed by only as a detail.

use std::collections::BTreeMap;

use serde_json::Value;

/// A login's name and its detail (the directory, or the token's fingerprint).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoginName {
    pub label: String,
    pub detail: String,
}

/// The CLI named `cli` (a login key's `claude:`) as people know it, by its adapter: a CLI
/// agent has no adapter for (a key an older agent filed) is named by its key's word.
fn cli_name(cli: &str) -> String {
    crate::adapter::Family::named(cli).map_or_else(
        || cli.to_string(),
        |family| family.display_name().to_string(),
    )
}

fn capitalised(word: &str) -> String {
    let mut chars = word.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_uppercase().chain(chars).collect()
    })
}

/// The name of a row's `login` (`{cli, key, origin, plan}`, `LoginRung::json`).
pub fn of_json(login: &Value) -> Option<LoginName> {
    let key = login["key"].as_str()?;
    let cli = login["cli"]
        .as_str()
        .or_else(|| key.split_once(':').map(|(cli, _)| cli))
        .unwrap_or("");
    let mut label = cli_name(cli);
    if let Some(plan) = login["plan"].as_str().filter(|p| !p.is_empty()) {
        label.push(' ');
        label.push_str(&capitalised(plan));
    }
    label.push_str(" login");
    match login["origin"].as_str() {
        _ if login["account"].is_string() => {
            label.push_str(" · ");
            label.push_str(login["account"].as_str().unwrap_or_default());
        }
        Some(origin) if origin.starts_with("account:") => {
            label.push_str(" · ");
            label.push_str(&origin["account:".len()..]);
        }
        Some(origin) if origin.starts_with("env:") => {
            label.push_str(" · from $");
            label.push_str(&origin["env:".len()..]);
        }
        _ => {}
    }
    Some(LoginName {
        label,
        detail: detail(key),
    })
}

/// What the key is of: `claude:/home/me/.claude` → `/home/me/.claude`.
fn detail(key: &str) -> String {
    key.split_once(':')
        .map_or(key, |(_, rest)| rest)
        .to_string()
}

/// Every login the rows name, by key; a login known only by its windows is named by
/// [`of_key`].
pub fn by_key(rows: &Value) -> BTreeMap<String, LoginName> {
    rows.as_array()
        .into_iter()
        .flatten()
        .filter_map(|row| {
            let key = row["login"]["key"].as_str()?.to_string();
            Some((key, of_json(&row["login"])?))
        })
        .collect()
}

/// Every login the rows name ([`by_key`]), then those only a removed account's name is
/// kept for (`agent --accounts remove`): `Claude Code login · removed account work`.
pub fn named(rows: &Value, removed: &BTreeMap<String, String>) -> BTreeMap<String, LoginName> {
    let mut names = by_key(rows);
    for (key, account) in removed {
        names
            .entry(key.clone())
            .or_insert_with(|| of_removed(key, account));
    }
    names
}

/// The login a removed account ran on, by that account's name.
fn of_removed(key: &str, account: &str) -> LoginName {
    let mut name = of_key(key);
    name.label.push_str(" · removed account ");
    name.label.push_str(account);
    name
}

/// A login known only by its key: `Claude Code login`.
pub fn of_key(key: &str) -> LoginName {
    let cli = key.split_once(':').map_or("", |(cli, _)| cli);
    LoginName {
        label: format!("{} login", cli_name(cli)),
        detail: detail(key),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_login_is_named_by_its_plan_and_account_never_its_directory() {
        let name = of_json(&json!({
            "cli": "claude", "key": "claude:/home/me/.claude-work",
            "origin": "account:work", "plan": "max"
        }))
        .unwrap();
        assert_eq!(name.label, "Claude Code Max login · work");
        assert_eq!(name.detail, "/home/me/.claude-work");
        let name = of_json(&json!({
            "cli": "codex", "key": "codex:/home/me/.codex", "origin": "store", "plan": null
        }))
        .unwrap();
        assert_eq!(name.label, "Codex login");
        let name = of_json(&json!({
            "cli": "claude", "key": "claude:/home/me/.claude-work", "origin": "store",
            "plan": "max", "account": "work"
        }))
        .unwrap();
        assert_eq!(name.label, "Claude Code Max login · work");
        assert_eq!(of_key("gemini:/home/me/.gemini").label, "Gemini CLI login");
        assert_eq!(
            of_key("opencode:anthropic").label,
            "opencode login",
            "every CLI is named by its adapter"
        );
    }

    #[test]
    fn a_removed_account_names_its_login_unless_a_row_still_does() {
        let key = "claude:/home/me/.claude-work";
        let removed = BTreeMap::from([(key.to_string(), "work".to_string())]);
        let names = named(&json!([]), &removed);
        assert_eq!(names[key].label, "Claude Code login · removed account work");
        assert_eq!(names[key].detail, "/home/me/.claude-work");
        let rows =
            json!([{"login": {"cli": "claude", "key": key, "origin": "store", "plan": "max"}}]);
        assert_eq!(named(&rows, &removed)[key].label, "Claude Code Max login");
    }
}
