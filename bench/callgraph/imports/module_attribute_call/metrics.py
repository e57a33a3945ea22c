def accuracy(preds, labels):
    hits = sum(p == t for p, t in zip(preds, labels))
    return hits / len(labels)


def precision(preds, labels):
    return 0.0
