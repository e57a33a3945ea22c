//! Mutants of real source files, for the fuzz and fix-validity harnesses: each is made from a
//! case number alone (which seed file, which mutations), so that a failure reproduces from the
//! number it prints, and each says in words what was done to which file.

use std::ops::Range;
use std::path::{Path, PathBuf};

use super::repo;

/// The cases a harness runs and the seed files it mutates, from the environment:
/// `SYNCLINT_FUZZ_CASES` (how many), `SYNCLINT_FUZZ_FIRST` (the first case number, so that long
/// runs can cover other cases than CI's), `SYNCLINT_FUZZ_CASE` (exactly one case, to reproduce
/// a failure), `SYNCLINT_FUZZ_SEEDS` (folders of seed files, separated like `PATH`; relative
/// ones from the repository's root). By default `default_cases` cases from 0, and the seeds
/// are `fixtures/` and `examples/`.
pub struct FuzzConfig {
    pub cases: Range<u64>,
    pub seed_folders: Vec<PathBuf>,
}

impl FuzzConfig {
    pub fn from_env(default_cases: u64) -> FuzzConfig {
        let number = |name: &str| {
            std::env::var(name).ok().map(|value| {
                value
                    .trim()
                    .parse::<u64>()
                    .unwrap_or_else(|_| panic!("{name}={value:?}: not a number"))
            })
        };
        let cases = match number("SYNCLINT_FUZZ_CASE") {
            Some(case) => case..case + 1,
            None => {
                let first = number("SYNCLINT_FUZZ_FIRST").unwrap_or(0);
                first..first + number("SYNCLINT_FUZZ_CASES").unwrap_or(default_cases)
            }
        };
        let seed_folders = match std::env::var_os("SYNCLINT_FUZZ_SEEDS") {
            Some(paths) => std::env::split_paths(&paths).map(|path| repo().join(path)).collect(),
            None => vec![repo().join("fixtures"), repo().join("examples")],
        };
        FuzzConfig { cases, seed_folders }
    }

    /// How to run one case again, for a failure's message.
    pub fn reproduce(&self, harness: &str, case: u64) -> String {
        let seeds = std::env::var("SYNCLINT_FUZZ_SEEDS")
            .map(|seeds| format!(" SYNCLINT_FUZZ_SEEDS={seeds}"))
            .unwrap_or_default();
        format!("SYNCLINT_FUZZ_CASE={case}{seeds} cargo test --test {harness}")
    }
}

/// A seed file: where it is (as the repository names it, where it is inside) and its bytes.
pub struct Seed {
    pub name: String,
    pub bytes: Vec<u8>,
    pub notebook: bool,
}

/// Every `.py` and `.ipynb` file under `folders`, in a stable order (sorted by path).
pub fn seeds(folders: &[PathBuf]) -> Vec<Seed> {
    let mut paths = Vec::new();
    for folder in folders {
        collect_sources(folder, &mut paths);
    }
    paths.sort();
    let root = repo();
    paths
        .into_iter()
        .map(|path| Seed {
            name: path.strip_prefix(&root).unwrap_or(&path).display().to_string(),
            bytes: std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
            notebook: path.extension().is_some_and(|ext| ext == "ipynb"),
        })
        .collect()
}

fn collect_sources(folder: &Path, paths: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(folder).unwrap_or_else(|e| panic!("{}: {e}", folder.display()));
    for entry in entries {
        let entry = entry.unwrap_or_else(|e| panic!("{}: {e}", folder.display()));
        let path = entry.path();
        let file_type = entry.file_type().unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        if file_type.is_dir() {
            collect_sources(&path, paths);
        } else if file_type.is_file() && path.extension().is_some_and(|ext| ext == "py" || ext == "ipynb") {
            paths.push(path);
        }
    }
}

/// SplitMix64: small, fast, and the same numbers on every machine.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (0 where `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 { 0 } else { (self.next() % n as u64) as usize }
    }

    /// True `percent` times in a hundred.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// The largest mutant made: a mutation that would grow one past it is skipped.
const MAX_MUTANT_BYTES: usize = 4 << 20;

/// One mutant: from which seed, what was done to it, and the bytes it came to.
pub struct Mutant {
    pub case: u64,
    pub seed: String,
    pub mutations: Vec<String>,
    /// Whether it is a notebook (its file name ends `.ipynb`).
    pub notebook: bool,
    pub bytes: Vec<u8>,
}

