//! The walk over a file: statements and expressions in the order Python evaluates them, the arms
//! of conditionals and loops merged as the model needs them, and the point at each node where
//! the rules run (after the node's children were visited).

use ruff_python_ast::name::Name;
use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::{Ranged, TextSize};

use super::Checker;
use super::arms::ArmDecided;
use super::narrowing::Narrowed;
use crate::parse::literal_text;
use crate::rules;
use crate::semantic::{ArmOutcome, Binding, GivenAsked, Kind, Returned, ScopeKind, is_false_literal};
use crate::syntax::{
    builds_a_message, collect_names, initialises_lazily, is_periodic_guard, iterates_a_fixed_collection,
    iterates_steps, membership_container, misses_a_memo, names_not_none, names_steps, none_unless, on_self,
    registered_modules, skips_off_period, tests_first_step, trains,
};

impl<'a> Checker<'a> {
    /// Whether `stmt` always stops the program's normal flow with an error: `raise`, `assert
    /// False`, `torch._assert(False, ...)`, `sys.exit(...)`.
    fn always_fails(&self, stmt: Option<&Stmt>) -> bool {
        match stmt {
            Some(Stmt::Raise(_)) => true,
            Some(Stmt::Assert(assert)) => is_false_literal(&assert.test),
            Some(Stmt::Expr(expr)) => {
                let Expr::Call(call) = expr.value.as_ref() else {
                    return false;
                };
                match self.model.callee(call).as_deref() {
                    Some("torch._assert") => call.arguments.args.first().is_some_and(is_false_literal),
                    Some("sys.exit" | "os._exit") => true,
                    _ => false,
                }
            }
            _ => false,
        }
    }

    /// Whether a block ending in `last` never reaches the line after it: it returns, leaves
    /// the loop or fails.
    fn leaves_the_block(&self, last: Option<&Stmt>) -> bool {
        self.always_fails(last) || matches!(last, Some(Stmt::Return(_) | Stmt::Continue(_) | Stmt::Break(_)))
    }

