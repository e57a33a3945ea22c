"""Language-model training: pinned batches copied each step, a loss over the non-pad tokens,
and per-step metrics summed on the host."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class TinyLM(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.mix = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
        self.head = nn.Linear(dim, vocab)

    def forward(self, tokens):
        h = self.embed(tokens)
        h = h + self.mix(h)
        return self.head(h)


def main(steps, device="cuda"):
    torch.manual_seed(0)
    vocab, pad = 1000, 0
    model = TinyLM(vocab, 128).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    batches = [torch.randint(0, vocab, (16, 129)).pin_memory() for _ in range(steps)]
    history = []
    total_loss = 0.0
    total_tokens = 0
    correct = 0
    for step in range(steps):
        batch = batches[step].to(device)
        inputs, targets = batch[:, :-1], batch[:, 1:]
        logits = model(inputs)
        real = targets != pad
        loss = F.cross_entropy(logits[real], targets[real])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        total_loss += loss.item()
        total_tokens += real.sum().item()
        correct += (logits.argmax(-1)[real] == targets[real]).sum().item()
        history.append(loss.detach())
    accuracy = correct / max(total_tokens, 1)
    print(f"language model: tokens {total_tokens} accuracy {accuracy:.3f} loss {total_loss / max(steps, 1):.3f}")
    return history, model