impl Mutant {
    /// Case `case` of `seeds`: a seed picked by the case's numbers, one to three mutations of
    /// it; a notebook's code is mutated inside its cells (or its JSON as bytes), and some Python
    /// mutants are written as notebooks.
    pub fn new(seeds: &[Seed], case: u64) -> Mutant {
        let mut rng = Rng::new(case.wrapping_mul(0xA24B_AED4_963E_E407) ^ 0x5EED);
        let seed = &seeds[rng.below(seeds.len())];
        let count = match rng.below(10) {
            0..=4 => 1,
            5..=7 => 2,
            _ => 3,
        };
        let mut mutations = Vec::new();
        let mut bytes = seed.bytes.clone();
        let in_cells = seed.notebook && rng.chance(70);
        for _ in 0..count {
            let described = if in_cells {
                mutate_cells(&mut rng, &mut bytes, seeds)
            } else {
                mutate(&mut rng, &mut bytes, seeds)
            };
            mutations.push(described);
        }
        let notebook = seed.notebook || rng.chance(10);
        if notebook && !seed.notebook {
            bytes = as_notebook(&mut rng, &bytes);
            mutations.push("written as a notebook".to_string());
        }
        Mutant {
            case,
            seed: seed.name.clone(),
            mutations,
            notebook,
            bytes,
        }
    }

    /// The mutant's file name: its case number, and the seed's kind.
    pub fn file_name(&self) -> String {
        format!("case{}.{}", self.case, if self.notebook { "ipynb" } else { "py" })
    }

    pub fn describe(&self) -> String {
        format!("case {} ({}): {}", self.case, self.seed, self.mutations.join("; "))
    }
}

/// Writes a failing mutant where it can be looked at, with what was done to it and why it
/// failed, under the test target's folder; returns where.
pub fn keep_failure(harness: &str, mutant: &Mutant, why: &str, reproduce: &str) -> PathBuf {
    let folder = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("fuzz-failures")
        .join(harness);
    std::fs::create_dir_all(&folder).expect("a folder for failures");
    let path = folder.join(mutant.file_name());
    std::fs::write(&path, &mutant.bytes).expect("write the failing mutant");
    let report = format!("{}\n{why}\nreproduce: {reproduce}\n", mutant.describe());
    std::fs::write(path.with_extension("txt"), report).expect("write why the mutant failed");
    path
}

/// Mutates a notebook's code inside one of its cells: the JSON stays a notebook. Where it does
/// not read as one (an earlier mutation broke it), its bytes are mutated instead.
fn mutate_cells(rng: &mut Rng, bytes: &mut Vec<u8>, seeds: &[Seed]) -> String {
    let Ok(mut notebook) = serde_json::from_slice::<serde_json::Value>(bytes) else {
        return mutate(rng, bytes, seeds);
    };
    let Some(cells) = notebook["cells"].as_array_mut() else {
        return mutate(rng, bytes, seeds);
    };
    let code_cells: Vec<usize> = (0..cells.len())
        .filter(|&index| cells[index]["cell_type"] == "code")
        .collect();
    if code_cells.is_empty() {
        return mutate(rng, bytes, seeds);
    }
    let index = *rng.pick(&code_cells);
    let source = match &cells[index]["source"] {
        serde_json::Value::String(text) => text.clone(),
        serde_json::Value::Array(lines) => lines.iter().filter_map(|line| line.as_str()).collect(),
        _ => String::new(),
    };
    let mut code = source.into_bytes();
    let described = mutate(rng, &mut code, seeds);
    let code = String::from_utf8_lossy(&code).into_owned();
    cells[index]["source"] = serde_json::Value::Array(
        code.split_inclusive('\n')
            .map(|line| serde_json::Value::String(line.to_string()))
            .collect(),
    );
    *bytes = serde_json::to_vec_pretty(&notebook).expect("a notebook serializes");
    format!("in cell {}: {described}", index + 1)
}

/// IPython's escapes, some of which start a notebook's cell.
const MAGICS: [&str; 3] = ["%matplotlib inline\n", "!pip install torch\n", "%%time\n"];

/// A Python source as a notebook: a markdown cell, then its code in cells split where two
/// blank lines part top-level code; some cells start with a magic.
fn as_notebook(rng: &mut Rng, bytes: &[u8]) -> Vec<u8> {
    let code = String::from_utf8_lossy(bytes);
    let mut cells = vec![serde_json::json!({
        "cell_type": "markdown",
        "metadata": {},
        "source": ["# A notebook\n"],
    })];
    for part in code.split("\n\n\n") {
        let mut text = part.to_string();
        if rng.chance(10) {
            let magic = *rng.pick(&MAGICS);
            text.insert_str(0, magic);
        }
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        cells.push(serde_json::json!({
            "cell_type": "code",
            "execution_count": null,
            "metadata": {},
            "outputs": [],
            "source": lines,
        }));
    }
    let notebook = serde_json::json!({
        "cells": cells,
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    });
    serde_json::to_vec_pretty(&notebook).expect("a notebook serializes")
}

