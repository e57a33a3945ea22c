//! What a call gives: call inference (remembered per call node while the bindings stand),
//! calls of what the file binds (modules, methods, the file's functions and classes,
//! builtins), registries and loaders, and what the project says its functions return. Calls
//! through imports by their qualified name, and tensor methods, are in `infer_torch`.
//!
//! It may import the model (its parent) and its scopes, the kinds, the facts, the torch tables
//! and the naming conventions.

use std::rc::Rc;

use ruff_python_ast::{self as ast, Expr};
use ruff_text_size::Ranged;

use super::scopes::{Binding, BindingSource};
use super::{SemanticModel, StoredCallable, call_key};
use crate::parse::literal_text;
use crate::semantic::facts::{ProjectReturns, ReturnsByType};
use crate::semantic::ids::FunctionId;
use crate::semantic::kinds::{BatchSource, Device, Kind, Returned, TensorFacts};
use crate::semantic::torch_api as api;

/// What a call returns, and what the called expression itself is (`Module(CtcLoss)` for
/// `ctc(...)`).
#[derive(Debug, Clone, Copy)]
pub(super) struct CallKinds {
    pub(super) result: Kind,
    pub(super) callee: Kind,
}

impl<'a> SemanticModel<'a> {
    pub(super) fn call_kinds(&self, call: &ast::ExprCall) -> CallKinds {
        let key = call_key(call);
        if let Some(kinds) = self.inferred.call_kinds.borrow().get(&key) {
            return *kinds;
        }
        let kinds = self.infer_call(call);
        self.inferred.call_kinds.borrow_mut().insert(key, kinds);
        kinds
    }

    /// Does `call` call an `nn.Module` (whose output is a tensor, whatever its `forward` tells)?
    pub fn calls_a_module(&self, call: &ast::ExprCall) -> bool {
        matches!(self.call_kinds(call).callee, Kind::Module(..))
    }

    /// The qualified name of what `call` calls (`torch.nn.functional.cross_entropy`), resolved
    /// once per call however many rules ask.
    pub fn callee(&self, call: &ast::ExprCall) -> Option<Rc<str>> {
        let key = call_key(call);
        if let Some(name) = self.inferred.callees.borrow().get(&key) {
            return name.clone();
        }
        let name: Option<Rc<str>> = self.qualified_name(&call.func).map(Rc::from);
        self.inferred.callees.borrow_mut().insert(key, name.clone());
        name
    }

    fn infer_call(&self, call: &ast::ExprCall) -> CallKinds {
        // `tokenizer(text, return_tensors="pt")`, `processor(images=..., return_tensors="pt")`:
        // tensors made on the CPU, whoever made them.
        if call.arguments.find_keyword("return_tensors").is_some_and(
            |keyword| matches!(&keyword.value, Expr::StringLiteral(pt) if literal_text(&pt.value) == Some("pt")),
        ) {
            return CallKinds {
                result: Kind::Tensor(TensorFacts {
                    batch: BatchSource::Encoded,
                    ..TensorFacts::on(Device::Cpu)
                }),
                callee: Kind::Unknown,
            };
        }
        if let Some(batches) = self.batches_of(call) {
            return CallKinds {
                result: batches,
                callee: Kind::Unknown,
            };
        }
        if let Some(instance) = self.registry_instance(call) {
            return CallKinds {
                result: instance,
                callee: Kind::Unknown,
            };
        }
        if let Some(qualified) = self.callee(call) {
            return CallKinds {
                result: self.qualified_call_kind(&qualified, call),
                callee: Kind::Unknown,
            };
        }
        let (result, callee) = self.unqualified_call_kind(call);
        CallKinds { result, callee }
    }

    /// `MODELS.build(cfg)` (mmengine), `ROI_HEADS.get(name)(cfg)` (fvcore, detectron2): an
    /// instance of whichever class of the registry the config names. The file knows only the
    /// registry; the project knows its classes (those its decorators register), so the instance
    /// is referred to by the registry's name, as an imported class is by its own.
    fn registry_instance(&self, call: &ast::ExprCall) -> Option<Kind> {
        let registry = match call.func.as_ref() {
            Expr::Attribute(build) if build.attr.as_str() == "build" => &build.value,
            Expr::Call(get) => match get.func.as_ref() {
                Expr::Attribute(get) if get.attr.as_str() == "get" => &get.value,
                _ => return None,
            },
            _ => return None,
        };
        let spelled = self.registry_spelled(registry)?;
        Some(Kind::Object(self.imported_class_ref(&spelled)))
    }

