//! Def-use within one function body, for fixes that follow a value across statements: which
//! names an expression reads, where a local name is read, which statements bind it.

use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{ExceptHandler, Expr, ExprContext, ExprName, Stmt, StmtFor};
use ruff_text_size::{Ranged, TextRange};

/// The names `expr` reads, in source order (with repeats).
pub(crate) fn names_read(expr: &Expr) -> Vec<&str> {
    let mut reads = Reads::default();
    reads.visit_expr(expr);
    reads.names.into_iter().map(|name| name.id.as_str()).collect()
}

/// Every read of `name` in `body`, nested blocks included. Reads inside nested functions,
/// lambdas and classes count too: a closure sees the local.
pub(crate) fn reads_of<'b>(body: &'b [Stmt], name: &str) -> Vec<&'b ExprName> {
    let mut reads = Reads::default();
    reads.visit_body(body);
    reads.names.retain(|read| read.id.as_str() == name);
    reads.names
}

/// The block of `body` (itself or a nested one) that holds the statement at `range`, and its
/// index there.
pub(crate) fn block_of(body: &[Stmt], range: TextRange) -> Option<(&[Stmt], usize)> {
    for (index, stmt) in body.iter().enumerate() {
        if stmt.range() == range {
            return Some((body, index));
        }
        if stmt.range().contains_range(range) {
            return nested_blocks(stmt).into_iter().find_map(|block| block_of(block, range));
        }
    }
    None
}

/// The blocks a compound statement holds in this scope (not a nested `def`'s or `class`'s).
fn nested_blocks(stmt: &Stmt) -> Vec<&[Stmt]> {
    match stmt {
        Stmt::If(if_stmt) => std::iter::once(&*if_stmt.body)
            .chain(if_stmt.elif_else_clauses.iter().map(|clause| &*clause.body))
            .collect(),
        Stmt::For(for_stmt) => vec![&for_stmt.body, &for_stmt.orelse],
        Stmt::While(while_stmt) => vec![&while_stmt.body, &while_stmt.orelse],
        Stmt::With(with) => vec![&with.body],
        Stmt::Try(try_stmt) => std::iter::once(&*try_stmt.body)
            .chain(try_stmt.handlers.iter().map(|handler| match handler {
                ExceptHandler::ExceptHandler(handler) => &*handler.body,
            }))
            .chain([&*try_stmt.orelse, &*try_stmt.finalbody])
            .collect(),
        Stmt::Match(match_stmt) => match_stmt.cases.iter().map(|case| &*case.body).collect(),
        _ => Vec::new(),
    }
}

/// The `for` loops of `body` around the code at `range`, outermost first.
pub(crate) fn loops_around(body: &[Stmt], range: TextRange) -> Vec<&StmtFor> {
    let mut loops = Vec::new();
    let mut block = body;
    while let Some((outer, at)) = block_of_containing(block, range) {
        let stmt = &outer[at];
        if let Stmt::For(for_stmt) = stmt {
            loops.push(for_stmt);
        }
        match nested_blocks(stmt)
            .into_iter()
            .find(|inner| inner.iter().any(|s| s.range().contains_range(range)))
        {
            Some(inner) => block = inner,
            None => break,
        }
    }
    loops
}

/// The statement of `body` (not of a nested block) whose range holds `range`.
fn block_of_containing(body: &[Stmt], range: TextRange) -> Option<(&[Stmt], usize)> {
    body.iter()
        .position(|stmt| stmt.range().contains_range(range))
        .map(|at| (body, at))
}

/// Whether `statements` read, assign or delete any of `names` (nested blocks included).
pub(crate) fn mention_any(statements: &[Stmt], names: &[&str]) -> bool {
    let mut mentions = Reads {
        names: Vec::new(),
        stores_too: true,
    };
    mentions.visit_body(statements);
    mentions.names.iter().any(|name| names.contains(&name.id.as_str()))
}

/// The statements of `body` (nested blocks included) that bind `name`: assignments, augmented
/// and annotated assignments, `for` targets, `with ... as`, imports, `del`, nested `def`/`class`.
pub(crate) fn binders_of<'b>(body: &'b [Stmt], name: &str) -> Vec<&'b Stmt> {
    let mut binders = Binders {
        name,
        found: Vec::new(),
        current: None,
    };
    binders.visit_body(body);
    binders.found
}

