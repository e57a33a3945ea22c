# Cases for the sync oracle (seventh batch): `type_as` of a CPU tensor with a CUDA tensor, which
# synclint reports as a blocking host-to-device copy (SYNC401), and its look-alike. Same method
# as cases_whole_program.py. Results: type-as-h200-torch2.11.jsonl beside this file.
COMMON = """
import torch
dev = torch.device('cuda')
x = torch.randn(4096, 1024, device=dev)
cpu_rows = torch.randn(100, 1024)
"""

CASES = [
    ("type_as CPU to CUDA", "", "v = cpu_rows.type_as(x)"),
    ("type_as CPU scalar to CUDA", "c = torch.tensor(-100)", "v = c.type_as(x)"),
    ("type_as CUDA to CUDA", "g = torch.randn(100, 1024, device=dev)", "v = g.type_as(x)"),
]
