//! Checking open documents, two ways. The project pass is `synclint check`'s pipeline over
//! every open file and the rest of its project, the editor's unsaved text read in place of the
//! disk; it settles what the project knows about each file. A quick check lints one file alone,
//! with what the last project pass concluded about it and the calls within the file itself: it
//! answers an edit at once, and the next project pass corrects what the edit changed for other
//! files.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::config::{Resolver, Settings};
use crate::diagnostic::Applicability;
use crate::discovery::is_test_path;
use crate::linter::{lint_source, panic_reason};
use crate::outcome::process_file;
use crate::parse::SourceKind;
use crate::pipeline::{Checked, Linted, Run, RunOptions, module_infos, run};
use crate::project::Project;
use crate::project::hotness::FunctionNotes;
use crate::render::Finding;
use crate::semantic::{FileFacts, FunctionId};

/// The least safe fixes `synclint check --fix` applies under `settings`.
pub fn fix_minimum(settings: &Settings) -> Applicability {
    if settings.unsafe_fixes {
        Applicability::Unsafe
    } else {
        Applicability::Safe
    }
}

/// A file as the server checks it.
pub struct Target {
    /// Where its settings come from, and (for a file on disk) the file.
    pub path: PathBuf,
    /// How paths are shown in notes.
    pub display: String,
    pub module: String,
    pub is_package: bool,
}

/// What checking one version of a document found.
pub struct Report {
    /// The file as checked, kept for its fixes.
    linted: Linted,
    notes: FunctionNotes,
    /// Syntax errors and the findings whose lines are hot, by position.
    pub findings: Vec<Finding>,
}

impl Report {
    fn new(linted: Linted, notes: FunctionNotes) -> Result<Self, String> {
        let output = guarded(&linted.display, || process_file(&linted, &notes, None))?;
        let mut findings = output.findings;
        findings.sort_by(|a, b| (a.start, a.code()).cmp(&(b.start, b.code())));
        Ok(Report {
            linted,
            notes,
            findings,
        })
    }

    pub fn path(&self) -> &Path {
        &self.linted.path
    }

    pub fn settings(&self) -> &Settings {
        &self.linted.settings
    }

    /// The 1-based line of the function with this qualified name.
    pub fn function_line(&self, qualname: &str) -> Option<u32> {
        let functions = &self.linted.summary.functions;
        let function = functions.iter().find(|f| &*f.qualname == qualname)?;
        Some(function.line).filter(|&line| line > 0)
    }

    /// The text with every fix `synclint check --fix` applies, fixed in passes as it does;
    /// `Ok(None)` where nothing changes.
    pub fn fixed_text(&self) -> Result<Option<String>, String> {
        let minimum = fix_minimum(&self.linted.settings);
        let output = guarded(&self.linted.display, || {
            process_file(&self.linted, &self.notes, Some(minimum))
        })?;
        match output.error {
            Some(error) => Err(error.to_string()),
            None => Ok(output.fixed.map(|fixed| fixed.file_text().to_string())),
        }
    }
}

/// What the last project pass concluded about a file, to check edits of it with until the next.
pub struct ProjectContext {
    /// The text the pass checked.
    text: Arc<str>,
    facts: FileFacts,
    /// Why the file's functions are hot through calls, by qualified name: ids change as the
    /// file is edited.
    notes: FxHashMap<Box<str>, String>,
}

impl ProjectContext {
    /// The facts for `text`, an edit of the text the pass checked. Those about calls are
    /// keyed by the call's offset: a call before the edit keeps its offset, one after it moves
    /// with the text, and one inside it is forgotten.
    fn facts_for(&self, text: &str) -> FileFacts {
        let facts = &self.facts;
        if (facts.results.is_empty() && facts.callee_syncs.is_empty()) || *self.text == *text {
            return facts.clone();
        }
        let (old, new) = (self.text.as_bytes(), text.as_bytes());
        let prefix = old.iter().zip(new).take_while(|(a, b)| a == b).count();
        let suffix = old[prefix..]
            .iter()
            .rev()
            .zip(new[prefix..].iter().rev())
            .take_while(|(a, b)| a == b)
            .count();
        let edited_end = old.len() - suffix;
        let moved = |at: u32| {
            let at = at as usize;
            let moved = if at < prefix {
                at
            } else if at >= edited_end {
                at + new.len() - old.len()
            } else {
                return None;
            };
            u32::try_from(moved).ok()
        };
        facts.with_calls_moved(moved)
    }
}

/// Checks `text` as `target`, alone, with what the last project pass concluded about it.
pub fn quick_check(
    target: &Target,
    text: &str,
    context: Option<&ProjectContext>,
    resolver: &Resolver,
) -> Result<Report, String> {
    let path = &target.path;
    let settings = resolver.for_dir(path.parent().unwrap_or(Path::new("/")));
    let facts = context.map(|context| context.facts_for(text)).unwrap_or_default();
    let rules = settings.rules_for(path);
    let mut lint = guarded(&target.display, || {
        lint_source(
            text,
            SourceKind::Python,
            rules,
            &settings.hot_functions,
            &facts,
            false,
            is_test_path(path),
        )
    })?;
    let summary = std::mem::take(&mut lint.summary);
    let minimum = fix_minimum(&settings);
    let linted = Linted {
        path: path.clone(),
        display: target.display.clone(),
        checked: Checked::new(&target.display, text.to_string(), None, lint, Some(minimum)),
        settings,
        summary,
        module: target.module.clone(),
        is_package: target.is_package,
        named: true,
        facts,
        key: None,
    };
    let notes = guarded(&target.display, || notes_within(&linted, context))?;
    Report::new(linted, notes)
}

