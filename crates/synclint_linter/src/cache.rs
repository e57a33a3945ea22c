//! The cache of per-file results: what checking a file produced (findings, fixes, syntax errors
//! and the summary the project pass reads), keyed by the file's path, its content, the settings
//! that shape its check and the project facts it was checked with. Project facts are derived
//! again on every run from the summaries, so a warm run parses nothing that did not change and
//! still gives the result a cold run gives. Where no file of the project changed at all, the
//! project pass's conclusions are kept too (see [`Snapshot`]).
//!
//! A file's content is known by its hash. As git's index does, an entry also records the file's
//! size and modification time: where both still match, the file is not read again to hash it
//! (files changed less than two seconds before their entry was made get no such record, as a
//! later change within the clock's resolution could keep both).
//!
//! On disk: `<cache-dir>/<version>/bucket-XX`, each file holding the entries of the paths that
//! hash to it, and `project-<hash>`, a project's [`Snapshot`], each behind a header with the
//! cache's signature, synclint's build and a checksum. A bucket that is missing, truncated,
//! corrupt or from another build reads as empty and is rewritten; a file without the signature
//! is never replaced or removed, whatever its name (see `cache/folder.rs`). Buckets are written
//! whole to a temporary file and renamed into place, so two processes writing at once
//! (pre-commit runs hooks in parallel) leave one of their versions, each complete.
//!
//! A folder that would hold or hide what is being checked, or a folder synclint did not make
//! that already holds something, is refused: the run goes on without a cache and writes nothing.

use std::hash::Hash;
use std::io::Write;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::{SystemTime, UNIX_EPOCH};

use miette::{Report, miette};
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use xxhash_rust::xxh3::{Xxh3Default, xxh3_64};

use crate::linter::FileLint;
use crate::registry::RuleSet;
use crate::semantic::{FileFacts, FunctionId};

mod folder;

pub use folder::Guarded;

/// Paths are spread over this many files: a warm run reads few files, and an edit rewrites the
/// entries of a small share of the project.
const BUCKETS: usize = 64;
/// How every file the cache writes begins, whatever its format: what marks a file as the cache's.
const SIGNATURE: &[u8; 15] = b"synclint-cache\0";
/// The signature and the format of the files this build writes.
const MAGIC: &[u8; 16] = b"synclint-cache\0\x02";
/// The build: results never outlive the code that produced them.
const BUILD: &str = concat!(env!("CARGO_PKG_VERSION"), "-", env!("SYNCLINT_BUILD_ID"));
/// The default folder, in the project root (or the working directory outside a project).
pub const DEFAULT_DIR: &str = ".synclint_cache";
/// The checks of one content kept, each under other project facts (a file is checked with none,
/// then with what the project pass told it).
const VARIANTS: usize = 3;
/// A file modified this recently may change again without its size or time changing.
const RACY_NANOS: i128 = 2_000_000_000;

/// What a file's check depends on besides the project facts: its bytes and the settings that
/// shape it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileKey(u128);

impl FileKey {
    /// `every_call`: whether calls in cold code were recorded too (the call graph's check).
    pub fn new(text: &str, rules: RuleSet, hot_functions: &[String], every_call: bool) -> Self {
        let mut hasher = Xxh3Default::new();
        rules.hash(&mut hasher);
        hot_functions.hash(&mut hasher);
        every_call.hash(&mut hasher);
        hasher.update(text.as_bytes());
        FileKey(hasher.digest128())
    }
}

/// A file's size and modification time (nanoseconds since the epoch).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStat {
    len: u64,
    modified: i128,
}

impl FileStat {
    pub fn of(metadata: &std::fs::Metadata) -> Option<Self> {
        let modified = metadata.modified().ok()?;
        let modified = match modified.duration_since(UNIX_EPOCH) {
            Ok(after) => after.as_nanos() as i128,
            Err(before) => -(before.duration().as_nanos() as i128),
        };
        Some(FileStat {
            len: metadata.len(),
            modified,
        })
    }
}

/// The facts a file was checked with, as a number.
fn facts_key(facts: &FileFacts) -> u128 {
    let mut hasher = Xxh3Default::new();
    facts.hash(&mut hasher);
    hasher.digest128()
}

