//! Jupyter notebooks: the code cells of an `.ipynb` file joined into one Python source (as Ruff
//! lints them: a loop in one cell calling a function defined in an earlier one is one module's
//! code), where each offset of that source falls in the notebook's cells, and the notebook's JSON
//! with changed code written back into only the source lines that changed.
//!
//! Where each cell's `source` lies in the JSON is read from the text itself (serde_json's raw
//! values borrow it), so that writing a fix back replaces those bytes alone: outputs, metadata,
//! indentation, key order and the final newline stay as they were.

use std::ops::Range;
use std::sync::Arc;

use ruff_text_size::TextSize;
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::parse::SourceKind;

/// IPython cell magics whose body is Python, run as it is (timed, profiled, captured): their
/// cells are linted, the magic line itself an escape command. A cell under any other cell magic
/// (`%%bash`, `%%writefile`, `%%html`) is not Python and is skipped.
const PYTHON_CELL_MAGICS: &[&str] = &[
    "capture", "debug", "prun", "pypy", "python", "python3", "time", "timeit",
];

/// A notebook's JSON and where its code cells are, in it and in the joined source.
#[derive(Debug, Clone)]
pub struct Notebook {
    json: String,
    cells: Vec<CodeCell>,
}

/// A code cell that is linted.
#[derive(Debug, Clone)]
struct CodeCell {
    /// 1-based among all the notebook's cells (markdown and raw ones too), as Jupyter and Ruff
    /// number them.
    number: u32,
    /// Where its code starts in the joined source.
    start: TextSize,
    source: SourceValue,
    /// The joined source ends the cell with a line break it does not have: every cell's code
    /// ends a line, so the next cell starts on a line of its own.
    added_newline: bool,
}

/// Where a cell's `source` value lies in the JSON: a list of lines (as Jupyter writes it) or
/// one string (as nbformat also allows).
#[derive(Debug, Clone)]
enum SourceValue {
    Lines {
        value: Range<usize>,
        lines: Vec<Range<usize>>,
    },
    Text {
        value: Range<usize>,
    },
}

impl SourceValue {
    fn value(&self) -> &Range<usize> {
        match self {
            SourceValue::Lines { value, .. } | SourceValue::Text { value } => value,
        }
    }
}

/// Why a file could not be read as a notebook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotebookError(String);

impl std::fmt::Display for NotebookError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "not a valid Jupyter notebook: {}", self.0)
    }
}

#[derive(Deserialize)]
struct RawNotebook<'a> {
    #[serde(borrow)]
    cells: Vec<&'a RawValue>,
}

#[derive(Deserialize)]
struct RawCell<'a> {
    cell_type: String,
    #[serde(borrow)]
    source: Option<&'a RawValue>,
}

/// Where `part`, a slice of `whole`, starts in it.
fn offset_in(whole: &str, part: &str) -> usize {
    part.as_ptr() as usize - whole.as_ptr() as usize
}

fn span(whole: &str, raw: &RawValue) -> Range<usize> {
    let start = offset_in(whole, raw.get());
    start..start + raw.get().len()
}

/// What is wrong in a cell, located by the line the cell starts on in the file (serde's own
/// line and column count in the cell's text, not the file's).
fn cell_error(json: &str, cell: &RawValue, number: u32, error: serde_json::Error) -> NotebookError {
    let line = json[..offset_in(json, cell.get())].matches('\n').count() + 1;
    let message = error.to_string();
    let message = message.rfind(" at line ").map_or(message.as_str(), |at| &message[..at]);
    NotebookError(format!("cell {number} (from line {line}): {message}"))
}

fn json_error(error: serde_json::Error) -> NotebookError {
    NotebookError(format!("{error}"))
}

/// A file's text as it is linted: Python as it is; a notebook's code cells joined, with the
/// notebook.
pub fn code_of(kind: SourceKind, text: String) -> Result<(String, Option<Arc<Notebook>>), NotebookError> {
    match kind {
        SourceKind::Python => Ok((text, None)),
        SourceKind::Notebook => {
            let (notebook, code) = Notebook::parse(text)?;
            Ok((code, Some(Arc::new(notebook))))
        }
    }
}

