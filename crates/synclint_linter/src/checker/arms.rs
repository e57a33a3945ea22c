//! Arms off the step: whether the arm a test selects runs on no CUDA step (it never runs,
//! another backend, tracing for export, a type test the value decides, or what the hot callers
//! or every construction give), and what the project must keep telling for that answer to
//! hold.

use std::cell::Cell;

use ruff_python_ast::{self as ast, Expr};

use super::Checker;
use super::functions::init_parameter_assigned;
use crate::parse::literal_text;
use crate::semantic::names::last_name;
use crate::semantic::{
    Binding, BindingSource, DeadWhere, EntryAsked, Given, GivenAsked, Kind, ParamDefault, falls_back_on_none,
};
use crate::syntax::{is_backend_check, is_trace_check, mentions_another_backend, names_another_backend, on_self};

/// What deciding a test has consulted so far: the questions its answer rests on, for the
/// project to keep answering.
#[derive(Default)]
pub(super) struct TestDecision<'a> {
    /// The parameters whose callers' arguments the test consulted (see
    /// [`Checker::callers_never_take`]).
    consulted_given: Cell<GivenAsked>,
    /// Whether what callers or constructions give decided the test (see
    /// [`Checker::arm_off_step`]).
    decided_by_arguments: Cell<bool>,
    /// The name the `if` whose test is being decided returns (`if cached is not None: return
    /// cached`): callers that pass it take the early return.
    returned_early: Option<&'a str>,
}

impl<'a> TestDecision<'a> {
    fn consult(&self, dies_if: Given, slot: usize) {
        let mut consulted = self.consulted_given.get();
        consulted.note(dies_if, slot);
        self.consulted_given.set(consulted);
    }

    /// Whether what callers or constructions give decided the last test decided; asked once.
    pub(super) fn take_decided_by_arguments(&self) -> bool {
        self.decided_by_arguments.take()
    }

    /// The tests decided from here on are of an `if` that returns `name` early (or of none).
    pub(super) fn set_returned_early(&mut self, name: Option<&'a str>) {
        self.returned_early = name;
    }
}

/// How a test decided an arm (see [`Checker::arm_off_step`]).
#[derive(Clone, Default)]
pub(super) struct ArmDecided {
    pub(super) off_step: bool,
    pub(super) guards: GivenAsked,
    pub(super) dead_where: Vec<DeadWhere>,
}

/// What [`Checker::leave_arm`] restores.
pub(super) struct EnteredArm {
    off_step: bool,
    saved_guards: GivenAsked,
    dead_where: usize,
}

