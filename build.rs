//! Stamps what this binary is into it, for `agent --version` (`src/cli/version.rs`): the
//! commit it was built from, the day it was built, its target, and whether it is linked
//! statically and position-independent — the two choices that make the release the fast
//! launch (scripts/release-rustflags.sh).
//!
//! Runs again when the checkout's commit changes (its HEAD and the branch it names), when
//! SOURCE_DATE_EPOCH changes (a reproducible build's date), or when this file does; cargo
//! runs it again anyway when RUSTFLAGS or the target change.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

fn main() {
    let manifest_dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=SOURCE_DATE_EPOCH");
    let in_own_checkout = is_own_checkout(&manifest_dir);
    if in_own_checkout {
        for path in git_files_naming_the_commit(&manifest_dir) {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
    // A published source names its commit in .cargo_vcs_info.json; a checkout asks git.
    let commit = packaged_commit(&manifest_dir)
        .or_else(|| {
            in_own_checkout
                .then(|| git(&manifest_dir, &["rev-parse", "--short=12", "HEAD"]))
                .flatten()
        })
        .unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=AGENT_BUILD_COMMIT={commit}");
    println!("cargo:rustc-env=AGENT_BUILD_DATE={}", build_date());
    println!(
        "cargo:rustc-env=AGENT_BUILD_TARGET={}",
        env::var("TARGET").unwrap_or_default()
    );
    println!("cargo:rustc-env=AGENT_BUILD_LINKAGE={}", linkage());
}

/// `git ARGS` in the checkout, its first line when it succeeds.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?;
    let line = text.lines().next()?.trim().to_string();
    (!line.is_empty()).then_some(line)
}

/// Whether `dir` is the top of a git work tree: a source unpacked inside some other
/// repository (vendored, say) must not take that repository's commit for its own.
fn is_own_checkout(dir: &Path) -> bool {
    let Some(top) = git(dir, &["rev-parse", "--show-toplevel"]) else {
        return false;
    };
    match (Path::new(&top).canonicalize(), dir.canonicalize()) {
        (Ok(top), Ok(dir)) => top == dir,
        _ => false,
    }
}

/// The files whose change means another commit is checked out: HEAD, the branch file it
/// names, and packed-refs (where a branch lives once packed). Only those that exist: cargo
/// reruns a script on every build while a path it watches is missing.
fn git_files_naming_the_commit(dir: &Path) -> Vec<PathBuf> {
    let mut names = vec!["HEAD".to_string(), "packed-refs".to_string()];
    if let Some(branch) = git(dir, &["rev-parse", "--symbolic-full-name", "HEAD"])
        && branch.starts_with("refs/")
    {
        names.push(branch);
    }
    names
        .iter()
        .filter_map(|name| git(dir, &["rev-parse", "--git-path", name]))
        .map(|path| dir.join(path))
        .filter(|path| path.is_file())
        .collect()
}

/// The commit `cargo package` recorded, for a build from a published source (no .git).
fn packaged_commit(dir: &Path) -> Option<String> {
    let info = std::fs::read_to_string(dir.join(".cargo_vcs_info.json")).ok()?;
    let after = &info[info.find("\"sha1\"")? + "\"sha1\"".len()..];
    let start = after.find('"')? + 1;
    let sha: String = after[start..]
        .chars()
        .take_while(char::is_ascii_hexdigit)
        .take(12)
        .collect();
    (sha.len() == 12).then_some(sha)
}

/// The UTC day of the build: SOURCE_DATE_EPOCH's when it is set (a reproducible build),
/// else today's.
fn build_date() -> String {
    let seconds = env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|value| value.trim().parse::<i64>().ok())
        .unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |elapsed| i64::try_from(elapsed.as_secs()).unwrap_or(0))
        });
    let (year, month, day) = civil_from_days(seconds.div_euclid(86_400));
    format!("{year:04}-{month:02}-{day:02}")
}

/// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// How the binary is linked, from what rustc is told for it: a static libc when the target
/// feature crt-static is on (musl's default, or scripts/release-rustflags.sh), and not
/// position-independent only when the relocation model is static — every Linux target
/// builds PIE by default (static-pie with a static libc), and macOS always does.
fn linkage() -> String {
    let features = env::var("CARGO_CFG_TARGET_FEATURE").unwrap_or_default();
    let is_static = features.split(',').any(|feature| feature == "crt-static");
    let flags = env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    let words: Vec<&str> = flags.split('\x1f').collect();
    let mut relocation = None;
    for (index, word) in words.iter().enumerate() {
        let value = if let Some(rest) = word.strip_prefix("-Crelocation-model=") {
            Some(rest)
        } else if *word == "-C" {
            words
                .get(index + 1)
                .and_then(|next| next.strip_prefix("relocation-model="))
        } else {
            None
        };
        if value.is_some() {
            relocation = value;
        }
    }
    let macos = env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "macos");
    let pie = macos || relocation != Some("static");
    format!(
        "{}, {}",
        if is_static { "static" } else { "dynamic" },
        if pie { "PIE" } else { "non-PIE" }
    )
}