impl Notebook {
    /// Reads a notebook's JSON; returns it with its code cells joined into one source.
    pub fn parse(json: String) -> Result<(Notebook, String), NotebookError> {
        // A byte-order mark is no JSON: read past it, and keep it.
        let body_start = if json.starts_with('\u{feff}') {
            '\u{feff}'.len_utf8()
        } else {
            0
        };
        let body = &json[body_start..];
        let notebook: RawNotebook = serde_json::from_str(body).map_err(|error| {
            if error.is_data() && !body.contains("\"cells\"") {
                NotebookError("no `cells` list (only nbformat 4 notebooks are read)".into())
            } else {
                json_error(error)
            }
        })?;
        let mut code = String::new();
        let mut cells = Vec::new();
        for (index, raw) in notebook.cells.iter().enumerate() {
            let number = index as u32 + 1;
            let cell: RawCell = serde_json::from_str(raw.get()).map_err(|e| cell_error(&json, raw, number, e))?;
            if cell.cell_type != "code" {
                continue;
            }
            let Some(source) = cell.source else { continue };
            let (text, source) = read_source(&json, source).map_err(|e| cell_error(&json, raw, number, e))?;
            if !is_python(&text) {
                continue;
            }
            let start = TextSize::try_from(code.len()).map_err(|_| NotebookError("too large".into()))?;
            code.push_str(&text);
            let added_newline = !text.is_empty() && !text.ends_with(['\n', '\r']);
            if added_newline {
                code.push('\n');
            }
            cells.push(CodeCell {
                number,
                start,
                source,
                added_newline,
            });
        }
        Ok((Notebook { json, cells }, code))
    }

    /// The notebook's JSON text.
    pub fn json(&self) -> &str {
        &self.json
    }

    /// Where each linted cell's code starts in the joined source: no fix may cross one.
    pub fn cell_starts(&self) -> Vec<TextSize> {
        self.cells.iter().map(|cell| cell.start).collect()
    }

    /// The cell `offset` of the joined source falls in, and where that cell starts; `None` in a
    /// notebook with no code.
    pub fn cell_at(&self, offset: TextSize) -> Option<(u32, TextSize)> {
        let cell = &self.cells[self.cell_index(offset)?];
        Some((cell.number, cell.start))
    }

