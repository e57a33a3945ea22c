//! Writing changed text back over a file a run read (`--fix`, `--add-noqa`): only while the
//! file still holds exactly the bytes that were read, never through a symbolic link out of the
//! folders being linted, keeping the file's owner, group, mode and hard links, and never
//! leaving it partly written, not even when the process is killed.
//!
//! A file is replaced by renaming a complete copy over it ([`replace`]) unless a new file
//! would lose something: other hard links, or an owner or group this process cannot give it.
//! Then it is written in place with a journal beside it ([`in_place`]). What a killed run
//! leaves beside a file is named so that later runs recognise it ([`leftovers`]).

// A file's identity (device and inode), its link count and owner come from Unix metadata; no
// stable API gives them on Windows.
#[cfg(not(unix))]
compile_error!("synclint writes fixes through Unix file metadata: it builds on Linux and macOS");

mod in_place;
mod leftovers;
mod replace;

use std::collections::{BTreeSet, HashSet};
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use miette::{Report, miette};

use replace::Replacement;

pub use in_place::finish_interrupted_write;

/// The folders a run was asked to lint, canonicalised: a folder named on the command line, and
/// for a file named there the folder it is named in (its own link, if it is one, is not
/// followed). Nothing outside them is written. Found at the first write: most runs write
/// nothing.
#[derive(Clone, Default)]
pub struct Roots {
    paths: Vec<PathBuf>,
    cwd: PathBuf,
    canonical: OnceLock<Vec<PathBuf>>,
}

impl Roots {
    pub fn of(paths: &[PathBuf], cwd: &Path) -> Self {
        Roots {
            paths: paths.to_vec(),
            cwd: cwd.to_path_buf(),
            canonical: OnceLock::new(),
        }
    }

    /// Whether a canonical path is inside one of the folders.
    fn contain(&self, real: &Path) -> bool {
        let canonical = self.canonical.get_or_init(|| {
            let folders: BTreeSet<PathBuf> = self
                .paths
                .iter()
                .map(|path| {
                    let path = self.cwd.join(path);
                    match path.parent() {
                        Some(parent) if !path.is_dir() => parent.to_path_buf(),
                        _ => path,
                    }
                })
                .collect();
            folders
                .iter()
                .filter_map(|folder| std::fs::canonicalize(folder).ok())
                .collect()
        });
        canonical.iter().any(|root| real.starts_with(root))
    }
}

/// Why a file was not written; it was left as it was.
#[derive(Debug)]
pub(crate) enum NotWritten {
    /// The file no longer holds the bytes that were read (or is gone).
    Changed,
    /// The path leads through a symbolic link to a file outside the folders being linted:
    /// `link_is_the_file` when the path itself is the link, else one of its folders is.
    LinkOutside { target: PathBuf, link_is_the_file: bool },
    /// Writing failed, for this reason.
    Failed(String),
}

impl NotWritten {
    /// The error naming the file; `consequence` says what was left undone ("not fixed").
    pub fn report(&self, display: &str, consequence: &str) -> Report {
        match self {
            NotWritten::Changed => miette!("{display}: changed while synclint ran; {consequence}"),
            NotWritten::LinkOutside {
                target,
                link_is_the_file: true,
            } => miette!(
                "{display}: is a symbolic link to {}, outside the folders being linted; {consequence}",
                target.display()
            ),
            NotWritten::LinkOutside { target, .. } => miette!(
                "{display}: is in a symbolically linked folder: it is {}, outside the folders being linted; {consequence}",
                target.display()
            ),
            NotWritten::Failed(reason) => miette!("{display}: cannot write it: {reason}; {consequence}"),
        }
    }
}

impl From<io::Error> for NotWritten {
    fn from(error: io::Error) -> Self {
        NotWritten::Failed(error.to_string())
    }
}

/// Which file a path names (its device and inode, through links): two paths of a run may name
/// one file (a link and its target, two hard links), which is written once.
pub type FileId = (u64, u64);

