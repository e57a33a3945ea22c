//! Gives the binary an identity for its cache: a hash of the sources of every crate of the
//! workspace, the rule docs and the locked dependencies, so that a rebuilt synclint never reads
//! results an older build wrote. The paths are the workspace root's, seen from this crate.

use std::hash::{DefaultHasher, Hasher};
use std::path::Path;

fn main() {
    let mut hasher = DefaultHasher::new();
    for input in [
        "../../src",
        "../../crates",
        "../../rules",
        "../../Cargo.lock",
        "../../Cargo.toml",
    ] {
        println!("cargo::rerun-if-changed={input}");
        hash_tree(Path::new(input), &mut hasher);
    }
    println!("cargo::rustc-env=SYNCLINT_BUILD_ID={:016x}", hasher.finish());
}

/// Hashes every file under `path` (names and contents) in a stable order.
fn hash_tree(path: &Path, hasher: &mut DefaultHasher) {
    if path.is_dir() {
        let mut entries: Vec<_> = std::fs::read_dir(path)
            .map(|dir| dir.filter_map(|entry| entry.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        entries.sort();
        for entry in entries {
            hash_tree(&entry, hasher);
        }
    } else if let Ok(contents) = std::fs::read(path) {
        hasher.write(path.to_string_lossy().as_bytes());
        hasher.write(&contents);
    }
}
