//! SYNC402: a DataLoader whose batches are copied to the GPU on hot lines, built without
//! `pin_memory=True`: from pageable memory every copy blocks, `non_blocking=True` or not.

use ruff_text_size::TextRange;

use crate::diagnostic::Diagnostic;
use crate::registry::Rule;
use crate::semantic::{BatchSource, HotContext};

/// Reported at each unpinned `DataLoader(...)` whose batches the file copies to the GPU on a
/// hot line; the finding takes that copy's context, since the construction itself runs once.
pub(crate) fn report_unpinned_loaders(loaders: &[TextRange], copied: &[(BatchSource, HotContext)]) -> Vec<Diagnostic> {
    loaders
        .iter()
        .filter_map(|range| {
            let (_, context) = copied.iter().find(|(source, _)| *source == BatchSource::Loader(range.start()))?;
            let mut diagnostic = Diagnostic::new(
                Rule::DataloaderWithoutPinMemory,
                *range,
                "this DataLoader's batches are copied to the GPU every step from pageable memory, which blocks behind queued work".to_string(),
                "pass `pin_memory=True` and copy batches with `.to(device, non_blocking=True)`".to_string(),
            );
            diagnostic.context = *context;
            Some(diagnostic)
        })
        .collect()
}
