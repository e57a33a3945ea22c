"""`from losses import cross_entropy as loss_fn` binds the alias to the imported function, while the local `cross_entropy` stays a different function."""
from losses import cross_entropy as loss_fn
from losses import mse


def cross_entropy(logits, target):
    return 0.5 * loss_fn(logits, target)


def train_step(logits, target):
    return loss_fn(logits, target) + mse(logits, target)


def smoothed_step(logits, target):
    return cross_entropy(logits, target)


train_step([0.2, 0.8], 1)
smoothed_step([0.2, 0.8], 1)
