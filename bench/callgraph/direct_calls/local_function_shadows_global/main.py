"""A nested function shadows a module function of the same name; each call site reaches only the one in its scope."""


def normalize(values):
    total = sum(values)
    return [value / total for value in values]


def preprocess(values):
    def normalize(values):
        low, high = min(values), max(values)
        return [(value - low) / (high - low) for value in values]

    return normalize(values)


def postprocess(scores):
    return normalize(scores)


preprocess([1.0, 2.0, 4.0])
postprocess([1.0, 3.0])
