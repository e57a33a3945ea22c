//! Demand tracing: the reads rules make of values, and what each answer depended on.
//!
//! While a rule runs (the checker sets `in_rule`), every read of a value's kind is recorded.
//! Each read goes through [`SemanticModel::asked`] with the question the rule asks
//! (`kind_of`, `kind_for_device_test`, `kind_for_gpu_test`, `object_kind`, and the reads of
//! kind inference that rules call, `is_boolean_tensor` and `device_of` among them), or through
//! [`SemanticModel::calls_module`] for what a call calls. Where the file cannot tell the
//! answer, the read notes what the value depends on, with the question asked: the function's
//! parameters (through the names assigned on the way), the project functions and call sites
//! whose results it is made from, and the attributes of other files' classes it reads. The
//! checker writes these into the function's summary ([`Demand`], and a value passed on keeps
//! its [`Dependence`]), so that the project can tell the file the facts that would answer a
//! question differently, and check it again only then. A kind read any other way is not
//! recorded, and the project would never tell the file a fact that changes it: rules read
//! kinds through these reads.
//! Inference on the way runs with `in_rule` off: only the value asked about is recorded, not
//! the parts inferred on the way (`x.shape` of an unknown `x` is known).
//!
//! It also tells what an argument gives a parameter ([`Given`]), and which parameter a value
//! is made from, for the call sites' summaries.
//!
//! It may import the model (its parent) and its scopes, imports and kind inference, the
//! questions, the facts, the summary's argument types and the torch tables.

use std::rc::Rc;

use ruff_python_ast::name::Name;
use ruff_python_ast::{self as ast, Expr};

use super::scopes::{Binding, BindingSource, Origin};
use super::{SemanticModel, call_key};
use crate::parse::literal_text;
use crate::semantic::demand::{Demand, Dependence, GivenAsked, Question, Questions, slot_bit};
use crate::semantic::facts::Given;
use crate::semantic::kinds::{Kind, ModuleKind};
use crate::semantic::names::is_library;
use crate::semantic::summary::DictEntry;
use crate::semantic::torch_api as api;

/// What the unknown values a function's rules asked about depend on: its parameters and the
/// project functions it calls (by the qualified name the file spells).
#[derive(Debug, Default)]
pub struct Asked {
    pub parameters: Demand,
    pub calls: Vec<(Rc<str>, Questions)>,
    /// Attributes of instances of other files' classes: (class as spelled, attribute).
    pub attributes: Vec<((Box<str>, Name), Questions)>,
    /// Call sites of project functions (by index), for what they return.
    pub sites: Vec<(u32, Questions)>,
}

impl<'a> SemanticModel<'a> {
    /// Asks the project to keep telling what hot callers give the parameters in `guards`
    /// (tests that decided an arm by what callers pass).
    pub fn ask_given(&self, guards: GivenAsked) {
        if !guards.is_empty() {
            let mut demand = self.demand.borrow_mut();
            demand.parameters.given = demand.parameters.given.union(guards);
        }
    }

    /// What hot code reports or calls in an arm that callers' arguments decide runs would go if
    /// they decided otherwise: the project is asked to keep telling them.
    pub fn ask_given_guards(&self) {
        self.ask_given(self.flow.given_guards);
    }

    /// What `expr` evaluates to, at this point of the flow.
    pub fn kind_of(&self, expr: &Expr) -> Kind {
        self.asked(expr, Question::Kind)
    }

    /// What `expr` evaluates to, asked by a rule for which only whether it is on the host
    /// matters: one that counts an unknown value as maybe on a GPU already (`.item()`,
    /// `torch.nonzero(x)`), or fires on CPU tensors only (`cpu_t.to("cuda")`).
    pub fn kind_for_device_test(&self, expr: &Expr) -> Kind {
        self.asked(expr, Question::Host)
    }

    /// What `expr` evaluates to, asked by a rule for which only whether it is a tensor that may
    /// be on a GPU matters, and an unknown value counts as none (`if flag:`, `float(x)`).
    pub fn kind_for_gpu_test(&self, expr: &Expr) -> Kind {
        self.asked(expr, Question::GpuTensor)
    }

