//! `agent --version` says what the binary is: the version, the commit and day it was built,
//! its target and how it is linked — as the binary's own ELF header says, so the release's
//! "static, non-PIE" is a fact, not a label — and the CLI versions CI tests it with.

use std::path::Path;
use std::process::Command;

use crate::support::Sandbox;
use crate::support::sandbox::agent_binary;

#[test]
fn version_names_the_commit_the_build_and_the_tested_clis() {
    let run = Sandbox::new().run(&["--version"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 4, "{}", run.stdout);
    assert_eq!(lines[0], format!("agent {}", env!("CARGO_PKG_VERSION")));

    let commit = checkout_commit().unwrap_or_else(|| "unknown".to_string());
    let built = lines[1]
        .strip_prefix(&format!("commit: {commit}, built "))
        .unwrap_or_else(|| panic!("not commit {commit}: {}", lines[1]));
    let is_day = built.len() == 10
        && built.char_indices().all(|(i, c)| {
            if i == 4 || i == 7 {
                c == '-'
            } else {
                c.is_ascii_digit()
            }
        });
    assert!(is_day, "the build day is not YYYY-MM-DD: {built}");

    let binary = agent_binary();
    let linkage = linkage_of(Path::new(&binary));
    assert!(
        lines[2].starts_with("build: ") && lines[2].ends_with(&format!(", {linkage}")),
        "the binary is {linkage}, --version says: {}",
        lines[2]
    );

    let pins = pinned_versions();
    assert_eq!(pins.len(), 4, "{pins:?}");
    assert!(lines[3].starts_with("tested with: "), "{}", lines[3]);
    for version in pins {
        assert!(
            lines[3].contains(&format!(" {version}")),
            "{version} missing: {}",
            lines[3]
        );
    }
}

/// The checkout's commit as `git` says it, when it can.
fn checkout_commit() -> Option<String> {
    let out = Command::new("git")
        .args([
            "-C",
            env!("CARGO_MANIFEST_DIR"),
            "rev-parse",
            "--short=12",
            "HEAD",
        ])
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The versions scripts/install-real-clis.sh pins (`NAME_VERSION=x.y.z`).
fn pinned_versions() -> Vec<String> {
    let script = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/install-real-clis.sh"),
    )
    .unwrap();
    script
        .lines()
        .filter_map(|line| line.split_once("_VERSION="))
        .filter(|(name, _)| name.chars().all(|c| c.is_ascii_uppercase() || c == '_'))
        .map(|(_, version)| version.trim().to_string())
        .collect()
}

/// "static" or "dynamic" (a PT_INTERP program header: the loader is named) and "PIE" or
/// "non-PIE" (ET_DYN or ET_EXEC), read from a 64-bit little-endian ELF file.
fn linkage_of(binary: &Path) -> String {
    let bytes = std::fs::read(binary).unwrap();
    assert_eq!(&bytes[..4], b"\x7fELF", "{} is not ELF", binary.display());
    assert_eq!(bytes[4], 2, "not a 64-bit ELF");
    let u16_at = |at: usize| u16::from_le_bytes([bytes[at], bytes[at + 1]]);
    let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
    let kind = u16_at(16);
    let program_headers = usize::try_from(u64_at(32)).unwrap();
    let (entry_size, entries) = (usize::from(u16_at(54)), usize::from(u16_at(56)));
    let interpreter = (0..entries).any(|i| u32_at(program_headers + i * entry_size) == 3);
    format!(
        "{}, {}",
        if interpreter { "dynamic" } else { "static" },
        match kind {
            2 => "non-PIE",
            3 => "PIE",
            other => panic!("ELF type {other} is not an executable"),
        }
    )
}