pub(crate) fn file_id(path: &Path) -> Option<FileId> {
    let metadata = std::fs::metadata(path).ok()?;
    Some((metadata.dev(), metadata.ino()))
}

/// Writes files back for one run.
pub(crate) struct Writer<'a> {
    roots: &'a Roots,
    /// The folders whose stale leftovers were removed already.
    swept: Mutex<HashSet<PathBuf>>,
}

impl<'a> Writer<'a> {
    pub fn new(roots: &'a Roots) -> Self {
        Writer {
            roots,
            swept: Mutex::default(),
        }
    }

    /// Writes `contents` over the file at `path`, which was read as `read`.
    pub fn write(&self, path: &Path, read: &[u8], contents: &[u8]) -> Result<(), NotWritten> {
        // Through a symbolic link: the file it points to is written, and the link kept.
        let real = std::fs::canonicalize(path).map_err(|error| match error.kind() {
            io::ErrorKind::NotFound => NotWritten::Changed,
            _ => NotWritten::from(error),
        })?;
        if !self.roots.contain(&real) {
            let link_is_the_file = std::fs::symlink_metadata(path).is_ok_and(|m| m.is_symlink());
            return Err(NotWritten::LinkOutside {
                target: real,
                link_is_the_file,
            });
        }
        let metadata = std::fs::metadata(&real)?;
        // Cheap before anything is written; the bytes are compared just before the rename.
        if !metadata.is_file() || metadata.len() != read.len() as u64 {
            return Err(NotWritten::Changed);
        }
        if metadata.permissions().readonly() {
            return Err(NotWritten::Failed("the file is read-only".to_string()));
        }
        if let Some(folder) = real.parent() {
            self.sweep(folder);
        }
        // A renamed new file would leave other hard links with the old text.
        if metadata.nlink() == 1 {
            match replace::replace(&real, &metadata, read, contents)? {
                Replacement::Done => return Ok(()),
                Replacement::WouldChangeOwner => {}
            }
        }
        in_place::write(&real, read, contents)
    }