    /// What object `expr` is, asked by a rule that looks for one (a gradient scaler, a
    /// validating distribution): only an instance passed or returned changes the answer.
    pub fn object_kind(&self, expr: &Expr) -> Kind {
        self.asked(expr, Question::Instance)
    }

    /// The kind of `expr`; where a rule asks and the file cannot tell, what it depends on is
    /// noted with the question asked. Only the value asked about is: its parts, inferred on
    /// the way, may be unknown while it is known (`x.shape` of an unknown `x`).
    pub fn asked(&self, expr: &Expr, question: Question) -> Kind {
        // Inferred and traced with rules off, so nothing on the way asks again.
        let asking = self.in_rule.replace(false);
        let kind = self.infer_kind(expr);
        if asking {
            // Only a plain function's own lines summarise syncs on its parameters.
            let summarised = self.flow.function.is_some_and(|id| {
                let function = &self.functions[id as usize];
                function.intrinsic.is_none() && !function.never_hot && !function.params.is_empty()
            }) && !self.flow.loops.iter().any(|hot| hot.starts_hotness);
            if summarised && let Some(slot) = self.parameter_root(expr, 0) {
                self.slots_traced
                    .set(self.slots_traced.get() | slot_bit(usize::from(slot)));
            }
            if kind.is_opaque() {
                self.note_demand_of(expr, 0, question);
            } else if question.left_open_by(kind)
                && let Some(slot) = self.parameter_as_is(expr)
            {
                // `masks: torch.Tensor` indexing (or `masks.clone()`): the callers may pass a
                // mask.
                self.note_parameter(question, slot);
            }
        }
        self.in_rule.set(asking);
        kind
    }

    /// Does `call` call a module of this kind? The loss modules the rules look for
    /// (`ClassIndexLoss`, `CtcLoss`) come only from their constructors: where the file made none
    /// yet, the answer is no without inferring the call (most files make none).
    pub fn calls_module(&self, call: &ast::ExprCall, module: ModuleKind) -> bool {
        if module.only_from_torch_constructor() && !self.loss_module_made.get() {
            return false;
        }
        // What the call returns is not asked, nor are its arguments: only what is called.
        let asking = self.in_rule.replace(false);
        let callee = self.call_kinds(call).callee;
        if callee.is_opaque() && asking {
            self.note_demand_of(&call.func, 0, Question::Instance);
        }
        self.in_rule.set(asking);
        matches!(callee, Kind::Module(kind, _) if kind == module)
    }

    /// Notes what an expression whose kind the file cannot tell depends on: parameters of the
    /// function, through the values assigned on the way (`valid = labels >= 0`), and calls of
    /// project functions (whose return kinds the project may know).
    pub fn note_demand(&self, expr: &Expr) {
        let asking = self.in_rule.replace(false);
        self.note_demand_of(expr, 0, Question::Kind);
        self.in_rule.set(asking);
    }

    /// [`Self::note_demand`] of `question`: it stays the question while the value is the same
    /// one (a name bound to it, an arm of a conditional); of a part the value is made from (an
    /// operand, a receiver, an argument), what the part is matters (a tensor compared is a
    /// mask), except that a value made from host values is on the host.
    fn note_demand_of(&self, expr: &Expr, depth: u32, question: Question) {
        // A trace that starts inside another (through a kind inferred on the way) takes an
        // empty list of its own.
        let mut seen = self.demand_traced.take();
        seen.clear();
        self.trace_demand(expr, depth, question, &mut seen);
        self.demand_traced.replace(seen);
    }

