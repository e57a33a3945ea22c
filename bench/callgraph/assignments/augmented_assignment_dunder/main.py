"""Augmented assignment calls __iadd__ where the class has one and falls back to __add__ where it has none."""


class RunningMean:
    def __init__(self):
        self.total, self.count = 0.0, 0

    def __add__(self, value):
        out = RunningMean()
        out.total, out.count = self.total + value, self.count + 1
        return out

    def __iadd__(self, value):
        self.total += value
        self.count += 1
        return self


class Counter:
    def __init__(self, n=0):
        self.n = n

    def __add__(self, k):
        return Counter(self.n + k)


def accumulate(losses):
    mean = RunningMean()
    seen = Counter()
    for loss in losses:
        mean += loss
        seen += 1
    return mean.total / mean.count, seen.n


accumulate([0.5, 0.25])
