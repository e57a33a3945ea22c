//! Narrowing: what a test tells inside the arm it selects (a device compared, an
//! `isinstance` of a value or of one of the function's own parameters).

use ruff_python_ast::name::Name;
use ruff_python_ast::{self as ast, Expr};

use super::Checker;
use crate::parse::literal_text;
use crate::semantic::facts::TypeSet;
use crate::semantic::{Binding, BindingSource, Device, Kind, TensorFacts, device_from_str};
use crate::syntax::on_self;

impl<'a> Checker<'a> {
    /// `t.is_cuda`, `t.device.type == "cuda"` (and their negations) tell where `t` lives: in
    /// the arm where the test holds (`holds`), or in the one where it does not.
    pub(super) fn device_narrowing(&self, test: &'a Expr, holds: bool) -> Option<(Narrowed<'a>, Kind)> {
        let (name, on_cuda) = match test {
            Expr::UnaryOp(unary) if unary.op == ast::UnaryOp::Not => {
                return self.device_narrowing(&unary.operand, !holds);
            }
            // t.is_cuda
            Expr::Attribute(attribute) if attribute.attr.as_str() == "is_cuda" => match attribute.value.as_ref() {
                Expr::Name(name) => (name, true),
                _ => return None,
            },
            // t.is_cpu
            Expr::Attribute(attribute) if attribute.attr.as_str() == "is_cpu" => match attribute.value.as_ref() {
                Expr::Name(name) => (name, false),
                _ => return None,
            },
            // t.device.type == "cuda" / != "cpu", t.device == torch.device("cpu"), either way round
            Expr::Compare(compare) => {
                let ([op], [right]) = (&*compare.ops, &*compare.comparators) else {
                    return None;
                };
                let (name, is_cuda) = self
                    .device_compared(&compare.left, right)
                    .or_else(|| self.device_compared(right, &compare.left))?;
                match op {
                    ast::CmpOp::Eq | ast::CmpOp::Is => (name, is_cuda),
                    ast::CmpOp::NotEq | ast::CmpOp::IsNot => (name, !is_cuda),
                    _ => return None,
                }
            }
            _ => return None,
        };
        let Kind::Tensor(facts) = self.model.kind_of(&Expr::Name(name.clone())) else {
            return None;
        };
        let device = if on_cuda == holds { Device::Cuda } else { Device::Cpu };
        Some((Narrowed::Name(&name.id), Kind::Tensor(facts.with_device(device))))
    }

