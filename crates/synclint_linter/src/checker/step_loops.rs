//! Where code runs every step: loops over a loader's batches or over steps, loops of epochs,
//! decoding loops, and the calls that do a step's work (a backward pass, an optimizer step, a
//! network's forward).

use std::rc::Rc;

use ruff_python_ast::name::Name;
use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{self as ast, Expr, Stmt};
use rustc_hash::FxHashSet;

use super::Checker;
use crate::semantic::names::{names_a_loader, names_a_progress_wrapper};
use crate::semantic::{Binding, BindingSource, Kind, is_host_library, is_library};
use crate::syntax::{
    any_expr, any_expr_where, call_matches, calls_collectives, is_step_call, is_training_call, iterates_steps,
    loop_iterables, names_steps, on_self, runs_backward_in_a_loop, trains, yields,
};

impl<'a> Checker<'a> {
    pub(super) fn note_loop(&mut self) {
        if let Some(id) = self.model.flow.function {
            self.model.functions[id as usize].has_loops = true;
        }
    }

    /// `param`, `param.items()` or `param.values()` of a parameter of the function analysed.
    pub(super) fn iterates_a_parameter(&self, iter: &Expr) -> bool {
        let iterated: &Expr = match iter {
            Expr::Call(call) if call.arguments.is_empty() => match call.func.as_ref() {
                Expr::Attribute(method) if matches!(method.attr.as_str(), "items" | "values") => &method.value,
                _ => return false,
            },
            iter => iter,
        };
        matches!(iterated, Expr::Name(name) if matches!(
            self.model.lookup(name.id.as_str()),
            Some(Binding { source: BindingSource::Parameter(_), .. })
        ))
    }

    /// `zip(...)` of the builtin, without starred arguments.
    pub(super) fn is_zip_call(&self, expr: &Expr) -> bool {
        matches!(expr, Expr::Call(call) if self.zips(call))
    }

    pub(super) fn zips(&self, call: &ast::ExprCall) -> bool {
        matches!(call.func.as_ref(), Expr::Name(func) if func.id == "zip" && self.model.is_builtin("zip"))
            && !call.arguments.args.iter().any(Expr::is_starred_expr)
    }

    /// Does this code hold a step loop (outside nested definitions): a loop over a data loader,
    /// or one that runs a backward pass? A function that does runs whole epochs, and a loop that
    /// does is an epoch loop: the lines outside the step loop run once per call or epoch.
    /// `in_step`: the body is a step already (a loop over batches): a loop in it that runs
    /// backward splits the step into micro-batches (`for micro in batch.chunk(4):`) and makes
    /// it no epoch loop.
    pub(super) fn runs_epochs(&self, body: &[Stmt], in_step: bool) -> bool {
        // Most functions hold no loop: they are told without inferring anything.
        let Some(iterated) = loop_iterables(body) else {
            return false;
        };
        // Inside a step, a loop that runs backward splits it; elsewhere it is a step loop.
        if !in_step && runs_backward_in_a_loop(body) {
            return true;
        }
        let mut finder = StepLoopFinder {
            checker: self,
            found: false,
            iterated,
            batch_names: Vec::new(),
        };
        finder.visit_body(body);
        finder.found
    }

    /// `for batch in loader`, `for i, (x, y) in enumerate(tqdm(train_loader))`; `batch_names`
    /// hold what iterates batches too.
    pub(super) fn iterates_batches(&self, iter: &Expr, batch_names: &[Name]) -> bool {
        match iter {
            Expr::Name(name) if batch_names.contains(&name.id) => true,
            Expr::Call(call) if self.wraps_an_iterable(call) => call
                .arguments
                .args
                .iter()
                .any(|arg| self.iterates_batches(arg, batch_names)),
            iter => match self.model.kind_of(iter) {
                Kind::DataLoader { .. } => true,
                Kind::Unknown => names_a_loader(iter),
                _ => false,
            },
        }
    }

    /// `enumerate(x)`, `zip(x, y)`, `iter(x)`, `tqdm(x)`: iterating it iterates `x`.
    fn wraps_an_iterable(&self, call: &ast::ExprCall) -> bool {
        let Expr::Name(func) = call.func.as_ref() else {
            return false;
        };
        let name = func.id.as_str();
        if self.model.is_builtin(name) {
            matches!(name, "enumerate" | "zip" | "iter")
        } else {
            names_a_progress_wrapper(name)
        }
    }

    /// Inside a `generate`: its loops over steps or new tokens decode (see [`decodes`]).
    pub(super) fn in_generate(&self) -> bool {
        self.model
            .current_function()
            .is_some_and(|function| function.name.as_str() == "generate")
    }