/// Why the functions of `linted` are hot through calls: from the last project pass, where it
/// said, else from the calls within the file.
fn notes_within(linted: &Linted, context: Option<&ProjectContext>) -> FunctionNotes {
    let modules = module_infos(std::slice::from_ref(linted));
    let project = Project::with_targets(&modules, Vec::new());
    let mut notes = project.hot_functions().notes(1, |_, _| true).pop().unwrap_or_default();
    if let Some(context) = context {
        for (id, function) in linted.summary.functions.iter().enumerate() {
            if let Some(note) = context.notes.get(&*function.qualname) {
                notes.insert(id as FunctionId, note.clone());
            }
        }
    }
    notes
}

/// A project pass to run: the open files and their texts.
pub struct PassRequest {
    pub files: Vec<(PathBuf, String)>,
    pub resolver: Arc<Resolver>,
    /// The folder paths are shown relative to.
    pub root: PathBuf,
    pub cache: Option<PathBuf>,
    pub threads: usize,
}

/// What a project pass concluded about one open file.
pub struct PassedFile {
    pub path: PathBuf,
    pub context: ProjectContext,
    pub report: Result<Report, String>,
}

/// What a project pass left.
#[derive(Default)]
pub struct PassOutcome {
    pub files: Vec<PassedFile>,
    /// Broken configuration: nothing was concluded.
    pub config_errors: Vec<String>,
    /// Files that could not be read or checked, a cache that could not be written.
    pub problems: Vec<String>,
}

/// Runs `synclint check`'s pipeline over the open files (their texts in place of the disk) and
/// the rest of their projects. To be run in the thread pool the pipeline's work goes to.
pub fn project_pass(request: &PassRequest) -> PassOutcome {
    let overlays: FxHashMap<PathBuf, String> = request.files.iter().cloned().collect();
    let paths: Vec<PathBuf> = request.files.iter().map(|(path, _)| path.clone()).collect();
    let fixing = |settings: &Settings| Some(fix_minimum(settings));
    let options = RunOptions {
        threads: request.threads,
        isolated: false,
        every_call: false,
        fixing: &fixing,
        cache: request.cache.clone(),
        overlays,
    };
    let checked = catch_unwind(AssertUnwindSafe(|| {
        run(&paths, &request.resolver, &request.root, &options)
    }));
    let Run {
        linted, notes, errors, ..
    } = match checked {
        Ok(Ok(run)) => run,
        Ok(Err(reports)) => {
            return PassOutcome {
                config_errors: reports.iter().map(|report| report.to_string()).collect(),
                ..PassOutcome::default()
            };
        }
        Err(panic) => {
            return PassOutcome {
                problems: vec![format!("the project pass failed: {}", panic_reason(&*panic))],
                ..PassOutcome::default()
            };
        }
    };
    let mut outcome = PassOutcome {
        problems: errors
            .reports
            .iter()
            .chain(&errors.warnings)
            .map(|report| report.to_string())
            .collect(),
        ..PassOutcome::default()
    };
    for (file, notes) in linted.into_iter().zip(notes).filter(|(file, _)| file.named) {
        let Some(text) = options.overlays.get(&file.path) else {
            continue;
        };
        let functions = &file.summary.functions;
        let context = ProjectContext {
            text: text.as_str().into(),
            facts: file.facts.clone(),
            notes: notes
                .iter()
                .filter_map(|(&id, note)| Some((functions.get(id as usize)?.qualname.clone(), note.clone())))
                .collect(),
        };
        outcome.files.push(PassedFile {
            path: file.path.clone(),
            context,
            report: Report::new(file, notes),
        });
    }
    outcome
}

/// Runs `work`, turning a panic (a bug in a rule) into an error naming the file.
fn guarded<T>(display: &str, work: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(work)).map_err(|panic| {
        format!(
            "{display}: internal error while checking this file (please report it): {}",
            panic_reason(&*panic)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::semantic::ProjectReturns;

    #[test]
    fn call_facts_follow_the_text_around_an_edit() {
        let old = "a = f()\nb = g()\nc = h()\n";
        let mut facts = FileFacts::default();
        for name in ["f()", "g()", "h()"] {
            facts
                .results
                .insert(old.find(name).unwrap() as u32, ProjectReturns::default());
        }
        let context = ProjectContext {
            text: old.into(),
            facts,
            notes: FxHashMap::default(),
        };
        // `g()` replaced, a line inserted before `h()`.
        let new = "a = f()\nb = k()\nx = 1\nc = h()\n";
        let mut kept: Vec<u32> = context.facts_for(new).results.into_keys().collect();
        kept.sort();
        assert_eq!(
            kept,
            vec![new.find("f()").unwrap() as u32, new.find("h()").unwrap() as u32]
        );
        assert_eq!(context.facts_for(old).results.len(), 3);
    }
}
