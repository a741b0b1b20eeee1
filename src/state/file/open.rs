//! How a state file is opened: never through a symbolic link (`O_NOFOLLOW`, and the
//! `ELOOP` it gives said plainly), and read only from a directory [`check_dir`] accepts.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::Path;

use super::dir::check_dir;

/// Opens a state file for reading, without following a symbolic link and only from a
/// directory [`check_dir`] accepts. A missing file (or directory) is `NotFound`.
pub fn open_read(path: &Path) -> io::Result<File> {
    let dir = path.parent().unwrap_or(Path::new(""));
    match fs::metadata(dir) {
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Err(err),
        _ => check_dir(dir)
            .map_err(|err| io::Error::new(io::ErrorKind::PermissionDenied, format!("{err:#}")))?,
    }
    // Without waiting (a FIFO planted there has no writer to wait for), and only a regular
    // file is read: a FIFO or a device is no state of agent's.
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(
            no_follow() | (nix::fcntl::OFlag::O_NONBLOCK | nix::fcntl::OFlag::O_NOCTTY).bits(),
        )
        .open(path)
        .map_err(|err| explain_link(path, err))?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::other(format!(
            "{} is not a regular file: agent reads its state only from regular files; remove it",
            path.display()
        )));
    }
    Ok(file)
}

/// `O_NOFOLLOW`: a link planted where a state file belongs fails the open instead of
/// sending agent's write (or read) to wherever it points.
pub(super) fn no_follow() -> i32 {
    nix::fcntl::OFlag::O_NOFOLLOW.bits()
}

/// The error `O_NOFOLLOW` gives for a link (`ELOOP`), said plainly.
pub(super) fn explain_link(path: &Path, err: io::Error) -> io::Error {
    if err.raw_os_error() == Some(nix::errno::Errno::ELOOP as i32) {
        io::Error::other(format!(
            "{} is a symbolic link: agent never reads or writes state through a link; remove it",
            path.display()
        ))
    } else {
        err
    }
}
