//! The cache's folder and the files in it: which folder may hold the cache, how synclint marks a
//! folder as its own, and which files in it the cache may replace or remove. A file's name is
//! never trusted alone: the cache replaces or removes only files that begin with its signature
//! (and temporary files by their exact name pattern), so a user's files that happen to be in
//! the folder, whatever their names, are left alone.
//!
//! The root folder holds a `CACHEDIR.TAG` (for backup tools), a `.gitignore` and one folder per
//! synclint version; the version folder holds `bucket-XX` files, `project-<hash>` snapshots and,
//! while a file is being written, `temp-<random>` files.

use std::fs;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::SIGNATURE;

/// Marks the folder for backup tools (the Cache Directory Tagging format's signature line);
/// exactly this text also marks it as a folder synclint made (earlier versions wrote the same).
const TAG: &str =
    "Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag created by synclint.\n";
const TAG_NAME: &str = "CACHEDIR.TAG";
const GITIGNORE: &str = "# Created by synclint.\n*\n";

const TEMP_PREFIX: &str = "temp-";
/// Random letters and digits after [`TEMP_PREFIX`].
const TEMP_RANDOM: usize = 12;
/// A temporary file lives from its creation to its rename, a few milliseconds; one this old was
/// left by a run that was killed (a live run's, even one suspended for a while, is younger).
const STALE: Duration = Duration::from_secs(60 * 60);

/// A folder the cache must neither be nor contain, with what it is (for the warning).
pub struct Guarded<'a> {
    pub what: &'a str,
    pub folder: PathBuf,
}

/// Why `root` (absolute, `.` and `..` resolved) may not hold the cache, if it may not: it is or
/// contains a guarded folder or one of the `checked` files (absolute, resolved likewise), or it
/// exists, holds something and synclint did not make it. Guarded folders are compared with
/// symbolic links resolved, so a link to the project root is the project root.
pub fn refusal(root: &Path, guarded: &[Guarded], checked: impl IntoIterator<Item = PathBuf>) -> Option<String> {
    let real = resolved(root);
    for Guarded { what, folder } in guarded {
        let folder = resolved(folder);
        if folder == real {
            return Some(format!("it is {what}"));
        }
        if folder.starts_with(&real) {
            return Some(format!("it contains {what}, {}", folder.display()));
        }
    }
    if let Some(file) = checked.into_iter().find(|file| file.starts_with(root)) {
        return Some(format!("it contains {}, a file being checked", file.display()));
    }
    // A folder that cannot be listed (missing, or not a folder) is not refused here: writing
    // it fails, with its own warning.
    let mut entries = fs::read_dir(root).ok()?;
    let made_by_synclint = fs::read(root.join(TAG_NAME)).is_ok_and(|tag| tag == TAG.as_bytes());
    (entries.next().is_some() && !made_by_synclint)
        .then(|| format!("it is not empty and synclint did not make it (it has no {TAG_NAME} written by synclint)"))
}

