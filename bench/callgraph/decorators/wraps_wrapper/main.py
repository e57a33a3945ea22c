"""A functools.wraps wrapper sits between the caller and the decorated function; an undecorated function is called directly."""

import functools

PRECISION = ["fp32"]


def autocast(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        PRECISION.append("bf16")
        try:
            return fn(*args, **kwargs)
        finally:
            PRECISION.pop()
    return wrapper


@autocast
def train_epoch(epoch):
    return f"epoch {epoch} in {PRECISION[-1]}"


def eval_epoch(epoch):
    return f"eval {epoch} in {PRECISION[-1]}"


def fit():
    return train_epoch(1), eval_epoch(1)


fit()
