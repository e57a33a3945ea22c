//! Binding names to kinds: assignments and their unpacking, imports, loop targets, attributes
//! of `self` joined across a class's methods, and the calls that change what later code means
//! (a list that grows, a batch moved in place, the default device, a registered buffer).

use std::rc::Rc;

use ruff_python_ast::name::Name;
use ruff_python_ast::{self as ast, Expr, Stmt};

use super::Checker;
use super::functions::is_autograd_function;
use crate::parse::literal_text;
use crate::semantic::names::{ends_with_ignoring_ascii_case, last_name, names_a_loader, names_a_progress_wrapper};
use crate::semantic::torch_api as api;
use crate::semantic::{
    BatchSource, Binding, BindingSource, ClassId, Device, FunctionId, HotContext, Kind, Returned, StoredCallable,
    TensorFacts, device_from_str, is_library,
};
use crate::syntax::{any_expr, any_expr_in, is_a_size, moves_of, on_self};

impl<'a> Checker<'a> {
    pub(super) fn bind_import(&mut self, alias: &ast::Alias, module: Option<&str>, level: u32) {
        let (name, qualified) = match module {
            // `import a.b.c` binds `a`; `import a.b as c` binds `c` to `a.b`.
            None => match &alias.asname {
                Some(asname) => (asname.id.clone(), alias.name.id.to_string()),
                None => {
                    let first = alias.name.id.as_str().split('.').next().unwrap_or_default();
                    (Name::new(first), first.to_string())
                }
            },
            Some(module) => {
                let name = alias.name.id.as_str();
                let mut qualified = String::with_capacity(level as usize + module.len() + 1 + name.len());
                qualified.extend(std::iter::repeat_n('.', level as usize));
                qualified.push_str(module);
                if !(module.is_empty() && level > 0) {
                    qualified.push('.');
                }
                qualified.push_str(name);
                (
                    alias
                        .asname
                        .as_ref()
                        .map_or_else(|| alias.name.id.clone(), |a| a.id.clone()),
                    qualified,
                )
            }
        };
        self.model.bind(
            &name,
            Binding {
                kind: Kind::Unknown,
                source: BindingSource::Import(qualified.into()),
                value: None,
            },
        );
    }

    /// What a tuple literal gives, element by element (nested tuples kept).
    pub(super) fn returned(&self, value: &Expr) -> Returned {
        match value {
            Expr::Tuple(tuple) => Returned::Tuple(tuple.elts.iter().map(|elt| self.returned(elt)).collect()),
            value => Returned::Value(self.model.kind_of(value)),
        }
    }

    /// The tuple a call returns, if it returns one: a function of this file (`f(x)`,
    /// `self.m(x)`) as analysed here, else a project function as the project tells it.
    pub(super) fn returned_by(&self, call: &ast::ExprCall) -> Option<Box<[Returned]>> {
        let local = match call.func.as_ref() {
            Expr::Name(name) => match self.model.lookup(name.id.as_str()) {
                Some(Binding {
                    source: BindingSource::Function(id),
                    ..
                }) => Some(*id),
                _ => None,
            },
            Expr::Attribute(attribute) if on_self(attribute) => {
                self.model.method_of_current_class(attribute.attr.as_str())
            }
            _ => None,
        };
        if let Some(id) = local {
            return self.model.functions[id as usize].returns_tuple.clone();
        }
        // A method of a class of this file through an object (`self.assigner(x)` running
        // `forward`), each override it may reach joined.
        let sites = self.model.sites_of(call);
        let local_targets: Option<Vec<(FunctionId, usize)>> =
            sites.iter().map(|site| self.local_target(&site.callee)).collect();
        if let Some(targets) = local_targets.filter(|targets| !targets.is_empty()) {
            return targets
                .iter()
                .map(|&(id, _)| self.model.functions[id as usize].returns_tuple.clone())
                .reduce(|a, b| Returned::join_elements(&a?, &b?))
                .flatten();
        }
        self.model
            .values_and_indices(call)
            .or_else(|| self.model.project_returned_tuple(call))
    }

