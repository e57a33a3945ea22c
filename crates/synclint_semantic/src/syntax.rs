//! Predicates on the syntax tree alone: the shapes of code the checker recognises without
//! asking what any name is bound to (a stub's body, a periodic guard, a loop over steps, a lazy
//! initialisation, ...). Nothing here reads the semantic model, so each is tested on parsed
//! snippets by itself.
//!
//! May import: the syntax tree and the name predicates of [`crate::semantic::names`].

use ruff_python_ast::name::Name;
use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{self as ast, Expr, Stmt};
use rustc_hash::FxHashSet;

use crate::parse::literal_text;
use crate::semantic::is_zero_int;
use crate::semantic::names::{calls_a_network, contains_ignoring_ascii_case, last_name, names_a_network};

/// A method left to subclasses: `@abstractmethod`, or a body of nothing but a docstring,
/// `pass`, `...` and `raise NotImplementedError`.
pub fn is_stub(def: &ast::StmtFunctionDef) -> bool {
    let abstract_method = def.decorator_list.iter().any(|decorator| {
        matches!(&decorator.expression, Expr::Name(name) if name.id.as_str() == "abstractmethod")
            || matches!(&decorator.expression, Expr::Attribute(attribute) if attribute.attr.as_str() == "abstractmethod")
    });
    abstract_method
        || def.body.iter().all(|stmt| match stmt {
            Stmt::Pass(_) => true,
            Stmt::Expr(expr) => matches!(expr.value.as_ref(), Expr::StringLiteral(_) | Expr::EllipsisLiteral(_)),
            Stmt::Raise(raise) => raise.exc.as_deref().is_some_and(|exc| {
                let raised = match exc {
                    Expr::Call(call) => call.func.as_ref(),
                    other => other,
                };
                matches!(raised, Expr::Name(name) if name.id.as_str() == "NotImplementedError")
            }),
            _ => false,
        })
}

/// Every call of a name in the module (`Head(...)`, in any function): the constructions of the
/// file's classes among them.
pub fn constructions_in(body: &[Stmt]) -> Vec<&ast::ExprCall> {
    struct Finder<'b> {
        calls: Vec<&'b ast::ExprCall>,
    }
    impl<'b> Visitor<'b> for Finder<'b> {
        fn visit_expr(&mut self, expr: &'b Expr) {
            if let Expr::Call(call) = expr
                && let Expr::Name(name) = call.func.as_ref()
                && name.id.starts_with(|c: char| c.is_ascii_uppercase())
            {
                self.calls.push(call);
            }
            visitor::walk_expr(self, expr);
        }
    }
    let mut finder = Finder { calls: Vec::new() };
    finder.visit_body(body);
    finder.calls
}

/// `self.<attr>`.
pub fn on_self(attribute: &ast::ExprAttribute) -> bool {
    matches!(attribute.value.as_ref(), Expr::Name(n) if n.id.as_str() == "self")
}

/// Does a loop of `body` (outside nested definitions) run backward: a `while` loop, or a `for`
/// loop over anything but `range(...)`, whose body calls `.backward()`? (A loop over
/// `range(...)` that runs backward splits one step: truncated BPTT chunks, accumulation by
/// index.) One walk for the whole body, however deep its loops nest: asking each loop's body
/// in turn would walk the innermost loop once for every loop around it.
pub fn runs_backward_in_a_loop(body: &[Stmt]) -> bool {
    /// The walk, with how many loops that may be step loops are around where it is.
    struct Finder {
        around: usize,
        found: bool,
    }
    impl Finder {
        fn in_loop(&mut self, counts: bool, body: &[Stmt]) {
            self.around += usize::from(counts);
            self.visit_body(body);
            self.around -= usize::from(counts);
        }
    }
    impl<'b> Visitor<'b> for Finder {
        fn visit_stmt(&mut self, stmt: &'b Stmt) {
            if self.found {
                return;
            }
            match stmt {
                Stmt::FunctionDef(_) | Stmt::ClassDef(_) => {}
                Stmt::For(for_stmt) => {
                    self.visit_expr(&for_stmt.target);
                    self.visit_expr(&for_stmt.iter);
                    self.in_loop(!is_range_call(&for_stmt.iter), &for_stmt.body);
                    self.visit_body(&for_stmt.orelse);
                }
                Stmt::While(while_stmt) => {
                    self.visit_expr(&while_stmt.test);
                    self.in_loop(true, &while_stmt.body);
                    self.visit_body(&while_stmt.orelse);
                }
                _ => visitor::walk_stmt(self, stmt),
            }
        }
        fn visit_expr(&mut self, expr: &'b Expr) {
            if self.around > 0 && !self.found {
                self.found = any_expr_in(
                    expr,
                    |expr| matches!(expr, Expr::Call(call) if call_matches(call, |receiver, method| method == "backward" && receiver.is_some())),
                );
            }
        }
    }
    let mut finder = Finder {
        around: 0,
        found: false,
    };
    finder.visit_body(body);
    finder.found
}

/// The names the loops of `body` (outside nested definitions) iterate over, anywhere in their
/// `for ... in` expression; `None` where it holds no loop.
pub fn loop_iterables(body: &[Stmt]) -> Option<FxHashSet<Name>> {
    #[derive(Default)]
    struct Loops {
        any: bool,
        names: FxHashSet<Name>,
        in_iterable: bool,
    }
    impl<'b> Visitor<'b> for Loops {
        fn visit_stmt(&mut self, stmt: &'b Stmt) {
            match stmt {
                Stmt::FunctionDef(_) | Stmt::ClassDef(_) => {}
                Stmt::For(for_stmt) => {
                    self.any = true;
                    self.in_iterable = true;
                    self.visit_expr(&for_stmt.iter);
                    self.in_iterable = false;
                    self.visit_body(&for_stmt.body);
                    self.visit_body(&for_stmt.orelse);
                }
                Stmt::While(_) => {
                    self.any = true;
                    visitor::walk_stmt(self, stmt);
                }
                _ => visitor::walk_stmt(self, stmt),
            }
        }
        fn visit_expr(&mut self, expr: &'b Expr) {
            if !self.in_iterable {
                return;
            }
            if let Expr::Name(name) = expr {
                self.names.insert(name.id.clone());
            }
            visitor::walk_expr(self, expr);
        }
    }
    let mut loops = Loops::default();
    loops.visit_body(body);
    loops.any.then_some(loops.names)
}