    /// Does a loop with this body do a step's work, so that it runs once per step (see
    /// [`Checker::reaches_step_work`])? A call of a function in another file counts where the
    /// project has found that it does one (`FileFacts::step_work`); where the loop's answer
    /// hangs on such calls, their names are kept for the project to answer. Until it has, the
    /// loop runs as often as the code around it: most loops that call only other files' helpers
    /// convert, load or save.
    pub(super) fn starts_step_loop(&mut self, body: &[Stmt], over_steps: bool) -> bool {
        let mut elsewhere: Vec<Rc<str>> = Vec::new();
        let mut ask = |callee| {
            elsewhere.push(callee);
            false
        };
        // A loop around whole decodes (a long video's chunks, each encoded, then denoised to
        // the end) runs once per decode: a step loop only where its own lines train. Not one
        // over steps that repeats a corrector within each (`for _ in range(correct_steps):`).
        let decoding: Vec<bool> = if over_steps {
            Vec::new()
        } else {
            body.iter().map(|stmt| self.holds_a_decoding_loop(stmt)).collect()
        };
        let reaches = if decoding.contains(&true) {
            body.iter()
                .zip(&decoding)
                .filter(|(_, decodes)| !**decodes)
                .any(|(stmt, _)| trains(std::slice::from_ref(stmt)))
        } else {
            self.reaches_step_work(body, 0, &mut ask)
        };
        if reaches {
            return true;
        }
        let facts = self.model.facts;
        let reaches = elsewhere.iter().any(|callee| facts.does_step_work(callee));
        self.recorder
            .note_step_work_asked(elsewhere.iter().map(|callee| &**callee));
        reaches
    }

    /// Does this code do a step's work (see [`does_step_work`]), itself or through the functions
    /// of this file it calls (three calls deep)? A held module (`self.block(x)`) or a method of
    /// a base in another file counts as step work; a call of project code in another file (an
    /// imported function) counts as `elsewhere` says of its qualified name. A loop over inputs
    /// that calls only the library and helpers that do no step's work is no step loop.
    fn reaches_step_work(&self, body: &[Stmt], depth: u32, elsewhere: &mut dyn FnMut(Rc<str>) -> bool) -> bool {
        // A loop that yields feeds its consumer's loop one item at a time (a generator of
        // batches): it runs as often as that loop.
        if self.does_step_work(body) || (depth == 0 && (yields(body) || calls_collectives(body))) {
            return true;
        }
        let in_another_file = |call: &ast::ExprCall, elsewhere: &mut dyn FnMut(Rc<str>) -> bool| {
            self.model
                .callee(call)
                .filter(|callee| !is_library(callee) && !is_host_library(callee))
                .is_some_and(elsewhere)
        };
        // Work in an arm for another backend (`if state.distributed_type == XLA: xm.mark_step()`)
        // is no CUDA step's.
        let off_step = |test: &Expr, holds: bool| self.runs_on_no_cuda_step(test, holds, false);
        any_expr_where(body, off_step, |expr| {
            let Expr::Call(call) = expr else {
                return false;
            };
            match call.func.as_ref() {
                Expr::Name(name) => match self.model.lookup(name.id.as_str()).map(|binding| &binding.source) {
                    Some(BindingSource::Function(id)) => {
                        depth < 3
                            && self.reaches_step_work(
                                &self.model.functions[*id as usize].def.body,
                                depth + 1,
                                elsewhere,
                            )
                    }
                    Some(BindingSource::Import(_)) => in_another_file(call, elsewhere),
                    _ => false,
                },
                Expr::Attribute(attribute) if on_self(attribute) => {
                    let Some(class) = self.model.flow.class else {
                        return true;
                    };
                    match self.model.method_of(class, attribute.attr.as_str()) {
                        Some(id) => {
                            depth < 3
                                && self.reaches_step_work(
                                    &self.model.functions[id as usize].def.body,
                                    depth + 1,
                                    elsewhere,
                                )
                        }
                        // A held instance (`self.block(x)`), or a method of a base in another file.
                        None => !matches!(
                            self.model.local_class_attribute(class, attribute.attr.as_str()),
                            Some(Kind::Number | Kind::Str | Kind::List | Kind::NumberList | Kind::Dict | Kind::Tuple)
                        ),
                    }
                }
                Expr::Attribute(_) => in_another_file(call, elsewhere),
                _ => false,
            }
        })
    }

    /// Does a function of this name and body run a whole decode: is it a `generate`, or does its
    /// body loop over timesteps or new tokens doing a step's work without training (`for i, t
    /// in enumerate(timesteps): noise = self.unet(x, t)`, `while not done: logits =
    /// self(ids)`)? Its setup before the loop and the output's handling after it run once per
    /// call.
    pub(super) fn decodes(&self, name: &str, body: &[Stmt]) -> bool {
        name == "generate" || body.iter().any(|stmt| self.holds_a_decoding_loop(stmt))
    }

