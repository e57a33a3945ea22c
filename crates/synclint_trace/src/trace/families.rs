//! Which rules can explain a sync seen at run time: the aten operator the user's line called
//! (the outermost operator of the sync's chain that this table knows) says which kind of sync
//! it was, and a sync inside a library call can be any of the rules about library calls.

use super::waits::CopyDirection;
use crate::registry::Rule;
use Rule::*;

// Each kind of sync lists its rules in tiers: a function's findings of the first tier that has
// any explain it (a scalar read is the `.item()` before it is the `if t:` beside it).
const SCALAR_READ: &[&[Rule]] = &[
    &[Item, TensorAsNumber, TensorFormatting, Tolist],
    // A per-step metric all-reduced and read (SYNC602 is reported at the all-reduce).
    &[TensorTruthiness, HostComparison, BarrierInStep],
];
const TRUTHINESS: &[&[Rule]] = &[&[TensorTruthiness, HostComparison], &[TensorAsNumber, TensorFormatting]];
const COMPARISON: &[&[Rule]] = &[&[HostComparison], &[TensorTruthiness]];
const NONZERO: &[&[Rule]] = &[&[Nonzero, DataDependentShape]];
const UNIQUE: &[&[Rule]] = &[&[Unique]];
const MASK_READ: &[&[Rule]] = &[&[BooleanMaskRead, MaskedLoss, HostIndex]];
const MASK_WRITE: &[&[Rule]] = &[&[BooleanMaskWrite, HostIndex]];
const SIZE_FROM_DATA: &[&[Rule]] = &[&[SizeFromData, DataDependentShape]];
const TO_HOST: &[&[Rule]] = &[&[DeviceToHostCopy, Tolist]];
const TO_DEVICE: &[&[Rule]] = &[&[BlockingHostToDevice, DataloaderWithoutPinMemory, HostIndex]];
const ANY_COPY: &[&[Rule]] = &[&[
    DeviceToHostCopy,
    Tolist,
    BlockingHostToDevice,
    DataloaderWithoutPinMemory,
    HostIndex,
]];
const LINALG: &[&[Rule]] = &[&[CheckedLinalg]];
const CTC: &[&[Rule]] = &[&[CtcLoss]];
const NORMAL: &[&[Rule]] = &[&[NormalSample]];
const COLLECTIVE: &[&[Rule]] = &[&[SerialCollectives, BarrierInStep]];
const EXPLICIT: &[&[Rule]] = &[&[ExplicitSynchronize]];

/// Rules about calls into PyTorch that sync inside (the user's line is the library call).
pub(crate) const LIBRARY_CALLS: &[Rule] = &[
    TensorFormatting,
    GradScalerUnfusedOptimizer,
    CheckedLinalg,
    DistributionValidation,
    ClipGradNonfiniteCheck,
    CtcLoss,
    NormalSample,
    ExplicitSynchronize,
    SerialCollectives,
    BarrierInStep,
    DataloaderWithoutPinMemory,
];

/// The rules an operator's sync belongs to, where the table knows the operator.
fn op_rules(op: &str, copy: Option<CopyDirection>) -> Option<&'static [&'static [Rule]]> {
    let op = op.strip_prefix("aten::").unwrap_or(op);
    Some(match op {
        "is_nonzero" => TRUTHINESS,
        "equal" | "allclose" => COMPARISON,
        "item" | "_local_scalar_dense" => SCALAR_READ,
        "nonzero" | "argwhere" | "nonzero_numpy" => NONZERO,
        "_unique" | "_unique2" | "unique_dim" | "unique_consecutive" | "bincount" => UNIQUE,
        "index" | "masked_select" => MASK_READ,
        "index_put_" | "index_put" | "_index_put_impl_" | "masked_fill_" | "masked_fill" => MASK_WRITE,
        "repeat_interleave" | "one_hot" => SIZE_FROM_DATA,
        "to" | "_to_copy" | "copy_" | "cpu" | "cuda" | "lift_fresh" | "lift_fresh_copy" => match copy {
            Some(CopyDirection::DeviceToHost) => TO_HOST,
            Some(CopyDirection::HostToDevice) => TO_DEVICE,
            _ => ANY_COPY,
        },
        "ctc_loss" | "_ctc_loss" => CTC,
        "normal" => NORMAL,
        _ if op.starts_with("linalg_") || matches!(op, "inverse" | "cholesky" | "cholesky_inverse") => LINALG,
        _ if op.starts_with("c10d::") || op.starts_with("nccl:") || op.starts_with("gloo:") => COLLECTIVE,
        _ => return None,
    })
}

/// What kind of sync a chain of operators (outermost first) is: the rules that explain it and
/// the part of the chain worth showing (from the operator the rules come from inwards).
pub(crate) struct Family<'n> {
    pub tiers: &'static [&'static [Rule]],
    pub chain: &'n [&'n str],
}

pub fn family<'n>(ops: &'n [&'n str], runtime: &str, copy: Option<CopyDirection>) -> Family<'n> {
    for (at, op) in ops.iter().enumerate() {
        if let Some(tiers) = op_rules(op, copy) {
            return Family {
                tiers,
                chain: &ops[at..],
            };
        }
    }
    let tiers = if ops.is_empty() && (runtime.contains("Synchronize") || runtime.contains("Free")) {
        EXPLICIT
    } else {
        &[]
    };
    Family {
        tiers,
        chain: &ops[ops.len().saturating_sub(3)..],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_outermost_known_operator_decides() {
        let ops = [
            "Optimizer.step#SGD.step",
            "aten::is_nonzero",
            "aten::item",
            "aten::_local_scalar_dense",
        ];
        let found = family(&ops, "cudaStreamSynchronize", None);
        assert_eq!(found.tiers, TRUTHINESS);
        assert_eq!(found.chain, &ops[1..]);
        let unique = ["aten::_unique2", "aten::item", "aten::_local_scalar_dense"];
        let rules = family(&unique, "cudaStreamSynchronize", None).tiers.concat();
        assert!(rules.contains(&Unique) && !rules.contains(&Item));
    }

    #[test]
    fn a_copy_is_judged_by_its_direction() {
        let ops = ["aten::to", "aten::_to_copy", "aten::copy_"];
        assert_eq!(
            family(&ops, "cudaMemcpyAsync", Some(CopyDirection::HostToDevice)).tiers,
            TO_DEVICE
        );
        assert_eq!(
            family(&ops, "cudaMemcpyAsync", Some(CopyDirection::DeviceToHost)).tiers,
            TO_HOST
        );
    }

    #[test]
    fn a_bare_synchronize_is_explicit_and_an_unknown_op_explains_nothing() {
        assert_eq!(family(&[], "cudaDeviceSynchronize", None).tiers, EXPLICIT);
        assert!(
            family(&["aten::mystery"], "cudaStreamSynchronize", None)
                .tiers
                .is_empty()
        );
    }
}