/// `range(...)`.
pub(crate) fn is_range_call(iter: &Expr) -> bool {
    matches!(iter, Expr::Call(call) if matches!(call.func.as_ref(), Expr::Name(name) if name.id.as_str() == "range"))
}

/// `torch.jit.is_tracing()`, `torchvision._is_tracing()`, `torch.onnx.is_in_onnx_export()`:
/// true only while a model is traced for export.
pub fn is_trace_check(name: &str) -> bool {
    name.trim_start_matches('_') == "is_tracing" || name == "is_in_onnx_export"
}

/// `is_torch_npu_available`, `is_xla_available`, `is_mps_available`: a check that another
/// backend is present.
pub fn is_backend_check(name: &str) -> bool {
    let name = name.trim_start_matches('_');
    name.starts_with("is_") && name.ends_with("_available") && mentions_another_backend(name)
}

/// A name with a word for another backend in it: `is_mps`, `IS_NPU`, `use_xla`.
pub fn mentions_another_backend(name: &str) -> bool {
    name.split('_').any(names_another_backend)
}

/// A backend other than CUDA that a branch may be written for.
pub fn names_another_backend(word: &str) -> bool {
    ["mps", "npu", "xla", "tpu", "hpu", "mlu", "neuron"]
        .iter()
        .any(|backend| word.eq_ignore_ascii_case(backend))
}

/// A test that holds on the first step alone: a step counter compared equal to 0 (`if step ==
/// 0:`, `if self.ivars["istep"] == 0:`, `if batch_idx == 0:`); a count of steps (`num_steps`,
/// `max_iter`) is no counter.
pub fn tests_first_step(test: &Expr) -> bool {
    let Expr::Compare(compare) = test else {
        return false;
    };
    let ([ast::CmpOp::Eq], [right]) = (&*compare.ops, &*compare.comparators) else {
        return false;
    };
    let counter = match (compare.left.as_ref(), right) {
        (counter, zero) | (zero, counter) if is_zero_int(zero) => counter,
        _ => return false,
    };
    let name = match counter {
        Expr::Subscript(subscript) => match subscript.slice.as_ref() {
            Expr::StringLiteral(key) => literal_text(&key.value),
            _ => None,
        },
        other => last_name(other),
    };
    name.is_some_and(|name| {
        let has_word = |words: &[&str]| {
            name.split('_')
                .any(|part| words.iter().any(|word| part.eq_ignore_ascii_case(word)))
        };
        let counts = has_word(&["num", "n", "max", "min", "total", "warmup"]);
        let steps = has_word(&["step", "istep", "iter", "iteration"]) || matches!(name, "batch_idx" | "batch_index");
        steps && !counts
    })
}

/// The container a membership test reads (`cache` of `key in cache`, `key not in cache`).
pub fn membership_container(test: &Expr) -> Option<&Expr> {
    let Expr::Compare(compare) = test else { return None };
    match (&*compare.ops, &*compare.comparators) {
        ([ast::CmpOp::In | ast::CmpOp::NotIn], [container]) => Some(container),
        _ => None,
    }
}

/// Whether a subscript stores into the memo a membership test read: the same name, or the same
/// attribute of `self`.
fn same_memo(stored: &Expr, tested: &Expr) -> bool {
    match (stored, tested) {
        (Expr::Name(stored), Expr::Name(tested)) => stored.id == tested.id,
        (Expr::Attribute(stored), Expr::Attribute(tested)) => {
            on_self(stored) && on_self(tested) && stored.attr.id == tested.attr.id
        }
        _ => false,
    }
}

/// The rest of a block after `if key in memo: return memo[key]` (or `return` of anything, a
/// `continue`) is a memo miss where it stores into the same memo (`memo[key] = ...`, also
/// inside `if`, `with` and `try`): it runs once per key, not on every call.
pub fn misses_a_memo(test: &Expr, rest: &[Stmt]) -> bool {
    let Expr::Compare(compare) = test else { return false };
    let ([ast::CmpOp::In], [memo]) = (&*compare.ops, &*compare.comparators) else {
        return false;
    };
    fn stores(body: &[Stmt], memo: &Expr) -> bool {
        body.iter().any(|stmt| match stmt {
            Stmt::Assign(assign) => assign
                .targets
                .iter()
                .any(|target| matches!(target, Expr::Subscript(subscript) if same_memo(&subscript.value, memo))),
            Stmt::If(if_stmt) => {
                stores(&if_stmt.body, memo)
                    || if_stmt
                        .elif_else_clauses
                        .iter()
                        .any(|clause| stores(&clause.body, memo))
            }
            Stmt::With(with) => stores(&with.body, memo),
            Stmt::Try(try_stmt) => stores(&try_stmt.body, memo),
            _ => false,
        })
    }
    stores(rest, memo)
}