    /// Is this statement, or one it holds (outside nested definitions), a decoding loop (see
    /// [`Checker::decodes`])? A network runs where a call's name says so, or where it calls an
    /// attribute holding a module (`self.prior(x)` of a pipeline's registered prior). A loop
    /// decodes where its body does a step's work without training: the statement is walked
    /// once, each loop's body telling the loop around it what it calls (asking each loop's body
    /// in turn walked the innermost loop once for every loop around it).
    fn holds_a_decoding_loop(&self, stmt: &Stmt) -> bool {
        let mut scan = DecodeScan {
            checker: self,
            calls: LoopCalls::default(),
            calls_count: false,
        };
        scan.visit_stmt(stmt);
        scan.calls.decoding_loop
    }

    /// Does this call run a network or train (see [`Checker::holds_a_decoding_loop`])?
    fn call_in_a_decode(&self, call: &ast::ExprCall) -> LoopCalls {
        let held_module = self.model.flow.class.is_some_and(|class| {
            matches!(call.func.as_ref(), Expr::Attribute(attribute)
                if on_self(attribute)
                    && matches!(self.model.local_class_attribute(class, attribute.attr.as_str()), Some(Kind::Module(..) | Kind::Object(_))))
        });
        LoopCalls {
            trains: call_matches(call, is_training_call),
            works: held_module || self.is_step_call(call),
            decoding_loop: false,
        }
    }

    /// Does this code do a step's work (see [`is_step_call`])? Calls of host libraries (numpy,
    /// scipy) run no network whatever their names say.
    pub(super) fn does_step_work(&self, body: &[Stmt]) -> bool {
        any_expr(body, |expr| matches!(expr, Expr::Call(call) if self.is_step_call(call)))
    }

    /// A call that does a step's work (see [`Checker::does_step_work`]).
    pub(super) fn is_step_call(&self, call: &ast::ExprCall) -> bool {
        call_matches(call, is_step_call)
            && !self
                .model
                .qualified_name(&call.func)
                .is_some_and(|qualified| is_host_library(&qualified))
    }
}

/// Looks for a loop over a data loader (see [`Checker::runs_epochs`]).
struct StepLoopFinder<'c, 'a> {
    checker: &'c Checker<'a>,
    found: bool,
    /// Names the body binds to what iterates batches (`pbar = tqdm(enumerate(loader))`,
    /// `with tqdm(loader) as it:`): the function is scanned before it is analysed, so its
    /// bindings are not known yet.
    batch_names: Vec<Name>,
    /// The names a loop of the body iterates over (alone or inside `enumerate(...)` and the
    /// like): only what they are bound to can make a loop a step loop.
    iterated: FxHashSet<Name>,
}

impl StepLoopFinder<'_, '_> {
    fn iterates_batches(&self, iter: &Expr) -> bool {
        self.checker.iterates_batches(iter, &self.batch_names)
    }

    fn bind(&mut self, target: &Expr, value: &Expr) {
        if let Expr::Name(name) = target
            && self.iterated.contains(&name.id)
        {
            let batches = self.iterates_batches(value);
            self.batch_names.retain(|held| *held != name.id);
            if batches {
                self.batch_names.push(name.id.clone());
            }
        }
    }
}

impl<'b> Visitor<'b> for StepLoopFinder<'_, '_> {
    /// Only a `for` or `while` statement is a step loop here (comprehensions over a loader are
    /// not, lambdas are definitions), so expressions are not walked.
    fn visit_expr(&mut self, _: &'b Expr) {}

    fn visit_stmt(&mut self, stmt: &'b Stmt) {
        if self.found {
            return;
        }
        match stmt {
            Stmt::FunctionDef(_) | Stmt::ClassDef(_) => {}
            Stmt::Assign(assign) => {
                if let [target] = assign.targets.as_slice() {
                    self.bind(target, &assign.value);
                }
            }
            Stmt::With(with_stmt) => {
                for item in &with_stmt.items {
                    if let Some(target) = &item.optional_vars {
                        self.bind(target, &item.context_expr);
                    }
                }
                visitor::walk_stmt(self, stmt);
            }
            Stmt::For(for_stmt) if self.iterates_batches(&for_stmt.iter) => self.found = true,
            _ => visitor::walk_stmt(self, stmt),
        }
    }
}

/// What code calls, for [`Checker::holds_a_decoding_loop`]: a training call (`.backward()`,
/// an optimizer's step), a call that does a step's work or calls a held module, and whether it
/// holds a decoding loop.
#[derive(Default, Clone, Copy)]
struct LoopCalls {
    trains: bool,
    works: bool,
    decoding_loop: bool,
}

impl LoopCalls {
    /// What the code around code that calls `inner` calls: its calls, not its loops.
    fn calls_of(&mut self, inner: LoopCalls) {
        self.trains |= inner.trains;
        self.works |= inner.works;
    }

