//! `# noqa` suppression, in Ruff's syntax: `# noqa` (every code on the line), `# noqa: SYNC101,
//! SYNC203`, and the file-level `# synclint: noqa` / `# synclint: noqa: SYNC101`. A listed code
//! may be a prefix, as in `--select`: `# noqa: SYNC1` covers SYNC101 to SYNC107.
//!
//! A finding's `# noqa` is read where a comment can go after it: at the end of its line, or,
//! where that line goes on inside a multi-line string or after a backslash, at the end of the
//! line where the string or the continuation ends (as in Ruff).
//!
//! The map keeps where each directive and its codes are written, and marks the codes that
//! suppress a finding: SYNC900 reports and removes the others.

use std::ops::Range;

use ruff_text_size::TextRange;
use rustc_hash::FxHashMap;

use crate::lines::Lines;
use crate::parse::{LineEnd, TextSize};
use crate::registry::Rule;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Directive {
    All,
    Codes(Vec<String>),
}

impl Directive {
    pub fn covers(&self, rule: Rule) -> bool {
        match self {
            Directive::All => true,
            Directive::Codes(codes) => codes.iter().any(|code| code_covers(code, rule)),
        }
    }
}

/// Whether a listed code (stored upper-case) covers `rule`: it is the rule's code or a prefix
/// of it. Another tool's code (`E501`) is no prefix of ours.
pub fn code_covers(code: &str, rule: Rule) -> bool {
    rule.code().starts_with(code)
}

/// A directive as written in one comment; offsets count from the comment's start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedDirective {
    pub directive: Directive,
    /// Its `#`.
    pub start: usize,
    /// The word after the `#` and its blanks: `noqa`, or `synclint:` of a file-level directive.
    pub keyword: usize,
    /// After its last code, or after `noqa` when it lists none: more codes go there.
    pub end: usize,
    /// Where each code of `directive` is written, in order (none for a blanket directive).
    pub codes: Vec<Range<usize>>,
}

/// One directive of a file: where it is written, and which of its codes suppressed a finding.
#[derive(Debug)]
pub struct NoqaDirective {
    pub directive: Directive,
    /// `# synclint: noqa...`: it covers the whole file.
    pub file_level: bool,
    /// From its `#` to the end of its last code (or of `noqa`).
    pub range: TextRange,
    /// Where the word after its `#` starts (see [`ParsedDirective::keyword`]).
    pub keyword: TextSize,
    /// Where the comment holding it ends (comments run to the end of their line).
    pub comment_end: TextSize,
    /// Where each listed code is written.
    pub code_ranges: Vec<TextRange>,
    /// Per listed code: whether it suppressed a finding.
    pub used: Vec<bool>,
}

impl NoqaDirective {
    fn new(parsed: ParsedDirective, comment: TextRange, file_level: bool) -> Self {
        let at = |offset: usize| comment.start() + TextSize::new(offset as u32);
        let code_ranges: Vec<TextRange> = parsed
            .codes
            .iter()
            .map(|code| TextRange::new(at(code.start), at(code.end)))
            .collect();
        NoqaDirective {
            used: vec![false; code_ranges.len()],
            code_ranges,
            directive: parsed.directive,
            file_level,
            range: TextRange::new(at(parsed.start), at(parsed.end)),
            keyword: at(parsed.keyword),
            comment_end: comment.end(),
        }
    }

    /// Does it cover `rule`? Marks the codes that do.
    fn suppress(&mut self, rule: Rule) -> bool {
        let Directive::Codes(codes) = &self.directive else {
            return true;
        };
        let mut covered = false;
        for (code, used) in codes.iter().zip(&mut self.used) {
            if code_covers(code, rule) {
                *used = true;
                covered = true;
            }
        }
        covered
    }
}

#[derive(Debug, Default)]
pub struct NoqaMap {
    /// Every directive, in source order.
    directives: Vec<NoqaDirective>,
    /// The file-level ones, by index.
    file: Vec<usize>,
    /// 1-based line -> index of the directive on that line.
    lines: FxHashMap<u32, usize>,
}

impl NoqaMap {
    pub fn from_comments(source: &str, comments: impl Iterator<Item = TextRange>, lines: &Lines) -> Self {
        let mut map = NoqaMap::default();
        for range in comments {
            let text = &source[range];
            let index = map.directives.len();
            if let Some(parsed) = parse_file_directive(text) {
                map.directives.push(NoqaDirective::new(parsed, range, true));
                map.file.push(index);
            } else if let Some(parsed) = parse_line_directive(text) {
                map.directives.push(NoqaDirective::new(parsed, range, false));
                map.lines.insert(lines.row(range.start()) as u32, index);
            }
        }
        map
    }

    /// Is `rule` suppressed on `line` (1-based)? Every code that suppresses it, of the file-level
    /// directives and of the line's, is marked used.
    pub fn suppresses(&mut self, rule: Rule, line: u32) -> bool {
        let mut suppressed = false;
        for &index in self.file.iter().chain(self.lines.get(&line)) {
            suppressed |= self.directives[index].suppress(rule);
        }
        suppressed
    }

