//! Writing to a path the user gave (`--outcome FILE`, `AGENT_OUTCOME`): agent creates or
//! replaces only a regular file there. Whatever else stands at that path is the user's (or
//! the machine's), never agent's to replace: written as root, a rename over `/dev/null`
//! turned it into a 0600 JSON file for every process on the machine, and a FIFO a script
//! read from was swapped for a file while the reader waited. So:
//!
//! - nothing there: the file is created — written beside it first, then linked into place,
//!   which fails rather than replaces if something appeared there meanwhile;
//! - a regular file: replaced atomically (written beside it, renamed over it);
//! - a FIFO or a character device: written through, as a shell's `>` would (so
//!   `AGENT_OUTCOME=/dev/null` turns the record off, and a FIFO's reader gets the record);
//!   a FIFO nobody is reading is an error, never a wait;
//! - a symbolic link, a directory, a block device or a socket: refused, with the reason.

use std::fs::{self, OpenOptions};
use std::io::{self, Write as _};
use std::os::unix::fs::{FileTypeExt as _, OpenOptionsExt as _};
use std::path::Path;

use anyhow::{Context as _, bail};
use nix::fcntl::{FcntlArg, OFlag, fcntl};

use super::{Durability, open::no_follow, write_atomic};

/// What stands at a given path, as far as writing to it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Standing {
    Nothing,
    Regular,
    Fifo,
    CharDevice,
}

/// Why agent will not write at `path`, if it will not: said before anything runs, so a
/// script learns of a record that could never be written before the work, not after it.
pub fn check_given(path: &Path) -> anyhow::Result<()> {
    standing(path).map(|_| ())
}

/// Writes `bytes` at `path` by the rules in the module's doc.
pub fn write_given(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    match standing(path)? {
        Standing::Regular => write_atomic(path, bytes, Durability::Synced),
        Standing::Nothing => create(path, bytes),
        Standing::Fifo => write_through(path, bytes, OFlag::O_NONBLOCK)
            .map_err(|err| explain_fifo(path, err))
            .with_context(|| format!("writing to the FIFO {}", path.display())),
        Standing::CharDevice => write_through(path, bytes, OFlag::empty())
            .with_context(|| format!("writing to the device {}", path.display())),
    }
}

fn standing(path: &Path) -> anyhow::Result<Standing> {
    let meta = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Standing::Nothing),
        Err(err) => return Err(err).with_context(|| format!("looking at {}", path.display())),
    };
    let kind = meta.file_type();
    let refused = if kind.is_file() {
        return Ok(Standing::Regular);
    } else if kind.is_fifo() {
        return Ok(Standing::Fifo);
    } else if kind.is_char_device() {
        return Ok(Standing::CharDevice);
    } else if kind.is_symlink() {
        "a symbolic link"
    } else if kind.is_dir() {
        "a directory"
    } else if kind.is_block_device() {
        "a block device"
    } else {
        "a socket"
    };
    bail!(
        "{} is {refused}: agent writes only a regular file there (or through a FIFO or a \
         character device such as /dev/null); name a file",
        path.display()
    )
}

