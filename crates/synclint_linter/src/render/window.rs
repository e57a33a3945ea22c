//! Long lines cut to a window around what a report points at. A generated file may hold a line
//! of 70 KB with thousands of findings on it: each report shows a few hundred columns of it,
//! with `…` where the line goes on, as Ruff does. The locations reports print keep their true
//! columns: the callers ask the window where each shown line was cut.

use std::borrow::Cow;
use std::ops::Range;

/// A line of at most this many characters is shown whole; a longer one is cut to this many.
pub(crate) const SHOWN_CHARACTERS: usize = 320;
/// How many characters of a cut line are shown before the point reported, where it has them.
const LEAD_CHARACTERS: usize = 80;
/// What stands for the part of a line that is cut.
pub(crate) const ELLIPSIS: &str = "…";

/// Lines of a source text as a report shows them.
pub struct Window<'a> {
    text: Cow<'a, str>,
    lines: Vec<ShownLine>,
}

/// One line of a [`Window`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ShownLine {
    /// The line in the source, without its line ending.
    pub line: Range<usize>,
    /// The part of it shown.
    pub kept: Range<usize>,
    /// Where `kept` starts in the shown text (after the ellipsis of a line cut before it).
    pub at: usize,
    /// Where the line ends in the source, after its line ending.
    end: usize,
}

impl ShownLine {
    pub(crate) fn cut_before(&self) -> bool {
        self.kept.start > self.line.start
    }

    fn cut_after(&self) -> bool {
        self.kept.end < self.line.end
    }
}

impl<'a> Window<'a> {
    /// The `lines` of `source` (each from its start to after its line ending, in order, each
    /// starting where the one before ends), long ones cut: the line holding `focus` around it,
    /// the others after their first characters. Costs the number of lines and the characters
    /// shown, not the length of the lines.
    pub fn new(source: &'a str, lines: impl Iterator<Item = Range<usize>>, focus: usize) -> Self {
        let mut lines: Vec<ShownLine> = lines
            .map(|whole| {
                let content = whole.start..whole.end - line_ending(&source[whole.clone()]);
                let anchor = if (content.start..=content.end).contains(&focus) {
                    focus
                } else {
                    content.start
                };
                ShownLine {
                    kept: kept_part(source, content.clone(), anchor),
                    line: content,
                    at: 0,
                    end: whole.end,
                }
            })
            .collect();
        let start = lines.first().map_or(0, |line| line.line.start);
        let end = lines.last().map_or(start, |line| line.end);
        if lines.iter().all(|line| line.kept == line.line) {
            for line in &mut lines {
                line.at = line.kept.start - start;
            }
            return Window {
                text: Cow::Borrowed(&source[start..end]),
                lines,
            };
        }
        let mut text = String::new();
        for line in &mut lines {
            if line.cut_before() {
                text.push_str(ELLIPSIS);
            }
            line.at = text.len();
            text.push_str(&source[line.kept.clone()]);
            if line.cut_after() {
                text.push_str(ELLIPSIS);
            }
            text.push_str(&source[line.line.end..line.end]);
        }
        Window {
            text: Cow::Owned(text),
            lines,
        }
    }

    /// The lines as shown.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The lines, in order.
    pub fn lines(&self) -> &[ShownLine] {
        &self.lines
    }

    /// Where `offset` of the source is in the shown text: an offset in a part cut away is
    /// moved to the nearest end of the part shown.
    pub fn offset(&self, offset: usize) -> usize {
        let index = self
            .lines
            .partition_point(|line| line.line.start <= offset)
            .saturating_sub(1);
        let Some(line) = self.lines.get(index) else {
            return 0;
        };
        let mut offset = offset.max(line.kept.start);
        if line.cut_after() {
            offset = offset.min(line.kept.end);
        }
        line.at + offset - line.kept.start
    }
}

/// The length of the line ending `line` ends with: `\r\n`, `\n`, `\r` or none.
fn line_ending(line: &str) -> usize {
    if line.ends_with("\r\n") {
        2
    } else {
        usize::from(line.ends_with(['\n', '\r']))
    }
}

