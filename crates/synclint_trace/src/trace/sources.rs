//! Where a trace's Python frames are in the project: a frame names its file as the profiled
//! process saw it (relative to its working folder, relative to `site-packages` for libraries, or
//! absolute on another machine), so a frame is matched to the project file whose path under
//! the root is the longest common tail of the two; and which function of that file a frame's
//! line falls in.

use std::collections::BTreeSet;
use std::ops::Bound::{Included, Unbounded};
use std::path::{Component, Path, PathBuf};

use rustc_hash::FxHashMap;

use crate::lines::Lines;
use crate::parse::{Ranged, ast, parse};

/// `file.py(LINE): function`, as `with_stack=True` names a Python frame. The line is the
/// function's first line (its `def`, or first decorator) for a call that began while the
/// profiler ran, and the line it was executing for one already running when it started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame<'a> {
    pub path: &'a str,
    pub line: usize,
    pub function: &'a str,
}

pub(crate) fn parse_frame(name: &str) -> Option<Frame<'_>> {
    let (location, function) = name.split_once("): ")?;
    let open = location.rfind('(')?;
    let line = location[open + 1..].parse().ok()?;
    let path = &location[..open];
    path.ends_with(".py").then_some(Frame { path, line, function })
}

/// Frames of the profiler itself (its own syncs are not the user's).
pub(crate) fn is_profiler_frame(path: &str) -> bool {
    let path = path.replace('\\', "/");
    path.contains("torch/profiler/") || path.ends_with("torch/autograd/profiler.py")
}

/// The project's Python files, as a tree of their paths read from the file name up, for
/// matching frames: a frame's path is walked down it once, however many project files share its
/// file name.
pub(crate) struct ProjectFiles {
    root: PathBuf,
    tails: Vec<Tail>,
    /// The tree's first level: a file name's node.
    by_name: FxHashMap<String, usize>,
    resolved: FxHashMap<String, Vec<PathBuf>>,
    /// Whether the root itself lies inside an installed-packages folder.
    root_in_packages: bool,
}

/// A node of [`ProjectFiles`]' tree: the tail of one or more project paths.
#[derive(Default)]
struct Tail {
    /// The folder before this tail, to the node of the longer tail.
    longer: FxHashMap<String, usize>,
    /// The project file whose whole path this tail is (its path under the root).
    whole: Option<PathBuf>,
}

impl ProjectFiles {
    pub fn new(root: &Path) -> Self {
        let mut files = ProjectFiles {
            root: root.to_path_buf(),
            tails: Vec::new(),
            by_name: FxHashMap::default(),
            resolved: FxHashMap::default(),
            root_in_packages: is_in_packages(&root.to_string_lossy()),
        };
        for entry in ignore::WalkBuilder::new(root).build().flatten() {
            let path = entry.path();
            if entry.file_type().is_some_and(|t| t.is_file()) && path.extension().is_some_and(|e| e == "py") {
                let Ok(relative) = path.strip_prefix(root) else {
                    continue;
                };
                files.add(components(&relative.to_string_lossy()));
            }
        }
        files
    }

    fn add(&mut self, parts: Vec<String>) {
        let Some((name, folders)) = parts.split_last() else {
            return;
        };
        let mut node = match self.by_name.get(name) {
            Some(&node) => node,
            None => {
                self.tails.push(Tail::default());
                self.by_name.insert(name.clone(), self.tails.len() - 1);
                self.tails.len() - 1
            }
        };
        for folder in folders.iter().rev() {
            node = match self.tails[node].longer.get(folder) {
                Some(&longer) => longer,
                None => {
                    self.tails.push(Tail::default());
                    let longer = self.tails.len() - 1;
                    self.tails[node].longer.insert(folder.clone(), longer);
                    longer
                }
            };
        }
        let whole = parts.iter().fold(self.root.clone(), |path, part| path.join(part));
        self.tails[node].whole = Some(whole);
    }

