# Cases the test split's labellers assumed without a measurement (2026-12-03), in the oracle's
# format (COMMON, then CASES of (name, setup, statement)); results in
# test-split-h200-torch2.11.jsonl. Where a result contradicts a label's assumption (the label
# files' headers and reasons name them), the label is corrected from it.
COMMON = """
import torch, torch.nn as nn, torch.nn.functional as F
dev = torch.device('cuda')
x = torch.randn(1 << 20, device=dev)
y = torch.randn(1 << 20, device=dev)
mask = x > 0
idx = torch.randint(0, 1 << 20, (4096,), device=dev)
"""

CASES = [
    ("torch.equal different shapes", "a = torch.randn(64, 128, device=dev); b = torch.randn(32, 128, device=dev)", "v = torch.equal(a, b)"),
    ("torch.equal same object", "a = torch.randn(64, 128, device=dev)", "v = torch.equal(a, a)"),
    ("0-dim long write python int at int index", "p = torch.zeros(1, dtype=torch.long, device=dev)", "p[0] = 5"),
    ("int index write float scalar", "z = x.clone()", "z[0] = 1.5"),
    ("index with 0-dim cpu long from arange (read)", "a = torch.randn(64, 128, device=dev); i = torch.arange(64)[3]", "v = a[i]"),
    ("index with 0-dim cpu long from arange (write tensor)", "a = torch.randn(64, 128, device=dev); i = torch.arange(64)[3]; r = torch.randn(20, device=dev)", "a[i, :20] = r"),
    ("numpy int array index on cuda", "import numpy as np; a = torch.randn(4096, 64, device=dev); ni = np.array([1, 2, 3])", "v = a[ni]"),
    ("numpy int array index write scalar", "import numpy as np; a = torch.randn(4096, 64, device=dev); ni = np.array([1, 2, 3])", "a[ni] = 0.0"),
    ("numpy bool array index on cuda", "import numpy as np; a = torch.randn(4096, device=dev); nb = np.random.rand(4096) > 0.5", "v = a[nb]"),
    ("to(device) of a cuda tensor already there", "a = torch.randn(4096, 64, device=dev)", "v = a.to(dev)"),
    ("index with 0-dim cuda long (read)", "c = torch.zeros(100, device=dev); u = torch.tensor(3, device=dev)", "v = c[u]"),
    ("index with 0-dim cuda long (write scalar)", "c = torch.zeros(100, device=dev); u = torch.tensor(3, device=dev)", "c[u] = 1.0"),
    ("index with 0-dim cuda long (aug-assign tensor)", "c = torch.zeros(100, device=dev); u = torch.tensor(3, device=dev); w = torch.ones((), device=dev)", "c[u] += w"),
    ("torch.tensor(cuda tensor)", "a = torch.randn(4096, device=dev)", "v = torch.tensor(a)"),
    ("torch.tensor(cuda tensor, device=dev)", "a = torch.randn(4096, device=dev)", "v = torch.tensor(a, device=dev)"),
    ("cpu tensor written through cuda indices", "m = torch.ones(64, 64); r = torch.arange(8, device=dev)", "m[r, r] = 0"),
    ("cuda tensor written through cpu long index, tensor value", "z = x.clone(); ci = torch.randint(0, 1 << 20, (4096,)); vals = torch.zeros(4096, device=dev)", "z[ci] = vals"),
    ("cuda tensor written through cpu long index, scalar", "z = x.clone(); ci = torch.randint(0, 1 << 20, (4096,))", "z[ci] = 0.0"),
    ("cuda 2d written through cpu index rows and cols", "a = torch.zeros(512, 512, device=dev); ri = torch.arange(64); cj = torch.arange(64)", "a[ri, cj] = 1.0"),
    ("masked_fill 0-dim cpu tensor value", "w = torch.tensor(0.0)", "v = x.masked_fill(mask, w)"),
    ("add_ alpha 0-dim cuda tensor", "p = torch.randn(4096, device=dev); g = torch.randn(4096, device=dev); a = torch.tensor(0.1, device=dev)", "p.add_(g, alpha=a)"),
    ("addcdiv_ value 0-dim cuda tensor", "p = torch.randn(4096, device=dev); g = torch.randn(4096, device=dev); a = torch.tensor(0.1, device=dev)", "p.addcdiv_(g, g.abs() + 1, value=a)"),
    ("linalg.svdvals", "a = torch.randn(64, 64, device=dev)", "v = torch.linalg.svdvals(a)"),
    ("GradScaler.get_scale", "sc = torch.amp.GradScaler('cuda'); m = nn.Linear(8, 8).to(dev); sc.scale(m(torch.randn(4, 8, device=dev)).sum()).backward()", "v = sc.get_scale()"),
    ("arange of cuda 0-dim end", "n = torch.tensor(100, device=dev)", "v = torch.arange(n, device=dev)"),
    ("list index read [:, [i]]", "a = torch.randn(64, 128, device=dev)", "v = a[:, [3]]"),
    ("Normal cpu scalars icdf", "d = torch.distributions.Normal(0.0, 1.0); q = torch.rand(4096, device=dev)", "v = d.icdf(q)"),
    ("all_reduce-free: dist none; cumsum", "", "v = x.cumsum(0)"),
    ("torch.take cpu source cuda index", "src = torch.randn(1000); ti = torch.randint(0, 1000, (64,), device=dev)", "v = torch.take(src, ti)"),
    ("histc into cpu tensor slot", "cnt = torch.zeros(10, 8); h = torch.randn(4096, device=dev)", "cnt[0] = torch.histc(h, bins=8)"),
    ("tensor.new_tensor(list)", "", "v = x.new_tensor([1.0, 2.0])"),
    ("F.one_hot with num_classes", "t = torch.randint(0, 10, (4096,), device=dev)", "v = F.one_hot(t, 10)"),
    ("clip_grad_norm_ default", "m = nn.Linear(64, 64).to(dev); m(torch.randn(8, 64, device=dev)).sum().backward()", "v = torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)"),
    ("nn.functional.cross_entropy ignore_index", "lg = torch.randn(4096, 10, device=dev); t = torch.randint(0, 10, (4096,), device=dev)", "v = F.cross_entropy(lg, t, ignore_index=-100)"),
    ("linalg.pinv", "a = torch.randn(64, 32, device=dev)", "v = torch.linalg.pinv(a)"),
    ("linalg.norm", "a = torch.randn(64, 32, device=dev)", "v = torch.linalg.norm(a, dim=1)"),
    ("randperm cpu index into cuda", "a = torch.randn(4096, 64, device=dev); pi = torch.randperm(64)", "v = a[:, pi]"),
    ("if 0-dim cuda bool", "b = torch.tensor(True, device=dev)", "v = 1 if b else 0"),
]
