"""Stacked decorators: the outer wrapper calls the inner wrapper, which calls the function; the second call is served from the cache."""

import functools


def log_calls(fn):
    @functools.wraps(fn)
    def wrapper(*args):
        wrapper.calls += 1
        return fn(*args)
    wrapper.calls = 0
    return wrapper


def memoize(fn):
    cache = {}

    @functools.wraps(fn)
    def wrapper(*args):
        if args not in cache:
            cache[args] = fn(*args)
        return cache[args]
    return wrapper


@log_calls
@memoize
def tokenize_vocab(path):
    return path.split("/")


def main():
    tokenize_vocab("data/vocab.txt")
    tokenize_vocab("data/vocab.txt")


main()
