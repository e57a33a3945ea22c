//! Applying fixes: non-overlapping edits, every other byte kept, in passes until nothing changes.

use ruff_text_size::{TextRange, TextSize};

use crate::diagnostic::{Applicability, Diagnostic, Edit};
use crate::parse::{SourceKind, parses_cleanly};
use crate::registry::Rule;

/// The result of one pass of fixes over a source.
pub struct FixedSource {
    pub source: String,
    pub applied: Vec<Rule>,
    /// The boundaries, where they are in the fixed source.
    pub boundaries: Vec<TextSize>,
    /// Where the source's text is in the fixed source.
    pub moves: Moves,
}

/// Where the text before a pass of edits is in the text after it: each edit's range in the text
/// before (sorted, none overlapping) and the length of what replaced it.
pub struct Moves(Vec<(TextRange, TextSize)>);

impl Moves {
    fn of(edits: &[&Edit]) -> Moves {
        Moves(
            edits
                .iter()
                .map(|edit| (edit.range, TextSize::of(edit.content.as_str())))
                .collect(),
        )
    }

    /// Where the text at `offset` is after the edits: moved by what the edits before it added or
    /// removed (text inserted at `offset` is before it). `None` where an edit replaced it.
    pub fn offset(&self, offset: TextSize) -> Option<TextSize> {
        let mut moved = i64::from(u32::from(offset));
        for &(range, length) in &self.0 {
            if range.start() > offset {
                break;
            }
            // An edit starting at `offset` replaces it, unless it only inserts text before it.
            if range.end() > offset {
                return None;
            }
            moved += i64::from(u32::from(length)) - i64::from(u32::from(range.len()));
        }
        u32::try_from(moved).ok().map(TextSize::from)
    }
}

/// Applies every fix at or above `minimum` applicability that does not overlap an earlier one
/// (sorted by position) nor cross one of `boundaries` (sorted offsets no edit may span: where a
/// notebook's cells start). Returns `None` when nothing applies. Skipped fixes are picked up by
/// the next pass, after the file is checked again.
pub fn apply_fixes<'d>(
    source: &str,
    diagnostics: impl IntoIterator<Item = &'d Diagnostic>,
    minimum: Applicability,
    boundaries: &[TextSize],
) -> Option<FixedSource> {
    let mut fixes: Vec<(&Diagnostic, Vec<&Edit>)> = diagnostics
        .into_iter()
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
        let out_of_bounds = edits.iter().any(|edit| {
            edit.range.end().to_usize() > source.len()
                || !source.is_char_boundary(edit.range.start().to_usize())
                || !source.is_char_boundary(edit.range.end().to_usize())
        });
        // Within one fix the order is known (sorted by start, an insertion first), so an
        // insertion may sit at the start of a replacement; overlaps still conflict.
        let own_overlap = edits.windows(2).any(|pair| {
            let (a, b) = (pair[0].range, pair[1].range);
            conflicts(a, b) && !(a.is_empty() && !b.is_empty() && a.start() == b.start())
        });
        let crosses = edits.iter().any(|edit| {
            let inside = boundaries.partition_point(|&b| b <= edit.range.start());
            boundaries.get(inside).is_some_and(|&b| b < edit.range.end())
        });
        if out_of_bounds
            || own_overlap
            || crosses
            || edits.iter().any(|edit| taken.iter().any(|t| conflicts(*t, edit.range)))
        {
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
    let (source, boundaries) = apply_edits(source, &accepted, boundaries);
    Some(FixedSource {
        source,
        applied,
        boundaries,
        moves: Moves::of(&accepted),
    })
}

/// `source` with `edits` (sorted, none overlapping) applied, and where `boundaries` are in the
/// result: a boundary moves by what the edits before it added or removed, and text inserted at
/// a boundary starts the part after it (a line inserted at the top of a cell is in that cell).
pub fn apply_edits(source: &str, edits: &[&Edit], boundaries: &[TextSize]) -> (String, Vec<TextSize>) {
    let mut output = String::with_capacity(source.len() + 64);
    let mut last = TextSize::from(0);
    for edit in edits {
        output.push_str(&source[TextRange::new(last, edit.range.start())]);
        output.push_str(&edit.content);
        last = edit.range.end();
    }
    output.push_str(&source[last.to_usize()..]);
    // One sweep over both (sorted; the edits, not overlapping, end in order too): a boundary
    // moves by what the edits before it added or removed.
    let (mut added, mut removed, mut next) = (0, 0, 0);
    let boundaries = boundaries
        .iter()
        .map(|&boundary| {
            while let Some(edit) = edits.get(next).filter(|edit| {
                edit.range.end() <= boundary && !(edit.range.is_empty() && edit.range.start() == boundary)
            }) {
                added += edit.content.len();
                removed += edit.range.len().to_usize();
                next += 1;
            }
            // The edits before it replace no more than the text before it.
            TextSize::try_from(boundary.to_usize() + added - removed).unwrap_or(boundary)
        })
        .collect();
    (output, boundaries)
}

/// Why [`fix_in_passes`] gave up; the source is then left as it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FixFailure {
    /// A pass produced code with a syntax error.
    DoesNotParse,
    /// Fixes still applied after this many passes.
    NotConverged(usize),
}

