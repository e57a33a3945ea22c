//! The cache end to end: the real binary on a copy of the repository's Python (rule fixtures,
//! the multi-file model project, the examples and the fix-effect scripts). A cache never
//! changes a result: cold, warm, after an edit, after damage, after parallel writers.

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use common::{Project, exit_code, repo, stderr, stdout, synclint};

/// The repository's Python, copied into a throwaway project.
fn python_project() -> Project {
    let project = Project::new();
    project.write("pyproject.toml", "[project]\nname = \"copy\"\n");
    for folder in ["fixtures", "examples", "bench/fix_effect"] {
        copy_python(&repo().join(folder), &project.path().join(folder));
    }
    project
}

fn copy_python(from: &Path, to: &Path) {
    for entry in fs::read_dir(from).expect("read a folder") {
        let path = entry.expect("an entry").path();
        if path.is_dir() {
            copy_python(&path, &to.join(path.file_name().expect("a name")));
        } else if path.extension().is_some_and(|ext| ext == "py") {
            fs::create_dir_all(to).expect("create a folder");
            let copy = to.join(path.file_name().expect("a name"));
            fs::copy(&path, &copy).expect("copy a file");
            // Old enough for the cache to trust its size and time.
            let an_hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
            fs::File::options()
                .write(true)
                .open(&copy)
                .unwrap()
                .set_modified(an_hour_ago)
                .unwrap();
        }
    }
}

/// Runs synclint in `dir` with its cache in `cache` (or none).
fn run_cached(dir: &Path, cache: Option<&Path>, args: &[&str]) -> Output {
    let mut command = synclint();
    command.current_dir(dir).args(args);
    match cache {
        Some(cache) => command.arg("--cache-dir").arg(cache),
        None => command.arg("--no-cache"),
    };
    command.output().expect("run synclint")
}

/// Everything a run shows: exit code, stdout and stderr.
fn shown(output: &Output) -> (i32, String, String) {
    (exit_code(output), stdout(output), stderr(output))
}

/// The bucket files of a cache folder.
fn buckets(cache: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for version in fs::read_dir(cache).expect("the cache folder").flatten() {
        if version.path().is_dir() {
            found.extend(
                version
                    .path()
                    .read_dir()
                    .expect("a version folder")
                    .flatten()
                    .map(|e| e.path()),
            );
        }
    }
    found.sort();
    found
}

const FORMATS: [&[&str]; 3] = [
    &["check", "--output-format", "full"],
    &["check", "--output-format", "json"],
    &["check", "--diff", "--unsafe-fixes"],
];

#[test]
fn warm_runs_and_runs_after_an_edit_print_what_uncached_runs_print() {
    let project = python_project();
    let cache = tempfile::tempdir().unwrap();
    for args in FORMATS {
        let uncached = shown(&run_cached(project.path(), None, args));
        assert_eq!(uncached.0, 1, "{}", uncached.1);
        let cold = shown(&run_cached(project.path(), Some(cache.path()), args));
        let warm = shown(&run_cached(project.path(), Some(cache.path()), args));
        assert_eq!(cold, uncached, "{args:?}: cold");
        assert_eq!(warm, uncached, "{args:?}: warm");
    }
    assert!(!buckets(cache.path()).is_empty());

    // An edit in one file changes the findings of another, unchanged since it was cached: what
    // a loop passes the helper becomes a boolean mask.
    let loop_passing = |index: &str| {
        format!(
            "import torch\n\nfrom .value_log import masked_total\n\n\ndef run(model, loader):\n    for x in loader:\n        out = model(x).cuda()\n        index = {index}\n        masked_total(out, index)\n"
        )
    };
    project
        .write(
            "fixtures/model/project/value_log.py",
            "def masked_total(values, index):\n    return values[index].sum()\n",
        )
        .write(
            "fixtures/model/project/loop.py",
            loop_passing("torch.arange(4, device=out.device)"),
        );
    let concise: &[&str] = &["check", "--output-format", "concise"];
    let before = stdout(&run_cached(project.path(), Some(cache.path()), concise));
    assert!(!before.contains("value_log.py"), "{before}");
    project.write("fixtures/model/project/loop.py", loop_passing("out > 0"));
    for args in FORMATS {
        let uncached = shown(&run_cached(project.path(), None, args));
        let warm = shown(&run_cached(project.path(), Some(cache.path()), args));
        assert_eq!(warm, uncached, "{args:?}: after the edit");
    }
    let after = stdout(&run_cached(project.path(), Some(cache.path()), concise));
    assert!(
        after.contains("fixtures/model/project/value_log.py:2:12: SYNC203"),
        "{after}"
    );
}

