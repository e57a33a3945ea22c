//! Scopes and bindings: what a name refers to at this point of the flow. The arms of a
//! conditional are visited one after another, each from the state before the statement: each
//! arm's log ([`ArmLog`]) keeps what it changed, and after the statement each name an arm
//! changed holds the join of what the paths that reach the next line left in it
//! ([`join_bindings`]), with where each came from kept for what the value depends on.
//!
//! It may import the ids, the kinds and the model (its parent): of kind inference only
//! [`invalidate_kinds`](SemanticModel::invalidate_kinds), since a binding changed makes the
//! kinds inferred so far stale, and of the class references the join of instances.

use ruff_python_ast::Expr;
use ruff_python_ast::name::Name;
use rustc_hash::FxHashMap;

use super::SemanticModel;
use super::class_refs::join_instances;
use crate::semantic::ids::{ClassId, FunctionId, ScopeId};
use crate::semantic::kinds::Kind;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScopeKind {
    Module,
    Class(ClassId),
    Function(FunctionId),
    Lambda,
    Comprehension,
}

#[derive(Debug)]
pub(super) struct Scope<'a> {
    pub(super) kind: ScopeKind,
    pub(super) parent: Option<ScopeId>,
    pub(super) bindings: FxHashMap<Name, Binding<'a>>,
    /// Names declared `global` in this scope: assignments go to the module scope.
    pub(super) globals: Vec<Name>,
}

/// Where a binding comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BindingSource {
    /// `import torch.nn.functional as F` binds `F` to `torch.nn.functional`; relative imports
    /// keep their leading dots (`.losses.masked_mean`).
    Import(Box<str>),
    Function(FunctionId),
    Class(ClassId),
    Value,
    /// The function's parameter in this slot (after `self`), as the call bound it.
    Parameter(u16),
    /// Bindings of several arms of a conditional joined (`if x is None: x = make()`), or an
    /// element unpacked from a call's result: where each came from, entry `i` of
    /// [`SemanticModel::joined`].
    Joined(u32),
}

/// Where one of the joined bindings came from, for what a value depends on.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Origin<'a> {
    Parameter(u16),
    Value(&'a Expr),
}

/// The most origins a joined binding keeps.
const MAX_ORIGINS: usize = 8;

impl Origin<'_> {
    fn same(&self, other: &Origin) -> bool {
        match (self, other) {
            (Origin::Parameter(a), Origin::Parameter(b)) => a == b,
            (Origin::Value(a), Origin::Value(b)) => std::ptr::eq(*a, *b),
            _ => false,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Binding<'a> {
    pub kind: Kind,
    pub source: BindingSource,
    /// The expression last assigned (`mask = target != -100`), for rules that look at how a
    /// value was made.
    pub value: Option<&'a Expr>,
}

/// What one arm of a conditional (`if` body, `elif`, `else`, `except`) did to the bindings.
pub struct ArmOutcome<'a> {
    /// (scope, name, binding at the arm's end) for each name the arm changed; the binding
    /// before the arm is back in its scope.
    changes: Vec<(ScopeId, Name, Option<Binding<'a>>)>,
    /// The arm can reach the code after the statement (it does not end in `return`, `raise`,
    /// `continue` or `break`), on a CUDA step.
    pub falls_through: bool,
}

impl ArmOutcome<'_> {
    /// The arm bound or rebound a name.
    pub fn binds_anything(&self) -> bool {
        !self.changes.is_empty()
    }

    /// The arm bound or rebound `name`.
    pub fn binds(&self, name: &str) -> bool {
        self.changes.iter().any(|(_, changed, _)| changed.as_str() == name)
    }
}

impl<'a> SemanticModel<'a> {
    pub fn push_scope(&mut self, kind: ScopeKind, parent: ScopeId) -> ScopeId {
        let id = self.scopes.len() as ScopeId;
        // A function binds its parameters and a few locals: start at a size that holds them
        // without growing the table three times.
        let capacity = if matches!(kind, ScopeKind::Function(_)) { 8 } else { 0 };
        self.scopes.push(Scope {
            kind,
            parent: Some(parent),
            bindings: FxHashMap::with_capacity_and_hasher(capacity, Default::default()),
            globals: Vec::new(),
        });
        id
    }

