//! Settings: `[tool.synclint]` in pyproject.toml or synclint.toml, found from each linted file's
//! folder upwards (nearest wins), with command-line overrides on top.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};

use globset::{Glob, GlobSet, GlobSetBuilder};
use miette::{LabeledSpan, Report, miette};
use rustc_hash::FxHashMap;
use serde::Deserialize;
use toml::Spanned;

use crate::registry::{RuleSelector, RuleSet, resolve_rules};
use crate::render::ReportText;

/// The keys of `[tool.synclint]` / synclint.toml.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Options {
    pub select: Option<Vec<Spanned<String>>>,
    pub extend_select: Option<Vec<Spanned<String>>>,
    pub ignore: Option<Vec<Spanned<String>>>,
    pub exclude: Option<Vec<String>>,
    pub extend_exclude: Option<Vec<String>>,
    /// Which files a folder's walk lints (globs of names or paths under the config's folder).
    pub include: Option<Vec<String>>,
    pub extend_include: Option<Vec<String>>,
    pub per_file_ignores: Option<BTreeMap<String, Vec<Spanned<String>>>>,
    /// Extra function names (or `Class.method`) to treat as hot.
    pub hot_functions: Option<Vec<String>>,
    pub respect_gitignore: Option<bool>,
    pub fix: Option<bool>,
    pub unsafe_fixes: Option<bool>,
    /// Also report findings under periodic guards (`if step % N == 0:`).
    pub report_periodic: Option<bool>,
    /// The folder whose files make the project a named file is checked in (relative to the
    /// config's folder, and at or below it); by default the nearest folder upwards with
    /// `pyproject.toml`, `setup.cfg`, `setup.py` or `.git`.
    pub project_root: Option<String>,
    /// Where results are cached between runs (relative to the config's folder); by default
    /// `.synclint_cache` in the project root.
    pub cache_dir: Option<String>,
}

#[derive(Deserialize)]
struct PyProject {
    tool: Option<Tools>,
}

#[derive(Deserialize)]
struct Tools {
    synclint: Option<Options>,
}

/// The files a folder's walk lints: Python files and Jupyter notebooks.
pub const DEFAULT_INCLUDE: &[&str] = &["*.py", "*.ipynb"];

/// Folders and files skipped unless named on the command line.
pub const DEFAULT_EXCLUDE: &[&str] = &[
    ".git",
    ".hg",
    ".svn",
    ".bzr",
    ".venv",
    "venv",
    ".env",
    "env",
    ".tox",
    ".nox",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".synclint_cache",
    "__pycache__",
    "__pypackages__",
    "build",
    "dist",
    "node_modules",
    "site-packages",
    ".eggs",
    "*.egg-info",
    ".direnv",
    ".ipynb_checkpoints",
    "_build",
    "buck-out",
];

/// Options given on the command line; they win over the config file.
#[derive(Debug, Default, Clone)]
pub struct Overrides {
    pub select: Option<Vec<RuleSelector>>,
    pub extend_select: Vec<RuleSelector>,
    pub ignore: Vec<RuleSelector>,
    pub exclude: Option<Vec<String>>,
    pub extend_exclude: Vec<String>,
    pub respect_gitignore: Option<bool>,
    pub fix: Option<bool>,
    pub unsafe_fixes: Option<bool>,
    pub report_periodic: Option<bool>,
}

/// Settings in force for the files under one config.
#[derive(Debug)]
pub struct Settings {
    /// Where relative patterns are anchored: the config's folder, else the working directory
    /// (absolute).
    pub root: PathBuf,
    /// Where relative file paths are resolved from before they are matched against patterns.
    cwd: PathBuf,
    pub config_path: Option<PathBuf>,
    pub rules: RuleSet,
    per_file_ignores: Vec<(globset::GlobMatcher, Vec<RuleSelector>)>,
    exclude: GlobSet,
    include: GlobSet,
    pub hot_functions: Vec<String>,
    pub respect_gitignore: bool,
    pub fix: bool,
    pub unsafe_fixes: bool,
    pub report_periodic: bool,
    /// `project-root`, made absolute.
    pub project_root: Option<PathBuf>,
    /// `cache-dir`, made absolute.
    pub cache_dir: Option<PathBuf>,
}