/// Whether SYNC900 is selected is part of a file's key (the rule set is): runs that alternate
/// on one cache print what uncached runs print, and the default run never shows SYNC900.
#[test]
fn selecting_unused_noqa_changes_the_key() {
    let project = Project::new();
    project.write("pyproject.toml", "[project]\nname = \"p\"\n").write(
        "train.py",
        "import torch\nfor b in loader:\n    model(b).item()  # noqa: SYNC101\n    model(b)  # noqa: SYNC101\n",
    );
    let cache = tempfile::tempdir().unwrap();
    let default: &[&str] = &["check", "--output-format", "concise", "train.py"];
    let selected: &[&str] = &[
        "check",
        "--output-format",
        "concise",
        "--extend-select",
        "SYNC900",
        "train.py",
    ];
    for _ in 0..2 {
        for args in [default, selected] {
            let uncached = shown(&run_cached(project.path(), None, args));
            let cached = shown(&run_cached(project.path(), Some(cache.path()), args));
            assert_eq!(cached, uncached, "{args:?}");
        }
    }
    let quiet = stdout(&run_cached(project.path(), Some(cache.path()), default));
    assert!(quiet.contains("All checks passed"), "{quiet}");
    let reported = stdout(&run_cached(project.path(), Some(cache.path()), selected));
    assert!(reported.starts_with("train.py:4:15: SYNC900 "), "{reported}");
}

/// Spoils a cache file's bytes.
type Damage = fn(Vec<u8>) -> Vec<u8>;

/// Damage is always detected: a damaged or foreign cache file never changes a result. A file
/// that still begins with the cache's signature is rewritten; one that does not (garbage where
/// the header was) is not the cache's to replace: it is left alone, with a warning naming it.
#[test]
fn a_damaged_or_foreign_cache_is_ignored_and_rewritten() {
    let project = python_project();
    let cache = tempfile::tempdir().unwrap();
    let args: &[&str] = &["check", "--output-format", "json"];
    let expected = shown(&run_cached(project.path(), None, args));
    run_cached(project.path(), Some(cache.path()), args);
    let mut files = buckets(cache.path());
    assert!(files.len() >= 5, "{files:?}");
    // The project's snapshot is among the damaged files.
    files.sort_by_key(|f| !f.file_name().unwrap().to_string_lossy().starts_with("project-"));
    assert!(
        files[0].file_name().unwrap().to_string_lossy().starts_with("project-"),
        "{files:?}"
    );
    let damage: [(&str, Damage); 4] = [
        ("truncated", |bytes| bytes[..bytes.len() / 2].to_vec()),
        ("a flipped byte", |mut bytes| {
            let last = bytes.len() - 1;
            bytes[last] ^= 0x55;
            bytes
        }),
        ("another build's header", |mut bytes| {
            bytes[20] ^= 0x01;
            bytes
        }),
        ("another format's header", |mut bytes| {
            bytes[15] ^= 0x07;
            bytes
        }),
    ];
    let mut damaged = Vec::new();
    for (file, (what, damage)) in files.iter().zip(damage) {
        let bytes = damage(fs::read(file).unwrap());
        fs::write(file, &bytes).unwrap();
        damaged.push((file, what, bytes));
    }
    let garbage: Vec<u8> = fs::read(&files[4])
        .unwrap()
        .iter()
        .map(|b| b.wrapping_mul(31).wrapping_add(7))
        .collect();
    fs::write(&files[4], &garbage).unwrap();
    fs::write(files[4].with_file_name("bucket-zz"), b"not a bucket").unwrap();
    let left_alone = format!(
        "synclint: warning: cannot write the cache in {}: {} was not written by synclint (it does not begin with the cache's signature), so it is left alone\n",
        cache.path().display(),
        files[4].display()
    );
    for _ in 0..2 {
        let (code, out, err) = shown(&run_cached(project.path(), Some(cache.path()), args));
        assert_eq!((code, out), (expected.0, expected.1.clone()));
        assert_eq!(err, format!("{}{left_alone}", expected.2));
    }
    for (file, what, bytes) in damaged {
        assert_ne!(fs::read(file).unwrap(), bytes, "{what}: not rewritten");
    }
    assert_eq!(fs::read(&files[4]).unwrap(), garbage);
    assert_eq!(fs::read(files[4].with_file_name("bucket-zz")).unwrap(), b"not a bucket");
}