/// One path's results: for its key, the check under each set of facts it was checked with
/// (encoded, where in the bucket's bytes).
struct Entry {
    key: FileKey,
    stat: Option<FileStat>,
    variants: Vec<(u128, Range<usize>)>,
}

/// A bucket as read: its bytes, and its entries by path.
#[derive(Default)]
struct Stored {
    bytes: Vec<u8>,
    entries: FxHashMap<String, Entry>,
}

/// What this run looked up for one path: each variant's bytes where the check was new
/// (`None`: read from the bucket).
struct Used {
    key: FileKey,
    stat: Option<FileStat>,
    variants: Vec<(u128, Option<Vec<u8>>)>,
}

#[derive(Default)]
struct Bucket {
    stored: OnceLock<Stored>,
    used: Mutex<FxHashMap<String, Used>>,
}

/// The cache of one run.
pub struct Cache {
    root: PathBuf,
    folder: PathBuf,
    cwd: PathBuf,
    /// When the run started, in nanoseconds since the epoch.
    started: i128,
    buckets: Box<[Bucket]>,
}

impl Cache {
    /// The cache in `root` (absolute), for paths relative to `cwd`, unless `root` is or contains
    /// a `guarded` folder or one of the `checked` files, or already holds something and was not
    /// made by synclint: then why it is refused. Nothing is read until asked for.
    pub fn open<'p>(
        root: PathBuf,
        cwd: PathBuf,
        guarded: &[Guarded],
        checked: impl Iterator<Item = &'p Path>,
    ) -> Result<Self, Report> {
        let root = crate::config::absolute(&root, &cwd);
        let checked = checked.map(|path| crate::config::absolute(path, &cwd));
        match folder::refusal(&root, guarded, checked) {
            Some(reason) => Err(miette!(
                "not using {} as the cache: {reason}; running without a cache",
                root.display()
            )),
            None => Ok(Cache::new(root, cwd)),
        }
    }

    fn new(root: PathBuf, cwd: PathBuf) -> Self {
        let folder = root.join(env!("CARGO_PKG_VERSION"));
        let started = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |now| now.as_nanos() as i128);
        Cache {
            root,
            folder,
            cwd,
            started,
            buckets: (0..BUCKETS).map(|_| Bucket::default()).collect(),
        }
    }

    /// The path as entries name it (absolute); `None` for a path that is not UTF-8.
    fn name(&self, path: &Path) -> Option<String> {
        self.cwd.join(path).into_os_string().into_string().ok()
    }

    /// The bucket of a path, with what earlier runs stored in it (read on first use).
    fn bucket(&self, name: &str) -> (&Bucket, &Stored) {
        let index = (xxh3_64(name.as_bytes()) % BUCKETS as u64) as usize;
        let bucket = &self.buckets[index];
        let stored = bucket
            .stored
            .get_or_init(|| read_bucket(&folder::bucket_path(&self.folder, index)));
        (bucket, stored)
    }

    /// The key of `path` as an earlier run found it, where its size and time still match.
    pub fn known_key(&self, path: &Path, stat: FileStat) -> Option<FileKey> {
        let name = self.name(path)?;
        let entry = self.bucket(&name).1.entries.get(&name)?;
        (entry.stat == Some(stat)).then_some(entry.key)
    }

    /// What checking `path` (with `key`) under `facts` produced in an earlier run.
    pub fn get(&self, path: &Path, key: FileKey, stat: Option<FileStat>, facts: &FileFacts) -> Option<FileLint> {
        let name = self.name(path)?;
        let (bucket, stored) = self.bucket(&name);
        let entry = stored.entries.get(&name).filter(|entry| entry.key == key)?;
        let facts = facts_key(facts);
        let (_, range) = entry.variants.iter().find(|(variant, _)| *variant == facts)?;
        let (lint, _) = bincode::decode_from_slice(&stored.bytes[range.clone()], bincode::config::standard()).ok()?;
        self.record(bucket, name, key, stat, facts, None);
        Some(lint)
    }

    /// Keeps what checking `path` (with `key`) under `facts` produced.
    pub fn put(&self, path: &Path, key: FileKey, stat: Option<FileStat>, facts: &FileFacts, lint: &FileLint) {
        let Some(name) = self.name(path) else { return };
        let Ok(bytes) = bincode::encode_to_vec(lint, bincode::config::standard()) else {
            return;
        };
        self.record(self.bucket(&name).0, name, key, stat, facts_key(facts), Some(bytes));
    }

    fn record(
        &self,
        bucket: &Bucket,
        name: String,
        key: FileKey,
        stat: Option<FileStat>,
        facts: u128,
        bytes: Option<Vec<u8>>,
    ) {
        let stat = stat.filter(|stat| self.started - stat.modified >= RACY_NANOS);
        let mut used = bucket.used.lock().unwrap_or_else(|e| e.into_inner());
        let used = used.entry(name).or_insert_with(|| Used {
            key,
            stat,
            variants: Vec::new(),
        });
        if used.key != key {
            // The file changed during the run: only its latest content counts.
            used.key = key;
            used.variants.clear();
        }
        used.stat = stat;
        used.variants.retain(|(variant, _)| *variant != facts);
        used.variants.push((facts, bytes));
    }

    /// Writes the buckets whose entries this run changed. Entries of paths this run did not
    /// look up are kept while their file exists.
    pub fn save(self) -> Result<(), Report> {
        let Cache {
            root, folder, buckets, ..
        } = self;
        let failed = |e: &dyn std::fmt::Display| miette!("cannot write the cache in {}: {e}", root.display());
        // Made by the first bucket that changed (none where nothing did).
        let folders: OnceLock<Result<(), String>> = OnceLock::new();
        // Each bucket is written as soon as its payload is made: the payloads of every bucket
        // are never held at once beside the run's summaries (about 40 MiB on the corpus). A
        // bucket that cannot be written does not keep the others from being written.
        let failures: Vec<Report> = buckets
            .into_par_iter()
            .enumerate()
            .filter_map(|(index, bucket)| {
                let used = bucket.used.into_inner().unwrap_or_else(|e| e.into_inner());
                let stored = bucket.stored.into_inner().unwrap_or_default();
                let payload = updated(stored, used)?;
                let written = folders
                    .get_or_init(|| {
                        folder::create_root(&root)
                            .and_then(|()| std::fs::create_dir_all(&folder))
                            .map_err(|e| e.to_string())
                    })
                    .as_ref()
                    .map_err(|e| failed(e))
                    .and_then(|()| {
                        write_checked(&folder, &folder::bucket_path(&folder, index), &payload).map_err(|e| failed(&e))
                    });
                written.err()
            })
            .collect();
        failures.into_iter().next().map_or(Ok(()), Err)
    }
}

