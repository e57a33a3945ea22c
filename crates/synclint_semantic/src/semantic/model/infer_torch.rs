//! What a call through an import gives, by its qualified name (torch's factories, functions
//! and classes, numpy, `typing.cast`, and project functions as the project's facts tell), and
//! what a tensor's methods give.
//!
//! It may import the model (its parent) and its imports, the kinds and the torch tables.

use ruff_python_ast::{self as ast, Expr};
use ruff_text_size::Ranged;

use super::SemanticModel;
use crate::parse::literal_text;
use crate::semantic::kinds::{BatchSource, Device, Kind, OptimizerFacts, Returned, TensorFacts};
use crate::semantic::names::is_library;
use crate::semantic::torch_api as api;

impl<'a> SemanticModel<'a> {
    pub(super) fn qualified_call_kind(&self, qualified: &str, call: &ast::ExprCall) -> Kind {
        let arguments = &call.arguments;
        let keyword_true = |name: &str| {
            arguments
                .find_keyword(name)
                .is_some_and(|k| matches!(&k.value, Expr::BooleanLiteral(b) if b.value))
        };
        if api::is_factory(qualified) {
            let device = match self.device_given(arguments) {
                Some(device) => device.unwrap_or(self.default_device()),
                None if api::is_like_factory(qualified) => arguments
                    .args
                    .first()
                    .and_then(|arg| self.tensor(arg))
                    .map_or(Device::Unknown, |facts| facts.device),
                None => match (qualified, arguments.args.first().map(|arg| self.kind_of(arg))) {
                    ("torch.as_tensor" | "torch.asarray", Some(Kind::Tensor(facts))) => facts.device,
                    _ => self.default_device(),
                },
            };
            let dtype = self.dtype_keyword(call);
            // `ones_like(mask)` is a mask.
            let like = match qualified {
                "torch.ones_like" | "torch.zeros_like" | "torch.empty_like" | "torch.full_like" if dtype.is_none() => {
                    arguments.args.first().and_then(|arg| self.tensor(arg))
                }
                _ => None,
            };
            let boolean = dtype.as_deref() == Some("torch.bool") || like.is_some_and(|facts| facts.boolean);
            let integer = match dtype.as_deref() {
                None if like.is_some() => like.is_some_and(|facts| facts.integer),
                Some(dtype) => api::is_integer_dtype(dtype),
                // `arange` of integers counts in int64.
                None => {
                    matches!(qualified, "torch.randint" | "torch.randperm" | "torch.randint_like")
                        // `torch.tensor(3)`, `torch.tensor([0, 2])`: int64 from int literals.
                        || (matches!(qualified, "torch.tensor" | "torch.as_tensor")
                            && arguments.args.first().is_some_and(holds_only_int_literals))
                        || (qualified == "torch.arange"
                            && !arguments
                                .args
                                .iter()
                                .any(|arg| matches!(arg, Expr::NumberLiteral(n) if n.value.is_float())))
                }
            };
            let pinned = keyword_true("pin_memory");
            return Kind::Tensor(TensorFacts {
                boolean,
                integer,
                pinned,
                ..TensorFacts::on(device)
            });
        }
        match qualified {
            "torch.from_numpy" => return Kind::Tensor(TensorFacts::on(Device::Cpu)),
            // A `Variable` is its tensor (autograd's old wrapper).
            "torch.autograd.Variable" | "torch.autograd.variable.Variable" => {
                return match arguments.args.first().map(|arg| self.kind_of(arg)) {
                    Some(kind @ Kind::Tensor(_)) => kind,
                    _ => Kind::Tensor(TensorFacts::on(Device::Unknown)),
                };
            }
            // `torch.Tensor([[3, 224, 224]])` copies its data into a new float tensor.
            "torch.Tensor" => return Kind::Tensor(TensorFacts::on(self.default_device())),
            // The legacy typed constructors: `torch.FloatTensor([0.5])` is a CPU tensor,
            // `torch.cuda.LongTensor(n)` a CUDA one, of the type's dtype.
            typed if let Some((device, dtype)) = api::legacy_tensor_type(typed) => {
                let facts = TensorFacts::on(device);
                return Kind::Tensor(match dtype {
                    "Bool" => facts.boolean(),
                    "Long" | "Int" | "Short" | "Byte" | "Char" => facts.integer(),
                    _ => facts,
                });
            }
            "torch.device" => {
                return Kind::Device(
                    arguments
                        .args
                        .first()
                        .and_then(|arg| self.device_of(arg))
                        .unwrap_or(Device::Unknown),
                );
            }
            "torch.nn.Parameter" | "torch.nn.parameter.Parameter" | "torch.nn.Buffer" => {
                return Kind::Tensor(TensorFacts::on(Device::Unknown));
            }
            "torch.cuda.FloatTensor" | "torch.cuda.LongTensor" => return Kind::Tensor(TensorFacts::on(Device::Cuda)),
            _ => {}
        }
        if let Some(module) = api::nn_module_class(qualified) {
            if module.only_from_torch_constructor() {
                self.loss_module_made.set(true);
            }
            return Kind::Module(module, None);
        }
        if let Some(adam_family) = api::optimizer_class(qualified) {
            return Kind::Optimizer(OptimizerFacts {
                fused: keyword_true("fused"),
                capturable: arguments
                    .find_keyword("capturable")
                    .is_some_and(|k| !matches!(&k.value, Expr::BooleanLiteral(b) if !b.value)),
                adam_family,
                constructor: call.range(),
            });
        }
        if api::is_grad_scaler(qualified) {
            return Kind::GradScaler;
        }
        if api::is_data_loader(qualified) {
            return Kind::DataLoader {
                pinned: keyword_true("pin_memory"),
                constructor: Some(call.range()),
                enumerated: false,
            };
        }
        if api::is_distribution_class(qualified) {
            let disabled = arguments
                .find_keyword("validate_args")
                .is_some_and(|k| matches!(&k.value, Expr::BooleanLiteral(b) if !b.value));
            // Its parameters' device: a Python number's is the default one.
            let parameters = arguments.args.iter().chain(
                arguments
                    .keywords
                    .iter()
                    .filter(|k| k.arg.as_ref().is_some_and(|name| name != "validate_args"))
                    .map(|k| &k.value),
            );
            let device = parameters
                .map(|parameter| match self.kind_of(parameter) {
                    Kind::Tensor(facts) => facts.device,
                    Kind::Number => self.default_device(),
                    _ => Device::Unknown,
                })
                .reduce(Device::combine)
                .unwrap_or(Device::Unknown);
            return Kind::Distribution {
                validating: !disabled && !self.validation_disabled(),
                normal: api::samples_with_torch_normal(qualified),
                device,
            };
        }
        if api::is_cuda_sync_object(qualified) {
            return Kind::CudaSyncObject;
        }
        if qualified.starts_with("numpy.") {
            return Kind::NdArray;
        }
        if qualified == "typing.cast"
            && let Some(class) = arguments.args.first()
        {
            return self.annotation_kind(class);
        }
        if !is_library(qualified)
            && let Some(kind) = self.project_call_kind(qualified, call)
        {
            return kind;
        }
        if api::returns_tensor(qualified) {
            let name = qualified.rsplit('.').next().unwrap_or(qualified);
            return self.torch_function_kind(name, call);
        }
        match qualified.rsplit('.').next() {
            Some(name)
                if matches!(name, "numel" | "equal" | "allclose")
                    || name.starts_with("is_")
                    || name.starts_with("are_") =>
            {
                Kind::Number
            }
            _ => Kind::Unknown,
        }
    }

