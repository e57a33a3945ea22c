"""Keyword overrides merged over a defaults dict with `{**DEFAULTS, **overrides}` decide which schedule each trainer calls."""
import math


def constant_schedule(step):
    return 1.0


def cosine_schedule(step):
    return 0.5 * (1 + math.cos(step))


def no_warmup(step):
    return 1.0


def linear_warmup(step):
    return min(1.0, step / 10)


DEFAULTS = dict(schedule=constant_schedule, warmup=no_warmup)


class Trainer:
    def __init__(self, schedule, warmup, lr=0.1):
        self.schedule = schedule
        self.warmup = warmup
        self.lr = lr

    def step(self, step):
        return self.lr * self.schedule(step) * self.warmup(step)


def make_trainer(**overrides):
    options = {**DEFAULTS, **overrides}
    return Trainer(**options)


for trainer in (make_trainer(), make_trainer(schedule=cosine_schedule, lr=0.3)):
    trainer.step(3)
