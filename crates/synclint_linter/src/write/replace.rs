//! Replacing a file with a complete copy renamed over it: a reader sees the old text or the new,
//! never part of one, and a run killed mid-write leaves the file as it was (and a temporary file
//! beside it, which later runs remove).

use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use super::NotWritten;
use super::leftovers::temporary_path;
use crate::regular_file::open_regular;

/// What became of a replacement.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Replacement {
    Done,
    /// Nothing was written: a new file cannot have the file's owner or group (this process
    /// may not give them), so it is to be written in place.
    WouldChangeOwner,
}

/// Replaces `real` (canonical, a regular file with this `metadata`, read as `read`) with
/// `contents`, keeping its owner, group and mode, if it still holds `read`.
pub(super) fn replace(
    real: &Path,
    metadata: &Metadata,
    read: &[u8],
    contents: &[u8],
) -> Result<Replacement, NotWritten> {
    let mut temporary = Temporary::create(real)?;
    let made = temporary.file.metadata()?;
    if (made.uid(), made.gid()) != (metadata.uid(), metadata.gid())
        && std::os::unix::fs::fchown(&temporary.file, Some(metadata.uid()), Some(metadata.gid())).is_err()
    {
        return Ok(Replacement::WouldChangeOwner);
    }
    temporary.file.write_all(contents)?;
    // After the owner: a change of owner clears the set-user-id and set-group-id bits.
    temporary.file.set_permissions(metadata.permissions())?;
    temporary.file.sync_all()?;
    let ours = temporary.file.metadata()?.ino();

    // The slow part is done: now the file must still hold what was read.
    let mut verified = open_regular(real, OpenOptions::new().read(true))?;
    let seen = verified.metadata()?;
    // A hard link made since would keep the old text.
    if seen.nlink() != 1 || !holds(&mut verified, read)? {
        return Err(NotWritten::Changed);
    }
    match exchange(&temporary.path, real) {
        Ok(()) => keep_unless_changed(&temporary.path, real, &mut verified, read, ours),
        // Without an exchange (not Linux, or a file system without it), a plain rename. What
        // another program writes between this last look and the rename is lost: a window of
        // two system calls.
        Err(error) if exchange_unsupported(&error) => {
            let now = std::fs::symlink_metadata(real)?;
            let same = |m: &Metadata| {
                (
                    m.dev(),
                    m.ino(),
                    m.len(),
                    m.mtime(),
                    m.mtime_nsec(),
                    m.ctime(),
                    m.ctime_nsec(),
                )
            };
            if same(&now) != same(&seen) {
                return Err(NotWritten::Changed);
            }
            std::fs::rename(&temporary.path, real)?;
            temporary.renamed();
            Ok(Replacement::Done)
        }
        Err(error) => Err(error.into()),
    }
}

/// After `temporary` (the new file, inode `ours`) and `real` were exchanged: the old file, now at
/// `temporary`, goes if it is the file `verified` and still holds `read`. Else another program
/// replaced or rewrote the file between the check and the exchange, and its file goes back.
fn keep_unless_changed(
    temporary: &Path,
    real: &Path,
    verified: &mut File,
    read: &[u8],
    ours: u64,
) -> Result<Replacement, NotWritten> {
    let swapped = std::fs::symlink_metadata(temporary)?;
    let seen = verified.metadata()?;
    if (swapped.dev(), swapped.ino()) == (seen.dev(), seen.ino()) && holds(verified, read)? {
        return Ok(Replacement::Done);
    }
    exchange(temporary, real)?;
    if std::fs::symlink_metadata(temporary)?.ino() != ours {
        // It replaced the file once more meanwhile, over ours: that one is the newest.
        std::fs::rename(temporary, real)?;
    }
    Err(NotWritten::Changed)
}

/// Whether `file` holds exactly `read`, read from its start.
fn holds(file: &mut File, read: &[u8]) -> io::Result<bool> {
    use std::io::Seek;
    if file.metadata()?.len() != read.len() as u64 {
        return Ok(false);
    }
    file.rewind()?;
    let mut now = Vec::with_capacity(read.len());
    file.take(read.len() as u64 + 1).read_to_end(&mut now)?;
    Ok(now == read)
}

/// Swaps what two paths name, at once. Where an exchange replaces a rename, nothing another
/// program writes is lost: an edit made after the check is found in the file swapped out, and
/// swapped back. What remains is a program that opened the file before the exchange and
/// writes to it, without truncating it, after the second check: its write goes to the old
/// file, which is removed.
#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> io::Result<()> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;

    let a = CString::new(a.as_os_str().as_bytes())?;
    let b = CString::new(b.as_os_str().as_bytes())?;
    // SAFETY: both are NUL-terminated paths that live across the call; with AT_FDCWD they are
    // resolved as `rename` resolves them.
    let result = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    if result == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(not(target_os = "linux"))]
fn exchange(_: &Path, _: &Path) -> io::Result<()> {
    Err(io::ErrorKind::Unsupported.into())
}

/// Whether an exchange failed only for want of support: by the file system (EINVAL,
/// EOPNOTSUPP) or the kernel (ENOSYS).
fn exchange_unsupported(error: &io::Error) -> bool {
    #[cfg(target_os = "linux")]
    if matches!(
        error.raw_os_error(),
        Some(libc::EINVAL | libc::ENOSYS | libc::EOPNOTSUPP)
    ) {
        return true;
    }
    error.kind() == io::ErrorKind::Unsupported
}

