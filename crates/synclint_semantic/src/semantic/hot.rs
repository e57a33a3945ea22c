//! Where a line runs: every step (hot), once (cold), or every N steps (periodic). It imports
//! only the ids.

use super::ids::FunctionId;

/// Why a function runs every step, without looking at its callers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, bincode::Encode, bincode::Decode)]
pub enum IntrinsicHot {
    /// `forward` of an `nn.Module` (or any class with bases).
    Forward,
    /// A Lightning step hook (`training_step`, `on_train_batch_end`, ...).
    LightningHook,
    /// Named `step`, `*_step` or `train_one_epoch`.
    StepName,
    /// A loss function or a method of a loss class.
    Loss,
    /// Decorated with `torch.compile` / `torch.jit.script`.
    Compiled,
    /// Listed in the `hot-functions` setting.
    Configured,
    /// `forward` or `backward` of a `torch.autograd.Function`: `Fn.apply(...)` runs the one in
    /// the forward pass, the backward pass the other.
    AutogradFunction,
    /// `update` of a torchmetrics metric: called on every batch (by the loop, or by the
    /// metric's `forward`).
    MetricUpdate,
}

impl IntrinsicHot {
    pub fn describe(self) -> &'static str {
        match self {
            IntrinsicHot::Forward => "`forward` runs on every step",
            IntrinsicHot::LightningHook => "Lightning calls this hook on every batch",
            IntrinsicHot::StepName => "a step function runs on every step",
            IntrinsicHot::Loss => "a loss runs on every step",
            IntrinsicHot::Compiled => "a compiled function runs on every step",
            IntrinsicHot::Configured => "listed in `hot-functions`",
            IntrinsicHot::AutogradFunction => "an autograd Function's `forward` and `backward` run on every step",
            IntrinsicHot::MetricUpdate => "a torchmetrics metric's `update` runs on every batch",
        }
    }
}

/// Why a line is hot, as far as its own file shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, bincode::Encode, bincode::Decode)]
pub enum HotReason {
    /// Inside the body of the loop that starts on this (1-based) line.
    Loop { line: u32 },
    /// Inside a function that is hot by itself.
    Function { function: FunctionId, why: IntrinsicHot },
}

/// The context of a finding, before the project-wide call graph is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, bincode::Encode, bincode::Decode)]
pub enum HotContext {
    Hot(HotReason),
    /// Inside this function, outside any loop: hot only if the function is called from a hot
    /// line (in this file or another).
    InFunction(FunctionId),
    /// Under a periodic guard (`if step % N == 0:`, guard on this line) in otherwise hot code.
    Periodic {
        guard_line: u32,
        inner: PeriodicInner,
    },
    /// Runs once: module level, setup, `except` handlers, and the lines outside the loops of a
    /// function that loops over a data loader (before and after its epoch).
    Cold,
    /// Not about code that runs: a finding on a comment (an unused `# noqa`, SYNC900), reported
    /// wherever it is. No line of code has this context.
    Anywhere,
}

impl HotContext {
    /// The function whose hot callers decide whether a line in this context runs hot.
    pub fn called_in(self) -> Option<FunctionId> {
        match self {
            HotContext::InFunction(function)
            | HotContext::Periodic {
                inner: PeriodicInner::InFunction(function),
                ..
            } => Some(function),
            _ => None,
        }
    }
}

/// What a periodic guard sits in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, bincode::Encode, bincode::Decode)]
pub enum PeriodicInner {
    Hot(HotReason),
    InFunction(FunctionId),
}