    /// One arm of a conditional, visited from the state before the conditional. An arm that
    /// ends in an error (`raise`, `assert False`) runs at most once, so it is cold.
    fn visit_arm(&mut self, body: &'a [Stmt]) -> ArmOutcome<'a> {
        self.visit_narrowed_arm(body, None)
    }

    /// An arm in which `isinstance` narrowed a name (`if isinstance(v, np.generic):`).
    fn visit_narrowed_arm(&mut self, body: &'a [Stmt], narrowed: Option<(Narrowed<'a>, Kind)>) -> ArmOutcome<'a> {
        let last = body.last();
        let raises = self.always_fails(last);
        let falls_through = !self.leaves_the_block(last);
        self.model.begin_arm();
        let narrowed_attribute = match narrowed {
            Some((Narrowed::Name(name), kind)) => {
                self.model.bind_value(name, kind, None);
                false
            }
            Some((Narrowed::SelfAttribute(attr), kind)) => {
                self.model.flow.narrowed_attributes.push((attr.clone(), kind));
                self.model.invalidate_kinds();
                true
            }
            None => false,
        };
        self.model.flow.except_depth += u32::from(raises);
        self.visit_body(body);
        self.model.flow.except_depth -= u32::from(raises);
        if narrowed_attribute {
            self.model.flow.narrowed_attributes.pop();
            self.model.invalidate_kinds();
        }
        self.model.end_arm(falls_through)
    }

    /// A block that may or may not run (a loop's `else`).
    fn visit_optional(&mut self, body: &'a [Stmt]) {
        if !body.is_empty() {
            let arm = self.visit_arm(body);
            self.model.merge_arms(vec![arm], false);
        }
    }

    /// Whether what a membership test reads outlives the call it is tested in: a memo made in
    /// the same function (`cache = {}` then `if k not in cache: cache[k] = ...`) is made again
    /// on every call, so its misses are not rare across steps, and one passed in may be made
    /// anew by each caller; one kept on `self` or in a global outlives the call. A test that is
    /// not a membership test says nothing against it.
    fn outlives_the_call(&self, test: &Expr) -> bool {
        match membership_container(test) {
            Some(Expr::Name(memo)) => !self.model.binds_here(memo.id.as_str()),
            _ => true,
        }
    }

    /// The body of an `if` / `elif` clause: periodic when its test is a periodic guard (the
    /// outermost guard is the one named).
    fn visit_guarded_arm(&mut self, test: &'a Expr, start: TextSize, body: &'a [Stmt]) -> ArmOutcome<'a> {
        let saved = self.model.flow.periodic_guard;
        // `if (i + 1) % accumulation == 0:` around the optimizer step runs with every step it
        // makes (`accumulation` is often 1): not a logging guard.
        if saved.is_none() && is_periodic_guard(test) && !trains(body) {
            self.model.flow.periodic_guard = Some(self.line(start));
        }
        let narrowed = self
            .isinstance_narrowing(test)
            .or_else(|| self.device_narrowing(test, true));
        let lazily = (initialises_lazily(test, body) && self.outlives_the_call(test)) || tests_first_step(test);
        let type_arm = self.parameter_type_test(test);
        self.frame.enter_type_arm(type_arm);
        let arm = self.visit_tested_arm(test, true, lazily, body, narrowed);
        self.frame.leave_type_arm(type_arm);
        self.model.flow.periodic_guard = saved;
        arm
    }

    /// Visits the arm where `test` comes out `holds`, off the step where it runs on no CUDA step
    /// (or `lazily`, on the first call only), knowing the names the test finds are not `None`.
    /// Where callers' arguments decided it, the project is asked to keep telling them: always
    /// where they made it dead, else where the arm reports or calls something.
    fn visit_tested_arm(
        &mut self,
        test: &'a Expr,
        holds: bool,
        lazily: bool,
        body: &'a [Stmt],
        narrowed: Option<(Narrowed<'a>, Kind)>,
    ) -> ArmOutcome<'a> {
        let mut decided = self.arm_off_step(test, holds);
        let off_step = decided.off_step;
        let dead = off_step && self.decision.take_decided_by_arguments();
        let guards = decided.guards;
        decided.off_step |= lazily;
        let entered = self.enter_arm(decided);
        let not_none = self.model.flow.not_none.len();
        self.model.flow.not_none.extend(names_not_none(test, holds));
        let mut arm = self.visit_narrowed_arm(body, narrowed);
        self.model.flow.not_none.truncate(not_none);
        self.leave_arm(entered);
        // What an arm the callers' arguments leave dead binds reaches no later line (`if
        // guidance is not None: guidance = guidance.to(dtype)` where no caller gives one), so
        // the project is asked where an arm they decide binds anything. An arm for another
        // backend, for type checkers or for a value not taken for a tensor still binds what
        // later lines may read.
        arm.falls_through &= !dead;
        if !off_step && arm.binds_anything() {
            self.model.ask_given(guards);
        }
        arm
    }
}