/// A lazy initialisation: the test asks whether an attribute of `self` is still unset
/// (`self._index is None`, `not hasattr(self, "_index")`, `getattr(self, "_index", None) is
/// None`, a flag not yet set: `not self._checked`, also first in an `or`: `self._grid is None
/// or self._grid.shape != x.shape`), or whether it has been outgrown (`max_pos >
/// self.weights.size(0)`, also in an `and`) and the
/// body sets it (`self._index = ...`, `self.register_buffer("_index", ...)`, `setattr(self,
/// "_index", ...)`, a method of `self` named for initialising: `if self.step_index is None:
/// self._init_step_index(t)`), or whether a container is still empty (`len(state) == 0`, `not
/// state`) and the body fills it (`state["step"] = ...`, an optimizer's per-parameter state), or
/// whether a key is missing from a memo (`key not in cache`, `key not in self._cache`) and the
/// body stores it there (`cache[key] = ...`): the body runs on the first call (for a memo, once
/// per key), not on every step.
pub fn initialises_lazily(test: &Expr, body: &[Stmt]) -> bool {
    /// What a test finds unset: an attribute of `self`, or an empty container by name.
    enum Unset<'e> {
        Attribute(&'e str),
        Container(&'e str),
        /// A memo a key is missing from: a name, or an attribute of `self` (by its name).
        Memo(&'e Expr),
    }
    fn unset(test: &Expr) -> Option<Unset<'_>> {
        match test {
            Expr::BoolOp(bool_op) if bool_op.op == ast::BoolOp::Or => unset(bool_op.values.first()?),
            // `... and max_pos > self.weights.size(0)`: the arm needs every part.
            Expr::BoolOp(bool_op) => bool_op.values.iter().find_map(outgrown).map(Unset::Attribute),
            test @ Expr::Compare(_) if let Some(attribute) = outgrown(test) => Some(Unset::Attribute(attribute)),
            Expr::Compare(compare) => match (&*compare.ops, &*compare.comparators, compare.left.as_ref()) {
                ([ast::CmpOp::Is], [Expr::NoneLiteral(_)], Expr::Attribute(attribute)) if on_self(attribute) => {
                    Some(Unset::Attribute(attribute.attr.as_str()))
                }
                ([ast::CmpOp::Is], [Expr::NoneLiteral(_)], Expr::Call(call)) => {
                    named_on_self(call, "getattr").map(Unset::Attribute)
                }
                ([ast::CmpOp::NotIn], [memo @ Expr::Name(_)], _) => Some(Unset::Memo(memo)),
                ([ast::CmpOp::NotIn], [memo @ Expr::Attribute(attribute)], _) if on_self(attribute) => {
                    Some(Unset::Memo(memo))
                }
                // `len(state) == 0`
                ([ast::CmpOp::Eq], [zero], Expr::Call(call)) if is_zero_int(zero) => {
                    match (call.func.as_ref(), &*call.arguments.args) {
                        (Expr::Name(len), [Expr::Name(container)]) if len.id == "len" => {
                            Some(Unset::Container(container.id.as_str()))
                        }
                        _ => None,
                    }
                }
                _ => None,
            },
            Expr::UnaryOp(unary) if unary.op == ast::UnaryOp::Not => match unary.operand.as_ref() {
                // `not hasattr(self, "_x")`, and a flag set once it is done: `not
                // self._checked`, `not getattr(self, "_checked", False)`.
                Expr::Call(call) => named_on_self(call, "hasattr")
                    .or_else(|| named_on_self(call, "getattr"))
                    .map(Unset::Attribute),
                Expr::Attribute(attribute) if on_self(attribute) => Some(Unset::Attribute(attribute.attr.as_str())),
                Expr::Name(container) => Some(Unset::Container(container.id.as_str())),
                _ => None,
            },
            _ => None,
        }
    }
    /// `max_pos > self.weights.size(0)`, `n > len(self._cache)`: a cache outgrown, rebuilt
    /// larger (then it fits again): the attribute.
    fn outgrown(test: &Expr) -> Option<&str> {
        let Expr::Compare(compare) = test else { return None };
        let ([ast::CmpOp::Gt | ast::CmpOp::GtE | ast::CmpOp::Lt | ast::CmpOp::LtE], [right]) =
            (&*compare.ops, &*compare.comparators)
        else {
            return None;
        };
        size_of_self_attribute(right).or_else(|| size_of_self_attribute(&compare.left))
    }
    /// `builtin(self, "name", ...)`: the name.
    fn named_on_self<'e>(call: &'e ast::ExprCall, builtin: &str) -> Option<&'e str> {
        let (Expr::Name(func), [Expr::Name(receiver), Expr::StringLiteral(name), ..]) =
            (call.func.as_ref(), &*call.arguments.args)
        else {
            return None;
        };
        (func.id == builtin && receiver.id == "self")
            .then(|| literal_text(&name.value))
            .flatten()
    }
    // `self._step_index = ...` sets what the property `self.step_index` reads.
    let sets = |target: &Expr, unset: &Unset| match (target, unset) {
        (Expr::Attribute(a), Unset::Attribute(attribute)) => {
            on_self(a) && a.attr.as_str().trim_start_matches('_') == attribute.trim_start_matches('_')
        }
        (Expr::Subscript(subscript), Unset::Container(container)) => {
            matches!(subscript.value.as_ref(), Expr::Name(name) if name.id.as_str() == *container)
        }
        (Expr::Subscript(subscript), Unset::Memo(memo)) => same_memo(&subscript.value, memo),
        _ => false,
    };
    let Some(unset) = unset(test) else {
        return false;
    };
    // Also in every arm of a conditional (`if self.begin_index is not None: self._step_index =
    // self.begin_index else: self._step_index = ...`).
    fn flattened(body: &[Stmt]) -> Vec<&Stmt> {
        body.iter()
            .flat_map(|stmt| match stmt {
                Stmt::If(if_stmt) => {
                    let mut nested = flattened(&if_stmt.body);
                    for clause in &if_stmt.elif_else_clauses {
                        nested.extend(flattened(&clause.body));
                    }
                    nested
                }
                other => vec![other],
            })
            .collect()
    }
    flattened(body).into_iter().any(|stmt| match stmt {
        Stmt::Assign(assign) => assign.targets.iter().any(|target| sets(target, &unset)),
        Stmt::AnnAssign(assign) => sets(&assign.target, &unset),
        Stmt::Expr(expr) => match (expr.value.as_ref(), &unset) {
            (Expr::Call(call), Unset::Attribute(attribute)) => {
                let registers = matches!(call.func.as_ref(), Expr::Attribute(f)
                    if on_self(f) && f.attr.as_str() == "register_buffer")
                    && matches!(call.arguments.args.first(), Some(Expr::StringLiteral(name)) if literal_text(&name.value) == Some(*attribute));
                // `self._init_step_index(t)`, `self.make_weights(n)`: a method that initialises
                // it, or one named for it.
                let initialises = matches!(call.func.as_ref(), Expr::Attribute(f)
                    if on_self(f) && (contains_ignoring_ascii_case(f.attr.as_str(), "init")
                        || f.attr.as_str().contains(attribute.trim_start_matches('_'))));
                registers || initialises || named_on_self(call, "setattr") == Some(*attribute)
            }
            _ => false,
        },
        _ => false,
    })
}