    /// The project files a frame's path names: none, one, or several that match it equally well
    /// (see [`pick`]).
    pub fn resolve(&mut self, frame_path: &str) -> &[PathBuf] {
        if !self.resolved.contains_key(frame_path) {
            let found = self.find(frame_path);
            self.resolved.insert(frame_path.to_string(), found);
        }
        &self.resolved[frame_path]
    }

    fn find(&self, frame_path: &str) -> Vec<PathBuf> {
        if is_in_packages(frame_path) && !self.root_in_packages {
            return Vec::new();
        }
        let frame = components(frame_path);
        let Some((name, folders)) = frame.split_last() else {
            return Vec::new();
        };
        let Some(&first) = self.by_name.get(name) else {
            return Vec::new();
        };
        // Down the tree along the frame's folders, from the nearest: the deepest node reached
        // is the longest tail the frame shares with a project path.
        let mut node = first;
        let mut longest_whole = self.tails[node].whole.as_ref();
        let mut shared = 1;
        for folder in folders.iter().rev() {
            let Some(&longer) = self.tails[node].longer.get(folder) else {
                break;
            };
            node = longer;
            shared += 1;
            longest_whole = self.tails[node].whole.as_ref().or(longest_whole);
        }
        // A project path must be wholly the tail of an absolute frame path (a clone elsewhere):
        // the longest such wins.
        if is_absolute(frame_path) {
            return longest_whole.into_iter().cloned().collect();
        }
        // A relative frame path (the script's folder, or the library folder for a library)
        // must be wholly the tail of the project path, and a standard library module's only
        // where it is the whole of it (`contextlib.py` is not `pkg/contextlib.py`); a path that
        // is all of the project's wins (the frame `train.py` is the root's `train.py`, not
        // `pkg/train.py`), else every project path it is the tail of ties.
        if shared < frame.len() {
            return Vec::new();
        }
        if let Some(whole) = &self.tails[node].whole {
            return vec![whole.clone()];
        }
        if is_standard_library(&frame) {
            return Vec::new();
        }
        let mut found = Vec::new();
        let mut open = vec![node];
        while let Some(node) = open.pop() {
            found.extend(self.tails[node].whole.iter().cloned());
            open.extend(self.tails[node].longer.values());
        }
        found.sort();
        found
    }
}

/// The folders of the files that a stack's other frames matched alone, for [`pick`].
#[derive(Default)]
pub struct Folders<'a> {
    sorted: BTreeSet<&'a Path>,
}

impl<'a> Folders<'a> {
    pub fn of(files: impl IntoIterator<Item = &'a Path>) -> Self {
        Folders {
            sorted: files.into_iter().map(|file| file.parent().unwrap_or(file)).collect(),
        }
    }

    /// The most leading components `folder` shares with one of these folders. Paths sort by
    /// their components, so the one sharing the most is a neighbour of `folder` in that order:
    /// two lookups, however many folders there are.
    fn shared(&self, folder: &Path) -> usize {
        let before = self.sorted.range::<Path, _>((Unbounded, Included(folder))).next_back();
        let after = self.sorted.range::<Path, _>((Included(folder), Unbounded)).next();
        before
            .into_iter()
            .chain(after)
            .map(|other| {
                folder
                    .components()
                    .zip(other.components())
                    .take_while(|(a, b)| a == b)
                    .count()
            })
            .max()
            .unwrap_or(0)
    }
}

/// Of the project files a frame matches equally well, the one nearest the files the other
/// frames of its stack matched alone (`utils.py` from `z/train.py` is `z/utils.py`), else the
/// first by path: its index in `candidates`.
pub fn pick<'p>(candidates: impl IntoIterator<Item = &'p Path>, beside: &Folders) -> Option<usize> {
    candidates
        .into_iter()
        .map(|candidate| candidate.parent().map_or(0, |own| beside.shared(own)))
        .enumerate()
        .max_by_key(|&(index, shared)| (shared, std::cmp::Reverse(index)))
        .map(|(index, _)| index)
}

