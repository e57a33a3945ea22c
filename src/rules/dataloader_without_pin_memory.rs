//! SYNC402: a DataLoader whose batches are copied to the GPU on hot lines, built without
//! `pin_memory=True`: from pageable memory every copy blocks, `non_blocking=True` or not.

use ruff_text_size::TextRange;

use crate::diagnostic::Diagnostic;
use crate::registry::Rule;
use crate::semantic::HotContext;

/// Reported at each unpinned `DataLoader(...)` once the file shows its batches going to the
/// GPU on a hot line; the finding takes that copy's context, since the setup line is not hot.
pub(crate) fn report_unpinned_loaders(loaders: &[TextRange], copy_context: HotContext) -> Vec<Diagnostic> {
    loaders
        .iter()
        .map(|range| {
            let mut diagnostic = Diagnostic::new(
                Rule::DataloaderWithoutPinMemory,
                *range,
                "this DataLoader's batches are copied to the GPU every step from pageable memory, which blocks behind queued work".to_string(),
                "pass `pin_memory=True` and copy batches with `.to(device, non_blocking=True)`".to_string(),
            );
            diagnostic.context = copy_context;
            diagnostic
        })
        .collect()
}
