//! Rows, columns and line bounds of byte offsets in a source text.
//!
//! Every file needs a few line numbers (of its calls, loops and functions) and few files need
//! more (those with findings to locate). A full line index costs a pass with a push per line
//! over every file, 2.5% of a run; here `\n` text counts its newlines per 256-byte block, only as
//! far as a question reaches, and answers from the nearest block.
//!
//! Findings are located in source order, and a generated file may hold thousands on one long
//! line: the line last asked about, and the column last counted on it, are kept, so that each
//! question costs the distance from the one before rather than the length of the line.

use std::cell::{Cell, RefCell};
use std::sync::Arc;

use ruff_source_file::LineIndex;
use ruff_text_size::{TextRange, TextSize};

/// Bytes per block of counted newlines: a question scans at most this much.
const BLOCK: usize = 256;

/// A 1-based row and column (columns count characters, as Ruff's do).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct Location {
    pub row: usize,
    pub column: usize,
}

/// Where offsets of one text fall in its lines; answers as Ruff's `LineIndex` does: a line ends
/// at `\n`, `\r\n` or a lone `\r`, and a byte-order mark is not a column of line 1.
pub struct Lines<'s> {
    text: &'s str,
    index: Index,
    /// The line last asked about, from its start to after its line ending (empty at first).
    recent_line: Cell<TextRange>,
    /// The offset whose column was counted last, where its line starts, and how many
    /// characters of the line come before it.
    recent_column: Cell<(TextSize, TextSize, usize)>,
    /// The copy of whole lines handed out last (see [`Lines::shared_lines`]).
    recent_copy: RefCell<Option<(TextRange, Arc<str>)>>,
}

enum Index {
    /// `\n` line endings only: `newlines[k]` is the number of `\n` before block `k`, counted as
    /// far as asked.
    Newlines(RefCell<Vec<u32>>),
    /// Text with a `\r` (Windows or old Mac line endings): Ruff's index, which knows them all.
    Ruff(LineIndex),
}

impl<'s> Lines<'s> {
    pub fn new(text: &'s str) -> Self {
        let index = if memchr::memchr(b'\r', text.as_bytes()).is_some() {
            Index::Ruff(LineIndex::from_source_text(text))
        } else {
            Index::Newlines(RefCell::new(vec![0]))
        };
        Lines {
            text,
            index,
            recent_line: Cell::new(TextRange::default()),
            recent_column: Cell::new((TextSize::default(), TextSize::default(), 0)),
            recent_copy: RefCell::new(None),
        }
    }

    /// The 1-based row of `offset`.
    pub fn row(&self, offset: TextSize) -> usize {
        match &self.index {
            Index::Newlines(newlines) => 1 + self.newlines_before(newlines, offset.to_usize()),
            Index::Ruff(index) => index.line_index(offset).get(),
        }
    }

    /// The row and column of `offset`.
    pub fn location(&self, offset: TextSize) -> Location {
        let row = self.row(offset);
        let characters = self.characters_before(offset);
        // The byte-order mark is not a column.
        let bom = usize::from(row == 1 && self.text.starts_with('\u{feff}'));
        Location {
            row,
            column: (characters + 1).saturating_sub(bom).max(1),
        }
    }

    /// Where the line holding `offset` starts.
    pub fn line_start(&self, offset: TextSize) -> TextSize {
        self.line_of(offset).start()
    }

    /// Where the line holding `offset` ends, after its line ending.
    pub fn line_end(&self, offset: TextSize) -> TextSize {
        self.line_of(offset).end()
    }

    /// A copy of the whole lines `range` touches, and where the copy starts in the text. The
    /// copy handed out before is handed out again where it holds these lines: findings are
    /// located in source order, so the thousands on one long line share one copy of it.
    pub fn shared_lines(&self, range: TextRange) -> (Arc<str>, TextSize) {
        let lines = TextRange::new(self.line_start(range.start()), self.line_end(range.end()));
        let mut recent = self.recent_copy.borrow_mut();
        if let Some((copied, text)) = &*recent
            && copied.contains_range(lines)
        {
            return (text.clone(), copied.start());
        }
        let text: Arc<str> = self.text[lines].into();
        *recent = Some((lines, text.clone()));
        (text, lines.start())
    }

    /// The line holding `offset`, from its start to after its line ending.
    fn line_of(&self, offset: TextSize) -> TextRange {
        let recent = self.recent_line.get();
        if recent.contains(offset) {
            return recent;
        }
        let line = match &self.index {
            Index::Newlines(_) => {
                let (before, after) = self.text.as_bytes().split_at(offset.to_usize());
                let start = memchr::memrchr(b'\n', before).map_or(0, |at| at + 1);
                let end = memchr::memchr(b'\n', after).map_or(after.len(), |at| at + 1);
                TextRange::new(TextSize::new(start as u32), offset + TextSize::new(end as u32))
            }
            Index::Ruff(index) => index.line_range(index.line_index(offset), self.text),
        };
        self.recent_line.set(line);
        line
    }

