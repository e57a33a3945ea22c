"""A lambda assigned to a local name makes its calls on behalf of the function it is written in."""


def clip(x, low=0.0, high=1.0):
    return min(high, max(low, x))


def scale(x):
    return x * 255


def invert(x):
    return 1.0 - x


def preprocess(pixels):
    transform = lambda p: scale(clip(p))
    return [transform(p) for p in pixels]


preprocess([0.2, 1.4, -0.1])