    /// The device a factory's keywords give it: `device=d`, or a `"device"` entry of a dict
    /// spread into them (`**tensor_kwargs` with `tensor_kwargs = {"device": x.device, ...}`); a
    /// spread of what the function cannot see may give any (`Some(Some(Device::Unknown))`).
    /// `None` where none is given; `Some(None)` where the given one cannot be told as a device.
    fn device_given(&self, arguments: &ast::Arguments) -> Option<Option<Device>> {
        if let Some(keyword) = arguments.find_keyword("device") {
            return Some(self.device_of(&keyword.value));
        }
        let mut given = None;
        for spread in arguments.keywords.iter().filter(|keyword| keyword.arg.is_none()) {
            let dict = match &spread.value {
                Expr::Name(name) => self.lookup(name.id.as_str()).and_then(|binding| binding.value),
                value => Some(value),
            };
            let device = match dict {
                Some(Expr::Dict(dict)) => dict
                    .items
                    .iter()
                    .find(|item| matches!(&item.key, Some(Expr::StringLiteral(key)) if literal_text(&key.value) == Some("device")))
                    .map(|item| self.device_of(&item.value)),
                Some(Expr::Call(call)) if matches!(call.func.as_ref(), Expr::Name(name) if name.id == "dict") => {
                    self.device_given(&call.arguments)
                }
                _ => Some(Some(Device::Unknown)),
            };
            given = given.or(device);
        }
        given
    }

