//! SYNC900: `# noqa` codes that suppress nothing. Unlike the other rules it reads no syntax: it
//! runs once the file's findings are known, on its directives with the codes that suppressed one
//! marked ([`crate::noqa::NoqaMap`]).

use ruff_text_size::{TextRange, TextSize};

use crate::diagnostic::{Diagnostic, Edit, Fix};
use crate::lines::Lines;
use crate::noqa::{Directive, NoqaDirective, code_covers};
use crate::registry::{Rule, RuleSet};
use crate::render::plural;
use crate::semantic::HotContext;

/// What becomes of one listed code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    /// It suppressed a finding, is another tool's (`E501`), or names only rules not enabled
    /// for this file: no finding of theirs was looked for, so whether one is there is unknown.
    Kept,
    /// It names enabled rules, and no finding of theirs is on its line (or in its file).
    Unused,
    /// A `SYNC` code that names no rule, not even as a prefix.
    Unknown,
}

fn verdict(code: &str, used: bool, rules: RuleSet) -> Verdict {
    if used || !code.starts_with("SYNC") {
        return Verdict::Kept;
    }
    let mut named = Rule::ALL.iter().filter(|rule| code_covers(code, **rule)).peekable();
    if named.peek().is_none() {
        Verdict::Unknown
    } else if named.any(|rule| rules.contains(*rule)) {
        Verdict::Unused
    } else {
        Verdict::Kept
    }
}

/// A finding for each directive with codes that suppress nothing, whose safe fix removes them
/// (the whole directive when no code is left). A blanket `# noqa` is every tool's, and a
/// directive that lists SYNC900 itself (or a prefix of it) opts out: neither is judged.
pub fn unused_noqa(source: &str, lines: &Lines, directives: &[NoqaDirective], rules: RuleSet) -> Vec<Diagnostic> {
    directives
        .iter()
        .filter(|directive| !directive.directive.covers(Rule::UnusedNoqa))
        .filter_map(|directive| judge(source, lines, directive, rules))
        .collect()
}

fn judge(source: &str, lines: &Lines, directive: &NoqaDirective, rules: RuleSet) -> Option<Diagnostic> {
    let Directive::Codes(codes) = &directive.directive else {
        return None;
    };
    let verdicts: Vec<Verdict> = codes
        .iter()
        .zip(&directive.used)
        .map(|(code, used)| verdict(code, *used, rules))
        .collect();
    let written = |wanted: Verdict| -> Vec<&str> {
        directive
            .code_ranges
            .iter()
            .zip(&verdicts)
            .filter(|(_, verdict)| **verdict == wanted)
            .map(|(range, _)| &source[*range])
            .collect()
    };
    let (unused, unknown) = (written(Verdict::Unused), written(Verdict::Unknown));
    if unused.is_empty() && unknown.is_empty() {
        return None;
    }
    let mut parts = Vec::new();
    if !unused.is_empty() {
        parts.push(format!("unused: {}", unused.join(", ")));
    }
    if !unknown.is_empty() {
        parts.push(format!("unknown code{}: {}", plural(unknown.len()), unknown.join(", ")));
    }
    let (name, scope) = if directive.file_level {
        ("`# synclint: noqa`", "in this file")
    } else {
        ("`# noqa`", "on this line")
    };
    let message = format!(
        "{name} lists codes that suppress nothing {scope} ({})",
        parts.join("; ")
    );
    let mut reasons = Vec::new();
    if !unused.is_empty() {
        reasons.push(format!("a stale code would hide the next finding of its rule {scope}"));
    }
    if !unknown.is_empty() {
        reasons.push("an unknown code names no synclint rule (a typo, or a renumbered rule?)".to_string());
    }
    let pronoun = if unused.len() + unknown.len() == 1 {
        "it"
    } else {
        "them"
    };
    let help = format!("remove {pronoun}: {}", reasons.join("; "));
    let removed: Vec<bool> = verdicts.iter().map(|verdict| *verdict != Verdict::Kept).collect();
    let (title, edits) = if removed.iter().all(|removed| *removed) {
        (
            format!("Remove the {name} directive"),
            vec![delete_directive(source, lines, directive)],
        )
    } else {
        let gone: Vec<&str> = unused.iter().chain(&unknown).copied().collect();
        (
            format!("Remove {} from the list", gone.join(", ")),
            delete_codes(&directive.code_ranges, &removed),
        )
    };
    let mut diagnostic =
        Diagnostic::new(Rule::UnusedNoqa, directive.range, message, help).with_fix(title, Fix::safe(edits));
    diagnostic.context = HotContext::Anywhere;
    diagnostic.noqa_row = lines.row(directive.range.start()) as u32;
    Some(diagnostic)
}

/// Deletes the codes marked `removed` (some, not all) with one separator each, so the codes
/// kept keep the separators written between them: `SYNC101, E501` becomes `E501`, and
/// `E501, SYNC101` becomes `E501`.
fn delete_codes(codes: &[TextRange], removed: &[bool]) -> Vec<Edit> {
    let mut edits = Vec::new();
    let mut index = 0;
    while index < codes.len() {
        if !removed[index] {
            index += 1;
            continue;
        }
        let first = index;
        while index < codes.len() && removed[index] {
            index += 1;
        }
        let range = if first > 0 {
            // From the end of the code kept before the run.
            TextRange::new(codes[first - 1].end(), codes[index - 1].end())
        } else {
            // At the head of the list: up to the first code kept.
            TextRange::new(codes[first].start(), codes[index].start())
        };
        edits.push(Edit::delete(range));
    }
    edits
}

