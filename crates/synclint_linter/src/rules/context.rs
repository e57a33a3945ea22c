//! What a rule sees of the file while it runs: the semantic model as it stands at the node, the
//! source, the settings, and the findings reported so far. The traversal builds a
//! [`RuleContext`] for each node it hands to the rules, borrowing its own state; rules never see
//! the traversal itself, so they cannot change how the file is walked or what the model binds.
//!
//! May import: the semantic model, diagnostics, the registry and the rules' shared edit helpers.

use std::rc::Rc;

use ruff_python_ast::{self as ast, Stmt};
use ruff_text_size::{Ranged, TextRange, TextSize};

use super::dataloader_without_pin_memory::LoaderLog;
use crate::diagnostic::{Diagnostic, Fix};
use crate::registry::{Rule, RuleSet};
use crate::semantic::{HotContext, SemanticModel};

/// What the rules have found in the file so far, owned by the traversal between nodes.
#[derive(Default)]
pub struct Findings {
    pub diagnostics: Vec<Diagnostic>,
    /// Findings at calls that reach a sync in another function (rule, end), with that sync and
    /// its place: a caller of this function is told of that sync, not of the call.
    pub(crate) deeper_syncs: Vec<(Rule, TextSize, Box<str>)>,
    /// SYNC402's record of the file's loaders and of the batches copied from them, reported
    /// when the file is done (see [`super::dispatch::end_of_file`]).
    pub loaders: LoaderLog,
}

/// A rule's view of the file at one node.
pub struct RuleContext<'r, 'a> {
    model: &'r SemanticModel<'a>,
    source: &'a str,
    rules: &'r RuleSet,
    module_body: &'a [Stmt],
    findings: &'r mut Findings,
}

impl<'r, 'a> RuleContext<'r, 'a> {
    #[inline]
    pub fn new(
        model: &'r SemanticModel<'a>,
        source: &'a str,
        rules: &'r RuleSet,
        module_body: &'a [Stmt],
        findings: &'r mut Findings,
    ) -> Self {
        RuleContext {
            model,
            source,
            rules,
            module_body,
            findings,
        }
    }

    /// The semantic model at the node. Reading a value's kind through it while a rule runs
    /// records what the answer depended on (see the model's demand tracing).
    pub fn model(&self) -> &'r SemanticModel<'a> {
        self.model
    }

    pub fn source(&self) -> &'a str {
        self.source
    }

    /// The source text of a node.
    pub fn slice(&self, ranged: impl Ranged) -> &'a str {
        &self.source[ranged.range()]
    }

    pub fn enabled(&self, rule: Rule) -> bool {
        self.rules.contains(rule)
    }

    /// Whether anything reported here could ever be shown.
    pub fn is_cold(&self) -> bool {
        self.model.is_cold()
    }

    /// Records a finding in the current flow context; findings in cold code are dropped now.
    pub fn report(&mut self, mut diagnostic: Diagnostic) {
        let context = self.model.context();
        if context == HotContext::Cold || !self.enabled(diagnostic.rule) {
            return;
        }
        self.model.ask_given_guards();
        diagnostic.context = context;
        self.findings.diagnostics.push(diagnostic);
    }

    /// The qualified name of what `call` calls (`torch.nn.functional.cross_entropy`).
    pub fn callee(&self, call: &ast::ExprCall) -> Option<Rc<str>> {
        self.model.callee(call)
    }

    /// The module's top-level statements (to place a new import).
    pub(crate) fn module_body(&self) -> &'a [Stmt] {
        self.module_body
    }

    /// The body of the function being checked, or the module's for top-level code: where a
    /// fix following a local value across statements looks.
    pub(crate) fn enclosing_body(&self) -> &'a [Stmt] {
        self.model
            .current_function()
            .map_or(self.module_body, |function| &function.def.body)
    }

    /// Gives the finding `rule` reported at `range` a fix (a rule that sees the fixable shape
    /// only at a parent node). Not where the fix would delete a comment.
    pub(crate) fn attach_fix(&mut self, rule: Rule, range: TextRange, title: String, fix: Fix) {
        if super::edits::drops_comment(self.source, &fix.edits) {
            return;
        }
        if let Some(diagnostic) = self
            .findings
            .diagnostics
            .iter_mut()
            .rev()
            .find(|d| d.rule == rule && d.range == range && d.fix.is_none())
        {
            diagnostic.fix_title = Some(title);
            diagnostic.fix = Some(fix);
        }
    }

    /// Reports a call that reaches `sync` (what syncs and where) in the function it calls.
    pub(crate) fn report_deeper_sync(&mut self, diagnostic: Diagnostic, sync: &str) {
        self.findings
            .deeper_syncs
            .push((diagnostic.rule, diagnostic.range.end(), sync.into()));
        self.report(diagnostic);
    }

    /// Drops the finding `rule` reported at `range`: a more specific rule reports the same
    /// sync with a better rewrite.
    pub(crate) fn supersede(&mut self, rule: Rule, range: TextRange) {
        self.findings
            .diagnostics
            .retain(|d| !(d.rule == rule && d.range == range));
    }
}