impl<'a> Checker<'a> {
    /// Does the arm where `test` comes out `holds` run on no CUDA step? It never runs (`if False:`,
    /// `if 0:`, `if TYPE_CHECKING:`), or only on another backend: a device compared with one
    /// (`x.device.type == "mps"`, `device.type in ("npu", "xla")`, `str(device).startswith("mps")`,
    /// `x.device.type != "cuda"`), a flag or check named for one (`x.is_mps`, `is_torch_npu_available()`,
    /// `torch.backends.mps.is_available()`, `if self.is_tpu:`), or only while a model is traced for
    /// export (`torch.jit.is_tracing()`, `torch.onnx.is_in_onnx_export()`), or what it tests is
    /// decided by what the value is (`if not torch.is_tensor(t):` of a tensor, `if isinstance(t,
    /// torch.Tensor):` of a number). Syncs there cost nothing on a GPU step. With `callers`, also
    /// an arm decided by what the hot callers give the function's parameters or what every
    /// construction gives a flag (see [`Checker::callers_never_take`]); not where the test is
    /// read outside its function.
    pub(super) fn runs_on_no_cuda_step(&self, test: &Expr, holds: bool, callers: bool) -> bool {
        // A string, or an enum's member (`DistributedType.XLA`, `DeviceType.MULTI_NPU`).
        let string = |expr: &Expr| match expr {
            Expr::StringLiteral(literal) => literal_text(&literal.value).map(str::to_ascii_lowercase),
            Expr::Attribute(member)
                if !member.attr.as_str().bytes().any(|b| b.is_ascii_lowercase())
                    && last_name(&member.value)
                        .is_some_and(|enum_name| enum_name.starts_with(|c: char| c.is_ascii_uppercase())) =>
            {
                Some(member.attr.as_str().to_ascii_lowercase())
            }
            _ => None,
        };
        match test {
            Expr::UnaryOp(unary) if unary.op == ast::UnaryOp::Not => {
                self.runs_on_no_cuda_step(&unary.operand, !holds, callers)
            }
            // `a and b` holds only where both do; `a or b` fails only where both do.
            Expr::BoolOp(bool_op) => match (bool_op.op, holds) {
                (ast::BoolOp::And, true) | (ast::BoolOp::Or, false) => bool_op
                    .values
                    .iter()
                    .any(|value| self.runs_on_no_cuda_step(value, holds, callers)),
                _ => bool_op
                    .values
                    .iter()
                    .all(|value| self.runs_on_no_cuda_step(value, holds, callers)),
            },
            Expr::BooleanLiteral(literal) => literal.value != holds,
            Expr::NumberLiteral(number) => matches!(&number.value, ast::Number::Int(n) if *n == 0u8) == holds,
            Expr::Name(name) if name.id.as_str() == "TYPE_CHECKING" => holds,
            Expr::Name(name) if holds => {
                mentions_another_backend(name.id.as_str()) || (callers && self.callers_never_take(test, holds))
            }
            // The arm where `flag` is false, where every caller passes a true literal.
            Expr::Name(_) => callers && self.callers_never_take(test, holds),
            Expr::Attribute(attribute) if holds => {
                mentions_another_backend(attribute.attr.as_str())
                    || (callers
                        && self.constructions_never_take(attribute, Given::Falsy, |default| {
                            matches!(default, ParamDefault::None | ParamDefault::Falsy)
                        }))
            }
            // The `else` of `if self.scale_rope:` where every construction passes `True`.
            Expr::Attribute(attribute) => callers && self.constructions_never_take(attribute, Given::Truthy, |_| true),
            Expr::Call(call) if let Some(tensor) = self.tests_for_a_tensor(call) => tensor != holds,
            // `if mask is None:` where every hot caller passes a mask; `if guidance is not
            // None:` (or `if guidance:`, above) where none passes it.
            Expr::Compare(compare)
                if callers
                    && let ([op], [Expr::NoneLiteral(_)]) = (&*compare.ops, &*compare.comparators)
                    && let Some((dies_if, default_kills)) = none_test_kills(*op, holds) =>
            {
                match compare.left.as_ref() {
                    Expr::Attribute(attribute) => self.constructions_never_take(attribute, dies_if, default_kills),
                    _ => self.callers_never_take(test, holds),
                }
            }

            Expr::Call(call) if last_name(&call.func).is_some_and(is_trace_check) => holds,
            Expr::Call(call) => {
                let (Expr::Attribute(attribute), true) = (call.func.as_ref(), holds) else {
                    return holds
                        && matches!(call.func.as_ref(), Expr::Name(name) if is_backend_check(name.id.as_str()));
                };
                match attribute.attr.as_str() {
                    // `str(device).startswith("mps")`
                    "startswith" => call
                        .arguments
                        .args
                        .first()
                        .and_then(string)
                        .is_some_and(|s| names_another_backend(&s)),
                    // `torch.backends.mps.is_available()`, `torch.npu.is_available()`
                    "is_available" => {
                        matches!(attribute.value.as_ref(), Expr::Attribute(module) if names_another_backend(module.attr.as_str()))
                    }
                    method => is_backend_check(method),
                }
            }
            Expr::Compare(compare) => {
                let ([op], [right]) = (&*compare.ops, &*compare.comparators) else {
                    return false;
                };
                let (literal, equal) = match (string(&compare.left), string(right), op) {
                    // `"mps" in str(device)`
                    (Some(left), None, ast::CmpOp::In) => return holds && mentions_another_backend(&left),
                    (None, Some(right), ast::CmpOp::Eq) => (right, holds),
                    (None, Some(right), ast::CmpOp::NotEq) => (right, !holds),
                    (None, None, ast::CmpOp::In | ast::CmpOp::NotIn) => {
                        let inside = (*op == ast::CmpOp::In) == holds;
                        let elements = match right {
                            Expr::Tuple(tuple) => &tuple.elts,
                            Expr::List(list) => &list.elts,
                            Expr::Set(set) => &set.elts,
                            _ => return false,
                        };
                        let names: Option<Vec<String>> = elements.iter().map(string).collect();
                        return inside
                            && names.is_some_and(|names| {
                                !names.is_empty() && names.iter().all(|n| mentions_another_backend(n))
                            });
                    }
                    _ => return false,
                };
                if equal {
                    mentions_another_backend(&literal)
                } else {
                    // Anywhere but CUDA: another backend or the CPU.
                    literal == "cuda"
                }
            }
            _ => false,
        }
    }

