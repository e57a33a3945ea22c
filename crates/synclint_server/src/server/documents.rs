//! An open document: its text, the version the editor gave it, and where its lines start, to
//! turn byte offsets into LSP positions and back. LSP counts a line's characters in UTF-16 code
//! units and ends lines at `\n`, `\r\n` or a lone `\r`.

use lsp_types::{Position, Range, TextDocumentContentChangeEvent};
use ruff_text_size::{TextRange, TextSize};

pub struct Document {
    text: String,
    pub version: i32,
    /// Byte offset where each line starts; the first is 0.
    line_starts: Vec<usize>,
}

impl Document {
    pub fn new(text: String, version: i32) -> Self {
        let line_starts = line_starts(&text);
        Document {
            text,
            version,
            line_starts,
        }
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    /// Applies the editor's changes in order: a change with a range replaces that range (as
    /// it stands after the changes before it), one without replaces the whole text.
    pub fn apply(&mut self, changes: Vec<TextDocumentContentChangeEvent>, version: i32) {
        for change in changes {
            match change.range {
                Some(range) => {
                    let start = self.offset(range.start);
                    let end = self.offset(range.end).max(start);
                    self.replace(start..end, &change.text);
                }
                None => {
                    self.text = change.text;
                    self.line_starts = line_starts(&self.text);
                }
            }
        }
        self.version = version;
    }

    /// Replaces the bytes `range` with `new`, finding line starts again only around them, so
    /// that a keystroke costs no scan of a big document's every line.
    fn replace(&mut self, range: std::ops::Range<usize>, new: &str) {
        self.text.replace_range(range.clone(), new);
        // Whether `at` starts a line depends on the bytes before and at it (`\r` then no
        // `\n`): the starts before the edit stay, those from its start to the end of the new
        // text are found again, and those after it move with the text.
        let new_end = range.start + new.len();
        let kept = self.line_starts.partition_point(|&start| start < range.start.max(1));
        let moved = self.line_starts.partition_point(|&start| start <= range.end);
        for start in &mut self.line_starts[moved..] {
            *start = *start - range.end + new_end;
        }
        let found = line_starts_within(&self.text, range.start.max(1)..new_end + 1);
        self.line_starts.splice(kept..moved, found);
    }

    /// The byte offset of `position`; a position past the end of its line means the line's
    /// end, one past the last line the text's end, and one inside a character (a half of a
    /// surrogate pair) that character's start.
    pub fn offset(&self, position: Position) -> usize {
        let Some(&start) = self.line_starts.get(position.line as usize) else {
            return self.text.len();
        };
        let line = &self.text[start..self.content_end(position.line as usize)];
        let mut units = 0;
        for (at, character) in line.char_indices() {
            units += character.len_utf16() as u32;
            if units > position.character {
                return start + at;
            }
        }
        start + line.len()
    }

    /// The LSP position of byte `offset` (clamped to the text, and back to a character start).
    pub fn position(&self, offset: usize) -> Position {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.line_starts.partition_point(|&start| start <= offset) - 1;
        let start = self.line_starts[line];
        let character: usize = self.text[start..offset].chars().map(char::len_utf16).sum();
        Position::new(line as u32, character as u32)
    }

    pub fn range(&self, range: TextRange) -> Range {
        Range::new(
            self.position(range.start().to_usize()),
            self.position(range.end().to_usize()),
        )
    }

    /// The byte range of an LSP range.
    pub fn text_range(&self, range: Range) -> TextRange {
        let start = self.offset(range.start);
        let end = self.offset(range.end).max(start);
        TextRange::new(TextSize::new(start as u32), TextSize::new(end as u32))
    }

    /// Where line `line`'s text ends, before its line ending.
    fn content_end(&self, line: usize) -> usize {
        let end = self.line_starts.get(line + 1).copied().unwrap_or(self.text.len());
        let content = &self.text[self.line_starts[line]..end];
        end - (content.len() - content.trim_end_matches(['\n', '\r']).len())
    }
}

fn line_starts(text: &str) -> Vec<usize> {
    let mut starts = vec![0];
    starts.extend(line_starts_within(text, 1..text.len() + 1));
    starts
}

/// The offsets in `within` (clamped to the text and its end) where a line starts.
fn line_starts_within(text: &str, within: std::ops::Range<usize>) -> impl Iterator<Item = usize> + '_ {
    let bytes = text.as_bytes();
    let end = within.end.min(bytes.len() + 1);
    let start = within.start.clamp(1, end);
    // A line starts after each line ending.
    memchr::memchr2_iter(b'\n', b'\r', &bytes[start - 1..end - 1])
        .map(move |at| start - 1 + at)
        // `\r\n` ends its line at the `\n`.
        .filter(move |&at| !(bytes[at] == b'\r' && bytes.get(at + 1) == Some(&b'\n')))
        .map(|at| at + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(range: Option<Range>, text: &str) -> TextDocumentContentChangeEvent {
        TextDocumentContentChangeEvent {
            range,
            range_length: None,
            text: text.to_string(),
        }
    }

    #[test]
    fn columns_count_utf16_units() {
        // `é` is one unit in two bytes, `🙂` two units in four bytes.
        let document = Document::new("s = 'é🙂' + x.item()\r\nt = 1\ru = 2\n".to_string(), 1);
        let item = document.text().find("x.item").unwrap();
        assert_eq!(document.position(item), Position::new(0, 12));
        assert_eq!(document.offset(Position::new(0, 12)), item);
        let t = document.text().find("t = 1").unwrap();
        assert_eq!(document.position(t), Position::new(1, 0));
        let u = document.text().find("u = 2").unwrap();
        assert_eq!(document.position(u), Position::new(2, 0));
        assert_eq!(document.position(document.text().len()), Position::new(3, 0));
    }

    #[test]
    fn positions_out_of_bounds_are_clamped() {
        let document = Document::new("ab\r\n🙂\n".to_string(), 1);
        // Past the line's end: before its line ending.
        assert_eq!(document.offset(Position::new(0, 99)), 2);
        // Inside the surrogate pair: the character's start.
        assert_eq!(document.offset(Position::new(1, 1)), 4);
        assert_eq!(document.offset(Position::new(1, 2)), 8);
        assert_eq!(document.offset(Position::new(9, 0)), document.text().len());
        // An offset inside a character: its start.
        assert_eq!(document.position(6), Position::new(1, 0));
        assert_eq!(document.position(999), Position::new(2, 0));
    }

    #[test]
    fn line_starts_follow_edits_as_a_full_scan_finds_them() {
        let pieces = ["\r", "\n", "\r\n", "a", "é", "🙂", "", "xy\rz"];
        let mut document = Document::new("ab\r\ncd\re\n\nf".to_string(), 1);
        // A small deterministic generator (64-bit LCG), so that a failure can be replayed.
        let mut state = 0x5eed_u64;
        let mut next = |below: usize| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) as usize % below.max(1)
        };
        for step in 0..2000 {
            let (line, character) = (next(12) as u32, next(6) as u32);
            let start = Position::new(line, character);
            let end = if next(2) == 0 {
                start
            } else {
                Position::new(line + next(2) as u32, next(6) as u32)
            };
            let text: String = (0..next(3)).map(|_| pieces[next(pieces.len())]).collect();
            document.apply(vec![change(Some(Range::new(start, end)), &text)], step);
            assert_eq!(
                document.line_starts,
                line_starts(document.text()),
                "{:?}",
                document.text()
            );
        }
    }

    #[test]
    fn incremental_changes_apply_in_order() {
        let mut document = Document::new("x = 1\ny = 2\n".to_string(), 1);
        document.apply(
            vec![
                change(Some(Range::new(Position::new(1, 4), Position::new(1, 5))), "'é'"),
                change(Some(Range::new(Position::new(1, 7), Position::new(1, 7))), " + z"),
                change(Some(Range::new(Position::new(0, 0), Position::new(1, 0))), ""),
            ],
            2,
        );
        assert_eq!(document.text(), "y = 'é' + z\n");
        assert_eq!(document.version, 2);
        document.apply(vec![change(None, "new\n")], 3);
        assert_eq!(document.text(), "new\n");
        // A range that ends before it starts changes nothing but its start.
        document.apply(
            vec![change(Some(Range::new(Position::new(0, 2), Position::new(0, 1))), "!")],
            4,
        );
        assert_eq!(document.text(), "ne!w\n");
    }
}