/// A source to fix: its text, its kind (each pass must parse as one), and the offsets no edit
/// may cross, sorted (where a notebook's cells start; none in a Python file).
pub struct FixTarget<'s> {
    pub source: &'s str,
    pub kind: SourceKind,
    pub boundaries: Vec<TextSize>,
}

/// A source after [`fix_in_passes`]: the fixed text and where its boundaries are in it, the rule
/// of every fix applied, and the findings of the fixed text.
pub struct Fixed<T> {
    pub source: String,
    pub boundaries: Vec<TextSize>,
    pub applied: Vec<Rule>,
    pub remaining: Vec<T>,
}

/// Applies fixes in passes until nothing changes: after each pass the new source must parse
/// cleanly, and `relint` checks it again (with where its boundaries are now, and where the
/// pass moved the text it was given) for the next pass's findings. `findings` are those of the target's source; `diagnostic` picks a finding's
/// diagnostic. At most `max_passes` passes may change the source.
pub fn fix_in_passes<T>(
    target: FixTarget,
    findings: Vec<T>,
    minimum: Applicability,
    max_passes: usize,
    diagnostic: impl Fn(&T) -> &Diagnostic,
    mut relint: impl FnMut(&str, &[TextSize], &Moves) -> Vec<T>,
) -> Result<Fixed<T>, FixFailure> {
    let mut current = target.source.to_string();
    let mut boundaries = target.boundaries;
    let mut remaining = findings;
    let mut applied = Vec::new();
    for pass in 0..=max_passes {
        let Some(fixed) = apply_fixes(&current, remaining.iter().map(&diagnostic), minimum, &boundaries) else {
            break;
        };
        if fixed.source == current {
            // Fixes that change nothing: done.
            break;
        }
        if pass == max_passes {
            return Err(FixFailure::NotConverged(max_passes));
        }
        if !parses_cleanly(&fixed.source, target.kind) {
            return Err(FixFailure::DoesNotParse);
        }
        applied.extend(fixed.applied);
        remaining = relint(&fixed.source, &fixed.boundaries, &fixed.moves);
        current = fixed.source;
        boundaries = fixed.boundaries;
    }
    Ok(Fixed {
        source: current,
        boundaries,
        applied,
        remaining,
    })
}

