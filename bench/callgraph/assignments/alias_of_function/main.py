"""A function bound to a second name is called through that name."""


def relu(x):
    return max(0.0, x)


def gelu(x):
    return 0.5 * x * (1.0 + x / (1.0 + abs(x)))


activation = relu


def forward(xs):
    return [activation(x) for x in xs]


forward([-1.0, 2.0])