/// What the project pass concluded for every file of a project, kept under the key of every
/// file's content and settings: a run that finds the same files with the same keys would repeat
/// that pass exactly, and takes its conclusions instead (the named files' facts, to check them
/// with, and why their functions are hot).
#[derive(bincode::Encode, bincode::Decode)]
pub struct Snapshot {
    project: u128,
    /// In the order of the run's files.
    pub files: Vec<SnapshotFile>,
}

#[derive(bincode::Encode, bincode::Decode)]
pub struct SnapshotFile {
    pub facts: FileFacts,
    pub notes: Vec<(FunctionId, String)>,
}

/// Snapshots kept at once (one per set of files: a project, or one checked `--isolated`); the
/// least recently written go first.
const SNAPSHOTS: usize = 8;

impl Cache {
    /// The snapshot's file for a project: by its paths, in any order.
    fn snapshot_path(&self, sorted: &[(&Path, FileKey)]) -> PathBuf {
        let mut hasher = Xxh3Default::new();
        self.cwd.hash(&mut hasher);
        for (path, _) in sorted {
            path.hash(&mut hasher);
        }
        folder::snapshot_path(&self.folder, hasher.digest128())
    }

    /// The key of a project: its files' paths (from the working folder, as notes name them)
    /// and keys.
    fn project_key(&self, sorted: &[(&Path, FileKey)]) -> u128 {
        let mut hasher = Xxh3Default::new();
        self.cwd.hash(&mut hasher);
        for (path, key) in sorted {
            path.hash(&mut hasher);
            hasher.update(&key.0.to_le_bytes());
        }
        hasher.digest128()
    }