    /// Removes the stale temporary files in `folder`, once per run.
    fn sweep(&self, folder: &Path) {
        let first = self
            .swept
            .lock()
            .map(|mut swept| swept.insert(folder.to_path_buf()))
            .unwrap_or(false);
        if first {
            leftovers::remove_stale_temporaries(folder);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    use std::path::Path;

    use super::{NotWritten, Roots, Writer};

    fn roots(dir: &Path) -> Roots {
        Roots::of(&[dir.to_path_buf()], dir)
    }

    fn message(error: NotWritten, display: &str) -> String {
        format!("{}", error.report(display, "not fixed"))
    }

    #[test]
    fn a_file_that_changed_or_vanished_is_not_written() {
        let dir = tempfile::tempdir().unwrap();
        let roots = roots(dir.path());
        let writer = Writer::new(&roots);
        let path = dir.path().join("train.py");
        fs::write(&path, "x = 2\n").unwrap();
        // Same length, other bytes: only the comparison of the bytes finds it.
        let error = writer.write(&path, b"x = 1\n", b"y = 1\n").unwrap_err();
        assert_eq!(
            message(error, "pkg/train.py"),
            "pkg/train.py: changed while synclint ran; not fixed"
        );
        assert_eq!(fs::read(&path).unwrap(), b"x = 2\n");
        let gone = dir.path().join("gone.py");
        assert!(matches!(writer.write(&gone, b"", b"x = 1\n"), Err(NotWritten::Changed)));
        assert!(!gone.exists());
        assert_eq!(
            fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temporary file is left"
        );
    }

    #[test]
    fn a_read_only_file_is_an_error_naming_why() {
        let dir = tempfile::tempdir().unwrap();
        let roots = roots(dir.path());
        let locked = dir.path().join("locked.py");
        fs::write(&locked, "x = 0\n").unwrap();
        fs::set_permissions(&locked, fs::Permissions::from_mode(0o444)).unwrap();
        let error = Writer::new(&roots).write(&locked, b"x = 0\n", b"x = 1\n").unwrap_err();
        assert_eq!(
            message(error, "pkg/locked.py"),
            "pkg/locked.py: cannot write it: the file is read-only; not fixed"
        );
        assert_eq!(fs::read(&locked).unwrap(), b"x = 0\n");
    }

    #[test]
    fn a_write_keeps_the_mode_and_leaves_nothing_beside() {
        let dir = tempfile::tempdir().unwrap();
        let roots = roots(dir.path());
        let path = dir.path().join("run.py");
        fs::write(&path, "x = 0\n").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o751)).unwrap();
        Writer::new(&roots).write(&path, b"x = 0\n", b"x = 1\r\n").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"x = 1\r\n");
        assert_eq!(fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o751);
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn hard_links_keep_sharing_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let roots = roots(dir.path());
        let path = dir.path().join("a.py");
        let twin = dir.path().join("b.py");
        fs::write(&path, "x = 0\n").unwrap();
        fs::hard_link(&path, &twin).unwrap();
        Writer::new(&roots).write(&path, b"x = 0\n", b"x = 10\n").unwrap();
        assert_eq!(fs::read(&twin).unwrap(), b"x = 10\n");
        assert_eq!(fs::metadata(&path).unwrap().ino(), fs::metadata(&twin).unwrap().ino());
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 2, "no journal is left");
    }

    #[test]
    fn links_are_followed_inside_the_roots_only() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let target = outside.path().join("shared.py");
        fs::write(&target, "x = 0\n").unwrap();
        let tree = dir.path().join("tree");
        fs::create_dir(&tree).unwrap();
        std::os::unix::fs::symlink(&target, tree.join("link.py")).unwrap();
        std::os::unix::fs::symlink(outside.path(), tree.join("vendor")).unwrap();
        fs::write(tree.join("real.py"), "x = 0\n").unwrap();
        std::os::unix::fs::symlink("real.py", tree.join("inner.py")).unwrap();
        let roots = roots(&tree);
        let writer = Writer::new(&roots);

        let real_target = fs::canonicalize(&target).unwrap();
        let error = writer.write(&tree.join("link.py"), b"x = 0\n", b"x = 1\n").unwrap_err();
        assert_eq!(
            message(error, "link.py"),
            format!(
                "link.py: is a symbolic link to {}, outside the folders being linted; not fixed",
                real_target.display()
            )
        );
        let error = writer
            .write(&tree.join("vendor/shared.py"), b"x = 0\n", b"x = 1\n")
            .unwrap_err();
        assert!(message(error, "vendor/shared.py").starts_with("vendor/shared.py: is in a symbolically linked folder"),);
        assert_eq!(fs::read(&target).unwrap(), b"x = 0\n");

        writer.write(&tree.join("inner.py"), b"x = 0\n", b"x = 1\n").unwrap();
        assert!(fs::symlink_metadata(tree.join("inner.py")).unwrap().is_symlink());
        assert_eq!(fs::read(tree.join("real.py")).unwrap(), b"x = 1\n");
    }

    #[test]
    fn a_named_link_counts_the_folder_it_is_named_in() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        let target = elsewhere.path().join("a.py");
        fs::write(&target, "x = 0\n").unwrap();
        std::os::unix::fs::symlink(&target, dir.path().join("a.py")).unwrap();
        let roots = Roots::of(&["a.py".into()], dir.path());
        let error = Writer::new(&roots)
            .write(&dir.path().join("a.py"), b"x = 0\n", b"x = 1\n")
            .unwrap_err();
        assert!(matches!(
            error,
            NotWritten::LinkOutside {
                link_is_the_file: true,
                ..
            }
        ));
        // Named through its real folder, it is inside.
        let roots = Roots::of(std::slice::from_ref(&target), dir.path());
        Writer::new(&roots).write(&target, b"x = 0\n", b"x = 1\n").unwrap();
    }
}