    /// Binds a target to what a returned tuple holds: `(mask, idx), loss = self.assign(x)`;
    /// what each name is depends on `call`.
    fn bind_returned(&mut self, target: &Expr, returned: &Returned, call: &'a Expr) {
        match (target, returned) {
            (
                Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. }),
                Returned::Tuple(elements),
            ) if elts.len() == elements.len() => {
                for (element, returned) in elts.iter().zip(elements.iter()) {
                    self.bind_returned(element, returned, call);
                }
            }
            (target, Returned::Value(kind)) => {
                // An element of a module's output its `forward` cannot tell is a tensor, as the
                // output is.
                let kind = match call {
                    Expr::Call(module_call) if *kind == Kind::Unknown && self.model.calls_a_module(module_call) => {
                        Kind::element(self.model.kind_of(call))
                    }
                    _ => *kind,
                };
                self.bind_unpacked(target, kind, call);
            }
            (target, Returned::Tuple(_)) => self.bind_target(target, Kind::Tuple, None),
        }
    }

    /// Binds a target unpacked from `whole` (`(mask, idx), loss = f(x)`, `b, n = x.shape[:2]`):
    /// what its names are depends on it.
    fn bind_unpacked(&mut self, target: &Expr, kind: Kind, whole: &'a Expr) {
        match target {
            Expr::Name(name) => self.model.bind_unpacked(&name.id, kind, whole),
            Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. }) => {
                for element in elts {
                    self.bind_unpacked(element, Kind::element(kind), whole);
                }
            }
            target => self.bind_target(target, kind, None),
        }
    }

    /// `sync = torch.cuda.synchronize`, `find = nz`, `Net = ResNet`: a name assigned another
    /// name of an import, a function or a class, or a dotted name through an import, is one
    /// more name for the same thing, and calling it calls that.
    fn alias_of(&self, value: &Expr) -> Option<Binding<'a>> {
        match value {
            Expr::Name(other) => match self.model.lookup(other.id.as_str())? {
                alias @ Binding {
                    source: BindingSource::Import(_) | BindingSource::Function(_) | BindingSource::Class(_),
                    ..
                } => Some(alias.clone()),
                _ => None,
            },
            Expr::Attribute(_) => self.model.qualified_name(value).map(|qualified| Binding {
                kind: Kind::Unknown,
                source: BindingSource::Import(qualified.into()),
                value: None,
            }),
            _ => None,
        }
    }

    /// Binds an assignment target to the kind of what is assigned.
    pub(super) fn bind_target(&mut self, target: &Expr, kind: Kind, value: Option<&'a Expr>) {
        match target {
            Expr::Name(name) => match value.and_then(|value| self.alias_of(value)) {
                Some(alias) => self.model.bind(&name.id, alias),
                None => self.model.bind_value(&name.id, kind, value),
            },
            Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. })
                if let Some(value @ Expr::Call(call)) = value
                    && let Some(elements) = self.returned_by(call)
                    && elements.len() == elts.len() =>
            {
                self.bind_returned(target, &Returned::Tuple(elements), value);
            }
            // `x, w = ctx.saved_tensors` in an autograd Function's `backward`: what `forward`
            // saved, in order (`ctx.save_for_backward(x.cpu(), w)`: a CPU tensor first).
            Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. })
                if let Some(saved) = value.and_then(|value| self.saved_for_backward(value))
                    && saved.len() == elts.len() =>
            {
                // `save_for_backward` takes tensors (or `None`): what is not copied to the CPU is
                // a tensor of unknown device.
                for (element, on_the_cpu) in elts.iter().zip(saved) {
                    let device = if on_the_cpu { Device::Cpu } else { Device::Unknown };
                    self.bind_target(element, Kind::Tensor(TensorFacts::on(device)), None);
                }
            }
            // `x, y = item` of an item a loop took from `zip(xs, ys)`.
            Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. })
                if let Some(Expr::Name(item)) = value
                    && let Some(Binding {
                        value: Some(Expr::Call(zipped)),
                        ..
                    }) = self.model.lookup(item.id.as_str())
                    && zipped.arguments.args.len() == elts.len()
                    && self.zips(zipped) =>
            {
                for (element, iterated) in elts.iter().zip(zipped.arguments.args.iter()) {
                    let kind = self.iteration_kind(iterated);
                    self.bind_target(element, kind, None);
                }
            }
            Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. }) => {
                let values: Option<&'a [Expr]> = match value {
                    Some(Expr::Tuple(tuple)) => Some(&tuple.elts),
                    Some(Expr::List(list)) => Some(&list.elts),
                    _ => None,
                };
                // `a, *rest, z = x, y, w, v`: the names before the star take values from the
                // front, those after it from the back, the star the rest.
                let star = elts.iter().position(Expr::is_starred_expr);
                let matched = values.filter(|values| match star {
                    None => values.len() == elts.len(),
                    Some(_) => values.len() >= elts.len() - 1 && !values.iter().any(Expr::is_starred_expr),
                });
                // What the elements of a value unpacked are depends on it (a call's result,
                // `x[:2]`).
                let whole = value;
                for (index, element) in elts.iter().enumerate() {
                    let value = matched.and_then(|values| match star {
                        Some(star) if index == star => None,
                        Some(star) if index > star => values.get(values.len() - (elts.len() - index)),
                        _ => values.get(index),
                    });
                    match (value, whole) {
                        (Some(value), _) => {
                            let element_kind = self.model.kind_of(value);
                            self.bind_target(element, element_kind, Some(value));
                        }
                        // `b, n, c = x.shape` whatever `x` is: sizes are host numbers.
                        (None, Some(whole)) if is_a_size(whole) => self.bind_target(element, Kind::Number, None),
                        (None, Some(whole)) => self.bind_unpacked(element, Kind::element(kind), whole),
                        (None, None) => self.bind_target(element, Kind::element(kind), None),
                    }
                }
            }
            Expr::Starred(starred) => self.bind_target(&starred.value, Kind::List, None),
            Expr::Attribute(attribute) => {
                if on_self(attribute) {
                    self.bind_self_attribute(&attribute.attr.id, kind, value);
                } else if let Expr::Name(name) = attribute.value.as_ref()
                    && let Some(Binding {
                        source: BindingSource::Function(id),
                        ..
                    }) = self.model.lookup(name.id.as_str())
                {
                    // A function's own attribute: a buffer it keeps between calls.
                    let held = self
                        .model
                        .function_attributes
                        .entry((*id, attribute.attr.id.clone()))
                        .or_insert(kind);
                    *held = held.join(kind);
                    self.model.invalidate_kinds();
                } else {
                    // An instance of a class of this file (made by a factory, `o = Head()`):
                    // what it holds joins what the class's methods assign.
                    let receiver = self.model.kind_of(&attribute.value);
                    if let Some(class) = self.model.local_class_of(receiver) {
                        self.join_class_attribute(class, &attribute.attr.id, kind, value, false);
                    }
                    self.recorder.note_set_outside(attribute.attr.id.clone());
                }
            }
            _ => {}
        }
    }

    /// For `ctx.saved_tensors` in a method of an autograd Function, the arguments its
    /// `forward` passes to `ctx.save_for_backward(...)`, each `true` where it is copied to the
    /// CPU there (`x.cpu()`, `x.to("cpu")`); `None` elsewhere, or where `forward` saves in
    /// several places.
    fn saved_for_backward(&self, value: &Expr) -> Option<Vec<bool>> {
        let Expr::Attribute(attribute) = value else { return None };
        if attribute.attr.as_str() != "saved_tensors" || !attribute.value.is_name_expr() {
            return None;
        }
        let class = self.model.flow.class?;
        if !is_autograd_function(&self.model.classes[class as usize]) {
            return None;
        }
        let forward = self.model.method_of(class, "forward")?;
        let mut saves = Vec::new();
        any_expr(&self.model.functions[forward as usize].def.body, |expr| {
            if let Expr::Call(call) = expr
                && let Expr::Attribute(method) = call.func.as_ref()
                && method.attr.as_str() == "save_for_backward"
            {
                saves.push(call);
            }
            false
        });
        let [save] = saves.as_slice() else { return None };
        let copied_to_the_cpu = |argument: &Expr| {
            let Expr::Call(call) = argument else { return false };
            let Expr::Attribute(method) = call.func.as_ref() else {
                return false;
            };
            match method.attr.as_str() {
                "cpu" => call.arguments.is_empty(),
                "to" => matches!(
                    call.arguments.args.first(),
                    Some(Expr::StringLiteral(device)) if literal_text(&device.value) == Some("cpu")
                ),
                _ => false,
            }
        };
        Some(save.arguments.args.iter().map(copied_to_the_cpu).collect())
    }

    /// `self.<attr> = value` in a method of the class being analysed: the attribute holds the
    /// join of what its methods assign.
    pub(super) fn bind_self_attribute(&mut self, attr: &Name, kind: Kind, value: Option<&Expr>) {
        let Some(class) = self.model.flow.class else {
            return;
        };
        // `self.sigmas = self.sigmas.to("cpu")` outside any arm: what the attribute held a line
        // before is gone (EDM Euler's sigmas, moved to the CPU after each schedule is built).
        let replaces = self.model.branch_logs.is_empty()
            && value.is_some_and(|value| {
                any_expr_in(
                    value,
                    |expr| matches!(expr, Expr::Attribute(read) if on_self(read) && read.attr.id == *attr),
                )
            });
        self.join_class_attribute(class, attr, kind, value, replaces);
        // `self.clip_func = torch.nn.utils.clip_grad_norm_`: calls through it give a tensor.
        if let Some(qualified) = value
            .filter(|value| matches!(value, Expr::Attribute(_) | Expr::Name(_)))
            .and_then(|value| self.model.qualified_name(value))
            .filter(|qualified| api::returns_tensor(qualified))
        {
            let stored = self.model.classes[class as usize]
                .stored_callables
                .entry(attr.clone())
                .or_default();
            let callable = StoredCallable::Library(qualified.into());
            if !stored.contains(&callable) {
                stored.push(callable);
            }
        }
    }

    /// What `class`'s instances hold in `attr`, joined with `kind` (or replaced by it).
    fn join_class_attribute(&mut self, class: ClassId, attr: &Name, kind: Kind, value: Option<&Expr>, replaces: bool) {
        let placeholder = value.is_some_and(|value| self.model.is_empty_placeholder(value));
        // The project calls an unknown value is made of (`to_tensor(w) if w is not None else
        // None`), for what a later question asks of the attribute.
        let calls: Vec<Rc<str>> = match value {
            Some(value) if kind.is_opaque() => {
                let mut calls = Vec::new();
                self.project_calls_of(value, &mut calls);
                calls
            }
            _ => Vec::new(),
        };
        let class = &mut self.model.classes[class as usize];
        if !calls.is_empty() {
            let known = class.attribute_calls.entry(attr.clone()).or_default();
            for call in calls {
                if !known.contains(&call) {
                    known.push(call);
                }
            }
        }
        let joined = match class.attrs.get(attr.as_str()) {
            None => {
                if placeholder {
                    class.placeholders.insert(attr.clone());
                }
                kind
            }
            // An empty placeholder holds nothing later code reads: what replaces it is what the
            // attribute holds.
            Some(_) if placeholder => return,
            Some(_) if class.placeholders.remove(attr.as_str()) || replaces => kind,
            Some(earlier) => earlier.join(kind),
        };
        class.attrs.insert(attr.clone(), joined);
        self.model.invalidate_kinds();
    }

    /// The project functions `value` is the result of: a call of one, or an arm of a
    /// conditional or `or` that is.
    fn project_calls_of(&self, value: &Expr, calls: &mut Vec<Rc<str>>) {
        match value {
            Expr::Call(call) => {
                if let Some(callee) = self.model.callee(call).filter(|callee| !is_library(callee)) {
                    calls.push(callee);
                }
            }
            Expr::If(if_expr) => {
                self.project_calls_of(&if_expr.body, calls);
                self.project_calls_of(&if_expr.orelse, calls);
            }
            Expr::BoolOp(bool_op) => bool_op.values.iter().for_each(|v| self.project_calls_of(v, calls)),
            _ => {}
        }
    }

    /// The kind of one element produced by iterating over `iter`.
    fn iteration_kind(&self, iter: &Expr) -> Kind {
        if let Expr::Call(call) = iter
            && let Expr::Name(func) = call.func.as_ref()
        {
            let first = call.arguments.args.first();
            if self.model.is_builtin(func.id.as_str()) {
                match func.id.as_str() {
                    "range" | "len" => return Kind::Number,
                    "enumerate" | "zip" => return Kind::Tuple,
                    "iter" | "reversed" | "list" | "sorted" | "tuple" => {
                        return first.map_or(Kind::Unknown, |arg| self.iteration_kind(arg));
                    }
                    _ => {}
                }
            } else if names_a_progress_wrapper(func.id.as_str()) {
                return first.map_or(Kind::Unknown, |arg| self.iteration_kind(arg));
            }
        }
        match self.model.kind_of(iter) {
            kind @ Kind::DataLoader { .. } => Kind::element(kind),
            // `for i in torch.arange(n)`: the items of a 1-D CPU tensor are 0-dim CPU tensors,
            // which PyTorch reads as Python numbers where they index or size (a select, no copy;
            // measured on an H200: `x[i]` 0.02 ms, `z[i, :20] = r` 0.07 ms behind 30 ms of GPU
            // work, docs/measurements).
            Kind::Tensor(facts) if facts.device == Device::Cpu && self.makes_a_1d_tensor(iter) => Kind::Number,
            Kind::Unknown if names_a_loader(iter) => Kind::Tensor(TensorFacts {
                batch: BatchSource::UnknownLoader,
                ..TensorFacts::on(Device::Cpu)
            }),
            // The rows of a parameter named as a mask are masks too.
            Kind::Tensor(facts) if self.model.is_mask_parameter(iter) => {
                Kind::Tensor(TensorFacts { boolean: true, ..facts })
            }
            kind => Kind::element(kind),
        }
    }

    /// A torch factory that always makes a 1-D tensor (`torch.arange(n)`, `torch.randperm(n)`,
    /// `torch.linspace(a, b, n)`), called here or bound to the name iterated.
    fn makes_a_1d_tensor(&self, iter: &Expr) -> bool {
        let call = match iter {
            Expr::Call(call) => call,
            Expr::Name(name) => match self.model.lookup(name.id.as_str()) {
                Some(Binding {
                    value: Some(Expr::Call(call)),
                    ..
                }) => call,
                _ => return false,
            },
            _ => return false,
        };
        matches!(
            self.model.qualified_name(&call.func).as_deref(),
            Some("torch.arange" | "torch.randperm" | "torch.linspace" | "torch.logspace")
        )
    }

    /// Binds the target of `for target in iter` (with `enumerate` and `zip` unpacked).
    pub(super) fn bind_loop_target(&mut self, target: &'a Expr, iter: &'a Expr) {
        // `for key, value in d.items()`: the key is no tensor, whatever the values are.
        if let (Expr::Tuple(tuple), Expr::Call(call)) = (target, iter)
            && let [key, value] = tuple.elts.as_slice()
            && call.arguments.is_empty()
            && matches!(call.func.as_ref(), Expr::Attribute(items) if items.attr.as_str() == "items")
        {
            self.bind_target(key, Kind::Unknown, None);
            let kind = self.iteration_kind(iter);
            self.bind_element(value, kind, iter);
            return;
        }
        if let (Expr::Tuple(tuple), Expr::Call(call)) = (target, iter)
            && let Expr::Name(func) = call.func.as_ref()
            && self.model.is_builtin(func.id.as_str())
        {
            match (func.id.as_str(), tuple.elts.as_slice()) {
                ("enumerate", [index, item]) => {
                    self.bind_target(index, Kind::Number, None);
                    match call.arguments.args.first() {
                        // `for i, (a, b) in enumerate(zip(xs, ys))`: the item as `zip` gives it.
                        Some(iterated) if item.is_tuple_expr() || item.is_list_expr() => {
                            self.bind_loop_target(item, iterated);
                        }
                        iterated => {
                            let kind = iterated.map_or(Kind::Unknown, |a| self.iteration_kind(a));
                            self.bind_target(item, kind, iterated.filter(|a| self.is_zip_call(a)));
                        }
                    }
                    return;
                }
                ("zip", items) if items.len() == call.arguments.args.len() => {
                    for (item, arg) in items.iter().zip(call.arguments.args.iter()) {
                        let kind = self.iteration_kind(arg);
                        self.bind_target(item, kind, None);
                    }
                    return;
                }
                _ => {}
            }
        }
        // `pbar = tqdm(enumerate(loader))`; `for i, batch in pbar:`
        if let (
            Expr::Tuple(tuple),
            Kind::DataLoader {
                pinned,
                constructor,
                enumerated: true,
            },
        ) = (target, self.model.kind_of(iter))
            && let [index, item] = tuple.elts.as_slice()
        {
            self.bind_target(index, Kind::Number, None);
            let batches = Kind::DataLoader {
                pinned,
                constructor,
                enumerated: false,
            };
            self.bind_target(item, Kind::element(batches), None);
            return;
        }
        let kind = self.iteration_kind(iter);
        // `for item in zip(xs, ys)`: the item keeps the `zip` it came from, so unpacking it
        // later (`x, y = item`) binds each name as `zip` gives it.
        if target.is_name_expr() && self.is_zip_call(iter) {
            self.bind_target(target, kind, Some(iter));
        } else {
            self.bind_element(target, kind, iter);
        }
    }

    /// A loop's item that nothing tells the kind of, and that the loop's body moves to a device
    /// (`x = batch.to(device)`, `batch.cuda()`), is host data: code moves what is not on the
    /// device yet. It is a batch of a loader the model cannot see, so the move is a copy from
    /// the host (SYNC401), and the item itself stays on the host after it (`batch.cpu()` copies
    /// nothing). A dtype cast (`batch.to(torch.float16)`) moves nothing, and a move to another
    /// value's device (`padding.to(latent.device)`) only makes sure the two are together: it
    /// may already be there.
    pub(super) fn bind_moved_items(&mut self, target: &'a Expr, body: &'a [Stmt]) {
        match target {
            Expr::Name(name) => {
                let unknown = self
                    .model
                    .lookup(name.id.as_str())
                    .is_some_and(|binding| binding.kind == Kind::Unknown);
                let moved = || {
                    moves_of(body, name.id.as_str()).into_iter().any(|call| {
                        matches!(call.func.as_ref(), Expr::Attribute(a) if a.attr.as_str() == "cuda")
                            || (!to_another_values_device(call)
                                && self.model.target_device_of_to(call).is_some_and(|d| d != Device::Cpu))
                    })
                };
                if unknown && moved() {
                    let batch = TensorFacts {
                        batch: BatchSource::UnknownLoader,
                        ..TensorFacts::on(Device::Cpu)
                    };
                    self.bind_target(target, Kind::Tensor(batch), None);
                }
            }
            Expr::Tuple(tuple) => tuple
                .elts
                .iter()
                .for_each(|element| self.bind_moved_items(element, body)),
            Expr::List(list) => list
                .elts
                .iter()
                .for_each(|element| self.bind_moved_items(element, body)),
            Expr::Starred(starred) => self.bind_moved_items(&starred.value, body),
            _ => {}
        }
    }

    /// Binds a loop's target to an element of `iter`. Where the element's kind is not known and
    /// a parameter is iterated (`for t in batch:`, `for k, v in batch.items():`), the element
    /// depends on it: a question about the element is a question about the parameter, which
    /// the callers of another file can answer (`v.to(device)` asks what `batch` is). Other
    /// iterables are not traced: what they depend on is rarely a parameter, and each question
    /// traced costs the project pass.
    fn bind_element(&mut self, target: &'a Expr, kind: Kind, iter: &'a Expr) {
        match target {
            Expr::Name(name) if kind.is_opaque() && self.iterates_a_parameter(iter) => {
                self.model.bind_unpacked(&name.id, kind, iter)
            }
            target => self.bind_target(target, kind, None),
        }
        if let Some(items) = self.held_items(iter) {
            self.bind_held_items(target, &items);
        }
    }

    /// A loop's item taken from a literal container of callables (`for fn in [relu, gelu]`,
    /// `for name, fn in METRICS` of `(name, function)` pairs) is one of the container's items:
    /// calling it calls each. The kinds bound already stay.
    fn bind_held_items(&mut self, target: &'a Expr, items: &[&'a Expr]) {
        match target {
            Expr::Name(name) => {
                let kind = self.model.lookup(name.id.as_str()).map_or(Kind::Unknown, |binding| binding.kind);
                self.model.bind_one_of(&name.id, kind, items);
            }
            Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. })
                if !elts.iter().any(Expr::is_starred_expr) =>
            {
                let rows: Option<Vec<&'a [Expr]>> = items
                    .iter()
                    .map(|item| match item {
                        Expr::Tuple(ast::ExprTuple { elts: row, .. }) | Expr::List(ast::ExprList { elts: row, .. })
                            if row.len() == elts.len() =>
                        {
                            Some(&row[..])
                        }
                        _ => None,
                    })
                    .collect();
                for (position, element) in elts.iter().enumerate() {
                    let column: Vec<&'a Expr> = rows.iter().flatten().map(|row| &row[position]).collect();
                    if !column.is_empty() && column.iter().any(|item| !self.held_callees(item).is_empty()) {
                        self.bind_held_items(element, &column);
                    }
                }
            }
            _ => {}
        }
    }

    /// `xs.append(t)`, `xs.insert(i, t)`, `xs.extend(ts)` of tensors on a list this function
    /// made: it holds tensors from here on (`torch.stack(xs)`, `xs[i]`, `for t in xs` read them);
    /// of Python numbers on a list made empty, it holds numbers (`x[xs]` is a host index).
    fn note_list_growth(&mut self, call: &ast::ExprCall) {
        let Expr::Attribute(attribute) = call.func.as_ref() else {
            return;
        };
        let Expr::Name(list) = attribute.value.as_ref() else {
            return;
        };
        let added = match (attribute.attr.as_str(), &*call.arguments.args) {
            ("append", [element]) | ("insert", [_, element]) => self.model.kind_of(element),
            ("extend", [elements]) => match self.model.kind_of(elements) {
                Kind::TensorSequence(facts) => Kind::Tensor(facts),
                Kind::NumberList => Kind::Number,
                _ => return,
            },
            _ => return,
        };
        let Some(Binding {
            kind,
            source: BindingSource::Value,
            value,
        }) = self.model.lookup(list.id.as_str()).cloned()
        else {
            return;
        };
        let made_empty = matches!(value, Some(Expr::List(display)) if display.elts.is_empty());
        let grown = match (kind, added) {
            (Kind::List, Kind::Tensor(facts)) => Kind::TensorSequence(facts),
            (Kind::TensorSequence(held), Kind::Tensor(facts)) => Kind::TensorSequence(held.join(facts)),
            (Kind::TensorSequence(_), _) => Kind::List,
            (Kind::List, Kind::Number) if made_empty => Kind::NumberList,
            (Kind::NumberList, Kind::Number) => Kind::NumberList,
            (Kind::NumberList, _) => Kind::List,
            _ => return,
        };
        if grown != kind {
            self.model.bind_value(&list.id, grown, value);
        }
    }

    /// `batch_to_device(batch, device)` with its result dropped: a function given a loader's
    /// batch and a device can only have moved the batch's tensors in place, so what the batch
    /// holds is on that device from here on (its fields tensors, the device unknown).
    pub(super) fn note_moved_in_place(&mut self, call: &ast::ExprCall) {
        let arguments = &call.arguments;
        // The batch first: few calls pass one, and only then is what names a device worth
        // inferring.
        let batches: Vec<&Name> = arguments
            .args
            .iter()
            .filter_map(|argument| match argument {
                Expr::Name(name) if matches!(self.model.kind_of(argument), Kind::Tensor(facts) if facts.is_batch()) => {
                    Some(&name.id)
                }
                _ => None,
            })
            .collect();
        if batches.is_empty() {
            return;
        }
        let names_a_device = |expr: &Expr| match expr {
            Expr::StringLiteral(device) => {
                literal_text(&device.value).is_some_and(|device| device_from_str(device) == Device::Cuda)
            }
            _ => {
                matches!(self.model.kind_of(expr), Kind::Device(device) if device != Device::Cpu)
                    || last_name(expr).is_some_and(|name| ends_with_ignoring_ascii_case(name, "device"))
            }
        };
        let mut values = arguments
            .args
            .iter()
            .chain(arguments.keywords.iter().map(|keyword| &keyword.value));
        if !values.any(names_a_device) {
            return;
        }
        let moved = TensorFacts {
            batch: BatchSource::Output,
            ..TensorFacts::on(Device::Unknown)
        };
        for name in batches {
            self.model.bind_value(name, Kind::Tensor(moved), None);
        }
    }

    /// Calls that change what later code means: the default device, module buffers, batches
    /// leaving for the GPU.
    pub(super) fn note_state_change(&mut self, call: &ast::ExprCall) {
        self.note_list_growth(call);
        if let Expr::Attribute(attribute) = call.func.as_ref()
            && matches!(attribute.attr.as_str(), "to" | "cuda")
            && let Kind::Tensor(facts) = self.model.kind_of(&attribute.value)
        {
            let to_gpu = attribute.attr.as_str() == "cuda"
                || self.model.target_device_of_to(call).is_some_and(|d| d != Device::Cpu);
            let context = self.model.context();
            if facts.is_batch() && to_gpu && context != HotContext::Cold {
                self.findings.loaders.copied_to_gpu(facts.batch, context);
            }
        }
        let qualified = self.model.callee(call);
        if let Some(qualified) = qualified.as_deref() {
            if qualified == "torch.distributions.Distribution.set_default_validate_args" {
                let disabled = matches!(call.arguments.args.first(), Some(Expr::BooleanLiteral(b)) if !b.value);
                if self.model.flow.function.is_some() {
                    self.model.flow.validation_disabled = disabled;
                } else {
                    self.model.validation_disabled = disabled;
                }
                return;
            }
            if api::is_data_loader(qualified) {
                self.findings.loaders.constructed(call);
            }
            if matches!(qualified, "torch.distributed.all_reduce" | "torch.distributed.reduce")
                && call.arguments.find_keyword("async_op").is_none()
                && let Some(Expr::Name(name)) = call.arguments.args.first()
            {
                self.model.flow.all_reduced.push(name.id.clone());
            }
        }
        if qualified.as_deref() == Some("torch.set_default_device") {
            if let Some(device) = call.arguments.args.first().and_then(|arg| self.model.device_of(arg)) {
                self.model.default_device = device;
                self.model.invalidate_kinds();
            }
            return;
        }
        if let Expr::Attribute(attribute) = call.func.as_ref() {
            let on_self = on_self(attribute);
            if on_self
                && matches!(attribute.attr.as_str(), "register_buffer" | "register_parameter")
                && let (Some(Expr::StringLiteral(name)), Some(class)) =
                    (call.arguments.args.first(), self.model.flow.class)
                && let Some(name) = literal_text(&name.value)
            {
                // It moves with the module (`model.to("cuda")`): its dtype is known, its
                // device is not.
                let facts = match call.arguments.args.get(1).map(|value| self.model.kind_of(value)) {
                    Some(Kind::Tensor(facts)) => TensorFacts {
                        pinned: false,
                        batch: BatchSource::NotABatch,
                        ..facts
                    },
                    _ => TensorFacts::on(Device::Unknown),
                };
                self.model.classes[class as usize]
                    .attrs
                    .insert(Name::new(name), Kind::Tensor(facts.with_device(Device::Unknown)));
                self.model.invalidate_kinds();
            }
        }
    }
}

/// `x.to(other.device)` (or `device=other.device`) of a value other than `self`: a move to
/// wherever another value is.
fn to_another_values_device(call: &ast::ExprCall) -> bool {
    let device = call
        .arguments
        .find_keyword("device")
        .map(|keyword| &keyword.value)
        .or_else(|| call.arguments.args.first());
    matches!(
        device,
        Some(Expr::Attribute(attribute))
            if attribute.attr.as_str() == "device"
                && !matches!(attribute.value.as_ref(), Expr::Name(name) if name.id.as_str() == "self")
    )
}
