"""Calls inside generator expressions belong to the function they are written in; a same-named method is never called."""


def squared_error(pred, target):
    return (pred - target) ** 2


def is_nan(value):
    return value != value


class Metric:
    def squared_error(self, pred, target):
        return abs(pred - target)


def evaluate(preds, targets):
    if any(is_nan(p) for p in preds):
        return None
    return sum(squared_error(p, t) for p, t in zip(preds, targets)) / len(preds)


evaluate([1.0, 2.0], [1.5, 2.5])