    /// A loop whose body calls this decodes: it does a step's work without training.
    fn decodes(self) -> bool {
        self.works && !self.trains
    }
}

/// The walk of [`Checker::holds_a_decoding_loop`]: calls are those of every expression outside
/// nested definitions and lambdas; decoding loops are looked for in the bodies of loops, `if`,
/// `with` and `try` (not in `except` clauses, `else` clauses of `while` and `try`, or `match`
/// cases).
struct DecodeScan<'c, 'a> {
    checker: &'c Checker<'a>,
    calls: LoopCalls,
    /// Inside the body of a loop that decodes if its body does (a `while` loop, or a `for` loop
    /// over steps): only there do calls count. Elsewhere the walk only looks for such loops, so
    /// code outside them (most of a function) costs no judgement of its calls.
    calls_count: bool,
}

impl<'c, 'a> DecodeScan<'c, 'a> {
    /// A scan of nested code, that tells this one what it found.
    fn inner(&self, calls_count: bool) -> DecodeScan<'c, 'a> {
        DecodeScan {
            checker: self.checker,
            calls: LoopCalls::default(),
            calls_count,
        }
    }

    fn body(&self, body: &[Stmt], calls_count: bool) -> LoopCalls {
        let mut scan = self.inner(calls_count);
        scan.visit_body(body);
        scan.calls
    }

    /// Takes the calls of the code `walk` visits, where calls count, but not its decoding
    /// loops (those of an `except` clause or a `match` case).
    fn calls_only(&mut self, walk: impl FnOnce(&mut DecodeScan<'c, 'a>)) {
        if self.calls_count {
            let mut scan = self.inner(true);
            walk(&mut scan);
            self.calls.calls_of(scan.calls);
        }
    }

    /// Takes the calls of `body`, and its decoding loops where they count.
    fn nested(&mut self, body: &[Stmt], loops_count: bool) -> LoopCalls {
        self.nested_in(body, loops_count, self.calls_count)
    }

    /// [`DecodeScan::nested`] for the body of a loop, whose calls count where `calls_count`.
    fn nested_in(&mut self, body: &[Stmt], loops_count: bool, calls_count: bool) -> LoopCalls {
        let inner = self.body(body, calls_count);
        self.calls.calls_of(inner);
        self.calls.decoding_loop |= loops_count && inner.decoding_loop;
        inner
    }
}

impl<'b> Visitor<'b> for DecodeScan<'_, '_> {
    fn visit_stmt(&mut self, stmt: &'b Stmt) {
        match stmt {
            Stmt::FunctionDef(_) | Stmt::ClassDef(_) => {}
            Stmt::For(for_stmt) => {
                self.visit_expr(&for_stmt.target);
                self.visit_expr(&for_stmt.iter);
                let over_steps = names_steps(&for_stmt.target) || iterates_steps(&for_stmt.iter);
                let body = self.nested_in(&for_stmt.body, true, self.calls_count || over_steps);
                self.calls.decoding_loop |= over_steps && body.decodes();
                self.nested(&for_stmt.orelse, true);
            }
            Stmt::While(while_stmt) => {
                self.visit_expr(&while_stmt.test);
                let body = self.nested_in(&while_stmt.body, true, true);
                self.calls.decoding_loop |= body.decodes();
                self.nested(&while_stmt.orelse, false);
            }
            Stmt::If(if_stmt) => {
                self.visit_expr(&if_stmt.test);
                self.nested(&if_stmt.body, true);
                for clause in &if_stmt.elif_else_clauses {
                    if let Some(test) = &clause.test {
                        self.visit_expr(test);
                    }
                    self.nested(&clause.body, true);
                }
            }
            Stmt::With(with_stmt) => {
                for item in &with_stmt.items {
                    self.visit_with_item(item);
                }
                self.nested(&with_stmt.body, true);
            }
            Stmt::Try(try_stmt) => {
                self.nested(&try_stmt.body, true);
                for handler in &try_stmt.handlers {
                    self.calls_only(|scan| scan.visit_except_handler(handler));
                }
                self.nested(&try_stmt.orelse, false);
                self.nested(&try_stmt.finalbody, false);
            }
            // Statements of no other kind hold a decoding loop that counts.
            _ => self.calls_only(|scan| visitor::walk_stmt(scan, stmt)),
        }
    }

    fn visit_expr(&mut self, expr: &'b Expr) {
        // An expression holds no loop statement, so outside a counted body it tells nothing.
        if !self.calls_count || matches!(expr, Expr::Lambda(_)) {
            return;
        }
        if let Expr::Call(call) = expr {
            self.calls.calls_of(self.checker.call_in_a_decode(call));
        }
        visitor::walk_expr(self, expr);
    }
}
