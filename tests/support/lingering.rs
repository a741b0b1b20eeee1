//! A helper a child leaves behind holding its output (a daemon it started, say), as the
//! tests' own stand-in. It stays until the test lets it go, not for a stretch of time, so
//! "agent ended while the helper still held the pipe" is an order of events the test reads
//! off: agent's end first, then the helper seen still running.
//!
//! ```ignore
//! let helper = Lingering::new();
//! w.sb.fake_cli("gemini").script(&format!("{}\necho answered", helper.start())).install();
//! let run = w.sb.run(&["--status"]);
//! assert!(!run.timed_out && helper.still_running());
//! ```

use std::fs;
use std::os::unix::fs::PermissionsExt as _;

use tempfile::TempDir;

/// How many 50 ms naps a helper takes before it ends of its own accord: a cap past
/// [`super::wait::PATIENCE`], so a helper a failed test never released is gone soon after.
const NAPS: u32 = 1_400;

/// One helper's scripts and the files it says it runs by and is released by.
pub struct Lingering {
    dir: TempDir,
}

impl Lingering {
    pub fn new() -> Lingering {
        let lingering = Lingering {
            dir: tempfile::tempdir().expect("a directory for the lingering helper"),
        };
        let dir = lingering.dir.path().display();
        // Waits, holding whatever it inherited, until released, its directory is gone, or
        // its naps run out.
        let wait = format!(
            "#!/bin/sh\ni=0\nwhile [ -d '{dir}' ] && [ ! -e '{dir}/release' ] && [ $i -lt {NAPS} ]; do sleep 0.05; i=$((i + 1)); done\n"
        );
        // Leaves the waiter running out of reach of any kill of the caller's process group
        // (`setsid`), holding the caller's stdout and stderr, and returns at once.
        let start = format!(
            "#!/bin/sh\nsetsid sh -c 'echo $$ > \"$0/pid.new\" && mv \"$0/pid.new\" \"$0/pid\" && exec \"$0/wait\"' '{dir}' &\n"
        );
        lingering.write("wait", &wait);
        lingering.write("start", &start);
        lingering
    }

    fn write(&self, name: &str, text: &str) {
        let path = self.dir.path().join(name);
        fs::write(&path, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755))
            .unwrap_or_else(|e| panic!("chmod {}: {e}", path.display()));
    }

    /// A shell command (a path, no quoting needed) that leaves the helper behind holding
    /// its caller's stdout and stderr, and returns at once.
    pub fn start(&self) -> String {
        self.path("start")
    }

    /// A shell command that waits, holding what it was given, until the test releases the
    /// helper: a child that overruns whatever limit it is given.
    pub fn wait(&self) -> String {
        self.path("wait")
    }

    fn path(&self, name: &str) -> String {
        self.dir.path().join(name).display().to_string()
    }

    /// Whether the helper started by [`Lingering::start`] runs, waiting for it to have
    /// said its pid (it holds its caller's output from its fork on, before it says so).
    pub fn still_running(&self) -> bool {
        let pid_file = self.dir.path().join("pid");
        let pid = super::wait::for_some("the lingering helper's pid", || {
            fs::read_to_string(&pid_file).ok()
        });
        match fs::read_to_string(format!("/proc/{}/stat", pid.trim())) {
            Err(_) => false,
            // A zombie runs nothing.
            Ok(stat) => stat
                .rsplit_once(") ")
                .is_some_and(|(_, rest)| !rest.starts_with('Z')),
        }
    }

    /// Lets the helper (and every waiter) go.
    pub fn release(&self) {
        let _ = fs::write(self.dir.path().join("release"), "");
    }
}

impl Drop for Lingering {
    fn drop(&mut self) {
        self.release();
    }
}

impl Default for Lingering {
    fn default() -> Self {
        Lingering::new()
    }
}
