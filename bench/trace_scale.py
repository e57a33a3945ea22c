"""Builds a large Chrome trace from a real one, to time `synclint trace` on big files.

Usage: python3 bench/trace_scale.py SMALL.pt.trace.json[.gz] OUT.json --mb 200

The small trace's events are repeated, each copy shifted in time by the trace's length and
with its correlation and flow ids shifted past the previous copy's, until the file reaches the
size asked for: as many steps of the same training loop as fit.
"""
import argparse
import gzip
import json
import os


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("small")
    parser.add_argument("out")
    parser.add_argument("--mb", type=float, default=200)
    args = parser.parse_args()
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


if __name__ == "__main__":
    main()
