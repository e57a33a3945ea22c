"""The effect of `synclint --fix --unsafe-fixes` on real training steps, measured on a GPU.

For each training script in this folder: copy it, fix the copy with synclint, then run both
versions and report
  - syncs per step: host-device synchronizations counted by
    `torch.cuda.set_sync_debug_mode("warn")` over `--steps` steps, minus those of the setup
    (a run of zero steps);
  - whether the outputs match: every step's loss and every final weight, relative 1e-5;
  - time per step (wall clock, the GPU synchronized before and after).

Usage: python3 bench/fix_effect/measure.py --synclint target/release/synclint [--steps 20]
       [--json results.json]
Needs a CUDA GPU, PyTorch and a synclint binary.
"""
import argparse
import importlib.util
import json
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
SCRIPTS = ["segmentation", "language_model", "detection", "reinforcement"]
RELATIVE = 1e-5


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def count_syncs(module, steps):
    torch.cuda.synchronize()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cuda.set_sync_debug_mode("warn")
        try:
            module.main(steps)
        finally:
            torch.cuda.set_sync_debug_mode(0)
    return sum("synchroniz" in str(w.message) for w in caught)


def seconds(module, steps):
    torch.cuda.synchronize()
    start = time.perf_counter()
    module.main(steps)
    torch.cuda.synchronize()
    return time.perf_counter() - start


def outputs(module, steps):
    history, model = module.main(steps)
    losses = torch.stack([torch.as_tensor(loss, dtype=torch.float64) for loss in history]).cpu()
    weights = [p.detach().double().cpu() for p in model.parameters()]
    return losses, weights


def relative_difference(a, b):
    """The largest difference between two tensors relative to their scale (largest magnitude):
    an element near zero does not inflate it."""
    scale = torch.maximum(a.abs().max(), b.abs().max()).clamp(min=1e-12)
    return ((a - b).abs().max() / scale).item()


def measure(name, original, fixed, steps):
    before = load(original, f"{name}_before")
    after = load(fixed, f"{name}_after")
    for module in (before, after):
        module.main(2)  # warm-up: CUDA context, kernels, allocator
    row = {"script": name}
    for label, module in (("before", before), ("after", after)):
        setup = count_syncs(module, 0)
        total = count_syncs(module, steps)
        row[f"syncs_per_step_{label}"] = (total - setup) / steps
        times = sorted(seconds(module, steps) - seconds(module, 0) for _ in range(3))
        row[f"ms_per_step_{label}"] = 1000 * times[1] / steps
    (losses_before, weights_before) = outputs(before, steps)
    (losses_after, weights_after) = outputs(after, steps)
    row["loss_rel_diff"] = relative_difference(losses_before, losses_after)
    row["weight_rel_diff"] = max(relative_difference(a, b) for a, b in zip(weights_before, weights_after))
    row["identical"] = row["loss_rel_diff"] <= RELATIVE and row["weight_rel_diff"] <= RELATIVE
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--synclint", required=True, help="the synclint binary")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="fix_effect_"))
    fixed_dir = work / "fixed"
    fixed_dir.mkdir()
    for name in SCRIPTS:
        shutil.copy(HERE / f"{name}.py", fixed_dir / f"{name}.py")
    fix = subprocess.run(
        [args.synclint, "check", "--isolated", "--fix", "--unsafe-fixes", "--output-format", "concise", str(fixed_dir)],
        capture_output=True,
        text=True,
    )
    print(fix.stdout + fix.stderr)
    rows = [measure(name, HERE / f"{name}.py", fixed_dir / f"{name}.py", args.steps) for name in SCRIPTS]
    before = sum(row["syncs_per_step_before"] for row in rows)
    after = sum(row["syncs_per_step_after"] for row in rows)
    result = {
        "device": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "steps": args.steps,
        "rows": rows,
        "syncs_per_step_before": before,
        "syncs_per_step_after": after,
        "removed": 1 - after / before if before else 0.0,
        "fixed_sources": {name: (fixed_dir / f"{name}.py").read_text() for name in SCRIPTS},
    }
    print(f"{'script':16} {'syncs/step before':>18} {'after':>7} {'ms/step before':>15} {'after':>7} {'loss rel':>9} {'weight rel':>10}")
    for row in rows:
        print(
            f"{row['script']:16} {row['syncs_per_step_before']:18.2f} {row['syncs_per_step_after']:7.2f} "
            f"{row['ms_per_step_before']:15.2f} {row['ms_per_step_after']:7.2f} "
            f"{row['loss_rel_diff']:9.1e} {row['weight_rel_diff']:10.1e}"
        )
    print(f"all: {before:.2f} -> {after:.2f} syncs per step ({100 * result['removed']:.1f}% removed)")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2))
    return 0 if all(row["identical"] for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
