# Cases for the sync oracle (eighth batch, fourteenth session): a GPU scalar indexing a host
# container (Python reads the index as a number, SYNC104), and an optimizer's step count, which
# synclint takes for a CPU tensor unless the optimizer is fused or capturable. Same method as
# cases_whole_program.py, on an H100. Results: host-reads-h100-torch2.11.jsonl beside this file.
COMMON = "import torch, numpy as np\ndev = torch.device('cuda')\n"

CASES = [
    ("numpy indexed by cuda scalar", "a = np.arange(10); i = torch.tensor(3, device=dev)", "v = a[i]"),
    ("list indexed by cuda scalar", "a = list(range(10)); i = torch.tensor(3, device=dev)", "v = a[i]"),
    ("tuple indexed by cuda scalar", "a = tuple(range(10)); i = torch.tensor(3, device=dev)", "v = a[i]"),
    ("numpy indexed by cpu scalar", "a = np.arange(10); i = torch.tensor(3)", "v = a[i]"),
    (
        "optimizer step item (AdamW)",
        "m = torch.nn.Linear(64, 64, device=dev); o = torch.optim.AdamW(m.parameters()); "
        "m(torch.randn(8, 64, device=dev)).sum().backward(); o.step(); s = o.state[m.weight]['step']",
        "v = s.item()",
    ),
    (
        "optimizer step item (capturable)",
        "m = torch.nn.Linear(64, 64, device=dev); o = torch.optim.Adam(m.parameters(), capturable=True); "
        "m(torch.randn(8, 64, device=dev)).sum().backward(); o.step(); s = o.state[m.weight]['step']",
        "v = s.item()",
    ),
]