/// Deletes a directive: its whole line where the line holds nothing else, else the directive
/// with the blanks it leaves, keeping the rest of its comment a comment.
fn delete_directive(source: &str, lines: &Lines, directive: &NoqaDirective) -> Edit {
    let blank = |c: char| matches!(c, ' ' | '\t' | '\x0c');
    let start = directive.range.start();
    let line_start = lines.line_start(start);
    let before = source[TextRange::new(line_start, start)].trim_end_matches(blank);
    let after = source[TextRange::new(directive.range.end(), directive.comment_end)].trim_start_matches(blank);
    let after_start = directive.comment_end - TextSize::of(after);
    let range = match (before.is_empty(), after) {
        // A line of its own, line ending and all.
        (true, "") => TextRange::new(line_start, lines.line_end(start)),
        // `x = 1  # noqa: SYNC101`, `x  # type: ignore  # noqa: SYNC101`: up to the line end.
        (false, "") => TextRange::new(line_start + TextSize::of(before), directive.comment_end),
        // `# noqa: SYNC101  # why`: the next comment takes its place.
        (_, after) if after.starts_with('#') => TextRange::new(start, after_start),
        // `# noqa: SYNC101 why`: `# why` stays.
        _ => TextRange::new(directive.keyword, after_start),
    };
    Edit::delete(range)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::noqa::NoqaMap;

    /// `source` with every SYNC900 fix applied, where SYNC101 (`Item`) findings on the lines
    /// `suppressed` were suppressed, and SYNC101 and SYNC203 are enabled.
    fn fixed(source: &str, suppressed: &[u32]) -> String {
        let lines = Lines::new(source);
        let parsed = crate::parse::parse(source, crate::parse::SourceKind::Python);
        let mut map = NoqaMap::from_comments(source, parsed.comments(), &lines);
        for line in suppressed {
            assert!(map.suppresses(Rule::Item, *line));
        }
        let rules: RuleSet = [Rule::Item, Rule::BooleanMaskRead, Rule::UnusedNoqa]
            .into_iter()
            .collect();
        let found = unused_noqa(source, &lines, map.directives(), rules);
        crate::fix::apply_fixes(source, &found, crate::diagnostic::Applicability::Safe, &[])
            .map_or_else(|| source.to_string(), |fixed| fixed.source)
    }

    #[test]
    fn unused_codes_go_and_the_others_stay_as_written() {
        assert_eq!(
            fixed("x = 1  # noqa: SYNC101, SYNC203\n", &[1]),
            "x = 1  # noqa: SYNC101\n"
        );
        assert_eq!(
            fixed("x = 1  # noqa:SYNC203,SYNC101\n", &[1]),
            "x = 1  # noqa:SYNC101\n"
        );
        assert_eq!(fixed("x = 1  # noqa: E501, SYNC101\n", &[]), "x = 1  # noqa: E501\n");
        assert_eq!(
            fixed("x = 1  # NOQA: SYNC203 E501 SYNC999 F401  why\n", &[]),
            "x = 1  # NOQA: E501 F401  why\n"
        );
    }

    #[test]
    fn a_directive_left_without_codes_goes_with_its_blanks() {
        assert_eq!(fixed("x = 1  # noqa: SYNC101\n", &[]), "x = 1\n");
        assert_eq!(fixed("x = 1\t#noqa:SYNC1\r\ny = 2\r\n", &[]), "x = 1\r\ny = 2\r\n");
        assert_eq!(
            fixed("x = 1  # type: ignore  # noqa: SYNC101\n", &[]),
            "x = 1  # type: ignore\n"
        );
        assert_eq!(fixed("x = 1  # noqa: SYNC101  # why\n", &[]), "x = 1  # why\n");
        assert_eq!(fixed("x = 1  # noqa: SYNC101 why\n", &[]), "x = 1  # why\n");
        assert_eq!(fixed("a = 1\n    # noqa: SYNC203\nb = 2", &[]), "a = 1\nb = 2");
        assert_eq!(fixed("# synclint: noqa: SYNC101\nx = 1\n", &[]), "x = 1\n");
        assert_eq!(
            fixed("# synclint: noqa: SYNC101, SYNC203\nx = 1  # noqa: SYNC101\n", &[2]),
            "# synclint: noqa: SYNC101\nx = 1  # noqa: SYNC101\n"
        );
    }

    #[test]
    fn blanket_foreign_disabled_and_opted_out_directives_stay() {
        for source in [
            "x = 1  # noqa\n",
            "x = 1  # noqa: E501\n",
            "x = 1  # noqa: SYNC601\n",
            "x = 1  # noqa: SYNC6\n",
            "x = 1  # noqa: SYNC101, SYNC900\n",
            "x = 1  # noqa: SYNC9, SYNC999\n",
            "# synclint: noqa\nx = 1\n",
            "x = 1  # noqa: SYNC101\n",
        ] {
            let suppressed: &[u32] = if source.ends_with("SYNC101\n") { &[1] } else { &[] };
            assert_eq!(fixed(source, suppressed), source);
        }
    }

    #[test]
    fn messages_name_unused_and_unknown_codes() {
        let source = "x = 1  # noqa: SYNC101, SYNC999, sync3099\n";
        let lines = Lines::new(source);
        let parsed = crate::parse::parse(source, crate::parse::SourceKind::Python);
        let map = NoqaMap::from_comments(source, parsed.comments(), &lines);
        let found = unused_noqa(source, &lines, map.directives(), RuleSet::all());
        assert_eq!(found.len(), 1);
        assert_eq!(
            found[0].message,
            "`# noqa` lists codes that suppress nothing on this line (unused: SYNC101; unknown codes: SYNC999, sync3099)"
        );
        assert_eq!(&source[found[0].range], "# noqa: SYNC101, SYNC999, sync3099");
        assert_eq!((found[0].noqa_row, found[0].context), (1, HotContext::Anywhere));
    }
}
