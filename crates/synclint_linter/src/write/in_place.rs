//! Writing a file in place, for a file a renamed new one would change: one with other hard
//! links (they would keep the old text), or whose owner or group a new file cannot have. While
//! it is written, a journal beside it holds its text before and after, so that a run killed
//! mid-write leaves it recoverable: the next run that may fix it finishes the write first.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use super::NotWritten;
use super::leftovers::{is_stale, journal_path};
use crate::regular_file::{open_regular, read_regular_file};

/// Its first line; then `pid=P before=B after=A`, a line ending, and the B bytes before and the A
/// bytes after.
const HEADER: &str = "synclint journal 1\n";

/// Writes `contents` over `real` (canonical, a regular file read as `read`) in place, if it
/// still holds `read`.
pub(super) fn write(real: &Path, read: &[u8], contents: &[u8]) -> Result<(), NotWritten> {
    let journal = Journal::create(real, read, contents)?;
    let mut file = open_regular(real, OpenOptions::new().read(true).write(true))?;
    let mut now = Vec::with_capacity(read.len());
    (&mut file).take(read.len() as u64 + 1).read_to_end(&mut now)?;
    if now != read {
        return Err(NotWritten::Changed);
    }
    // What another program writes between the read above and this write is lost: a window of
    // one system call. A rename does better ([`super::replace`]), but would break the links.
    if let Err(error) = overwrite(&file, contents) {
        // Still running (a full disk, say): the text that was read goes back.
        if overwrite(&file, read).is_err() {
            let reason = format!(
                "{error}; it is left partly written, and the next `--fix` finishes the write from {}",
                journal.path.display()
            );
            journal.keep();
            return Err(NotWritten::Failed(reason));
        }
        return Err(error.into());
    }
    Ok(())
}

/// Writes `text` over `file` from its start, and ends it there.
fn overwrite(file: &File, text: &[u8]) -> io::Result<()> {
    file.write_all_at(text, 0)?;
    file.set_len(text.len() as u64)?;
    file.sync_all()
}

/// Before a file that may be fixed is read: where a journal beside it says a write in place of
/// it was interrupted (its process is gone), the write is finished if the file is as that
/// write left it, and the journal removed. A file changed since is left as it is.
pub fn finish_interrupted_write(path: &Path) -> io::Result<()> {
    let Ok(metadata) = std::fs::symlink_metadata(path) else {
        // Gone: reading it reports that.
        return Ok(());
    };
    let real = if metadata.is_symlink() {
        std::fs::canonicalize(path)?
    } else {
        path.to_path_buf()
    };
    let Some(journal) = journal_path(&real) else {
        return Ok(());
    };
    let bytes = match read_regular_file(&journal) {
        Ok(bytes) => bytes,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(error) => return Err(error),
    };
    let Some(recorded) = Recorded::parse(&bytes) else {
        // Cut short while it was written: the write it was for had not begun.
        return std::fs::remove_file(&journal);
    };
    if !is_stale(&journal, recorded.pid) {
        // A live run is writing the file.
        return Ok(());
    }
    let now = read_regular_file(&real)?;
    if now != recorded.after && now != recorded.before && part_written(&now, recorded.before, recorded.after) {
        let file = open_regular(&real, OpenOptions::new().write(true))?;
        overwrite(&file, recorded.after)?;
    }
    std::fs::remove_file(&journal)
}

