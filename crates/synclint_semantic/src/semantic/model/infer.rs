//! Kind inference of expressions: what a name, literal, display, attribute, subscript,
//! operator or conditional evaluates to at this point of the flow, what an annotation gives,
//! and which values are made here. Calls are inferred in `infer_call` and `infer_torch`.
//!
//! Inference records nothing by itself: rules read kinds through the reads of `trace`
//! ([`SemanticModel::asked`]), which record what an answer depended on. What inference has
//! worked out is kept while the bindings stand ([`SemanticModel::invalidate_kinds`]).
//!
//! It may import the model (its parent) and its scopes, imports, class references and call
//! inference, the kinds, the questions, the torch tables and the naming conventions.

use std::cell::RefCell;
use std::rc::Rc;

use ruff_python_ast::{self as ast, Expr, Operator, UnaryOp};
use rustc_hash::FxHashMap;

use super::class_refs::join_instances;
use super::infer_call::CallKinds;
use super::scopes::{Binding, BindingSource, Origin};
use super::{NodeKey, SemanticModel, node_key};
use crate::parse::literal_text;
use crate::semantic::demand::Question;
use crate::semantic::ids::ClassId;
use crate::semantic::kinds::{BatchSource, Device, Kind, ModuleKind, Returned, TensorFacts};
use crate::semantic::names::is_library;
use crate::semantic::torch_api as api;

/// What kind inference worked out already, by node, while it still holds: every rule asks
/// about the same expressions, and the checker resolves each call's callee before them.
#[derive(Default)]
pub(super) struct Inferred {
    /// Kinds of call expressions (and of what they call) already inferred since the bindings
    /// last changed: every rule asks about the same calls, and a call's kind is the costliest
    /// to infer.
    pub(super) call_kinds: RefCell<FxHashMap<NodeKey, CallKinds>>,
    /// Kinds of attributes and elements, likewise (see [`SemanticModel::remembered_kind`]).
    pub(super) part_kinds: RefCell<FxHashMap<NodeKey, Kind>>,
    /// Qualified names of callees resolved so far in the function being analysed, by call
    /// node: the checker, every rule and the call's kind ask for them in turn. The checker
    /// resolves each call when it visits it, so the name is the one its imports give at that
    /// point of the flow. Scans ahead of the flow (loops over data loaders) resolve calls of
    /// functions not yet analysed, so the cache is emptied as each analysis starts and ends.
    pub(super) callees: RefCell<FxHashMap<NodeKey, Option<Rc<str>>>>,
}

impl<'a> SemanticModel<'a> {
    /// Notes the kind of a comprehension's element while its loop variables are in scope.
    pub fn note_comprehension_element(&mut self, comprehension: &Expr, element: &Expr) {
        let kind = self.kind_of(element);
        if kind.tensor().is_some() || matches!(kind, Kind::Number | Kind::TensorSequence(_)) {
            self.comprehension_elements.insert(node_key(comprehension), kind);
        }
    }

    /// Forgets inferred call kinds: bindings, attributes, return kinds or the scope changed.
    pub fn invalidate_kinds(&self) {
        let mut cache = self.inferred.call_kinds.borrow_mut();
        if !cache.is_empty() {
            cache.clear();
        }
        let mut parts = self.inferred.part_kinds.borrow_mut();
        if !parts.is_empty() {
            parts.clear();
        }
    }

    /// Forgets resolved callees: a function's analysis starts or ends.
    pub fn forget_callees(&mut self) {
        self.inferred.callees.get_mut().clear();
    }

