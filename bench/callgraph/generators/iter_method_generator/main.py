"""A class whose `__iter__` is a generator is iterated by a `for` loop; the generator calls a method of its own class only."""


class ShardDataset:
    def __init__(self, paths):
        self.paths = paths

    def load(self, path):
        return path.split("/")[-1]

    def __iter__(self):
        for path in self.paths:
            yield self.load(path)


class CachedDataset:
    def load(self, path):
        return path

    def __iter__(self):
        yield from ()


def train(dataset):
    names = []
    for sample in dataset:
        names.append(sample)
    return names


train(ShardDataset(["data/a.bin", "data/b.bin"]))