/// `self.register_modules(unet=unet, scheduler=scheduler)` (a diffusers pipeline's `__init__`)
/// sets `self.unet` and `self.scheduler` to the values.
pub fn registered_modules(call: &ast::ExprCall) -> impl Iterator<Item = (&Name, &Expr)> {
    let registers = matches!(call.func.as_ref(), Expr::Attribute(method)
        if on_self(method) && method.attr.as_str() == "register_modules");
    call.arguments
        .keywords
        .iter()
        .filter(move |_| registers)
        .filter_map(|keyword| Some((&keyword.arg.as_ref()?.id, &keyword.value)))
}

/// The attribute of `self` whose size `expr` reads: `self.weights.size(0)`,
/// `self.pe.shape[1]`, `len(self._cache)`.
pub(crate) fn size_of_self_attribute(expr: &Expr) -> Option<&str> {
    let sized = match expr {
        Expr::Call(call) => match call.func.as_ref() {
            Expr::Attribute(method) if method.attr.as_str() == "size" => method.value.as_ref(),
            Expr::Name(len) if len.id.as_str() == "len" => call.arguments.args.first()?,
            _ => return None,
        },
        Expr::Subscript(subscript) => match subscript.value.as_ref() {
            Expr::Attribute(shape) if shape.attr.as_str() == "shape" => shape.value.as_ref(),
            _ => return None,
        },
        _ => return None,
    };
    match sized {
        Expr::Attribute(attribute) if on_self(attribute) => Some(attribute.attr.as_str()),
        _ => None,
    }
}

/// A loop over a fixed collection of the program: a dict's items, keys or values, a module's
/// parameters, buffers or submodules, a state dict, or the devices (`range(torch.cuda.
/// device_count())`), also through `enumerate`, `zip`, `sorted` or `list`. It repeats setup or
/// bookkeeping (copying weights, counting parameters, probing devices), not a training step.
pub fn iterates_a_fixed_collection(iter: &Expr) -> bool {
    let Expr::Call(call) = iter else {
        return false;
    };
    match call.func.as_ref() {
        Expr::Attribute(attribute) => matches!(
            attribute.attr.as_str(),
            "items"
                | "keys"
                | "values"
                | "parameters"
                | "named_parameters"
                | "buffers"
                | "named_buffers"
                | "modules"
                | "named_modules"
                | "children"
                | "named_children"
                | "state_dict"
        ),
        Expr::Name(func) => match func.id.as_str() {
            "enumerate" | "zip" | "sorted" | "list" | "reversed" => {
                call.arguments.args.iter().any(iterates_a_fixed_collection)
            }
            "range" => call.arguments.args.iter().any(|arg| {
                matches!(arg, Expr::Call(inner) if matches!(inner.func.as_ref(),
                    Expr::Attribute(a) if a.attr.as_str() == "device_count"))
            }),
            _ => false,
        },
        _ => false,
    }
}

/// A loop target that counts steps (`for step in range(n)`, `for i, batch in ...`,
/// `for it in range(max_iters)`): the loop is a step loop whatever its body calls.
pub fn names_steps(target: &Expr) -> bool {
    let mut names = Vec::new();
    collect_names(target, &mut names);
    names.iter().any(|name| {
        let name = name.as_str().trim_start_matches('_').to_ascii_lowercase();
        name == "step"
            || name.ends_with("_step")
            || name.starts_with("step_")
            || matches!(
                name.as_str(),
                "it" | "iter" | "itr" | "iteration" | "i_iter" | "batch_idx" | "batch_i" | "batch" | "batches"
            )
            || name.starts_with("batch_")
    })
}

/// An iterable that names steps: `timesteps`, `enumerate(self.scheduler.timesteps)`,
/// `reversed(range(num_inference_steps))`, or a range of new tokens: `range(max_new_tokens)`,
/// `range(max_generated_tokens - 1)`, `range(max_length)`.
pub fn iterates_steps(iter: &Expr) -> bool {
    fn names(expr: &Expr, words: &[&str]) -> bool {
        match expr {
            Expr::Call(call) => call.arguments.args.iter().any(|argument| names(argument, words)),
            Expr::BinOp(operation) => names(&operation.left, words) || names(&operation.right, words),
            expr => {
                last_name(expr).is_some_and(|name| words.iter().any(|word| contains_ignoring_ascii_case(name, word)))
            }
        }
    }
    let counts_tokens = matches!(iter, Expr::Call(call) if matches!(call.func.as_ref(), Expr::Name(range) if range.id.as_str() == "range"));
    names(iter, &["step"]) || (counts_tokens && names(iter, &["token", "max_len"]))
}

/// Does this code call a collective (`all_reduce`, `broadcast`, `all_gather`, ...) by its
/// name? A loop of them is SYNC601's serial collectives, which cost wherever the loop runs.
/// `gather`, `scatter` and `reduce` are also tensor methods and `functools.reduce`: they count
/// only on a receiver that names the distributed package or a launcher (`dist.gather`,
/// `torch.distributed.reduce`, `accelerator.gather`, `fabric.all_gather`).
pub fn calls_collectives(body: &[Stmt]) -> bool {
    calls_any(body, |receiver, called| match called {
        "all_reduce" | "broadcast" | "all_gather" | "reduce_scatter" | "all_to_all" => true,
        "gather" | "scatter" | "reduce" => receiver.is_some_and(|receiver| {
            let receiver = receiver.to_ascii_lowercase();
            ["dist", "accelerator", "fabric", "comm"]
                .iter()
                .any(|word| receiver.contains(word))
        }),
        _ => false,
    })
}

/// The calls of this code (outside nested definitions and lambdas) that move the value `name`
/// holds: `name.to(...)` and `name.cuda(...)`. Whether each moves it to a device (rather than
/// changing its dtype) is the model's to tell.
pub fn moves_of<'b>(body: &'b [Stmt], name: &str) -> Vec<&'b ast::ExprCall> {
    let mut moves = Vec::new();
    any_expr(body, |expr| {
        if let Expr::Call(call) = expr
            && let Expr::Attribute(attribute) = call.func.as_ref()
            && matches!(attribute.attr.as_str(), "to" | "cuda")
            && matches!(attribute.value.as_ref(), Expr::Name(moved) if moved.id.as_str() == name)
        {
            moves.push(call);
        }
        false
    });
    moves
}

