"""A for loop and iter/next call the iterable's __iter__ and the iterator's __next__, but never the iterator's own __iter__."""


class _BatchIterator:
    def __init__(self, data, batch_size):
        self.data, self.batch_size, self.pos = data, batch_size, 0

    def __iter__(self):
        return self

    def __next__(self):
        if self.pos >= len(self.data):
            raise StopIteration
        batch = self.data[self.pos:self.pos + self.batch_size]
        self.pos += self.batch_size
        return batch


class DataLoader:
    def __init__(self, data, batch_size):
        self.data, self.batch_size = data, batch_size

    def __iter__(self):
        return _BatchIterator(self.data, self.batch_size)


def train(loader):
    first = next(iter(loader))
    seen = [len(batch) for batch in loader]
    return first, seen


train(DataLoader(list(range(5)), batch_size=2))