    pub(super) fn infer_kind(&self, expr: &Expr) -> Kind {
        match expr {
            Expr::Name(name) => self.lookup(name.id.as_str()).map_or(Kind::Unknown, |b| b.kind),
            Expr::NumberLiteral(_) | Expr::BooleanLiteral(_) => Kind::Number,
            Expr::StringLiteral(_) | Expr::FString(_) | Expr::BytesLiteral(_) | Expr::TString(_) => Kind::Str,
            Expr::NoneLiteral(_) => Kind::NoneValue,
            Expr::List(list) => self.sequence_kind(&list.elts, Kind::List),
            Expr::Tuple(tuple) => self.sequence_kind(&tuple.elts, Kind::Tuple),
            Expr::ListComp(_) | Expr::Generator(_) => match self.comprehension_elements.get(&node_key(expr)) {
                // Tensors, or tuples of them (a matcher's `[(rows, cols) for ...]`): several
                // tensors, each element read as one.
                Some(Kind::Tensor(facts) | Kind::TensorSequence(facts)) => Kind::TensorSequence(*facts),
                Some(Kind::Number) if matches!(expr, Expr::ListComp(_)) => Kind::NumberList,
                _ if matches!(expr, Expr::ListComp(_)) => Kind::List,
                _ => Kind::Unknown,
            },
            Expr::Dict(_) | Expr::DictComp(_) => Kind::Dict,
            Expr::Attribute(attribute) => self.remembered_kind(expr, || self.attribute_kind(attribute)),
            Expr::Call(call) => self.call_kinds(call).result,
            Expr::Subscript(subscript) => self.remembered_kind(expr, || self.subscript_kind(subscript)),
            Expr::BinOp(binop) => self.binop_kind(binop),
            Expr::UnaryOp(unary) => match unary.op {
                UnaryOp::Not => Kind::Number,
                UnaryOp::Invert => self.kind_of(&unary.operand),
                UnaryOp::USub | UnaryOp::UAdd => match self.kind_of(&unary.operand) {
                    Kind::Tensor(facts) => Kind::Tensor(facts.numeric()),
                    other => other,
                },
            },
            Expr::Compare(compare) => self.compare_kind(compare),
            Expr::If(if_expr) => join_instances(
                &self.class_refs,
                &self.classes,
                self.kind_of(&if_expr.body),
                self.kind_of(&if_expr.orelse),
            ),
            // `limit or lengths.max()` is one of its operands.
            Expr::BoolOp(bool_op) => {
                let kinds = bool_op.values.iter().map(|value| self.kind_of(value));
                if bool_op.op == ast::BoolOp::Or {
                    kinds.reduce(Kind::join_fallback).unwrap_or_default()
                } else {
                    kinds.reduce(Kind::join).unwrap_or_default()
                }
            }
            Expr::Named(named) => self.kind_of(&named.value),
            _ => Kind::Unknown,
        }
    }

    /// The kind of an attribute or an element, inferred once while the bindings stand: rules
    /// ask about the same receivers (`self.cfg.x`, `batch["labels"]`) again and again. Not while
    /// a display's element is read (see `reading_display`), where the answer may differ.
    fn remembered_kind(&self, expr: &Expr, infer: impl FnOnce() -> Kind) -> Kind {
        if self.reading_display.get() {
            return infer();
        }
        let key = node_key(expr);
        if let Some(kind) = self.inferred.part_kinds.borrow().get(&key) {
            return *kind;
        }
        let kind = infer();
        self.inferred.part_kinds.borrow_mut().insert(key, kind);
        kind
    }

    /// Whether the value is made by an op of this function (`torch.nonzero(m)`, `x[mask]`,
    /// `x.unique()`), directly or through names assigned here, rather than returned by a project
    /// function, held in an attribute or passed in: a rule on the op reports it here.
    pub fn made_here(&self, expr: &Expr) -> bool {
        self.made_here_within(expr, 0)
    }

    fn made_here_within(&self, expr: &Expr, depth: u32) -> bool {
        if depth > 6 {
            return false;
        }
        match expr {
            Expr::Subscript(_) => true,
            Expr::BinOp(binop) => {
                self.made_here_within(&binop.left, depth + 1) || self.made_here_within(&binop.right, depth + 1)
            }
            Expr::UnaryOp(unary) => self.made_here_within(&unary.operand, depth + 1),
            Expr::ListComp(ast::ExprListComp { elt, .. }) | Expr::Generator(ast::ExprGenerator { elt, .. }) => {
                self.made_here_within(elt, depth + 1)
            }
            // A tensor's method (`x.nonzero()`) or a library function; a project function
            // returns what its own function made.
            Expr::Call(call) => {
                matches!(call.func.as_ref(), Expr::Attribute(attribute)
                    if api::is_tensor_only_method(attribute.attr.as_str()) || self.infer_kind(&attribute.value).tensor().is_some())
                    || self.callee(call).is_some_and(|callee| is_library(&callee))
            }
            Expr::Name(name) => match self.lookup(name.id.as_str()) {
                Some(Binding {
                    source: BindingSource::Value,
                    value: Some(value),
                    ..
                }) => self.made_here_within(value, depth + 1),
                Some(Binding {
                    source: BindingSource::Joined(index),
                    ..
                }) => self.joined[*index as usize].iter().all(|origin| match *origin {
                    Origin::Value(value) => self.made_here_within(value, depth + 1),
                    Origin::Parameter(_) => false,
                }),
                _ => false,
            },
            _ => false,
        }
    }