impl Settings {
    fn build(
        options: Options,
        root: PathBuf,
        config_path: Option<PathBuf>,
        overrides: &Overrides,
        cwd: &Path,
    ) -> Result<Self, Report> {
        let selectors = |list: Option<Vec<Spanned<String>>>| -> Vec<RuleSelector> {
            list.unwrap_or_default()
                .iter()
                .filter_map(|s| RuleSelector::parse(s.get_ref()).ok())
                .collect()
        };
        let select = overrides
            .select
            .clone()
            .or_else(|| options.select.clone().map(|s| selectors(Some(s))));
        let mut extend_select = selectors(options.extend_select.clone());
        extend_select.extend(overrides.extend_select.iter().cloned());
        let mut ignore = selectors(options.ignore.clone());
        ignore.extend(overrides.ignore.iter().cloned());
        let rules = resolve_rules(select.as_deref(), &extend_select, &ignore);

        let mut per_file_ignores = Vec::new();
        for (pattern, codes) in options.per_file_ignores.unwrap_or_default() {
            let glob = Glob::new(&pattern).map_err(|e| miette!("invalid per-file-ignores pattern `{pattern}`: {e}"))?;
            per_file_ignores.push((glob.compile_matcher(), selectors(Some(codes))));
        }
        let mut exclude = GlobSetBuilder::new();
        let base: Vec<String> = overrides
            .exclude
            .clone()
            .or(options.exclude)
            .unwrap_or_else(|| DEFAULT_EXCLUDE.iter().map(|s| s.to_string()).collect());
        let extra = options
            .extend_exclude
            .unwrap_or_default()
            .into_iter()
            .chain(overrides.extend_exclude.iter().cloned());
        for pattern in base.into_iter().chain(extra) {
            let pattern = pattern.trim_end_matches('/').to_string();
            let glob = Glob::new(&pattern).map_err(|e| miette!("invalid exclude pattern `{pattern}`: {e}"))?;
            exclude.add(glob);
        }
        let exclude = exclude.build().map_err(|e| miette!("invalid exclude patterns: {e}"))?;
        let mut include = GlobSetBuilder::new();
        let base = options
            .include
            .unwrap_or_else(|| DEFAULT_INCLUDE.iter().map(|s| s.to_string()).collect());
        for pattern in base.into_iter().chain(options.extend_include.unwrap_or_default()) {
            let glob = Glob::new(&pattern).map_err(|e| miette!("invalid include pattern `{pattern}`: {e}"))?;
            include.add(glob);
        }
        let include = include.build().map_err(|e| miette!("invalid include patterns: {e}"))?;
        let root = absolute(&root, cwd);
        let project_root = match &options.project_root {
            Some(folder) => Some(project_root_within(&root, folder)?),
            None => None,
        };
        Ok(Settings {
            cwd: cwd.to_path_buf(),
            config_path,
            rules,
            per_file_ignores,
            exclude,
            include,
            hot_functions: options.hot_functions.unwrap_or_default(),
            respect_gitignore: overrides
                .respect_gitignore
                .or(options.respect_gitignore)
                .unwrap_or(true),
            fix: overrides.fix.or(options.fix).unwrap_or(false),
            unsafe_fixes: overrides.unsafe_fixes.or(options.unsafe_fixes).unwrap_or(false),
            report_periodic: overrides.report_periodic.or(options.report_periodic).unwrap_or(false),
            project_root,
            cache_dir: options
                .cache_dir
                .as_ref()
                .map(|folder| absolute(&root.join(folder), cwd)),
            root,
        })
    }