    /// Every directive, in source order, with the codes that suppressed a finding so far.
    pub fn directives(&self) -> &[NoqaDirective] {
        &self.directives
    }
}

/// The line end whose comment covers a finding starting at `offset` (of the text `line_ends`
/// were read from): the first at or after it.
pub fn covering_line_end(line_ends: &[LineEnd], offset: TextSize) -> Option<&LineEnd> {
    line_ends.get(line_ends.partition_point(|end| end.at < offset))
}

/// The 1-based row whose `# noqa` covers a finding starting at `offset`.
pub fn noqa_row(line_ends: &[LineEnd], lines: &Lines, offset: TextSize) -> u32 {
    let at = covering_line_end(line_ends, offset).map_or(offset, |end| end.at);
    lines.row(at) as u32
}

/// `# synclint: noqa` or `# synclint: noqa: SYNC101, SYNC2`: the whole comment.
fn parse_file_directive(comment: &str) -> Option<ParsedDirective> {
    let rest = comment.trim_start_matches('#').trim_start();
    let keyword = comment.len() - rest.len();
    let rest = strip_prefix_ignore_case(rest, "synclint:")?.trim_start();
    let rest = strip_prefix_ignore_case(rest, "noqa")?;
    let offset = comment.len() - rest.len();
    Some(directive_after_noqa(rest, offset, 0, keyword))
}

/// `# noqa`, `#noqa:SYNC101`, `# type: ignore  # noqa: SYNC101, E501`: the first directive in
/// the comment.
pub fn parse_line_directive(comment: &str) -> Option<ParsedDirective> {
    // Most comments are prose: skip them without allocating.
    if !mentions_noqa(comment.as_bytes()) {
        return None;
    }
    let lower = comment.to_ascii_lowercase();
    let mut search = 0;
    while let Some(found) = lower[search..].find('#') {
        let hash = search + found;
        let after = lower[hash + 1..].trim_start();
        if after.starts_with("noqa") {
            let keyword = comment.len() - after.len();
            let offset = keyword + "noqa".len();
            let rest = &comment[offset..];
            // `# noqa-like`, `# noqatest` are not directives.
            if rest.chars().next().is_none_or(|c| c == ':' || c.is_whitespace()) {
                return Some(directive_after_noqa(rest, offset, hash, keyword));
            }
        }
        search = hash + 1;
    }
    None
}

/// The directive whose `noqa` is followed by `rest`, which starts at `offset` of the comment.
fn directive_after_noqa(rest: &str, offset: usize, start: usize, keyword: usize) -> ParsedDirective {
    let (directive, codes, length) = parse_codes(rest);
    ParsedDirective {
        directive,
        start,
        keyword,
        end: offset + length,
        codes: codes
            .into_iter()
            .map(|code| offset + code.start..offset + code.end)
            .collect(),
    }
}

/// Does the text contain `noqa` in any case? Searches for the rare `q` (English prose has
/// about one per thousand letters) rather than testing every window.
fn mentions_noqa(text: &[u8]) -> bool {
    memchr::memchr2_iter(b'q', b'Q', text)
        .any(|q| q >= 2 && text.get(q - 2..q + 2).is_some_and(|w| w.eq_ignore_ascii_case(b"noqa")))
}

/// The directive after `noqa`, where each of its codes is in `rest`, and how much of `rest`
/// its codes take.
fn parse_codes(rest: &str) -> (Directive, Vec<Range<usize>>, usize) {
    let Some(list) = rest.strip_prefix(':') else {
        return (Directive::All, Vec::new(), 0);
    };
    let mut codes = Vec::new();
    let mut ranges = Vec::new();
    for token in list
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|t| !t.is_empty())
    {
        let is_code = token.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
            && token.chars().all(|c| c.is_ascii_alphanumeric())
            && token.chars().any(|c| c.is_ascii_digit());
        if !is_code {
            break;
        }
        codes.push(token.to_ascii_uppercase());
        // `split` yields slices of `list`: where this one starts is its address less the list's.
        let start = ':'.len_utf8() + (token.as_ptr() as usize - list.as_ptr() as usize);
        ranges.push(start..start + token.len());
    }
    match ranges.last() {
        Some(last) => {
            let end = last.end;
            (Directive::Codes(codes), ranges, end)
        }
        None => (Directive::All, Vec::new(), 0),
    }
}

