# Python scalars written through integer indices and slices (2026-12-03): which of them copy the scalar to the GPU.
COMMON = """
import torch
dev = torch.device('cuda')
"""
CASES = [
    ("slice write python scalar", "a = torch.randn(64, 128, device=dev)", "a[:, :16] = 0.0"),
    ("slice write python int long", "p = torch.zeros(8, dtype=torch.long, device=dev)", "p[2:4] = 5"),
    ("int index write python int 2d row", "a = torch.randn(64, 128, device=dev)", "a[3] = 1.0"),
    ("int index write 0-dim cuda value", "p = torch.zeros(1, dtype=torch.long, device=dev); w = torch.tensor(5, device=dev)", "p[0] = w"),
    ("fill_ python scalar", "a = torch.randn(64, 128, device=dev)", "a[3].fill_(1.0)"),
]
