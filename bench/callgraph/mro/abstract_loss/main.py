"""An abstract `compute` declared on an `ABC` base is reached through the base `__call__` in each concrete subclass used, along with any `reduce` override."""
from abc import ABC, abstractmethod


class Loss(ABC):
    def __call__(self, pred, target):
        return self.reduce(self.compute(pred, target))

    def reduce(self, values):
        return sum(values) / len(values)

    @abstractmethod
    def compute(self, pred, target):
        ...


class MSELoss(Loss):
    def compute(self, pred, target):
        return [(p - t) ** 2 for p, t in zip(pred, target)]


class L1Loss(Loss):
    def compute(self, pred, target):
        return [abs(p - t) for p, t in zip(pred, target)]

    def reduce(self, values):
        return sum(values)


class HuberLoss(Loss):
    def compute(self, pred, target):
        return [min(abs(p - t), 1.0) for p, t in zip(pred, target)]


for loss_fn in (MSELoss(), L1Loss()):
    loss_fn([1.0, 2.0], [0.0, 2.5])