/// Two edits conflict when their ranges overlap, or both insert at the same offset (their order
/// would be ambiguous).
fn conflicts(a: TextRange, b: TextRange) -> bool {
    (a.start() < b.end() && b.start() < a.end())
        || (a.start() == b.start() && (a.is_empty() || b.is_empty()))
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

    fn python(source: &str) -> FixTarget<'_> {
        FixTarget {
            source,
            kind: SourceKind::Python,
            boundaries: Vec::new(),
        }
    }

    fn range(a: u32, b: u32) -> TextRange {
        TextRange::new(a.into(), b.into())
    }

    #[test]
    fn keeps_bytes_outside_edits() {
        let source = "a = 1\r\n\tb = 2\r\n";
        let fixed = apply_fixes(
            source,
            &[diagnostic(vec![Edit::replace(range(4, 5), "x")], Applicability::Safe)],
            Applicability::Safe,
            &[],
        )
        .unwrap();
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
        let fixed = apply_fixes(source, &fixes, Applicability::Safe, &[]).unwrap();
        assert_eq!(fixed.source, "01A56789");
        let fixed = apply_fixes(source, &fixes, Applicability::Unsafe, &[]).unwrap();
        assert_eq!(fixed.source, "01A567C9");
    }

    #[test]
    fn an_insertion_before_a_replacement_of_the_same_fix() {
        // `import torch` inserted where the replaced statement starts: both apply, in order.
        let fix = diagnostic(
            vec![
                Edit::replace(range(0, 8), "torch._assert_async(t)"),
                Edit::insert(TextSize::from(0), "import torch\n"),
            ],
            Applicability::Unsafe,
        );
        let fixed = apply_fixes("assert t\n", &[fix], Applicability::Unsafe, &[]).unwrap();
        assert_eq!(fixed.source, "import torch\ntorch._assert_async(t)\n");
        // Two insertions at one offset in one fix are still ambiguous.
        let fix = diagnostic(
            vec![
                Edit::insert(TextSize::from(0), "a"),
                Edit::insert(TextSize::from(0), "b"),
            ],
            Applicability::Safe,
        );
        assert!(apply_fixes("x\n", &[fix], Applicability::Safe, &[]).is_none());
    }

    #[test]
    fn offsets_move_with_the_edits_before_them() {
        // `a = x.cuda()\nb = f(y)\n`: `non_blocking=True` inserted in the first call, the second
        // line's `b` renamed.
        let source = "a = x.cuda()\nb = f(y)\n";
        let fixed = apply_fixes(
            source,
            &[
                diagnostic(
                    vec![Edit::insert(TextSize::from(11), "non_blocking=True")],
                    Applicability::Safe,
                ),
                replacing(13, 14, "bb"),
            ],
            Applicability::Safe,
            &[],
        )
        .unwrap();
        assert_eq!(fixed.source, "a = x.cuda(non_blocking=True)\nbb = f(y)\n");
        let moved = |at: u32| fixed.moves.offset(TextSize::from(at)).map(u32::from);
        // Before every edit, and the call the insertion is inside of, which starts before it.
        assert_eq!(moved(4), Some(4));
        // Where text was inserted: the text there follows the insertion.
        assert_eq!(moved(11), Some(28));
        // What an edit replaced is gone; after it, the text moved by both edits.
        assert_eq!(moved(13), None);
        assert_eq!(moved(17), Some(35));
        assert_eq!(&fixed.source[35..39], "f(y)");
    }

    #[test]
    fn same_offset_insertions_conflict() {
        assert!(conflicts(range(3, 3), range(3, 3)));
        assert!(!conflicts(range(1, 3), range(3, 3)));
        assert!(conflicts(range(1, 5), range(3, 3)));
    }

    /// A finding whose fix replaces `range` of whatever source it is applied to.
    fn replacing(a: u32, b: u32, text: &str) -> Diagnostic {
        diagnostic(vec![Edit::replace(range(a, b), text)], Applicability::Safe)
    }

    #[test]
    fn passes_until_nothing_changes() {
        // Pass 1 renames `a`, pass 2 (the re-check) renames `b`, then nothing is left.
        let mut checks = 0;
        let fixed = fix_in_passes(
            python("a = 1\nb = 2\n"),
            vec![replacing(0, 1, "x")],
            Applicability::Safe,
            10,
            |d| d,
            |source, _, _| {
                checks += 1;
                if source.starts_with('x') && source.contains('b') {
                    vec![replacing(6, 7, "y")]
                } else {
                    Vec::new()
                }
            },
        )
        .unwrap();
        assert_eq!(fixed.source, "x = 1\ny = 2\n");
        assert_eq!(fixed.applied, vec![Rule::Item, Rule::Item]);
        assert!(fixed.remaining.is_empty());
        assert_eq!(checks, 2);
    }

    #[test]
    fn refuses_a_fix_that_does_not_parse() {
        assert!(crate::parse::parses_cleanly("a = 1\n", SourceKind::Python));
        let broken = fix_in_passes(
            python("a = 1\n"),
            vec![replacing(4, 5, "(")],
            Applicability::Safe,
            10,
            |d| d,
            |_, _, _| Vec::new(),
        );
        assert_eq!(broken.err(), Some(FixFailure::DoesNotParse));
        // The same edit is fine on its own: it is the pass's result that is checked.
        let fixed = apply_fixes("a = 1\n", &[replacing(4, 5, "(")], Applicability::Safe, &[]).unwrap();
        assert!(!crate::parse::parses_cleanly(&fixed.source, SourceKind::Python));
    }

    #[test]
    fn reports_fixes_that_never_settle() {
        // Each pass flips `0` and `1`: never converges.
        let flip = |source: &str, _: &[TextSize], _: &Moves| {
            let next = if source.starts_with("a = 0") { "1" } else { "0" };
            vec![replacing(4, 5, next)]
        };
        let result = fix_in_passes(
            python("a = 0\n"),
            flip("a = 0", &[], &Moves(Vec::new())),
            Applicability::Safe,
            10,
            |d| d,
            flip,
        );
        assert_eq!(result.err(), Some(FixFailure::NotConverged(10)));
    }

    #[test]
    fn a_fix_that_changes_nothing_converges() {
        let same = |_: &str, _: &[TextSize], _: &Moves| vec![replacing(4, 5, "1")];
        let fixed = fix_in_passes(
            python("a = 1\n"),
            same("a = 1", &[], &Moves(Vec::new())),
            Applicability::Safe,
            10,
            |d| d,
            same,
        )
        .unwrap();
        assert_eq!(fixed.source, "a = 1\n");
        assert!(fixed.applied.is_empty());
    }

    #[test]
    fn unsafe_fixes_wait_for_unsafe_minimum() {
        let unsafe_fix = || vec![diagnostic(vec![Edit::replace(range(4, 5), "2")], Applicability::Unsafe)];
        let fixed = fix_in_passes(
            python("a = 1\n"),
            unsafe_fix(),
            Applicability::Safe,
            10,
            |d| d,
            |_, _, _| unsafe_fix(),
        )
        .unwrap();
        assert_eq!(fixed.source, "a = 1\n");
        let fixed = fix_in_passes(
            python("a = 1\n"),
            unsafe_fix(),
            Applicability::Unsafe,
            10,
            |d| d,
            |_, _, _| Vec::new(),
        )
        .unwrap();
        assert_eq!(fixed.source, "a = 2\n");
    }

    #[test]
    fn edits_in_one_fix_apply_together() {
        // Two findings: the second's edits overlap the first's, so none of its edits apply.
        let first = diagnostic(
            vec![Edit::replace(range(0, 1), "x"), Edit::insert(range(6, 6).start(), "# ")],
            Applicability::Safe,
        );
        let second = diagnostic(
            vec![Edit::replace(range(0, 1), "y"), Edit::replace(range(10, 11), "9")],
            Applicability::Safe,
        );
        let fixed = apply_fixes("a = 1\nb = 2\n", &[first, second], Applicability::Safe, &[]).unwrap();
        assert_eq!(fixed.source, "x = 1\n# b = 2\n");
        assert_eq!(fixed.applied.len(), 1);
    }

    #[test]
    fn keeps_multibyte_text_and_a_bom() {
        let source = "\u{feff}s = 'é'\r\nt = 1";
        let at = source.find('1').unwrap() as u32;
        let fixed = apply_fixes(source, &[replacing(at, at + 1, "2")], Applicability::Safe, &[]).unwrap();
        assert_eq!(fixed.source, "\u{feff}s = 'é'\r\nt = 2");
    }

    #[test]
    fn no_edit_crosses_a_boundary_and_boundaries_move_with_the_text() {
        // Two cells, `a = 1\n` and `b = 2\n`: the second starts at 6.
        let source = "a = 1\nb = 2\n";
        let across = replacing(4, 8, "X");
        let inserted = diagnostic(
            vec![Edit::insert(TextSize::from(6), "import torch\n")],
            Applicability::Safe,
        );
        let shortened = replacing(0, 5, "a=1");
        let fixed = apply_fixes(
            source,
            &[across, inserted, shortened],
            Applicability::Safe,
            &[TextSize::from(6)],
        )
        .unwrap();
        assert_eq!(fixed.source, "a=1\nimport torch\nb = 2\n");
        assert_eq!(fixed.applied.len(), 2);
        // The insertion at the boundary starts the second cell.
        assert_eq!(fixed.boundaries, vec![TextSize::from(4)]);
    }
}