fn strip_prefix_ignore_case<'s>(text: &'s str, prefix: &str) -> Option<&'s str> {
    // `get` so a multi-byte character at the cut (a non-ASCII comment) is no match, not a panic.
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix).then(|| &text[prefix.len()..])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn directive(comment: &str) -> Option<Directive> {
        parse_line_directive(comment).map(|parsed| parsed.directive)
    }

    fn file_directive(comment: &str) -> Option<Directive> {
        parse_file_directive(comment).map(|parsed| parsed.directive)
    }

    #[test]
    fn line_directives() {
        assert_eq!(directive("# noqa"), Some(Directive::All));
        assert_eq!(directive("#NOQA"), Some(Directive::All));
        assert_eq!(
            directive("# noqa: SYNC101, SYNC203"),
            Some(Directive::Codes(vec!["SYNC101".into(), "SYNC203".into()]))
        );
        assert_eq!(
            directive("#noqa:SYNC101"),
            Some(Directive::Codes(vec!["SYNC101".into()]))
        );
        assert_eq!(
            directive("# type: ignore  # noqa: E501 trailing words"),
            Some(Directive::Codes(vec!["E501".into()]))
        );
        assert_eq!(directive("# noqatest"), None);
        assert_eq!(directive("# a comment"), None);
    }

    #[test]
    fn file_directives() {
        assert_eq!(file_directive("# synclint: noqa"), Some(Directive::All));
        assert_eq!(
            file_directive("# synclint: noqa: SYNC1"),
            Some(Directive::Codes(vec!["SYNC1".into()]))
        );
        assert_eq!(file_directive("# noqa"), None);
        assert_eq!(file_directive("# ñandú: a non-ASCII comment"), None);
        assert_eq!(directive("# é noqa"), None);
    }

    #[test]
    fn directives_end_after_their_last_code() {
        fn end(comment: &str) -> Option<&str> {
            parse_line_directive(comment).map(|parsed| &comment[..parsed.end])
        }
        assert_eq!(end("# noqa"), Some("# noqa"));
        assert_eq!(end("# noqa: SYNC101, E501 a reason"), Some("# noqa: SYNC101, E501"));
        assert_eq!(
            end("# type: ignore  #noqa:SYNC1  # more"),
            Some("# type: ignore  #noqa:SYNC1")
        );
        assert_eq!(end("# noqa: a reason"), Some("# noqa"));
    }

    #[test]
    fn directives_know_where_their_parts_are() {
        let comment = "# type: ignore  #NoQA: E501,sync101  why";
        let parsed = parse_line_directive(comment).unwrap();
        assert_eq!(&comment[parsed.start..parsed.end], "#NoQA: E501,sync101");
        assert_eq!(&comment[parsed.keyword..], "NoQA: E501,sync101  why");
        let codes: Vec<&str> = parsed.codes.iter().map(|code| &comment[code.clone()]).collect();
        assert_eq!(codes, ["E501", "sync101"]);
        assert_eq!(
            parsed.directive,
            Directive::Codes(vec!["E501".into(), "SYNC101".into()])
        );

        let comment = "#  synclint: noqa: SYNC2 SYNC101";
        let parsed = parse_file_directive(comment).unwrap();
        assert_eq!((parsed.start, parsed.end), (0, comment.len()));
        assert_eq!(&comment[parsed.keyword..parsed.keyword + 9], "synclint:");
        let codes: Vec<&str> = parsed.codes.iter().map(|code| &comment[code.clone()]).collect();
        assert_eq!(codes, ["SYNC2", "SYNC101"]);

        let blanket = parse_line_directive("x  # noqa").unwrap();
        assert!(blanket.codes.is_empty());
    }

    #[test]
    fn suppression_marks_the_codes_that_suppress() {
        let source = "# synclint: noqa: SYNC2\na = 1  # noqa: SYNC1, SYNC101, E501\nb = 2  # noqa\n";
        let lines = Lines::new(source);
        let parsed = crate::parse::parse(source, crate::parse::SourceKind::Python);
        let mut map = NoqaMap::from_comments(source, parsed.comments(), &lines);
        assert!(map.suppresses(Rule::Item, 2));
        assert!(!map.suppresses(Rule::Item, 1));
        assert!(map.suppresses(Rule::Nonzero, 1));
        assert!(map.suppresses(Rule::Tolist, 3));
        let used: Vec<(bool, &[bool])> = map
            .directives()
            .iter()
            .map(|d| (d.file_level, d.used.as_slice()))
            .collect();
        assert_eq!(
            used,
            [(true, &[true][..]), (false, &[true, true, false][..]), (false, &[][..])]
        );
    }

    #[test]
    fn noqa_is_found_anywhere_in_any_case() {
        assert!(mentions_noqa(b"noqa"));
        assert!(mentions_noqa(b"# NoQa: SYNC101"));
        assert!(mentions_noqa(b"# type: ignore # noqa"));
        assert!(!mentions_noqa(b"# qa noq oqa q"));
        assert!(!mentions_noqa(b"q"));
    }

    #[test]
    fn codes_match_exactly() {
        let directive = Directive::Codes(vec!["E501".into()]);
        assert!(!directive.covers(Rule::Item));
        assert!(Directive::Codes(vec!["SYNC101".into()]).covers(Rule::Item));
        assert!(Directive::Codes(vec!["SYNC1".into()]).covers(Rule::Item));
        assert!(!Directive::Codes(vec!["SYNC2".into()]).covers(Rule::Item));
        assert!(!Directive::Codes(vec!["SYNC1010".into()]).covers(Rule::Item));
    }
}
