"""Reading a property calls its getter and assigning to it calls its setter; a plain method of the same class is not called."""


class Optimizer:
    def __init__(self, lr):
        self._lr = lr
        self.params = [1.0, 2.0, 3.0]

    def _get_lr(self):
        return self._lr

    def _set_lr(self, value):
        self._lr = max(value, 0.0)

    lr = property(_get_lr, _set_lr)

    @property
    def num_params(self):
        return len(self.params)

    def state_dict(self):
        return {"lr": self._lr}


def adjust(optimizer):
    optimizer.lr = optimizer.lr * 0.5
    return optimizer.num_params


adjust(Optimizer(0.1))