    /// [`Self::note_demand_of`], once per node and question: the values joined after
    /// conditionals branch, and a name assigned in several arms is reached again and again.
    /// `seen` holds each node traced (address, question) with the least depth it was reached at.
    fn trace_demand(&self, expr: &Expr, depth: u32, question: Question, seen: &mut Vec<(usize, Question, u32)>) {
        if depth > 6 || never_a_tensor(expr) {
            return;
        }
        let address = expr as *const Expr as usize;
        match seen.iter_mut().find(|(a, q, _)| *a == address && *q == question) {
            Some((_, _, reached)) if *reached <= depth => return,
            Some((_, _, reached)) => *reached = depth,
            None => seen.push((address, question, depth)),
        }

        // Known already: what callers pass cannot change it (a tuple's elements may not be
        // known: a name unpacked from one is traced to it).
        if depth > 0
            && !expr.is_tuple_expr()
            && !matches!(self.infer_kind(expr), Kind::Unknown | Kind::Object(_) | Kind::Tuple)
        {
            return;
        }
        let part = match question {
            Question::Host => Question::Host,
            _ => Question::Kind,
        };
        // Arithmetic keeps these questions: `a * b` is a GPU tensor where an operand is one, and
        // a number where both are.
        let operand = match question {
            Question::GpuTensor | Question::Number => question,
            _ => part,
        };
        match expr {
            Expr::Name(name) => match self.lookup(name.id.as_str()) {
                Some(Binding {
                    source: BindingSource::Parameter(slot),
                    ..
                }) => self.note_parameter(question, *slot),
                Some(Binding {
                    source: BindingSource::Joined(index),
                    ..
                }) => {
                    for origin in &self.joined[*index as usize] {
                        match *origin {
                            Origin::Parameter(slot) => self.note_parameter(question, slot),
                            Origin::Value(value) => self.trace_demand(value, depth + 1, question, seen),
                        }
                    }
                }
                Some(Binding { value: Some(value), .. }) => self.trace_demand(value, depth + 1, question, seen),
                _ => {}
            },
            Expr::Call(call) => {
                let key = call_key(call);
                if let Some(sites) = self.sites_of_call.get(&key) {
                    let seen = self.call_kinds(call).result;
                    let mut results_seen = self.results_seen.borrow_mut();
                    let asked = &mut self.demand.borrow_mut().sites;
                    for site in sites.clone() {
                        note_question(asked, site, question);
                        results_seen.insert(site, seen);
                    }
                }
                let callee = self.callee(call);
                let torch_operation = callee.as_deref().is_some_and(|callee| callee.starts_with("torch."));
                if let Some(callee) = callee.filter(|q| !is_library(q)) {
                    note_question(&mut self.demand.borrow_mut().calls, callee, question);
                }
                self.trace_demand(&call.func, depth + 1, part, seen);
                let outer = self.tracing_through_a_call.get();
                self.tracing_through_a_call.set(outer || !torch_operation);
                for arg in &call.arguments.args {
                    self.trace_demand(arg, depth + 1, part, seen);
                }
                self.tracing_through_a_call.set(outer);
            }
            Expr::Attribute(attribute) => {
                self.note_imported_attribute(attribute, question);
                // `self.weights`, set from a project call in another method: that call is asked.
                if let Expr::Name(receiver) = attribute.value.as_ref()
                    && receiver.id.as_str() == "self"
                    && let Some(class) = self.flow.class
                {
                    let calls = self
                        .lineage(class)
                        .filter_map(|id| self.classes[id as usize].attribute_calls.get(attribute.attr.as_str()))
                        .flatten();
                    for callee in calls {
                        note_question(&mut self.demand.borrow_mut().calls, callee.clone(), question);
                    }
                }
                self.trace_demand(&attribute.value, depth + 1, part, seen);
            }
            // An element is never a number (`x.shape[0]` is known already), and it is a GPU
            // tensor where what is indexed is one, whatever the index.
            Expr::Subscript(_) if question == Question::Number => {}
            Expr::Subscript(subscript) if question == Question::GpuTensor => {
                self.trace_demand(&subscript.value, depth + 1, question, seen);
            }
            Expr::Subscript(subscript) => {
                self.trace_demand(&subscript.value, depth + 1, part, seen);
                self.trace_demand(&subscript.slice, depth + 1, part, seen);
            }
            Expr::BinOp(binop) => {
                self.trace_demand(&binop.left, depth + 1, operand, seen);
                self.trace_demand(&binop.right, depth + 1, operand, seen);
            }
            Expr::UnaryOp(unary) => self.trace_demand(&unary.operand, depth + 1, operand, seen),
            Expr::Compare(compare) => {
                let operand = if question == Question::GpuTensor {
                    question
                } else {
                    part
                };
                self.trace_demand(&compare.left, depth + 1, operand, seen);
                for comparator in &compare.comparators {
                    self.trace_demand(comparator, depth + 1, operand, seen);
                }
            }
            Expr::BoolOp(bool_op) => {
                for value in &bool_op.values {
                    self.trace_demand(value, depth + 1, question, seen);
                }
            }
            Expr::If(if_expr) => {
                self.trace_demand(&if_expr.body, depth + 1, question, seen);
                self.trace_demand(&if_expr.orelse, depth + 1, question, seen);
            }
            Expr::Tuple(tuple) => {
                for element in &tuple.elts {
                    self.trace_demand(element, depth + 1, question, seen);
                }
            }
            _ => {}
        }
    }

