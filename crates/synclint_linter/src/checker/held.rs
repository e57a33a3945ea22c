//! The project callables a value holds where it flows through names, conditional expressions
//! and literal containers: `TRANSFORMS = [normalize, center]` then `for t in TRANSFORMS:
//! t(x)`, `ACTIVATIONS[name](x)`, `HOOKS.get(event, noop)(trainer)`, `MODELS[kind](**args)`.
//! A container is read as its literal says (the last assignment of the name), with what the
//! module's own statements add to it (`COMMANDS["train"] = run_train`); what functions add
//! (a registry filled by a decorator) is not seen.

use ruff_python_ast::{self as ast, Expr, Operator, Stmt, UnaryOp};

use super::Checker;
use crate::parse::literal_text;
use crate::semantic::{Binding, BindingSource, Callee, ClassRef, FunctionId};

/// How many names and containers a value is followed through: a chain of aliases is short,
/// and a cycle (`a = b; b = a` across arms) must end.
const MAX_DEPTH: usize = 8;

/// The most values a loop's item is bound to one of: a larger literal is a table of data,
/// not of callables, and each value is traced where the item is.
const MAX_ITEMS: usize = 32;

impl<'a> Checker<'a> {
    /// The callables a call's function may be, where it is an item of a literal container or
    /// one of several values (a call-graph edge for each).
    pub(super) fn held_callees(&self, func: &Expr) -> Vec<Callee> {
        let mut callees = Vec::new();
        self.collect_held(func, 0, &mut callees);
        callees
    }

    /// The callables the default of `function`'s parameter in `slot` holds (`metric=accuracy`):
    /// a call of the parameter runs it where a caller passes nothing there.
    pub(super) fn default_callees(&self, function: FunctionId, slot: u16) -> Vec<Callee> {
        let info = &self.model.functions[function as usize];
        let Some(parameter) = info.params.get(usize::from(slot)) else {
            return Vec::new();
        };
        let default = info
            .def
            .parameters
            .iter_non_variadic_params()
            .find(|p| *p.parameter.name.id == *parameter.name)
            .and_then(|p| p.default.as_deref());
        default.map_or_else(Vec::new, |default| self.held_callees(default))
    }

    fn collect_held(&self, expr: &Expr, depth: usize, found: &mut Vec<Callee>) {
        if depth > MAX_DEPTH {
            return;
        }
        let mut add = |callee: Callee| {
            if !found.contains(&callee) {
                found.push(callee);
            }
        };
        if let Some(callee) = self.referenced_function(expr) {
            add(callee);
            return;
        }
        match expr {
            Expr::Name(name) => match self.model.lookup(name.id.as_str()) {
                Some(Binding {
                    source: BindingSource::Class(id),
                    ..
                }) => add(Callee::Method {
                    class: ClassRef::Local(*id),
                    method: "__init__".into(),
                    bound: true,
                }),
                Some(Binding {
                    source: BindingSource::Value,
                    value: Some(value),
                    ..
                }) => self.collect_held(value, depth + 1, found),
                Some(Binding {
                    source: BindingSource::Joined(index),
                    ..
                }) => {
                    for value in self.model.joined_values(*index) {
                        self.collect_held(value, depth + 1, found);
                    }
                }
                _ => {}
            },
            Expr::If(if_expr) => {
                self.collect_held(&if_expr.body, depth + 1, found);
                self.collect_held(&if_expr.orelse, depth + 1, found);
            }
            Expr::BoolOp(bool_op) => {
                for value in &bool_op.values {
                    self.collect_held(value, depth + 1, found);
                }
            }
            Expr::Subscript(subscript) => {
                if let Some(container) = self.container_of(&subscript.value, depth + 1) {
                    for item in container.looked_up(&subscript.slice).unwrap_or_default() {
                        self.collect_held(item, depth + 1, found);
                    }
                }
            }
            // `table.get(key, default)`: the key's value, or the default where the key is
            // absent (or not a constant).
            Expr::Call(call)
                if let Expr::Attribute(attribute) = call.func.as_ref()
                    && attribute.attr.as_str() == "get"
                    && call.arguments.keywords.is_empty()
                    && let [key, rest @ ..] = &*call.arguments.args
                    && rest.len() <= 1
                    && let Some(container) = self.container_of(&attribute.value, depth + 1)
                    && container.literal.is_dict_expr() =>
            {
                let items = container.looked_up(key);
                let default = match items.as_deref() {
                    Some([_, ..]) if is_constant_key(key) => None,
                    _ => rest.first(),
                };
                for item in items.unwrap_or_default().into_iter().chain(default) {
                    self.collect_held(item, depth + 1, found);
                }
            }
            _ => {}
        }
    }

