"""A lambda stored in an instance attribute, passed in or the constructor's fallback, is called by a method, but its calls belong to where it was written."""


def mse(pred, target):
    return (pred - target) ** 2


def huber(pred, target, delta=1.0):
    err = abs(pred - target)
    return 0.5 * err ** 2 if err < delta else delta * (err - 0.5 * delta)


def l1(pred, target):
    return abs(pred - target)


class Trainer:
    def __init__(self, loss_fn=None):
        self.loss_fn = loss_fn or (lambda p, t: mse(p, t))

    def step(self, pred, target):
        return self.loss_fn(pred, target)


def build_trainers():
    robust = Trainer(loss_fn=lambda p, t: huber(p, t, delta=0.5))
    return [Trainer(), robust]


for trainer in build_trainers():
    trainer.step(2.0, 0.5)
