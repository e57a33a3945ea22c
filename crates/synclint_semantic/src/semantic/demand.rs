//! What the rules asked about values a file could not tell, by the question asked. The project
//! learns more later (what hot callers pass a function, what the project functions it calls
//! return); a file is checked again only where that would answer one of its questions
//! differently. Most facts answer none: a float tensor passed as `x[i]`'s index is no mask, and
//! a tensor passed where a rule asked whether a call is a loss module is no module.
//!
//! It may import the kinds and the facts; not the summary (which holds its [`Demand`]s) nor the
//! model (which notes them).

use super::facts::{Given, ProjectKind, ProjectReturns, merged_with_callers};
use super::kinds::{Device, Kind};

/// What a rule asks about a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, bincode::Encode, bincode::Decode)]
pub enum Question {
    /// What it is: a tensor (on which device, of which dtype) or an instance; also what a
    /// value passed on to a project function or returned depends on, since the function that
    /// receives it may ask anything.
    Kind,
    /// Whether it is a boolean tensor, a mask (as an index).
    Mask,
    /// Whether it is on the host: the rule counts an unknown value as maybe on a GPU already,
    /// or fires on CPU tensors only, or a finding rests on a guess that it is a GPU tensor.
    Host,
    /// Whether it is a tensor (or tensors) that may be on a GPU, for a rule that counts an
    /// unknown value as none (`if flag:`, `float(x)`): a number or a CPU tensor passed
    /// answers it as the file did.
    GpuTensor,
    /// Which device it names, where a value is moved to it (`x.to(device)`): the CPU, another
    /// device, a tensor's device (on the CPU or not), or no device (a dtype).
    Device,
    /// Whether it is a Python number (`x[idx] = v`).
    Number,
    /// Whether it is a tensor whose size depends on its data (`len(x)` of a masked read).
    DataDependent,
    /// Which object it is: a loss module, a gradient scaler, an optimizer.
    Instance,
}

impl Question {
    const ALL: [Question; 8] = [
        Question::Kind,
        Question::Mask,
        Question::Host,
        Question::GpuTensor,
        Question::Device,
        Question::Number,
        Question::DataDependent,
        Question::Instance,
    ];

    /// Whether a parameter the file sees as `kind` (a tensor, by its annotation or default) may
    /// still answer this question differently once callers say more: a tensor of unknown dtype
    /// may be a mask, one of unknown device a CPU tensor.
    pub fn left_open_by(self, kind: Kind) -> bool {
        match (self, kind) {
            (Question::Mask, Kind::Tensor(facts)) => !facts.boolean && !facts.integer,
            // A tensor of a device the file cannot tell (`frame_indices.to(device)` of a
            // parameter): the callers may pass one made on the CPU.
            (Question::Host, Kind::Tensor(facts)) => facts.device == Device::Unknown,
            _ => false,
        }
    }

    fn bit(self) -> u8 {
        1 << self as u8
    }

    /// Whether a value of kind `after`, where the file saw `before`, answers this question
    /// differently.
    fn answered_differently(self, before: &ProjectKind, after: &ProjectKind) -> bool {
        match self {
            Question::Kind => refines(before, after),
            Question::Mask => mask_view(before.kind) != mask_view(after.kind),
            Question::Host => {
                after.kind.is_known_host_value() != before.kind.is_known_host_value()
                    || (matches!(before.kind, Kind::Tensor(_)) && !matches!(after.kind, Kind::Tensor(_)))
            }
            Question::GpuTensor => gpu_view(before.kind) != gpu_view(after.kind),
            Question::Device => device_view(before.kind) != device_view(after.kind),
            Question::Number => (before.kind == Kind::Number) != (after.kind == Kind::Number),
            Question::DataDependent => is_data_dependent(before.kind) != is_data_dependent(after.kind),
            Question::Instance => {
                (is_instance(after.kind) && after.kind != before.kind)
                    || (after.class.is_some() && after.class != before.class)
            }
        }
    }
}

/// The questions asked of one value (a set of [`Question`]s).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, bincode::Encode, bincode::Decode)]
pub struct Questions(u8);

impl Questions {
    pub fn of(question: Question) -> Questions {
        Questions(question.bit())
    }