    /// The literal list, tuple, set or dict an expression is, following names to the value
    /// last assigned to them, with what the module's own statements add to it where the name
    /// is the module's.
    fn container_of<'e>(&self, expr: &'e Expr, depth: usize) -> Option<Container<'e>>
    where
        'a: 'e,
    {
        match expr {
            Expr::List(_) | Expr::Tuple(_) | Expr::Set(_) | Expr::Dict(_) => Some(Container {
                literal: expr,
                added: Vec::new(),
            }),
            Expr::Name(name) if depth <= MAX_DEPTH => match self.model.lookup(name.id.as_str())? {
                Binding {
                    source: BindingSource::Value,
                    value: Some(value),
                    ..
                } => {
                    let mut container = self.container_of(value, depth + 1)?;
                    if self.model.binding_function(name.id.as_str()).is_none() {
                        container.added.extend(added_at_module_level(self.module_body, name.id.as_str()));
                    }
                    Some(container)
                }
                _ => None,
            },
            _ => None,
        }
    }

    /// What a loop over `iter` takes, where `iter` is a literal container (or names one) some
    /// item of which holds a callable: a list's, tuple's or set's items, a dict's values through
    /// `.values()`. Iterating a dict itself gives its keys, which hold nothing callable.
    pub(super) fn held_items(&self, iter: &'a Expr) -> Option<Vec<&'a Expr>> {
        let items = match iter {
            Expr::Call(call)
                if let Expr::Attribute(attribute) = call.func.as_ref()
                    && matches!(attribute.attr.as_str(), "values" | "items")
                    && call.arguments.is_empty() =>
            {
                let container = self.container_of(&attribute.value, 0)?;
                if !container.literal.is_dict_expr() {
                    return None;
                }
                // `for key, value in d.items()` binds the value alone from here.
                container.items()?
            }
            iter => match self.container_of(iter, 0)? {
                container if container.literal.is_dict_expr() => return None,
                container => container.items()?,
            },
        };
        (items.len() <= MAX_ITEMS && items.iter().any(|item| self.holds_callable(item))).then_some(items)
    }

    /// An item holds a callable itself, or is a tuple or list one of whose elements does
    /// (`("accuracy", accuracy)`, unpacked by the loop).
    fn holds_callable(&self, item: &Expr) -> bool {
        match item {
            Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. }) => {
                elts.iter().any(|element| !self.held_callees(element).is_empty())
            }
            item => !self.held_callees(item).is_empty(),
        }
    }
}

/// A literal container, and the items code adds to it beside the literal: `(key, item)` of
/// `d[key] = item`, `(None, item)` of `xs.append(item)`.
struct Container<'e> {
    literal: &'e Expr,
    added: Vec<(Option<&'e Expr>, &'e Expr)>,
}

impl<'e> Container<'e> {
    /// Every item: the literal's, then those added.
    fn items(&self) -> Option<Vec<&'e Expr>> {
        let mut items = items_of(self.literal)?;
        items.extend(self.added.iter().map(|(_, item)| *item));
        Some(items)
    }

    /// The items `container[key]` may be: with a constant key, those stored under it (and
    /// those added at an unknown place); else every item.
    fn looked_up(&self, key: &Expr) -> Option<Vec<&'e Expr>> {
        let mut items = looked_up(self.literal, key)?;
        let same_key = |added: Option<&Expr>| match (added, key) {
            (Some(Expr::StringLiteral(added)), Expr::StringLiteral(key)) => {
                literal_text(&added.value) == literal_text(&key.value)
            }
            (Some(_), _) => !is_constant_key(key),
            (None, _) => true,
        };
        items.extend(self.added.iter().filter(|(at, _)| same_key(*at)).map(|(_, item)| *item));
        Some(items)
    }
}