/// The names this code returns (`return wrapper`), outside nested definitions, where every
/// `return` returns a name: a decorator or a factory that always returns a function. `None`
/// where any returns something else (`return wrapper(fn)`, `return`), which may be no function.
pub fn returned_names(body: &[Stmt]) -> Option<Vec<&Name>> {
    struct Returns<'b> {
        names: Vec<&'b Name>,
        other: bool,
    }
    impl<'b> Visitor<'b> for Returns<'b> {
        fn visit_stmt(&mut self, stmt: &'b Stmt) {
            match stmt {
                Stmt::FunctionDef(_) | Stmt::ClassDef(_) => {}
                Stmt::Return(ast::StmtReturn { value, .. }) => match value.as_deref() {
                    Some(Expr::Name(name)) => self.names.push(&name.id),
                    _ => self.other = true,
                },
                _ => visitor::walk_stmt(self, stmt),
            }
        }
    }
    let mut returns = Returns {
        names: Vec::new(),
        other: false,
    };
    returns.visit_body(body);
    (!returns.other).then_some(returns.names)
}

/// Does this code (outside nested definitions) `yield`?
pub fn yields(body: &[Stmt]) -> bool {
    any_expr(body, |expr| matches!(expr, Expr::Yield(_) | Expr::YieldFrom(_)))
}

/// Does any expression of this code (outside nested definitions and lambdas, visited before
/// its parts) satisfy `found`?
pub fn any_expr<'b>(body: &'b [Stmt], found: impl FnMut(&'b Expr) -> bool) -> bool {
    any_expr_where(body, |_, _| false, found)
}

/// Does `expr` or any expression inside it (outside lambdas, visited before its parts)
/// satisfy `found`?
pub fn any_expr_in<'b>(expr: &'b Expr, found: impl FnMut(&'b Expr) -> bool) -> bool {
    let mut finder = ExprFinder {
        skip_arm: |_: &'b Expr, _| false,
        found,
        done: false,
    };
    finder.visit_expr(expr);
    finder.done
}

/// [`any_expr`], leaving out the arms of `if` statements that `skip_arm` says never run (the
/// test, and whether it holds there).
pub fn any_expr_where<'b>(
    body: &'b [Stmt],
    skip_arm: impl Fn(&'b Expr, bool) -> bool,
    found: impl FnMut(&'b Expr) -> bool,
) -> bool {
    let mut finder = ExprFinder {
        skip_arm,
        found,
        done: false,
    };
    finder.visit_body(body);
    finder.done
}

/// Walks code until an expression satisfies `found`, leaving out nested definitions, lambdas
/// and the arms `skip_arm` says never run.
pub(crate) struct ExprFinder<S, F> {
    skip_arm: S,
    found: F,
    done: bool,
}

impl<'b, S: Fn(&'b Expr, bool) -> bool, F: FnMut(&'b Expr) -> bool> Visitor<'b> for ExprFinder<S, F> {
    fn visit_stmt(&mut self, stmt: &'b Stmt) {
        if self.done || matches!(stmt, Stmt::FunctionDef(_) | Stmt::ClassDef(_)) {
            return;
        }
        let Stmt::If(if_stmt) = stmt else {
            return visitor::walk_stmt(self, stmt);
        };
        self.visit_expr(&if_stmt.test);
        if !(self.skip_arm)(&if_stmt.test, true) {
            self.visit_body(&if_stmt.body);
        }
        let single_else = if_stmt.elif_else_clauses.len() == 1;
        for clause in &if_stmt.elif_else_clauses {
            match &clause.test {
                Some(test) => {
                    self.visit_expr(test);
                    if !(self.skip_arm)(test, true) {
                        self.visit_body(&clause.body);
                    }
                }
                None if single_else && (self.skip_arm)(&if_stmt.test, false) => {}
                None => self.visit_body(&clause.body),
            }
        }
    }

    fn visit_expr(&mut self, expr: &'b Expr) {
        if self.done || matches!(expr, Expr::Lambda(_)) {
            return;
        }
        if (self.found)(expr) {
            self.done = true;
            return;
        }
        visitor::walk_expr(self, expr);
    }
}

/// A call that does a step's work: trains (backward, an optimizer step) or runs a network
/// (`model(x)`, `self.unet(x)`, `self.backbone.forward(x)`).
pub fn is_step_call(receiver: Option<&str>, called: &str) -> bool {
    is_training_call(receiver, called)
        || calls_a_network(called)
        // A module calling itself runs its `forward` (a decoding loop's `self(x)`).
        || (called == "self" && receiver.is_none())
        || (called == "forward" && receiver.is_some_and(names_a_network))
}

/// Does this code train: call `.backward()` or step an optimizer (`opt.step()`,
/// `self._optimizer.step()`, `scaler.step(opt)`)?
pub fn trains(body: &[Stmt]) -> bool {
    calls_any(body, is_training_call)
}

/// `.backward()` or an optimizer's (or a gradient scaler's) `.step()`.
pub fn is_training_call(receiver: Option<&str>, method: &str) -> bool {
    match method {
        "backward" => receiver.is_some(),
        "step" => receiver.is_some_and(|name| {
            let name = name.trim_start_matches('_').to_ascii_lowercase();
            name.contains("optim") || name == "opt" || name.ends_with("_opt") || name.ends_with("scaler")
        }),
        _ => false,
    }
}

/// Does this code (outside nested definitions) call a method that `matches` (the receiver's
/// last name, if it is a name or an attribute; the method), or a function by name (no receiver:
/// `matches(None, name)`)?
pub(crate) fn calls_any(body: &[Stmt], matches: impl Fn(Option<&str>, &str) -> bool) -> bool {
    any_expr(
        body,
        |expr| matches!(expr, Expr::Call(call) if call_matches(call, &matches)),
    )
}

/// Does the call call a method that `matches` (see [`calls_any`])?
pub fn call_matches(call: &ast::ExprCall, matches: impl Fn(Option<&str>, &str) -> bool) -> bool {
    match call.func.as_ref() {
        Expr::Attribute(attribute) => {
            let receiver = match attribute.value.as_ref() {
                Expr::Name(name) => Some(name.id.as_str()),
                Expr::Attribute(inner) => Some(inner.attr.as_str()),
                _ => Some(""),
            };
            matches(receiver, attribute.attr.as_str())
        }
        Expr::Name(name) => matches(None, name.id.as_str()),
        _ => false,
    }
}

/// The parts as one string, in one allocation of exactly their length (a function's qualified
/// name is kept for the whole run).
pub fn joined(parts: &[&str]) -> Box<str> {
    let mut text = String::with_capacity(parts.iter().map(|part| part.len()).sum());
    parts.iter().for_each(|part| text.push_str(part));
    text.into_boxed_str()
}

/// The names an assignment target binds.
pub fn collect_names(target: &Expr, names: &mut Vec<Name>) {
    match target {
        Expr::Name(name) => names.push(name.id.clone()),
        Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. }) => {
            elts.iter().for_each(|elt| collect_names(elt, names));
        }
        Expr::Starred(starred) => collect_names(&starred.value, names),
        _ => {}
    }
}

