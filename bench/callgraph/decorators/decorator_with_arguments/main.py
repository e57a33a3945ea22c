"""A decorator with arguments: the decorator factory and the decorator run at definition, the innermost wrapper runs at each call."""

import functools


def retry(times):
    def decorator(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            for attempt in range(times):
                try:
                    return fn(*args, **kwargs)
                except ConnectionError:
                    if attempt == times - 1:
                        raise
        return wrapper
    return decorator


@retry(times=3)
def download_shard(index):
    return f"shard-{index:05d}.tar"


def prepare_dataset():
    return [download_shard(i) for i in range(2)]


prepare_dataset()