    /// Whether the arm where `test` comes out `holds` is dead because of what the hot callers
    /// of the function analysed give the parameter it tests (see [`Checker::given_test`]), as
    /// the project found. Such a parameter is noted as consulted (see
    /// [`Checker::visit_tested_arm`]).
    fn callers_never_take(&self, test: &Expr, holds: bool) -> bool {
        let Some((slot, dies_if)) = self.given_test(test, holds) else {
            return false;
        };
        let Some(function) = self.model.current_function() else {
            return false;
        };
        self.decision.consult(dies_if, slot);
        self.decided_by(function.given.get(slot).copied(), dies_if)
    }

    /// The parameter slot whose callers' arguments decide the arm where `test` comes out
    /// `holds`, and what they give it where that arm dies: `if use_conv:` dies where every one
    /// leaves a false default (`Falsy`), `if mask is None:` where every one gives a value
    /// (`Always`), `if guidance is not None:` where none does (`Never`). A function that
    /// returns early the value it tests (`if cached is not None: return cached`) skips the
    /// rest where every caller hands one over (`Passed`). A dict entry the test reads (`(n :=
    /// kwargs.pop("max_seqlen", None)) is not None`) is asked as a slot after the parameters.
    fn given_test(&self, test: &Expr, holds: bool) -> Option<(usize, Given)> {
        match test {
            Expr::Name(name) if holds => self
                .parameter_slot(name.id.as_str(), |default| {
                    matches!(default, ParamDefault::None | ParamDefault::Falsy)
                })
                .map(|slot| (slot, Given::Falsy)),
            Expr::Name(name) => self
                .parameter_slot(name.id.as_str(), |_| true)
                .map(|slot| (slot, Given::Truthy)),
            Expr::Compare(compare)
                if let ([op], [Expr::NoneLiteral(_)]) = (&*compare.ops, &*compare.comparators)
                    && let Some((mut dies_if, default_kills)) = none_test_kills(*op, holds) =>
            {
                let tested = compare.left.as_ref();
                let name = match tested {
                    Expr::Named(named) => named.target.as_name_expr(),
                    Expr::Name(name) => Some(name),
                    _ => None,
                }?;
                if dies_if == Given::Always && self.decision.returned_early == Some(name.id.as_str()) {
                    dies_if = Given::Passed;
                }
                let slot = match self.entry_read(tested) {
                    Some(entry) => self.entry_slot(entry)?,
                    None if tested.is_name_expr() => self.parameter_slot(name.id.as_str(), default_kills)?,
                    None => return None,
                };
                Some((slot, dies_if))
            }
            _ => None,
        }
    }

    /// The slot of parameter `name` of the function analysed, where its default passes
    /// `default_kills`.
    fn parameter_slot(&self, name: &str, default_kills: impl Fn(ParamDefault) -> bool) -> Option<usize> {
        let Some(Binding {
            source: BindingSource::Parameter(slot),
            ..
        }) = self.model.lookup(name)
        else {
            return None;
        };
        let slot = *slot as usize;
        let param = self.model.current_function()?.params.get(slot)?;
        default_kills(param.default).then_some(slot)
    }

    /// The entry of a dict parameter (or of `**kwargs`) that `value` holds: `(n :=
    /// kwargs.pop(key, None))`, or a name now bound to `kwargs.get(key)`, where the key is a
    /// string or a parameter whose default is one.
    fn entry_read(&self, value: &Expr) -> Option<EntryAsked> {
        let read = match value {
            Expr::Named(named) => named.value.as_ref(),
            Expr::Name(name) => self.model.lookup(name.id.as_str())?.value?,
            _ => return None,
        };
        let Expr::Call(call) = read else { return None };
        let Expr::Attribute(method) = call.func.as_ref() else {
            return None;
        };
        let Expr::Name(dict) = method.value.as_ref() else {
            return None;
        };
        if !matches!(method.attr.as_str(), "get" | "pop") || !falls_back_on_none(call) {
            return None;
        }
        let function = self.model.current_function()?;
        let parameters = &function.def.parameters;
        let dict = match self.parameter_slot(dict.id.as_str(), |_| true) {
            Some(slot) => Some(slot as u16),
            None if parameters.kwarg.as_ref().is_some_and(|kwarg| kwarg.name.id == dict.id)
                && self
                    .model
                    .lookup(dict.id.as_str())
                    .is_some_and(|binding| binding.value.is_none()) =>
            {
                None
            }
            None => return None,
        };
        let (key, key_slot) = match call.arguments.args.first()? {
            Expr::StringLiteral(key) => (literal_text(&key.value)?, None),
            Expr::Name(key) => {
                let slot = self.parameter_slot(key.id.as_str(), |_| true)?;
                let default = parameters
                    .iter_non_variadic_params()
                    .find(|parameter| parameter.parameter.name.id == key.id)?
                    .default
                    .as_deref()?;
                (
                    literal_text(&default.as_string_literal_expr()?.value)?,
                    Some(slot as u16),
                )
            }
            _ => return None,
        };
        Some(EntryAsked {
            dict,
            key: key.into(),
            key_slot,
        })
    }

