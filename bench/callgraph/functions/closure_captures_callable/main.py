"""A closure made by `with_retries` calls the function it captured; a closure made around another function is never called."""


def load_shard(index):
    return [index] * 3


def save_shard(index):
    return index


def with_retries(fn, attempts):
    def call(*args):
        for attempt in range(attempts):
            try:
                return fn(*args)
            except OSError:
                if attempt == attempts - 1:
                    raise

    return call


safe_load = with_retries(load_shard, 3)
safe_save = with_retries(save_shard, 3)
safe_load(0)