    pub fn scope_kind(&self) -> ScopeKind {
        self.scopes[self.flow.scope as usize].kind
    }

    /// Whether the current scope binds `name` itself (an assignment in this function, or at
    /// module level where the walk is there), rather than reading it from an enclosing scope.
    pub fn binds_here(&self, name: &str) -> bool {
        self.scopes[self.flow.scope as usize].bindings.contains_key(name)
    }

    pub fn declare_global(&mut self, name: Name) {
        self.scopes[self.flow.scope as usize].globals.push(name);
    }

    /// Binds `name` in the current scope (the module's for a `global` name).
    pub fn bind(&mut self, name: &Name, binding: Binding<'a>) {
        let scope = if self.scopes[self.flow.scope as usize].globals.contains(name) {
            0
        } else {
            self.flow.scope
        };
        self.bind_in(scope, name, Some(binding));
    }

    /// Sets (or, with `None`, removes) a binding, remembering its old value in the arm being
    /// visited.
    fn bind_in(&mut self, scope: ScopeId, name: &Name, binding: Option<Binding<'a>>) {
        self.invalidate_kinds();
        let bindings = &mut self.scopes[scope as usize].bindings;
        let before = match binding {
            Some(binding) => bindings.insert(name.clone(), binding),
            None => bindings.remove(name),
        };
        if let Some(log) = self.branch_logs.last_mut() {
            log.record(scope, name, before);
        }
    }

    pub fn begin_arm(&mut self) {
        self.branch_logs.push(ArmLog::default());
    }