/// What the module's own statements (not its functions') add to the container `name` holds:
/// `NAME[key] = item`, `NAME.append(item)`, `NAME.insert(i, item)`, `NAME.add(item)`,
/// `NAME.setdefault(key, item)`, `NAME.extend([...])`, `NAME.update({...})`, `NAME += [...]`.
fn added_at_module_level<'e>(body: &'e [Stmt], name: &str) -> Vec<(Option<&'e Expr>, &'e Expr)> {
    let is_name = |expr: &Expr| matches!(expr, Expr::Name(target) if target.id.as_str() == name);
    let mut added = Vec::new();
    for stmt in body {
        match stmt {
            Stmt::Assign(assign) => {
                for target in &assign.targets {
                    if let Expr::Subscript(subscript) = target
                        && is_name(&subscript.value)
                    {
                        added.push((Some(subscript.slice.as_ref()), assign.value.as_ref()));
                    }
                }
            }
            Stmt::AugAssign(aug) if aug.op == Operator::Add && is_name(&aug.target) => {
                added.extend(items_of(&aug.value).unwrap_or_default().into_iter().map(|item| (None, item)));
            }
            Stmt::Expr(statement)
                if let Expr::Call(call) = statement.value.as_ref()
                    && let Expr::Attribute(method) = call.func.as_ref()
                    && is_name(&method.value)
                    && call.arguments.keywords.is_empty() =>
            {
                match (method.attr.as_str(), &*call.arguments.args) {
                    ("append" | "add", [item]) | ("insert", [_, item]) => added.push((None, item)),
                    ("setdefault", [key, item]) => added.push((Some(key), item)),
                    ("extend" | "update", [items]) => {
                        added.extend(items_of(items).unwrap_or_default().into_iter().map(|item| (None, item)));
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
    added
}

/// The items of a literal container: a list's, tuple's or set's elements (with those of
/// containers it spreads, `[*base, extra]`, where they are literals), or a dict's values.
/// None where a spread hides some.
fn items_of(literal: &Expr) -> Option<Vec<&Expr>> {
    let mut items = Vec::new();
    match literal {
        Expr::List(ast::ExprList { elts, .. })
        | Expr::Tuple(ast::ExprTuple { elts, .. })
        | Expr::Set(ast::ExprSet { elts, .. }) => {
            for element in elts {
                match element {
                    Expr::Starred(starred) => items.extend(items_of(&starred.value)?),
                    element => items.push(element),
                }
            }
        }
        Expr::Dict(dict) => {
            for item in &dict.items {
                match item.key {
                    Some(_) => items.push(&item.value),
                    None => items.extend(items_of(&item.value)?),
                }
            }
        }
        _ => return None,
    }
    Some(items)
}

/// The items `literal[key]` may be: with a constant key, the item it names (none where there
/// is none: the lookup raises); else every item. None where the literal's items are hidden.
fn looked_up<'e>(literal: &'e Expr, key: &Expr) -> Option<Vec<&'e Expr>> {
    match (literal, key) {
        (Expr::List(ast::ExprList { elts, .. }) | Expr::Tuple(ast::ExprTuple { elts, .. }), key)
            if let Some(index) = constant_index(key, elts.len())
                && !elts.iter().any(Expr::is_starred_expr) =>
        {
            Some(elts.get(index).into_iter().collect())
        }
        (Expr::Dict(dict), Expr::StringLiteral(key)) if dict.items.iter().all(|item| item.key.is_some()) => {
            let key = literal_text(&key.value);
            Some(
                dict.items
                    .iter()
                    .filter(|item| matches!(&item.key, Some(Expr::StringLiteral(k)) if literal_text(&k.value) == key))
                    .map(|item| &item.value)
                    .collect(),
            )
        }
        (literal, _) => items_of(literal),
    }
}

/// An integer index into a sequence of `len` items (`-1` counts from the end); None where it
/// is not a constant or lies outside.
fn constant_index(key: &Expr, len: usize) -> Option<usize> {
    match key {
        Expr::NumberLiteral(number) => number.value.as_int()?.as_usize(),
        Expr::UnaryOp(unary) if unary.op == UnaryOp::USub => {
            let Expr::NumberLiteral(number) = unary.operand.as_ref() else {
                return None;
            };
            len.checked_sub(number.value.as_int()?.as_usize()?)
        }
        _ => None,
    }
}

fn is_constant_key(key: &Expr) -> bool {
    matches!(key, Expr::StringLiteral(_) | Expr::NumberLiteral(_))
}
