"""Lambdas handed to `sorted` and `max` as `key` call the scoring function on behalf of the function that wrote them."""


class Checkpoint:
    def __init__(self, step, val_loss):
        self.step = step
        self.val_loss = val_loss


def score(ckpt):
    return -ckpt.val_loss


def age(ckpt):
    return ckpt.step


def rank_checkpoints(ckpts):
    return sorted(ckpts, key=lambda c: score(c), reverse=True)


def latest(ckpts):
    return max(ckpts, key=lambda c: c.step)


ckpts = [Checkpoint(1, 0.9), Checkpoint(2, 0.4)]
rank_checkpoints(ckpts)
latest(ckpts)
