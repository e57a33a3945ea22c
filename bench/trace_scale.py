"""Builds large or adversarial Chrome traces, to measure `synclint trace` on them.

Usage:
  python3 bench/trace_scale.py repeat SMALL.pt.trace.json[.gz] OUT.json --mb 200
  python3 bench/trace_scale.py deep OUTDIR --depth 4000 --syncs 1000
  python3 bench/trace_scale.py files OUTDIR --files 2000 --syncs 100
  python3 bench/trace_scale.py steps OUTDIR --steps 20000 --syncs 5
  python3 bench/trace_scale.py threads OUTDIR --threads 100000
  python3 bench/trace_scale.py string OUTDIR --mb 1024

`repeat` repeats a real trace's events, each copy shifted in time by the trace's length and with
its correlation and flow ids shifted past the previous copy's, until the file reaches the size
asked for: as many steps of the same training loop as fit.

The other shapes write OUTDIR/trace.json and the project it ran (`synclint trace
OUTDIR/trace.json --root OUTDIR`):
  deep     a recursion `--depth` frames deep whose innermost call syncs `--syncs` times;
  files    a stack through `--files` modules, each calling the next, the last syncing
           `--syncs` times; every module's name is shared by a twin in another folder;
  steps    `--steps` profiler steps of `--syncs` syncs each;
  threads  `--threads` host threads, each with one sync;
  string   one operator whose name is `--mb` MiB long, written in pieces.
"""
import argparse
import gzip
import json
import os


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def repeat(args):
    document = load(args.small)
    events = document.pop("traceEvents")
    timed = [e for e in events if isinstance(e.get("ts"), (int, float)) and e.get("ph") != "M"]
    start = min(e["ts"] for e in timed)
    length = max(e["ts"] + e.get("dur", 0) for e in timed) - start
    ids = max(
        [e.get("id", 0) for e in events if isinstance(e.get("id"), int)]
        + [e.get("args", {}).get("correlation", 0) for e in events]
    ) + 1
    target = int(args.mb * 1024 * 1024)
    with open(args.out, "w") as out:
        head = json.dumps(document)[:-1]
        out.write(head + ', "traceEvents": [\n')
        written, copy, first = out.tell(), 0, True
        while written < target:
            for event in events:
                if copy and event.get("ph") == "M":
                    continue
                e = dict(event)
                if isinstance(e.get("ts"), (int, float)) and e.get("ph") != "M":
                    e["ts"] = round(e["ts"] + copy * length, 3)
                if isinstance(e.get("id"), int):
                    e["id"] += copy * ids
                if "args" in e and "correlation" in e["args"]:
                    e["args"] = dict(e["args"], correlation=e["args"]["correlation"] + copy * ids)
                line = ("" if first else ",\n") + json.dumps(e)
                first = False
                out.write(line)
                written += len(line)
            copy += 1
        out.write("\n]}\n")
    print(f"{args.out}: {os.path.getsize(args.out) / 1e6:.0f} MB, {copy} copies of {args.small}")


class Events:
    """Writes `{"traceEvents": [...]}` one event at a time."""

    def __init__(self, folder):
        os.makedirs(folder, exist_ok=True)
        self.path = os.path.join(folder, "trace.json")
        self.out = open(self.path, "w")
        self.out.write('{"schemaVersion": 1, "traceEvents": [\n')
        self.first = True
        self.correlation = 0

    def add(self, **event):
        self.out.write(("" if self.first else ",\n") + json.dumps(event))
        self.first = False

    def span(self, cat, name, tid, ts, dur, **args):
        event = dict(ph="X", cat=cat, name=name, pid=1, tid=tid, ts=round(ts, 3), dur=round(dur, 3))
        if args:
            event["args"] = args
        self.add(**event)

    def item(self, tid, ts, frame=None):
        """One `.item()`: its builtin frame, operators, pinned copy and synchronize (10 µs)."""
        self.correlation += 1
        if frame:
            self.span("python_function", frame, tid, ts, 9.5)
        self.span("cpu_op", "aten::item", tid, ts + 0.1, 9)
        self.span("cpu_op", "aten::_local_scalar_dense", tid, ts + 0.2, 8.5)
        self.span("cuda_runtime", "cudaMemcpyAsync", tid, ts + 0.3, 1, correlation=self.correlation)
        self.span("gpu_memcpy", "Memcpy DtoH (Device -> Pinned)", 7, ts + 1.5, 0.5,
                  correlation=self.correlation)
        self.span("cuda_runtime", "cudaStreamSynchronize", tid, ts + 2, 6)

    def close(self):
        self.out.write("\n]}\n")
        self.out.close()
        print(f"{self.path}: {os.path.getsize(self.path) / 1e6:.1f} MB")