    /// The rules for one file, after `per-file-ignores`.
    pub fn rules_for(&self, path: &Path) -> RuleSet {
        let mut rules = self.rules;
        // Most projects ignore nothing per file: no path to make absolute for every file.
        if self.per_file_ignores.is_empty() {
            return rules;
        }
        let path = absolute(path, &self.cwd);
        let relative = path.strip_prefix(&self.root).unwrap_or(&path);
        for (matcher, selectors) in &self.per_file_ignores {
            let matches = matcher.is_match(relative) || path.file_name().is_some_and(|n| matcher.is_match(n));
            if matches {
                for rule in selectors.iter().flat_map(|s| s.rules()) {
                    rules.remove(rule);
                }
            }
        }
        rules
    }

    /// Is this path excluded (by its name or by its path relative to the root)?
    pub fn is_excluded(&self, path: &Path) -> bool {
        self.matches(&self.exclude, path)
    }

    /// Does a folder's walk lint this file (by its name or by its path relative to the root)?
    pub fn is_included(&self, path: &Path) -> bool {
        self.matches(&self.include, path)
    }

    fn matches(&self, globs: &GlobSet, path: &Path) -> bool {
        let name_matches = path.file_name().is_some_and(|name| globs.is_match(name));
        name_matches
            || absolute(path, &self.cwd)
                .strip_prefix(&self.root)
                .is_ok_and(|relative| globs.is_match(relative))
    }
}

/// `project-root` (relative to `base`, the config's absolute folder), made absolute: an existing
/// folder at or below `base`, symbolic links resolved, so that a project never reaches above
/// the config that sets it (`"/"` would walk the whole file system).
fn project_root_within(base: &Path, folder: &str) -> Result<PathBuf, Report> {
    let path = absolute(&base.join(folder), base);
    let setting = format!("`project-root = \"{folder}\"`");
    let real = std::fs::canonicalize(&path).map_err(|error| match error.kind() {
        std::io::ErrorKind::NotFound => miette!("{setting}: {} does not exist", path.display()),
        _ => miette!("{setting}: cannot read {}: {error}", path.display()),
    })?;
    if !real.is_dir() {
        return Err(miette!("{setting}: {} is not a folder", path.display()));
    }
    let real_base = std::fs::canonicalize(base).unwrap_or_else(|_| base.to_path_buf());
    if !real.starts_with(&real_base) {
        // Through a link, the folder it leads to is the one outside.
        let named = if path.starts_with(base) {
            format!("{}, a link to {},", path.display(), real.display())
        } else {
            path.display().to_string()
        };
        return Err(miette!(
            "{setting}: {named} is outside {}, the folder of this config; it must be that folder or one below it",
            base.display()
        ));
    }
    Ok(path)
}

/// Where settings come from.
pub enum Source {
    /// `--isolated`: defaults and command-line options only.
    Isolated,
    /// `--config PATH`: one file for everything.
    Explicit(PathBuf),
    /// The nearest config upwards from each file.
    Discover,
}

/// Finds and caches the settings of each folder.
pub struct Resolver {
    overrides: Overrides,
    fixed: Option<Arc<Settings>>,
    /// For files with no config above them, and in place of a broken config.
    defaults: Arc<Settings>,
    cwd: PathBuf,
    /// By absolute folder.
    cache: Mutex<FxHashMap<PathBuf, Arc<Settings>>>,
    /// By config file, so folders that share a config share its settings.
    by_config: Mutex<FxHashMap<PathBuf, Arc<Settings>>>,
    /// By config file, so a broken config is reported once however many folders it governs.
    errors: Mutex<BTreeMap<PathBuf, Report>>,
}

impl Resolver {
    /// Fails on a broken `--config` file and on invalid command-line patterns.
    pub fn new(source: Source, overrides: Overrides, cwd: PathBuf) -> Result<Self, Report> {
        // Built now so that an invalid `--exclude` glob is an error here, not in every folder.
        let defaults = Arc::new(Settings::build(
            Options::default(),
            cwd.clone(),
            None,
            &overrides,
            &cwd,
        )?);
        let fixed = match source {
            Source::Isolated => Some(defaults.clone()),
            Source::Explicit(path) => {
                let options = load(&path)?.unwrap_or_default();
                let root = path
                    .parent()
                    .map(Path::to_path_buf)
                    .filter(|p| !p.as_os_str().is_empty())
                    .unwrap_or_else(|| cwd.clone());
                let settings = Settings::build(options, root, Some(path.clone()), &overrides, &cwd);
                Some(Arc::new(settings.map_err(|report| in_config(report, &path))?))
            }
            Source::Discover => None,
        };
        let (cache, by_config, errors) = (Mutex::default(), Mutex::default(), Mutex::default());
        Ok(Resolver {
            overrides,
            fixed,
            defaults,
            cwd,
            cache,
            by_config,
            errors,
        })
    }