/// `for step in range(10)` inside `if step % 100 == 0:` is periodic.
pub fn is_periodic_guard(test: &Expr) -> bool {
    match test {
        Expr::Compare(compare) => compares_a_period(compare, ast::CmpOp::Eq),
        Expr::UnaryOp(unary) => unary.op == ast::UnaryOp::Not && is_a_period(&unary.operand),
        // `step % log_every == 0 and rank == 0`; `step % n == 0 or last_batch` (every n steps,
        // and once more at the end): not `step % 2 == 0 or sync_each_batch`.
        Expr::BoolOp(bool_op) => match bool_op.op {
            ast::BoolOp::And => bool_op.values.iter().any(is_periodic_guard),
            ast::BoolOp::Or => bool_op
                .values
                .iter()
                .all(|value| is_periodic_guard(value) || names_the_last_step(value)),
        },
        Expr::Name(_) | Expr::Attribute(_) | Expr::Call(_) => names_a_logging_switch(test),
        _ => false,
    }
}

/// `step % n` of a period (`step % 2` alternates: it, or its `else`, runs every other step).
pub(crate) fn is_a_period(expr: &Expr) -> bool {
    let every_other = |divisor: &Expr| matches!(divisor, Expr::NumberLiteral(n) if n.value.as_int().and_then(|i| i.as_u64()).is_some_and(|i| i <= 2));
    matches!(expr, Expr::BinOp(b) if b.op == ast::Operator::Mod && !every_other(&b.right))
}

/// `step % n == 0` (with `op` `==`), `step % n != 0` (with `!=`).
pub(crate) fn compares_a_period(compare: &ast::ExprCompare, op: ast::CmpOp) -> bool {
    compare.ops.iter().all(|compared| *compared == op)
        && (is_a_period(&compare.left) || compare.comparators.iter().any(is_a_period))
}

/// A test that, where it holds, skips the rest of the block on most steps (`if not should_log:
/// return`, `if step % n != 0: continue`, `if step % n: continue`): the rest runs periodically.
/// Not where the period accumulates gradients (`% accumulate_grad_batches`): the rest then runs
/// once per optimizer step, every step where nothing accumulates.
pub fn skips_off_period(test: &Expr) -> bool {
    let accumulates = |expr: &Expr| {
        any_expr_in(expr, |part| {
            matches!(part, Expr::BinOp(b) if b.op == ast::Operator::Mod
                && last_name(&b.right).is_some_and(|name| contains_ignoring_ascii_case(name, "accum")))
        })
    };
    !accumulates(test)
        && match test {
            Expr::UnaryOp(unary) => unary.op == ast::UnaryOp::Not && is_periodic_guard(&unary.operand),
            Expr::Compare(compare) => compares_a_period(compare, ast::CmpOp::NotEq),
            other => is_a_period(other),
        }
}

/// `last_batch`, `is_last_step`, `step == total_steps - 1`, `final_step`: true once, at the end.
pub(crate) fn names_the_last_step(test: &Expr) -> bool {
    let name = match test {
        Expr::Name(name) => name.id.as_str(),
        Expr::Attribute(attribute) => attribute.attr.as_str(),
        Expr::Compare(compare) => return compare.ops.iter().all(|op| *op == ast::CmpOp::Eq),
        _ => return false,
    };
    name.split('_')
        .any(|word| word.eq_ignore_ascii_case("last") || word.eq_ignore_ascii_case("final"))
}

/// `should_log`, `self.should_log(step)`, `args.verbose`, `self.collect_stats`, `debug`: a switch
/// for logging, statistics or debugging, off on most steps (or off by default).
pub(crate) fn names_a_logging_switch(test: &Expr) -> bool {
    let Some(name) = last_name(test) else {
        return false;
    };
    let words = || name.split('_').filter(|word| !word.is_empty());
    words().any(|word| {
        word.eq_ignore_ascii_case("log")
            || word.eq_ignore_ascii_case("logging")
            || word.eq_ignore_ascii_case("verbose")
            || word.eq_ignore_ascii_case("debug")
            || word.eq_ignore_ascii_case("stats")
            || word.eq_ignore_ascii_case("profile")
            || word.eq_ignore_ascii_case("profiling")
    })
}

/// `x.shape`, `x.shape[1:]`, `x.size()`: a `torch.Size`, whose elements are host numbers.
pub fn is_a_size(expr: &Expr) -> bool {
    match expr {
        Expr::Attribute(attribute) => attribute.attr.as_str() == "shape",
        Expr::Subscript(subscript) => matches!(subscript.slice.as_ref(), Expr::Slice(_)) && is_a_size(&subscript.value),
        Expr::Call(call) => {
            call.arguments.is_empty()
                && matches!(call.func.as_ref(), Expr::Attribute(method) if method.attr.as_str() == "size")
        }
        _ => false,
    }
}