#[test]
fn parallel_runs_leave_a_complete_cache() {
    let project = python_project();
    let cache = tempfile::tempdir().unwrap();
    let args: &[&str] = &["check", "--output-format", "json"];
    let expected = shown(&run_cached(project.path(), None, args));
    let children: Vec<_> = (0..4)
        .map(|_| {
            synclint()
                .current_dir(project.path())
                .args(args)
                .arg("--cache-dir")
                .arg(cache.path())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("spawn synclint")
        })
        .collect();
    for child in children {
        assert_eq!(shown(&child.wait_with_output().unwrap()), expected);
    }
    // No temporary file is left, and a warm run finds every file it needs: it rewrites nothing.
    let files = buckets(cache.path());
    assert!(
        files.iter().all(|f| {
            let name = f.file_name().unwrap().to_string_lossy();
            name.starts_with("bucket-") || name.starts_with("project-")
        }),
        "{files:?}"
    );
    let written: Vec<(&PathBuf, Vec<u8>)> = files.iter().map(|f| (f, fs::read(f).unwrap())).collect();
    assert_eq!(shown(&run_cached(project.path(), Some(cache.path()), args)), expected);
    let rewritten: Vec<&PathBuf> = written
        .into_iter()
        .filter(|(f, bytes)| fs::read(f).unwrap() != *bytes)
        .map(|(f, _)| f)
        .collect();
    assert!(
        rewritten.is_empty(),
        "a warm run after parallel writers rewrote {rewritten:?}"
    );
}

#[test]
fn where_the_cache_goes() {
    let project = Project::new();
    project
        .write("pyproject.toml", "[project]\nname = \"p\"\n")
        .write("src/train.py", "for x in loader:\n    print(model(x).item())\n");
    // By default: `.synclint_cache` in the project root, kept out of git and backups.
    let from_src = common::run(&project.path().join("src"), &["check", "train.py"]);
    assert_eq!(exit_code(&from_src), 1, "{}", stderr(&from_src));
    let default = project.path().join(".synclint_cache");
    assert_eq!(
        fs::read_to_string(default.join(".gitignore")).unwrap(),
        "# Created by synclint.\n*\n"
    );
    assert!(
        fs::read_to_string(default.join("CACHEDIR.TAG"))
            .unwrap()
            .starts_with("Signature: 8a477f597d28d172789f06886806bc55")
    );
    assert!(!buckets(&default).is_empty());
    fs::remove_dir_all(&default).unwrap();

    // `--no-cache` and `SYNCLINT_NO_CACHE` write nothing.
    project.run(&["check", "--no-cache"]);
    synclint()
        .current_dir(project.path())
        .env("SYNCLINT_NO_CACHE", "1")
        .output()
        .unwrap();
    assert!(!default.exists());

    // `SYNCLINT_CACHE_DIR`, and the `cache-dir` setting (relative to its config).
    let elsewhere = tempfile::tempdir().unwrap();
    let output = synclint()
        .current_dir(project.path())
        .env("SYNCLINT_CACHE_DIR", elsewhere.path())
        .output()
        .unwrap();
    assert_eq!(exit_code(&output), 1);
    assert!(!buckets(elsewhere.path()).is_empty());
    project.write("pyproject.toml", "[tool.synclint]\ncache-dir = \"build/lint-cache\"\n");
    project.run(&["check"]);
    assert!(!buckets(&project.path().join("build/lint-cache")).is_empty());
    assert!(!default.exists());
}

#[test]
fn a_cache_that_cannot_be_written_is_a_warning() {
    let project = Project::new();
    project
        .write("train.py", "for x in loader:\n    print(model(x).item())\n")
        .write("not-a-folder", "");
    let uncached = project.run(&["check", "--no-cache"]);
    let output = project.run(&["check", "--cache-dir", "not-a-folder"]);
    assert_eq!(exit_code(&output), 1);
    assert_eq!(stdout(&output), stdout(&uncached));
    assert!(
        stderr(&output).contains("warning: cannot write the cache in"),
        "{}",
        stderr(&output)
    );
}