    /// The device of a torch op's result: CUDA if any tensor input is, CPU if all are.
    pub(super) fn device_of_inputs(&self, call: &ast::ExprCall) -> TensorFacts {
        let mut facts: Option<TensorFacts> = None;
        // An input of unknown kind is most likely a tensor too (a model's output): its device
        // is unknown, so the result's is.
        let mut unknown_input = false;
        let mut visit = |kind: Kind| {
            unknown_input |= kind == Kind::Unknown;
            if let Kind::Tensor(t) | Kind::TensorSequence(t) = kind {
                facts = Some(match facts {
                    None => t,
                    Some(f) => TensorFacts {
                        device: f.device.combine(t.device),
                        data_dependent: f.data_dependent || t.data_dependent,
                        ..f
                    },
                });
            }
        };
        for arg in &call.arguments.args {
            match arg {
                Expr::List(list) => list.elts.iter().for_each(|elt| visit(self.kind_of(elt))),
                Expr::Tuple(tuple) => tuple.elts.iter().for_each(|elt| visit(self.kind_of(elt))),
                _ => visit(self.kind_of(arg)),
            }
        }
        let facts = facts.map_or(TensorFacts::on(Device::Unknown), |f| TensorFacts {
            pinned: false,
            batch: BatchSource::NotABatch,
            ..f
        });
        if unknown_input {
            facts.with_device(facts.device.combine(Device::Unknown))
        } else {
            facts
        }
    }

    fn torch_function_kind(&self, name: &str, call: &ast::ExprCall) -> Kind {
        // Python numbers alone (`torch.div(n, k, rounding_mode="floor")`) make a tensor on the
        // default device, the CPU unless `with torch.device(...)` says otherwise.
        let numbers_only =
            !call.arguments.args.is_empty() && call.arguments.args.iter().all(|arg| self.kind_of(arg) == Kind::Number);
        let inputs = if numbers_only {
            TensorFacts::on(self.default_device())
        } else {
            self.device_of_inputs(call)
        };
        let as_tuple = call
            .arguments
            .find_keyword("as_tuple")
            .is_some_and(|k| matches!(&k.value, Expr::BooleanLiteral(b) if b.value));
        match name {
            "where" if call.arguments.args.len() == 1 && call.arguments.keywords.is_empty() => {
                Kind::TensorSequence(TensorFacts {
                    data_dependent: true,
                    ..inputs.integer()
                })
            }
            "nonzero" if as_tuple => Kind::TensorSequence(TensorFacts {
                data_dependent: true,
                ..inputs.integer()
            }),
            "nonzero" | "argwhere" => Kind::Tensor(TensorFacts {
                data_dependent: true,
                ..inputs.integer()
            }),
            _ if api::returns_indices(name) => Kind::Tensor(TensorFacts {
                data_dependent: false,
                ..inputs.integer()
            }),
            "unique" | "unique_consecutive"
                if call.arguments.keywords.iter().any(|k| {
                    k.arg.as_ref().is_some_and(|a| a.as_str().starts_with("return_"))
                        && matches!(&k.value, Expr::BooleanLiteral(b) if b.value)
                }) =>
            {
                Kind::TensorSequence(TensorFacts {
                    data_dependent: true,
                    ..inputs.numeric()
                })
            }
            _ if api::is_data_dependent_function(name) => Kind::Tensor(TensorFacts {
                data_dependent: true,
                ..inputs.numeric()
            }),
            _ if api::returns_tensor_sequence(name) => Kind::TensorSequence(inputs.numeric()),
            _ if returns_values_and_indices(name, call)
                && call
                    .arguments
                    .args
                    .get(1)
                    .is_none_or(|dim| self.kind_of(dim) == Kind::Number) =>
            {
                Kind::TensorSequence(inputs.numeric())
            }
            _ if api::is_boolean_function(name) => Kind::Tensor(inputs.boolean()),
            _ if api::is_reduction(name) => Kind::Tensor(TensorFacts {
                data_dependent: false,
                ..inputs.numeric()
            }),
            _ if api::keeps_dtype(name) => Kind::Tensor(self.with_dtype_of_inputs(inputs, name, call)),
            _ => Kind::Tensor(inputs.numeric()),
        }
    }

    /// The dtype a call's `dtype=` names (`torch.bool`), qualified.
    fn dtype_keyword(&self, call: &ast::ExprCall) -> Option<String> {
        call.arguments
            .find_keyword("dtype")
            .and_then(|k| self.qualified_name(&k.value))
    }