    /// Ends an arm: restores the bindings it changed, so the next arm starts from the same
    /// state, and returns what it changed.
    pub fn end_arm(&mut self, falls_through: bool) -> ArmOutcome<'a> {
        let log = self.branch_logs.pop().unwrap_or_default();
        if !log.befores.is_empty() {
            self.invalidate_kinds();
        }
        let mut changes = Vec::with_capacity(log.befores.len());
        for ((scope, name), before) in log.changed.keys.into_iter().zip(log.befores) {
            let bindings = &mut self.scopes[scope as usize].bindings;
            let after = match before {
                Some(before) => bindings.insert(name.clone(), before),
                None => bindings.remove(&name),
            };
            changes.push((scope, name, after));
        }
        ArmOutcome { changes, falls_through }
    }

    /// After a conditional: each name an arm changed holds the join of what every path that
    /// reaches the next line leaves in it (the state before, when no arm is taken and the arms
    /// are not exhaustive).
    pub fn merge_arms(&mut self, arms: Vec<ArmOutcome<'a>>, exhaustive: bool) {
        if exhaustive && !arms.iter().any(|arm| arm.falls_through) {
            // No path reaches the next line; keep the old state.
            return;
        }
        // Each changed name once, in the order the arms changed them, with each arm's binding
        // at its end (`afters[key * arms + arm]`, `None` where that arm left the name alone).
        let mut changed: OrderedKeys<(ScopeId, &Name)> = OrderedKeys::default();
        let mut afters: Vec<Option<&Option<Binding<'a>>>> = Vec::new();
        for (position, arm) in arms.iter().enumerate() {
            for (scope, name, after) in &arm.changes {
                let (key, new) = changed.insert((*scope, name));
                if new {
                    afters.resize(changed.keys.len() * arms.len(), None);
                }
                afters[key * arms.len() + position] = Some(after);
            }
        }
        for (key, (scope, name)) in changed.keys.into_iter().enumerate() {
            // The arms ended with the state before them restored.
            let before = self.scopes[scope as usize].bindings.get(name);
            let reached = arms
                .iter()
                .zip(&afters[key * arms.len()..][..arms.len()])
                .filter(|(arm, _)| arm.falls_through)
                .map(|(_, after)| after.map_or(before, Option::as_ref))
                .chain((!exhaustive).then_some(before));
            let (class_refs, classes) = (&self.class_refs, &self.classes);
            let join = |a: Kind, b: Kind| join_instances(class_refs, classes, a, b);
            let merged = join_bindings(reached.flatten(), &mut self.joined, join);
            self.bind_in(scope, name, merged);
        }
    }

    /// Binds a name to an element unpacked from `whole` (`a, b = f(x)`, `b, n = x[:2]`): what
    /// it is depends on it.
    pub fn bind_unpacked(&mut self, name: &Name, kind: Kind, whole: &'a Expr) {
        self.joined.push(Box::new([Origin::Value(whole)]));
        let source = BindingSource::Joined(self.joined.len() as u32 - 1);
        self.bind(
            name,
            Binding {
                kind,
                source,
                value: None,
            },
        );
    }

    /// Binds a name to one of several values, each known (`for fn in [relu, gelu]`, an item
    /// of a literal container a loop takes); its kind is `kind`, what it depends on is each.
    pub fn bind_one_of(&mut self, name: &Name, kind: Kind, values: &[&'a Expr]) {
        self.joined.push(values.iter().map(|value| Origin::Value(value)).collect());
        let source = BindingSource::Joined(self.joined.len() as u32 - 1);
        self.bind(
            name,
            Binding {
                kind,
                source,
                value: None,
            },
        );
    }

    /// The values a binding joined from several may be: those of
    /// [`BindingSource::Joined`]`(index)` that are expressions (not a parameter).
    pub fn joined_values(&self, index: u32) -> impl Iterator<Item = &'a Expr> + '_ {
        self.joined
            .get(index as usize)
            .into_iter()
            .flatten()
            .filter_map(|origin| match *origin {
                Origin::Value(value) => Some(value),
                Origin::Parameter(_) => None,
            })
    }

    pub fn bind_value(&mut self, name: &Name, kind: Kind, value: Option<&'a Expr>) {
        self.bind(
            name,
            Binding {
                kind,
                source: BindingSource::Value,
                value,
            },
        );
    }

    /// Python's lookup: the current scope, enclosing function scopes (class scopes only when
    /// they are the current one), the module.
    pub fn lookup(&self, name: &str) -> Option<&Binding<'a>> {
        let mut id = Some(self.flow.scope);
        let mut first = true;
        while let Some(scope_id) = id {
            let scope = &self.scopes[scope_id as usize];
            if (first || !matches!(scope.kind, ScopeKind::Class(_)))
                && let Some(binding) = scope.bindings.get(name)
            {
                return Some(binding);
            }
            first = false;
            id = scope.parent;
        }
        None
    }

    /// The function whose own scope holds the binding [`Self::lookup`] finds (`None` for the
    /// module's, a class body's): a closure reads its enclosing function's parameters.
    pub fn binding_function(&self, name: &str) -> Option<FunctionId> {
        let mut id = Some(self.flow.scope);
        let mut first = true;
        while let Some(scope_id) = id {
            let scope = &self.scopes[scope_id as usize];
            if (first || !matches!(scope.kind, ScopeKind::Class(_))) && scope.bindings.contains_key(name) {
                return match scope.kind {
                    ScopeKind::Function(function) => Some(function),
                    _ => None,
                };
            }
            first = false;
            id = scope.parent;
        }
        None
    }

    /// Is `name` unbound here (so a builtin like `max` or `print` is meant)?
    pub fn is_builtin(&self, name: &str) -> bool {
        self.lookup(name).is_none()
    }
}

