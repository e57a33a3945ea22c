//! Which module each linted file is, and how a name one file imports resolves to the file that
//! defines it: [`ModuleInfo`] (a file as the call graph sees it), [`ModulePaths`] (a file's
//! dotted module path, from its package folders), [`ModuleIndex`] (modules by dotted path), and
//! the lookups through imports and re-exports that every later pass asks ([`Resolved`],
//! `class_named`, `registry_named`).
//!
//! The first pass of the project: it reads only the files' module paths, exports and class
//! names. It imports the project's id types from its parent and nothing of its siblings.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use rustc_hash::FxHashMap;

use super::{Project, ProjectClass, ProjectFunction};
use crate::parse::SourceKind;
use crate::semantic::{ClassId, Export, FileSummary};

/// One linted file, as the call graph sees it.
pub struct ModuleInfo<'a> {
    /// Dotted module path (`pkg.sub.losses`), from the file's package folders.
    pub module: String,
    /// Whether the file is a package's `__init__.py`.
    pub is_package: bool,
    /// The path shown to users.
    pub display: &'a str,
    pub summary: &'a FileSummary,
}

impl ModuleInfo<'_> {
    /// Its name in the call graph: its module path, or a notebook's (which has none: nothing
    /// imports it) by its file name without `.ipynb`, as a script's top level is named.
    pub fn dotted_name(&self) -> std::borrow::Cow<'_, str> {
        if !self.module.is_empty() || self.is_package {
            return std::borrow::Cow::Borrowed(&self.module);
        }
        let stem = Path::new(self.display).file_stem().and_then(|stem| stem.to_str());
        std::borrow::Cow::Borrowed(stem.unwrap_or_default())
    }
}

/// Module paths of many files, looking each folder's `__init__.py` up once.
#[derive(Default)]
pub struct ModulePaths {
    /// Folder -> its dotted package path, or `None` when it is not a package.
    packages: FxHashMap<PathBuf, Option<String>>,
}

impl ModulePaths {
    /// The dotted module path of a file, and whether it is a package's `__init__.py`.
    pub fn module_of(&mut self, path: &Path) -> (String, bool) {
        // A notebook is run, never imported: no module name, so that `train.ipynb` beside
        // `train.py` does not stand for it.
        if SourceKind::of(path) == SourceKind::Notebook {
            return (String::new(), false);
        }
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
        let is_package = stem == "__init__";
        let package = path.parent().and_then(|dir| self.package_of(dir, 0));
        let module = match (package, is_package) {
            (Some(package), true) => package,
            (Some(package), false) => format!("{package}.{stem}"),
            (None, true) => String::new(),
            (None, false) => stem.to_string(),
        };
        (module, is_package)
    }

    fn package_of(&mut self, dir: &Path, depth: u32) -> Option<String> {
        if let Some(known) = self.packages.get(dir) {
            return known.clone();
        }
        let package = if depth < 32 && dir.join("__init__.py").is_file() {
            let name = dir.file_name().and_then(|n| n.to_str())?.to_string();
            match dir.parent().and_then(|parent| self.package_of(parent, depth + 1)) {
                Some(parent) => Some(format!("{parent}.{name}")),
                None => Some(name),
            }
        } else {
            None
        };
        self.packages.insert(dir.to_path_buf(), package.clone());
        package
    }
}

/// Modules by dotted path, and by their last component for imports that name only a tail.
pub(super) struct ModuleIndex<'m> {
    by_path: FxHashMap<&'m str, usize>,
    by_last: FxHashMap<&'m str, Vec<usize>>,
    /// The first class of each name in each file: every base class spelled by a bare name is
    /// looked up here, and a file may define thousands.
    classes: FxHashMap<(usize, &'m str), ClassId>,
}