/// The standard library's top-level modules (Python 3.11's `sys.stdlib_module_names`): the
/// profiler names their frames relative to the library folder (`contextlib.py`,
/// `logging/__init__.py`), just as it names a script's.
const STANDARD_LIBRARY: &[&str] = &[
    "__future__",
    "_abc",
    "_aix_support",
    "_ast",
    "_asyncio",
    "_bisect",
    "_blake2",
    "_bootsubprocess",
    "_bz2",
    "_codecs",
    "_codecs_cn",
    "_codecs_hk",
    "_codecs_iso2022",
    "_codecs_jp",
    "_codecs_kr",
    "_codecs_tw",
    "_collections",
    "_collections_abc",
    "_compat_pickle",
    "_compression",
    "_contextvars",
    "_crypt",
    "_csv",
    "_ctypes",
    "_curses",
    "_curses_panel",
    "_datetime",
    "_dbm",
    "_decimal",
    "_elementtree",
    "_frozen_importlib",
    "_frozen_importlib_external",
    "_functools",
    "_gdbm",
    "_hashlib",
    "_heapq",
    "_imp",
    "_io",
    "_json",
    "_locale",
    "_lsprof",
    "_lzma",
    "_markupbase",
    "_md5",
    "_msi",
    "_multibytecodec",
    "_multiprocessing",
    "_opcode",
    "_operator",
    "_osx_support",
    "_overlapped",
    "_pickle",
    "_posixshmem",
    "_posixsubprocess",
    "_py_abc",
    "_pydecimal",
    "_pyio",
    "_queue",
    "_random",
    "_scproxy",
    "_sha1",
    "_sha256",
    "_sha3",
    "_sha512",
    "_signal",
    "_sitebuiltins",
    "_socket",
    "_sqlite3",
    "_sre",
    "_ssl",
    "_stat",
    "_statistics",
    "_string",
    "_strptime",
    "_struct",
    "_symtable",
    "_thread",
    "_threading_local",
    "_tkinter",
    "_tokenize",
    "_tracemalloc",
    "_typing",
    "_uuid",
    "_warnings",
    "_weakref",
    "_weakrefset",
    "_winapi",
    "_zoneinfo",
    "abc",
    "aifc",
    "antigravity",
    "argparse",
    "array",
    "ast",
    "asynchat",
    "asyncio",
    "asyncore",
    "atexit",
    "audioop",
    "base64",
    "bdb",
    "binascii",
    "bisect",
    "builtins",
    "bz2",
    "cProfile",
    "calendar",
    "cgi",
    "cgitb",
    "chunk",
    "cmath",
    "cmd",
    "code",
    "codecs",
    "codeop",
    "collections",
    "colorsys",
    "compileall",
    "concurrent",
    "configparser",
    "contextlib",
    "contextvars",
    "copy",
    "copyreg",
    "crypt",
    "csv",
    "ctypes",
    "curses",
    "dataclasses",
    "datetime",
    "dbm",
    "decimal",
    "difflib",
    "dis",
    "distutils",
    "doctest",
    "email",
    "encodings",
    "ensurepip",
    "enum",
    "errno",
    "faulthandler",
    "fcntl",
    "filecmp",
    "fileinput",
    "fnmatch",
    "fractions",
    "ftplib",
    "functools",
    "gc",
    "genericpath",
    "getopt",
    "getpass",
    "gettext",
    "glob",
    "graphlib",
    "grp",
    "gzip",
    "hashlib",
    "heapq",
    "hmac",
    "html",
    "http",
    "idlelib",
    "imaplib",
    "imghdr",
    "imp",
    "importlib",
    "inspect",
    "io",
    "ipaddress",
    "itertools",
    "json",
    "keyword",
    "lib2to3",
    "linecache",
    "locale",
    "logging",
    "lzma",
    "mailbox",
    "mailcap",
    "marshal",
    "math",
    "mimetypes",
    "mmap",
    "modulefinder",
    "msilib",
    "msvcrt",
    "multiprocessing",
    "netrc",
    "nis",
    "nntplib",
    "nt",
    "ntpath",
    "nturl2path",
    "numbers",
    "opcode",
    "operator",
    "optparse",
    "os",
    "ossaudiodev",
    "pathlib",
    "pdb",
    "pickle",
    "pickletools",
    "pipes",
    "pkgutil",
    "platform",
    "plistlib",
    "poplib",
    "posix",
    "posixpath",
    "pprint",
    "profile",
    "pstats",
    "pty",
    "pwd",
    "py_compile",
    "pyclbr",
    "pydoc",
    "pydoc_data",
    "pyexpat",
    "queue",
    "quopri",
    "random",
    "re",
    "readline",
    "reprlib",
    "resource",
    "rlcompleter",
    "runpy",
    "sched",
    "secrets",
    "select",
    "selectors",
    "shelve",
    "shlex",
    "shutil",
    "signal",
    "site",
    "smtpd",
    "smtplib",
    "sndhdr",
    "socket",
    "socketserver",
    "spwd",
    "sqlite3",
    "sre_compile",
    "sre_constants",
    "sre_parse",
    "ssl",
    "stat",
    "statistics",
    "string",
    "stringprep",
    "struct",
    "subprocess",
    "sunau",
    "symtable",
    "sys",
    "sysconfig",
    "syslog",
    "tabnanny",
    "tarfile",
    "telnetlib",
    "tempfile",
    "termios",
    "textwrap",
    "this",
    "threading",
    "time",
    "timeit",
    "tkinter",
    "token",
    "tokenize",
    "tomllib",
    "trace",
    "traceback",
    "tracemalloc",
    "tty",
    "turtle",
    "turtledemo",
    "types",
    "typing",
    "unicodedata",
    "unittest",
    "urllib",
    "uu",
    "uuid",
    "venv",
    "warnings",
    "wave",
    "weakref",
    "webbrowser",
    "winreg",
    "winsound",
    "wsgiref",
    "xdrlib",
    "xml",
    "xmlrpc",
    "zipapp",
    "zipfile",
    "zipimport",
    "zlib",
    "zoneinfo",
];