impl<'a> Visitor<'a> for Checker<'a> {
    fn visit_body(&mut self, body: &'a [Stmt]) {
        let saved = self.model.flow.except_depth;
        let saved_guard = self.model.flow.periodic_guard;
        let mut rest_entered = Vec::new();
        for (index, stmt) in body.iter().enumerate() {
            self.levels += 1;
            self.visit_stmt(stmt);
            self.levels -= 1;
            if let Stmt::Expr(ast::StmtExpr { value, .. }) = stmt
                && let Expr::Call(call) = value.as_ref()
            {
                self.note_moved_in_place(call);
            }
            if let Stmt::If(if_stmt) = stmt
                && if_stmt.elif_else_clauses.is_empty()
                && self.leaves_the_block(if_stmt.body.last())
            {
                // After `if torch.is_tensor(x): return x` (or `raise`, `continue`), the rest of
                // the block is the test's `else`: off the step where that arm would be, and not
                // at calls that take the early return.
                self.decision.set_returned_early(match if_stmt.body.as_slice() {
                    [Stmt::Return(ast::StmtReturn { value: Some(value), .. })] => {
                        value.as_name_expr().map(|name| name.id.as_str())
                    }
                    _ => None,
                });
                let mut decided = self.arm_off_step(&if_stmt.test, false);
                self.decision.set_returned_early(None);
                // After `if key in memo: return memo[key]`, the rest fills the memo: once per key.
                decided.off_step |=
                    misses_a_memo(&if_stmt.test, &body[index + 1..]) && self.outlives_the_call(&if_stmt.test);
                if !decided.off_step {
                    decided.guards = GivenAsked::default();
                }
                if decided.off_step || !decided.dead_where.is_empty() {
                    rest_entered.push(self.enter_arm(decided));
                }
                // After `if not should_log: return` (or `continue`), the rest of the block runs
                // as the body of `if should_log:` would: periodically.
                if self.model.flow.periodic_guard.is_none()
                    && matches!(if_stmt.body.last(), Some(Stmt::Return(_) | Stmt::Continue(_)))
                    && skips_off_period(&if_stmt.test)
                    && !trains(&body[index + 1..])
                {
                    self.model.flow.periodic_guard = Some(self.line(if_stmt.start()));
                }
            }
            // After a `try` whose body always returns or raises, the rest of the block runs
            // only when a handler caught something: a fallback, as the handler is.
            if let Stmt::Try(try_stmt) = stmt
                && !try_stmt.handlers.is_empty()
                && matches!(try_stmt.body.last(), Some(Stmt::Return(_) | Stmt::Raise(_)))
            {
                self.model.flow.except_depth += 1;
            }
        }
        for entered in rest_entered.into_iter().rev() {
            self.leave_arm(entered);
        }
        self.model.flow.except_depth = saved;
        self.model.flow.periodic_guard = saved_guard;
    }

    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        self.model.invalidate_kinds();
        match stmt {
            Stmt::FunctionDef(def) => self.define_function(def),
            Stmt::ClassDef(class_def) => self.define_class(class_def),
            Stmt::Import(import) => {
                for alias in &import.names {
                    self.bind_import(alias, None, 0);
                }
            }
            Stmt::ImportFrom(import) => {
                let module = import.module.as_ref().map_or("", |m| m.id.as_str());
                for alias in &import.names {
                    if alias.name.id.as_str() != "*" {
                        self.bind_import(alias, Some(module), import.level);
                    }
                }
            }
            Stmt::Assign(assign) => {
                self.visit_expr(&assign.value);
                for target in &assign.targets {
                    self.visit_expr(target);
                }
                self.run_rules(|context| rules::dispatch::check_stmt(context, stmt));
                let kind = self.model.kind_of(&assign.value);
                for target in &assign.targets {
                    self.bind_target(target, kind, Some(&assign.value));
                }
            }
            Stmt::AnnAssign(assign) => {
                if let Some(value) = &assign.value {
                    self.visit_expr(value);
                }
                self.visit_expr(&assign.target);
                self.run_rules(|context| rules::dispatch::check_stmt(context, stmt));
                let kind = match &assign.value {
                    Some(value) => self.model.kind_of(value),
                    None => self.model.annotation_kind(&assign.annotation),
                };
                self.bind_target(&assign.target, kind, assign.value.as_deref());
            }
            Stmt::AugAssign(assign) => {
                self.visit_expr(&assign.value);
                self.visit_expr(&assign.target);
                self.run_rules(|context| rules::dispatch::check_stmt(context, stmt));
                let kind = self.model.aug_assign_kind(assign);
                if matches!(*assign.target, Expr::Name(_) | Expr::Attribute(_)) {
                    self.bind_target(&assign.target, kind, None);
                }
            }
            Stmt::For(for_stmt) => {
                self.visit_expr(&for_stmt.iter);
                self.bind_loop_target(&for_stmt.target, &for_stmt.iter);
                self.bind_moved_items(&for_stmt.target, &for_stmt.body);
                self.visit_expr(&for_stmt.target);
                let line = self.line(for_stmt.start());
                let mut targets = Vec::new();
                collect_names(&for_stmt.target, &mut targets);
                self.note_loop();
                let over_batches = self.iterates_batches(&for_stmt.iter, &[]);
                let epoch = self.runs_epochs(&for_stmt.body, over_batches);
                // `keys = list(sd.keys()); for k in keys:` iterates what the name was bound to.
                let iterated = match for_stmt.iter.as_ref() {
                    Expr::Name(name) => self.model.lookup(name.id.as_str()).and_then(|b| b.value),
                    _ => None,
                };
                let fixed =
                    iterates_a_fixed_collection(&for_stmt.iter) || iterated.is_some_and(iterates_a_fixed_collection);
                let starts_hotness = if fixed {
                    self.does_step_work(&for_stmt.body)
                } else {
                    over_batches
                        || names_steps(&for_stmt.target)
                        || (self.in_generate() && iterates_steps(&for_stmt.iter))
                        || self.starts_step_loop(&for_stmt.body, iterates_steps(&for_stmt.iter))
                };
                self.model.flow.loops.push(crate::semantic::LoopInfo {
                    line,
                    targets,
                    epoch,
                    starts_hotness,
                });
                self.run_rules(|context| rules::dispatch::check_stmt(context, stmt));
                self.visit_body(&for_stmt.body);
                self.model.flow.loops.pop();
                self.visit_optional(&for_stmt.orelse);
            }
            Stmt::While(while_stmt) => {
                self.note_loop();
                let line = self.line(while_stmt.start());
                let epoch = self.runs_epochs(&while_stmt.body, false);
                let starts_hotness = self.starts_step_loop(&while_stmt.body, false);
                self.model.flow.loops.push(crate::semantic::LoopInfo {
                    line,
                    targets: Vec::new(),
                    epoch,
                    starts_hotness,
                });
                self.visit_expr(&while_stmt.test);
                self.run_rules(|context| rules::dispatch::check_stmt(context, stmt));
                self.visit_body(&while_stmt.body);
                self.model.flow.loops.pop();
                self.visit_optional(&while_stmt.orelse);
            }
            Stmt::If(if_stmt) => {
                self.visit_expr(&if_stmt.test);
                self.run_rules(|context| rules::dispatch::check_stmt(context, stmt));
                let mut arms = vec![self.visit_guarded_arm(&if_stmt.test, if_stmt.start(), &if_stmt.body)];
                // The clauses after it run where every earlier test failed: on no step where
                // one holds on every step (`if not force_not_quantize:` that no hot caller
                // turns off). Not by a type test that takes an unseen value for a tensor: a
                // chain of them dispatches on types (`elif is_list_of(v, torch.Tensor):`).
                let mut earlier = ArmDecided::default();
                // Each clause's previous test: the `if`'s, then each `elif`'s (only the last
                // clause may be an `else`).
                let tests = std::iter::once(&*if_stmt.test).chain(
                    if_stmt
                        .elif_else_clauses
                        .iter()
                        .filter_map(|clause| clause.test.as_ref()),
                );
                for (clause, previous) in if_stmt.elif_else_clauses.iter().zip(tests) {
                    let type_test = matches!(previous, Expr::Call(call) if self.tests_for_a_tensor(call).is_some());
                    if (clause.test.is_some() || if_stmt.elif_else_clauses.len() > 1) && !type_test {
                        let decided = self.arm_off_step(previous, false);
                        earlier.off_step |= decided.off_step;
                        earlier.guards = earlier.guards.union(decided.guards);
                        earlier.dead_where.extend(decided.dead_where);
                    }
                    match &clause.test {
                        Some(test) => {
                            let entered = self.enter_arm(earlier.clone());
                            self.visit_expr(test);
                            self.run_rules(|context| rules::dispatch::check_elif(context, test));
                            arms.push(self.visit_guarded_arm(test, clause.start(), &clause.body));
                            self.leave_arm(entered);
                        }
                        // `else` after a single `if t.is_cuda:` knows the opposite.
                        None if if_stmt.elif_else_clauses.len() == 1 => {
                            let narrowed = self.device_narrowing(&if_stmt.test, false);
                            arms.push(self.visit_tested_arm(&if_stmt.test, false, false, &clause.body, narrowed));
                        }
                        None => {
                            let entered = self.enter_arm(earlier.clone());
                            arms.push(self.visit_arm(&clause.body));
                            self.leave_arm(entered);
                        }
                    }
                }
                let mut exhaustive = if_stmt
                    .elif_else_clauses
                    .last()
                    .is_some_and(|clause| clause.test.is_none());
                // `if x is not None: x = f(x)` with no `else`: where the test fails, `x` is
                // `None`, so after the `if` it is what the arm made it or `None` (not what it
                // was before the test, a value of any kind). It is still the same value there,
                // a parameter for one: what its callers pass may tell the arm's.
                if let (Some(name), [arm]) = (none_unless(&if_stmt.test), arms.as_slice())
                    && if_stmt.elif_else_clauses.is_empty()
                    && arm.binds(name.as_str())
                    && let Some(before) = self.model.lookup(name.as_str())
                {
                    let none = Binding {
                        kind: Kind::NoneValue,
                        ..before.clone()
                    };
                    self.model.begin_arm();
                    self.model.bind(name, none);
                    arms.push(self.model.end_arm(true));
                    exhaustive = true;
                }
                self.model.merge_arms(arms, exhaustive);
            }
            Stmt::Try(try_stmt) => {
                // The body usually runs to the end; handlers may run instead of its rest.
                self.visit_body(&try_stmt.body);
                let mut arms = Vec::new();
                for handler in &try_stmt.handlers {
                    let ast::ExceptHandler::ExceptHandler(handler) = handler;
                    if let Some(type_) = &handler.type_ {
                        self.visit_expr(type_);
                    }
                    self.model.flow.except_depth += 1;
                    self.model.begin_arm();
                    if let Some(name) = &handler.name {
                        self.model.bind_value(&name.id, Kind::Unknown, None);
                    }
                    self.visit_body(&handler.body);
                    let falls_through = !matches!(
                        handler.body.last(),
                        Some(Stmt::Return(_) | Stmt::Raise(_) | Stmt::Continue(_) | Stmt::Break(_))
                    );
                    arms.push(self.model.end_arm(falls_through));
                    self.model.flow.except_depth -= 1;
                }
                self.model.merge_arms(arms, false);
                self.visit_body(&try_stmt.orelse);
                self.visit_body(&try_stmt.finalbody);
            }
            Stmt::With(with_stmt) => {
                let mut pushed = 0;
                for item in &with_stmt.items {
                    self.visit_expr(&item.context_expr);
                    self.note_context_manager(&item.context_expr);
                    if let Kind::Device(device) = self.model.kind_of(&item.context_expr) {
                        self.model.flow.default_device_stack.push(device);
                        pushed += 1;
                    }
                    if let Some(target) = &item.optional_vars {
                        let kind = self.model.kind_of(&item.context_expr);
                        let kind = if matches!(kind, Kind::Device(_)) {
                            Kind::Unknown
                        } else {
                            kind
                        };
                        self.bind_target(target, kind, None);
                        self.visit_expr(target);
                    }
                }
                self.run_rules(|context| rules::dispatch::check_stmt(context, stmt));
                self.visit_body(&with_stmt.body);
                for _ in 0..pushed {
                    self.model.flow.default_device_stack.pop();
                }
            }
            Stmt::Return(ret) => {
                if let Some(value) = &ret.value {
                    self.visit_expr(value);
                }
                self.run_rules(|context| rules::dispatch::check_stmt(context, stmt));
                let kind = ret.value.as_deref().map_or(Kind::NoneValue, |v| self.model.kind_of(v));
                // What it returns (or the elements of the tuple it returns) may become known
                // with what its callers pass.
                if let Some(value) = ret.value.as_deref()
                    && (kind.is_opaque() || value.is_tuple_expr())
                    && let Some(depends) = self.model.dependence_of(value)
                {
                    self.frame.join_return_depends(depends);
                }
                self.frame.join_return(kind);
                // Kept for other files too: an instance's class is numbered in this one.
                let portable = match self.model.to_project(kind).kind {
                    Kind::Object(_) => Kind::Unknown,
                    other => other,
                };
                self.frame.note_return_in_arm(portable);
                // `return None` on a path the caller's unpacking never takes says nothing, nor
                // does a value the file cannot tell (`return results`): where a caller unpacks
                // it, it is a tuple like the others.
                let returned = match ret.value.as_deref() {
                    _ if kind == Kind::NoneValue => None,
                    Some(value @ Expr::Tuple(_)) => Some(Ok(self.returned(value))),
                    // `return self._forward(x)`: the tuple the function called returns.
                    Some(Expr::Call(call)) if let Some(elements) = self.returned_by(call) => {
                        Some(Ok(Returned::Tuple(elements)))
                    }
                    // A tuple whose elements the file cannot tell (`tuple(gen)`) either.
                    _ if matches!(kind, Kind::Unknown | Kind::Tuple) => None,
                    _ => Some(Err(())),
                };
                if let Some(returned) = returned {
                    self.frame.join_returned_tuple(returned);
                }
            }
            Stmt::Assert(assert) => {
                self.visit_expr(&assert.test);
                self.run_rules(|context| rules::dispatch::check_stmt(context, stmt));
                // The message is built only when the assertion fails: once, not every step.
                if let Some(msg) = &assert.msg {
                    self.model.flow.except_depth += 1;
                    self.visit_expr(msg);
                    self.model.flow.except_depth -= 1;
                }
            }
            Stmt::Global(global) => {
                for name in &global.names {
                    self.model.declare_global(name.id.clone());
                }
            }
            _ => {
                visitor::walk_stmt(self, stmt);
                self.run_rules(|context| rules::dispatch::check_stmt(context, stmt));
            }
        }
    }

    #[inline]
    fn visit_expr(&mut self, expr: &'a Expr) {
        // Names and literals, most of the nodes, bind nothing, hold nothing to walk and no rule
        // looks at them: skip them before the costly entry into the full visit.
        if !matches!(
            expr,
            Expr::Name(_)
                | Expr::NumberLiteral(_)
                | Expr::StringLiteral(_)
                | Expr::BytesLiteral(_)
                | Expr::BooleanLiteral(_)
                | Expr::NoneLiteral(_)
                | Expr::EllipsisLiteral(_)
        ) {
            self.levels += 1;
            self.visit_compound_expr(expr);
            self.levels -= 1;
        }
    }
}

