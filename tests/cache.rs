//! The cache end to end: the real binary on a copy of the repository's Python (rule fixtures,
//! the multi-file model project, the examples and the fix-effect scripts). A cache never
//! changes a result: cold, warm, after an edit, after damage, after parallel writers.

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

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

/// The one version folder of a cache folder.
fn version_folder(cache: &Path) -> PathBuf {
    let folders: Vec<PathBuf> = fs::read_dir(cache)
        .expect("the cache folder")
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.is_dir())
        .collect();
    assert_eq!(folders.len(), 1, "{folders:?}");
    folders[0].clone()
}

/// Writes a file last modified two hours ago (what a run killed long ago leaves; a source file
/// old enough for the cache to trust its size and time).
fn write_old(path: &Path, contents: &[u8]) {
    fs::write(path, contents).unwrap();
    let two_hours_ago = std::time::SystemTime::now() - Duration::from_secs(2 * 3600);
    fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(two_hours_ago)
        .unwrap();
}

/// Every file under `folder` with a hash of its bytes: what a run must leave as it was.
fn tree(folder: &Path) -> Vec<(PathBuf, u64)> {
    let mut files = Vec::new();
    let mut folders = vec![folder.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in fs::read_dir(&folder).unwrap().flatten() {
            let kind = entry.file_type().unwrap();
            if kind.is_dir() {
                folders.push(entry.path());
            } else if kind.is_file() {
                let bytes = fs::read(entry.path()).unwrap();
                files.push((entry.path(), xxhash_rust::xxh3::xxh3_64(&bytes)));
            }
        }
    }
    files.sort();
    files
}

fn has_signature(path: &Path) -> bool {
    fs::read(path).unwrap().starts_with(b"synclint-cache\0")
}

const HOT_ITEM: &str = "for x in loader:\n    print(model(x).item())\n";

/// A shared cache folder outside the project holds a user's files: whatever their names, the
/// cache replaces and removes only files that begin with its signature. Snapshots beyond the
/// eight kept are still removed, and so are temporary files killed runs left (by their exact
/// name pattern, or an earlier build's with the signature), but not a live run's.
#[test]
fn files_without_the_cache_signature_are_left_alone_whatever_their_names() {
    let project = Project::new();
    project.write("pyproject.toml", "[project]\nname = \"p\"\n");
    for index in 0..10 {
        project.write(&format!("m{index}.py"), HOT_ITEM);
    }
    let outside = tempfile::tempdir().unwrap();
    let cache = outside.path().join("shared-cache");
    let first = run_cached(project.path(), Some(&cache), &["check", "--isolated", "m0.py"]);
    assert_eq!(exit_code(&first), 1, "{}", stderr(&first));
    let version = version_folder(&cache);
    let signed = fs::read(buckets(&cache).iter().find(|f| has_signature(f)).unwrap()).unwrap();
    let users: Vec<(PathBuf, &[u8])> = vec![
        (version.join("project-x"), b"a user's notes"),
        (cache.join("project-y"), b"a user's notes"),
        (version.join(format!("project-{:032x}", 0)), b"named like a snapshot"),
        (version.join("temp-notes"), b"named like a temporary file"),
        (version.join(".tmpAbC123"), b"an unsigned file named like tempfile's"),
    ];
    for (path, contents) in &users {
        write_old(path, contents);
    }
    let stale = [version.join("temp-AAAAAAAAAAAA"), version.join(".tmpXyZ789")];
    write_old(&stale[0], b"");
    write_old(&stale[1], &signed);
    let live = version.join("temp-BBBBBBBBBBBB");
    fs::write(&live, b"being written by another run").unwrap();

    // Each file checked alone is its own project: ten snapshots, of which eight are kept.
    for index in 1..10 {
        let output = run_cached(
            project.path(),
            Some(&cache),
            &["check", "--isolated", &format!("m{index}.py")],
        );
        assert_eq!(exit_code(&output), 1);
        assert_eq!(stderr(&output), "");
    }
    for (path, contents) in &users {
        assert_eq!(fs::read(path).unwrap(), *contents, "{}", path.display());
    }
    for path in &stale {
        assert!(!path.exists(), "{} was left", path.display());
    }
    assert!(live.exists());
    let snapshots = buckets(&cache)
        .into_iter()
        .filter(|f| f.file_name().unwrap().to_string_lossy().starts_with("project-") && has_signature(f))
        .count();
    assert_eq!(snapshots, 8);
}