    /// A list or tuple display: tensors make a tensor sequence; a list of numbers (or of number
    /// lists) is a [`Kind::NumberList`]; anything else is `otherwise`. Each element's kind is
    /// worked out once (nested displays would otherwise cost twice per level).
    fn sequence_kind(&self, elements: &[Expr], otherwise: Kind) -> Kind {
        let Some((first, rest)) = elements.split_first() else {
            return otherwise;
        };
        match self.kind_of(first) {
            Kind::Tensor(first) => rest
                .iter()
                .try_fold(first, |facts, element| {
                    Some(facts.join(self.kind_of(element).tensor()?))
                })
                .map_or(otherwise, Kind::TensorSequence),
            Kind::Number | Kind::NumberList if otherwise == Kind::List => {
                let numbers = rest
                    .iter()
                    .all(|element| matches!(self.kind_of(element), Kind::Number | Kind::NumberList));
                if numbers { Kind::NumberList } else { otherwise }
            }
            _ => otherwise,
        }
    }

    /// The tensor facts of `expr`, if it is a tensor.
    pub fn tensor(&self, expr: &Expr) -> Option<TensorFacts> {
        self.kind_of(expr).tensor()
    }

    /// A parameter of the function, as bound on entry.
    pub fn is_parameter(&self, expr: &Expr) -> bool {
        matches!(expr, Expr::Name(name) if matches!(
            self.lookup(name.id.as_str()),
            Some(Binding { source: BindingSource::Parameter(_), .. })
        ))
    }

    /// A tensor that could be on a CUDA device.
    pub fn is_maybe_cuda_tensor(&self, expr: &Expr) -> bool {
        self.kind_for_gpu_test(expr).is_maybe_cuda_tensor()
    }

    pub(super) fn attribute_kind(&self, attribute: &ast::ExprAttribute) -> Kind {
        self.named_attribute_kind(attribute)
            .unwrap_or_else(|| self.attribute_of(self.kind_of(&attribute.value), attribute.attr.as_str()))
    }

    /// Attributes known by name rather than by their receiver's kind: `torch.float16` (through
    /// imports) and `self.<attr>` (as the class's methods set it).
    pub(super) fn named_attribute_kind(&self, attribute: &ast::ExprAttribute) -> Option<Kind> {
        let attr = attribute.attr.as_str();
        let receiver = match attribute.value.as_ref() {
            // One lookup tells an import from `self`.
            Expr::Name(name) => match self.lookup(name.id.as_str()) {
                Some(Binding {
                    source: BindingSource::Import(module),
                    ..
                }) => {
                    // Only `torch.<dtype>` names a dtype: no need to spell out the qualified name.
                    let on_torch = &**module == "torch";
                    return Some(if on_torch && api::is_dtype_name(attr) {
                        Kind::Dtype
                    } else {
                        Kind::Unknown
                    });
                }
                Some(Binding {
                    source: BindingSource::Function(id),
                    ..
                }) => return self.function_attributes.get(&(*id, attribute.attr.id.clone())).copied(),
                Some(_) => Some(name.id.as_str()),
                None => None,
            },
            value => {
                if self.import_root(value).is_some() {
                    return Some(Kind::Unknown);
                }
                None
            }
        };
        if matches!(receiver, Some("self" | "cls"))
            && let Some(class) = self.flow.class
        {
            if let Some((_, kind)) = self
                .flow
                .narrowed_attributes
                .iter()
                .rev()
                .find(|(name, _)| name == attr)
            {
                return Some(*kind);
            }
            // Set by this class's methods, else inherited from a local base.
            return Some(self.local_class_attribute(class, attr).unwrap_or_default());
        }
        None
    }

