"""A `contextlib.contextmanager` generator runs its setup and teardown around the `with` body of the function that uses it."""

import contextlib


class Precision:
    current = "fp32"


def set_precision(name):
    previous = Precision.current
    Precision.current = name
    return previous


@contextlib.contextmanager
def autocast(dtype):
    previous = set_precision(dtype)
    try:
        yield
    finally:
        set_precision(previous)


def forward(x):
    return x * 0.5


def train_step(x):
    with autocast("bf16"):
        return forward(x)


train_step(4.0)
