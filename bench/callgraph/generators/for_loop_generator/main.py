"""A generator driven by a `for` loop runs its body, which calls a collate function; a second collate function is never used."""


def collate(samples):
    return {"x": [s[0] for s in samples], "y": [s[1] for s in samples]}


def pad_collate(samples):
    return collate(samples + [(0, 0)])


def iterate_batches(dataset, batch_size):
    for start in range(0, len(dataset), batch_size):
        yield collate(dataset[start:start + batch_size])


def train_step(batch):
    return sum(batch["x"])


def train(dataset):
    for batch in iterate_batches(dataset, 2):
        train_step(batch)


train([(1, 0), (2, 1), (3, 0)])
