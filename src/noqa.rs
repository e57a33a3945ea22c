//! `# noqa` suppression, in Ruff's syntax: `# noqa` (every code on the line), `# noqa: SYNC101,
//! SYNC203`, and the file-level `# synclint: noqa` / `# synclint: noqa: SYNC101`. A listed code
//! may be a prefix, as in `--select`: `# noqa: SYNC1` covers SYNC101 to SYNC107.
//!
//! A finding's `# noqa` is read where a comment can go after it: at the end of its line, or,
//! where that line goes on inside a multi-line string or after a backslash, at the end of the
//! line where the string or the continuation ends (as in Ruff).

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
    fn covers(&self, rule: Rule) -> bool {
        match self {
            Directive::All => true,
            // Codes are stored upper-case; another tool's code (`E501`) is no prefix of ours.
            Directive::Codes(codes) => codes.iter().any(|code| rule.code().starts_with(code.as_str())),
        }
    }
}

#[derive(Debug, Default)]
pub struct NoqaMap {
    file: Option<Directive>,
    /// 1-based line -> directive on that line.
    lines: FxHashMap<u32, Directive>,
}

impl NoqaMap {
    pub fn from_comments(source: &str, comments: impl Iterator<Item = TextRange>, lines: &Lines) -> Self {
        let mut map = NoqaMap::default();
        for range in comments {
            let text = &source[range];
            if let Some(directive) = parse_file_directive(text) {
                map.file = Some(match (map.file.take(), directive) {
                    (None, directive) => directive,
                    (Some(Directive::Codes(mut a)), Directive::Codes(b)) => {
                        a.extend(b);
                        Directive::Codes(a)
                    }
                    _ => Directive::All,
                });
            } else if let Some((directive, _)) = parse_line_directive(text) {
                let line = lines.row(range.start()) as u32;
                map.lines.insert(line, directive);
            }
        }
        map
    }

    /// Is `rule` suppressed on `line` (1-based)?
    pub fn suppresses(&self, rule: Rule, line: u32) -> bool {
        self.file.as_ref().is_some_and(|d| d.covers(rule)) || self.lines.get(&line).is_some_and(|d| d.covers(rule))
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

/// `# synclint: noqa` or `# synclint: noqa: SYNC101, SYNC2`.
fn parse_file_directive(comment: &str) -> Option<Directive> {
    let rest = comment.trim_start_matches('#').trim_start();
    let rest = strip_prefix_ignore_case(rest, "synclint:")?.trim_start();
    let rest = strip_prefix_ignore_case(rest, "noqa")?;
    Some(parse_codes(rest).0)
}

/// `# noqa`, `#noqa:SYNC101`, `# type: ignore  # noqa: SYNC101, E501`, with where the directive
/// ends in `comment` (after its last code, or after `noqa`): more codes go there.
pub fn parse_line_directive(comment: &str) -> Option<(Directive, usize)> {
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
            let offset = comment.len() - after.len() + "noqa".len();
            let rest = &comment[offset..];
            // `# noqa-like`, `# noqatest` are not directives.
            if rest.chars().next().is_none_or(|c| c == ':' || c.is_whitespace()) {
                let (directive, length) = parse_codes(rest);
                return Some((directive, offset + length));
            }
        }
        search = hash + 1;
    }
    None
}

/// Does the text contain `noqa` in any case? Searches for the rare `q` (English prose has
/// about one per thousand letters) rather than testing every window.
fn mentions_noqa(text: &[u8]) -> bool {
    memchr::memchr2_iter(b'q', b'Q', text)
        .any(|q| q >= 2 && text.get(q - 2..q + 2).is_some_and(|w| w.eq_ignore_ascii_case(b"noqa")))
}

/// The directive after `noqa`, and how much of `rest` its codes take.
fn parse_codes(rest: &str) -> (Directive, usize) {
    let Some(list) = rest.strip_prefix(':') else {
        return (Directive::All, 0);
    };
    let mut codes = Vec::new();
    let mut end = 0;
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
        // `split` yields slices of `list`: where this one ends is its offset plus its length.
        end = token.as_ptr() as usize - list.as_ptr() as usize + token.len();
    }
    if codes.is_empty() {
        (Directive::All, 0)
    } else {
        (Directive::Codes(codes), ':'.len_utf8() + end)
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
        parse_line_directive(comment).map(|(directive, _)| directive)
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
        assert_eq!(parse_file_directive("# synclint: noqa"), Some(Directive::All));
        assert_eq!(
            parse_file_directive("# synclint: noqa: SYNC1"),
            Some(Directive::Codes(vec!["SYNC1".into()]))
        );
        assert_eq!(parse_file_directive("# noqa"), None);
        assert_eq!(parse_file_directive("# ñandú: a non-ASCII comment"), None);
        assert_eq!(directive("# é noqa"), None);
    }

    #[test]
    fn directives_end_after_their_last_code() {
        fn end(comment: &str) -> Option<&str> {
            parse_line_directive(comment).map(|(_, end)| &comment[..end])
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