    /// The cell `offset` of `code` (this notebook's joined source) falls in: its number, where
    /// it starts, and its code.
    pub fn cell_code_at<'c>(&self, code: &'c str, offset: TextSize) -> Option<(u32, TextSize, &'c str)> {
        let index = self.cell_index(offset)?;
        let cell = &self.cells[index];
        let text = cell_text(code, &self.cell_starts(), index, cell.added_newline)?;
        Some((cell.number, cell.start, text))
    }

    fn cell_index(&self, offset: TextSize) -> Option<usize> {
        self.cells.partition_point(|cell| cell.start <= offset).checked_sub(1)
    }

    /// Each linted cell's first row and number, in a joined source of this notebook's cells
    /// that start at `starts` (see [`crate::semantic::FileSummary::cell_rows`]).
    pub fn cell_rows(&self, code: &str, starts: &[TextSize]) -> Box<[(u32, u32)]> {
        let lines = crate::lines::Lines::new(code);
        self.cells
            .iter()
            .zip(starts)
            .map(|(cell, &start)| (lines.row(start) as u32, cell.number))
            .collect()
    }

    /// Each linted cell's number and code, in a joined source of this notebook's cells.
    pub fn cell_texts<'c>(&self, code: &'c str) -> impl Iterator<Item = (u32, &'c str)> {
        let starts = self.cell_starts();
        self.cells
            .iter()
            .enumerate()
            .filter_map(move |(index, cell)| Some((cell.number, cell_text(code, &starts, index, cell.added_newline)?)))
    }

    /// The notebook with its joined source changed from `before` to `after`, where `starts` are
    /// where the cells start in `after`: each changed cell's source written in place of its old
    /// one, every other byte of the JSON ([`Notebook::json`]) kept. The result is read back and must join to `after` exactly;
    /// `None` where it would not, or where a change would move a cell magic off its cell's
    /// first line.
    pub fn with_code(&self, before: &str, after: &str, starts: &[TextSize]) -> Option<Notebook> {
        if starts.len() != self.cells.len() {
            return None;
        }
        let mut json = String::with_capacity(self.json.len() + after.len() - before.len().min(after.len()));
        let old_starts = self.cell_starts();
        let mut copied = 0;
        for (index, cell) in self.cells.iter().enumerate() {
            let old = cell_text(before, &old_starts, index, cell.added_newline)?;
            let new = cell_text(after, starts, index, cell.added_newline)?;
            if old == new {
                continue;
            }
            // A cell magic works only on its cell's first line (an import added above `%%time`
            // would break the cell).
            if old.starts_with("%%") && !new.starts_with(old.split_inclusive('\n').next().unwrap_or(old)) {
                return None;
            }
            let value = cell.source.value();
            json.push_str(&self.json[copied..value.start]);
            json.push_str(&self.source_json(&cell.source, old, new));
            copied = value.end;
        }
        json.push_str(&self.json[copied..]);
        let (notebook, code) = Notebook::parse(json).ok()?;
        (code == after).then_some(notebook)
    }

    /// A cell's `source` value written anew: in a list of lines, the lines that did not change
    /// keep their JSON text and the list keeps its layout.
    fn source_json(&self, source: &SourceValue, old: &str, new: &str) -> String {
        let SourceValue::Lines { value, lines } = source else {
            return encode(new);
        };
        let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
        let new_lines: Vec<&str> = new.split_inclusive('\n').collect();
        if new_lines.is_empty() {
            return "[]".to_string();
        }
        let (prefix, separator, suffix) = self.list_layout(value, lines);
        let mut elements: Vec<String> = Vec::with_capacity(new_lines.len());
        // The JSON of old lines is reused only where the list's elements are the lines as split
        // here; a list split elsewhere (nbformat allows any split) is written anew.
        let reusable = lines.len() == old_lines.len();
        for op in similar::capture_diff_slices(similar::Algorithm::Myers, &old_lines, &new_lines) {
            match op {
                similar::DiffOp::Equal {
                    old_index,
                    new_index,
                    len,
                } => {
                    for k in 0..len {
                        elements.push(match reusable {
                            true => self.json[lines[old_index + k].clone()].to_string(),
                            false => encode(new_lines[new_index + k]),
                        });
                    }
                }
                similar::DiffOp::Delete { .. } => {}
                similar::DiffOp::Insert { new_index, new_len, .. }
                | similar::DiffOp::Replace { new_index, new_len, .. } => {
                    elements.extend(
                        new_lines[new_index..new_index + new_len]
                            .iter()
                            .map(|line| encode(line)),
                    );
                }
            }
        }
        format!("[{prefix}{}{suffix}]", elements.join(&separator))
    }

    /// How a list of lines is laid out: the text before its first element, between two, and
    /// after its last. A list that was empty takes the indentation of the line it starts on plus
    /// the file's indent unit, as Jupyter writes one.
    fn list_layout(&self, value: &Range<usize>, lines: &[Range<usize>]) -> (String, String, String) {
        let json = &self.json;
        match lines {
            [first, .., last] | [first @ last] => {
                let prefix = json[value.start + 1..first.start].to_string();
                let suffix = json[last.end..value.end - 1].to_string();
                let separator = match lines.get(1) {
                    Some(second) => json[first.end..second.start].to_string(),
                    None => format!(",{prefix}"),
                };
                (prefix, separator, suffix)
            }
            [] => {
                let line_start = json[..value.start].rfind('\n').map_or(0, |at| at + 1);
                let indent: String = json[line_start..]
                    .chars()
                    .take_while(|c| *c == ' ' || *c == '\t')
                    .collect();
                let newline = if json[..line_start].ends_with("\r\n") {
                    "\r\n"
                } else {
                    "\n"
                };
                let unit = indent_unit(json);
                let prefix = format!("{newline}{indent}{unit}");
                (prefix.clone(), format!(",{prefix}"), format!("{newline}{indent}"))
            }
        }
    }
}