    /// How many characters of its line come before `offset`: counted from the offset counted
    /// last where that is on the same line and nearer than the line's start.
    fn characters_before(&self, offset: TextSize) -> usize {
        let start = self.line_of(offset).start();
        let (counted, counted_start, characters) = self.recent_column.get();
        let characters_in = |from: TextSize, to: TextSize| self.text[TextRange::new(from, to)].chars().count();
        let same_line = counted_start == start;
        let characters = if same_line && counted <= offset {
            characters + characters_in(counted, offset)
        } else if same_line && counted - offset < offset - start {
            characters - characters_in(offset, counted)
        } else {
            characters_in(start, offset)
        };
        self.recent_column.set((offset, start, characters));
        characters
    }

    fn newlines_before(&self, newlines: &RefCell<Vec<u32>>, offset: usize) -> usize {
        let bytes = self.text.as_bytes();
        let block = offset / BLOCK;
        let mut counted = newlines.borrow_mut();
        while counted.len() <= block {
            let k = counted.len();
            let before = counted[k - 1] + count_newlines(&bytes[(k - 1) * BLOCK..k * BLOCK]) as u32;
            counted.push(before);
        }
        counted[block] as usize + count_newlines(&bytes[block * BLOCK..offset])
    }
}

/// Sums of byte-wide flags over at most 255 bytes cannot overflow, and compile to vector
/// compares and adds (a plain `filter().count()` widens every byte to a `usize` and does not).
fn count_newlines(bytes: &[u8]) -> usize {
    bytes
        .chunks(255)
        .map(|chunk| chunk.iter().fold(0u8, |sum, &b| sum + u8::from(b == b'\n')) as usize)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every answer, at every `step`th character boundary and in a scattered order, is Ruff's.
    fn agrees_with_ruff(text: &str, step: usize) {
        let lines = Lines::new(text);
        let ruff = LineIndex::from_source_text(text);
        let mut offsets: Vec<usize> = (0..=text.len())
            .filter(|&i| text.is_char_boundary(i))
            .step_by(step)
            .chain([text.len()])
            .collect();
        // Backwards and forwards across blocks, as a checker jumping between functions asks.
        let half = offsets.len() / 2;
        offsets[..half].reverse();
        offsets.rotate_left(half / 3);
        for offset in offsets {
            let at = TextSize::new(offset as u32);
            let row = ruff.line_index(at);
            let position = ruff.line_column(at, text);
            let range = ruff.line_range(row, text);
            let context = format!("offset {offset} of {text:?}");
            assert_eq!(lines.row(at), row.get(), "row, {context}");
            assert_eq!(
                lines.location(at),
                Location {
                    row: position.line.get(),
                    column: position.column.get()
                },
                "location, {context}"
            );
            assert_eq!(lines.line_start(at), range.start(), "line start, {context}");
            assert_eq!(lines.line_end(at), range.end(), "line end, {context}");
        }
    }

    #[test]
    fn small_texts_every_line_ending() {
        for text in [
            "",
            "\n",
            "x = 1",
            "x = 1\n",
            "x = 1\ny = 2\n\n\nz = 3",
            "x = 1\r\ny = 2\r\n",
            "x = 1\ry = 2\r",
            "a\nb\r\nc\rd\n",
            "\u{feff}x = 1\ny = 2\n",
            "\u{feff}x = 1\r\ny = 2\r\n",
            "\u{feff}",
            "s = 'é' + \"日本\" # 🙂\nt = 'ü'\n",
        ] {
            agrees_with_ruff(text, 1);
        }
    }

    #[test]
    fn long_texts_across_blocks() {
        let mut text = String::new();
        for i in 0..300 {
            // Lines of varied length, some longer than a block, some non-ASCII.
            let width = (i * 37) % 90 + if i % 97 == 0 { 1500 } else { 0 };
            text.push_str(&"é".repeat(i % 3));
            text.push_str(&"x".repeat(width));
            text.push('\n');
        }
        // A step prime to the block size: offsets fall at every position within blocks.
        agrees_with_ruff(&text, 7);
        agrees_with_ruff(&format!("\u{feff}{text}"), 7);
        agrees_with_ruff(&text.replace('\n', "\r\n"), 7);
    }

    #[test]
    fn findings_in_order_share_a_copy_of_their_lines() {
        let text = "a = 1\nb = x.item() + y.item()\nc = (\n  z.item())\n";
        let lines = Lines::new(text);
        let range = |needle: &str| {
            let start = text.find(needle).unwrap();
            TextRange::at(TextSize::new(start as u32), TextSize::new(needle.len() as u32))
        };
        let (first, base) = lines.shared_lines(range("x.item()"));
        assert_eq!((&*first, base), ("b = x.item() + y.item()\n", TextSize::new(6)));
        let (second, _) = lines.shared_lines(range("y.item()"));
        assert!(Arc::ptr_eq(&first, &second), "the same line is copied once");
        // A finding over two lines takes a copy of both; one inside it shares that copy.
        let (outer, base) = lines.shared_lines(range("(\n  z.item())"));
        assert_eq!((&*outer, base), ("c = (\n  z.item())\n", TextSize::new(30)));
        let (inner, _) = lines.shared_lines(range("z.item()"));
        assert!(Arc::ptr_eq(&outer, &inner));
    }
}
