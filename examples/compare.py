#!/usr/bin/env python3
"""Run examples/train_gpt.py and examples/train_gpt_fixed.py side by side and compare them.

Each configuration (compile mode, batch size) runs both scripts in a fresh process with the
same seed; the table gives the time per training step, the host-device syncs per step (counted
under torch.cuda.set_sync_debug_mode("warn")) and the largest difference between the two
scripts' per-step losses. A short CPU run of both checks that they compute the same losses.

    python3 examples/compare.py                       # about 3 minutes on an H100
    python3 examples/compare.py --configs none:16 --steps 40 --out compare.md
"""
import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPTS = {"unfixed": HERE / "train_gpt.py", "fixed": HERE / "train_gpt_fixed.py"}


def run(script, mode, batch, steps, seed, device, tmp, timeout, extra):
    out = Path(tmp) / f"{script.stem}-{device}-{mode}-{batch}.json"
    cmd = [sys.executable, str(script), "--compile", mode, "--batch", str(batch),
           "--steps", str(steps), "--seed", str(seed), "--device", device,
           "--json-out", str(out), "--log-every", "0", *extra]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}:\n{p.stdout[-2000:]}"
                           f"\n{p.stderr[-4000:]}")
    print(p.stdout.strip().splitlines()[-1], f"[{wall:.0f} s]", flush=True)
    r = json.loads(out.read_text())
    r["wall_s"] = wall
    return r


def fmt_syncs(v):
    return "n/a" if v is None else f"{v:g}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--configs", default="none:16,none:64,reduce-overhead:16",
                    help="comma-separated compile-mode:batch pairs to run on the GPU")
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cpu-steps", type=int, default=6, help="0: skip the CPU check")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per script run")
    ap.add_argument("--out", default=None, help="also write the Markdown table here")
    ap.add_argument("--json", default=None, help="also write the raw results here")
    args = ap.parse_args()

    rows, raw = [], []
    t_start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="train-gpt-") as tmp:
        jobs = []
        if args.cpu_steps:
            jobs.append(("cpu", "none", 4, args.cpu_steps,
                         ["--seq", "64", "--dim", "64", "--layers", "2", "--vocab", "512",
                          "--warmup", "1", "--sync-steps", "1"]))
        for cfg in args.configs.split(","):
            mode, _, batch = cfg.strip().partition(":")
            jobs.append(("cuda", mode, int(batch or 16), args.steps, []))
        for device, mode, batch, steps, extra in jobs:
            res = {k: run(s, mode, batch, steps, args.seed, device, tmp, args.timeout, extra)
                   for k, s in SCRIPTS.items()}
            u, f = res["unfixed"], res["fixed"]
            diff = max(abs(a - b) for a, b in zip(u["losses"], f["losses"]))
            rows.append({"device": device, "mode": mode, "batch": batch,
                         "step_ms_unfixed": u["step_ms"], "step_ms_fixed": f["step_ms"],
                         "speedup": u["step_ms"] / f["step_ms"],
                         "syncs_unfixed": u["syncs_per_step"], "syncs_fixed": f["syncs_per_step"],
                         "max_loss_diff": diff, "final_loss_unfixed": u["losses"][-1],
                         "final_loss_fixed": f["losses"][-1], "steps": steps})
            raw.append(res)

    lines = ["| device | mode | batch | step ms (unfixed) | step ms (fixed) | speed-up | "
             "syncs/step unfixed vs fixed | max \\|loss difference\\| | final loss |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['device']} | {r['mode']} | {r['batch']} | "
                     f"{r['step_ms_unfixed']:.2f} | {r['step_ms_fixed']:.2f} | "
                     f"{r['speedup']:.2f}x | {fmt_syncs(r['syncs_unfixed'])} vs "
                     f"{fmt_syncs(r['syncs_fixed'])} | {r['max_loss_diff']:.2e} | "
                     f"{r['final_loss_unfixed']:.4f} |")
    table = "\n".join(lines)
    print()
    print(table)
    print(f"\n(total {time.perf_counter() - t_start:.0f} s; {args.steps} steps per GPU run, "
          "step time on the GPU timeline between CUDA events after warm-up)")
    if args.out:
        Path(args.out).write_text(table + "\n")
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows, "runs": raw}, indent=1))


if __name__ == "__main__":
    main()