    /// How the file spells a registry (what `@MODELS.register_module()` registers in and
    /// `MODELS.build(cfg)` builds from): the qualified name of an imported one
    /// (`mmdet.registry.MODELS`), the name of one the module makes itself
    /// (`MODELS = Registry("model")`). `None` for anything else.
    pub fn registry_spelled(&self, expr: &Expr) -> Option<String> {
        if let Some(qualified) = self.qualified_name(expr) {
            return Some(qualified);
        }
        let Expr::Name(name) = expr else {
            return None;
        };
        let binding = self.lookup(name.id.as_str())?;
        let module_level = self.scopes[0]
            .bindings
            .get(name.id.as_str())
            .is_some_and(|global| std::ptr::eq(global, binding));
        (module_level && matches!(binding.source, BindingSource::Value) && matches!(binding.value, Some(Expr::Call(_))))
            .then(|| name.id.to_string())
    }

    /// A call not reached through an import: a module instance, a method, a local function
    /// or class, a builtin. Returns (result, callee).
    fn unqualified_call_kind(&self, call: &ast::ExprCall) -> (Kind, Kind) {
        // Each link of a method chain evaluates its receiver once (twice would be exponential
        // in the chain's length).
        let (callee, receiver) = match call.func.as_ref() {
            Expr::Attribute(attribute) => match self.named_attribute_kind(attribute) {
                Some(kind) => (kind, None),
                None => {
                    let receiver = self.kind_of(&attribute.value);
                    (self.attribute_of(receiver, attribute.attr.as_str()), Some(receiver))
                }
            },
            func => (self.kind_of(func), None),
        };
        // What the project found the methods reached return says more than a module's
        // generic tensor.
        if let Some(returns) = self.project_result(call) {
            return (self.kind_from_project(&returns.kind), callee);
        }
        // A module of a class of this file whose `forward` gives host data or several tensors
        // (a matcher's CPU indices) returns that, not a network's output.
        if let Some(returned) = self
            .instance_method_returns(callee, "forward")
            .filter(|returned| match returned {
                Kind::Tensor(facts) => facts.device == Device::Cpu,
                other => matches!(other, Kind::TensorSequence(_) | Kind::Number | Kind::NumberList),
            })
        {
            return (returned, callee);
        }
        if matches!(callee, Kind::Module(..)) || (callee.is_opaque() && self.looks_like_model_call(call)) {
            // Its shape follows its inputs', whose data-dependent sizes synced where they were
            // made.
            let output = TensorFacts {
                batch: BatchSource::Output,
                data_dependent: false,
                ..self.device_of_inputs(call).numeric()
            };
            return (Kind::Tensor(output), callee);
        }
        let result = match call.func.as_ref() {
            // `Net.from_config(cfg)`, `Net._from_config(cfg)`: an alternative constructor.
            Expr::Attribute(attribute)
                if is_alternative_constructor(attribute.attr.as_str())
                    && let Some(instance) = self.instance_of_class_named(&attribute.value) =>
            {
                instance
            }
            Expr::Attribute(attribute)
                if matches!(attribute.value.as_ref(), Expr::Name(receiver) if receiver.id.as_str() == "self")
                    && let Some(kind) = self.stored_library_call(attribute.attr.as_str(), call) =>
            {
                kind
            }
            Expr::Attribute(attribute) => {
                let receiver = receiver.unwrap_or_else(|| self.kind_of(&attribute.value));
                self.method_call_kind(attribute, call, receiver)
            }
            Expr::Name(name) => match self.lookup(name.id.as_str()) {
                None => self.builtin_call_kind(name.id.as_str(), call),
                Some(Binding {
                    source: BindingSource::Function(id),
                    ..
                }) => self.local_returns(*id, call),
                Some(Binding {
                    source: BindingSource::Class(id),
                    ..
                }) => self.instance_of_local(*id),
                Some(binding) => match binding.kind {
                    Kind::Module(..) => Kind::Tensor(TensorFacts::on(Device::Unknown)),
                    _ => Kind::Unknown,
                },
            },
            _ => Kind::Unknown,
        };
        (result, callee)
    }