    /// The settings for files in `dir`. A broken config is recorded (see [`Resolver::take_errors`])
    /// and the defaults are used meanwhile.
    pub fn for_dir(&self, dir: &Path) -> Arc<Settings> {
        if let Some(fixed) = &self.fixed {
            return fixed.clone();
        }
        // `sub/..`, `./sub` and `/abs/sub` are one folder, looked up once.
        self.settings_in(&absolute(dir, &self.cwd))
    }

    /// The settings of the nearest config from the absolute folder `dir` upwards; each folder
    /// on the way is looked at once (a pyproject.toml without `[tool.synclint]` above a large
    /// tree would otherwise be parsed again for every folder under it).
    fn settings_in(&self, dir: &Path) -> Arc<Settings> {
        if let Some(found) = self.cache.lock().expect("config cache").get(dir) {
            return found.clone();
        }
        let settings = match config_in(dir) {
            Some(config) => self.settings_of(config),
            None => match dir.parent() {
                Some(parent) => self.settings_in(parent),
                None => self.defaults.clone(),
            },
        };
        self.cache
            .lock()
            .expect("config cache")
            .insert(dir.to_path_buf(), settings.clone());
        settings
    }

    /// The settings of a config file, loaded once. A broken config is recorded and the defaults
    /// stand in for it.
    fn settings_of(&self, config: PathBuf) -> Arc<Settings> {
        if let Some(found) = self.by_config.lock().expect("config cache").get(&config) {
            return found.clone();
        }
        let folder = config
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| self.cwd.clone());
        let built = load(&config).and_then(|options| {
            Settings::build(
                options.unwrap_or_default(),
                folder,
                Some(config.clone()),
                &self.overrides,
                &self.cwd,
            )
            .map_err(|report| in_config(report, &config))
        });
        let settings = match built {
            Ok(settings) => Arc::new(settings),
            Err(report) => {
                self.errors
                    .lock()
                    .expect("config errors")
                    .entry(config.clone())
                    .or_insert(report);
                self.defaults.clone()
            }
        };
        self.by_config
            .lock()
            .expect("config cache")
            .entry(config)
            .or_insert(settings)
            .clone()
    }

    /// The broken configs met so far, ordered by path.
    pub fn take_errors(&self) -> Vec<Report> {
        std::mem::take(&mut *self.errors.lock().expect("config errors"))
            .into_values()
            .collect()
    }
}

/// A setting's error, naming the config file it is in.
fn in_config(report: Report, config: &Path) -> Report {
    report.wrap_err(format!("invalid config in {}", config.display()))
}

/// The synclint.toml of `folder`, or its pyproject.toml with a `[tool.synclint]` table.
fn config_in(folder: &Path) -> Option<PathBuf> {
    ["synclint.toml", "pyproject.toml"]
        .into_iter()
        .map(|name| folder.join(name))
        .find(|candidate| candidate.is_file() && (!is_pyproject(candidate) || has_synclint_table(candidate)))
}

fn is_pyproject(path: &Path) -> bool {
    path.file_name().is_some_and(|n| n == "pyproject.toml")
}

/// Whether a pyproject.toml configures synclint; one that cannot be read or parsed is said to,
/// so that loading it reports why.
fn has_synclint_table(path: &Path) -> bool {
    let Some(text) = read_text(path).ok() else {
        return true;
    };
    match text.parse::<toml::Table>() {
        Ok(table) => table.get("tool").and_then(|tool| tool.get("synclint")).is_some(),
        Err(_) => true,
    }
}

