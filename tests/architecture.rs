//! The invariants ARCHITECTURE.md states about the source tree, checked on the tree itself: no
//! file over 1,500 lines, no import circle between the modules of one folder, no rule that
//! names the checker, the semantic contract modules below the model, and a code map that names
//! every top-level module and what it may import.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The most lines a source file may have.
const MAX_LINES: usize = 1_500;

/// A module of the crate by its path below `crate` (`["checker", "arms"]`), with its code:
/// comments and the unit-test module at the end left out.
struct Module {
    path: Vec<String>,
    file: String,
    code: String,
    lines: usize,
}

/// Every module of the workspace: the top crate's `src/` and each crate's under `crates/`. The
/// crates re-export the modules below them under their own names, so a module keeps one path
/// (`crate::semantic::...`) whichever crate it is in.
fn modules() -> Vec<Module> {
    let repo = common::repo();
    let mut roots = vec![repo.join("src")];
    let mut crates: Vec<_> = std::fs::read_dir(repo.join("crates"))
        .expect("read crates")
        .map(|entry| entry.expect("entry").path().join("src"))
        .collect();
    crates.sort();
    roots.extend(crates);
    let mut found = Vec::new();
    for src in &roots {
        collect(src, src, &mut found);
    }
    found.sort_by(|a, b| a.path.cmp(&b.path));
    found
}