    /// A rule's verdict hangs on what parameter `slot` is, as `question` asks.
    fn note_parameter(&self, question: Question, slot: u16) {
        self.demand.borrow_mut().parameters.note(question, usize::from(slot));
        if !self.tracing_through_a_call.get() {
            self.slots_traced
                .set(self.slots_traced.get() | slot_bit(usize::from(slot)));
        }
    }

    /// The parameter a value is, or is made from by tensor operations on it (`x`, `x.max()`,
    /// `x[0]`, `x > 0`, `torch.round(x * t)`, a name bound to one of those), known or not: what
    /// a caller gives it is what the value reads.
    pub fn parameter_root(&self, expr: &Expr, depth: u32) -> Option<u16> {
        if depth > 6 {
            return None;
        }
        let next = depth + 1;
        match expr {
            Expr::Name(name) => match self.lookup(name.id.as_str())? {
                Binding {
                    source: BindingSource::Parameter(slot),
                    ..
                } => Some(*slot),
                Binding { value: Some(value), .. } => self.parameter_root(value, next),
                _ => None,
            },
            Expr::Attribute(attribute) => self.parameter_root(&attribute.value, next),
            Expr::Subscript(subscript) => self.parameter_root(&subscript.value, next),
            Expr::Call(call) => {
                let Expr::Attribute(method) = call.func.as_ref() else {
                    return None;
                };
                match self.import_root(&method.value) {
                    // `torch.round(x * t)`, `F.pad(x, ...)`: what the operation is given first.
                    Some((root, _)) if root == "torch" || root.starts_with("torch.") => {
                        self.parameter_root(call.arguments.args.first()?, next)
                    }
                    Some(_) => None,
                    // `x.max()`: the receiver.
                    None => self.parameter_root(&method.value, next),
                }
            }
            Expr::BinOp(binop) => self
                .parameter_root(&binop.left, next)
                .or_else(|| self.parameter_root(&binop.right, next)),
            Expr::UnaryOp(unary) => self.parameter_root(&unary.operand, next),
            Expr::Compare(compare) => self.parameter_root(&compare.left, next),
            _ => None,
        }
    }

    /// The parameter `expr` is, as it was given or through methods that keep its dtype and device
    /// (`mask.clone()`, `mask.view(-1)`, `mask.to(x.device)`).
    fn parameter_as_is(&self, expr: &Expr) -> Option<u16> {
        let mut expr = expr;
        for _ in 0..6 {
            match expr {
                Expr::Name(name) => {
                    return match self.lookup(name.id.as_str())?.source {
                        BindingSource::Parameter(slot) => Some(slot),
                        _ => None,
                    };
                }
                Expr::Call(call) => {
                    let Expr::Attribute(method) = call.func.as_ref() else {
                        return None;
                    };
                    let keeps = match method.attr.as_str() {
                        // A device, not a dtype.
                        "to" => {
                            self.target_device_of_to(call).is_some() && call.arguments.find_keyword("dtype").is_none()
                        }
                        other => api::keeps_dtype_and_device(other),
                    };
                    if !keeps {
                        return None;
                    }
                    expr = &method.value;
                }
                _ => return None,
            }
        }
        None
    }