    pub fn insert(&mut self, question: Question) {
        self.0 |= question.bit();
    }

    pub fn union(self, other: Questions) -> Questions {
        Questions(self.0 | other.0)
    }

    pub fn without(self, question: Question) -> Questions {
        Questions(self.0 & !question.bit())
    }

    pub fn contains(self, question: Question) -> bool {
        self.0 & question.bit() != 0
    }

    fn iter(self) -> impl Iterator<Item = Question> {
        Question::ALL.into_iter().filter(move |q| self.contains(*q))
    }

    /// [`Questions::answered_by`] of what a call returns, or of an element of the tuple it
    /// returns (which unpacking binds).
    pub fn answered_by_returns(self, returns: &ProjectReturns) -> bool {
        let answered_by_an_arm = || {
            let arms = returns.by_type.iter().flat_map(|by_type| by_type.arms.iter());
            arms.into_iter()
                .any(|&(_, kind)| self.answered_by(&ProjectKind { kind, class: None }))
        };
        self.answered_by(&returns.kind) || self.answered_by_elements(returns) || answered_by_an_arm()
    }

    /// Whether what a call returns answers a question, and differently from what the file made
    /// of its result (`seen`), or answers one of an element of the tuple it returns.
    pub fn answered_differently_by_returns(self, seen: &ProjectKind, returns: &ProjectReturns) -> bool {
        self.iter().any(|question| {
            Questions::of(question).answered_by(&returns.kind) && question.answered_differently(seen, &returns.kind)
        }) || self.answered_by_elements(returns)
    }

    fn answered_by_elements(self, returns: &ProjectReturns) -> bool {
        let answers = |kind| self.answered_by(&ProjectKind { kind, class: None });
        returns
            .tuple
            .iter()
            .flatten()
            .any(|element| element.any_value(&answers))
    }

    /// Whether a project function's return of kind `returned` answers one of these questions
    /// about its call, of which the file alone knows nothing. What it is (`Kind`) is asked of
    /// the tensors rules look at; an instance is told only where a rule asked which object it
    /// is (a class made by a factory function otherwise costs a second check for nothing).
    pub fn answered_by(self, returned: &ProjectKind) -> bool {
        self.iter().any(|question| match question {
            Question::Kind => matches!(returned.kind, Kind::Tensor(_) | Kind::TensorSequence(_)),
            Question::Mask => returned.kind.tensor().is_some_and(|facts| facts.boolean),
            Question::Host => returned.kind.is_known_host_value(),
            Question::GpuTensor => gpu_view(returned.kind) != (false, false),
            Question::Device => device_view(returned.kind) != device_view(Kind::Unknown),
            Question::Number => returned.kind == Kind::Number,
            Question::DataDependent => is_data_dependent(returned.kind),
            Question::Instance => is_instance(returned.kind),
        })
    }
}

/// The questions asked of each parameter of a function (bit `i` for slot `i`; the last bit for
/// every slot past 62), where the file could not answer them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, bincode::Encode, bincode::Decode)]
pub struct Demand {
    kind: u64,
    mask: u64,
    host: u64,
    gpu_tensor: u64,
    device: u64,
    number: u64,
    data_dependent: u64,
    instance: u64,
    /// The parameters tested for `None` or truth in an arm whose hotness hangs on what the
    /// callers give them.
    pub given: GivenAsked,
}

/// The parameters (slot bits) whose hot callers' arguments would make an arm dead: where every
/// caller gives a value (`if mask is None:`, the `else` of `if scale_rope:`), where every one
/// passes the value a function returns early (`if cached is not None: return cached`), or where
/// none does (`if guidance is not None:`, `if use_conv:`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, bincode::Encode, bincode::Decode)]
pub struct GivenAsked {
    pub always: u64,
    pub supplied: u64,
    pub never: u64,
}

impl GivenAsked {
    pub fn note(&mut self, dies_if: Given, slot: usize) {
        let bits = match dies_if {
            Given::Passed => &mut self.supplied,
            given if given.is_value() => &mut self.always,
            given if given.is_false() => &mut self.never,
            _ => return,
        };
        *bits |= slot_bit(slot);
    }

