# Cases for the sync oracle (ninth batch, nineteenth session): tensors made of an empty list on
# the device (hand review round 25 took one for a host-to-device copy), and list indices holding
# tensors. Same method as cases_whole_program.py, on an H200. Results:
# empty-and-lists-h200-torch2.11.jsonl beside this file. Two cases (a list of CUDA scalars
# indexing a 1-D tensor) raised an error: a list of tensors is read as one index per dimension.
COMMON = """
import torch
dev = torch.device('cuda')
x = torch.randn(1 << 20, device=dev)
idx = torch.randint(0, 1 << 20, (4096,), device=dev)
"""
CASES = [
    ("torch.tensor empty list", "", "v = torch.tensor([], device=dev)"),
    ("torch.tensor empty list long", "", "v = torch.tensor([], dtype=torch.long, device=dev)"),
    ("torch.as_tensor empty list", "", "v = torch.as_tensor([], device=dev)"),
    ("new_tensor empty list", "", "v = x.new_tensor([])"),
    ("torch.tensor one-element list", "", "v = torch.tensor([1.0], device=dev)"),
    ("list of cuda 0-dim index", "t0 = idx[0]; t1 = idx[1]", "v = x[[t0, t1]]"),
    ("list of cuda 0-dim index 2d", "a = torch.randn(64, 8, device=dev); t0 = torch.tensor(1, device=dev); t1 = torch.tensor(2, device=dev)", "v = a[[t0, t1], -1]"),
    ("list comprehension of cuda 0-dim", "ts = [idx[i] % 1024 for i in range(4)]", "v = x[ts]"),
    ("list holding one cuda index tensor", "", "v = x[[idx]]"),
    ("list of ints index 2d", "a = torch.randn(64, 8, 4, device=dev)", "v = a[[0, 2, 4], -1, :]"),
]
