//! The call-graph suite: `synclint graph --output-format json` against the calls each case of
//! `bench/callgraph/<category>/<case>/` really makes when it runs (its `callgraph.json`,
//! recorded by `bench/callgraph/record.py`). Scored edge by edge over the whole suite, as
//! PyCG's evaluation scores its micro-benchmark: recall is the share of real calls the graph
//! has, precision the share of its edges that are real calls. A case's functions that never ran
//! are no keys of its expected graph, and what the graph says they call is not scored (a static
//! graph rightly has their calls; the run recorded none). The floors below are the scores last
//! measured; a change that lowers either fails here.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

use common::{repo, run, stderr};

/// The lowest recall and precision (in percent) the suite accepts: the last measured, rounded
/// down to a tenth.
const RECALL_FLOOR: f64 = 81.3;
const PRECISION_FLOOR: f64 = 89.5;

type Edges = BTreeSet<(String, String)>;

fn edges_of(graph: &serde_json::Value) -> Edges {
    let mut edges = Edges::new();
    for (caller, callees) in graph.as_object().expect("a graph is an object") {
        for callee in callees.as_array().expect("callees are a list") {
            edges.insert((caller.clone(), callee.as_str().expect("a callee is a name").to_string()));
        }
    }
    edges
}

/// Edge counts of one case or category: real calls, edges reported, and those both hold.
#[derive(Default, Clone, Copy)]
struct Score {
    expected: usize,
    reported: usize,
    found: usize,
}

impl Score {
    fn add(&mut self, other: Score) {
        self.expected += other.expected;
        self.reported += other.reported;
        self.found += other.found;
    }

    fn recall(self) -> f64 {
        percent(self.found, self.expected)
    }

    fn precision(self) -> f64 {
        percent(self.found, self.reported)
    }
}

fn percent(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        100.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

fn score_case(case: &Path, misses: &mut Vec<String>) -> Score {
    let expected: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(case.join("callgraph.json")).unwrap()).unwrap();
    let ran: BTreeSet<String> = expected
        .as_object()
        .expect("a graph is an object")
        .keys()
        .cloned()
        .collect();
    let expected = edges_of(&expected);
    let output = run(
        case,
        &["graph", "--isolated", "--no-cache", "--output-format", "json", "."],
    );
    assert!(output.status.success(), "{}: {}", case.display(), stderr(&output));
    let reported: Edges = edges_of(&serde_json::from_slice(&output.stdout).unwrap())
        .into_iter()
        .filter(|(caller, _)| ran.contains(caller))
        .collect();
    let name = case
        .strip_prefix(repo().join("bench/callgraph"))
        .unwrap()
        .display()
        .to_string();
    for (caller, callee) in expected.difference(&reported) {
        misses.push(format!("{name}: missed {caller} -> {callee}"));
    }
    for (caller, callee) in reported.difference(&expected) {
        misses.push(format!("{name}: extra  {caller} -> {callee}"));
    }
    Score {
        expected: expected.len(),
        reported: reported.len(),
        found: expected.intersection(&reported).count(),
    }
}

#[test]
fn call_graph_suite() {
    let suite = repo().join("bench/callgraph");
    let mut categories: BTreeMap<String, Score> = BTreeMap::new();
    let mut misses = Vec::new();
    let mut cases = 0;
    for category in fs::read_dir(&suite).unwrap() {
        let category = category.unwrap().path();
        if !category.is_dir() {
            continue;
        }
        let name = category.file_name().unwrap().to_string_lossy().into_owned();
        let mut case_paths: Vec<_> = fs::read_dir(&category)
            .unwrap()
            .map(|case| case.unwrap().path())
            .collect();
        case_paths.sort();
        for case in case_paths.iter().filter(|case| case.join("callgraph.json").is_file()) {
            cases += 1;
            let score = score_case(case, &mut misses);
            categories.entry(name.clone()).or_default().add(score);
        }
    }
    assert!(cases > 0, "no cases under {}", suite.display());
    let mut total = Score::default();
    let mut table = String::from("category        edges  recall  precision\n");
    for (name, score) in &categories {
        total.add(*score);
        table.push_str(&format!(
            "{name:<15} {:>5}  {:>5.1}%  {:>8.1}%\n",
            score.expected,
            score.recall(),
            score.precision()
        ));
    }
    table.push_str(&format!(
        "{:<15} {:>5}  {:>5.1}%  {:>8.1}%   ({cases} cases)\n",
        "all",
        total.expected,
        total.recall(),
        total.precision()
    ));
    println!("{table}");
    println!("{}", misses.join("\n"));
    assert!(
        total.recall() >= RECALL_FLOOR && total.precision() >= PRECISION_FLOOR,
        "below the floors ({RECALL_FLOOR}% recall, {PRECISION_FLOOR}% precision):\n{table}\n{}",
        misses.join("\n")
    );
}
