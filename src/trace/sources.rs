//! Where a trace's Python frames are in the project: a frame names its file as the profiled
//! process saw it (relative to its working folder, relative to `site-packages` for libraries, or
//! absolute on another machine), so a frame is matched to the project file whose path under
//! the root is the longest common tail of the two; and which function of that file a frame's
//! line falls in.

use std::path::{Component, Path, PathBuf};

use rustc_hash::FxHashMap;

use crate::lines::Lines;
use crate::parse::{Ranged, ast, parse};

/// `file.py(LINE): function`, as `with_stack=True` names a Python frame. The line is the
/// function's first line (its `def`, or first decorator) for a call that began while the
/// profiler ran, and the line it was executing for one already running when it started.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Frame<'a> {
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

/// The project's Python files, by file name, for matching frames.
pub(crate) struct ProjectFiles {
    root: PathBuf,
    by_name: FxHashMap<String, Vec<Vec<String>>>,
    resolved: FxHashMap<String, Option<PathBuf>>,
    /// Whether the root itself lies inside an installed-packages folder.
    root_in_packages: bool,
}

impl ProjectFiles {
    pub(crate) fn new(root: &Path) -> Self {
        let mut by_name: FxHashMap<String, Vec<Vec<String>>> = FxHashMap::default();
        for entry in ignore::WalkBuilder::new(root).build().flatten() {
            let path = entry.path();
            if entry.file_type().is_some_and(|t| t.is_file()) && path.extension().is_some_and(|e| e == "py") {
                let Ok(relative) = path.strip_prefix(root) else {
                    continue;
                };
                let parts = components(&relative.to_string_lossy());
                if let Some(name) = parts.last() {
                    by_name.entry(name.clone()).or_default().push(parts);
                }
            }
        }
        ProjectFiles {
            root: root.to_path_buf(),
            by_name,
            resolved: FxHashMap::default(),
            root_in_packages: is_in_packages(&root.to_string_lossy()),
        }
    }

    /// The project file a frame's path names, if any.
    pub(crate) fn resolve(&mut self, frame_path: &str) -> Option<PathBuf> {
        if let Some(found) = self.resolved.get(frame_path) {
            return found.clone();
        }
        let found = self.find(frame_path);
        self.resolved.insert(frame_path.to_string(), found.clone());
        found
    }

    fn find(&self, frame_path: &str) -> Option<PathBuf> {
        if is_in_packages(frame_path) && !self.root_in_packages {
            return None;
        }
        let frame = components(frame_path);
        let absolute = Path::new(frame_path).is_absolute() || frame_path.starts_with('/');
        let candidates = self.by_name.get(frame.last()?)?;
        // A relative frame path (the script's folder, or `site-packages` for a library) must be
        // wholly the tail of the project path; a project path must be wholly the tail of an
        // absolute frame path (a clone elsewhere). Else `json/decoder.py` of the standard
        // library would match a project's own `decoder.py`.
        let best = candidates
            .iter()
            .filter_map(|project| {
                let common = project
                    .iter()
                    .rev()
                    .zip(frame.iter().rev())
                    .take_while(|(a, b)| a == b)
                    .count();
                let whole = if absolute {
                    common == project.len()
                } else {
                    common == frame.len()
                };
                whole.then_some((common, project))
            })
            .max_by_key(|(common, project)| (*common, std::cmp::Reverse(project.len())))?;
        Some(best.1.iter().fold(self.root.clone(), |path, part| path.join(part)))
    }
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
}

/// Every function of a source text, outer ones before those nested in them.
pub(crate) fn function_lines(source: &str) -> Vec<FunctionLines> {
    let parsed = parse(source);
    let lines = Lines::new(source);
    let mut functions = Vec::new();
    collect_functions(&parsed.module().body, &lines, &mut functions);
    functions
}

fn collect_functions(body: &[ast::Stmt], lines: &Lines, out: &mut Vec<FunctionLines>) {
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
                });
                collect_functions(&function.body, lines, out);
            }
            ast::Stmt::ClassDef(class) => collect_functions(&class.body, lines, out),
            ast::Stmt::If(node) => {
                collect_functions(&node.body, lines, out);
                for clause in &node.elif_else_clauses {
                    collect_functions(&clause.body, lines, out);
                }
            }
            ast::Stmt::Try(node) => {
                collect_functions(&node.body, lines, out);
                for handler in &node.handlers {
                    let ast::ExceptHandler::ExceptHandler(handler) = handler;
                    collect_functions(&handler.body, lines, out);
                }
                collect_functions(&node.orelse, lines, out);
                collect_functions(&node.finalbody, lines, out);
            }
            ast::Stmt::With(node) => collect_functions(&node.body, lines, out),
            ast::Stmt::For(node) => collect_functions(&node.body, lines, out),
            ast::Stmt::While(node) => collect_functions(&node.body, lines, out),
            _ => {}
        }
    }
}

/// The innermost function whose lines hold `line` (an index into `functions`); `None` at
/// module level.
pub(crate) fn function_at(functions: &[FunctionLines], line: usize) -> Option<usize> {
    functions
        .iter()
        .enumerate()
        .filter(|(_, f)| f.first <= line && line <= f.last)
        .max_by_key(|(_, f)| f.first)
        .map(|(index, _)| index)
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
        for file in ["train.py", "pkg/train.py", "pkg/utils.py", "other/utils.py"] {
            let path = root.path().join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x = 1\n").unwrap();
        }
        let mut files = ProjectFiles::new(root.path());
        let resolved = |files: &mut ProjectFiles, p: &str| {
            files.resolve(p).map(|found| {
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
        assert_eq!(resolved(&mut files, "/usr/lib/python3/site-packages/utils.py"), None);
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
    }
}
