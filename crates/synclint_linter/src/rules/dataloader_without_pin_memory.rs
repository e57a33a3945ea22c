//! SYNC402: a DataLoader whose batches are copied to the GPU on hot lines, built without
//! `pin_memory=True`: from pageable memory every copy blocks, `non_blocking=True` or not.

use ruff_python_ast::{Expr, ExprCall};
use ruff_text_size::{Ranged, TextRange};

use crate::diagnostic::Diagnostic;
use crate::registry::Rule;
use crate::semantic::{BatchSource, HotContext};

/// What the file does with its loaders, recorded by the traversal as it goes (the loaders are
/// built in setup code, cold, and their batches copied on hot lines) and judged when the file
/// is done.
#[derive(Default)]
pub struct LoaderLog {
    /// `DataLoader(...)` calls without `pin_memory=True`.
    unpinned: Vec<TextRange>,
    /// Loaders (by constructor offset) whose batches are copied to the GPU on a hot line, with
    /// the context of the first such copy.
    copied: Vec<(BatchSource, HotContext)>,
}

impl LoaderLog {
    /// A `DataLoader(...)` call: remembered unless it passes `pin_memory=True` (or a value
    /// chosen at run time).
    pub(crate) fn constructed(&mut self, call: &ExprCall) {
        let pin = call.arguments.find_keyword("pin_memory").map(|k| &k.value);
        if pin.is_none() || matches!(pin, Some(Expr::BooleanLiteral(b)) if !b.value) {
            self.unpinned.push(call.range());
        }
    }

    /// A batch from `batch` is copied to the GPU in hot `context`: the first copy of each
    /// loader's batches is kept.
    pub(crate) fn copied_to_gpu(&mut self, batch: BatchSource, context: HotContext) {
        if !self.copied.iter().any(|(source, _)| *source == batch) {
            self.copied.push((batch, context));
        }
    }

    /// Reported at each unpinned `DataLoader(...)` whose batches the file copies to the GPU on
    /// a hot line; the finding takes that copy's context, since the construction itself runs
    /// once.
    pub fn report(&self) -> impl Iterator<Item = Diagnostic> + '_ {
        self.unpinned.iter().filter_map(|range| {
            let (_, context) = self
                .copied
                .iter()
                .find(|(source, _)| *source == BatchSource::Loader(range.start()))?;
            let mut diagnostic = Diagnostic::new(
                Rule::DataloaderWithoutPinMemory,
                *range,
                "this DataLoader's batches are copied to the GPU every step from pageable memory, which blocks behind queued work".to_string(),
                "pass `pin_memory=True` and copy batches with `.to(device, non_blocking=True)`".to_string(),
            );
            diagnostic.context = *context;
            Some(diagnostic)
        })
    }
}