    /// What the snapshot of `files` (with their keys) concluded for each, in their order, if
    /// their keys are the ones it was made with.
    pub fn snapshot(&self, files: &[(&Path, FileKey)]) -> Option<Vec<SnapshotFile>> {
        let order = sorted_order(files);
        let sorted: Vec<_> = order.iter().map(|&index| files[index]).collect();
        let bytes = read_checked(&self.snapshot_path(&sorted))?;
        let (snapshot, _): (Snapshot, _) = bincode::decode_from_slice(&bytes, bincode::config::standard()).ok()?;
        if snapshot.project != self.project_key(&sorted) || snapshot.files.len() != files.len() {
            return None;
        }
        let mut concluded: Vec<Option<SnapshotFile>> = snapshot.files.into_iter().map(Some).collect();
        let mut in_order: Vec<Option<SnapshotFile>> = (0..files.len()).map(|_| None).collect();
        for (sorted_at, index) in order.into_iter().enumerate() {
            in_order[index] = concluded[sorted_at].take();
        }
        in_order.into_iter().collect()
    }

    /// Keeps what the project pass concluded about each of `files` (with their keys).
    pub fn save_snapshot(&self, files: &[(&Path, FileKey)], conclusions: Vec<SnapshotFile>) -> Result<(), Report> {
        let order = sorted_order(files);
        let sorted: Vec<_> = order.iter().map(|&index| files[index]).collect();
        let mut conclusions: Vec<Option<SnapshotFile>> = conclusions.into_iter().map(Some).collect();
        let snapshot = Snapshot {
            project: self.project_key(&sorted),
            files: order.iter().filter_map(|&index| conclusions[index].take()).collect(),
        };
        let failed = |e: std::io::Error| miette!("cannot write the cache in {}: {e}", self.root.display());
        let payload = bincode::encode_to_vec(&snapshot, bincode::config::standard())
            .map_err(|e| miette!("cannot encode the project's snapshot: {e}"))?;
        folder::create_root(&self.root).map_err(failed)?;
        std::fs::create_dir_all(&self.folder).map_err(failed)?;
        let path = self.snapshot_path(&sorted);
        write_checked(&self.folder, &path, &payload).map_err(failed)?;
        folder::tidy(&self.folder, &path, SNAPSHOTS);
        Ok(())
    }
}

/// The indices of `files` in the order of their paths.
fn sorted_order(files: &[(&Path, FileKey)]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..files.len()).collect();
    order.sort_by(|&a, &b| files[a].0.as_os_str().cmp(files[b].0.as_os_str()));
    order
}

/// The bucket's payload after this run, or `None` where nothing changed.
fn updated(stored: Stored, used: FxHashMap<String, Used>) -> Option<Vec<u8>> {
    let Stored { bytes, mut entries } = stored;
    // A run that only read what was there changes nothing (a run that took the project pass's
    // conclusions from a snapshot reads fewer variants than the run that wrote them).
    let unchanged = used.iter().all(|(name, used)| {
        entries.get(name).is_some_and(|old| {
            old.key == used.key
                && old.stat == used.stat
                && used
                    .variants
                    .iter()
                    .all(|(facts, new)| new.is_none() && old.variants.iter().any(|(v, _)| v == facts))
        })
    });
    if unchanged {
        return None;
    }
    let mut payload = Vec::new();
    let mut count: u32 = 0;
    payload.extend_from_slice(&count.to_le_bytes());
    for (name, used) in &used {
        let old = entries.remove(name).filter(|old| old.key == used.key);
        let stored = |facts: &u128| {
            let (_, range) = old.as_ref()?.variants.iter().find(|(v, _)| v == facts)?;
            Some(&bytes[range.clone()])
        };
        let mut variants: Vec<(u128, &[u8])> = used
            .variants
            .iter()
            .filter_map(|(facts, new)| Some((*facts, new.as_deref().or_else(|| stored(facts))?)))
            .collect();
        // The file's other checks of the same content stay, the most recent first, while there
        // is room: the next run that is not a snapshot's replay checks it under those facts again.
        let kept_before = old
            .iter()
            .flat_map(|old| &old.variants)
            .filter(|(facts, _)| !used.variants.iter().any(|(used, _)| used == facts));
        variants.extend(kept_before.map(|(facts, range)| (*facts, &bytes[range.clone()])));
        variants.truncate(VARIANTS);
        encode_entry(&mut payload, name, used.key, used.stat, variants);
        count += 1;
    }
    // Entries of paths this run did not look up stay while their file exists.
    for (name, entry) in &entries {
        if Path::new(name).exists() {
            let variants = entry
                .variants
                .iter()
                .map(|(facts, range)| (*facts, &bytes[range.clone()]));
            encode_entry(&mut payload, name, entry.key, entry.stat, variants.collect());
            count += 1;
        }
    }
    payload[..4].copy_from_slice(&count.to_le_bytes());
    Some(payload)
}