    /// What the project says a call through an object returns (`self.head.loss(x)`).
    fn project_result(&self, call: &ast::ExprCall) -> Option<&ProjectReturns> {
        if self.facts.results.is_empty() {
            return None;
        }
        self.facts.results.get(&call.start().to_u32())
    }

    /// The elements of the tuple a project function called here returns, as the project tells
    /// them: by the call's offset (a method through an object) or by the name the file calls.
    pub fn project_returned_tuple(&self, call: &ast::ExprCall) -> Option<Box<[Returned]>> {
        let returns = match self.project_result(call) {
            Some(returns) => returns,
            None => {
                if self.facts.returns.is_empty() {
                    return None;
                }
                self.facts.returns.get(&*self.callee(call)?)?
            }
        };
        let elements = returns.tuple.as_deref()?;
        Some(elements.iter().map(|e| self.returned_in_file(e)).collect())
    }

    /// What calling a project name gives: what the function returns, from the project's facts;
    /// else an instance for a class's name (`CamelCase` by convention; the project pass
    /// resolves it to the class, or finds no class and no method).
    pub(super) fn project_call_kind(&self, qualified: &str, call: &ast::ExprCall) -> Option<Kind> {
        if let Some(returns) = self.facts.returns.get(qualified) {
            let by_type = returns.by_type.as_deref();
            return Some(
                by_type
                    .and_then(|by_type| self.returns_by_argument(by_type, call))
                    .unwrap_or_else(|| self.kind_from_project(&returns.kind)),
            );
        }
        self.project_instance(qualified)
    }

    /// What a call of a function of this file (by name, or a method of the current class
    /// through `self`) returns, once it is analysed.
    fn local_returns(&self, id: FunctionId, call: &ast::ExprCall) -> Kind {
        let function = &self.functions[id as usize];
        function
            .returns_by_type
            .as_deref()
            .and_then(|by_type| self.returns_by_argument(by_type, call))
            .or(function.returns)
            .unwrap_or_default()
    }

    /// What `call` returns where the type of its argument picks the callee's `return`s
    /// (`to_tensor([0, 2])`: the tensor made from a list, on the CPU), if it does.
    fn returns_by_argument(&self, by_type: &ReturnsByType, call: &ast::ExprCall) -> Option<Kind> {
        let arguments = &call.arguments;
        let argument = arguments
            .args
            .iter()
            .take_while(|argument| !argument.is_starred_expr())
            .nth(usize::from(by_type.slot))
            .or_else(|| arguments.find_keyword(&by_type.parameter).map(|keyword| &keyword.value))?;
        by_type
            .for_argument(self.kind_of(argument))
            .filter(|kind| !kind.is_opaque())
    }

    /// An empty tensor made to hold a place (`torch.empty(0)`, `torch.zeros(0)`,
    /// `torch.tensor([])`): what is set in its place is what the attribute holds.
    pub fn is_empty_placeholder(&self, value: &Expr) -> bool {
        let Expr::Call(call) = value else {
            return false;
        };
        let Some(callee) = self.callee(call) else {
            return false;
        };
        let empty = |expr: &Expr| match expr {
            Expr::NumberLiteral(_) => is_zero_int(expr),
            Expr::List(list) => list.elts.is_empty(),
            Expr::Tuple(tuple) => tuple.elts.is_empty(),
            _ => false,
        };
        match (&*callee, &*call.arguments.args) {
            ("torch.empty" | "torch.zeros" | "torch.ones" | "torch.tensor" | "torch.Tensor", [size]) => empty(size),
            ("torch.Tensor", []) => true,
            _ => false,
        }
    }

    /// An instance of the project class `expr` names (a local class, or an imported name
    /// spelled as a class is).
    fn instance_of_class_named(&self, expr: &Expr) -> Option<Kind> {
        if let Expr::Name(name) = expr
            && let Some(Binding {
                source: BindingSource::Class(id),
                ..
            }) = self.lookup(name.id.as_str())
        {
            return Some(self.instance_of_local(*id));
        }
        self.project_instance(&self.qualified_name(expr)?)
    }

