"""A list of `(name, function)` tuples unpacked in a for loop calls every function in it."""


def accuracy(preds, labels):
    return sum(p == t for p, t in zip(preds, labels)) / len(labels)


def error_rate(preds, labels):
    return 1.0 - accuracy(preds, labels)


def auc(preds, labels):
    return 0.5


METRICS = [("accuracy", accuracy), ("error", error_rate)]


def compute_metrics(preds, labels):
    results = {}
    for name, fn in METRICS:
        results[name] = fn(preds, labels)
    return results


compute_metrics([1, 0, 1], [1, 1, 1])