/// The warning a refused cache folder gives: the run goes on without a cache.
fn refused(root: &Path, reason: &str) -> String {
    format!(
        "synclint: warning: not using {} as the cache: {reason}; running without a cache\n",
        root.display()
    )
}

/// A cache folder that is, or contains, what the run checks is refused: the project root
/// (`cache-dir = "."` would write a `*` .gitignore and a CACHEDIR.TAG into it), a folder that
/// contains it, the working directory, a folder named or a named file's folder, a folder
/// holding a file being checked, a link to the project root. Each time the output is the
/// uncached run's, with a warning naming the folder and why, and nothing is written anywhere.
#[test]
fn a_cache_folder_that_would_hold_or_hide_the_project_is_refused() {
    let top = tempfile::tempdir().unwrap();
    let outer = fs::canonicalize(top.path()).unwrap();
    let proj = outer.join("proj");
    let write = |relative: &str, contents: &str| {
        let path = proj.join(relative);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, contents).unwrap();
    };
    write("pyproject.toml", "[project]\nname = \"p\"\n");
    write("src/train.py", HOT_ITEM);
    write("pkg/helper.py", "def record(x):\n    return x.item()\n");
    std::os::unix::fs::symlink(&proj, outer.join("link")).unwrap();
    let link = outer.join("link");
    let synclint_tag =
        "Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag created by synclint.\n";
    let cases: Vec<(&str, Vec<&str>, PathBuf, String)> = vec![
        (
            "",
            vec!["--cache-dir", ".."],
            outer.clone(),
            format!("it contains the project root, {}", proj.display()),
        ),
        (
            "src",
            vec!["--cache-dir", "."],
            proj.join("src"),
            "it is the working directory".into(),
        ),
        (
            "",
            vec!["pkg", "--cache-dir", "pkg"],
            proj.join("pkg"),
            "it is a folder being checked".into(),
        ),
        (
            "",
            vec!["src/train.py", "--cache-dir", "src"],
            proj.join("src"),
            "it is a folder being checked".into(),
        ),
        (
            "",
            vec!["--cache-dir", link.to_str().unwrap()],
            link.clone(),
            "it is the project root".into(),
        ),
    ];
    for (cwd, extra, root, reason) in cases {
        let mut args = vec!["check", "--output-format", "concise"];
        args.extend(extra.iter().copied());
        let before = tree(&outer);
        // `--no-cache` wins over the `--cache-dir` among the arguments.
        let uncached = run_cached(&proj.join(cwd), None, &args);
        let output = synclint().current_dir(proj.join(cwd)).args(&args).output().unwrap();
        assert_eq!(
            (exit_code(&output), stdout(&output)),
            (exit_code(&uncached), stdout(&uncached)),
            "{args:?}"
        );
        assert_eq!(stderr(&output), refused(&root, &reason), "{args:?}");
        assert_eq!(tree(&outer), before, "{args:?}: something was written");
    }

    // `cache-dir = "."`, also where an earlier synclint already wrote its tag there: the project
    // root stays synclint's to refuse. A folder of the project that an earlier synclint tagged
    // is still refused where it holds a file being checked.
    let config = "[project]\nname = \"p\"\n\n[tool.synclint]\ncache-dir = \".\"\n";
    write("pyproject.toml", config);
    for tagged in [false, true] {
        if tagged {
            write("CACHEDIR.TAG", synclint_tag);
        }
        let before = tree(&outer);
        let output = synclint()
            .current_dir(&proj)
            .args(["check", "--output-format", "concise"])
            .output()
            .unwrap();
        assert_eq!(exit_code(&output), 1);
        assert_eq!(stderr(&output), refused(&proj, "it is the project root"));
        assert_eq!(tree(&outer), before);
    }
    assert!(!proj.join(".gitignore").exists());
    fs::remove_file(proj.join("CACHEDIR.TAG")).unwrap();
    write("pyproject.toml", "[project]\nname = \"p\"\n");
    write("pkg/CACHEDIR.TAG", synclint_tag);
    let before = tree(&outer);
    let output = synclint()
        .current_dir(&proj)
        .args(["check", "--cache-dir", "pkg"])
        .output()
        .unwrap();
    assert_eq!(exit_code(&output), 1);
    let file = proj.join("pkg/helper.py");
    assert_eq!(
        stderr(&output),
        refused(
            &proj.join("pkg"),
            &format!("it contains {}, a file being checked", file.display())
        )
    );
    assert_eq!(tree(&outer), before);
}

