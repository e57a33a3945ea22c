//! The frame of the function being analysed: what its `return`s and `yield`s give, gathered as
//! the walk goes. A function analysed on demand is analysed in the middle of another's walk, so
//! the whole frame is saved when it starts and restored when it ends, as one value.

use crate::semantic::facts::TypeSet;
use crate::semantic::{Dependence, Kind, Returned};

/// What the walk has learnt about the function being analysed so far.
#[derive(Default)]
pub(super) struct FunctionFrame {
    /// The join of the `return` kinds.
    returns: Option<Kind>,
    /// What the `return` values depend on, where the file cannot tell what they are.
    return_depends: Option<Dependence>,
    /// What the `return`s give as a tuple: nothing yet, the joined elements, or something else
    /// (`Err(())`: a return that is not a tuple literal of that length).
    returns_tuple: Option<Result<Returned, ()>>,
    /// The `isinstance` tests of the function's own parameters (as given) around the line being
    /// visited, innermost last: (slot, the types the arm takes).
    type_arms: Vec<(u16, TypeSet)>,
    /// Per `return`: the innermost such test around it, and what it returns.
    returns_by_arm: Vec<(Option<(u16, TypeSet)>, Kind)>,
    /// Whether the function yields (a generator returns an iterator).
    yields: bool,
}

impl FunctionFrame {
    /// A `return` whose value depends on `depends`.
    pub(super) fn join_return_depends(&mut self, depends: Dependence) {
        self.return_depends = Some(match self.return_depends.take() {
            Some(before) => before.union(&depends),
            None => depends,
        });
    }

    /// A `return` of `kind`.
    pub(super) fn join_return(&mut self, kind: Kind) {
        self.returns = Some(self.returns.map_or(kind, |k| k.join(kind)));
    }

    /// A `return` of `kind` (as other files can read it) inside the innermost type test.
    pub(super) fn note_return_in_arm(&mut self, kind: Kind) {
        self.returns_by_arm.push((self.type_arms.last().copied(), kind));
    }

    /// A `return` of a tuple (`Ok`) or of something else (`Err`).
    pub(super) fn join_returned_tuple(&mut self, returned: Result<Returned, ()>) {
        self.returns_tuple = Some(match (self.returns_tuple.take(), returned) {
            (None, returned) => returned,
            (Some(Ok(a)), Ok(b)) if matches!((&a, &b), (Returned::Tuple(x), Returned::Tuple(y)) if x.len() == y.len()) => {
                Ok(a.join(&b))
            }
            _ => Err(()),
        });
    }

    /// Entering an arm where one of the function's parameters has the types `arm` (its slot,
    /// its types), if any.
    pub(super) fn enter_type_arm(&mut self, arm: Option<(u16, TypeSet)>) {
        self.type_arms.extend(arm);
    }

    /// Leaving the arm [`FunctionFrame::enter_type_arm`] entered.
    pub(super) fn leave_type_arm(&mut self, arm: Option<(u16, TypeSet)>) {
        if arm.is_some() {
            self.type_arms.pop();
        }
    }

    pub(super) fn note_yield(&mut self) {
        self.yields = true;
    }

    pub(super) fn yields(&self) -> bool {
        self.yields
    }

    /// The join of the `return` kinds, `None` where nothing returns a value.
    pub(super) fn returns(&self) -> Option<Kind> {
        self.returns
    }

    /// The elements of the tuple every `return` gives, where each gives one of that length.
    pub(super) fn take_returned_tuple(&mut self) -> Option<Box<[Returned]>> {
        match self.returns_tuple.take() {
            Some(Ok(Returned::Tuple(elements))) if !self.yields => Some(elements),
            _ => None,
        }
    }

    pub(super) fn take_returns_by_arm(&mut self) -> Vec<(Option<(u16, TypeSet)>, Kind)> {
        std::mem::take(&mut self.returns_by_arm)
    }

    pub(super) fn take_return_depends(&mut self) -> Option<Dependence> {
        self.return_depends.take()
    }
}
