"""A callable popped from `**kwargs` with a fallback is the passed one when given and the fallback otherwise."""


def default_collate(batch):
    return list(batch)


def pad_collate(batch):
    width = max(len(b) for b in batch)
    return [b + [0] * (width - len(b)) for b in batch]


def sort_collate(batch):
    return sorted(batch)


class DataLoader:
    def __init__(self, dataset, **kwargs):
        self.dataset = dataset
        self.collate_fn = kwargs.pop("collate_fn", default_collate)
        self.batch_size = kwargs.pop("batch_size", 2)

    def __iter__(self):
        for start in range(0, len(self.dataset), self.batch_size):
            yield self.collate_fn(self.dataset[start:start + self.batch_size])


plain = list(DataLoader([3, 1, 2]))
padded = list(DataLoader([[1], [2, 3]], collate_fn=pad_collate, batch_size=2))