/// Bytes that break or stretch source: brackets, quotes, line ends, NUL, a BOM mid-file,
/// invalid or unusual UTF-8, and tokens that open a block or a string.
const TOKENS: &[&[u8]] = &[
    b"(",
    b")",
    b"[",
    b"]",
    b"{",
    b"}",
    b"'",
    b"\"",
    b"\"\"\"",
    b"'''",
    b"\\",
    b":",
    b"#",
    b"\n",
    b"\r",
    b"\r\n",
    b"\t",
    b"\0",
    b"\x0c",
    b"\x1a",
    b"\xff",
    b"\xc3",
    b"\xe2\x82",
    b"\xef\xbb\xbf",
    b"\xc3\xa9",
    b"\xf0\x9f\x94\xa5",
    b"\xe2\x80\xa8",
    b"\xcc\x81",
    b" ",
    b"    ",
    b";",
    b",",
    b".",
    b"@",
    b"=",
    b"lambda",
    b"f\"{",
    b"}\"",
    b"if ",
    b"else",
    b"for x in ",
    b"async ",
    b"await ",
    b"yield",
    b".item()",
    b".cuda()",
    b"torch.",
    b"# noqa",
    b"# noqa: SYNC101",
    b"# type: ignore",
    b"%",
    b"!",
];

/// Mutates `bytes` once, by a mutation picked at random; returns what it did.
fn mutate(rng: &mut Rng, bytes: &mut Vec<u8>, seeds: &[Seed]) -> String {
    let before = bytes.clone();
    let described = match rng.below(22) {
        0 | 1 => flip_bit(rng, bytes),
        2..=4 => insert_token(rng, bytes),
        5 => delete_range(rng, bytes),
        6 => duplicate_range(rng, bytes),
        7 => move_range(rng, bytes),
        8 => insert_nuls(rng, bytes),
        9 => {
            bytes.splice(0..0, *b"\xef\xbb\xbf");
            "a byte-order mark first".to_string()
        }
        10 => line_ends(rng, bytes),
        11 => tabs(rng, bytes),
        12 => line_edit(rng, bytes),
        13 => reindent(rng, bytes),
        14 => truncate(rng, bytes),
        15 => splice_line(rng, bytes, seeds),
        16 => wrap_in_brackets(rng, bytes),
        17 => repeat_chain(rng, bytes),
        18 => nest_block(rng, bytes),
        19 => long_line(rng, bytes),
        20 => repeat_lines(rng, bytes),
        _ => flip_bit(rng, bytes),
    };
    if bytes.len() > MAX_MUTANT_BYTES {
        *bytes = before;
        return format!("({described}: skipped, past {MAX_MUTANT_BYTES} bytes)");
    }
    described
}

/// The byte ranges of the lines of `bytes`, each with its `\n`.
fn lines(bytes: &[u8]) -> Vec<Range<usize>> {
    let mut ranges = Vec::new();
    let mut start = 0;
    for (index, byte) in bytes.iter().enumerate() {
        if *byte == b'\n' {
            ranges.push(start..index + 1);
            start = index + 1;
        }
    }
    if start < bytes.len() {
        ranges.push(start..bytes.len());
    }
    ranges
}

/// A line's content without its line end.
fn content(bytes: &[u8], line: &Range<usize>) -> Range<usize> {
    let mut end = line.end;
    while end > line.start && matches!(bytes[end - 1], b'\n' | b'\r') {
        end -= 1;
    }
    line.start..end
}

fn indentation(bytes: &[u8], line: &Range<usize>) -> Vec<u8> {
    bytes[line.clone()]
        .iter()
        .take_while(|b| matches!(b, b' ' | b'\t'))
        .copied()
        .collect()
}

/// A random line, preferring ones that hold code (not blank).
fn some_line(rng: &mut Rng, bytes: &[u8]) -> Option<Range<usize>> {
    let all = lines(bytes);
    let code: Vec<&Range<usize>> = all
        .iter()
        .filter(|line| bytes[content(bytes, line)].iter().any(|b| !b.is_ascii_whitespace()))
        .collect();
    if code.is_empty() {
        return all.first().cloned();
    }
    Some((*rng.pick(&code)).clone())
}