    /// The attribute `attr` of a value of kind `receiver`.
    pub(super) fn attribute_of(&self, receiver: Kind, attr: &str) -> Kind {
        match receiver {
            Kind::Tensor(facts) => match attr {
                "T" | "mT" | "H" | "mH" | "data" | "real" | "imag" => Kind::Tensor(facts),
                "grad" => Kind::Tensor(facts.numeric()),
                "shape" => Kind::Tuple,
                "device" => Kind::Device(facts.device),
                "dtype" => Kind::Dtype,
                "ndim" | "is_cuda" | "requires_grad" | "is_leaf" | "itemsize" | "nbytes" => Kind::Number,
                // Flags: `t.is_quantized`, `out.has_mask`.
                _ if attr.starts_with("is_") || attr.starts_with("has_") => Kind::Number,
                // A network's output holds per-layer tuples and sizes beside its tensors.
                _ if facts.batch == BatchSource::Output && api::is_per_layer_output(attr) => {
                    Kind::TensorSequence(facts)
                }
                _ if facts.batch == BatchSource::Output && api::names_sizes(attr) => Kind::Unknown,
                // A field of a batch, an encoding or a network's output (`batch.input_ids`,
                // `outputs.logits`): one of its tensors.
                _ if facts.has_tensor_fields() => Kind::Tensor(facts),
                _ => Kind::Unknown,
            },
            Kind::TensorSequence(facts) => match attr {
                "indices" | "pivots" => Kind::Tensor(facts.integer()),
                "values" | "L" | "inverse" | "result" | "info" | "eigenvalues" | "eigenvectors" | "U" | "S" | "Vh"
                | "Q" | "R" | "solution" | "LU" | "mean" | "std" => Kind::Tensor(facts.numeric()),
                _ => Kind::Unknown,
            },
            Kind::Module(..) | Kind::Object(_) if receiver.class().is_some() => {
                match self.instance_attribute(receiver, attr) {
                    Some(kind) => kind,
                    None if matches!(receiver, Kind::Module(..)) && matches!(attr, "weight" | "bias") => {
                        Kind::Tensor(TensorFacts::on(Device::Unknown))
                    }
                    None => Kind::Unknown,
                }
            }
            Kind::Module(..) => match attr {
                "weight" | "bias" => Kind::Tensor(TensorFacts::on(Device::Unknown)),
                _ => Kind::Unknown,
            },
            Kind::NdArray => Kind::NdArray,
            _ => Kind::Unknown,
        }
    }

    /// `self.<attr>` of a local class, as its methods (or a local base's) assign it.
    pub fn local_class_attribute(&self, class: ClassId, attr: &str) -> Option<Kind> {
        let assigned = self
            .lineage(class)
            .find_map(|id| self.classes[id as usize].attrs.get(attr).copied());
        match assigned {
            // What the project found has every method the class calls on it.
            None | Some(Kind::Unknown) if !self.facts.duck_typed.is_empty() => {
                let name = self.classes[class as usize].name.as_str();
                self.facts
                    .duck_typed
                    .get(attr)
                    .and_then(|classes| classes.iter().find(|(class, _)| **class == *name))
                    .map(|(_, told)| self.kind_from_project(told))
                    .or(assigned)
            }
            _ => assigned,
        }
    }

    /// `head.proj` of an instance of a local class: what its methods assign to `self.proj`;
    /// of another file's class, what the project found they assign.
    fn instance_attribute(&self, receiver: Kind, attr: &str) -> Option<Kind> {
        match self.local_class_of(receiver) {
            Some(class) => self.local_class_attribute(class, attr),
            None => {
                let class = self.imported_class_of(receiver)?;
                let told = self.facts.attributes.get(&(class, attr.into()))?;
                Some(self.kind_from_project(told))
            }
        }
    }