/// Cell `index`'s code in a joined source whose cells start at `starts`, without the line break
/// the joining added; `None` where `starts` do not fit `code`.
fn cell_text<'s>(code: &'s str, starts: &[TextSize], index: usize, added_newline: bool) -> Option<&'s str> {
    let start = starts.get(index)?.to_usize();
    let end = starts.get(index + 1).map_or(code.len(), |s| s.to_usize());
    let text = code.get(start..end)?;
    Some(match added_newline {
        true => text.strip_suffix('\n').unwrap_or(text),
        false => text,
    })
}

/// The indentation of the file's second line: the unit Jupyter indented it with (one space).
fn indent_unit(json: &str) -> String {
    json.lines()
        .nth(1)
        .map(|line| line.chars().take_while(|c| *c == ' ' || *c == '\t').collect())
        .filter(|unit: &String| !unit.is_empty())
        .unwrap_or_else(|| " ".to_string())
}

/// A string as JSON, non-ASCII characters as they are (as Jupyter writes them).
fn encode(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_default()
}

/// A cell's source text and where it lies in `json`.
fn read_source(json: &str, raw: &RawValue) -> Result<(String, SourceValue), serde_json::Error> {
    let value = span(json, raw);
    if raw.get().starts_with('[') {
        let parts: Vec<&RawValue> = serde_json::from_str(raw.get())?;
        let mut text = String::new();
        let mut lines = Vec::with_capacity(parts.len());
        for part in parts {
            text.push_str(&serde_json::from_str::<String>(part.get())?);
            lines.push(span(json, part));
        }
        Ok((text, SourceValue::Lines { value, lines }))
    } else {
        let text = serde_json::from_str::<String>(raw.get())?;
        Ok((text, SourceValue::Text { value }))
    }
}

