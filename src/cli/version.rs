//! What `agent --version` says this binary is: its version, the commit and the day it was
//! built, its target and linkage (static or not, PIE or not — `build.rs` reads them from
//! what rustc was told), and the versions of the CLIs it was tested with. `-V` says the
//! version alone.

use std::sync::LazyLock;

/// The CLI versions the end-to-end suite runs agent over (the pins of
/// `scripts/install-real-clis.sh`, which CI installs; a test holds the two together).
pub const TESTED_WITH: &[(&str, &str)] = &[
    ("Claude Code", "2.1.332"),
    ("Codex", "0.171.0"),
    ("Gemini CLI", "0.61.0"),
    ("opencode", "1.18.33"),
];

/// The text after `agent ` that `--version` prints.
pub fn long() -> &'static str {
    static TEXT: LazyLock<String> = LazyLock::new(|| {
        let tested = TESTED_WITH
            .iter()
            .map(|(cli, version)| format!("{cli} {version}"))
            .collect::<Vec<_>>()
            .join(", ");
        format!(
            "{version}\ncommit: {commit}, built {date}\nbuild: {target}, {linkage}\ntested with: {tested}",
            version = env!("CARGO_PKG_VERSION"),
            commit = env!("AGENT_BUILD_COMMIT"),
            date = env!("AGENT_BUILD_DATE"),
            target = env!("AGENT_BUILD_TARGET"),
            linkage = env!("AGENT_BUILD_LINKAGE"),
        )
    });
    &TEXT
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pins CI installs, as `NAME_VERSION=x.y.z` lines of the script.
    fn pins() -> Vec<(String, String)> {
        include_str!("../../scripts/install-real-clis.sh")
            .lines()
            .filter_map(|line| line.split_once("_VERSION="))
            .filter(|(name, _)| {
                !name.is_empty() && name.chars().all(|c| c.is_ascii_uppercase() || c == '_')
            })
            .map(|(name, version)| (name.to_string(), version.trim().to_string()))
            .collect()
    }

    #[test]
    fn the_tested_versions_are_the_pins_ci_installs() {
        let pins = pins();
        assert_eq!(pins.len(), TESTED_WITH.len(), "pins: {pins:?}");
        for (cli, version) in TESTED_WITH {
            let name = cli.to_ascii_uppercase().replace(' ', "_");
            assert!(
                pins.iter()
                    .any(|(pin, pinned)| *pin == name && pinned == version),
                "{cli} {version} is not pinned as {name}_VERSION={version} in scripts/install-real-clis.sh: {pins:?}"
            );
        }
    }
}
