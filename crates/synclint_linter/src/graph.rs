//! `synclint graph`: the project's call graph as the linter sees it. The default text is the
//! hot call tree (what runs every step, and why); `json` is PyCG's simple format (an adjacency
//! list keyed by dotted names); `dot` draws it with Graphviz, hot functions in red.

use std::collections::BTreeMap;
use std::io::{self, Write};

use rustc_hash::{FxHashMap, FxHashSet};

use crate::project::hotness::HotFunctions;
use crate::project::modules::ModuleInfo;
use crate::project::{Project, ProjectFunction};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum GraphFormat {
    /// The hot call tree.
    Text,
    /// PyCG's simple JSON: `{"pkg.model.Net.forward": ["pkg.heads.Head.loss"], ...}`.
    Json,
    /// Graphviz.
    Dot,
}

type Node = ProjectFunction;

pub fn render(
    out: &mut dyn Write,
    format: GraphFormat,
    modules: &[ModuleInfo],
    project: &Project,
    hot: &HotFunctions,
) -> io::Result<()> {
    match format {
        GraphFormat::Text => hot_tree(out, modules, project, hot),
        GraphFormat::Json => {
            serde_json::to_writer_pretty(&mut *out, &project.call_graph())?;
            writeln!(out)
        }
        GraphFormat::Dot => dot(out, project, hot),
    }
}

/// The deepest level of the hot tree shown by its indent.
const MAX_INDENT: usize = 32;

/// Each chain's start (a loop, a function hot by itself), then the functions its calls make
/// hot, indented under the function that calls them (deeper than [`MAX_INDENT`] levels, with
/// the level in brackets).
fn hot_tree(out: &mut dyn Write, modules: &[ModuleInfo], project: &Project, hot: &HotFunctions) -> io::Result<()> {
    let reached = hot.reached();
    if reached.is_empty() {
        return writeln!(out, "No project function is called from hot code.");
    }
    let mut roots: BTreeMap<String, Vec<Node>> = BTreeMap::new();
    let mut children: FxHashMap<Node, Vec<Node>> = FxHashMap::default();
    for function in &reached {
        match function.caller {
            Some(caller) => children.entry(caller).or_default().push(function.function),
            None => roots
                .entry(function.heading.clone())
                .or_default()
                .push(function.function),
        }
    }
    let describe = |node: Node| {
        let module = &modules[node.0];
        let function = &module.summary.functions[node.1 as usize];
        format!(
            "{}  ({})",
            project.dotted_name(node),
            module.summary.place(module.display, function.line)
        )
    };
    let mut printed: FxHashSet<Node> = FxHashSet::default();
    for (root, nodes) in &roots {
        writeln!(out, "{root}")?;
        let mut stack: Vec<(Node, usize)> = nodes.iter().rev().map(|&node| (node, 1)).collect();
        while let Some((node, depth)) = stack.pop() {
            // Past a few dozen levels the indent stops growing and the level is spelled out:
            // a chain of 60,000 calls would otherwise print gigabytes of spaces.
            if depth > MAX_INDENT {
                writeln!(out, "{}[{depth}] {}", "  ".repeat(MAX_INDENT), describe(node))?;
            } else {
                writeln!(out, "{}{}", "  ".repeat(depth), describe(node))?;
            }
            if printed.insert(node) {
                for &child in children.get(&node).into_iter().flatten().rev() {
                    stack.push((child, depth + 1));
                }
            }
        }
    }
    writeln!(
        out,
        "\n{} function{} hot through calls",
        reached.len(),
        if reached.len() == 1 { " is" } else { "s are" }
    )
}

fn dot(out: &mut dyn Write, project: &Project, hot: &HotFunctions) -> io::Result<()> {
    let hot_names: FxHashSet<String> = hot
        .reached()
        .into_iter()
        .map(|reached| project.dotted_name(reached.function))
        .collect();
    writeln!(out, "digraph calls {{")?;
    writeln!(out, "  node [shape=box, fontname=\"monospace\"];")?;
    for (caller, callees) in project.call_graph() {
        let color = if hot_names.contains(&caller) { ", color=red" } else { "" };
        writeln!(out, "  {:?} [label={:?}{color}];", caller, caller)?;
        for callee in callees {
            writeln!(out, "  {caller:?} -> {callee:?};")?;
        }
    }
    writeln!(out, "}}")
}
