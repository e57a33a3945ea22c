"""Every metric function stored in a dict is called from a loop over .items(); a metric left out of the dict is not."""


def accuracy(preds, targets):
    return sum(p == t for p, t in zip(preds, targets)) / len(targets)


def error_rate(preds, targets):
    return 1 - accuracy(preds, targets)


def f1_score(preds, targets):
    return 0.0


METRICS = {"acc": accuracy, "err": error_rate}


def evaluate(preds, targets):
    results = {}
    for name, metric in METRICS.items():
        results[name] = metric(preds, targets)
    return results


evaluate([1, 0, 1], [1, 1, 1])
