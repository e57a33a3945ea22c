//! The rule registry: every rule is named here once, with its code, name and doc, and whether
//! it is opt-in (left out of the default selection, enabled only by a selector that names it).

use std::fmt;

macro_rules! define_rules {
    ($( $variant:ident => ($code:literal, $name:literal, $doc:literal $(, $opt_in:ident)?), )*) => {
        /// A lint rule.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, bincode::Encode, bincode::Decode)]
        pub enum Rule { $( $variant, )* }

        impl Rule {
            pub const ALL: &'static [Rule] = &[ $( Rule::$variant, )* ];

            /// `SYNC101`
            pub const fn code(self) -> &'static str {
                match self { $( Rule::$variant => $code, )* }
            }

            /// `item`
            pub const fn name(self) -> &'static str {
                match self { $( Rule::$variant => $name, )* }
            }

            /// The rule's Markdown doc from rules/, embedded in the binary.
            pub const fn doc(self) -> &'static str {
                match self { $( Rule::$variant => include_str!(concat!("../../../rules/", $doc)), )* }
            }

            /// Left out of the default selection: only `select`/`extend-select` with a selector
            /// that matches it (`ALL`, a prefix, its code) enables it, as Ruff's `ALL` does.
            pub const fn is_opt_in(self) -> bool {
                match self { $( Rule::$variant => define_rules!(@opt_in $($opt_in)?), )* }
            }
        }
    };
    (@opt_in) => { false };
    (@opt_in opt_in) => { true };
}

define_rules! {
    Item => ("SYNC101", "item", "SYNC101-item.md"),
    Tolist => ("SYNC102", "tolist", "SYNC102-tolist.md"),
    DeviceToHostCopy => ("SYNC103", "device-to-host-copy", "SYNC103-device-to-host-copy.md"),
    TensorAsNumber => ("SYNC104", "tensor-as-number", "SYNC104-tensor-as-number.md"),
    TensorTruthiness => ("SYNC105", "tensor-truthiness", "SYNC105-tensor-truthiness.md"),
    TensorFormatting => ("SYNC106", "tensor-formatting", "SYNC106-tensor-formatting.md"),
    HostComparison => ("SYNC107", "host-comparison", "SYNC107-host-comparison.md"),
    Nonzero => ("SYNC201", "nonzero", "SYNC201-nonzero.md"),
    Unique => ("SYNC202", "unique", "SYNC202-unique.md"),
    BooleanMaskRead => ("SYNC203", "boolean-mask-read", "SYNC203-boolean-mask-read.md"),
    BooleanMaskWrite => ("SYNC204", "boolean-mask-write", "SYNC204-boolean-mask-write.md"),
    HostIndex => ("SYNC205", "host-index", "SYNC205-host-index.md"),
    SizeFromData => ("SYNC206", "size-from-data", "SYNC206-size-from-data.md"),
    DataDependentShape => ("SYNC207", "data-dependent-shape", "SYNC207-data-dependent-shape.md"),
    MaskedLoss => ("SYNC301", "masked-loss", "SYNC301-masked-loss.md"),
    GradScalerUnfusedOptimizer => ("SYNC302", "grad-scaler-unfused-optimizer", "SYNC302-grad-scaler-unfused-optimizer.md"),
    CheckedLinalg => ("SYNC303", "checked-linalg", "SYNC303-checked-linalg.md"),
    DistributionValidation => ("SYNC304", "distribution-validation", "SYNC304-distribution-validation.md"),
    ClipGradNonfiniteCheck => ("SYNC305", "clip-grad-nonfinite-check", "SYNC305-clip-grad-nonfinite-check.md"),
    CtcLoss => ("SYNC306", "ctc-loss", "SYNC306-ctc-loss.md"),
    NormalSample => ("SYNC307", "normal-sample", "SYNC307-normal-sample.md"),
    BlockingHostToDevice => ("SYNC401", "blocking-host-to-device", "SYNC401-blocking-host-to-device.md"),
    DataloaderWithoutPinMemory => ("SYNC402", "dataloader-without-pin-memory", "SYNC402-dataloader-without-pin-memory.md"),
    ExplicitSynchronize => ("SYNC501", "explicit-synchronize", "SYNC501-explicit-synchronize.md"),
    SerialCollectives => ("SYNC601", "serial-collectives", "SYNC601-serial-collectives.md"),
    BarrierInStep => ("SYNC602", "barrier-in-step", "SYNC602-barrier-in-step.md"),
    UnusedNoqa => ("SYNC900", "unused-noqa", "SYNC900-unused-noqa.md", opt_in),
}

impl Rule {
    pub fn from_code(code: &str) -> Option<Rule> {
        Rule::ALL
            .iter()
            .copied()
            .find(|rule| rule.code().eq_ignore_ascii_case(code))
    }

    /// Its sync reads a tensor's value on the host (SYNC1xx) or sizes a result by it (SYNC2xx):
    /// a function that does so with a value it is given syncs where its callers give it a GPU
    /// tensor. Library calls, copies to the device and barriers sync whatever they are given.
    pub fn reads_the_value(self) -> bool {
        self.code().starts_with("SYNC1") || self.code().starts_with("SYNC2")
    }

