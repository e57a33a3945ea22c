# Cases for the sync oracle (third batch, synclint's own): the rules' edge cases that the
# first two batches of measurements do not cover. Each case is (name, setup, stmt); COMMON runs
# before every setup. The oracle queues 30 ms of GPU work (torch.cuda._sleep), runs stmt and
# times how long the host is blocked inside it; it also counts
# torch.cuda.set_sync_debug_mode("warn") warnings.
# Results: extra-h100-torch2.11.jsonl beside this file (H100, PyTorch 2.11.0+cu130).
# The distributed cases use a 1-process NCCL group (world_size=1) on the one GPU.
COMMON = """
import torch, torch.nn as nn, torch.nn.functional as F
import numpy as np, math, io, logging
import torch.distributed as dist
dev = torch.device('cuda')
x = torch.randn(1 << 20, device=dev)
y = torch.randn(1 << 20, device=dev)
mask = x > 0
s = x.sum()
cpu_t = torch.randn(1 << 20)
labels = torch.randint(-1, 10, (64, 256, 256), device=dev)
"""

_DIST = ("if not dist.is_initialized(): dist.init_process_group('nccl', "
         "init_method='tcp://127.0.0.1:29511', rank=0, world_size=1)\n"
         "t = torch.randn(1 << 16, device=dev)\n")
_AMP = ("m = nn.Linear(512, 512).to(dev); sc = torch.amp.GradScaler('cuda'); "
        "sc.scale(m(torch.randn(64, 512, device=dev)).sum()).backward()\n")
_GRAD = "m = nn.Linear(512, 512).to(dev); m(torch.randn(64, 512, device=dev)).sum().backward()\n"
_LOG = ("lg = logging.getLogger(); lg.handlers[:] = [logging.StreamHandler(io.StringIO())]; "
        "lg.setLevel(logging.WARNING)\n")
_SPD = "a = torch.randn(64, 64, device=dev); a = a @ a.T + 64 * torch.eye(64, device=dev)\n"
_SQ = "a = torch.randn(64, 64, device=dev) + 64 * torch.eye(64, device=dev); bb = torch.randn(64, 4, device=dev)\n"
_CTC = ("lp = torch.randn(50, 16, 20, device=dev).log_softmax(2); "
        "tg = torch.randint(1, 20, (16, 30), device=dev)\n")