    /// `x.attr` of an instance of another file's class, where the file cannot tell what it
    /// holds: the project is asked.
    pub fn note_imported_attribute(&self, attribute: &ast::ExprAttribute, question: Question) {
        let receiver = self.kind_of(&attribute.value);
        if let Some(class) = self.imported_class_of(receiver)
            && self.attribute_kind(attribute).is_opaque()
        {
            let key = (class, attribute.attr.id.clone());
            note_question(&mut self.demand.borrow_mut().attributes, key, question);
        }
    }

    /// What `expr`, a value passed on (an argument to a project function, a `return` value)
    /// whose kind the file cannot tell, depends on; `None` where nothing the project may learn.
    pub fn dependence_of(&self, expr: &Expr) -> Option<Dependence> {
        let saved = std::mem::take(&mut *self.demand.borrow_mut());
        self.note_demand(expr);
        let traced = std::mem::replace(&mut *self.demand.borrow_mut(), saved);
        let dependence = Dependence {
            parameters: traced.parameters.asked(Question::Kind),
            calls: traced.calls.into_iter().map(|(name, _)| Box::from(&*name)).collect(),
            sites: traced.sites.into_iter().map(|(site, _)| site).collect(),
        };
        (dependence != Dependence::default()).then_some(dependence)
    }

    /// Whether `expr`, passed as an argument, is a value made here (`Always`), `None`
    /// (`Never`), what the caller was given (`Passed`: a parameter, an attribute, a value of
    /// unknown kind, which may be `None` whatever its kind says), or may be either
    /// (`Sometimes`).
    pub fn given_by(&self, expr: &Expr) -> Given {
        self.given_within(expr, 0)
    }

    /// What a dict `expr` spells out gives each of its keys (see
    /// [`Argument::entries`](crate::semantic::Argument::entries)): a literal whose keys are all
    /// strings, or `dict(key=value)`.
    pub fn entries_given(&self, expr: &Expr) -> Option<Box<[DictEntry]>> {
        match expr {
            Expr::Dict(dict) => dict
                .items
                .iter()
                .map(|item| match &item.key {
                    Some(Expr::StringLiteral(key)) => {
                        Some((Box::from(literal_text(&key.value)?), self.given_by(&item.value)))
                    }
                    _ => None,
                })
                .collect(),
            Expr::Call(call)
                if call.arguments.args.is_empty()
                    && matches!(call.func.as_ref(), Expr::Name(name) if name.id.as_str() == "dict")
                    && self.lookup("dict").is_none() =>
            {
                call.arguments
                    .keywords
                    .iter()
                    .map(|keyword| Some((Box::from(keyword.arg.as_ref()?.as_str()), self.given_by(&keyword.value))))
                    .collect()
            }
            _ => None,
        }
    }

    fn given_within(&self, expr: &Expr, depth: u32) -> Given {
        if depth > 4 {
            return Given::Sometimes;
        }
        let made = |kind: Kind| match kind {
            Kind::NoneValue => Given::Never,
            Kind::Unknown => Given::Passed,
            _ => Given::Always,
        };
        match expr {
            Expr::NoneLiteral(_) => Given::Never,
            _ if is_false_literal(expr) => Given::Falsy,
            Expr::BooleanLiteral(_) | Expr::NumberLiteral(_) | Expr::StringLiteral(_) => Given::Truthy,
            Expr::FString(_)
            | Expr::Tuple(_)
            | Expr::List(_)
            | Expr::Dict(_)
            | Expr::Set(_)
            | Expr::ListComp(_)
            | Expr::DictComp(_)
            | Expr::SetComp(_)
            | Expr::BinOp(_)
            | Expr::UnaryOp(_)
            | Expr::Compare(_)
            | Expr::Lambda(_) => Given::Always,
            // A lookup that falls back on `None` (`d.get(k)`, `getattr(o, name, None)`).
            Expr::Call(call) if falls_back_on_none(call) => Given::Sometimes,
            // What a call or an index makes, where its kind is known.
            Expr::Call(_) | Expr::Subscript(_) => made(self.kind_of(expr)),
            Expr::Attribute(_) => Given::Passed,
            Expr::If(if_expr) => self
                .given_within(&if_expr.body, depth + 1)
                .join(self.given_within(&if_expr.orelse, depth + 1)),
            // Unless bound to `None` again inside the arm.
            Expr::Name(name) if self.flow.not_none.contains(&name.id) => {
                match self.lookup(name.id.as_str()).and_then(|binding| binding.value) {
                    Some(Expr::NoneLiteral(_)) => Given::Never,
                    _ => Given::Always,
                }
            }
            Expr::Name(name) => match self.lookup(name.id.as_str()) {
                Some(Binding {
                    source: BindingSource::Joined(index),
                    ..
                }) => self.joined[*index as usize]
                    .iter()
                    .map(|origin| match *origin {
                        Origin::Parameter(_) => Given::Passed,
                        Origin::Value(value) => self.given_within(value, depth + 1),
                    })
                    .fold(Given::Unseen, Given::join),
                Some(Binding { value: Some(value), .. }) => self.given_within(value, depth + 1),
                Some(Binding {
                    source: BindingSource::Parameter(_),
                    ..
                }) => Given::Passed,
                _ => Given::Sometimes,
            },
            _ => Given::Sometimes,
        }
    }
}