/// The name `test` finds not `None` (`x is not None`): where it fails, the name is `None`.
pub fn none_unless(test: &Expr) -> Option<&Name> {
    match test {
        Expr::Compare(compare) => match (compare.left.as_ref(), &*compare.ops, &*compare.comparators) {
            (Expr::Name(name), [ast::CmpOp::IsNot], [Expr::NoneLiteral(_)]) => Some(&name.id),
            _ => None,
        },
        _ => None,
    }
}

/// The names the arm where `test` comes out `holds` knows are not `None`: `x is not None`
/// (also as a part of an `and`), or the other arm of `x is None` (of an `or`).
pub fn names_not_none(test: &Expr, holds: bool) -> Vec<Name> {
    match test {
        Expr::Compare(compare)
            if let (Expr::Name(name), [op @ (ast::CmpOp::Is | ast::CmpOp::IsNot)], [Expr::NoneLiteral(_)]) =
                (compare.left.as_ref(), &*compare.ops, &*compare.comparators)
                && (*op == ast::CmpOp::IsNot) == holds =>
        {
            vec![name.id.clone()]
        }
        Expr::BoolOp(bool_op) if (bool_op.op == ast::BoolOp::And) == holds => bool_op
            .values
            .iter()
            .flat_map(|value| names_not_none(value, holds))
            .collect(),
        _ => Vec::new(),
    }
}

/// A string built from values: an f-string, `"..." % args`, `"...".format(...)`, a sum of strings.
pub fn builds_a_message(expr: &Expr) -> bool {
    match expr {
        Expr::FString(_) | Expr::StringLiteral(_) => true,
        Expr::BinOp(binop) => {
            matches!(binop.op, ast::Operator::Mod | ast::Operator::Add) && builds_a_message(&binop.left)
        }
        Expr::Call(call) => matches!(call.func.as_ref(), Expr::Attribute(format)
            if format.attr.as_str() == "format" && format.value.is_string_literal_expr()),
        _ => false,
    }
}

/// What a decorator calls: `f` of `@f` and of `@f(...)`.
pub fn decorator_callee(decorator: &ast::Decorator) -> &Expr {
    match &decorator.expression {
        Expr::Call(call) => &call.func,
        expression => expression,
    }
}

#[cfg(test)]
mod tests {
    use ruff_python_ast::ModModule;

    use super::*;

    fn module(source: &str) -> ModModule {
        ruff_python_parser::parse_module(source)
            .expect("the snippet parses")
            .into_syntax()
    }

    /// The expression of a snippet that is one expression statement.
    fn expression(source: &str) -> Expr {
        match module(source).body.into_iter().next() {
            Some(Stmt::Expr(statement)) => *statement.value,
            _ => panic!("not an expression: {source}"),
        }
    }

    /// The test and body of a snippet that is one `if` statement.
    fn if_statement(source: &str) -> (Expr, Vec<Stmt>) {
        match module(source).body.into_iter().next() {
            Some(Stmt::If(if_stmt)) => (*if_stmt.test, if_stmt.body.into_iter().collect()),
            _ => panic!("not an if statement: {source}"),
        }
    }

    fn function(source: &str) -> ast::StmtFunctionDef {
        match module(source).body.into_iter().next() {
            Some(Stmt::FunctionDef(def)) => def,
            _ => panic!("not a function: {source}"),
        }
    }

    #[test]
    fn returned_names_leave_out_nested_functions_and_need_every_return_a_name() {
        let names = |source: &str| {
            let body = module(source).body;
            returned_names(&body).map(|names| names.into_iter().map(|name| name.to_string()).collect::<Vec<_>>())
        };
        assert_eq!(
            names("def wrapper():\n    return inner\nif c:\n    return wrapper\nreturn other\n"),
            Some(vec!["wrapper".to_string(), "other".to_string()])
        );
        assert_eq!(names("if c:\n    return wrapper\nreturn wrapper(fn)\n"), None);
    }

    #[test]
    fn the_moves_of_a_name_are_its_to_and_cuda_calls_outside_nested_functions() {
        let body = module(
            "x = batch.to(dev)\ny = batch.cuda()\nz = other.to(dev)\nw = batch.float()\ndef f():\n    batch.to(dev)\ng = lambda: batch.to(dev)\n",
        )
        .body;
        let moves = moves_of(&body, "batch");
        assert_eq!(moves.len(), 2);
        assert!(moves_of(&body, "other").len() == 1 && moves_of(&body, "w").is_empty());
    }

    #[test]
    fn a_stub_does_nothing_but_leave_the_work_to_an_override() {
        assert!(is_stub(&function("def f(self):\n    \"\"\"Doc.\"\"\"\n    ...\n")));
        assert!(is_stub(&function("def f(self):\n    raise NotImplementedError\n")));
        assert!(is_stub(&function("@abstractmethod\ndef f(self):\n    return x\n")));
        assert!(!is_stub(&function("def f(self):\n    return None\n")));
        assert!(!is_stub(&function("def f(self):\n    pass\n    return 1\n")));
    }

    #[test]
    fn the_first_step_is_a_counter_compared_with_zero() {
        assert!(tests_first_step(&expression("step == 0")));
        assert!(tests_first_step(&expression("batch_idx == 0")));
        assert!(!tests_first_step(&expression("num_steps == 0")));
        assert!(!tests_first_step(&expression("step == 1")));
        assert!(!tests_first_step(&expression("loss == 0")));
    }

    #[test]
    fn a_periodic_guard_tests_a_step_modulo_a_period() {
        assert!(is_periodic_guard(&expression("step % 100 == 0")));
        assert!(is_periodic_guard(&expression("(i + 1) % log_every == 0")));
        assert!(!is_periodic_guard(&expression("step == 0")));
        assert!(!is_periodic_guard(&expression("x % 2")));
        assert!(skips_off_period(&expression("step % n != 0")));
        assert!(!skips_off_period(&expression("step % accumulate_grad_batches != 0")));
    }