    /// `model(xb)`, `self.backbone(x)`, `criterion(out, y)`, `model(**inputs)`: an unknown
    /// callable named like a network or a loss, applied to a tensor that may be on the GPU (or to
    /// keywords alone), returns such a tensor.
    fn looks_like_model_call(&self, call: &ast::ExprCall) -> bool {
        let name = match call.func.as_ref() {
            Expr::Name(name) if self.lookup(name.id.as_str()).is_some() => name.id.as_str(),
            Expr::Attribute(attribute) => attribute.attr.as_str(),
            _ => return false,
        };
        // The arguments first: most calls take no GPU tensor, and their kinds are cached. A
        // network called with keywords alone (`model(**inputs)`, `model(input_ids=ids)`) is
        // told by its name.
        if call.arguments.args.is_empty() && !call.arguments.keywords.is_empty() {
            return crate::semantic::names::calls_a_network(name);
        }
        if !call
            .arguments
            .args
            .iter()
            .any(|arg| self.kind_of(arg).is_maybe_cuda_tensor())
        {
            return false;
        }
        crate::semantic::names::names_a_network(name)
    }

    /// What iterates a loader's batches: `tqdm(loader)`, `iter(loader)`, `enumerate(loader)`
    /// (and each of them around another), of a `DataLoader` or of a value named as a loader.
    fn batches_of(&self, call: &ast::ExprCall) -> Option<Kind> {
        let name = match call.func.as_ref() {
            Expr::Name(name) => name.id.as_str(),
            Expr::Attribute(attribute) => attribute.attr.as_str(),
            _ => return None,
        };
        let builtin = || self.lookup(name).is_none();
        let enumerates = match name {
            "enumerate" if builtin() => true,
            "iter" if builtin() => false,
            name if crate::semantic::names::names_a_progress_wrapper(name) => false,
            _ => return None,
        };
        let loader = call.arguments.args.first()?;
        match self.kind_of(loader) {
            Kind::DataLoader {
                pinned,
                constructor,
                enumerated,
            } => Some(Kind::DataLoader {
                pinned,
                constructor,
                enumerated: enumerated || enumerates,
            }),
            Kind::Unknown if crate::semantic::names::names_a_loader(loader) => Some(Kind::DataLoader {
                pinned: false,
                constructor: None,
                enumerated: enumerates,
            }),
            _ => None,
        }
    }

    fn builtin_call_kind(&self, name: &str, call: &ast::ExprCall) -> Kind {
        match name {
            "len" | "int" | "float" | "bool" | "round" | "abs" | "hash" | "id" | "isinstance" | "callable" => {
                match (name, call.arguments.args.first().map(|arg| self.kind_of(arg))) {
                    ("abs", Some(kind @ Kind::Tensor(_))) => kind,
                    // `abs(d)` of a value nothing is known of may be a tensor's.
                    ("abs", Some(Kind::Unknown)) => Kind::Unknown,
                    _ => Kind::Number,
                }
            }
            "str" | "repr" | "format" => Kind::Str,
            "list" | "sorted" => Kind::List,
            "tuple" => Kind::Tuple,
            "dict" => Kind::Dict,
            // `next(it)` of `it = iter(loader)`: one batch, as a `for` over it gives.
            "next" => call
                .arguments
                .args
                .first()
                .map_or(Kind::Unknown, |it| self.kind_of(it).element()),
            "sum" | "max" | "min" => {
                let mut kind: Option<Kind> = None;
                for arg in &call.arguments.args {
                    let arg_kind = match self.kind_of(arg) {
                        Kind::TensorSequence(facts) => Kind::Tensor(facts.numeric()),
                        Kind::Tensor(facts) if call.arguments.args.len() == 1 => Kind::Tensor(facts.numeric()),
                        other => other,
                    };
                    kind = Some(kind.map_or(arg_kind, |k| k.join(arg_kind)));
                }
                kind.unwrap_or_default()
            }
            _ => Kind::Unknown,
        }
    }