def nested(events, frames, tid, start, inner):
    """`frames` Python frames, each inside the one before, around `inner` µs of work."""
    step = 0.01
    for depth, name in enumerate(frames):
        events.span("python_function", name, tid, start + depth * step, inner + 2 * (len(frames) - depth) * step)
    return start + len(frames) * step


BUILTIN_ITEM = "<built-in method item of Tensor object at 0x7f00>"


def deep(args):
    os.makedirs(args.outdir, exist_ok=True)
    with open(os.path.join(args.outdir, "deep.py"), "w") as f:
        f.write(
            "import torch\n\n\n"
            "def recurse(model, x, n):\n"
            "    if n:\n"
            "        return recurse(model, x, n - 1)\n"
            "    total = 0.0\n"
            f"    for _ in range({args.syncs}):\n"
            "        loss = model(x).sum()\n"
            "        loss.backward()\n"
            "        total += loss.item()\n"
            "    return total\n\n\n"
            f"recurse(torch.nn.Linear(4, 4).cuda(), torch.ones(4, device='cuda'), {args.depth})\n"
        )
    events = Events(args.outdir)
    frames = ["deep.py(15): <module>"] + ["deep.py(4): recurse"] * (args.depth + 1)
    start = nested(events, frames, 1, 0, args.syncs * 10)
    for i in range(args.syncs):
        events.item(1, start + i * 10, BUILTIN_ITEM)
    events.close()


def files(args):
    for twin in ("a", "b"):
        os.makedirs(os.path.join(args.outdir, twin), exist_ok=True)
        for k in range(args.files):
            with open(os.path.join(args.outdir, twin, f"mod{k}.py"), "w") as f:
                f.write(
                    f"import torch\nfrom mod{k + 1} import f{k + 1}\n\n\n"
                    f"def f{k}(t):\n    f{k + 1}(t)\n    return t.item()\n"
                )
    events = Events(args.outdir)
    # The first module is named by its folder, which ties each of the others to its own twin.
    frames = ["a/mod0.py(5): f0"] + [f"mod{k}.py(5): f{k}" for k in range(1, args.files)]
    start = nested(events, frames, 1, 0, args.syncs * 10)
    for i in range(args.syncs):
        events.item(1, start + i * 10, BUILTIN_ITEM)
    events.close()


def steps(args):
    os.makedirs(args.outdir, exist_ok=True)
    with open(os.path.join(args.outdir, "loop.py"), "w") as f:
        f.write("import torch\n\n\ndef step(t):\n    return t.item()\n")
    events = Events(args.outdir)
    length = args.syncs * 10 + 2
    for s in range(args.steps):
        begin = s * length
        events.span("user_annotation", f"ProfilerStep#{s}", 1, begin, length - 1)
        events.span("python_function", "loop.py(4): step", 1, begin + 0.5, length - 2)
        for i in range(args.syncs):
            events.item(1, begin + 1 + i * 10, BUILTIN_ITEM)
    events.close()


def threads(args):
    os.makedirs(args.outdir, exist_ok=True)
    events = Events(args.outdir)
    for tid in range(args.threads):
        events.item(100 + tid, tid * 0.001)
    events.close()


def string(args):
    os.makedirs(args.outdir, exist_ok=True)
    path = os.path.join(args.outdir, "trace.json")
    piece = "a" * (1 << 20)
    with open(path, "w") as out:
        out.write('{"traceEvents": [{"ph": "X", "cat": "cpu_op", "pid": 1, "tid": 1, "ts": 1, "dur": 1, "name": "')
        for _ in range(int(args.mb)):
            out.write(piece)
        out.write('"}]}\n')
    print(f"{path}: {os.path.getsize(path) / 1e6:.0f} MB")


def main():
    parser = argparse.ArgumentParser()
    shapes = parser.add_subparsers(dest="shape", required=True)
    p = shapes.add_parser("repeat")
    p.add_argument("small")
    p.add_argument("out")
    p.add_argument("--mb", type=float, default=200)
    p.set_defaults(run=repeat)
    for name, run, options in [
        ("deep", deep, [("--depth", 4000), ("--syncs", 1000)]),
        ("files", files, [("--files", 2000), ("--syncs", 100)]),
        ("steps", steps, [("--steps", 20000), ("--syncs", 5)]),
        ("threads", threads, [("--threads", 100000)]),
        ("string", string, [("--mb", 1024)]),
    ]:
        p = shapes.add_parser(name)
        p.add_argument("outdir")
        for option, default in options:
            p.add_argument(option, type=int, default=default)
        p.set_defaults(run=run)
    args = parser.parse_args()
    args.run(args)


if __name__ == "__main__":
    main()