/// The part of the line `content` of `source` that is shown: all of a short line; of a long
/// one, [`SHOWN_CHARACTERS`] starting [`LEAD_CHARACTERS`] before `anchor` (fewer at its start,
/// more where the line ends sooner).
fn kept_part(source: &str, content: Range<usize>, anchor: usize) -> Range<usize> {
    // A line of this many bytes has no more characters.
    if content.len() <= SHOWN_CHARACTERS {
        return content;
    }
    let back = |from: usize, count: usize| {
        source[content.start..from]
            .char_indices()
            .rev()
            .take(count)
            .last()
            .map_or(from, |(at, _)| content.start + at)
    };
    let forward = |from: usize, count: usize| {
        source[from..content.end]
            .char_indices()
            .nth(count)
            .map_or(content.end, |(at, _)| from + at)
    };
    let start = back(anchor, LEAD_CHARACTERS);
    let end = forward(start, SHOWN_CHARACTERS);
    // Where the line ends first, the window reaches back further.
    let shown = source[start..end].chars().count();
    let start = back(start, SHOWN_CHARACTERS - shown);
    start..end
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines_of(text: &str) -> Vec<Range<usize>> {
        let mut lines = Vec::new();
        let mut start = 0;
        for (at, _) in text.match_indices('\n') {
            lines.push(start..at + 1);
            start = at + 1;
        }
        if start < text.len() {
            lines.push(start..text.len());
        }
        lines
    }

    #[test]
    fn short_lines_are_shown_as_they_are() {
        let text = "a = 1\nb = x.item()\r\nc\n";
        let window = Window::new(text, lines_of(text).into_iter(), 10);
        assert!(matches!(window.text, Cow::Borrowed(_)));
        assert_eq!(window.text(), text);
        for offset in 0..=text.len() {
            assert_eq!(window.offset(offset), offset);
        }
        let line = "é".repeat(SHOWN_CHARACTERS);
        let window = Window::new(&line, std::iter::once(0..line.len()), line.len() / 2);
        assert_eq!(window.text(), line, "characters, not bytes, are counted");
    }

    #[test]
    fn a_long_line_is_cut_around_the_focus() {
        let line = format!("{}TARGET{}\n", "a".repeat(5000), "b".repeat(5000));
        let text = format!("short\n{line}tail\n");
        let focus = text.find("TARGET").unwrap();
        let window = Window::new(&text, lines_of(&text).into_iter(), focus);
        let shown = window.text();
        let expected = format!(
            "short\n…{}TARGET{}…\ntail\n",
            "a".repeat(LEAD_CHARACTERS),
            "b".repeat(SHOWN_CHARACTERS - LEAD_CHARACTERS - "TARGET".len())
        );
        assert_eq!(shown, expected);
        let at = window.offset(focus);
        assert_eq!(&shown[at..at + 6], "TARGET");
        // Offsets cut away move to the ends of what is shown.
        let kept = &window.lines()[1];
        assert!(kept.cut_before());
        assert_eq!(window.offset(7), kept.at);
        assert_eq!(
            window.offset(text.find('\n').unwrap() + 5001 + 5000),
            kept.at + kept.kept.len()
        );
        assert_eq!(&shown[window.offset(text.find("tail").unwrap())..], "tail\n");
    }

    #[test]
    fn a_long_line_shows_its_full_width_near_its_ends() {
        let line = "é".repeat(2 * SHOWN_CHARACTERS);
        let lines = || std::iter::once(0..line.len());
        let at_start = Window::new(&line, lines(), 2);
        assert_eq!(at_start.text(), format!("{}…", "é".repeat(SHOWN_CHARACTERS)));
        let at_end = Window::new(&line, lines(), line.len());
        assert_eq!(at_end.text(), format!("…{}", "é".repeat(SHOWN_CHARACTERS)));
        assert_eq!(at_end.offset(line.len()), at_end.text().len());
    }

    #[test]
    fn other_lines_are_cut_after_their_first_characters() {
        let text = format!("{}\n{}x\n", "a".repeat(1000), "b".repeat(1000));
        let focus = text.find('b').unwrap() + 500;
        let window = Window::new(&text, lines_of(&text).into_iter(), focus);
        let expected = format!(
            "{}…\n…{}…\n",
            "a".repeat(SHOWN_CHARACTERS),
            "b".repeat(SHOWN_CHARACTERS)
        );
        assert_eq!(window.text(), expected);
    }
}