#[derive(Default)]
struct Reads<'a> {
    names: Vec<&'a ExprName>,
    /// Collect names assigned and deleted as well as those read.
    stores_too: bool,
}

impl<'a> Visitor<'a> for Reads<'a> {
    fn visit_expr(&mut self, expr: &'a Expr) {
        if let Expr::Name(name) = expr
            && (self.stores_too || name.ctx == ExprContext::Load)
        {
            self.names.push(name);
        }
        visitor::walk_expr(self, expr);
    }
}

struct Binders<'a, 'n> {
    name: &'n str,
    found: Vec<&'a Stmt>,
    current: Option<&'a Stmt>,
}

impl Binders<'_, '_> {
    /// Whether assigning to `target` binds the name.
    fn stores(&self, target: &Expr) -> bool {
        match target {
            Expr::Name(name) => name.id.as_str() == self.name,
            Expr::Tuple(tuple) => tuple.elts.iter().any(|elt| self.stores(elt)),
            Expr::List(list) => list.elts.iter().any(|elt| self.stores(elt)),
            Expr::Starred(starred) => self.stores(&starred.value),
            _ => false,
        }
    }
}

impl<'a> Visitor<'a> for Binders<'a, '_> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        let binds = match stmt {
            Stmt::Assign(assign) => assign.targets.iter().any(|target| self.stores(target)),
            Stmt::AugAssign(assign) => self.stores(&assign.target),
            Stmt::AnnAssign(assign) => self.stores(&assign.target),
            Stmt::For(for_stmt) => self.stores(&for_stmt.target),
            Stmt::With(with) => with
                .items
                .iter()
                .any(|item| item.optional_vars.as_deref().is_some_and(|vars| self.stores(vars))),
            Stmt::Delete(delete) => delete.targets.iter().any(|target| self.stores(target)),
            Stmt::FunctionDef(def) => def.name.as_str() == self.name,
            Stmt::ClassDef(class) => class.name.as_str() == self.name,
            Stmt::Import(import) => import.names.iter().any(|alias| match &alias.asname {
                Some(asname) => asname.as_str() == self.name,
                None => alias.name.as_str().split('.').next() == Some(self.name),
            }),
            Stmt::ImportFrom(import) => import
                .names
                .iter()
                .any(|alias| alias.asname.as_ref().unwrap_or(&alias.name).as_str() == self.name),
            _ => false,
        };
        if binds {
            self.found.push(stmt);
        }
        let outer = self.current.replace(stmt);
        visitor::walk_stmt(self, stmt);
        self.current = outer;
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        // `(n := ...)` binds in the statement that holds it.
        if let Expr::Named(named) = expr
            && self.stores(&named.target)
            && let Some(current) = self.current
            && !self.found.last().is_some_and(|last| std::ptr::eq(*last, current))
        {
            self.found.push(current);
        }
        visitor::walk_expr(self, expr);
    }
}

/// How a method body uses `receiver.attr` (`self.criterion`): the statements that assign it,
/// and how many times it is read.
pub(crate) fn attribute_uses<'b>(body: &'b [Stmt], receiver: &str, attr: &str) -> (Vec<&'b Stmt>, usize) {
    let mut uses = AttributeUses {
        receiver,
        attr,
        assigned: Vec::new(),
        reads: 0,
        current: None,
    };
    uses.visit_body(body);
    (uses.assigned, uses.reads)
}

struct AttributeUses<'a, 'n> {
    receiver: &'n str,
    attr: &'n str,
    assigned: Vec<&'a Stmt>,
    reads: usize,
    current: Option<&'a Stmt>,
}

impl<'a> Visitor<'a> for AttributeUses<'a, '_> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        let outer = self.current.replace(stmt);
        visitor::walk_stmt(self, stmt);
        self.current = outer;
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        if let Expr::Attribute(attribute) = expr
            && attribute.attr.as_str() == self.attr
            && matches!(&*attribute.value, Expr::Name(name) if name.id.as_str() == self.receiver)
        {
            match attribute.ctx {
                ExprContext::Load => self.reads += 1,
                _ => {
                    if let Some(current) = self.current
                        && !self.assigned.last().is_some_and(|last| std::ptr::eq(*last, current))
                    {
                        self.assigned.push(current);
                    }
                }
            }
        }
        visitor::walk_expr(self, expr);
    }
}