/// Whether a relative frame path names a standard library module.
fn is_standard_library(frame: &[String]) -> bool {
    frame
        .first()
        .map(|first| first.strip_suffix(".py").unwrap_or(first))
        .is_some_and(|module| STANDARD_LIBRARY.binary_search(&module).is_ok())
}

fn components(path: &str) -> Vec<String> {
    Path::new(&path.replace('\\', "/"))
        .components()
        .filter_map(|c| match c {
            Component::Normal(part) => Some(part.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect()
}

/// Absolute on any system: `/srv/x.py`, `C:\work\x.py`, `\\server\share\x.py`.
fn is_absolute(path: &str) -> bool {
    let bytes = path.as_bytes();
    let drive =
        bytes.len() > 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' && matches!(bytes[2], b'/' | b'\\');
    path.starts_with('/') || path.starts_with('\\') || drive
}

fn is_in_packages(path: &str) -> bool {
    path.split(['/', '\\'])
        .any(|part| part == "site-packages" || part == "dist-packages")
}

/// A function's lines: from its first decorator to its last line.
#[derive(Debug, Clone)]
pub(crate) struct FunctionLines {
    pub name: String,
    pub first: usize,
    pub last: usize,
    /// The function it is nested in.
    parent: Option<usize>,
}

/// Every function of a source text in the order they begin (outer ones before those nested in
/// them).
pub(crate) fn function_lines(source: &str) -> Vec<FunctionLines> {
    let parsed = parse(source, crate::parse::SourceKind::Python);
    let lines = Lines::new(source);
    let mut functions = Vec::new();
    collect_functions(&parsed.module().body, &lines, None, &mut functions);
    functions
}

fn collect_functions(body: &[ast::Stmt], lines: &Lines, parent: Option<usize>, out: &mut Vec<FunctionLines>) {
    let nested = |body: &[ast::Stmt], out: &mut Vec<FunctionLines>| collect_functions(body, lines, parent, out);
    for stmt in body {
        match stmt {
            ast::Stmt::FunctionDef(function) => {
                let start = function
                    .decorator_list
                    .first()
                    .map_or(function.range().start(), |d| d.range().start());
                out.push(FunctionLines {
                    name: function.name.to_string(),
                    first: lines.row(start),
                    last: lines.row(function.range().end()),
                    parent,
                });
                collect_functions(&function.body, lines, Some(out.len() - 1), out);
            }
            ast::Stmt::ClassDef(class) => nested(&class.body, out),
            ast::Stmt::If(node) => {
                nested(&node.body, out);
                for clause in &node.elif_else_clauses {
                    nested(&clause.body, out);
                }
            }
            ast::Stmt::Try(node) => {
                nested(&node.body, out);
                for handler in &node.handlers {
                    let ast::ExceptHandler::ExceptHandler(handler) = handler;
                    nested(&handler.body, out);
                }
                nested(&node.orelse, out);
                nested(&node.finalbody, out);
            }
            ast::Stmt::With(node) => nested(&node.body, out),
            ast::Stmt::For(node) => nested(&node.body, out),
            ast::Stmt::While(node) => nested(&node.body, out),
            _ => {}
        }
    }
}

/// The innermost function whose lines hold `line` (an index into `functions`); `None` at
/// module level. Functions nest, and come in the order they begin: the innermost one holding
/// the line is the last to begin at or before it, or one of the functions around that one.
pub(crate) fn function_at(functions: &[FunctionLines], line: usize) -> Option<usize> {
    let last_begun = functions.partition_point(|f| f.first <= line).checked_sub(1)?;
    std::iter::successors(Some(last_begun), |&index| functions[index].parent)
        .find(|&index| line <= functions[index].last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_frame_name() {
        assert_eq!(
            parse_frame("models/train.py(42): masked_loss"),
            Some(Frame {
                path: "models/train.py",
                line: 42,
                function: "masked_loss"
            })
        );
        assert_eq!(parse_frame("<built-in method item of Tensor object at 0x7f>"), None);
        assert_eq!(parse_frame("nn.Module: Linear_0"), None);
        assert_eq!(
            parse_frame("C:\\work\\a (copy)\\t.py(3): <module>").map(|f| f.line),
            Some(3)
        );
    }

    #[test]
    fn matches_frames_by_the_longest_whole_tail() {
        let root = tempfile::tempdir().unwrap();
        for file in [
            "train.py",
            "pkg/train.py",
            "pkg/utils.py",
            "other/utils.py",
            "pkg/contextlib.py",
            "code.py",
        ] {
            let path = root.path().join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x = 1\n").unwrap();
        }
        let mut files = ProjectFiles::new(root.path());
        let resolved = |files: &mut ProjectFiles, p: &str| {
            let found = files.resolve(p);
            assert!(found.len() <= 1, "{p}: {found:?}");
            found.first().map(|found| {
                found
                    .strip_prefix(root.path())
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/")
            })
        };
        assert_eq!(resolved(&mut files, "train.py").as_deref(), Some("train.py"));
        assert_eq!(
            resolved(&mut files, "/srv/job/clone/pkg/train.py").as_deref(),
            Some("pkg/train.py")
        );
        assert_eq!(
            resolved(&mut files, "/srv/job/clone/train.py").as_deref(),
            Some("train.py")
        );
        // A relative frame path that is the tail of one project file only.
        assert_eq!(resolved(&mut files, "pkg/utils.py").as_deref(), Some("pkg/utils.py"));
        // Library frames never match a project file that happens to share their name.
        assert_eq!(resolved(&mut files, "torch/utils.py"), None);
        assert_eq!(resolved(&mut files, "json/train.py"), None);
        // The standard library's `contextlib.py` is not the project's `pkg/contextlib.py`...
        assert_eq!(resolved(&mut files, "contextlib.py"), None);
        // ... but a file at the root named like a module is the script that was run.
        assert_eq!(resolved(&mut files, "code.py").as_deref(), Some("code.py"));
        assert_eq!(
            resolved(&mut files, "C:\\Users\\me\\clone\\pkg\\train.py").as_deref(),
            Some("pkg/train.py")
        );
        assert_eq!(resolved(&mut files, "/usr/lib/python3/site-packages/utils.py"), None);
    }

    #[test]
    fn many_files_of_one_name_are_told_apart_by_their_folders() {
        let root = tempfile::tempdir().unwrap();
        for k in 0..300 {
            let path = root.path().join(format!("d{k}/utils.py"));
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x = 1\n").unwrap();
        }
        let mut files = ProjectFiles::new(root.path());
        assert_eq!(files.resolve("utils.py").len(), 300, "a bare name ties them all");
        assert_eq!(files.resolve("d7/utils.py"), [root.path().join("d7/utils.py")]);
        assert_eq!(
            files.resolve("/elsewhere/d299/utils.py"),
            [root.path().join("d299/utils.py")]
        );
        assert!(files.resolve("/elsewhere/utils.py").is_empty());
        assert!(files.resolve("e7/utils.py").is_empty());
    }

    #[test]
    fn a_tie_goes_to_the_file_beside_the_rest_of_the_stack() {
        let root = tempfile::tempdir().unwrap();
        for file in ["d/utils.py", "z/utils.py", "z/train.py"] {
            let path = root.path().join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x = 1\n").unwrap();
        }
        let mut files = ProjectFiles::new(root.path());
        let tied = files.resolve("utils.py").to_vec();
        assert_eq!(tied.len(), 2);
        let train = files.resolve("z/train.py").to_vec();
        let candidates = || tied.iter().map(PathBuf::as_path);
        let beside = Folders::of(train.iter().map(PathBuf::as_path));
        assert_eq!(
            tied[pick(candidates(), &beside).unwrap()],
            root.path().join("z/utils.py")
        );
        assert_eq!(
            tied[pick(candidates(), &Folders::default()).unwrap()],
            root.path().join("d/utils.py"),
            "else the first by path"
        );
        let many = Folders::of(train.iter().chain(&tied).map(PathBuf::as_path));
        assert_eq!(
            many.shared(&root.path().join("z/deeper")),
            root.path().join("z").components().count()
        );
    }

    #[test]
    fn finds_the_innermost_function_of_a_line() {
        let source = "import torch\n\n@decorate\ndef outer(x):\n    def inner(y):\n        return y\n    return inner(x)\n\nclass A:\n    def f(self):\n        pass\n";
        let functions = function_lines(source);
        let names: Vec<_> = functions.iter().map(|f| (f.name.as_str(), f.first, f.last)).collect();
        assert_eq!(names, [("outer", 3, 7), ("inner", 5, 6), ("f", 10, 11)]);
        assert_eq!(function_at(&functions, 3), Some(0), "a decorated function's frame line");
        assert_eq!(
            function_at(&functions, 6).map(|i| functions[i].name.as_str()),
            Some("inner")
        );
        assert_eq!(function_at(&functions, 1), None);
        assert_eq!(function_at(&functions, 8), None, "between two functions");
        assert_eq!(
            function_at(&functions, 7),
            Some(0),
            "after a nested function, in its parent"
        );
    }
}