/// Whether a cell's code is Python: not under a cell magic that runs another language.
fn is_python(text: &str) -> bool {
    let Some(magic) = text.strip_prefix("%%") else {
        return true;
    };
    let name = magic.split(|c: char| c.is_whitespace()).next().unwrap_or_default();
    PYTHON_CELL_MAGICS.contains(&name)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOTEBOOK: &str = r##"{
 "cells": [
  {
   "cell_type": "markdown",
   "metadata": {},
   "source": [
    "# Training"
   ]
  },
  {
   "cell_type": "code",
   "execution_count": 1,
   "metadata": {},
   "outputs": [],
   "source": [
    "import torch\n",
    "def step(x):\n",
    "    return x.sum()"
   ]
  },
  {
   "cell_type": "code",
   "execution_count": null,
   "metadata": {},
   "outputs": [],
   "source": [
    "%%bash\n",
    "ls"
   ]
  },
  {
   "cell_type": "code",
   "execution_count": 2,
   "metadata": {},
   "outputs": [
    {
     "name": "stdout",
     "output_type": "stream",
     "text": [
      "1.0\n"
     ]
    }
   ],
   "source": "%time y = step(torch.ones(3))\nprint(y.item())"
  }
 ],
 "metadata": {"kernelspec": {"name": "python3"}},
 "nbformat": 4,
 "nbformat_minor": 5
}
"##;

    #[test]
    fn code_cells_are_joined_each_ending_a_line() {
        let (notebook, code) = Notebook::parse(NOTEBOOK.to_string()).unwrap();
        assert_eq!(
            code,
            "import torch\ndef step(x):\n    return x.sum()\n%time y = step(torch.ones(3))\nprint(y.item())\n"
        );
        // The markdown cell and the shell cell are not code; numbers count every cell.
        let print = TextSize::try_from(code.find("print").unwrap()).unwrap();
        assert_eq!(notebook.cell_at(print), Some((4, TextSize::from(45))));
        assert_eq!(notebook.cell_at(TextSize::from(0)), Some((2, TextSize::from(0))));
    }

    #[test]
    fn a_changed_line_replaces_its_json_alone() {
        let (notebook, code) = Notebook::parse(NOTEBOOK.to_string()).unwrap();
        let fixed = code.replace("return x.sum()", "return x.sum(0)");
        let mut starts = notebook.cell_starts();
        starts[1] += TextSize::from(1);
        let json = notebook.with_code(&code, &fixed, &starts).unwrap().json().to_string();
        assert_eq!(json, NOTEBOOK.replace("return x.sum()", "return x.sum(0)"));
    }

    #[test]
    fn lines_added_and_removed_keep_the_list_layout() {
        let (notebook, code) = Notebook::parse(NOTEBOOK.to_string()).unwrap();
        let fixed = code.replace("def step(x):\n", "import math\ndef step(x):\n");
        let mut starts = notebook.cell_starts();
        starts[1] += TextSize::from(12);
        let again = notebook.with_code(&code, &fixed, &starts).unwrap();
        let json = again.json();
        assert_eq!(
            json,
            NOTEBOOK.replace(
                "    \"import torch\\n\",\n",
                "    \"import torch\\n\",\n    \"import math\\n\",\n"
            )
        );
        // And back: the line goes, the rest stays.
        let restored = again.with_code(&fixed, &code, &notebook.cell_starts()).unwrap();
        assert_eq!(restored.json(), NOTEBOOK);
    }

    #[test]
    fn a_cell_magic_stays_on_its_cells_first_line() {
        let json = r#"{"cells": [{"cell_type": "code", "source": ["%%time\n", "x = 1"]}], "nbformat": 4}"#;
        let (notebook, code) = Notebook::parse(json.to_string()).unwrap();
        let starts = notebook.cell_starts();
        assert!(
            notebook
                .with_code(&code, &format!("import torch\n{code}"), &starts)
                .is_none()
        );
        let fixed = code.replace("x = 1", "x = 2");
        assert!(notebook.with_code(&code, &fixed, &starts).is_some());
    }

    #[test]
    fn a_string_source_is_written_as_one_string() {
        let (notebook, code) = Notebook::parse(NOTEBOOK.to_string()).unwrap();
        let fixed = code.replace("print(y.item())", "print(y)");
        let json = notebook
            .with_code(&code, &fixed, &notebook.cell_starts())
            .unwrap()
            .json()
            .to_string();
        assert_eq!(json, NOTEBOOK.replace("print(y.item())", "print(y)"));
    }

    #[test]
    fn an_empty_cell_gets_lines_indented_as_jupyter_writes_them() {
        let json =
            "{\n \"cells\": [\n  {\n   \"cell_type\": \"code\",\n   \"source\": []\n  }\n ],\n \"nbformat\": 4\n}\n";
        let (notebook, code) = Notebook::parse(json.to_string()).unwrap();
        assert_eq!(code, "");
        let written = notebook
            .with_code("", "a = 1\nb = 2\n", &[TextSize::from(0)])
            .unwrap()
            .json()
            .to_string();
        assert_eq!(
            written,
            json.replace(
                "\"source\": []",
                "\"source\": [\n    \"a = 1\\n\",\n    \"b = 2\\n\"\n   ]"
            )
        );
    }

    #[test]
    fn invalid_notebooks_say_why() {
        let error = Notebook::parse("{\"cells\": [".into()).unwrap_err();
        assert!(
            error.to_string().starts_with("not a valid Jupyter notebook: EOF"),
            "{error}"
        );
        let error = Notebook::parse("{\"worksheets\": []}".into()).unwrap_err();
        assert!(error.to_string().contains("nbformat 4"), "{error}");
        let error = Notebook::parse("{\"cells\": [{\"source\": []}]}".into()).unwrap_err();
        assert!(
            error
                .to_string()
                .ends_with("cell 1 (from line 1): missing field `cell_type`"),
            "{error}"
        );
        let json = "{\n \"cells\": [\n  {\"cell_type\": \"code\", \"source\": [1]}\n ]\n}";
        let error = Notebook::parse(json.into()).unwrap_err();
        assert!(
            error
                .to_string()
                .ends_with("cell 1 (from line 3): invalid type: integer `1`, expected a string"),
            "{error}"
        );
    }

    #[test]
    fn a_byte_order_mark_and_crlf_are_kept() {
        let json = format!("\u{feff}{}", NOTEBOOK.replace('\n', "\r\n"));
        let (notebook, code) = Notebook::parse(json.clone()).unwrap();
        let fixed = code.replace("x.sum()", "x.sum(0)");
        let mut starts = notebook.cell_starts();
        starts[1] += TextSize::from(1);
        let written = notebook.with_code(&code, &fixed, &starts).unwrap().json().to_string();
        assert_eq!(written, json.replace("x.sum()", "x.sum(0)"));
    }
}