/// An existing folder synclint did not make is refused where it holds anything, even a
/// CACHEDIR.TAG of another tool's; an empty one becomes the cache, and a folder synclint made
/// is used again (an earlier version's files in it untouched).
#[test]
fn a_folder_synclint_did_not_make_is_refused_unless_empty_and_its_own_is_reused() {
    let project = Project::new();
    project
        .write("pyproject.toml", "[project]\nname = \"p\"\n")
        .write("train.py", HOT_ITEM);
    let uncached = run_cached(project.path(), None, &["check"]);
    let not_synclints = "it is not empty and synclint did not make it (it has no CACHEDIR.TAG written by synclint)";
    let users = tempfile::tempdir().unwrap();
    fs::write(users.path().join("project-x"), "a user's notes").unwrap();
    fs::write(users.path().join("notes.txt"), "more notes").unwrap();
    let other_tools = tempfile::tempdir().unwrap();
    fs::write(
        other_tools.path().join("CACHEDIR.TAG"),
        "Signature: 8a477f597d28d172789f06886806bc55\n# Another tool's cache.\n",
    )
    .unwrap();
    for folder in [users.path(), other_tools.path()] {
        let before = tree(folder);
        let output = run_cached(project.path(), Some(folder), &["check"]);
        assert_eq!((exit_code(&output), stdout(&output)), (1, stdout(&uncached)));
        assert_eq!(stderr(&output), refused(folder, not_synclints));
        assert_eq!(tree(folder), before);
    }

    let empty = tempfile::tempdir().unwrap();
    let cold = run_cached(project.path(), Some(empty.path()), &["check"]);
    assert_eq!(shown(&cold), shown(&uncached));
    assert!(empty.path().join("CACHEDIR.TAG").exists() && empty.path().join(".gitignore").exists());
    let written = tree(empty.path());
    let warm = run_cached(project.path(), Some(empty.path()), &["check"]);
    assert_eq!(shown(&warm), shown(&uncached));
    assert_eq!(tree(empty.path()), written, "a warm run rewrote the cache");

    // A cache folder an earlier synclint version made: its tag, its .gitignore and its version
    // folder.
    let earlier = tempfile::tempdir().unwrap();
    for name in ["CACHEDIR.TAG", ".gitignore"] {
        fs::copy(empty.path().join(name), earlier.path().join(name)).unwrap();
    }
    fs::create_dir(earlier.path().join("0.0.1")).unwrap();
    fs::write(
        earlier.path().join("0.0.1/bucket-00"),
        b"synclint-cache\0\x01an earlier format",
    )
    .unwrap();
    let before = tree(earlier.path());
    let output = run_cached(project.path(), Some(earlier.path()), &["check"]);
    assert_eq!(shown(&output), shown(&uncached));
    let after = tree(earlier.path());
    assert!(before.iter().all(|file| after.contains(file)), "{after:?}");
    assert!(after.len() > before.len());
}