/// Whether `now` is what writing `after` over `before` from the start leaves when stopped
/// part way: `after`'s first k bytes over `before` (grown to k bytes where `after` is longer),
/// or `after` whole. Finishing the write leaves states of that form too, should it be stopped.
fn part_written(now: &[u8], before: &[u8], after: &[u8]) -> bool {
    if now == after {
        return true;
    }
    if now.len() != before.len() {
        // Longer than before: only `after`'s start; shorter: only `after` itself, cut to length.
        return now.len() > before.len() && after.starts_with(now);
    }
    // Some k with now[..k] == after[..k] and now[k..] == before[k..].
    let written = now.iter().zip(after).take_while(|(a, b)| a == b).count();
    let kept = now
        .iter()
        .rev()
        .zip(before.iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    before.len() - kept <= written
}

/// A journal being written or held while its file is written.
struct Journal {
    path: PathBuf,
    kept: bool,
}

impl Journal {
    /// Records `before` and `after` beside `real`, on disk before `real` is touched.
    fn create(real: &Path, before: &[u8], after: &[u8]) -> Result<Self, NotWritten> {
        let path = journal_path(real).ok_or_else(|| NotWritten::Failed("no file name".to_string()))?;
        let mut file = match OpenOptions::new().write(true).create_new(true).mode(0o600).open(&path) {
            Ok(file) => file,
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {
                return Err(NotWritten::Failed(format!(
                    "{} is beside it: another synclint run is writing it",
                    path.display()
                )));
            }
            Err(error) => {
                return Err(NotWritten::Failed(format!(
                    "cannot create {} beside it: {error}",
                    path.display()
                )));
            }
        };
        let journal = Journal { path, kept: false };
        let pid = std::process::id();
        let header = format!("{HEADER}pid={pid} before={} after={}\n", before.len(), after.len());
        file.write_all(header.as_bytes())?;
        file.write_all(before)?;
        file.write_all(after)?;
        file.sync_all()?;
        Ok(journal)
    }

    /// Leaves the journal on disk.
    fn keep(mut self) {
        self.kept = true;
    }
}

impl Drop for Journal {
    fn drop(&mut self) {
        if !self.kept {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// What a journal holds.
struct Recorded<'a> {
    pid: u32,
    before: &'a [u8],
    after: &'a [u8],
}

impl<'a> Recorded<'a> {
    /// `None` where the journal is not whole.
    fn parse(bytes: &'a [u8]) -> Option<Self> {
        let rest = bytes.strip_prefix(HEADER.as_bytes())?;
        let end = rest.iter().position(|&b| b == b'\n')?;
        let line = std::str::from_utf8(&rest[..end]).ok()?;
        let body = &rest[end + 1..];
        let mut fields = line.split(' ');
        let mut field = |name: &str| -> Option<usize> { fields.next()?.strip_prefix(name)?.parse().ok() };
        let pid = u32::try_from(field("pid=")?).ok()?;
        let before = field("before=")?;
        let after = field("after=")?;
        if body.len() != before.checked_add(after)? {
            return None;
        }
        let (before, after) = body.split_at(before);
        Some(Recorded { pid, before, after })
    }
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::{HEADER, finish_interrupted_write, part_written, write};
    use crate::write::leftovers::journal_path;

    /// A process id no process has: above Linux's largest (2^22).
    const DEAD: u32 = 4_194_400;

    /// Every state writing `after` over `before` passes through, stopped after each byte.
    fn states(before: &[u8], after: &[u8]) -> Vec<Vec<u8>> {
        let mut states: Vec<Vec<u8>> = (0..=after.len())
            .map(|k| {
                let mut state = after[..k].to_vec();
                state.extend_from_slice(before.get(k..).unwrap_or_default());
                state
            })
            .collect();
        states.push(after.to_vec());
        states
    }

    #[test]
    fn states_of_an_interrupted_write_are_told_from_edits() {
        for (before, after) in [
            (&b"x = a.item()\n"[..], &b"x = a\n"[..]),
            (b"x = a\n", b"x = a.item()\n"),
            (b"abc", b"abd"),
        ] {
            for state in states(before, after) {
                assert!(part_written(&state, before, after), "{state:?}");
            }
        }
        let (before, after) = (b"x = a.item()\n", b"x = a\n");
        assert!(!part_written(b"x = b.item()\n", before, after));
        assert!(!part_written(b"y = a\n", before, after));
        assert!(!part_written(b"x = a.item()\n# more\n", before, after));
    }

    #[test]
    fn an_interrupted_write_is_finished_and_an_edit_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.py");
        let journal = journal_path(&path).unwrap();
        let (before, after) = ("x = a.item()\n", "x = a\n");
        let record = format!(
            "{HEADER}pid={DEAD} before={} after={}\n{before}{after}",
            before.len(),
            after.len()
        );
        for (now, left) in [
            ("x = a\nitem()\n", after),
            (before, before),
            (after, after),
            ("x = b.item()\n", "x = b.item()\n"),
        ] {
            fs::write(&path, now).unwrap();
            fs::write(&journal, &record).unwrap();
            finish_interrupted_write(&path).unwrap();
            assert_eq!(fs::read_to_string(&path).unwrap(), left, "from {now:?}");
            assert!(!journal.exists());
        }
        // A journal cut short is dropped; one of a live run is left alone.
        fs::write(&journal, &record[..record.len() - 1]).unwrap();
        finish_interrupted_write(&path).unwrap();
        assert!(!journal.exists());
        let live = record.replace(&format!("pid={DEAD}"), &format!("pid={}", std::process::id()));
        fs::write(&path, "x = a\nitem()\n").unwrap();
        fs::write(&journal, &live).unwrap();
        finish_interrupted_write(&path).unwrap();
        assert!(journal.exists());
        assert_eq!(fs::read_to_string(&path).unwrap(), "x = a\nitem()\n");
    }

    #[test]
    fn writes_in_place_keeping_the_inode() {
        use std::os::unix::fs::MetadataExt;

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.py");
        fs::write(&path, "x = a.item()\n").unwrap();
        let inode = fs::metadata(&path).unwrap().ino();
        write(&path, b"x = a.item()\n", b"x = a\n").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"x = a\n");
        assert_eq!(fs::metadata(&path).unwrap().ino(), inode);
        assert!(!journal_path(&path).unwrap().exists());
        assert!(write(&path, b"x = a.item()\n", b"x = a\n").is_err());
        assert_eq!(fs::read(&path).unwrap(), b"x = a\n");
    }
}
