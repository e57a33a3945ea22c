//! What a write puts beside a file while it runs, named so that it is recognised:
//! `.NAME.synclint-PID.tmp`, the new text before it is renamed over NAME, and
//! `.NAME.synclint.journal`, NAME's text before and after while NAME is written in place. A
//! run killed mid-write leaves them behind: later runs remove the stale temporary files of the
//! folders they write in, and finish the write a journal records before reading its file.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

const MARK: &str = ".synclint-";
const TEMPORARY: &str = ".tmp";
const JOURNAL: &str = ".synclint.journal";

/// How old a leftover must be to be stale whatever its process id says. A temporary file lives
/// from its creation to its rename, and a journal for one write in place: milliseconds, seconds
/// on the slowest disk. One older than this was left by a run that died, and the live process
/// its id names is another one that got the id later. Taking a leftover from a live run that
/// was stopped this long loses nothing: its rename fails and it reports the file not fixed.
pub(super) const STALE_AFTER: Duration = Duration::from_secs(10 * 60);

/// Where the new text of `real` is written before it is renamed over it, for process `pid`.
pub(super) fn temporary_path(real: &Path, pid: u32) -> Option<PathBuf> {
    let mut name = OsString::from(".");
    name.push(real.file_name()?);
    name.push(format!("{MARK}{pid}{TEMPORARY}"));
    Some(real.with_file_name(name))
}

/// Where the journal of a write in place of `real` is kept.
pub(super) fn journal_path(real: &Path) -> Option<PathBuf> {
    let mut name = OsString::from(".");
    name.push(real.file_name()?);
    name.push(JOURNAL);
    Some(real.with_file_name(name))
}

/// The process id in a temporary file's name: `.NAME.synclint-PID.tmp` with NAME not empty and
/// PID digits only; `None` for any other name.
fn temporary_pid(file_name: &[u8]) -> Option<u32> {
    let rest = file_name.strip_prefix(b".")?.strip_suffix(TEMPORARY.as_bytes())?;
    let at = rest.windows(MARK.len()).rposition(|window| window == MARK.as_bytes())?;
    let digits = &rest[at + MARK.len()..];
    if at == 0 || digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(digits).ok()?.parse().ok()
}

/// Whether the leftover at `path`, made by process `pid`, is stale: its process is gone, or it
/// is older than [`STALE_AFTER`].
pub(super) fn is_stale(path: &Path, pid: u32) -> bool {
    let Ok(metadata) = std::fs::symlink_metadata(path) else {
        return false;
    };
    let age = metadata
        .modified()
        .ok()
        .and_then(|modified| SystemTime::now().duration_since(modified).ok());
    !process_is_running(pid) || age.is_some_and(|age| age > STALE_AFTER)
}

/// Whether a process with this id runs. Where that cannot be told (no `/proc`), it is taken to
/// run, and only age makes its leftovers stale.
fn process_is_running(pid: u32) -> bool {
    let proc = Path::new("/proc");
    !proc.join("self").exists() || proc.join(pid.to_string()).exists()
}

/// Removes the stale temporary files in `folder` (regular files whose name is exactly the
/// pattern); returns how many. Failing to list or remove them only leaves them.
pub(super) fn remove_stale_temporaries(folder: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return 0;
    };
    entries
        .flatten()
        .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_file()))
        .filter(|entry| {
            let path = entry.path();
            temporary_pid(entry.file_name().as_encoded_bytes())
                .is_some_and(|pid| is_stale(&path, pid) && std::fs::remove_file(&path).is_ok())
        })
        .count()
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::path::Path;

    use super::{journal_path, remove_stale_temporaries, temporary_path, temporary_pid};

    /// A process id no process has: above Linux's largest (2^22).
    const DEAD: u32 = 4_194_400;

    #[test]
    fn names_follow_the_file() {
        let temporary = temporary_path(Path::new("/p/train.py"), 42).unwrap();
        assert_eq!(temporary, Path::new("/p/.train.py.synclint-42.tmp"));
        let journal = journal_path(Path::new("/p/train.py")).unwrap();
        assert_eq!(journal, Path::new("/p/.train.py.synclint.journal"));
        assert_eq!(temporary_pid(b".train.py.synclint-42.tmp"), Some(42));
        assert_eq!(temporary_pid(b".a.synclint-7.synclint-9.tmp"), Some(9));
        for other in [
            "train.py.synclint-42.tmp",
            "..synclint-42.tmp",
            ".train.py.synclint-.tmp",
            ".train.py.synclint-4x.tmp",
            ".train.py.synclint-42.tmp.bak",
            ".train.py.synclint.journal",
            ".train.py.tmp",
        ] {
            assert_eq!(temporary_pid(other.as_bytes()), None, "{other}");
        }
    }

    #[test]
    fn only_stale_temporaries_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let live = std::process::id();
        let names = [
            format!(".a.py.synclint-{DEAD}.tmp"),
            format!(".b.py.synclint-{live}.tmp"),
            format!("b.py.synclint-{DEAD}.tmp"),
            format!(".c.py.synclint-{DEAD}.tmp.keep"),
            "notes.tmp".to_string(),
        ];
        for name in &names {
            fs::write(dir.path().join(name), "x").unwrap();
        }
        fs::create_dir(dir.path().join(format!(".d.synclint-{DEAD}.tmp"))).unwrap();
        assert_eq!(remove_stale_temporaries(dir.path()), 1);
        assert!(!dir.path().join(&names[0]).exists());
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), names.len());
    }

    #[test]
    fn an_old_temporary_is_stale_whatever_its_process() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(format!(".a.py.synclint-{}.tmp", std::process::id()));
        let file = fs::File::create(&path).unwrap();
        let long_ago = std::time::SystemTime::now() - super::STALE_AFTER * 2;
        file.set_modified(long_ago).unwrap();
        assert_eq!(remove_stale_temporaries(dir.path()), 1);
        assert!(!path.exists());
    }
}