    pub fn union(self, other: GivenAsked) -> GivenAsked {
        GivenAsked {
            always: self.always | other.always,
            supplied: self.supplied | other.supplied,
            never: self.never | other.never,
        }
    }

    pub fn is_empty(self) -> bool {
        self.always == 0 && self.supplied == 0 && self.never == 0
    }

    /// Whether `given` for parameter `slot` answers what was asked: it makes an arm dead.
    pub fn answered_by(self, slot: usize, given: Given) -> bool {
        let asked = if given.is_value() {
            self.always | self.supplied
        } else if given == Given::Passed {
            self.supplied
        } else if given.is_false() {
            self.never
        } else {
            0
        };
        asked & slot_bit(slot) != 0
    }
}

impl Demand {
    /// The parameters asked `question` (bits as in [`Demand`]).
    pub fn asked(&self, question: Question) -> u64 {
        match question {
            Question::Kind => self.kind,
            Question::Mask => self.mask,
            Question::Host => self.host,
            Question::GpuTensor => self.gpu_tensor,
            Question::Device => self.device,
            Question::Number => self.number,
            Question::DataDependent => self.data_dependent,
            Question::Instance => self.instance,
        }
    }

    /// Notes `question` of every slot in `slots` (bits as in [`Demand`]).
    pub fn note_slots(&mut self, question: Question, slots: u64) {
        let bits = match question {
            Question::Kind => &mut self.kind,
            Question::Mask => &mut self.mask,
            Question::Host => &mut self.host,
            Question::GpuTensor => &mut self.gpu_tensor,
            Question::Device => &mut self.device,
            Question::Number => &mut self.number,
            Question::DataDependent => &mut self.data_dependent,
            Question::Instance => &mut self.instance,
        };
        *bits |= slots;
    }

    pub fn note(&mut self, question: Question, slot: usize) {
        self.note_slots(question, slot_bit(slot));
    }

    /// The questions asked of parameter `slot`.
    pub fn of(&self, slot: usize) -> Questions {
        let bit = slot_bit(slot);
        let mut questions = Questions::default();
        for question in Question::ALL {
            if self.asked(question) & bit != 0 {
                questions.insert(question);
            }
        }
        questions
    }

    /// Whether any question was asked of parameter `slot`.
    pub fn asks(&self, slot: usize) -> bool {
        self.of(slot) != Questions::default()
    }
}

/// Whether what hot callers pass (`from_callers`) answers one of `questions` about a parameter
/// differently from the kind the file gave it (`kind`, from its annotation where `annotated`).
/// The summary asks this of a parameter's summary
/// ([`Demand::answered_by_callers`](super::Demand::answered_by_callers)).
pub(super) fn answered_by_callers(
    questions: Questions,
    kind: &ProjectKind,
    annotated: bool,
    from_callers: &ProjectKind,
) -> bool {
    if questions == Questions::default() {
        return false;
    }
    let after = merged_with_callers(kind, annotated, from_callers);
    questions
        .iter()
        .any(|question| question.answered_differently(kind, &after))
}

/// The bit of parameter slot `slot` in a [`Demand`].
pub fn slot_bit(slot: usize) -> u64 {
    1 << slot.min(63)
}

/// What a rule sees of a value asked whether it is a mask: a boolean tensor, or a value that
/// may be one (unknown, or a tensor of unknown dtype: a parameter named as a mask counts).
fn mask_view(kind: Kind) -> (bool, bool) {
    match kind {
        Kind::Tensor(facts) => (facts.boolean, !facts.integer),
        other => (false, other.is_opaque()),
    }
}

/// What a rule sees of a value asked whether it is a GPU tensor: (a tensor that may be on a
/// GPU, tensors that may be).
fn gpu_view(kind: Kind) -> (bool, bool) {
    match kind {
        Kind::Tensor(facts) => (facts.may_be_cuda(), false),
        Kind::TensorSequence(facts) => (false, facts.may_be_cuda()),
        _ => (false, false),
    }
}

