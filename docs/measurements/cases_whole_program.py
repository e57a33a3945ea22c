# Cases for the sync oracle (sixth batch): the forms the whole-program issue names that no earlier
# batch measured: boolean masks inside a tuple index (reads, writes, in-place updates), host
# indices that are not list literals (range, a list in a variable), a CPU tensor written into a
# slice of a CUDA tensor, mask dtype conversions, and a Python-number accumulator that becomes a
# tensor. Each case is (name, setup, stmt); COMMON runs before every setup. The oracle queues
# 30 ms of GPU work, runs stmt and times how long the host is blocked inside it.
# Results: whole-program-h200-torch2.11.jsonl beside this file (an H200, PyTorch 2.11.0+cu130).
COMMON = """
import torch
dev = torch.device('cuda')
x = torch.randn(4096, 1024, device=dev)
colmask = torch.rand(1024, device=dev) > 0.5
rowmask = torch.rand(4096, device=dev) > 0.5
flat = torch.randn(1 << 20, device=dev)
flatmask = flat > 0
idx4 = torch.randint(0, 1024, (4,), device=dev)
one = torch.zeros((), device=dev)
cpu_rows = torch.randn(100, 1024)
s = flat.sum()
"""

CASES = [
    # A mask inside a tuple index.
    ("tuple mask read [:, m]", "", "v = x[:, colmask]"),
    ("tuple mask read [m, :]", "", "v = x[rowmask, :]"),
    ("tuple mask write scalar [:, m]", "", "x[:, colmask] = 1.0"),
    ("tuple mask write scalar [m, :]", "", "x[rowmask, :] = 0.0"),
    ("tuple mask write scalar [m, 0]", "", "x[rowmask, 0] = 0.0"),
    ("tuple mask write tensor [:, m]", "", "x[:, colmask] = one"),
    ("tuple mask write tensor [m, :]", "", "x[rowmask, :] = one"),
    ("tuple mask in-place mul [:, m]", "", "x[:, colmask] *= 0"),
    ("tuple mask in-place add [m, :]", "", "x[rowmask, :] += 1"),
    ("tuple int and mask write scalar", "", "x[3, colmask] = 1"),
    ("tuple 0-dim index and mask write", "i = torch.tensor(3, device=dev)", "x[i, colmask] = 1"),
    ("tuple index tensor and mask write", "i = torch.tensor([3], device=dev)", "x[i, colmask] = 1"),
    ("mask write -inf", "", "flat[flatmask] = -float('inf')"),
    # Host indices that are not list literals.
    ("range and CUDA index read", "", "v = x[range(4), idx4]"),
    ("list variable index read", "rows = [0, 2, 5]", "v = x[rows]"),
    ("tuple variable index read", "rows = (0, 2, 5)", "v = x[rows, 0]"),
    ("arange CUDA and CUDA index read", "r = torch.arange(4, device=dev)", "v = x[r, idx4]"),
    # A CPU tensor written into a CUDA tensor.
    ("CPU tensor into CUDA slice", "", "x[0:100] = cpu_rows"),
    ("CPU tensor into CUDA slice, pinned", "p = cpu_rows.pin_memory()", "x[0:100] = p"),
    ("CUDA tensor into CUDA slice", "g = torch.randn(100, 1024, device=dev)", "x[0:100] = g"),
    ("copy_ CPU into CUDA", "", "x[0:100].copy_(cpu_rows)"),
    # Mask dtype conversions and data-dependent tests.
    ("type(torch.bool)", "f = flatmask.float()", "v = f.type(torch.bool)"),
    ("torch.is_nonzero", "", "v = torch.is_nonzero(s > 0)"),
    # Accumulating into a Python number.
    ("python number += tensor", "total = 0", "total += s"),
    ("python number += tensor, then item", "total = 0\ntotal += s", "v = total.item()"),
]