CASES = [
    # Python builtins / math over tensors (SYNC104)
    ("round()", "", "v = round(s)"),
    ("math.sqrt", "sa = s.abs()", "v = math.sqrt(sa)"),
    ("math.isfinite", "", "v = math.isfinite(s)"),
    ("builtin min over small t", "t = x[:8]", "v = min(t)"),
    ("builtin min of two 0-dim", "s2 = y.sum()", "v = min(s, s2)"),
    ("sorted(t)", "t = x[:8]", "v = sorted(t)"),
    ("builtin sum over 1-D t", "t = x[:8]", "v = sum(t)"),
    ("iterate 1-D tensor", "t = x[:8]", "for e in t: pass"),
    ("list(t)", "t = x[:8]", "v = list(t)"),
    ("abs(s) builtin", "", "v = abs(s)"),
    # truthiness (SYNC105)
    ("s and 1.0", "", "v = s and 1.0"),
    ("not (s > 0)", "", "v = not (s > 0)"),
    ("ternary on tensor", "", "v = 1 if s > 0 else 2"),
    ("torch.isnan(s).any() kept", "", "v = torch.isnan(s).any()"),
    ("nan_to_num 0-dim", "", "v = torch.nan_to_num(s)"),
    # formatting (SYNC106)
    ("repr(s)", "", "v = repr(s)"),
    ("format(s, '.3f')", "", "v = format(s, '.3f')"),
    ("'%f' % s", "", "v = '%f' % s"),
    ("'%s' % (s,)", "", "v = '%s' % (s,)"),
    ("logging.info disabled", _LOG, "logging.info('%s', s)"),
    ("logging.warning enabled", _LOG, "logging.warning('%s', s)"),
    ("logging.info disabled f-string", _LOG, "logging.info(f'{s}')"),
    ("print to StringIO", "buf = io.StringIO()", "print(s, file=buf)"),
    ("f-string of .shape", "", "v = f'{x.shape}'"),
    # host comparison (SYNC107)
    ("testing.assert_close", "", "torch.testing.assert_close(x, x.clone())"),
    # numpy on CUDA tensors
    ("np.array(cuda)", "", "v = np.array(x[:16])"),
    ("np.sqrt(cuda 0-dim)", "sa = s.abs()", "v = np.sqrt(sa)"),
    # indexing writes (SYNC205 / SYNC204 rewrites)
    ("cpu index assign scalar", "z = x.clone(); ci = torch.arange(16)", "z[ci] = 0.0"),
    ("list index assign scalar", "z = x.clone()", "z[[1, 2, 3]] = 0.0"),
    ("where(mask, 0-dim s, x)", "", "v = torch.where(mask, s, x)"),
    ("copy_(where(mask, w, z))", "z = x.clone(); w = torch.zeros((), device=dev)", "z.copy_(torch.where(mask, w, z))"),
    ("add_(where(mask, w, 0))", "z = x.clone(); w = torch.ones((), device=dev)", "z.add_(torch.where(mask, w, 0))"),
    ("where(mask, x, 0).sum()", "", "v = torch.where(mask, x, 0).sum()"),
    ("z[torch.where(mask)] = 0.0", "z = x.clone()", "z[torch.where(mask)] = 0.0"),
    ("masked_fill_ scalar", "z = x.clone()", "z.masked_fill_(mask, 0.0)"),
    ("x.view(-1)[mask]", "", "v = x.view(-1)[mask]"),
    ("x[mask.nonzero(as_tuple=True)]", "", "v = x[mask.nonzero(as_tuple=True)]"),
    # unique and its rewrite (SYNC202)
    ("len(torch.unique)", "", "v = len(torch.unique(labels))"),
    ("torch.unique().numel()", "", "v = torch.unique(labels).numel()"),
    ("sort().values + count_nonzero(!=)", "", "srt = torch.sort(labels.flatten()).values\nv = torch.count_nonzero(srt[1:] != srt[:-1]) + 1"),
    # scalar factories (SYNC401 fix) and their dtypes
    ("torch.full((), 3) dtype", "ref = torch.tensor(3, device=dev).dtype", "v = torch.full((), 3, device=dev)\nassert v.dtype == ref, (v.dtype, ref)"),
    ("torch.full((), 3.0) dtype", "ref = torch.tensor(3.0, device=dev).dtype", "v = torch.full((), 3.0, device=dev)\nassert v.dtype == ref, (v.dtype, ref)"),
    ("torch.full((), True) dtype", "ref = torch.tensor(True, device=dev).dtype", "v = torch.full((), True, device=dev)\nassert v.dtype == ref, (v.dtype, ref)"),
    ("torch.scalar_tensor device", "", "v = torch.scalar_tensor(3.0, device=dev)"),
    ("torch.as_tensor(scalar, device)", "", "v = torch.as_tensor(3.0, device=dev)"),
    ("torch.tensor(np) cpu", "a = np.ones(1 << 20, dtype=np.float32)", "v = torch.tensor(a)"),
    ("x.new_zeros", "", "v = x.new_zeros(16)"),
    ("x.new_full", "", "v = x.new_full((16,), 2.0)"),
    ("torch.as_tensor(cuda_t)", "", "v = torch.as_tensor(x)"),
    ("torch.tensor(cuda 0-dim)", "", "v = torch.tensor(s)"),
    # checked linalg rewrites (SYNC303)
    ("inv_ex(a).inverse", _SQ, "v = torch.linalg.inv_ex(a).inverse"),
    ("cholesky_ex(a).L", _SPD, "v = torch.linalg.cholesky_ex(a).L"),
    ("solve_ex(a, bb).result", _SQ, "v = torch.linalg.solve_ex(a, bb).result"),
    # ctc (SYNC306)
    ("ctc_loss cpu length tensors", _CTC + "il = torch.full((16,), 50, dtype=torch.long); tl = torch.randint(10, 30, (16,))", "v = F.ctc_loss(lp, tg, il, tl)"),
    ("ctc_loss list lengths", _CTC + "il = [50] * 16; tl = torch.randint(10, 30, (16,)).tolist()", "v = F.ctc_loss(lp, tg, il, tl)"),
    # masked loss module form (SYNC301)
    ("CrossEntropyLoss() on bool-masked", "lg2 = torch.randn(4096, 10, device=dev); tgt = torch.randint(-1, 10, (4096,), device=dev); keep = tgt != -1; ce = nn.CrossEntropyLoss()", "v = ce(lg2[keep], tgt[keep])"),
    ("CrossEntropyLoss(ignore_index)", "lg2 = torch.randn(4096, 10, device=dev); tgt = torch.randint(-1, 10, (4096,), device=dev); ce = nn.CrossEntropyLoss(ignore_index=-1)", "v = ce(lg2, tgt)"),
    # copies (SYNC103 / SYNC401)
    ("pageable .to(dev, non_blocking)", "", "v = cpu_t.to(dev, non_blocking=True)"),
    ("pageable .cuda(non_blocking)", "", "v = cpu_t.cuda(non_blocking=True)"),
    ("x.to(torch.device('cpu'))", "", "v = x.to(torch.device('cpu'))"),
    ("cuda x.to(dev) no-op", "", "v = x.to(dev)"),
    ("cuda x.cuda() no-op", "", "v = x.cuda()"),
    ("m.to('cpu')", "m = nn.Linear(512, 512).to(dev)", "m.to('cpu')"),
    ("torch.save cpu tensor", "buf = io.BytesIO(); c = torch.randn(16)", "torch.save(c, buf)"),
    # training utilities (SYNC302 / SYNC305)
    ("GradScaler step Adam fused", _AMP + "opt = torch.optim.Adam(m.parameters(), fused=True)", "sc.step(opt)"),
    ("GradScaler get_scale", _AMP + "opt = torch.optim.AdamW(m.parameters(), fused=True); sc.step(opt); sc.update()", "v = sc.get_scale()"),
    ("clip_grad_norm_ foreach", _GRAD, "v = torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0, foreach=True)"),
    # distributions (SYNC304)
    ("Normal no validate log_prob", "mu = torch.randn(64, device=dev); sigma = torch.ones_like(mu)", "v = torch.distributions.Normal(mu, sigma, validate_args=False).log_prob(mu)"),
    # CUDA runtime queries (SYNC501 neighbours)
    ("cuda.mem_get_info", "", "v = torch.cuda.mem_get_info()"),
    ("stream.query", "", "v = torch.cuda.current_stream().query()"),
    # distributed, 1-process NCCL group (SYNC601 / SYNC602)
    ("dist.all_reduce", _DIST, "dist.all_reduce(t)"),
    ("dist.all_reduce async_op", _DIST, "h = dist.all_reduce(t, async_op=True)"),
    ("dist.all_reduce async + wait", _DIST, "h = dist.all_reduce(t, async_op=True); h.wait()"),
    ("work.wait()", _DIST + "h = dist.all_reduce(t, async_op=True)", "h.wait()"),
    ("dist.barrier", _DIST, "dist.barrier()"),
    ("dist.all_reduce 0-dim then item", _DIST, "dist.all_reduce(s); v = s.item()"),
    ("dist.broadcast", _DIST, "dist.broadcast(t, 0)"),
    ("dist.all_gather", _DIST + "lst = [torch.empty_like(t)]", "dist.all_gather(lst, t)"),
    ("dist.all_gather_into_tensor", _DIST + "out = torch.empty_like(t)", "dist.all_gather_into_tensor(out, t)"),
    ("dist.broadcast_object_list", _DIST + "objs = [{'lr': 0.1}]", "dist.broadcast_object_list(objs, 0)"),
    ("dist.all_gather_object", _DIST + "outs = [None]", "dist.all_gather_object(outs, 1.5)"),
    # global default: last, since it changes state for later cases
    ("set_default_validate_args(False) Normal", "torch.distributions.Distribution.set_default_validate_args(False); mu = torch.randn(64, device=dev); sigma = torch.ones_like(mu)", "v = torch.distributions.Normal(mu, sigma)"),
    ("set_default_validate_args(False) log_prob", "torch.distributions.Distribution.set_default_validate_args(False); mu = torch.randn(64, device=dev); sigma = torch.ones_like(mu); d = torch.distributions.Normal(mu, sigma)", "v = d.log_prob(mu)"),
]
