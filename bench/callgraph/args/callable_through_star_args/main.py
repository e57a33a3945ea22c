"""A callable travels through *args: the retry helper calls its first argument, which calls the transform passed after it."""


def normalize(batch):
    return [x / 255.0 for x in batch]


def denormalize(batch):
    return [x * 255.0 for x in batch]


def apply_transform(transform, batch):
    return transform(batch)


def call_with_retry(fn, *args, attempts=3, **kwargs):
    for _ in range(attempts):
        try:
            return fn(*args, **kwargs)
        except OSError:
            continue
    raise RuntimeError("out of attempts")


def load_batch():
    return call_with_retry(apply_transform, normalize, [0, 128, 255])


load_batch()
