//! Finding a CLI's binary: `PATH` first, then the places installers put binaries that a
//! minimal `PATH` (launchd, systemd, cron) does not reach (DESIGN.md §4).

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::paths;

/// Where a binary was found, or the places that were searched.
pub fn find(command: &str) -> Option<PathBuf> {
    if command.contains('/') {
        let path = PathBuf::from(command);
        return is_executable(&path).then_some(path);
    }
    if let Ok(path) = which::which(command) {
        return Some(path);
    }
    extra_dirs()
        .into_iter()
        .map(|dir| dir.join(command))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    fs::metadata(path).is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

/// Install directories beyond `PATH`, in the order they are searched.
pub fn extra_dirs() -> Vec<PathBuf> {
    let mut dirs = vec![
        PathBuf::from("/opt/homebrew/bin"),
        PathBuf::from("/usr/local/bin"),
    ];
    let Some(home) = paths::home() else {
        return dirs;
    };
    for rel in [".bun/bin", ".volta/bin"] {
        dirs.push(home.join(rel));
    }
    dirs.push(npm_global_bin(&home));
    for rel in [
        ".claude/local",
        ".local/bin",
        ".asdf/shims",
        ".local/share/mise/shims",
    ] {
        dirs.push(home.join(rel));
    }
    if let Some(nvm) = newest_nvm_bin(&home) {
        dirs.push(nvm);
    }
    dirs.push(home.join(".cargo/bin"));
    dirs
}

/// npm's global prefix without running npm: `$NPM_CONFIG_PREFIX`, `prefix=` in `~/.npmrc`,
/// else the `~/.npm-global` convention.
fn npm_global_bin(home: &Path) -> PathBuf {
    if let Some(prefix) = std::env::var_os("NPM_CONFIG_PREFIX").filter(|p| !p.is_empty()) {
        return PathBuf::from(prefix).join("bin");
    }
    let from_npmrc = crate::bounded_read::text(&home.join(".npmrc"), crate::bounded_read::SETTINGS)
        .and_then(|text| {
            text.lines().find_map(|line| {
                let (key, value) = line.split_once('=')?;
                (key.trim() == "prefix")
                    .then(|| value.trim().replace("${HOME}", &home.to_string_lossy()))
            })
        });
    match from_npmrc {
        Some(prefix) => PathBuf::from(prefix).join("bin"),
        None => home.join(".npm-global/bin"),
    }
}

/// The `bin` of the highest installed nvm node version (compared numerically).
fn newest_nvm_bin(home: &Path) -> Option<PathBuf> {
    let versions = fs::read_dir(home.join(".nvm/versions/node")).ok()?;
    versions
        .filter_map(Result::ok)
        .map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            let numbers: Vec<u64> = name
                .trim_start_matches('v')
                .split('.')
                .map(|part| part.parse().unwrap_or(0))
                .collect();
            (numbers, entry.path().join("bin"))
        })
        .max_by(|a, b| a.0.cmp(&b.0))
        .map(|(_, bin)| bin)
}

/// Where else `command` is installed, when neither `PATH` nor [`extra_dirs`] holds it: the
/// directories version managers and installers keep per version or per tool — every nvm
/// node (not only the newest), fnm's, asdf's and mise's node installs, opencode's own
/// installer (`~/.opencode/bin`), yarn's and pnpm's global bins, `~/bin`, `/snap/bin`. Only
/// looked in, never run: the doctor names the directory for a job's `PATH`; a launch runs
/// only what `PATH` and the usual directories hold.
pub fn elsewhere(command: &str) -> Option<PathBuf> {
    if command.contains('/') {
        return None;
    }
    let home = paths::home()?;
    let mut dirs: Vec<PathBuf> = Vec::new();
    for versions in [
        ".nvm/versions/node",
        ".asdf/installs/nodejs",
        ".local/share/mise/installs/node",
    ] {
        dirs.extend(children(&home.join(versions)).map(|version| version.join("bin")));
    }
    for versions in [".local/share/fnm/node-versions", ".fnm/node-versions"] {
        dirs.extend(children(&home.join(versions)).map(|version| version.join("installation/bin")));
    }
    for rel in [".opencode/bin", ".yarn/bin", ".local/share/pnpm", "bin"] {
        dirs.push(home.join(rel));
    }
    dirs.push(PathBuf::from("/snap/bin"));
    dirs.into_iter()
        .map(|dir| dir.join(command))
        .find(|candidate| is_executable(candidate))
}

/// The entries of `dir` (a version manager's versions), newest name first; none when it
/// cannot be read. At most a hundred: a directory of versions is small.
fn children(dir: &Path) -> impl Iterator<Item = PathBuf> {
    let mut found: Vec<PathBuf> = fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .take(100)
        .map(|entry| entry.path())
        .collect();
    found.sort();
    found.reverse();
    found.into_iter()
}

/// Directories for the job's `PATH`: where each backend's CLI was found, where agent is,
/// then the system's.
pub fn pinned_path(config: &crate::config::Config, agent: &Path) -> String {
    let mut dirs: Vec<PathBuf> = Vec::new();
    let mut add = |dir: PathBuf| {
        if !dirs.contains(&dir) {
            dirs.push(dir);
        }
    };
    for backend in config.backends.values() {
        if let Some(dir) = find(&backend.command).and_then(|p| p.parent().map(Path::to_path_buf)) {
            add(dir);
        }
    }
    if let Some(dir) = agent.parent() {
        add(dir.to_path_buf());
    }
    for system in ["/usr/local/bin", "/usr/bin", "/bin"] {
        add(PathBuf::from(system));
    }
    dirs.iter()
        .map(|d| d.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(":")
}
