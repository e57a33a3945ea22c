//! Finding the files to lint: the `ignore` crate's parallel walker, gitignore-aware, with the
//! include and exclude patterns of each folder's settings. A path named on the command line is
//! always linted, if it is a regular file: a FIFO, socket or device is never opened (opening a
//! FIFO to read it waits for a writer, forever).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use ignore::{WalkBuilder, WalkState};

use crate::config::{Resolver, Settings};
use crate::regular_file::NOT_REGULAR;

pub struct DiscoveredFile {
    pub path: PathBuf,
    pub settings: Arc<Settings>,
}

/// A path that could not be walked (unreadable folder, broken symlink, symlink loop).
pub struct DiscoveryError {
    pub path: Option<PathBuf>,
    pub message: String,
}

pub fn discover(
    paths: &[PathBuf],
    resolver: &Arc<Resolver>,
    respect_gitignore: bool,
    threads: usize,
) -> (Vec<DiscoveredFile>, Vec<DiscoveryError>) {
    let files = Mutex::new(Vec::new());
    let errors = Mutex::new(Vec::new());
    let mut roots = Vec::new();
    for path in paths {
        match std::fs::metadata(path) {
            Ok(metadata) if metadata.is_file() => {
                let dir = path.parent().unwrap_or(Path::new("."));
                files.lock().expect("files").push(DiscoveredFile {
                    path: path.clone(),
                    settings: resolver.for_dir(dir),
                });
            }
            Ok(metadata) if metadata.is_dir() => roots.push(path.clone()),
            Ok(_) => errors.lock().expect("errors").push(DiscoveryError {
                path: Some(path.clone()),
                message: NOT_REGULAR.to_string(),
            }),
            Err(error) => errors.lock().expect("errors").push(DiscoveryError {
                path: Some(path.clone()),
                message: error.to_string(),
            }),
        }
    }
    if let Some((first, rest)) = roots.split_first() {
        let mut builder = WalkBuilder::new(first);
        for root in rest {
            builder.add(root);
        }
        builder
            .hidden(false)
            .follow_links(true)
            .git_ignore(respect_gitignore)
            .git_exclude(respect_gitignore)
            .git_global(false)
            .ignore(respect_gitignore)
            .parents(respect_gitignore)
            .require_git(false)
            .threads(threads);
        let filter_resolver = Arc::clone(resolver);
        builder.filter_entry(move |entry| {
            if entry.depth() == 0 {
                return true;
            }
            let dir = entry.path().parent().unwrap_or(Path::new("."));
            !filter_resolver.for_dir(dir).is_excluded(entry.path())
        });
        builder.build_parallel().run(|| {
            let files = &files;
            let errors = &errors;
            Box::new(move |entry| {
                match entry {
                    Ok(entry) => {
                        // Through links, as the walk follows them: a FIFO, socket or device is
                        // skipped.
                        let is_file = entry.file_type().is_some_and(|t| t.is_file());
                        if is_file {
                            let dir = entry.path().parent().unwrap_or(Path::new("."));
                            let settings = resolver.for_dir(dir);
                            if settings.is_included(entry.path()) {
                                files.lock().expect("files").push(DiscoveredFile {
                                    path: entry.into_path(),
                                    settings,
                                });
                            }
                        }
                    }
                    Err(error) => errors.lock().expect("errors").push(walk_error(error)),
                }
                WalkState::Continue
            })
        });
    }
    let mut files = files.into_inner().expect("files");
    files.sort_by_cached_key(|file| path_order(&file.path));
    files.dedup_by(|a, b| a.path == b.path);
    let mut errors = errors.into_inner().expect("errors");
    errors.sort_by(|a, b| a.path.cmp(&b.path));
    (files, errors)
}

/// Whether a path names test code: a file in a `test`, `tests` or `testing` folder (or one
/// named `test_utils`), or named `test_*.py`, `*_test.py` or `conftest.py`. Its loops repeat
/// checks and its models are fixtures: nothing in it runs per training step, and it starts no
/// hot chains.
pub fn is_test_path(path: &std::path::Path) -> bool {
    let name = path.file_name().and_then(|name| name.to_str()).unwrap_or_default();
    let in_tests = path
        .parent()
        .into_iter()
        .flat_map(|parent| parent.components())
        .any(|component| {
            matches!(
                component.as_os_str().to_str(),
                Some("test" | "tests" | "testing" | "test_utils")
            )
        });
    in_tests || name.starts_with("test_") || name.ends_with("_test.py") || name == "conftest.py"
}

/// A key that orders paths as `Path`'s own order does (component by component), compared as
/// bytes: comparing paths component by component costs more than the rest of sorting them.
fn path_order(path: &Path) -> Vec<u8> {
    let mut key = Vec::with_capacity(path.as_os_str().len() + 1);
    for component in path.components() {
        key.extend_from_slice(component.as_os_str().as_encoded_bytes());
        key.push(0);
    }
    key
}

fn walk_error(error: ignore::Error) -> DiscoveryError {
    fn path_of(error: &ignore::Error) -> Option<PathBuf> {
        match error {
            ignore::Error::WithPath { path, .. } => Some(path.clone()),
            ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => path_of(err),
            ignore::Error::Loop { child, .. } => Some(child.clone()),
            _ => None,
        }
    }
    fn message_of(error: &ignore::Error) -> String {
        match error {
            ignore::Error::WithPath { err, .. }
            | ignore::Error::WithDepth { err, .. }
            | ignore::Error::WithLineNumber { err, .. } => message_of(err),
            ignore::Error::Loop { ancestor, .. } => format!("symlink loop back to {}", ancestor.display()),
            other => other.to_string(),
        }
    }
    DiscoveryError {
        path: path_of(&error),
        message: message_of(&error),
    }
}

/// The project a file or folder belongs to: the nearest folder at or above it holding
/// `pyproject.toml`, `setup.cfg`, `setup.py` or `.git`. `None` outside any project.
pub fn project_root(path: &Path) -> Option<PathBuf> {
    const MARKERS: [&str; 4] = ["pyproject.toml", "setup.cfg", "setup.py", ".git"];
    let start = if path.is_dir() { path } else { path.parent()? };
    start
        .ancestors()
        .find(|folder| MARKERS.iter().any(|marker| folder.join(marker).exists()))
        .map(Path::to_path_buf)
}