    fn subscript_kind(&self, subscript: &ast::ExprSubscript) -> Kind {
        if let Expr::Attribute(attribute) = subscript.value.as_ref()
            && attribute.attr.as_str() == "shape"
        {
            return Kind::Number;
        }
        // `dt[0]` of `dt = (Profile(), Profile())`: that element.
        if let (Expr::Name(name), Expr::NumberLiteral(index)) = (subscript.value.as_ref(), subscript.slice.as_ref())
            && let Some(Binding {
                value: Some(Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. })),
                ..
            }) = self.lookup(name.id.as_str())
            && let ast::Number::Int(index) = &index.value
            && let Some(element) = index.as_usize().and_then(|index| elts.get(index))
            && !self.reading_display.replace(true)
        {
            let kind = self.kind_of(element);
            self.reading_display.set(false);
            return kind;
        }
        // `x.max(1)[1]`: the indices of a pair of values and indices.
        if let (Expr::Call(call), Expr::NumberLiteral(index)) = (subscript.value.as_ref(), subscript.slice.as_ref())
            && let ast::Number::Int(index) = &index.value
            && let Some(pair) = self.values_and_indices(call)
            && let Some(Returned::Value(kind)) = index.as_usize().and_then(|index| pair.get(index))
        {
            return *kind;
        }
        if self.is_optimizer_step(subscript) {
            return Kind::Tensor(TensorFacts::on(Device::Cpu));
        }
        match self.kind_of(&subscript.value) {
            Kind::Tensor(facts) => {
                if self.is_boolean_index(&subscript.slice) {
                    Kind::Tensor(TensorFacts {
                        data_dependent: true,
                        pinned: false,
                        ..facts
                    })
                } else {
                    Kind::Tensor(TensorFacts { pinned: false, ..facts })
                }
            }
            Kind::TensorSequence(facts) => Kind::Tensor(facts),
            Kind::NdArray => Kind::NdArray,
            Kind::Unknown => self.indexed_by_gpu_tensors(&subscript.slice),
            _ => Kind::Unknown,
        }
    }

    /// `mat[rows, cols]` of a value nothing is known of, by index tensors one of which may be on
    /// a GPU: PyTorch indexes only a tensor on the indices' device (a numpy array or a list
    /// cannot take a GPU tensor among several indices), so the elements are a tensor there.
    fn indexed_by_gpu_tensors(&self, slice: &Expr) -> Kind {
        let Expr::Tuple(tuple) = slice else {
            return Kind::Unknown;
        };
        tuple
            .elts
            .iter()
            .find_map(|index| self.tensor(index).filter(|facts| facts.may_be_cuda()))
            .map_or(Kind::Unknown, |facts| {
                Kind::Tensor(TensorFacts {
                    data_dependent: facts.boolean,
                    ..TensorFacts::on(facts.device)
                })
            })
    }

    /// `opt.state[p]["step"]` (also through `state = opt.state[p]`): an optimizer keeps its step
    /// count as a CPU tensor unless it is fused or `capturable`. Measured on an H100 with PyTorch
    /// 2.11 (docs/accuracy.md): after a step, AdamW's and Adagrad's step is on the CPU and its
    /// `.item()` takes 0.02 ms behind queued work; `Adam(capturable=True)`'s and
    /// `AdamW(fused=True)`'s is on the GPU and takes 428 ms. A fused optimizer's, or one the code
    /// builds `capturable`, stays unknown.
    fn is_optimizer_step(&self, subscript: &ast::ExprSubscript) -> bool {
        let Expr::StringLiteral(key) = subscript.slice.as_ref() else {
            return false;
        };
        if literal_text(&key.value) != Some("step") {
            return false;
        }
        let state = match subscript.value.as_ref() {
            Expr::Name(name) => match self.lookup(name.id.as_str()) {
                Some(Binding { value: Some(value), .. }) => value,
                _ => return false,
            },
            value => value,
        };
        let Expr::Subscript(per_parameter) = state else {
            return false;
        };
        let Expr::Attribute(attribute) = per_parameter.value.as_ref() else {
            return false;
        };
        if attribute.attr.as_str() != "state" {
            return false;
        }
        match self.kind_of(&attribute.value) {
            Kind::Optimizer(optimizer) => !optimizer.fused && !optimizer.capturable,
            Kind::Unknown | Kind::Object(_) => true,
            _ => false,
        }
    }

    /// Is this index a boolean mask (or a tuple holding one)? A parameter named as a mask
    /// (`mask`, `*_mask`, `keep`, `valid`) whose kind the code does not show counts as one.
    pub fn is_boolean_index(&self, index: &Expr) -> bool {
        let is_mask = |expr: &Expr| self.is_boolean_tensor(expr) || self.is_mask_parameter(expr);
        match index {
            Expr::Tuple(tuple) => tuple.elts.iter().any(is_mask),
            _ => is_mask(index),
        }
    }

    pub fn is_mask_parameter(&self, expr: &Expr) -> bool {
        let Expr::Name(name) = expr else {
            return false;
        };
        let Some(Binding {
            source: BindingSource::Parameter(_),
            kind,
            ..
        }) = self.lookup(name.id.as_str())
        else {
            return false;
        };
        let unknown = match kind {
            Kind::Tensor(facts) => !facts.integer,
            other => other.is_opaque(),
        };
        unknown && crate::semantic::names::names_a_mask(name.id.as_str())
    }

    pub fn is_boolean_tensor(&self, expr: &Expr) -> bool {
        self.asked(expr, Question::Mask)
            .tensor()
            .is_some_and(|facts| facts.boolean)
    }

    /// What `target op= value` leaves in `target`: the kind of the binary operation, as the
    /// in-place operators keep it (a mask stays a mask under `&=`, `|=`, `^=`).
    pub fn aug_assign_kind(&self, assign: &ast::StmtAugAssign) -> Kind {
        let target = self.kind_of(&assign.target);
        let value = self.kind_of(&assign.value);
        // `keep &= score > t` of masks is a mask.
        let logical = matches!(
            assign.op,
            ast::Operator::BitAnd | ast::Operator::BitOr | ast::Operator::BitXor
        );
        match (target, value) {
            (Kind::Tensor(a), Kind::Tensor(b)) if logical && a.boolean && b.boolean => Kind::Tensor(TensorFacts {
                device: a.device.combine(b.device),
                data_dependent: false,
                ..a
            }),
            (target, Kind::Tensor(b)) if logical && b.boolean && target.is_opaque() => Kind::Tensor(TensorFacts {
                data_dependent: false,
                ..b
            }),
            (Kind::Tensor(a), Kind::Tensor(b)) => Kind::Tensor(TensorFacts {
                device: a.device.combine(b.device),
                ..a.numeric()
            }),
            (Kind::Tensor(facts), _) | (_, Kind::Tensor(facts)) => Kind::Tensor(facts.numeric()),
            // `total = 0; total += loss` with a loss of unknown kind: a tensor if the
            // loss is one, so no longer known to be a number.
            (Kind::Number, value) if value.is_opaque() => Kind::Unknown,
            (kind, _) => kind,
        }
    }

    fn binop_kind(&self, binop: &ast::ExprBinOp) -> Kind {
        let left = self.kind_of(&binop.left);
        let right = self.kind_of(&binop.right);
        match (left, right) {
            (Kind::Tensor(a), Kind::Tensor(b)) => {
                // bool x bool stays bool for the logical operators and for `*` and `+` (and, or).
                let logical = matches!(
                    binop.op,
                    Operator::BitAnd | Operator::BitOr | Operator::BitXor | Operator::Mult | Operator::Add
                );
                Kind::Tensor(TensorFacts {
                    device: a.device.combine(b.device),
                    boolean: logical && a.boolean && b.boolean,
                    integer: a.integer && b.integer && keeps_integers(binop.op),
                    data_dependent: a.data_dependent || b.data_dependent,
                    pinned: false,
                    batch: BatchSource::NotABatch,
                })
            }
            // `"loss %f" % loss` is text, whatever it formats.
            (Kind::Str, _) if matches!(binop.op, Operator::Mod | Operator::Add | Operator::Mult) => Kind::Str,
            (Kind::Tensor(facts), other) | (other, Kind::Tensor(facts)) => {
                // The other operand is not known to be a tensor: almost always a Python number
                // (a CPU tensor mixed with a CUDA one would raise), so the device carries over.
                let device = facts.device;
                let integer = facts.integer && other == Kind::Number && keeps_integers(binop.op);
                Kind::Tensor(TensorFacts {
                    device,
                    integer,
                    ..facts.numeric()
                })
            }
            (Kind::Number, Kind::Number) => Kind::Number,
            (Kind::NdArray, Kind::Number | Kind::NdArray) | (Kind::Number, Kind::NdArray) => Kind::NdArray,
            (Kind::Number, Kind::Str) if binop.op == Operator::Mult => Kind::Str,
            // `[0] * n`, `a + b` of number lists.
            (Kind::NumberList, Kind::NumberList | Kind::Number) | (Kind::Number, Kind::NumberList) => Kind::NumberList,
            (Kind::List | Kind::NumberList, Kind::List | Kind::NumberList | Kind::Number)
            | (Kind::Number, Kind::List) => Kind::List,
            _ => Kind::Unknown,
        }
    }

    fn compare_kind(&self, compare: &ast::ExprCompare) -> Kind {
        use ast::CmpOp;
        if compare
            .ops
            .iter()
            .all(|op| matches!(op, CmpOp::Is | CmpOp::IsNot | CmpOp::In | CmpOp::NotIn))
        {
            return Kind::Number;
        }
        let mut device: Option<Device> = None;
        let mut data_dependent = false;
        let mut all_host = true;
        for operand in std::iter::once(&*compare.left).chain(compare.comparators.iter()) {
            let kind = self.kind_of(operand);
            if let Kind::Tensor(facts) = kind {
                device = Some(device.map_or(facts.device, |d| d.combine(facts.device)));
                data_dependent |= facts.data_dependent;
            }
            all_host &= kind.is_known_host_value() && !matches!(kind, Kind::Tensor(_));
        }
        match device {
            Some(device) => Kind::Tensor(TensorFacts {
                data_dependent,
                ..TensorFacts::on(device).boolean()
            }),
            None if all_host => Kind::Number,
            None => Kind::Unknown,
        }
    }

    /// The device an argument names: `"cuda"`, `torch.device("cpu")`, a device variable,
    /// `x.device`, `0`. `None` when the argument is not a device (a dtype, `None`).
    pub fn device_of(&self, expr: &Expr) -> Option<Device> {
        match expr {
            Expr::StringLiteral(string) => literal_text(&string.value).map(device_from_str),
            Expr::NoneLiteral(_) => None,
            Expr::If(if_expr) => {
                let a = self.device_of(&if_expr.body)?;
                let b = self.device_of(&if_expr.orelse)?;
                Some(a.join(b))
            }
            _ => match self.asked(expr, Question::Device) {
                Kind::Device(device) => Some(device),
                // A device index (`device=0`, `device=rank`).
                Kind::Number => Some(Device::Cuda),
                Kind::Dtype | Kind::NoneValue | Kind::Tensor(_) => None,
                Kind::Str => Some(Device::Unknown),
                // `x.to(dtype)`, `x.to(self.dtype)`, `x.to(torch.get_default_dtype())` change
                // the dtype; anything else unknown may be a device.
                Kind::Unknown if names_a_dtype(expr) => None,
                Kind::Unknown => Some(Device::Unknown),
                _ => None,
            },
        }
    }

    /// The device a `.to(...)` call moves to: `None` when it only changes the dtype.
    pub fn target_device_of_to(&self, call: &ast::ExprCall) -> Option<Device> {
        if let Some(keyword) = call.arguments.find_keyword("device") {
            return self.device_of(&keyword.value);
        }
        let first = call.arguments.args.first()?;
        if let Kind::Tensor(other) = self.asked(first, Question::Device) {
            return Some(other.device);
        }
        self.device_of(first)
    }

    /// The kind an annotation gives: tensors (`Optional[Tensor]`, `Tensor | None`), numbers,
    /// strings, devices, modules, arrays, and instances of project classes (`head: Head`).
    pub fn annotation_kind(&self, annotation: &Expr) -> Kind {
        let tensor = Kind::Tensor(TensorFacts::on(Device::Unknown));
        match annotation {
            Expr::StringLiteral(string) => match literal_text(&string.value).unwrap_or_default() {
                "Tensor" | "torch.Tensor" => tensor,
                "torch.BoolTensor" => Kind::Tensor(TensorFacts::on(Device::Unknown).boolean()),
                name if self.local_class(name).is_some() => self.instance_of_named(name),
                _ => Kind::Unknown,
            },
            Expr::Name(name) if name.id.as_str() == "Tensor" => tensor,
            Expr::Name(name) => match name.id.as_str() {
                "int" | "float" | "bool" | "complex" => Kind::Number,
                "str" => Kind::Str,
                local if self.local_class(local).is_some() => self.instance_of_named(local),
                _ => self.qualified_annotation(annotation),
            },
            // Optional[Tensor], Tensor | None
            Expr::Subscript(subscript) if names_optional(&subscript.value) => self.annotation_kind(&subscript.slice),
            // `list[int]`, `List[Tensor]`, `tuple[Tensor, Tensor]` (tensors, unpacked or
            // indexed), `dict[str, Tensor]`.
            Expr::Subscript(subscript) if let Some(container) = container_annotation(&subscript.value) => {
                let elements = match subscript.slice.as_ref() {
                    Expr::Tuple(tuple) => tuple.elts.iter().filter(|e| !e.is_ellipsis_literal_expr()).collect(),
                    element => vec![element],
                };
                let element_kinds: Vec<Kind> = elements.iter().map(|e| self.annotation_kind(e)).collect();
                let all = |kind: fn(Kind) -> bool| !element_kinds.is_empty() && element_kinds.iter().all(|k| kind(*k));
                match container {
                    Container::Dict => Kind::Dict,
                    // Also of tuples of tensors (`list[tuple[Tensor, Tensor]]`): several tensors.
                    _ if all(|k| matches!(k, Kind::Tensor(_) | Kind::TensorSequence(_))) => {
                        Kind::TensorSequence(TensorFacts::on(Device::Unknown))
                    }
                    Container::Sequence if all(|k| k == Kind::Number) => Kind::NumberList,
                    Container::Sequence => Kind::List,
                    Container::Tuple => Kind::Tuple,
                }
            }
            Expr::BinOp(binop) if matches!(&*binop.right, Expr::NoneLiteral(_)) => self.annotation_kind(&binop.left),
            _ => self.qualified_annotation(annotation),
        }
    }

    fn qualified_annotation(&self, annotation: &Expr) -> Kind {
        let Some(qualified) = self.qualified_name(annotation) else {
            return Kind::Unknown;
        };
        match qualified.as_str() {
            "torch.Tensor" | "torch.FloatTensor" | "torch.LongTensor" => Kind::Tensor(TensorFacts::on(Device::Unknown)),
            "torch.BoolTensor" => Kind::Tensor(TensorFacts::on(Device::Unknown).boolean()),
            "torch.device" => Kind::Device(Device::Unknown),
            "torch.nn.Module" => Kind::Module(ModuleKind::Plain, None),
            q if q.starts_with("numpy.") => Kind::NdArray,
            q => self.project_instance(q).unwrap_or_default(),
        }
    }
}