/// `path` with symbolic links resolved in the part of it that exists.
fn resolved(path: &Path) -> PathBuf {
    let mut missing = Vec::new();
    let mut existing = path;
    loop {
        if let Ok(real) = fs::canonicalize(existing) {
            return missing.iter().rev().fold(real, |real, name| real.join(name));
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                missing.push(name);
                existing = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// Makes the root folder synclint's: its tag first (what marks it), then its `.gitignore`. Each
/// is written only where it does not exist, and by one run only where several race to make it.
pub fn create_root(root: &Path) -> io::Result<()> {
    fs::create_dir_all(root)?;
    write_new(&root.join(TAG_NAME), TAG)?;
    write_new(&root.join(".gitignore"), GITIGNORE)
}

fn write_new(path: &Path, text: &str) -> io::Result<()> {
    match fs::OpenOptions::new().write(true).create_new(true).open(path) {
        Ok(mut file) => file.write_all(text.as_bytes()),
        Err(error) if error.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        Err(error) => Err(error),
    }
}

pub fn bucket_path(folder: &Path, index: usize) -> PathBuf {
    folder.join(format!("bucket-{index:02x}"))
}

pub fn snapshot_path(folder: &Path, hash: u128) -> PathBuf {
    folder.join(format!("project-{hash:032x}"))
}

/// A temporary file in `folder`, removed when dropped unless it was renamed into place.
pub fn temp_file(folder: &Path) -> io::Result<tempfile::NamedTempFile> {
    tempfile::Builder::new()
        .prefix(TEMP_PREFIX)
        .rand_bytes(TEMP_RANDOM)
        .tempfile_in(folder)
}

/// What a file in the version folder is, by its name.
#[derive(Debug, PartialEq, Eq)]
enum Kind {
    Bucket,
    Snapshot,
    Temp,
    Other,
}

fn kind(name: &str) -> Kind {
    let is_hex = |text: &str, length: usize| {
        text.len() == length && text.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    };
    if name.strip_prefix("bucket-").is_some_and(|rest| is_hex(rest, 2)) {
        Kind::Bucket
    } else if name.strip_prefix("project-").is_some_and(|rest| is_hex(rest, 32)) {
        Kind::Snapshot
    } else if name
        .strip_prefix(TEMP_PREFIX)
        .is_some_and(|rest| rest.len() == TEMP_RANDOM && rest.bytes().all(|b| b.is_ascii_alphanumeric()))
    {
        Kind::Temp
    } else {
        Kind::Other
    }
}

/// Whether the cache may write `path`: nothing is there, or a regular file the cache wrote.
pub fn replaceable(path: &Path) -> io::Result<bool> {
    match fs::symlink_metadata(path) {
        Ok(metadata) => Ok(metadata.is_file() && has_signature(path)),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(true),
        Err(error) => Err(error),
    }
}

/// Whether a file begins with the signature of the cache's files (of any format version).
fn has_signature(path: &Path) -> bool {
    let mut start = [0; SIGNATURE.len()];
    fs::File::open(path)
        .and_then(|mut file| file.read_exact(&mut start))
        .is_ok_and(|()| start == *SIGNATURE)
}

/// Removes from the version folder `folder` what killed runs left and all but the `keep` most
/// recently written snapshots (`kept`, just written, among them). Removed: stale temporary
/// files (by their exact name pattern) and stale files that begin with the cache's signature
/// under a name the cache does not use (earlier versions' temporary files). A snapshot is
/// removed only where it begins with the signature. Other runs may be writing meanwhile: a
/// file is removed only where its modification time is still the one it was chosen by.
pub fn tidy(folder: &Path, kept: &Path, keep: usize) {
    let Ok(entries) = fs::read_dir(folder) else {
        return;
    };
    let now = SystemTime::now();
    let is_stale = |modified: SystemTime| now.duration_since(modified).is_ok_and(|age| age >= STALE);
    let mut snapshots: Vec<(SystemTime, PathBuf)> = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        // Not followed: a link is never the cache's.
        let Ok(metadata) = entry.metadata() else { continue };
        let Ok(modified) = metadata.modified() else { continue };
        if !metadata.is_file() {
            continue;
        }
        match kind(&entry.file_name().to_string_lossy()) {
            Kind::Snapshot if path != kept && has_signature(&path) => snapshots.push((modified, path)),
            Kind::Temp if is_stale(modified) => remove_unchanged(&path, modified),
            Kind::Other if is_stale(modified) && has_signature(&path) => remove_unchanged(&path, modified),
            Kind::Bucket | Kind::Snapshot | Kind::Temp | Kind::Other => {}
        }
    }
    snapshots.sort();
    let excess = (snapshots.len() + 1).saturating_sub(keep);
    for (modified, path) in snapshots.into_iter().take(excess) {
        remove_unchanged(&path, modified);
    }
}

/// Removes `path` unless it was written since it was seen at `modified` (another run may have
/// just written it); one that another run removed first is gone either way.
fn remove_unchanged(path: &Path, modified: SystemTime) {
    let unchanged = fs::symlink_metadata(path)
        .and_then(|metadata| metadata.modified())
        .is_ok_and(|now| now == modified);
    if unchanged {
        let _ = fs::remove_file(path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_recognised_exactly() {
        assert_eq!(kind("bucket-3f"), Kind::Bucket);
        assert_eq!(kind(&format!("project-{:032x}", 7u128)), Kind::Snapshot);
        assert_eq!(kind("temp-aB3dE5gH7jK9"), Kind::Temp);
        for other in [
            "bucket-3F",
            "bucket-3",
            "bucket-zz",
            "project-x",
            "project-0123",
            "temp-aB3dE5gH7jK",
            "temp-aB3dE5gH7jK9x",
            "temp-aB3dE5gH7j-9",
            ".tmpAbC123",
            "CACHEDIR.TAG",
        ] {
            assert_eq!(kind(other), Kind::Other, "{other}");
        }
        let folder = tempfile::tempdir().unwrap();
        let temp = temp_file(folder.path()).unwrap();
        let name = temp.path().file_name().unwrap().to_string_lossy().into_owned();
        assert_eq!(kind(&name), Kind::Temp, "{name}");
    }

    #[test]
    fn a_folder_is_resolved_through_links_where_it_exists() {
        let folder = tempfile::tempdir().unwrap();
        let real = fs::canonicalize(folder.path()).unwrap();
        fs::create_dir(real.join("a")).unwrap();
        std::os::unix::fs::symlink(real.join("a"), real.join("link")).unwrap();
        assert_eq!(resolved(&real.join("link/b/c")), real.join("a/b/c"));
        assert_eq!(resolved(&real.join("missing")), real.join("missing"));
    }
}
