#!/usr/bin/env python3
"""A small GPT trained on synthetic token sequences, written the way training loops often are.

Every step makes the host wait for the GPU several times: blocking `.to(device)` copies of CPU
batches, a boolean-masked loss (`logits[mask]`), `torch.tensor(0.0, device=device)`, a Python NaN
check on the loss and `loss.item()` for the log. `synclint check examples/train_gpt.py` reports
them; examples/train_gpt_fixed.py is the same training with the syncs removed.

    python3 examples/train_gpt.py --steps 60 --batch 16 --compile none --json-out run.json
"""
import argparse
import json
import time
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

PAD = 0


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(C, dim=-1)
        q, k, v = (t.view(B, T, self.heads, C // self.heads).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(B, T, C))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, vocab, dim, layers, heads, seq):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(seq, dim)
        self.blocks = nn.ModuleList(Block(dim, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        self.head.weight = self.tok.weight

    def forward(self, idx):
        pos = torch.arange(idx.shape[1], device=idx.device)
        x = self.tok(idx) + self.pos(pos)
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln(x))


def get_batch(gen, batch, seq, vocab):
    """Arithmetic token sequences with 10% noise, right-padded with PAD to random lengths."""
    pos = torch.arange(seq + 1)
    start = torch.randint(1, vocab, (batch, 1), generator=gen)
    stride = torch.randint(1, 8, (batch, 1), generator=gen)
    tokens = 1 + (start + stride * pos) % (vocab - 1)
    noise = torch.randint(1, vocab, tokens.shape, generator=gen)
    tokens = torch.where(torch.rand(tokens.shape, generator=gen) < 0.1, noise, tokens)
    lengths = torch.randint(seq // 2, seq + 2, (batch, 1), generator=gen)
    tokens = tokens.masked_fill(pos >= lengths, PAD)
    return tokens[:, :-1].contiguous(), tokens[:, 1:].contiguous()


def train_step(model, opt, gen, args, device, losses, step):
    total_loss = torch.tensor(0.0, device=device)
    for micro in range(args.accum):
        x, y = get_batch(gen, args.batch, args.seq, args.vocab)
        x = x.to(device)
        y = y.to(device)
        if args.compile == "reduce-overhead":
            torch.compiler.cudagraph_mark_step_begin()
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"):
            logits = model(x)
        mask = y != PAD
        loss = F.cross_entropy(logits[mask].float(), y[mask]) / args.accum
        loss.backward()
        total_loss += loss.detach()
    if not torch.isfinite(total_loss):
        raise RuntimeError(f"loss is {total_loss.item()} at step {step}")
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    opt.zero_grad(set_to_none=True)
    losses.append(total_loss.item())
    if args.log_every and step % args.log_every == 0:
        print(f"step {step:4d}  loss {losses[-1]:.4f}", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--seq", type=int, default=256)
    p.add_argument("--vocab", type=int, default=4096)
    p.add_argument("--dim", type=int, default=256)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--accum", type=int, default=1,
                   help="micro-batches per optimizer step (more than 1 breaks CUDA graphs with the tied embedding)")
    p.add_argument("--warmup", type=int, default=None, help="untimed steps (default 5, compiled 15)")
    p.add_argument("--sync-steps", type=int, default=3, help="steps run under sync debug mode")
    p.add_argument("--log-every", type=int, default=10)
    p.add_argument("--compile", choices=["none", "default", "reduce-overhead"], default="none")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="cuda")
    p.add_argument("--json-out", default=None)
    args = p.parse_args()
    device = torch.device(args.device)
    warmup = args.warmup if args.warmup is not None else (5 if args.compile == "none" else 15)
    timed = args.steps - warmup - args.sync_steps
    if timed < 1:
        p.error(f"--steps must be more than warmup ({warmup}) + --sync-steps ({args.sync_steps})")

    torch.manual_seed(args.seed)
    gen = torch.Generator().manual_seed(args.seed)
    model = GPT(args.vocab, args.dim, args.layers, args.heads, args.seq).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.1)
    if args.compile != "none":
        model = torch.compile(model, mode=None if args.compile == "default" else args.compile)
    losses = []

    for step in range(warmup):
        train_step(model, opt, gen, args, device, losses, step)

    cuda = device.type == "cuda"
    if cuda:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
    t0 = time.perf_counter()
    for step in range(warmup, warmup + timed):
        train_step(model, opt, gen, args, device, losses, step)
    if cuda:
        end.record()
        end.synchronize()
        step_ms = start.elapsed_time(end) / timed
    else:
        step_ms = (time.perf_counter() - t0) * 1e3 / timed

    syncs_per_step = None
    if cuda:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            torch.cuda.set_sync_debug_mode("warn")
            for step in range(warmup + timed, args.steps):
                train_step(model, opt, gen, args, device, losses, step)
            torch.cuda.set_sync_debug_mode(0)
        n = sum(1 for w in caught if "synchroniz" in str(w.message).lower())
        syncs_per_step = n / args.sync_steps if args.sync_steps else None
    else:
        for step in range(warmup + timed, args.steps):
            train_step(model, opt, gen, args, device, losses, step)

    print(f"{'train_gpt':16} compile={args.compile} batch={args.batch} device={device}: "
          f"{step_ms:.2f} ms/step over {timed} steps, syncs/step {syncs_per_step}, "
          f"loss {losses[0]:.4f} -> {losses[-1]:.4f}")
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump({"script": "train_gpt", "compile": args.compile, "batch": args.batch,
                       "device": str(device), "steps": args.steps, "timed_steps": timed,
                       "step_ms": step_ms, "syncs_per_step": syncs_per_step,
                       "losses": losses}, f)


if __name__ == "__main__":
    main()
