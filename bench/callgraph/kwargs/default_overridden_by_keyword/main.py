"""A function-valued default is called unless a keyword overrides it; a default that every call overrides is never called."""


def accuracy(preds, labels):
    return sum(p == t for p, t in zip(preds, labels)) / len(labels)


def f1_score(preds, labels):
    tp = sum(p and t for p, t in zip(preds, labels))
    return 2 * tp / (sum(preds) + sum(labels))


def recall(preds, labels):
    return 0.0


def evaluate(preds, labels, metric=accuracy):
    return metric(preds, labels)


def evaluate_strict(preds, labels, metric=accuracy):
    return metric(preds, labels) > 0.9


preds, labels = [1, 0, 1], [1, 1, 1]
evaluate(preds, labels)
evaluate(preds, labels, metric=f1_score)
evaluate_strict(preds, labels, metric=f1_score)
