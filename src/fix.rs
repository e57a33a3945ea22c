//! Applying fixes: non-overlapping edits, every other byte kept.

use ruff_text_size::{TextRange, TextSize};

use crate::diagnostic::{Applicability, Diagnostic, Edit};
use crate::registry::Rule;

/// The result of one pass of fixes over a source.
pub struct FixedSource {
    pub source: String,
    pub applied: Vec<Rule>,
}

/// Applies every fix at or above `minimum` applicability that does not overlap an earlier one
/// (sorted by position). Returns `None` when nothing applies. Skipped fixes are picked up by the
/// next pass, after the file is checked again.
pub fn apply_fixes(source: &str, diagnostics: &[Diagnostic], minimum: Applicability) -> Option<FixedSource> {
    let mut fixes: Vec<(&Diagnostic, Vec<&Edit>)> = diagnostics
        .iter()
        .filter_map(|d| {
            let fix = d.fix.as_ref()?;
            (fix.applicability >= minimum && !fix.edits.is_empty()).then(|| {
                let mut edits: Vec<&Edit> = fix.edits.iter().collect();
                edits.sort_by_key(|e| (e.range.start(), e.range.end()));
                (d, edits)
            })
        })
        .collect();
    fixes.sort_by_key(|(d, edits)| (edits[0].range.start(), d.rule));
    let mut taken: Vec<TextRange> = Vec::new();
    let mut accepted: Vec<&Edit> = Vec::new();
    let mut applied = Vec::new();
    for (diagnostic, edits) in fixes {
        let own_overlap = edits.windows(2).any(|pair| conflicts(pair[0].range, pair[1].range));
        if own_overlap || edits.iter().any(|edit| taken.iter().any(|t| conflicts(*t, edit.range))) {
            continue;
        }
        taken.extend(edits.iter().map(|edit| edit.range));
        accepted.extend(edits);
        applied.push(diagnostic.rule);
    }
    if accepted.is_empty() {
        return None;
    }
    accepted.sort_by_key(|edit| (edit.range.start(), edit.range.end()));
    let mut output = String::with_capacity(source.len() + 64);
    let mut last = TextSize::from(0);
    for edit in accepted {
        output.push_str(&source[TextRange::new(last, edit.range.start())]);
        output.push_str(&edit.content);
        last = edit.range.end();
    }
    output.push_str(&source[last.to_usize()..]);
    Some(FixedSource { source: output, applied })
}

/// Two edits conflict when their ranges overlap, or both insert at the same offset (their order
/// would be ambiguous).
fn conflicts(a: TextRange, b: TextRange) -> bool {
    (a.start() < b.end() && b.start() < a.end()) || (a.start() == b.start() && (a.is_empty() || b.is_empty()))
        || (a.is_empty() && b.start() < a.start() && a.start() < b.end())
        || (b.is_empty() && a.start() < b.start() && b.start() < a.end())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::Fix;
    use crate::semantic::HotContext;

    fn diagnostic(edits: Vec<Edit>, applicability: Applicability) -> Diagnostic {
        let mut d = Diagnostic::new(Rule::Item, TextRange::default(), "m", "h");
        d.fix = Some(Fix { applicability, edits });
        d.context = HotContext::Cold;
        d
    }

    fn range(a: u32, b: u32) -> TextRange {
        TextRange::new(a.into(), b.into())
    }

    #[test]
    fn keeps_bytes_outside_edits() {
        let source = "a = 1\r\n\tb = 2\r\n";
        let fixed = apply_fixes(source, &[diagnostic(vec![Edit::replace(range(4, 5), "x")], Applicability::Safe)], Applicability::Safe).unwrap();
        assert_eq!(fixed.source, "a = x\r\n\tb = 2\r\n");
    }

    #[test]
    fn skips_overlapping_and_unsafe() {
        let source = "0123456789";
        let fixes = [
            diagnostic(vec![Edit::replace(range(2, 5), "A")], Applicability::Safe),
            diagnostic(vec![Edit::replace(range(4, 6), "B")], Applicability::Safe),
            diagnostic(vec![Edit::replace(range(8, 9), "C")], Applicability::Unsafe),
        ];
        let fixed = apply_fixes(source, &fixes, Applicability::Safe).unwrap();
        assert_eq!(fixed.source, "01A56789");
        let fixed = apply_fixes(source, &fixes, Applicability::Unsafe).unwrap();
        assert_eq!(fixed.source, "01A567C9");
    }

    #[test]
    fn same_offset_insertions_conflict() {
        assert!(conflicts(range(3, 3), range(3, 3)));
        assert!(!conflicts(range(1, 3), range(3, 3)));
        assert!(conflicts(range(1, 5), range(3, 3)));
    }
}