/// What a rule moving a value to `kind` sees of it: whether it names the CPU (a CPU tensor,
/// the CPU device), and whether it is no device at all (a dtype, `None`). Anything else may
/// name a device, as an unknown value or a device index may.
fn device_view(kind: Kind) -> (bool, bool) {
    match kind {
        Kind::Device(device) => (device == Device::Cpu, false),
        Kind::Tensor(facts) => (facts.device == Device::Cpu, false),
        Kind::Dtype | Kind::NoneValue => (false, true),
        _ => (false, false),
    }
}

/// A tensor whose size depends on its data.
fn is_data_dependent(kind: Kind) -> bool {
    kind.tensor().is_some_and(|facts| facts.data_dependent)
}

/// An object a rule may ask about by what it is (not a value).
fn is_instance(kind: Kind) -> bool {
    matches!(
        kind,
        Kind::Module(..)
            | Kind::Object(_)
            | Kind::Optimizer(_)
            | Kind::GradScaler
            | Kind::Distribution { .. }
            | Kind::CudaSyncObject
            | Kind::DataLoader { .. }
    )
}

/// Whether `after` tells more than `before` in a way a rule or the call graph sees: an unknown
/// becomes a tensor or an instance of a project class; a tensor becomes a mask, an index or a
/// CPU tensor (or stops being one); a tensor guessed from a name turns out not to be one.
fn refines(before: &ProjectKind, after: &ProjectKind) -> bool {
    match (before.kind, after.kind) {
        (a, b) if a == b => after.class != before.class && after.class.is_some(),
        (Kind::Tensor(a), Kind::Tensor(b)) => {
            a.boolean != b.boolean || a.integer != b.integer || (a.device == Device::Cpu) != (b.device == Device::Cpu)
        }
        (Kind::Tensor(_), _) => true,
        (_, merged) => matches!(merged, Kind::Tensor(_) | Kind::TensorSequence(_)) || after.class.is_some(),
    }
}

/// What a value passed on depends on (an argument to a project function, a `return` value),
/// where the file cannot tell what it is: its function's parameters and the project functions
/// whose results it is made from. Facts about them are worth a second check only where the
/// function that receives the value asks about it, which only the project pass knows.
#[derive(Debug, Clone, Default, PartialEq, Eq, bincode::Encode, bincode::Decode)]
pub struct Dependence {
    /// Bits as in [`Demand`].
    pub parameters: u64,
    /// By the qualified name the file spells (`.masks.valid_mask`).
    pub calls: Box<[Box<str>]>,
    /// Call sites of project functions (methods, the file's own functions), by index.
    pub sites: Box<[u32]>,
}

impl Dependence {
    /// The slots of its parameters.
    pub fn slots(&self) -> impl Iterator<Item = usize> + '_ {
        (0..64).filter(move |slot| self.parameters & (1 << slot) != 0)
    }

    /// Both: what either depends on.
    pub fn union(&self, other: &Dependence) -> Dependence {
        let mut calls = self.calls.to_vec();
        calls.extend(other.calls.iter().filter(|call| !self.calls.contains(call)).cloned());
        let mut sites = self.sites.to_vec();
        sites.extend(other.sites.iter().filter(|site| !self.sites.contains(site)));
        Dependence {
            parameters: self.parameters | other.parameters,
            calls: calls.into_boxed_slice(),
            sites: sites.into_boxed_slice(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_argument_handed_over_answers_only_an_early_return() {
        // `if cached is not None: return cached` asks slot 0; `if mask is None:` slot 1.
        let mut asked = GivenAsked::default();
        asked.note(Given::Passed, 0);
        asked.note(Given::Always, 1);
        assert!(asked.answered_by(0, Given::Passed));
        assert!(asked.answered_by(0, Given::Always));
        assert!(!asked.answered_by(1, Given::Passed));
        assert!(asked.answered_by(1, Given::Truthy));
        assert!(!asked.answered_by(0, Given::Sometimes));
        // Joined over callers: a value and a handed-over argument are handed over; leaving it
        // out anywhere is not.
        assert_eq!(Given::Always.join(Given::Passed), Given::Passed);
        assert_eq!(Given::Passed.join(Given::Never), Given::Sometimes);
        assert!(Given::Passed.kills(Given::Passed));
        assert!(!Given::Passed.kills(Given::Always));
        assert!(Given::Truthy.kills(Given::Passed));
    }
}