/// A length for a range, mostly short.
fn span(rng: &mut Rng, available: usize) -> usize {
    let limit = if rng.chance(80) { 16 } else { 2_000 };
    1 + rng.below(limit.min(available.max(1)))
}

fn flip_bit(rng: &mut Rng, bytes: &mut [u8]) -> String {
    if bytes.is_empty() {
        return "nothing to flip".to_string();
    }
    let (at, bit) = (rng.below(bytes.len()), rng.below(8));
    bytes[at] ^= 1 << bit;
    format!("flip bit {bit} of byte {at}")
}

fn insert_token(rng: &mut Rng, bytes: &mut Vec<u8>) -> String {
    let token = *rng.pick(TOKENS);
    let times = if rng.chance(80) { 1 } else { 1 + rng.below(64) };
    let at = rng.below(bytes.len() + 1);
    bytes.splice(at..at, token.repeat(times));
    format!("insert {:?} x{times} at byte {at}", String::from_utf8_lossy(token))
}

fn delete_range(rng: &mut Rng, bytes: &mut Vec<u8>) -> String {
    let at = rng.below(bytes.len());
    let len = span(rng, bytes.len() - at);
    bytes.drain(at..(at + len).min(bytes.len()));
    format!("delete {len} bytes at {at}")
}

fn duplicate_range(rng: &mut Rng, bytes: &mut Vec<u8>) -> String {
    let at = rng.below(bytes.len());
    let end = (at + span(rng, bytes.len() - at)).min(bytes.len());
    let copy = bytes[at..end].to_vec();
    bytes.splice(end..end, copy);
    format!("duplicate bytes {at}..{end}")
}

fn move_range(rng: &mut Rng, bytes: &mut Vec<u8>) -> String {
    let at = rng.below(bytes.len());
    let end = (at + span(rng, bytes.len() - at)).min(bytes.len());
    let taken: Vec<u8> = bytes.drain(at..end).collect();
    let to = rng.below(bytes.len() + 1);
    bytes.splice(to..to, taken);
    format!("move bytes {at}..{end} to {to}")
}

fn insert_nuls(rng: &mut Rng, bytes: &mut Vec<u8>) -> String {
    let at = rng.below(bytes.len() + 1);
    let count = 1 + rng.below(8);
    bytes.splice(at..at, std::iter::repeat_n(0, count));
    format!("insert {count} NULs at byte {at}")
}

fn line_ends(rng: &mut Rng, bytes: &mut Vec<u8>) -> String {
    let style = *rng.pick(&["CRLF", "CR", "mixed CRLF"]);
    let mut out = Vec::with_capacity(bytes.len() + bytes.len() / 16);
    for &byte in bytes.iter() {
        match (byte, style) {
            (b'\n', "CRLF") => out.extend_from_slice(b"\r\n"),
            (b'\n', "CR") => out.push(b'\r'),
            (b'\n', _) if rng.chance(50) => out.extend_from_slice(b"\r\n"),
            _ => out.push(byte),
        }
    }
    *bytes = out;
    format!("{style} line ends")
}

fn tabs(rng: &mut Rng, bytes: &mut Vec<u8>) -> String {
    let every_line = rng.chance(50);
    let mut out = Vec::with_capacity(bytes.len());
    for line in lines(bytes) {
        let text = &bytes[line];
        let spaces = text.iter().take_while(|b| **b == b' ').count();
        if every_line || rng.chance(30) {
            out.extend(std::iter::repeat_n(b'\t', spaces / 4));
            out.extend(std::iter::repeat_n(b' ', spaces % 4));
            out.extend_from_slice(&text[spaces..]);
        } else {
            out.extend_from_slice(text);
        }
    }
    *bytes = out;
    format!(
        "tabs for each 4 spaces of indentation, on {} lines",
        if every_line { "all" } else { "some" }
    )
}

