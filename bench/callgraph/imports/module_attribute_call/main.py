"""`import metrics` then `metrics.accuracy(...)` calls the module's function, not the local function of the same name."""
import metrics


def accuracy(preds, labels):
    return -1.0


def evaluate(preds, labels):
    return {"acc": metrics.accuracy(preds, labels)}


report = evaluate([1, 0, 1], [1, 1, 1])
