"""`functools.reduce` calls the merge function it is handed, on behalf of the function that handed it over."""

import functools


def merge(base, override):
    merged = dict(base)
    merged.update(override)
    return merged


def deep_merge(base, override):
    merged = dict(base)
    for key, value in override.items():
        merged[key] = deep_merge(base[key], value) if isinstance(value, dict) else value
    return merged


def resolve(configs):
    return functools.reduce(merge, configs, {})


resolve([{"lr": 0.1}, {"epochs": 3}, {"lr": 0.01}])