fn line_edit(rng: &mut Rng, bytes: &mut Vec<u8>) -> String {
    let all = lines(bytes);
    if all.is_empty() {
        return "no line to edit".to_string();
    }
    let (a, b) = (rng.below(all.len()), rng.below(all.len()));
    match rng.below(3) {
        0 => {
            bytes.drain(all[a].clone());
            format!("delete line {}", a + 1)
        }
        1 => {
            let copy = bytes[all[a].clone()].to_vec();
            bytes.splice(all[a].end..all[a].end, copy);
            format!("duplicate line {}", a + 1)
        }
        _ => {
            let (first, second) = (all[a.min(b)].clone(), all[a.max(b)].clone());
            if first == second {
                return format!("swap line {} with itself", a + 1);
            }
            let mut out = bytes[..first.start].to_vec();
            out.extend_from_slice(&bytes[second.clone()]);
            out.extend_from_slice(&bytes[first.end..second.start]);
            out.extend_from_slice(&bytes[first.clone()]);
            out.extend_from_slice(&bytes[second.end..]);
            *bytes = out;
            format!("swap lines {} and {}", a.min(b) + 1, a.max(b) + 1)
        }
    }
}

fn reindent(rng: &mut Rng, bytes: &mut Vec<u8>) -> String {
    let Some(line) = some_line(rng, bytes) else {
        return "no line to re-indent".to_string();
    };
    let indent = indentation(bytes, &line).len();
    let row = lines(bytes).iter().position(|l| *l == line).unwrap_or(0) + 1;
    match rng.below(3) {
        0 => {
            let added = *rng.pick(&[1, 2, 4, 8]);
            bytes.splice(line.start..line.start, std::iter::repeat_n(b' ', added));
            format!("indent line {row} by {added} more")
        }
        1 if indent > 0 => {
            let removed = 1 + rng.below(indent);
            bytes.drain(line.start..line.start + removed);
            format!("dedent line {row} by {removed}")
        }
        _ => {
            bytes.drain(line.start..line.start + indent);
            format!("dedent line {row} to column 1")
        }
    }
}

fn truncate(rng: &mut Rng, bytes: &mut Vec<u8>) -> String {
    let Some(line) = some_line(rng, bytes) else {
        return "nothing to truncate".to_string();
    };
    let text = content(bytes, &line);
    let at = text.start + rng.below(text.len() + 1);
    bytes.truncate(at);
    format!("cut off at byte {at}, mid-line")
}

fn splice_line(rng: &mut Rng, bytes: &mut Vec<u8>, seeds: &[Seed]) -> String {
    let donor = rng.pick(seeds);
    let Some(from) = some_line(rng, &donor.bytes) else {
        return "no line to splice".to_string();
    };
    let spliced = &donor.bytes[content(&donor.bytes, &from)];
    let spliced: Vec<u8> = spliced
        .iter()
        .skip_while(|b| matches!(b, b' ' | b'\t'))
        .copied()
        .collect();
    let (at, indent) = match some_line(rng, bytes) {
        Some(line) => (line.start, indentation(bytes, &line)),
        None => (0, Vec::new()),
    };
    let mut inserted = indent;
    inserted.extend_from_slice(&spliced);
    inserted.push(b'\n');
    bytes.splice(at..at, inserted);
    format!("splice a line of {} at byte {at}", donor.name)
}

/// The value of an assignment or `return` on a line: where it starts and ends.
fn value_on(bytes: &[u8], line: &Range<usize>) -> Option<Range<usize>> {
    let text = content(bytes, line);
    let code = &bytes[text.clone()];
    let start = code
        .windows(3)
        .position(|w| w == b" = ")
        .map(|at| at + 3)
        .or_else(|| code.windows(7).position(|w| w == b"return ").map(|at| at + 7))?;
    Some(text.start + start..text.end)
}

/// A depth for nesting: mostly small, sometimes about synclint's limit (10,000 levels).
fn depth(rng: &mut Rng) -> usize {
    *rng.pick(&[1, 2, 3, 10, 50, 200, 1_000, 3_000, 9_990, 10_010])
}

fn wrap_in_brackets(rng: &mut Rng, bytes: &mut Vec<u8>) -> String {
    let Some(line) = some_line(rng, bytes) else {
        return "no line to wrap".to_string();
    };
    let Some(value) = value_on(bytes, &line) else {
        return "no value to wrap".to_string();
    };
    let (open, close) = *rng.pick(&[
        ("(", ")"),
        ("[", "]"),
        ("f(", ")"),
        ("{", "}"),
        ("-(", ")"),
        ("not (", ")"),
    ]);
    let depth = depth(rng);
    bytes.splice(value.end..value.end, close.repeat(depth).into_bytes());
    bytes.splice(value.start..value.start, open.repeat(depth).into_bytes());
    format!("wrap the value at byte {} in {depth} `{open}`", value.start)
}