/// Creates `path`, which held nothing when looked at: the whole text is written beside it
/// and then hard-linked into place, so a reader never sees half of it and a link or a file
/// planted meanwhile is never replaced (the link fails instead).
fn create(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    super::ensure_dir(dir)?;
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let temp = dir.join(format!(
        ".{name}.{}.{:x}.tmp",
        std::process::id(),
        fastrand::u64(..)
    ));
    let result = (|| -> io::Result<()> {
        let mut file = OpenOptions::new()
            .create_new(true)
            .write(true)
            .mode(0o600)
            .custom_flags(no_follow())
            .open(&temp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::hard_link(&temp, path)
    })();
    let _ = fs::remove_file(&temp);
    match result {
        Ok(()) => Ok(()),
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => appeared(path),
        // A file system without hard links: created in place, never replacing anything
        // (`O_EXCL`, no link followed) — whole before agent exits, if not atomically.
        Err(_) => {
            let written = OpenOptions::new()
                .create_new(true)
                .write(true)
                .mode(0o600)
                .custom_flags(no_follow())
                .open(path)
                .and_then(|mut file| file.write_all(bytes).and_then(|()| file.sync_all()));
            match written {
                Err(err) if err.kind() == io::ErrorKind::AlreadyExists => appeared(path),
                other => other.with_context(|| format!("writing {}", path.display())),
            }
        }
    }
}

fn appeared(path: &Path) -> anyhow::Result<()> {
    bail!(
        "{} appeared while agent was writing the record there; it was left as it is",
        path.display()
    )
}

/// Opens what is at `path` for writing without creating, truncating or following anything,
/// and writes `bytes` to it. `extra` is `O_NONBLOCK` for a FIFO: an open that would wait
/// for a reader fails at once instead (then the writes block as a shell's would).
fn write_through(path: &Path, bytes: &[u8], extra: OFlag) -> io::Result<()> {
    let mut file = OpenOptions::new()
        .write(true)
        .custom_flags(no_follow() | extra.bits())
        .open(path)?;
    // Still what was looked at: a FIFO or a device swapped for a file meanwhile is refused.
    let kind = file.metadata()?.file_type();
    if !(kind.is_fifo() || kind.is_char_device()) {
        return Err(io::Error::other("it changed while agent was writing to it"));
    }
    if !extra.is_empty() {
        fcntl(&file, FcntlArg::F_SETFL(OFlag::empty())).map_err(io::Error::from)?;
    }
    file.write_all(bytes)
}

/// `ENXIO` from a FIFO opened without waiting means nobody has it open to read.
fn explain_fifo(path: &Path, err: io::Error) -> io::Error {
    if err.raw_os_error() == Some(nix::errno::Errno::ENXIO as i32) {
        io::Error::other(format!(
            "nobody is reading {}; the record was not written",
            path.display()
        ))
    } else {
        err
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    #[test]
    fn nothing_there_becomes_a_0600_file_and_a_regular_file_is_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.json");
        write_given(&path, b"one\n").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"one\n");
        assert_eq!(
            fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        write_given(&path, b"two\n").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"two\n");
        assert_eq!(
            fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temporary left"
        );
    }

    #[test]
    fn a_link_is_refused_and_left_pointing_where_it_pointed() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("precious");
        fs::write(&target, "keep me").unwrap();
        let link = dir.path().join("out.json");
        std::os::unix::fs::symlink(&target, &link).unwrap();

        let err = write_given(&link, b"{}").unwrap_err();

        assert!(format!("{err:#}").contains("is a symbolic link"), "{err:#}");
        assert_eq!(fs::read_link(&link).unwrap(), target);
        assert_eq!(fs::read_to_string(&target).unwrap(), "keep me");
        assert!(check_given(&link).is_err());
    }

    #[test]
    fn a_directory_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let err = write_given(dir.path(), b"{}").unwrap_err();
        assert!(format!("{err:#}").contains("is a directory"), "{err:#}");
        assert!(dir.path().is_dir());
    }

    #[test]
    fn dev_null_is_written_through_and_stays_a_device() {
        let null = Path::new("/dev/null");
        check_given(null).unwrap();
        write_given(null, b"{}\n").unwrap();
        assert!(
            fs::symlink_metadata(null)
                .unwrap()
                .file_type()
                .is_char_device()
        );
    }

    #[test]
    fn a_fifo_with_a_reader_gets_the_record_and_one_without_is_an_error_not_a_wait() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("out.fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();

        let err = write_given(&fifo, b"{}\n").unwrap_err();
        assert!(format!("{err:#}").contains("nobody is reading"), "{err:#}");

        let reading = fifo.clone();
        let reader = std::thread::spawn(move || fs::read(reading).unwrap());
        // The reader's open waits for a writer, and the write for a reader: retry until the
        // reader is there (an event, not a time).
        loop {
            match write_given(&fifo, b"{\"exit\":0}\n") {
                Ok(()) => break,
                Err(err) if format!("{err:#}").contains("nobody is reading") => {
                    std::thread::yield_now();
                }
                Err(err) => panic!("{err:#}"),
            }
        }
        assert_eq!(reader.join().unwrap(), b"{\"exit\":0}\n");
        assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    }
}