impl<'m> ModuleIndex<'m> {
    pub(super) fn new(modules: &'m [ModuleInfo]) -> Self {
        let mut by_path = FxHashMap::default();
        let mut by_last: FxHashMap<&str, Vec<usize>> = FxHashMap::default();
        for (index, module) in modules.iter().enumerate() {
            // No name: a notebook, which nothing imports.
            if module.module.is_empty() && !module.is_package {
                continue;
            }
            by_path.insert(module.module.as_str(), index);
            let last = module.module.rsplit('.').next().unwrap_or_default();
            by_last.entry(last).or_default().push(index);
        }
        let mut classes = FxHashMap::default();
        for (file, module) in modules.iter().enumerate() {
            for (id, class) in module.summary.classes.iter().enumerate() {
                classes.entry((file, &*class.name)).or_insert(id as ClassId);
            }
        }
        ModuleIndex {
            by_path,
            by_last,
            classes,
        }
    }

    /// The module `absolute` names: exactly, or the one module whose path ends with it
    /// (`from losses import f` run from a folder that is not a package root).
    fn find(&self, modules: &[ModuleInfo], absolute: &str) -> Option<usize> {
        if let Some(&index) = self.by_path.get(absolute) {
            return Some(index);
        }
        let last = absolute.rsplit('.').next().unwrap_or(absolute);
        // Most names not found are the library's (`numpy.linalg`): no module ends with them.
        let candidates = self.by_last.get(last)?;
        let suffix = format!(".{absolute}");
        let mut matches = candidates.iter().filter(|&&i| modules[i].module.ends_with(&suffix));
        let first = matches.next().copied();
        if matches.next().is_some() {
            return None;
        }
        first.or_else(|| self.find_in_namespace_folder(modules, absolute))
    }

    /// `pkg.tal` where the file `pkg/tal.py` is the module `tal`: its folder has no
    /// `__init__.py` (a namespace package), so its module path starts below it, but code run
    /// from the folder above imports it through the folder's name.
    fn find_in_namespace_folder(&self, modules: &[ModuleInfo], absolute: &str) -> Option<usize> {
        let parts: Vec<&str> = absolute.split('.').collect();
        (1..parts.len()).find_map(|skip| {
            let index = *self.by_path.get(parts[skip..].join(".").as_str())?;
            let module = &modules[index];
            let mut expected: PathBuf = parts.iter().collect();
            if module.is_package {
                expected.push("__init__.py");
            } else {
                expected.set_extension("py");
            }
            let path = std::path::absolute(module.display).ok()?;
            path.ends_with(&expected).then_some(index)
        })
    }
}

/// `..losses` seen from `pkg.sub.train` -> `pkg.losses`; an absolute name as it is (names are
/// resolved for every call site, every round: most are absolute and need no copy).
fn absolute_module<'a>(importer: &ModuleInfo, module: &'a str) -> Option<Cow<'a, str>> {
    let level = module.bytes().take_while(|c| *c == b'.').count();
    if level == 0 {
        return Some(Cow::Borrowed(module));
    }
    let mut package: Vec<&str> = importer.module.split('.').filter(|p| !p.is_empty()).collect();
    if !importer.is_package {
        package.pop();
    }
    for _ in 1..level {
        package.pop()?;
    }
    let rest = &module[level..];
    if !rest.is_empty() {
        package.push(rest);
    }
    Some(Cow::Owned(package.join(".")))
}

/// What a project name resolves to.
#[derive(Clone, Copy)]
pub(super) enum Resolved {
    Function(ProjectFunction),
    Class(ProjectClass),
}

impl<'m> Project<'m> {
    /// What a qualified name as `file` spells it names (`.losses.f`, `pkg.heads.Head`).
    pub(super) fn resolve_spelled(&self, file: usize, spelled: &str) -> Option<Resolved> {
        let (module, name) = spelled.rsplit_once('.')?;
        self.resolve_name(file, module, name, 0)
    }

