//! One pass over a file: it updates the semantic model as it goes (bindings, kinds, the flow
//! context) and runs the enabled rules at each node against the model's state there, leaving the
//! file's summary for the project pass.
//!
//! Function bodies are analysed after the code that defines them (so module-level globals
//! assigned later are visible, as at run time), or earlier, on demand, when a call needs the
//! function's return kind.
//!
//! The pass is one type, [`Checker`], whose methods live by concern:
//! - [`traversal`]: the walk, in Python's order of evaluation, and where the rules run;
//! - [`functions`]: defining functions and classes, and analysing a body inside its own
//!   [`frame`];
//! - [`bind`]: binding names to kinds (assignments, imports, loop targets, `self.<attr>`);
//! - [`calls`]: what a call reaches, in the file or the project, and what it passes;
//! - [`narrowing`]: what a test tells inside its arm;
//! - [`arms`]: whether the arm a test selects runs on a CUDA step at all;
//! - [`step_loops`]: which loops run every step (batches, steps, decoding);
//! - [`recorder`]: the file's summary for the project pass.
//!
//! The predicates that read the syntax tree alone are in [`crate::syntax`]. Rules never see the
//! checker: it hands them a [`RuleContext`] at each node.

mod arms;
mod bind;
mod calls;
mod frame;
mod functions;
mod held;
mod narrowing;
mod recorder;
mod step_loops;
mod traversal;

use ruff_python_ast::name::Name;
use ruff_python_ast::visitor::Visitor;
use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::{Ranged, TextRange, TextSize};
use rustc_hash::FxHashMap;

use self::arms::TestDecision;
use self::frame::FunctionFrame;
use self::recorder::SummaryRecorder;
use crate::diagnostic::Diagnostic;
use crate::lines::Lines;
use crate::nesting::MAX_NESTING;
use crate::registry::RuleSet;
use crate::rules::{Findings, RuleContext};
use crate::semantic::{
    CallArguments, Callee, ClassId, FileFacts, FileSummary, Kind, Question, SemanticModel, slot_bit,
};

/// What the checker needs from the settings.
pub struct CheckOptions<'s> {
    pub rules: &'s RuleSet,
    /// Extra function names (or `Class.method`) to treat as hot.
    pub hot_functions: &'s [String],
    /// What the project knows about the file.
    pub facts: &'s FileFacts,
    /// Record calls in cold code too (module level, setup), for the whole call graph.
    pub every_call: bool,
    /// A test file: nothing in it is hot.
    pub test_code: bool,
}

/// The kinds a call passes, as the callee's parameters see them: `skip` leading positional
/// arguments are not parameters of `params` (the instance of `Class.method(obj, x)`).
struct PassedArguments<'c> {
    arguments: &'c CallArguments,
    skip: usize,
}

/// The tree levels on the stack (see [`Checker::levels`]) past which no function is analysed on
/// demand: a tenth of the deepest tree a file may have, far above what real code nests (a call
/// inside a few statements and expressions, a few functions deep), so that the deepest tree
/// still fits above it.
const ON_DEMAND_LEVELS: u32 = (MAX_NESTING / 10) as u32;

pub struct Checker<'a> {
    model: SemanticModel<'a>,
    source: &'a str,
    lines: &'a Lines<'a>,
    options: &'a CheckOptions<'a>,
    module_body: &'a [Stmt],
    /// What the rules found so far.
    findings: Findings,
    /// What the walk learnt of the function being analysed.
    frame: FunctionFrame,
    /// The parts of the file's summary recorded as the walk goes.
    recorder: SummaryRecorder,
    /// What deciding the test being decided consulted.
    decision: TestDecision<'a>,
    /// What `self.<attr>(...)` calls by the file's constructions of the class, by (class,
    /// attribute), found when first needed (see [`Checker::constructed_callees`]).
    constructed: std::cell::RefCell<FxHashMap<(ClassId, Name), Vec<Callee>>>,
    /// Where the function a call being visited is named (`obj.method` of `obj.method(x)`): no
    /// property read.
    called: TextRange,
    /// The statements and compound expressions being visited now, counted across the
    /// functions analysed inside one another (a function analysed on demand is visited inside
    /// the visit of the call that asked): what the stack holds, in tree levels.
    levels: u32,
}