    /// The result of an op that keeps its inputs' dtype (`torch.stack`, `torch.cat`,
    /// `torch.where(c, a, b)`): a mask when every tensor input is one (an index
    /// when every one is an index), unless `dtype=` says otherwise.
    fn with_dtype_of_inputs(&self, inputs: TensorFacts, name: &str, call: &ast::ExprCall) -> TensorFacts {
        if let Some(dtype) = self.dtype_keyword(call) {
            return of_dtype(inputs, &dtype);
        }
        let args = &call.arguments.args;
        let inputs_of_dtype: &[Expr] = match name {
            // The condition picks; the values give the dtype.
            "where" => args.get(1..).unwrap_or_default(),
            _ => args,
        };
        let (mut boolean, mut integer, mut any) = (true, true, false);
        let mut visit = |kind: Kind| {
            if let Kind::Tensor(t) | Kind::TensorSequence(t) = kind {
                boolean &= t.boolean;
                integer &= t.integer;
                any = true;
            } else if kind != Kind::Number {
                boolean = false;
                integer = false;
            }
        };
        for arg in inputs_of_dtype {
            match arg {
                Expr::List(list) => list.elts.iter().for_each(|elt| visit(self.kind_of(elt))),
                Expr::Tuple(tuple) => tuple.elts.iter().for_each(|elt| visit(self.kind_of(elt))),
                _ => visit(self.kind_of(arg)),
            }
        }
        match (any, boolean, integer) {
            (true, true, _) => inputs.boolean(),
            (true, _, true) => inputs.integer(),
            _ => inputs.numeric(),
        }
    }

    /// The dtype a call names among its positional arguments or as `dtype=` (`t.to(x.device,
    /// torch.float16)`, `t.type(torch.bool)`).
    fn dtype_argument(&self, call: &ast::ExprCall) -> Option<String> {
        call.arguments
            .args
            .iter()
            .chain(call.arguments.find_keyword("dtype").map(|k| &k.value))
            .find_map(|arg| self.qualified_name(arg).filter(|q| api::is_dtype(q)))
    }

    pub(super) fn tensor_method_kind(&self, facts: TensorFacts, method: &str, call: &ast::ExprCall) -> Kind {
        let keyword_true = |name: &str| {
            call.arguments
                .find_keyword(name)
                .is_some_and(|k| matches!(&k.value, Expr::BooleanLiteral(b) if b.value))
        };
        match method {
            "item" => Kind::Number,
            "tolist" => Kind::NumberList,
            "numpy" => Kind::NdArray,
            "size" if call.arguments.is_empty() => Kind::Tuple,
            "size" => Kind::Number,
            _ if api::method_returns_python_value(method) => Kind::Number,
            "cpu" => Kind::Tensor(facts.with_device(Device::Cpu)),
            "cuda" => Kind::Tensor(facts.with_device(Device::Cuda)),
            "to" => {
                let facts = self.dtype_argument(call).map_or(facts, |dtype| of_dtype(facts, &dtype));
                match self.target_device_of_to(call) {
                    Some(device) => Kind::Tensor(facts.with_device(device)),
                    None => Kind::Tensor(facts),
                }
            }
            // `t.type_as(other)`: `other`'s dtype and device.
            "type_as" => {
                let other = call.arguments.args.first().and_then(|arg| self.tensor(arg));
                let device = other.map_or(Device::Unknown, |other| other.device);
                let facts = facts.with_device(device).numeric();
                Kind::Tensor(other.map_or(facts, |other| TensorFacts {
                    boolean: other.boolean,
                    integer: other.integer,
                    ..facts
                }))
            }
            // `m.type(torch.bool)`: the dtype named (without one it returns a type name).
            "type" if call.arguments.is_empty() => Kind::Str,
            "type" => Kind::Tensor(self.dtype_argument(call).map_or(facts, |dtype| of_dtype(facts, &dtype))),
            "pin_memory" => Kind::Tensor(TensorFacts {
                pinned: true,
                ..facts.with_device(Device::Cpu)
            }),
            "items" | "values" if facts.has_tensor_fields() => Kind::TensorSequence(facts),
            "get" | "pop" if facts.has_tensor_fields() => Kind::Tensor(facts),
            "nonzero" if keyword_true("as_tuple") => Kind::TensorSequence(TensorFacts {
                data_dependent: true,
                ..facts.integer()
            }),
            "nonzero" | "argwhere" => Kind::Tensor(TensorFacts {
                data_dependent: true,
                ..facts.integer()
            }),
            "long" | "int" | "short" | "byte" => Kind::Tensor(TensorFacts {
                pinned: false,
                ..facts.integer()
            }),
            _ if api::returns_indices(method) => Kind::Tensor(TensorFacts {
                data_dependent: false,
                ..facts.integer()
            }),
            _ if api::is_data_dependent_function(method) => Kind::Tensor(TensorFacts {
                data_dependent: true,
                ..facts.numeric()
            }),
            "unique" => Kind::TensorSequence(TensorFacts {
                data_dependent: true,
                ..facts.numeric()
            }),
            // Pieces of a mask are masks.
            "split" | "chunk" | "unbind" | "tensor_split" | "hsplit" | "vsplit" | "dsplit" => {
                Kind::TensorSequence(TensorFacts { pinned: false, ..facts })
            }
            _ if api::returns_tensor_sequence(method) || returns_values_and_indices(method, call) => {
                Kind::TensorSequence(facts.numeric())
            }
            // New tensors like the receiver keep its dtype unless told otherwise.
            "new_ones" | "new_zeros" | "new_full" | "new_empty" => {
                let facts = TensorFacts {
                    data_dependent: false,
                    pinned: false,
                    ..facts
                };
                Kind::Tensor(self.dtype_keyword(call).map_or(facts, |dtype| of_dtype(facts, &dtype)))
            }
            _ if api::is_boolean_function(method) => {
                let reduced = api::is_reduction(method);
                Kind::Tensor(TensorFacts {
                    data_dependent: facts.data_dependent && !reduced,
                    ..facts.boolean()
                })
            }
            _ if api::is_reduction(method) => Kind::Tensor(TensorFacts {
                data_dependent: false,
                ..facts.numeric()
            }),
            _ if api::keeps_dtype_and_device(method) => Kind::Tensor(TensorFacts { pinned: false, ..facts }),
            _ => Kind::Tensor(facts.numeric()),
        }
    }
}

