//! Opening and reading regular files only: a path swapped for a FIFO or a device after the walk
//! saw it is refused without waiting on it. Everything that reads a user's file goes through
//! here: the sources linted, configuration files, `--fix` and `--add-noqa`.
//!
//! May import: nothing of the crate.

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::path::Path;

/// The error's text for a path that is not a regular file.
pub const NOT_REGULAR: &str = "not a regular file";

/// Opens `path` with `options` if it is a regular file (through links); else an error saying it
/// is not one. The walk and the command line let only regular files through: this is for one
/// swapped for a FIFO or a device since, which is refused without waiting on it.
pub fn open_regular(path: &Path, options: &mut OpenOptions) -> io::Result<File> {
    open_checked(path, options).map(|(file, _)| file)
}

/// The bytes of the regular file at `path` ([`open_regular`]): the same system calls as
/// [`std::fs::read`].
pub fn read_regular_file(path: &Path) -> io::Result<Vec<u8>> {
    let (mut file, metadata) = open_checked(path, OpenOptions::new().read(true))?;
    let mut bytes = Vec::with_capacity(usize::try_from(metadata.len()).unwrap_or(0));
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}

fn open_checked(path: &Path, options: &mut OpenOptions) -> io::Result<(File, std::fs::Metadata)> {
    let not_regular = || io::Error::new(io::ErrorKind::InvalidInput, NOT_REGULAR);
    // Elsewhere a FIFO cannot be opened without waiting: it is looked at first.
    #[cfg(target_os = "linux")]
    std::os::unix::fs::OpenOptionsExt::custom_flags(options, libc::O_NONBLOCK);
    #[cfg(not(target_os = "linux"))]
    if !std::fs::metadata(path)?.is_file() {
        return Err(not_regular());
    }
    let file = options.open(path)?;
    let metadata = file.metadata()?;
    if !metadata.is_file() {
        return Err(not_regular());
    }
    Ok((file, metadata))
}