    fn method_call_kind(&self, attribute: &ast::ExprAttribute, call: &ast::ExprCall, receiver: Kind) -> Kind {
        let method = attribute.attr.as_str();
        match receiver {
            Kind::Tensor(facts) => self.tensor_method_kind(facts, method, call),
            Kind::TensorSequence(facts) if matches!(method, "items" | "values") => Kind::TensorSequence(facts),
            Kind::Module(..) | Kind::Object(_) if let Some(kind) = self.instance_method_returns(receiver, method) => {
                kind
            }
            // An instance of a project class that may be a module: moving it returns itself.
            Kind::Object(class) => match method {
                "to" | "cuda" | "cpu" | "train" | "eval" | "float" | "half" | "bfloat16" | "double"
                | "requires_grad_" => Kind::Object(class),
                _ => Kind::Unknown,
            },
            Kind::Module(module, class) => match method {
                "parameters" | "buffers" => Kind::TensorSequence(TensorFacts::on(Device::Unknown)),
                "to" | "cuda" | "cpu" | "train" | "eval" | "float" | "half" | "bfloat16" | "double"
                | "requires_grad_" | "type" => Kind::Module(module, class),
                "state_dict" => Kind::Dict,
                "forward" => Kind::Tensor(TensorFacts::on(Device::Unknown)),
                _ => Kind::Unknown,
            },
            Kind::Distribution { device, .. } => match method {
                "sample" | "rsample" => Kind::Tensor(TensorFacts::on(device)),
                "log_prob" | "entropy" | "cdf" | "icdf" => Kind::Tensor(TensorFacts::on(Device::Unknown)),
                _ => Kind::Unknown,
            },
            Kind::NdArray => match method {
                "tolist" => Kind::NumberList,
                "item" => Kind::Number,
                _ => Kind::NdArray,
            },
            Kind::Device(_) | Kind::Number | Kind::Str | Kind::List | Kind::NumberList | Kind::Dict | Kind::Tuple => {
                Kind::Unknown
            }
            Kind::Unknown => {
                if let Expr::Name(receiver) = attribute.value.as_ref()
                    && matches!(receiver.id.as_str(), "self" | "cls")
                    && let Some(id) = self.method_of_current_class(method)
                {
                    return self.local_returns(id, call);
                }
                match method {
                    "to" => match self.target_device_of_to(call) {
                        Some(device) => Kind::Tensor(TensorFacts::on(device)),
                        None => Kind::Unknown,
                    },
                    "cuda" => Kind::Tensor(TensorFacts::on(Device::Cuda)),
                    // `t.dim()`, `t.dense_dim()`: a Python value whatever `t` is.
                    _ if api::method_returns_python_value(method) => Kind::Number,
                    // Only a tensor has the method: what it gives a tensor of unknown device and
                    // dtype (`.bool()` is a mask, `.long()` integers).
                    _ if api::is_tensor_only_method(method) && !matches!(method, "cpu" | "item" | "numel") => {
                        self.tensor_method_kind(TensorFacts::on(Device::Unknown), method, call)
                    }
                    _ => Kind::Unknown,
                }
            }
            _ => Kind::Unknown,
        }
    }

    /// What `head.loss(x)` returns for an instance of a local class, once the method is analysed.
    fn instance_method_returns(&self, receiver: Kind, method: &str) -> Option<Kind> {
        let class = self.local_class_of(receiver)?;
        let id = self.method_of(class, method)?;
        self.functions[id as usize].returns
    }

    /// What `self.<attr>(...)` gives where the class keeps torch functions in `attr`
    /// ([`StoredCallable::Library`]): what each of them gives, joined.
    fn stored_library_call(&self, attr: &str, call: &ast::ExprCall) -> Option<Kind> {
        let stored = self
            .lineage(self.flow.class?)
            .find_map(|id| self.classes[id as usize].stored_callables.get(attr))?;
        stored
            .iter()
            .filter_map(|callable| match callable {
                StoredCallable::Library(qualified) => Some(self.qualified_call_kind(qualified, call)),
                StoredCallable::Method(_) | StoredCallable::Function(_) => None,
            })
            .reduce(Kind::join)
    }
}

/// The integer literal `0`.
pub fn is_zero_int(expr: &Expr) -> bool {
    matches!(expr, Expr::NumberLiteral(number) if matches!(&number.value, ast::Number::Int(n) if *n == 0u8))
}

/// A classmethod that builds an instance by convention: `from_config`, `from_pretrained`,
/// `_from_config`.
fn is_alternative_constructor(method: &str) -> bool {
    method.strip_prefix('_').unwrap_or(method).starts_with("from_")
}