impl SemanticModel<'_> {
    /// The pair a torch op of values and where they sit returns (`topk`, `sort`, `kthvalue`,
    /// `mode`, `cummax`, `cummin`, `max(x, dim)` ...), element by element: the values, then
    /// int64 indices on the same device. `_, idx = x.topk(k)` binds an index tensor, as
    /// `x.topk(k).indices` reads one.
    pub fn values_and_indices(&self, call: &ast::ExprCall) -> Option<Box<[Returned]>> {
        let name = match call.func.as_ref() {
            Expr::Attribute(attribute) => attribute.attr.as_str(),
            _ => return None,
        };
        if !(returns_values_and_indices(name, call)
            || matches!(name, "topk" | "sort" | "kthvalue" | "mode" | "cummax" | "cummin"))
        {
            return None;
        }
        let Kind::TensorSequence(facts) = self.call_kinds(call).result else {
            return None;
        };
        Some(Box::new([
            Returned::Value(Kind::Tensor(facts)),
            Returned::Value(Kind::Tensor(facts.integer())),
        ]))
    }
}

/// `x.max(dim)` / `torch.max(x, dim)` return `(values, indices)`; without a dim, a tensor.
fn returns_values_and_indices(name: &str, call: &ast::ExprCall) -> bool {
    matches!(name, "max" | "min" | "median" | "nanmedian")
        && (!call.arguments.args.is_empty() || call.arguments.find_keyword("dim").is_some())
}

/// `facts` with the dtype `dtype` (qualified: `torch.bool`, `torch.long`) makes them: a mask,
/// an index or a number.
fn of_dtype(facts: TensorFacts, dtype: &str) -> TensorFacts {
    match dtype {
        "torch.bool" => facts.boolean(),
        dtype if api::is_integer_dtype(dtype) => facts.integer(),
        _ => facts.numeric(),
    }
}

/// An int literal, or a list or tuple of them (nested too): what `torch.tensor` makes int64 of.
fn holds_only_int_literals(expr: &Expr) -> bool {
    match expr {
        Expr::NumberLiteral(number) => number.value.is_int(),
        Expr::UnaryOp(unary) if unary.op == ast::UnaryOp::USub => holds_only_int_literals(&unary.operand),
        Expr::List(ast::ExprList { elts, .. }) | Expr::Tuple(ast::ExprTuple { elts, .. }) => {
            !elts.is_empty() && elts.iter().all(holds_only_int_literals)
        }
        _ => false,
    }
}
