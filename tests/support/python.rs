//! The official `anthropic` and `openai` Python SDKs, installed from PyPI into a virtual
//! environment that later runs reuse: `${AGENT_PY_CACHE:-~/.cache/agent-py}/<pins>/`.
//! A test that needs them fails — never skips — when they cannot be installed.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

/// The SDK versions the relay is tested with.
pub const PINS: &[&str] = &["anthropic==2.14.0", "openai==3.57.0"];

/// The venv's `python`, installing the SDKs first if needed. Panics with pip's output
/// when that fails.
pub fn sdk_python() -> &'static Path {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(install)
}

fn install() -> PathBuf {
    let cache = std::env::var_os("AGENT_PY_CACHE")
        .filter(|v| !v.is_empty())
        .map_or_else(
            || {
                PathBuf::from(std::env::var_os("HOME").expect("HOME is set"))
                    .join(".cache/agent-py")
            },
            PathBuf::from,
        );
    fs::create_dir_all(&cache).unwrap_or_else(|e| panic!("create {}: {e}", cache.display()));
    let name = PINS.join("-").replace("==", "-");
    let venv = cache.join(&name);
    let python = venv.join("bin/python");
    // Other test processes may be installing the same venv right now.
    let lock = fs::File::create(cache.join(format!("{name}.lock"))).expect("create the lock");
    lock.lock().expect("lock the venv");
    if works(&python) {
        return python;
    }
    let _ = fs::remove_dir_all(&venv);
    run(
        Command::new("python3").args(["-m", "venv"]).arg(&venv),
        "python3 -m venv",
    );
    run(
        Command::new(venv.join("bin/pip"))
            .args([
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--no-input",
            ])
            .args(PINS),
        "pip install the SDKs from PyPI",
    );
    assert!(
        works(&python),
        "the SDKs were installed into {} but do not import",
        venv.display()
    );
    python
}

fn works(python: &Path) -> bool {
    python.exists()
        && Command::new(python)
            .args(["-c", "import anthropic, openai"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
}

fn run(command: &mut Command, what: &str) {
    let output = command
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        output.status.success(),
        "{what} failed ({}):\n{}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Runs `tests/relay_py/<script>` with `args` and `env` (and nothing else of ours), and
/// parses the JSON object it prints. Panics with its stderr when it fails.
pub fn run_script(script: &str, args: &[&str], env: &[(&str, &str)]) -> serde_json::Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/relay_py")
        .join(script);
    let output = Command::new(sdk_python())
        .arg(&path)
        .args(args)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", std::env::temp_dir())
        .envs(super::clock::env())
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("run {}: {e}", path.display()));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{script} {args:?} failed ({}):\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("{script} printed no JSON ({e}): {stdout}"))
}