/// Everything checking a file produced.
pub struct CheckResult {
    pub diagnostics: Vec<Diagnostic>,
    pub summary: FileSummary,
}

pub fn check_module<'a>(
    module: &'a ast::ModModule,
    source: &'a str,
    lines: &'a Lines<'a>,
    options: &'a CheckOptions<'a>,
) -> CheckResult {
    let mut checker = Checker {
        model: SemanticModel::new(options.facts),
        source,
        lines,
        options,
        module_body: &module.body,
        findings: Findings::default(),
        frame: FunctionFrame::default(),
        recorder: SummaryRecorder::default(),
        decision: TestDecision::default(),
        constructed: Default::default(),
        called: TextRange::default(),
        levels: 0,
    };
    checker.model.test_code = options.test_code;
    checker.visit_body(&module.body);
    checker.note_instance_setters();
    // Functions nobody called during the pass: first those whose callers the project knows,
    // then those hot by themselves, so the helpers they call are analysed with the arguments
    // they pass; then the rest (nested ones get appended).
    let facts = options.facts;
    for intrinsic_pass in [false, true] {
        for id in 0..checker.model.functions.len() {
            let function = &checker.model.functions[id];
            let first = if intrinsic_pass {
                function.intrinsic.is_some()
            } else {
                facts.parameters.contains_key(&*function.qualname)
            };
            if first {
                checker.ensure_analyzed(id as u32);
            }
        }
    }
    // The rest last to first: helpers are usually defined before the code that calls them,
    // so a caller analysed first hands its arguments to the helpers it calls.
    let defined = checker.model.functions.len();
    for id in (0..defined).rev() {
        checker.ensure_analyzed(id as u32);
    }
    let mut next = defined;
    while next < checker.model.functions.len() {
        checker.ensure_analyzed(next as u32);
        next += 1;
    }
    checker.finish()
}

impl<'a> Checker<'a> {
    /// Runs rules, noting what the values they ask about and the file cannot tell depend on.
    #[inline]
    fn run_rules(&mut self, rules: impl FnOnce(&mut RuleContext)) {
        let reported = self.findings.diagnostics.len();
        self.model.in_rule.set(true);
        self.model.slots_traced.set(0);
        rules(&mut RuleContext::new(
            &self.model,
            self.source,
            self.options.rules,
            self.module_body,
            &mut self.findings,
        ));
        self.model.in_rule.set(false);
        // A finding may rest on a guess about a parameter (a tensor by its name in a
        // `forward`): what callers pass may overturn it (a CPU tensor, a number).
        if self.findings.diagnostics.len() > reported
            && let Some(id) = self.model.flow.function
        {
            self.note_parameter_syncs(id, reported);
            let tensors = self.model.functions[id as usize]
                .params
                .iter()
                .enumerate()
                .filter(|(_, param)| matches!(param.kind.kind, Kind::Tensor(_)))
                .fold(0, |bits, (slot, _)| bits | slot_bit(slot));
            self.model
                .demand
                .borrow_mut()
                .parameters
                .note_slots(Question::Host, tensors);
        }
    }

    /// A finding on a method call whose receiver spans lines (`torch.bernoulli(p)\n
    /// .to(x.device)`) starts at the method's name: the line of the call that syncs, where a
    /// reader (and a `# noqa`) looks for it.
    fn start_at_the_method(&mut self, expr: &Expr, reported: usize) {
        // Most expressions report nothing: no line is looked up for them.
        if self.findings.diagnostics.len() == reported {
            return;
        }
        let Expr::Call(call) = expr else { return };
        let Expr::Attribute(attribute) = call.func.as_ref() else {
            return;
        };
        if self.line(attribute.attr.start()) == self.line(call.start()) {
            return;
        }
        for diagnostic in &mut self.findings.diagnostics[reported..] {
            if diagnostic.range == call.range() {
                diagnostic.range = TextRange::new(attribute.attr.start(), call.end());
            }
        }
    }

    fn line(&self, offset: TextSize) -> u32 {
        self.lines.row(offset) as u32
    }
}