/// A container type an annotation subscripts.
enum Container {
    /// `list`, `List`, `Sequence`: elements of one kind (not `Iterable`: a loader is one).
    Sequence,
    Tuple,
    Dict,
}

fn container_annotation(expr: &Expr) -> Option<Container> {
    let name = match expr {
        Expr::Name(name) => name.id.as_str(),
        Expr::Attribute(attribute) => attribute.attr.as_str(),
        _ => return None,
    };
    match name {
        "list" | "List" | "Sequence" | "MutableSequence" => Some(Container::Sequence),
        "tuple" | "Tuple" => Some(Container::Tuple),
        "dict" | "Dict" | "Mapping" | "MutableMapping" => Some(Container::Dict),
        _ => None,
    }
}

/// `Optional` / `typing.Optional`.
fn names_optional(expr: &Expr) -> bool {
    match expr {
        Expr::Name(name) => name.id.as_str() == "Optional",
        Expr::Attribute(attribute) => attribute.attr.as_str() == "Optional",
        _ => false,
    }
}

/// A name, attribute or call named like a dtype (`dtype`, `self.compute_dtype`,
/// `torch.get_default_dtype()`).
fn names_a_dtype(expr: &Expr) -> bool {
    let name = match expr {
        Expr::Name(name) => name.id.as_str(),
        Expr::Attribute(attribute) => attribute.attr.as_str(),
        Expr::Call(call) => return names_a_dtype(&call.func),
        _ => return false,
    };
    name.contains("dtype")
}

/// Arithmetic that keeps an integer tensor an integer one (true division does not).
fn keeps_integers(op: Operator) -> bool {
    matches!(
        op,
        Operator::Add | Operator::Sub | Operator::Mult | Operator::FloorDiv | Operator::Mod
    )
}

pub fn device_from_str(value: &str) -> Device {
    if value == "cuda" || value.starts_with("cuda:") {
        Device::Cuda
    } else if value == "cpu" {
        Device::Cpu
    } else {
        Device::Unknown
    }
}
