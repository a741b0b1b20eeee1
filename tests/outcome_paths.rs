//! The outcome record replaces only a regular file (issue 39, item 3): `--outcome FILE` and
//! `AGENT_OUTCOME` name a path that is the user's. A device or a FIFO there is written
//! through, as a shell's `>` would (`AGENT_OUTCOME=/dev/null` is how a script turns the
//! record off); a symbolic link is refused before anything runs, and left as it was.
//! (Written as root, the rename that replaced what stood there turned `/dev/null` into a
//! 0600 JSON file for every process on the machine.)

use std::fs::File;
use std::io::Read as _;
use std::os::unix::fs::{FileTypeExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::world::{CLAUDE_THEN_CODEX, World, world};

/// Claude Code answers: a launch that ends 0.
fn answering() -> World {
    let w = world();
    w.sb.write_config(CLAUDE_THEN_CODEX);
    w.sb.fake_cli("claude").stdout("The answer.\n").install();
    w
}

fn is_fifo(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_fifo())
}

fn is_char_device(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_char_device())
}

fn fifo_in(w: &World) -> PathBuf {
    let fifo = w.sb.root().join("outcome.fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    fifo
}

/// A character device that is the machine's null device (1, 3), made in the sandbox: the
/// test never puts the real `/dev/null` at stake, whatever build it runs. `None` where this
/// user may not make device nodes (not root).
fn null_device_in(w: &World) -> Option<PathBuf> {
    let node = w.sb.root().join("null");
    nix::sys::stat::mknod(
        &node,
        nix::sys::stat::SFlag::S_IFCHR,
        nix::sys::stat::Mode::from_bits_truncate(0o666),
        nix::sys::stat::makedev(1, 3),
    )
    .ok()
    .map(|()| node)
}

#[test]
fn a_fifo_with_a_reader_gets_the_record_and_stays_a_fifo() {
    let w = answering();
    let fifo = fifo_in(&w);
    // The script's reader, there before agent ends (opened without waiting for a writer).
    let mut reader = File::options()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
        .open(&fifo)
        .unwrap();

    let run =
        w.sb.run(&["--outcome", &fifo.display().to_string(), "-p", "hi"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(is_fifo(&fifo), "the FIFO was replaced: {run:?}");
    let mut text = String::new();
    let _ = reader.read_to_string(&mut text);
    let record: Value = serde_json::from_str(&text)
        .unwrap_or_else(|err| panic!("the reader got no record ({err}): {text:?} {run:?}"));
    assert_eq!(record["exit"], 0, "{record}");
}

#[test]
fn a_fifo_nobody_reads_is_said_on_stderr_and_left_a_fifo_without_waiting() {
    let w = answering();
    let fifo = fifo_in(&w);

    let run =
        w.sb.run(&["--outcome", &fifo.display().to_string(), "-p", "hi"]);

    assert_eq!(run.code, Some(0), "the launch's own code: {run:?}");
    assert!(!run.timed_out, "{run:?}");
    assert!(is_fifo(&fifo), "the FIFO was replaced: {run:?}");
    assert!(
        run.stderr.contains("nobody is reading") && run.stderr.contains("outcome.fifo"),
        "{run:?}"
    );
}

#[test]
fn a_device_is_written_through_and_stays_a_device_by_flag_and_by_variable() {
    let w = answering();
    let Some(null) = null_device_in(&w) else {
        eprintln!("not root: no device node to test with");
        return;
    };

    let by_flag =
        w.sb.run(&["--outcome", &null.display().to_string(), "-p", "hi"]);
    assert_eq!(by_flag.code, Some(0), "{by_flag:?}");
    assert!(
        is_char_device(&null),
        "the device was replaced: {by_flag:?}"
    );
    assert!(!by_flag.stderr.contains("outcome record"), "{by_flag:?}");

    // `AGENT_OUTCOME=/dev/null`: how a script turns the record off.
    w.sb.env("AGENT_OUTCOME", null.display().to_string());
    let by_variable = w.sb.run(&["-p", "hi"]);
    assert_eq!(by_variable.code, Some(0), "{by_variable:?}");
    assert!(is_char_device(&null), "{by_variable:?}");
    assert!(
        !by_variable.stderr.contains("outcome record"),
        "{by_variable:?}"
    );
    assert_eq!(by_variable.stdout, "The answer.\n");
}

#[test]
fn a_symbolic_link_is_refused_before_anything_runs_and_left_as_it_was() {
    let w = answering();
    let precious = w.sb.write_file("precious.txt", "the user's own\n");
    let link = w.sb.root().join("outcome.json");
    std::os::unix::fs::symlink(&precious, &link).unwrap();

    let run =
        w.sb.run(&["--outcome", &link.display().to_string(), "-p", "hi"]);

    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(
        run.stderr.contains("is a symbolic link"),
        "says why: {run:?}"
    );
    assert!(w.sb.calls("claude").is_empty(), "nothing ran: {run:?}");
    assert_eq!(std::fs::read_link(&link).unwrap(), precious);
    assert_eq!(
        std::fs::read_to_string(&precious).unwrap(),
        "the user's own\n"
    );
}
