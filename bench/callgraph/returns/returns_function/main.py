"""A function that returns a function, with the result called after binding it to a name and called at once (`f()(x)`)."""


def gelu(x):
    return 0.5 * x * (1 + x / (1 + abs(x)))


def relu(x):
    return max(0.0, x)


def default_activation():
    return gelu


def forward(x):
    act = default_activation()
    return act(x) + default_activation()(-x)


forward(0.5)