    /// The slot `entry` of the function analysed is asked as: after its parameters, in the
    /// order its tests first read them.
    fn entry_slot(&self, entry: EntryAsked) -> Option<usize> {
        let id = self.model.flow.function?;
        let params = self.model.functions[id as usize].params.len();
        Some(params + self.recorder.entry_index(id, entry))
    }

    /// Whether what callers or constructions give a parameter (`given`, where the project told
    /// it) kills an arm that dies where they give it `dies_if`; noted in `decided_by_arguments`.
    fn decided_by(&self, given: Option<Given>, dies_if: Given) -> bool {
        let decided = given.is_some_and(|given| given.kills(dies_if));
        self.decision
            .decided_by_arguments
            .set(self.decision.decided_by_arguments.get() || decided);
        decided
    }

    /// [`Checker::callers_never_take`] of a flag on `self`, by every construction of the class
    /// in the project, where only `__init__` sets it, to its parameter as it is: the arm where
    /// it holds (`dies_if` `Falsy`) is dead where its default is false (`use_conv=False`,
    /// `drop_prob=0.0`) and every construction leaves it so (`Downsample(ch)`,
    /// `Downsample(ch, use_conv=False)`); the arm where it fails (`Truthy`), where every
    /// construction passes a true literal (`scale_rope=True`). `if self.remap is not None:` is
    /// dead where every construction leaves `remap=None`, `if self.head is None:` where every
    /// one passes a head. What `default_kills` says of the parameter's default decides where
    /// constructions leave it out.
    fn constructions_never_take(
        &self,
        attribute: &ast::ExprAttribute,
        dies_if: Given,
        default_kills: fn(ParamDefault) -> bool,
    ) -> bool {
        let Some(class) = self.model.flow.class.filter(|_| on_self(attribute)) else {
            return false;
        };
        let attr = attribute.attr.as_str();
        // The one class of the lineage that sets it, in its `__init__` alone.
        let mut setting = self
            .model
            .lineage(class)
            .filter(|&id| self.model.classes[id as usize].attribute_setters.contains_key(attr));
        let (Some(owner), None) = (setting.next(), setting.next()) else {
            return false;
        };
        let owner = &self.model.classes[owner as usize];
        let only_init = matches!(&*owner.attribute_setters[attr], [setter] if setter.as_str() == "__init__");
        let Some(&init) = owner.methods.get("__init__").filter(|_| only_init) else {
            return false;
        };
        let function = &self.model.functions[init as usize];
        // A false default decides the flag where constructions leave it out; where they must
        // all pass a true literal, any default will do.
        let Some((slot, _)) =
            init_parameter_assigned(function.def, attr).filter(|&(_, default)| default_kills(default))
        else {
            return false;
        };
        self.recorder.note_construction_asked(init, slot, dies_if, attr);
        let given = self.options.facts.given.get(&*function.qualname);
        self.decided_by(given.and_then(|given| given.get(slot)).copied(), dies_if)
    }

    /// What a test for a tensor (`torch.is_tensor(t)`, `isinstance(t, torch.Tensor)`) comes out
    /// as: by what `t` is, a value the code does not show counting as a tensor; `None` for
    /// instances and other objects.
    pub(super) fn tests_for_a_tensor(&self, call: &ast::ExprCall) -> Option<bool> {
        let subject = match (call.func.as_ref(), &*call.arguments.args) {
            (Expr::Name(name), [subject, class])
                if name.id.as_str() == "isinstance"
                    && self.model.is_builtin("isinstance")
                    && self.model.qualified_name(class).as_deref() == Some("torch.Tensor") =>
            {
                subject
            }
            (func, [subject]) if self.model.qualified_name(func).as_deref() == Some("torch.is_tensor") => subject,
            _ => return None,
        };
        match self.model.kind_of(subject) {
            // A value the code does not show is taken for the tensor a step passes: the arm for
            // anything else (`if not torch.is_tensor(timesteps): timesteps = torch.tensor(...)`)
            // converts other inputs, as hot parameters are taken for tensors.
            Kind::Unknown => {
                // Callers may say it is a number after all.
                self.model.note_demand(subject);
                Some(true)
            }
            Kind::Tensor(_) => Some(true),
            Kind::Number | Kind::Str | Kind::NoneValue | Kind::NumberList | Kind::List | Kind::Tuple | Kind::Dict => {
                Some(false)
            }
            _ => None,
        }
    }