/// Adds `question` to what was asked of `key` (a call site, a callee), listed once.
fn note_question<K: PartialEq>(asked: &mut Vec<(K, Questions)>, key: K, question: Question) {
    match asked.iter_mut().find(|(known, _)| *known == key) {
        Some((_, questions)) => questions.insert(question),
        None => asked.push((key, Questions::of(question))),
    }
}

/// Expressions whose value is never a tensor, whatever their operands are: what callers pass
/// cannot change what a rule sees of them (`x.shape[0]`, `x.size(1)`, `isinstance(x, T)`,
/// `x is None`), so they demand nothing.
fn never_a_tensor(expr: &Expr) -> bool {
    match expr {
        Expr::Attribute(attribute) => matches!(
            attribute.attr.as_str(),
            "shape"
                | "ndim"
                | "dtype"
                | "device"
                | "is_cuda"
                | "requires_grad"
                | "is_leaf"
                | "layout"
                | "itemsize"
                | "nbytes"
        ),
        Expr::Call(call) => match call.func.as_ref() {
            Expr::Attribute(method) => matches!(
                method.attr.as_str(),
                "size"
                    | "dim"
                    | "ndimension"
                    | "numel"
                    | "nelement"
                    | "element_size"
                    | "stride"
                    | "is_contiguous"
                    | "get_device"
                    | "is_floating_point"
                    | "is_complex"
            ),
            Expr::Name(name) => matches!(
                name.id.as_str(),
                "isinstance" | "len" | "hasattr" | "callable" | "type" | "id"
            ),
            _ => false,
        },
        Expr::Compare(compare) => compare
            .ops
            .iter()
            .all(|op| matches!(op, ast::CmpOp::Is | ast::CmpOp::IsNot)),
        _ => false,
    }
}

/// A lookup that gives `None` where it finds nothing: `d.get(k)`, `d.pop(k, None)`,
/// `getattr(o, name, None)`.
pub fn falls_back_on_none(call: &ast::ExprCall) -> bool {
    let args = &call.arguments.args;
    let fallback = match call.func.as_ref() {
        Expr::Attribute(attribute) if attribute.attr.as_str() == "get" && args.len() == 1 => return true,
        Expr::Attribute(attribute) if matches!(attribute.attr.as_str(), "get" | "pop") => args.get(1),
        Expr::Name(name) if name.id.as_str() == "getattr" => args.get(2),
        _ => return false,
    };
    matches!(fallback, Some(Expr::NoneLiteral(_)))
}

/// `False`, `0`, `0.0`, `""`: false as a test, but not `None`.
pub fn is_false_literal(expr: &Expr) -> bool {
    match expr {
        Expr::BooleanLiteral(literal) => !literal.value,
        Expr::NumberLiteral(number) => match &number.value {
            ast::Number::Int(n) => *n == 0u8,
            ast::Number::Float(f) => *f == 0.0,
            ast::Number::Complex { .. } => false,
        },
        Expr::StringLiteral(string) => string.value.is_empty(),
        _ => false,
    }
}