/// One entry of a bucket's payload: its path, key, stat and each variant's facts and bytes,
/// lengths as little-endian `u32`.
fn encode_entry(payload: &mut Vec<u8>, name: &str, key: FileKey, stat: Option<FileStat>, variants: Vec<(u128, &[u8])>) {
    payload.extend_from_slice(&(name.len() as u32).to_le_bytes());
    payload.extend_from_slice(name.as_bytes());
    payload.extend_from_slice(&key.0.to_le_bytes());
    match stat {
        Some(stat) => {
            payload.push(1);
            payload.extend_from_slice(&stat.len.to_le_bytes());
            payload.extend_from_slice(&stat.modified.to_le_bytes());
        }
        None => payload.push(0),
    }
    payload.extend_from_slice(&(variants.len() as u32).to_le_bytes());
    for (facts, bytes) in variants {
        payload.extend_from_slice(&facts.to_le_bytes());
        payload.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
        payload.extend_from_slice(bytes);
    }
}

/// Reads a bucket's payload, as [`updated`] and [`encode_entry`] lay it out.
struct Reader<'b> {
    bytes: &'b [u8],
    at: usize,
}

impl<'b> Reader<'b> {
    fn take(&mut self, n: usize) -> Option<&'b [u8]> {
        let taken = self.bytes.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(taken)
    }

    fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        self.take(N)?.try_into().ok()
    }

    fn u32(&mut self) -> Option<usize> {
        Some(u32::from_le_bytes(self.array()?) as usize)
    }

    fn entries(&mut self) -> Option<FxHashMap<String, Entry>> {
        let count = self.u32()?;
        let mut entries = FxHashMap::default();
        for _ in 0..count {
            let length = self.u32()?;
            let name = std::str::from_utf8(self.take(length)?).ok()?.to_string();
            let key = FileKey(u128::from_le_bytes(self.array()?));
            let stat = match self.array::<1>()? {
                [0] => None,
                _ => Some(FileStat {
                    len: u64::from_le_bytes(self.array()?),
                    modified: i128::from_le_bytes(self.array()?),
                }),
            };
            let variants = (0..self.u32()?)
                .map(|_| {
                    let facts = u128::from_le_bytes(self.array()?);
                    let length = self.u32()?;
                    let start = self.at;
                    self.take(length)?;
                    Some((facts, start..start + length))
                })
                .collect::<Option<Vec<_>>>()?;
            entries.insert(name, Entry { key, stat, variants });
        }
        Some(entries)
    }
}

/// A cache file's payload; `None` where it is missing or unreadable, damaged, or was written by
/// another build.
fn read_checked(path: &Path) -> Option<Vec<u8>> {
    let mut bytes = std::fs::read(path).ok()?;
    let header = MAGIC.len() + BUILD.len() + 16;
    if bytes.len() < header || &bytes[..MAGIC.len()] != MAGIC || &bytes[MAGIC.len()..header - 16] != BUILD.as_bytes() {
        return None;
    }
    let length = u64::from_le_bytes(bytes[header - 16..header - 8].try_into().ok()?);
    let checksum = u64::from_le_bytes(bytes[header - 8..header].try_into().ok()?);
    if (bytes.len() - header) as u64 != length || xxh3_64(&bytes[header..]) != checksum {
        return None;
    }
    bytes.drain(..header);
    Some(bytes)
}

