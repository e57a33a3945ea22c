"""Key functions passed to sorted, max and min are called by the function that passes them."""


def checkpoint_step(ckpt):
    return ckpt["step"]


def val_accuracy(ckpt):
    return ckpt["acc"]


def val_loss(ckpt):
    return ckpt["loss"]


def train_loss(ckpt):
    return ckpt["train_loss"]


def summarize(ckpts):
    ordered = sorted(ckpts, key=checkpoint_step)
    best = max(ckpts, key=val_accuracy)
    lowest = min(ckpts, key=val_loss)
    return ordered[-1], best, lowest


summarize([
    {"step": 2, "acc": 0.8, "loss": 0.4, "train_loss": 0.3},
    {"step": 1, "acc": 0.7, "loss": 0.5, "train_loss": 0.4},
])