    /// Does the arm where `test` comes out `holds` run on no CUDA step, and which parameters'
    /// given arguments (see [`Checker::callers_never_take`]) decided it? Where they made it
    /// dead, the project is asked to keep telling them; whether what callers or constructions
    /// give made it dead is left in `decided_by_arguments`. Also what a call gives where the
    /// arm does not run there (see [`DeadWhere`]).
    pub(super) fn arm_off_step(&mut self, test: &Expr, holds: bool) -> ArmDecided {
        self.decision.consulted_given.take();
        self.decision.decided_by_arguments.take();
        let off_step = self.runs_on_no_cuda_step(test, holds, true);
        let guards = self.decision.consulted_given.take();
        if off_step {
            self.model.ask_given(guards);
        }
        ArmDecided {
            off_step,
            guards,
            dead_where: if off_step {
                Vec::new()
            } else {
                self.dead_where(test, holds)
            },
        }
    }

    /// What calls give where the arm `test` coming out `holds` decides does not run there:
    /// any part of an `and` that fails kills it, all parts of one that holds must.
    pub(super) fn dead_where(&self, test: &Expr, holds: bool) -> Vec<DeadWhere> {
        match test {
            Expr::UnaryOp(unary) if unary.op == ast::UnaryOp::Not => self.dead_where(&unary.operand, !holds),
            Expr::BoolOp(bool_op) if (bool_op.op == ast::BoolOp::And) == holds => bool_op
                .values
                .iter()
                .flat_map(|value| self.dead_where(value, holds))
                .collect(),
            Expr::BoolOp(bool_op) => {
                let mut all: Vec<DeadWhere> = vec![Box::default()];
                for value in &bool_op.values {
                    let each = self.dead_where(value, holds);
                    // Few parts decide a test; a product past a handful is given up.
                    if each.is_empty() || all.len() * each.len() > 8 {
                        return Vec::new();
                    }
                    all = all
                        .iter()
                        .flat_map(|these| {
                            each.iter()
                                .map(move |those| these.iter().chain(those).copied().collect())
                        })
                        .collect();
                }
                all
            }
            _ => self
                .given_test(test, holds)
                .map(|(slot, dies_if)| vec![Box::from([(slot as u16, dies_if)])])
                .unwrap_or_default(),
        }
    }

    /// Enters code that runs where a test decided (see [`Checker::arm_off_step`]): off the step,
    /// or where the parameters in `guards` are given what they were, and not at calls that
    /// give what `dead_where` says; returns what [`Checker::leave_arm`] restores.
    pub(super) fn enter_arm(&mut self, decided: ArmDecided) -> EnteredArm {
        let entered = EnteredArm {
            off_step: decided.off_step,
            saved_guards: self.model.flow.given_guards,
            dead_where: self.model.flow.dead_where.len(),
        };
        if !decided.off_step {
            self.model.flow.given_guards = entered.saved_guards.union(decided.guards);
        }
        self.model.flow.dead_where.extend(decided.dead_where);
        self.model.flow.off_step_arm_depth += u32::from(decided.off_step);
        entered
    }

    pub(super) fn leave_arm(&mut self, entered: EnteredArm) {
        self.model.flow.off_step_arm_depth -= u32::from(entered.off_step);
        self.model.flow.given_guards = entered.saved_guards;
        self.model.flow.dead_where.truncate(entered.dead_where);
    }
}

/// Whether a parameter's default, where callers leave it out, kills an arm.
type DefaultKills = fn(ParamDefault) -> bool;

/// What callers give the value `x is None` (`op` `Is`) or `x is not None` tests, where the
/// arm the test comes out `holds` in dies, and which defaults leaving it out kills it with: a
/// value, where the arm needs `None` (any default); none, where it needs a value (a `None`
/// default).
fn none_test_kills(op: ast::CmpOp, holds: bool) -> Option<(Given, DefaultKills)> {
    match op {
        ast::CmpOp::Is | ast::CmpOp::IsNot if (op == ast::CmpOp::Is) == holds => Some((Given::Always, |_| true)),
        ast::CmpOp::Is | ast::CmpOp::IsNot => Some((Given::Never, |default| default == ParamDefault::None)),
        _ => None,
    }
}
