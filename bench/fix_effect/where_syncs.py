"""Prints where each host-device sync of one training step happens (the innermost frames), for
a script of this folder or a fixed copy: python3 where_syncs.py PATH."""
import importlib.util
import sys
import traceback
import warnings

import torch


def main(path):
    spec = importlib.util.spec_from_file_location("script", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(2)
    seen = []

    def record(message, category, filename, lineno, file=None, line=None):
        if "synchroniz" in str(message):
            frames = traceback.extract_stack()[:-1][-4:]
            seen.append(" <- ".join(f"{f.filename.rsplit('/', 1)[-1]}:{f.lineno} {f.line}" for f in reversed(frames)))

    warnings.showwarning = record
    warnings.simplefilter("always")
    torch.cuda.set_sync_debug_mode("warn")
    module.main(1)
    torch.cuda.set_sync_debug_mode(0)
    for where in seen:
        print(where)


if __name__ == "__main__":
    main(sys.argv[1])