    /// A module's name `name`: a function, a class, or what it re-exports.
    pub(super) fn resolve_name(&self, file: usize, module: &str, name: &str, depth: u32) -> Option<Resolved> {
        if depth > 4 {
            return None;
        }
        let absolute = absolute_module(&self.modules[file], module)?;
        let target = self.index.find(self.modules, &absolute)?;
        match self.modules[target].summary.exports.get(name)? {
            Export::Function(id) => Some(Resolved::Function((target, *id))),
            Export::Class(id) => Some(Resolved::Class((target, *id))),
            Export::Import { module, name } => self.resolve_name(target, module, name, depth + 1),
        }
    }
}

/// The class `spelled` names in `file`: a class of the file by name, or an imported one.
pub(super) fn class_named(
    modules: &[ModuleInfo],
    index: &ModuleIndex,
    file: usize,
    spelled: &str,
) -> Option<ProjectClass> {
    let Some((module, name)) = spelled.rsplit_once('.') else {
        return index.classes.get(&(file, spelled)).map(|&id| (file, id));
    };
    match defined(modules, index, file, module, name)? {
        (target, _, Some(Export::Class(id))) => Some((target, *id)),
        _ => None,
    }
}

/// The registry `spelled` names in `file` (see
/// [`SemanticModel::registry_spelled`](crate::semantic::SemanticModel)): the file whose
/// module-level value it is, and its name there.
pub(super) fn registry_named<'m>(
    modules: &'m [ModuleInfo],
    index: &ModuleIndex,
    file: usize,
    spelled: &'m str,
) -> Option<(usize, &'m str)> {
    let Some((module, name)) = spelled.rsplit_once('.') else {
        return Some((file, spelled));
    };
    match defined(modules, index, file, module, name)? {
        (target, name, None) => Some((target, name)),
        _ => None,
    }
}

/// Where `module.name`, as `file` imports it, is defined in the project, through the modules
/// that import it on (re-exports): the file, the name there, and what it exports by that name
/// (`None`: a value, neither a function nor a class).
fn defined<'m>(
    modules: &'m [ModuleInfo],
    index: &ModuleIndex,
    file: usize,
    module: &'m str,
    name: &'m str,
) -> Option<(usize, &'m str, Option<&'m Export>)> {
    let (mut importer, mut module, mut name) = (file, module, name);
    for _ in 0..5 {
        let absolute = absolute_module(&modules[importer], module)?;
        let target = index.find(modules, &absolute)?;
        match modules[target].summary.exports.get(name) {
            Some(Export::Import {
                module: next,
                name: next_name,
            }) => {
                (importer, module, name) = (target, next, next_name);
            }
            export => return Some((target, name, export)),
        }
    }
    None
}

/// Paths shown relative to the working directory, with `/` separators.
pub fn display_path(path: &Path, cwd: &Path) -> String {
    let relative: PathBuf = path
        .strip_prefix(cwd)
        .map(Path::to_path_buf)
        .unwrap_or_else(|_| path.to_path_buf());
    let text = relative.to_string_lossy().replace('\\', "/");
    text.strip_prefix("./").map(str::to_string).unwrap_or(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::semantic::FileSummary;

    /// `pkg.tal` names `pkg/tal.py` where `pkg` has no `__init__.py` (its module path is `tal`),
    /// and only that file: another `tal.py` elsewhere is not it.
    #[test]
    fn imports_through_a_namespace_folder() {
        let summary = FileSummary::default();
        let info = |module: &str, display: &'static str| ModuleInfo {
            module: module.to_string(),
            is_package: false,
            display,
            summary: &summary,
        };
        let modules = [info("tal", "work/pkg/tal.py"), info("loss", "work/pkg/loss.py")];
        let index = ModuleIndex::new(&modules);
        assert_eq!(index.find(&modules, "pkg.tal"), Some(0));
        assert_eq!(index.find(&modules, "tal"), Some(0));
        assert_eq!(index.find(&modules, "other.tal"), None);
        let elsewhere = [info("tal", "work/utils/tal.py")];
        assert_eq!(ModuleIndex::new(&elsewhere).find(&elsewhere, "pkg.tal"), None);
    }
}