/// The binding a name holds after paths that left different bindings: kinds joined, the
/// defining expression kept only when every path has the same one.
fn join_bindings<'a, 'b>(
    bindings: impl Iterator<Item = &'b Binding<'a>>,
    joined: &mut Vec<Box<[Origin<'a>]>>,
    join: impl Fn(Kind, Kind) -> Kind,
) -> Option<Binding<'a>>
where
    'a: 'b,
{
    let bindings: Vec<&Binding<'a>> = bindings.collect();
    let (first, rest) = bindings.split_first()?;
    let mut merged = (*first).clone();
    for binding in rest {
        merged.kind = join(merged.kind, binding.kind);
        merged.value = match (merged.value, binding.value) {
            (Some(a), Some(b)) if std::ptr::eq(a, b) => Some(a),
            _ => None,
        };
        if merged.source != binding.source {
            merged.source = BindingSource::Value;
        }
    }
    // Of different values: each arm's origin is kept for what the value depends on.
    if !rest.is_empty() && merged.value.is_none() && !matches!(merged.source, BindingSource::Parameter(_)) {
        let mut origins: Vec<Origin<'a>> = Vec::new();
        let mut add = |origin: Origin<'a>| {
            // A loop joins the same arms again and again: each origin once, and a few at most
            // (beyond them what the value depends on is left untraced).
            if origins.len() < MAX_ORIGINS && !origins.iter().any(|known| known.same(&origin)) {
                origins.push(origin);
            }
        };
        for binding in &bindings {
            match (&binding.source, binding.value) {
                (BindingSource::Parameter(slot), _) => add(Origin::Parameter(*slot)),
                (BindingSource::Joined(index), _) => joined[*index as usize].iter().copied().for_each(&mut add),
                (_, Some(value)) => add(Origin::Value(value)),
                _ => {}
            }
        }
        if !origins.is_empty() && matches!(merged.source, BindingSource::Value | BindingSource::Joined(_)) {
            joined.push(origins.into_boxed_slice());
            merged.source = BindingSource::Joined(joined.len() as u32 - 1);
        }
    }
    Some(merged)
}

/// The bindings one conditional arm changed, with their value before it, so the next arm
/// starts from the same state and the arms can be joined.
#[derive(Default)]
pub struct ArmLog<'a> {
    /// (scope, name) of each binding the arm changed, in order.
    changed: OrderedKeys<(ScopeId, Name)>,
    /// The value of each before the arm, in the same order.
    befores: Vec<Option<Binding<'a>>>,
}

impl<'a> ArmLog<'a> {
    /// Remembers a binding's value before the arm, the first time the arm changes it.
    fn record(&mut self, scope: ScopeId, name: &Name, before: Option<Binding<'a>>) {
        if let (_, true) = self.changed.insert((scope, name.clone())) {
            self.befores.push(before);
        }
    }
}

/// Keys in the order they were first inserted, each once. Found by a scan while few (most arms
/// change a handful of names), through a map once many (an arm of thousands of imports would
/// otherwise take quadratic time).
struct OrderedKeys<K> {
    keys: Vec<K>,
    /// Each key's position, built once `keys` outgrows a scan.
    positions: FxHashMap<K, usize>,
}

impl<K> Default for OrderedKeys<K> {
    fn default() -> Self {
        OrderedKeys {
            keys: Vec::new(),
            positions: FxHashMap::default(),
        }
    }
}

impl<K: Eq + std::hash::Hash + Clone> OrderedKeys<K> {
    /// Up to this many keys, a scan beats hashing.
    const SCAN_LIMIT: usize = 16;

    /// The key's position, and whether it was new (then it goes last).
    fn insert(&mut self, key: K) -> (usize, bool) {
        let found = if self.keys.len() > Self::SCAN_LIMIT {
            if self.positions.is_empty() {
                let indexed = self.keys.iter().cloned().enumerate().map(|(i, key)| (key, i));
                self.positions.extend(indexed);
            }
            self.positions.get(&key).copied()
        } else {
            self.keys.iter().position(|known| *known == key)
        };
        match found {
            Some(position) => (position, false),
            None => {
                if !self.positions.is_empty() {
                    self.positions.insert(key.clone(), self.keys.len());
                }
                self.keys.push(key);
                (self.keys.len() - 1, true)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::OrderedKeys;

    #[test]
    fn ordered_keys_keep_first_positions_past_the_scan_limit() {
        let mut keys = OrderedKeys::default();
        let count = 3 * OrderedKeys::<u32>::SCAN_LIMIT;
        for key in 0..count as u32 {
            assert_eq!(keys.insert(key * 7), (key as usize, true));
        }
        // Every key again, in another order: found where it was first put, not added twice.
        for key in (0..count as u32).rev() {
            assert_eq!(keys.insert(key * 7), (key as usize, false));
        }
        assert_eq!(keys.insert(1), (count, true));
        assert_eq!(keys.keys.len(), count + 1);
    }
}