/// A temporary file beside the file it replaces, removed when dropped unless renamed.
struct Temporary {
    path: PathBuf,
    file: File,
    renamed: bool,
}

impl Temporary {
    fn create(real: &Path) -> io::Result<Self> {
        let path = temporary_path(real, std::process::id()).ok_or_else(|| io::Error::other("no file name"))?;
        let create = || OpenOptions::new().write(true).create_new(true).mode(0o600).open(&path);
        let file = match create() {
            // This process writes each file once: one with its id was left by a process that
            // had the id before.
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {
                std::fs::remove_file(&path)?;
                create()
            }
            other => other,
        };
        let file = file.map_err(|error| {
            io::Error::new(
                error.kind(),
                format!("cannot create {} beside it: {error}", path.display()),
            )
        })?;
        Ok(Temporary {
            path,
            file,
            renamed: false,
        })
    }

    fn renamed(mut self) {
        self.renamed = true;
    }
}

impl Drop for Temporary {
    fn drop(&mut self) {
        if !self.renamed {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::fs::{self, File};
    use std::io::Write;
    use std::os::unix::fs::MetadataExt;
    use std::path::Path;

    use super::{Replacement, Temporary, exchange, exchange_unsupported, keep_unless_changed, replace};
    use crate::write::NotWritten;

    #[test]
    fn replaces_a_file_that_still_holds_what_was_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.py");
        fs::write(&path, "x = 0\n").unwrap();
        let metadata = fs::metadata(&path).unwrap();
        assert_eq!(
            replace(&path, &metadata, b"x = 0\n", b"x = 1\n").unwrap(),
            Replacement::Done
        );
        assert_eq!(fs::read(&path).unwrap(), b"x = 1\n");
        let error = replace(&path, &metadata, b"x = 0\n", b"x = 2\n").unwrap_err();
        assert!(matches!(error, NotWritten::Changed));
        assert_eq!(fs::read(&path).unwrap(), b"x = 1\n");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    /// A file at `path` holding `text`, opened as the check opens it, and a temporary file
    /// with `fixed` beside it, as `replace` leaves them before the exchange.
    fn before_exchange(path: &Path, text: &str, fixed: &str) -> (File, Temporary, u64) {
        fs::write(path, text).unwrap();
        let verified = File::open(path).unwrap();
        let mut temporary = Temporary::create(path).unwrap();
        temporary.file.write_all(fixed.as_bytes()).unwrap();
        let ours = temporary.file.metadata().unwrap().ino();
        (verified, temporary, ours)
    }

    /// Saves `text` over `path` as an editor does: a new file renamed over it.
    fn save(path: &Path, text: &str) {
        let new = path.with_extension("new");
        fs::write(&new, text).unwrap();
        fs::rename(&new, path).unwrap();
    }

    #[test]
    fn an_edit_between_the_check_and_the_exchange_goes_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.py");
        let (other, probe) = (dir.path().join("b"), dir.path().join("c"));
        fs::write(&other, "").unwrap();
        fs::write(&probe, "").unwrap();
        match exchange(&other, &probe) {
            // Without an exchange `replace` falls back on a rename, with its window.
            Err(error) if exchange_unsupported(&error) => return,
            result => result.unwrap(),
        }
        fs::remove_file(&other).unwrap();
        fs::remove_file(&probe).unwrap();
        // Saved as an editor saves, through a rename, or rewritten in place.
        for in_place in [false, true] {
            let (mut verified, temporary, ours) = before_exchange(&path, "x = 0\n", "x = 1\n");
            if in_place {
                fs::write(&path, "x = 2\n").unwrap();
            } else {
                save(&path, "x = 2\n");
            }
            exchange(&temporary.path, &path).unwrap();
            let result = keep_unless_changed(&temporary.path, &path, &mut verified, b"x = 0\n", ours);
            assert!(matches!(result, Err(NotWritten::Changed)), "in place: {in_place}");
            drop(temporary);
            assert_eq!(fs::read_to_string(&path).unwrap(), "x = 2\n", "in place: {in_place}");
            assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1, "in place: {in_place}");
        }
        // Saved once more after the exchange, over the fixed text: the newest save is kept.
        let (mut verified, temporary, ours) = before_exchange(&path, "x = 0\n", "x = 1\n");
        save(&path, "x = 2\n");
        exchange(&temporary.path, &path).unwrap();
        save(&path, "x = 3\n");
        let result = keep_unless_changed(&temporary.path, &path, &mut verified, b"x = 0\n", ours);
        assert!(matches!(result, Err(NotWritten::Changed)));
        drop(temporary);
        assert_eq!(fs::read_to_string(&path).unwrap(), "x = 3\n");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
        // Unchanged, the fixed text stays and the old file goes.
        let (mut verified, temporary, ours) = before_exchange(&path, "x = 0\n", "x = 1\n");
        exchange(&temporary.path, &path).unwrap();
        let result = keep_unless_changed(&temporary.path, &path, &mut verified, b"x = 0\n", ours);
        assert_eq!(result.unwrap(), Replacement::Done);
        drop(temporary);
        assert_eq!(fs::read_to_string(&path).unwrap(), "x = 1\n");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
