"""A keyword bound by `functools.partial` in a factory overrides a keyword-only default, so the default loss is never called."""
import functools


def mse_loss(pred, target):
    return (pred - target) ** 2


def l1_loss(pred, target):
    return abs(pred - target)


def mean(values):
    return sum(values) / len(values)


def train_step(batch, *, loss_fn=mse_loss, reduce=mean):
    return reduce([loss_fn(p, t) for p, t in batch])


def make_step(**fixed):
    return functools.partial(train_step, **fixed)


def run(batches, step):
    return [step(batch) for batch in batches]


step = make_step(loss_fn=l1_loss)
run([[(1.0, 0.5), (2.0, 2.5)]], step)