    #[test]
    fn a_lazy_initialisation_sets_what_its_test_finds_unset() {
        let (test, body) = if_statement("if self._index is None:\n    self._index = build(x)\n");
        assert!(initialises_lazily(&test, &body));
        let (test, body) = if_statement("if not hasattr(self, 'grid'):\n    setattr(self, 'grid', g)\n");
        assert!(initialises_lazily(&test, &body));
        // The body sets something else: the test is read on every call, and so is the body.
        let (test, body) = if_statement("if self._index is None:\n    self.other = build(x)\n");
        assert!(!initialises_lazily(&test, &body));
        let (test, body) = if_statement("if x is None:\n    x = build()\n");
        assert!(!initialises_lazily(&test, &body));
        // A memo missing a key, filled by the body: once per key.
        let (test, body) = if_statement("if key not in cache:\n    cache[key] = build(key)\n");
        assert!(initialises_lazily(&test, &body));
        let (test, body) = if_statement("if n not in self._tables:\n    self._tables[n] = make(n)\n");
        assert!(initialises_lazily(&test, &body));
        // A membership test whose body stores elsewhere runs whenever the key is missing.
        let (test, body) = if_statement("if key not in cache:\n    other[key] = build(key)\n");
        assert!(!initialises_lazily(&test, &body));
        let (test, body) = if_statement("if label not in labels:\n    count += 1\n");
        assert!(!initialises_lazily(&test, &body));
    }

    #[test]
    fn the_rest_after_a_memo_hit_returns_is_a_miss() {
        let body = module("if key in cache:\n    return cache[key]\nwith lock:\n    cache[key] = build(key)\n").body;
        let Stmt::If(hit) = &body[0] else { panic!("an if") };
        assert!(misses_a_memo(&hit.test, &body[1..]));
        let body = module("if n in self._seen:\n    return\nself._seen[n] = True\n").body;
        let Stmt::If(hit) = &body[0] else { panic!("an if") };
        assert!(misses_a_memo(&hit.test, &body[1..]));
        // The rest stores nothing into the memo: it runs whenever the key is missing.
        let body = module("if key in cache:\n    return cache[key]\nresult = build(key)\n").body;
        let Stmt::If(hit) = &body[0] else { panic!("an if") };
        assert!(!misses_a_memo(&hit.test, &body[1..]));
    }

    #[test]
    fn loops_over_steps_are_named_for_them() {
        assert!(iterates_steps(&expression("reversed(range(num_inference_steps))")));
        assert!(iterates_steps(&expression("enumerate(self.scheduler.timesteps)")));
        assert!(iterates_steps(&expression("range(max_new_tokens)")));
        assert!(!iterates_steps(&expression("range(len(layers))")));
        assert!(names_steps(&expression("step")));
        assert!(!names_steps(&expression("layer")));
    }

    #[test]
    fn fixed_collections_are_the_programs_own_not_its_data() {
        assert!(iterates_a_fixed_collection(&expression("model.named_parameters()")));
        assert!(iterates_a_fixed_collection(&expression(
            "enumerate(state_dict.items())"
        )));
        assert!(iterates_a_fixed_collection(&expression(
            "range(torch.cuda.device_count())"
        )));
        assert!(!iterates_a_fixed_collection(&expression("loader")));
        assert!(!iterates_a_fixed_collection(&expression("range(n)")));
    }

    #[test]
    fn a_backward_in_a_loop_is_found_at_any_depth_but_not_in_definitions() {
        let body = module("for batch in loader:\n    if ok:\n        loss.backward()\n").body;
        assert!(runs_backward_in_a_loop(&body));
        let body = module("while True:\n    for x in xs:\n        loss.backward()\n").body;
        assert!(runs_backward_in_a_loop(&body));
        // Truncated backpropagation through time: one step split over a range.
        let body = module("for chunk in range(k):\n    loss.backward()\n").body;
        assert!(!runs_backward_in_a_loop(&body));
        let body = module("for b in loader:\n    def f():\n        loss.backward()\n").body;
        assert!(!runs_backward_in_a_loop(&body));
        assert!(!runs_backward_in_a_loop(&module("loss.backward()\n").body));
    }

    #[test]
    fn training_is_a_backward_or_an_optimizer_step() {
        assert!(trains(&module("loss.backward()\n").body));
        assert!(trains(&module("self._optimizer.step()\n").body));
        assert!(trains(&module("scaler.step(opt)\n").body));
        assert!(!trains(&module("scheduler.step()\n").body));
        assert!(!trains(&module("def f():\n    loss.backward()\n").body));
    }

    #[test]
    fn collectives_count_on_a_distributed_receiver_where_the_name_is_shared() {
        assert!(calls_collectives(&module("dist.all_reduce(t)\n").body));
        assert!(calls_collectives(&module("torch.distributed.reduce(t, 0)\n").body));
        assert!(!calls_collectives(&module("functools.reduce(f, xs)\n").body));
        assert!(!calls_collectives(&module("x.scatter(0, i, v)\n").body));
    }

    #[test]
    fn a_size_holds_host_numbers() {
        assert!(is_a_size(&expression("x.shape")));
        assert!(is_a_size(&expression("x.shape[1:]")));
        assert!(is_a_size(&expression("x.size()")));
        assert!(!is_a_size(&expression("x.size(0) + y")));
        assert!(!is_a_size(&expression("x.sum()")));
    }

    #[test]
    fn none_tests_name_what_they_find_set() {
        assert_eq!(none_unless(&expression("x is not None")).map(Name::as_str), Some("x"));
        assert_eq!(none_unless(&expression("x is None")), None);
        let names = |source: &str, holds: bool| -> Vec<String> {
            names_not_none(&expression(source), holds)
                .iter()
                .map(|name| name.to_string())
                .collect()
        };
        assert_eq!(names("a is not None and b is not None", true), ["a", "b"]);
        assert_eq!(names("a is None", false), ["a"]);
        assert!(names("a is None", true).is_empty());
    }

    #[test]
    fn loop_iterables_are_the_names_in_for_clauses() {
        let body = module("for i, b in enumerate(loader):\n    pass\nx = 1\n").body;
        let names = loop_iterables(&body).expect("a loop");
        assert!(names.contains("loader") && names.contains("enumerate") && !names.contains("b"));
        assert!(loop_iterables(&module("x = 1\n").body).is_none());
    }
}