fn collect(src: &Path, dir: &Path, found: &mut Vec<Module>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("read src")
        .map(|entry| entry.expect("entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect(src, &path, found);
            continue;
        }
        if path.extension().is_none_or(|extension| extension != "rs") {
            continue;
        }
        let relative = path.strip_prefix(src).expect("below src");
        let mut parts: Vec<String> = relative
            .iter()
            .map(|part| part.to_string_lossy().trim_end_matches(".rs").to_string())
            .collect();
        if parts
            .last()
            .is_some_and(|last| last == "mod" || last == "lib" || last == "main")
        {
            parts.pop();
        }
        let text = std::fs::read_to_string(&path).expect("read a source file");
        // The unit tests at the end are left out; code that is only compiled for tests elsewhere
        // (`#[cfg(test)] mod mutations;`) is kept.
        let before_tests = text
            .rfind("#[cfg(test)]\nmod tests")
            .map_or(text.as_str(), |end| &text[..end]);
        let code = before_tests
            .lines()
            .filter(|line| !line.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        found.push(Module {
            path: parts,
            file: path.strip_prefix(common::repo()).unwrap_or(&path).display().to_string(),
            code,
            lines: text.lines().count(),
        });
    }
}

/// The modules `module` names: `crate::a::b` and `super::c` paths, each resolved to the
/// longest module path that exists.
fn references(module: &Module, known: &BTreeSet<Vec<String>>) -> BTreeSet<Vec<String>> {
    let mut found = BTreeSet::new();
    let code = &module.code;
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    for (start, prefix) in code.match_indices("crate::").chain(code.match_indices("super::")) {
        if code[..start].ends_with(is_word) || code[..start].ends_with("::") {
            continue;
        }
        let mut base: Vec<String> = if prefix == "crate::" {
            Vec::new()
        } else {
            module.path[..module.path.len().saturating_sub(1)].to_vec()
        };
        let rest = &code[start + prefix.len()..];
        let mut resolved = base.clone();
        for segment in rest.split("::") {
            let name: String = segment.chars().take_while(|&c| is_word(c)).collect();
            if name.is_empty() {
                break;
            }
            base.push(name.clone());
            if known.contains(&base) {
                resolved = base.clone();
            }
            if name.len() != segment.len() {
                break;
            }
        }
        found.insert(resolved);
    }
    found
}

#[test]
fn no_source_file_is_longer_than_the_limit() {
    let long: Vec<String> = modules()
        .iter()
        .filter(|module| module.lines > MAX_LINES)
        .map(|module| format!("{} has {} lines", module.file, module.lines))
        .collect();
    assert!(long.is_empty(), "over {MAX_LINES} lines: {long:#?}");
}

#[test]
fn the_modules_of_each_folder_import_one_another_one_way() {
    let modules = modules();
    let known: BTreeSet<Vec<String>> = modules.iter().map(|module| module.path.clone()).collect();
    // Edges between siblings: a reference from a::b::c to a::d::e is a::b -> a::d. A module's
    // references to its own ancestors or descendants are not between siblings.
    let mut edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for module in &modules {
        for target in references(module, &known) {
            let common = module.path.iter().zip(&target).take_while(|(a, b)| a == b).count();
            if common == module.path.len() || common == target.len() {
                continue;
            }
            edges
                .entry(module.path[..=common].to_vec())
                .or_default()
                .insert(target[..=common].to_vec());
        }
    }
    let mut cycles = Vec::new();
    let mut state: BTreeMap<Vec<String>, bool> = BTreeMap::new();
    fn visit(
        node: &Vec<String>,
        edges: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        state: &mut BTreeMap<Vec<String>, bool>,
        stack: &mut Vec<Vec<String>>,
        cycles: &mut Vec<String>,
    ) {
        state.insert(node.clone(), true);
        stack.push(node.clone());
        for next in edges.get(node).into_iter().flatten() {
            match state.get(next) {
                Some(true) => {
                    let from = stack.iter().position(|n| n == next).unwrap_or_default();
                    let names: Vec<String> = stack[from..].iter().chain([next]).map(|n| n.join("::")).collect();
                    cycles.push(names.join(" -> "));
                }
                Some(false) => {}
                None => visit(next, edges, state, stack, cycles),
            }
        }
        stack.pop();
        state.insert(node.clone(), false);
    }
    for node in edges.keys() {
        if !state.contains_key(node) {
            visit(node, &edges, &mut state, &mut Vec::new(), &mut cycles);
        }
    }
    assert!(cycles.is_empty(), "import circles: {cycles:#?}");
}

#[test]
fn no_rule_names_the_checker() {
    let naming: Vec<String> = modules()
        .iter()
        .filter(|module| module.path.first().is_some_and(|top| top == "rules"))
        .filter(|module| module.code.contains("crate::checker") || module.code.contains("Checker"))
        .map(|module| module.file.clone())
        .collect();
    assert!(naming.is_empty(), "rules that name the checker: {naming:?}");
}

#[test]
fn the_contract_between_the_passes_does_not_import_the_model() {
    let modules = modules();
    let known: BTreeSet<Vec<String>> = modules.iter().map(|module| module.path.clone()).collect();
    let model = ["semantic", "model"].map(String::from).to_vec();
    let contract = ["summary", "kinds", "facts", "demand", "ids", "hot"];
    let importing: Vec<String> = modules
        .iter()
        .filter(|module| matches!(module.path.as_slice(), [semantic, name] if semantic == "semantic" && contract.contains(&name.as_str())))
        .filter(|module| references(module, &known).iter().any(|target| target.starts_with(&model)))
        .map(|module| module.file.clone())
        .collect();
    assert!(
        importing.is_empty(),
        "contract modules importing the model: {importing:?}"
    );
}

/// The code map's entries: each top-level module and the modules it may import.
fn code_map() -> BTreeMap<String, BTreeSet<String>> {
    let map = std::fs::read_to_string(common::repo().join("ARCHITECTURE.md")).expect("read ARCHITECTURE.md");
    let mut entries = BTreeMap::new();
    let mut current: Option<String> = None;
    let mut in_imports = false;
    for line in map.lines() {
        if let Some(heading) = line.strip_prefix("### `")
            && let Some((_, module)) = heading.rsplit_once("src/")
        {
            let name = module
                .trim_end_matches('`')
                .trim_end_matches('/')
                .trim_end_matches(".rs");
            current = Some(name.to_string());
            entries.insert(name.to_string(), BTreeSet::new());
            in_imports = false;
            continue;
        }
        let Some(module) = &current else { continue };
        if line.starts_with("Imports:") {
            in_imports = true;
        } else if line.trim().is_empty() || line.starts_with('#') {
            in_imports = false;
        }
        if in_imports {
            let names = entries.get_mut(module).expect("entry");
            names.extend(line.split('`').skip(1).step_by(2).map(str::to_string));
        }
    }
    entries
}

#[test]
fn each_top_level_module_imports_only_what_the_code_map_allows() {
    let modules = modules();
    let known: BTreeSet<Vec<String>> = modules.iter().map(|module| module.path.clone()).collect();
    let map = code_map();
    let mut breaches = BTreeSet::new();
    for module in &modules {
        let Some(top) = module.path.first() else { continue };
        let allowed = map.get(top);
        for target in references(module, &known) {
            let Some(target_top) = target.first() else { continue };
            if target_top != top && allowed.is_none_or(|allowed| !allowed.contains(target_top)) {
                breaches.insert(format!("{} imports {target_top}", module.file));
            }
        }
    }
    assert!(
        breaches.is_empty(),
        "imports the code map does not allow: {breaches:#?}"
    );
}

#[test]
fn the_code_map_names_every_top_level_module() {
    let map = code_map();
    let missing: BTreeSet<String> = modules()
        .iter()
        .filter_map(|module| module.path.first())
        .filter(|top| !map.contains_key(*top))
        .cloned()
        .collect();
    assert!(missing.is_empty(), "ARCHITECTURE.md's code map leaves out: {missing:?}");
}
