"""A walrus binds a module-level setting that is rebound at run time; when it is None a default is called instead."""


def default_collate(batch):
    return list(batch)


def pad_collate(batch):
    width = max(len(x) for x in batch)
    return [x + [0] * (width - len(x)) for x in batch]


def sort_collate(batch):
    return sorted(batch, key=len)


CUSTOM_COLLATE = None


def collate(batch):
    if (collate_fn := CUSTOM_COLLATE) is None:
        collate_fn = default_collate
    return collate_fn(batch)


def main():
    global CUSTOM_COLLATE
    collate([[1], [2, 3]])
    CUSTOM_COLLATE = pad_collate
    collate([[1], [2, 3]])


main()