impl<'a> Checker<'a> {
    #[inline(never)]
    fn visit_compound_expr(&mut self, expr: &'a Expr) {
        match expr {
            Expr::Lambda(lambda) => {
                let scope = self.model.push_scope(ScopeKind::Lambda, self.model.flow.scope);
                let saved = std::mem::replace(&mut self.model.flow.scope, scope);
                if let Some(parameters) = &lambda.parameters {
                    for parameter in parameters.iter() {
                        self.model.bind_value(&parameter.name().id, Kind::Unknown, None);
                    }
                }
                // `lambda: f"got {int(n)} tokens"` handed to a check builds its message only
                // when the check fails, as an assertion's message is.
                let message = lambda.parameters.is_none() && builds_a_message(&lambda.body);
                self.model.flow.except_depth += u32::from(message);
                self.visit_expr(&lambda.body);
                self.model.flow.except_depth -= u32::from(message);
                self.model.flow.scope = saved;
                self.model.invalidate_kinds();
            }
            Expr::ListComp(ast::ExprListComp { elt, generators, .. })
            | Expr::Generator(ast::ExprGenerator { elt, generators, .. }) => {
                self.visit_comprehension(generators, |checker| {
                    checker.visit_expr(elt);
                    checker.model.note_comprehension_element(expr, elt);
                });
            }
            Expr::SetComp(ast::ExprSetComp { elt, generators, .. }) => {
                self.visit_comprehension(generators, |checker| checker.visit_expr(elt));
            }
            Expr::DictComp(comp) => {
                self.visit_comprehension(&comp.generators, |checker| {
                    if let Some(key) = &comp.key {
                        checker.visit_expr(key);
                    }
                    checker.visit_expr(&comp.value);
                });
            }
            Expr::Named(named) => {
                self.visit_expr(&named.value);
                let kind = self.model.kind_of(&named.value);
                self.bind_target(&named.target, kind, Some(&named.value));
            }
            Expr::Call(call) => {
                // The attribute a call names is a method called, not a property read.
                self.called = call.func.range();
                visitor::walk_expr(self, expr);
                self.note_call(call);
                for (attr, value) in registered_modules(call) {
                    let kind = self.model.kind_of(value);
                    self.bind_self_attribute(attr, kind, Some(value));
                }
                if let (Expr::Name(func), [object, Expr::StringLiteral(attr), _]) =
                    (call.func.as_ref(), &*call.arguments.args)
                    && func.id.as_str() == "setattr"
                    && !matches!(object, Expr::Name(name) if name.id.as_str() == "self")
                    && let Some(attr) = literal_text(&attr.value)
                {
                    self.recorder.note_set_outside(Name::new(attr));
                }
                if let Some(id) = self.model.flow.function
                    && !self.model.functions[id as usize].step_work
                    && self.is_step_call(call)
                {
                    self.model.functions[id as usize].step_work = true;
                }
            }
            Expr::Attribute(attribute) if attribute.ctx == ast::ExprContext::Load => {
                if on_self(attribute) {
                    self.analyse_setters(attribute.attr.as_str());
                }
                visitor::walk_expr(self, expr);
                if attribute.range != self.called {
                    self.note_property_read(attribute);
                }
            }
            Expr::Yield(_) | Expr::YieldFrom(_) => {
                self.frame.note_yield();
                visitor::walk_expr(self, expr);
            }
            _ => visitor::walk_expr(self, expr),
        }
        let reported = self.findings.diagnostics.len();
        self.run_rules(|context| rules::dispatch::check_expr(context, expr));
        self.start_at_the_method(expr, reported);
    }

    fn visit_comprehension(&mut self, generators: &'a [ast::Comprehension], body: impl FnOnce(&mut Self)) {
        let scope = self.model.push_scope(ScopeKind::Comprehension, self.model.flow.scope);
        let saved = std::mem::replace(&mut self.model.flow.scope, scope);
        for generator in generators {
            self.visit_expr(&generator.iter);
            self.bind_loop_target(&generator.target, &generator.iter);
            for condition in &generator.ifs {
                self.visit_expr(condition);
            }
        }
        body(self);
        self.model.flow.scope = saved;
        self.model.invalidate_kinds();
    }
}