    /// The first paragraph of the doc's "What it does" section, on one line.
    pub fn summary(self) -> String {
        let doc = self.doc();
        let section = doc.split("## What it does").nth(1).unwrap_or(doc);
        section
            .trim_start()
            .split("\n\n")
            .next()
            .unwrap_or_default()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Where the rule's doc lives online (Ruff's JSON carries a `url`).
    pub fn url(self) -> String {
        format!(
            "https://github.com/synclint/synclint/blob/main/rules/{}-{}.md",
            self.code(),
            self.name()
        )
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

/// A set of rules, as a bit set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct RuleSet(u64);

impl RuleSet {
    pub fn all() -> Self {
        Rule::ALL.iter().copied().collect()
    }

    /// The rules enabled when nothing is selected: all but the opt-in ones.
    pub fn default_selection() -> Self {
        Rule::ALL.iter().copied().filter(|rule| !rule.is_opt_in()).collect()
    }

    pub fn empty() -> Self {
        RuleSet(0)
    }

    pub fn contains(self, rule: Rule) -> bool {
        self.0 & (1 << rule as u64) != 0
    }

    pub fn insert(&mut self, rule: Rule) {
        self.0 |= 1 << rule as u64;
    }

    pub fn remove(&mut self, rule: Rule) {
        self.0 &= !(1 << rule as u64);
    }

    pub fn iter(self) -> impl Iterator<Item = Rule> {
        Rule::ALL.iter().copied().filter(move |rule| self.contains(*rule))
    }
}

impl FromIterator<Rule> for RuleSet {
    fn from_iter<I: IntoIterator<Item = Rule>>(iter: I) -> Self {
        let mut set = RuleSet::empty();
        for rule in iter {
            set.insert(rule);
        }
        set
    }
}

/// A rule selector: `ALL`, a code (`SYNC101`) or a code prefix (`SYNC1`, `SYNC`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleSelector(String);

impl RuleSelector {
    pub fn parse(text: &str) -> Result<Self, String> {
        let upper = text.trim().to_ascii_uppercase();
        if upper == "ALL" || Rule::ALL.iter().any(|rule| rule.code().starts_with(&upper)) && !upper.is_empty() {
            Ok(RuleSelector(upper))
        } else {
            Err(format!(
                "unknown rule selector `{text}` (expected a code like SYNC101, a prefix like SYNC1, or ALL)"
            ))
        }
    }

    pub fn rules(&self) -> impl Iterator<Item = Rule> + '_ {
        Rule::ALL
            .iter()
            .copied()
            .filter(|rule| self.0 == "ALL" || rule.code().starts_with(&self.0))
    }

    /// More specific selectors win over less specific ones, as in Ruff.
    pub fn specificity(&self) -> usize {
        if self.0 == "ALL" { 0 } else { self.0.len() }
    }
}

impl std::str::FromStr for RuleSelector {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        RuleSelector::parse(s)
    }
}

/// Applies `select` (or the default selection), then `extend_select`, then `ignore`, where a
/// more specific selector beats a less specific one (`--ignore SYNC1 --extend-select SYNC101`
/// keeps SYNC101).
pub fn resolve_rules(
    select: Option<&[RuleSelector]>,
    extend_select: &[RuleSelector],
    ignore: &[RuleSelector],
) -> RuleSet {
    let mut decisions: Vec<(usize, bool, &RuleSelector)> = Vec::new();
    if let Some(select) = select {
        decisions.extend(select.iter().map(|s| (s.specificity(), true, s)))
    }
    decisions.extend(extend_select.iter().map(|s| (s.specificity(), true, s)));
    decisions.extend(ignore.iter().map(|s| (s.specificity(), false, s)));
    // Stable sort by specificity: later (more specific) decisions override earlier ones; at the
    // same specificity, ignore (listed last) wins.
    decisions.sort_by_key(|(specificity, _, _)| *specificity);
    let mut set = if select.is_none() {
        RuleSet::default_selection()
    } else {
        RuleSet::empty()
    };
    for (_, enable, selector) in decisions {
        for rule in selector.rules() {
            if enable { set.insert(rule) } else { set.remove(rule) }
        }
    }
    set
}

#[cfg(test)]
mod tests {
    use super::*;

    fn selectors(list: &[&str]) -> Vec<RuleSelector> {
        list.iter().map(|s| RuleSelector::parse(s).unwrap()).collect()
    }

    fn enables_unused_noqa(select: Option<&[&str]>, extend: &[&str], ignore: &[&str]) -> bool {
        let select = select.map(selectors);
        resolve_rules(select.as_deref(), &selectors(extend), &selectors(ignore)).contains(Rule::UnusedNoqa)
    }

    #[test]
    fn opt_in_rules_need_a_selector_that_matches_them() {
        assert!(!enables_unused_noqa(None, &[], &[]));
        assert!(RuleSet::default_selection().contains(Rule::Item));
        assert!(!enables_unused_noqa(Some(&["SYNC1"]), &[], &[]));
        for selector in ["ALL", "SYNC", "SYNC9", "SYNC900"] {
            assert!(enables_unused_noqa(Some(&[selector]), &[], &[]), "{selector}");
            assert!(enables_unused_noqa(None, &[selector], &[]), "{selector}");
        }
        assert!(!enables_unused_noqa(Some(&["ALL"]), &[], &["SYNC9"]));
        assert!(enables_unused_noqa(None, &["SYNC900"], &["SYNC"]));
        assert_eq!(
            RuleSet::default_selection().iter().count() + 1,
            RuleSet::all().iter().count()
        );
    }
}