/// `path` made absolute against `cwd`, with `.` and `..` resolved by name (symbolic links are
/// kept, so the paths stay the ones the user typed).
pub fn absolute(path: &Path, cwd: &Path) -> PathBuf {
    let mut result = PathBuf::new();
    for component in cwd.join(path).components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                result.pop();
            }
            other => result.push(other),
        }
    }
    result
}

/// A config file's text, read only where it is a regular file (a FIFO named `synclint.toml`
/// would block the run forever).
fn read_text(path: &Path) -> std::io::Result<String> {
    let bytes = crate::regular_file::read_regular_file(path)?;
    String::from_utf8(bytes).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

/// Reads a config file: `Ok(None)` for a pyproject.toml without `[tool.synclint]`.
pub fn load(path: &Path) -> Result<Option<Options>, Report> {
    let text = read_text(path).map_err(|e| miette!("cannot read config {}: {e}", path.display()))?;
    // The lines around a span of the text, long ones cut: miette is never given a whole long line.
    let source_around = |span| ReportText::new(path.display().to_string(), &text).around(span);
    let parsed = if is_pyproject(path) {
        toml::from_str::<PyProject>(&text).map(|p| p.tool.and_then(|t| t.synclint))
    } else {
        toml::from_str::<Options>(&text).map(Some)
    };
    let options = parsed.map_err(|error| {
        let message = error.message().to_string();
        match error.span() {
            Some(span) => {
                let (source, span) = source_around(span);
                miette!(
                    labels = vec![LabeledSpan::at(span, message.clone())],
                    "invalid config in {}: {message}",
                    path.display()
                )
                .with_source_code(source)
            }
            None => miette!("invalid config in {}: {message}", path.display()),
        }
    })?;
    if let Some(options) = &options {
        let lists = [&options.select, &options.extend_select, &options.ignore];
        let per_file = options.per_file_ignores.iter().flat_map(|m| m.values());
        for selector in lists.into_iter().flatten().chain(per_file).flatten() {
            if let Err(message) = RuleSelector::parse(selector.get_ref()) {
                let (source, span) = source_around(selector.span());
                return Err(miette!(
                    labels = vec![LabeledSpan::at(span, "unknown rule")],
                    "invalid config in {}: {message}",
                    path.display()
                )
                .with_source_code(source));
            }
        }
    }
    Ok(options)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A config's folder (`base`, reached through a link) beside a folder outside it.
    fn folders() -> (tempfile::TempDir, PathBuf) {
        let top = tempfile::tempdir().unwrap();
        let real = std::fs::canonicalize(top.path()).unwrap();
        std::fs::create_dir_all(real.join("project/src")).unwrap();
        std::fs::create_dir(real.join("outside")).unwrap();
        std::fs::write(real.join("project/train.py"), "").unwrap();
        std::os::unix::fs::symlink(real.join("outside"), real.join("project/escape")).unwrap();
        std::os::unix::fs::symlink(real.join("project"), real.join("base")).unwrap();
        (top, real)
    }

    #[test]
    fn a_project_root_at_or_below_the_config_is_taken() {
        let (_top, real) = folders();
        let base = real.join("base");
        for (setting, expected) in [
            (".", base.clone()),
            ("src", base.join("src")),
            ("src/../src/.", base.join("src")),
            (real.join("project/src").to_str().unwrap(), real.join("project/src")),
        ] {
            assert_eq!(project_root_within(&base, setting).unwrap(), expected, "{setting}");
        }
    }

    #[test]
    fn a_project_root_above_beside_or_missing_is_an_error() {
        let (_top, real) = folders();
        let base = real.join("base");
        let outside = format!("is outside {}, the folder of this config", base.display());
        for (setting, reason) in [
            ("..", outside.as_str()),
            ("/", &outside),
            ("../outside", &outside),
            ("escape", "a link to"),
            ("missing", "does not exist"),
            ("train.py", "is not a folder"),
        ] {
            let error = project_root_within(&base, setting).unwrap_err().to_string();
            assert!(
                error.starts_with(&format!("`project-root = \"{setting}\"`: ")),
                "{error}"
            );
            assert!(error.contains(reason), "{setting}: {error}");
        }
    }
}