/// Two runs at once on one project and one cache (pre-commit runs hooks in parallel), from a
/// cache folder neither has made yet, then after edits, then warm: each prints what an uncached
/// run prints, with no warning; neither removes a temporary file another run is writing; the
/// cache they leave is complete (a warm run rewrites nothing) and holds no temporary file.
#[test]
fn two_runs_at_once_never_spoil_the_cache_or_remove_each_others_files() {
    let project = python_project();
    let outside = tempfile::tempdir().unwrap();
    let cache = outside.path().join("shared");
    let args: &[&str] = &["check", "--output-format", "json"];
    let at_once = || {
        let children: Vec<_> = (0..2)
            .map(|_| {
                synclint()
                    .current_dir(project.path())
                    .args(args)
                    .arg("--cache-dir")
                    .arg(&cache)
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .expect("spawn synclint")
            })
            .collect();
        children
            .into_iter()
            .map(|child| shown(&child.wait_with_output().unwrap()))
            .collect::<Vec<_>>()
    };
    let mut live = None;
    for round in 0..4 {
        if round > 0 {
            write_old(
                &project.path().join(format!("fixtures/round_{round}.py")),
                HOT_ITEM.as_bytes(),
            );
        }
        let expected = shown(&run_cached(project.path(), None, args));
        assert_eq!(expected.2, "");
        for got in at_once() {
            assert_eq!(got, expected, "round {round}");
        }
        // A third run's file, being written (as young as a live one is).
        let version = version_folder(&cache);
        let path = live.get_or_insert_with(|| version.join("temp-CCCCCCCCCCCC"));
        if round == 0 {
            fs::write(&path, b"a live run's").unwrap();
        }
        assert!(path.exists(), "round {round}: a live run's temporary file was removed");
    }
    let files = buckets(&cache);
    let others: Vec<&PathBuf> = files
        .iter()
        .filter(|f| {
            let name = f.file_name().unwrap().to_string_lossy();
            !(name.starts_with("bucket-") || name.starts_with("project-") || Some(*f) == live.as_ref())
        })
        .collect();
    assert!(others.is_empty(), "{others:?}");
    let written = tree(&cache);
    let expected = shown(&run_cached(project.path(), None, args));
    assert_eq!(shown(&run_cached(project.path(), Some(&cache), args)), expected);
    assert_eq!(tree(&cache), written, "a warm run after runs at once rewrote the cache");
}

/// What a report says, however it is wrapped and framed: its printable ASCII but spaces.
fn said(text: &str) -> String {
    text.chars().filter(char::is_ascii_graphic).collect()
}

/// `project-root` must name an existing folder at or below the folder of the config that sets
/// it: `"/"` would walk the whole file system. Otherwise the config is invalid (exit 2, nothing
/// checked or written), naming the file, the setting and why.
#[test]
fn project_root_must_lie_at_or_below_its_config() {
    let project = Project::new();
    project
        .write("src/helpers.py", "def record_value(x):\n    return x.item()\n")
        .write(
            "src/train.py",
            "from helpers import record_value\n\n\ndef train(model, loader):\n    for x in loader:\n        record_value(model(x))\n",
        );
    let config = project.path().join("synclint.toml");
    let outside = format!("is outside {}, the folder of this config", project.path().display());
    let parent = project.path().parent().unwrap().display().to_string();
    for (setting, reason) in [
        ("/", format!("/ {outside}")),
        ("..", format!("{parent} {outside}")),
        (
            "missing",
            format!("{} does not exist", project.path().join("missing").display()),
        ),
    ] {
        project.write("synclint.toml", format!("project-root = \"{setting}\"\n"));
        // Walking "/" would take as long as the file system is large: a hang fails instead.
        let output = project.run_within(Duration::from_secs(60), &["check", "src/helpers.py"]);
        assert_eq!(exit_code(&output), 2, "{setting}: {}", stderr(&output));
        assert_eq!(stdout(&output), "", "{setting}");
        let expected = format!(
            "invalid config in {}\n`project-root = \"{setting}\"`: {reason}",
            config.display()
        );
        assert!(
            said(&stderr(&output)).contains(&said(&expected)),
            "{setting}: {}",
            stderr(&output)
        );
        assert!(!project.path().join(".synclint_cache").exists());
    }
    // A folder below the config: the project a file named alone is checked in.
    project.write("synclint.toml", "project-root = \"src\"\n");
    let output = project.run(&["check", "src/helpers.py"]);
    assert_eq!(exit_code(&output), 1, "{}", stderr(&output));
    assert!(
        stdout(&output).contains("hot: `record_value()` is called from the loop at src/train.py:5"),
        "{}",
        stdout(&output)
    );
}