    /// `t.device.type` compared with `"cuda"` or `"cpu"`, or `t.device` with `torch.device(...)`
    /// of one: the tensor, and whether the device named is a GPU.
    fn device_compared<'e>(&self, side: &'e Expr, device: &Expr) -> Option<(&'e ast::ExprName, bool)> {
        let named = |text: &str| match device_from_str(text) {
            Device::Cpu => Some(false),
            Device::Cuda => Some(true),
            _ => None,
        };
        let Expr::Attribute(attribute) = side else { return None };
        match (attribute.attr.as_str(), attribute.value.as_ref(), device) {
            ("type", Expr::Attribute(device_attr), Expr::StringLiteral(literal))
                if device_attr.attr.as_str() == "device" =>
            {
                let Expr::Name(name) = device_attr.value.as_ref() else {
                    return None;
                };
                Some((name, named(literal_text(&literal.value)?)?))
            }
            ("device", Expr::Name(name), Expr::Call(call))
                if self.model.qualified_name(&call.func).as_deref() == Some("torch.device") =>
            {
                let [Expr::StringLiteral(literal)] = &*call.arguments.args else {
                    return None;
                };
                Some((name, named(literal_text(&literal.value)?)?))
            }
            _ => None,
        }
    }

    /// `isinstance(x, (list, tuple))` of a parameter `x` still as given: its slot, and the
    /// types the arm takes.
    pub(super) fn parameter_type_test(&self, test: &Expr) -> Option<(u16, TypeSet)> {
        let (Expr::Name(subject), classes) = self.isinstance_test(test)? else {
            return None;
        };
        let Some(Binding {
            source: BindingSource::Parameter(slot),
            ..
        }) = self.model.lookup(subject.id.as_str())
        else {
            return None;
        };
        let types = classes.into_iter().map(|class| {
            self.common_class_types(class)
                .unwrap_or_else(|| match self.model.qualified_name(class).as_deref() {
                    Some("torch.nn.Parameter" | "torch.nn.parameter.Parameter") => TypeSet::TENSOR,
                    Some(q) if q.starts_with("numbers.") => TypeSet::NUMBER,
                    Some("collections.abc.Sequence" | "typing.Sequence") => TypeSet::LIST.union(TypeSet::TUPLE),
                    _ => TypeSet::OTHER,
                })
        });
        Some((*slot, types.reduce(TypeSet::union)?))
    }

    /// `isinstance(subject, T)` or `isinstance(subject, (T, U))` with the builtin: the subject
    /// and each class named.
    fn isinstance_test<'e>(&self, test: &'e Expr) -> Option<(&'e Expr, Vec<&'e Expr>)> {
        let Expr::Call(call) = test else { return None };
        let (Expr::Name(func), [subject, classes]) = (call.func.as_ref(), &*call.arguments.args) else {
            return None;
        };
        if func.id.as_str() != "isinstance" || !self.model.is_builtin("isinstance") {
            return None;
        }
        let classes = match classes {
            Expr::Tuple(tuple) => tuple.elts.iter().collect(),
            other => vec![other],
        };
        Some((subject, classes))
    }

    /// The types a class an `isinstance` test names stands for, where both of its readers (a
    /// parameter's type test, a narrowing) know it alike: a builtin (any other builtin is
    /// `OTHER`), `torch.Tensor`, a numpy type, a mapping; `None` for other classes.
    fn common_class_types(&self, class: &Expr) -> Option<TypeSet> {
        if let Expr::Name(builtin) = class
            && self.model.is_builtin(builtin.id.as_str())
        {
            return Some(match builtin.id.as_str() {
                "int" | "float" | "bool" | "complex" => TypeSet::NUMBER,
                "str" => TypeSet::STR,
                "list" => TypeSet::LIST,
                "tuple" => TypeSet::TUPLE,
                "dict" => TypeSet::DICT,
                _ => TypeSet::OTHER,
            });
        }
        match self.model.qualified_name(class).as_deref()? {
            "torch.Tensor" => Some(TypeSet::TENSOR),
            "collections.abc.Mapping"
            | "collections.abc.MutableMapping"
            | "typing.Mapping"
            | "typing.MutableMapping" => Some(TypeSet::DICT),
            q if q.starts_with("numpy.") => Some(TypeSet::NDARRAY),
            _ => None,
        }
    }

    /// `isinstance(name, T)` and `isinstance(self.attr, T)` tell what it is inside the arm (a
    /// project class's instance: its methods are what calls on it reach).
    pub(super) fn isinstance_narrowing(&self, test: &'a Expr) -> Option<(Narrowed<'a>, Kind)> {
        let (subject, classes) = self.isinstance_test(test)?;
        let narrowed = match subject {
            Expr::Name(name) => Narrowed::Name(&name.id),
            Expr::Attribute(attribute) if on_self(attribute) => Narrowed::SelfAttribute(&attribute.attr.id),
            _ => return None,
        };
        let current = self.model.kind_of(subject);
        // A loader's batch (or a network's output) is a tensor or a container of tensors like
        // it: found to be a dict, list or tuple (`for k, v in batch.items(): if isinstance(v,
        // dict):`), its fields are still the batch's.
        let container = |kind: Kind| match current {
            Kind::Tensor(facts) if facts.has_tensor_fields() => current,
            _ => kind,
        };
        let kinds = classes.into_iter().map(|class| match self.common_class_types(class) {
            Some(TypeSet::NUMBER) => Kind::Number,
            Some(TypeSet::STR) => Kind::Str,
            Some(TypeSet::LIST) => container(Kind::List),
            Some(TypeSet::TUPLE) => container(Kind::Tuple),
            Some(TypeSet::DICT) => container(Kind::Dict),
            Some(TypeSet::TENSOR) => match current {
                Kind::Tensor(_) => current,
                _ => Kind::Tensor(TensorFacts::on(Device::Unknown)),
            },
            Some(TypeSet::NDARRAY) => Kind::NdArray,
            Some(_) => Kind::Unknown,
            None => match self.model.annotation_kind(class) {
                instance @ (Kind::Object(_) | Kind::Module(..)) => instance,
                _ => Kind::Unknown,
            },
        });
        let kind = kinds.reduce(Kind::join)?;
        (kind != Kind::Unknown).then_some((narrowed, kind))
    }
}

/// What a test narrows inside an arm.
#[derive(Clone, Copy)]
pub(super) enum Narrowed<'a> {
    Name(&'a Name),
    /// `self.<attr>`.
    SelfAttribute(&'a Name),
}