fn repeat_chain(rng: &mut Rng, bytes: &mut Vec<u8>) -> String {
    let Some(line) = some_line(rng, bytes) else {
        return "no line for a chain".to_string();
    };
    let text = content(bytes, &line);
    let code = &bytes[text.clone()];
    // `.name` or `.name()` after a name or a closing bracket.
    let Some(dot) = (1..code.len())
        .find(|&at| code[at] == b'.' && (code[at - 1].is_ascii_alphanumeric() || matches!(code[at - 1], b')' | b']')))
    else {
        return "no attribute to repeat".to_string();
    };
    let mut end = dot + 1;
    while end < code.len() && (code[end].is_ascii_alphanumeric() || code[end] == b'_') {
        end += 1;
    }
    if code[end..].starts_with(b"()") {
        end += 2;
    }
    let link = code[dot..end].to_vec();
    let times = depth(rng);
    let at = text.start + end;
    bytes.splice(at..at, link.repeat(times));
    format!("repeat `{}` {times} times at byte {at}", String::from_utf8_lossy(&link))
}

fn nest_block(rng: &mut Rng, bytes: &mut Vec<u8>) -> String {
    let all = lines(bytes);
    let Some(line) = some_line(rng, bytes) else {
        return "no block to nest".to_string();
    };
    let first = all.iter().position(|l| *l == line).unwrap_or(0);
    let last = (first + rng.below(5)).min(all.len() - 1);
    let indent = indentation(bytes, &line);
    let header = *rng.pick(&[
        "if x:",
        "for _ in y:",
        "while t:",
        "with m:",
        "def f():",
        "class C:",
        "async def g():",
    ]);
    let units: [&[u8]; 3] = [b" ", b"    ", b"\t"];
    let unit = *rng.pick(&units);
    let depth = *rng.pick(&[1, 2, 5, 20, 99, 101, 500, 1_000]);
    let mut block = Vec::new();
    for level in 0..depth {
        block.extend_from_slice(&indent);
        block.extend(unit.repeat(level));
        block.extend_from_slice(header.as_bytes());
        block.push(b'\n');
    }
    for nested in &all[first..=last] {
        block.extend(unit.repeat(depth));
        block.extend_from_slice(&bytes[nested.clone()]);
    }
    if !block.ends_with(b"\n") {
        block.push(b'\n');
    }
    bytes.splice(all[first].start..all[last].end, block);
    format!(
        "nest lines {}..={} in {depth} `{header}` blocks indented by {:?}",
        first + 1,
        last + 1,
        String::from_utf8_lossy(unit)
    )
}

fn long_line(rng: &mut Rng, bytes: &mut Vec<u8>) -> String {
    let Some(line) = some_line(rng, bytes) else {
        return "no line to lengthen".to_string();
    };
    let text = content(bytes, &line);
    let times = *rng.pick(&[100, 2_000, 20_000]);
    match rng.below(3) {
        0 => {
            // The statement again and again on its line: `a; a; a; ...`. Fewer times: each
            // copy of a broken statement is a syntax error more, each shown with its line.
            let times = times / 10;
            let indent = indentation(bytes, &line).len();
            let statement = bytes[text.start + indent..text.end].to_vec();
            let mut repeated = Vec::new();
            for _ in 0..times {
                repeated.extend_from_slice(b"; ");
                repeated.extend_from_slice(&statement);
            }
            bytes.splice(text.end..text.end, repeated);
            format!("repeat the statement at byte {} {times} times on its line", line.start)
        }
        1 => {
            let term = *rng.pick(&[" + x.item()", " + 1", " and y", ", z"]);
            bytes.splice(text.end..text.end, term.repeat(times).into_bytes());
            format!("append `{term}` {times} times at byte {}", text.end)
        }
        _ => {
            let tail = format!("  # {}", "é".repeat(times * 10));
            bytes.splice(text.end..text.end, tail.into_bytes());
            format!("a comment of {} characters at byte {}", times * 10, text.end)
        }
    }
}

fn repeat_lines(rng: &mut Rng, bytes: &mut Vec<u8>) -> String {
    let all = lines(bytes);
    if all.is_empty() {
        return "no lines to repeat".to_string();
    }
    let first = rng.below(all.len());
    let last = (first + rng.below(10)).min(all.len() - 1);
    let block = bytes[all[first].start..all[last].end].to_vec();
    let times = *rng.pick(&[2, 10, 100, 1_000]);
    bytes.splice(all[last].end..all[last].end, block.repeat(times));
    format!("repeat lines {}..={} {times} times", first + 1, last + 1)
}