/// A bucket's entries; empty where its file cannot be used.
fn read_bucket(path: &Path) -> Stored {
    let Some(bytes) = read_checked(path) else {
        return Stored::default();
    };
    let entries = Reader { bytes: &bytes, at: 0 }.entries();
    match entries {
        Some(entries) => Stored { bytes, entries },
        None => Stored::default(),
    }
}

/// Writes a cache file (header, then payload) through a temporary file renamed over it, where
/// what is at `path` is the cache's own (see [`folder::replaceable`]). A temporary file left by
/// an error is removed.
fn write_checked(folder: &Path, path: &Path, payload: &[u8]) -> std::io::Result<()> {
    let mut temp = folder::temp_file(folder)?;
    temp.write_all(MAGIC)?;
    temp.write_all(BUILD.as_bytes())?;
    temp.write_all(&(payload.len() as u64).to_le_bytes())?;
    temp.write_all(&xxh3_64(payload).to_le_bytes())?;
    temp.write_all(payload)?;
    // Checked last, as near the rename as can be.
    if !folder::replaceable(path)? {
        return Err(std::io::Error::other(format!(
            "{} was not written by synclint (it does not begin with the cache's signature), so it is left alone",
            path.display()
        )));
    }
    temp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lint() -> FileLint {
        crate::linter::lint_source(
            "for x in loader:\n    print(model(x).item())\n",
            crate::parse::SourceKind::Python,
            RuleSet::all(),
            &[],
            &FileFacts::default(),
            false,
            false,
        )
    }

    #[test]
    fn a_payload_cut_anywhere_reads_as_nothing() {
        let folder = tempfile::tempdir().unwrap();
        let cache = Cache::new(folder.path().to_path_buf(), folder.path().to_path_buf());
        let key = FileKey::new("x", RuleSet::all(), &[], false);
        for name in ["a.py", "b.py", "c.py"] {
            cache.put(Path::new(name), key, None, &FileFacts::default(), &lint());
        }
        let payloads: Vec<Vec<u8>> = cache
            .buckets
            .into_vec()
            .into_iter()
            .filter_map(|bucket| updated(Stored::default(), bucket.used.into_inner().unwrap()))
            .collect();
        assert!(!payloads.is_empty());
        for payload in payloads {
            let whole = Reader { bytes: &payload, at: 0 }
                .entries()
                .expect("a whole payload reads");
            assert!(!whole.is_empty());
            for cut in 0..payload.len() {
                assert!(
                    Reader {
                        bytes: &payload[..cut],
                        at: 0
                    }
                    .entries()
                    .is_none(),
                    "cut at {cut}"
                );
            }
        }
    }

    #[test]
    fn what_is_put_is_got_back_under_the_same_facts_only() {
        let folder = tempfile::tempdir().unwrap();
        let cwd = folder.path().to_path_buf();
        let key = FileKey::new("x", RuleSet::all(), &[], false);
        let cache = Cache::new(folder.path().join("cache"), cwd.clone());
        std::fs::write(folder.path().join("a.py"), "x").unwrap();
        cache.put(Path::new("a.py"), key, None, &FileFacts::default(), &lint());
        cache.save().unwrap();
        let cache = Cache::new(folder.path().join("cache"), cwd);
        let got = cache
            .get(Path::new("a.py"), key, None, &FileFacts::default())
            .expect("a hit");
        assert_eq!(got.diagnostics.len(), 1);
        let mut other = FileFacts::default();
        other.results.insert(3, Default::default());
        assert!(cache.get(Path::new("a.py"), key, None, &other).is_none());
        let changed = FileKey::new("y", RuleSet::all(), &[], false);
        assert!(
            cache
                .get(Path::new("a.py"), changed, None, &FileFacts::default())
                .is_none()
        );
    }
}
