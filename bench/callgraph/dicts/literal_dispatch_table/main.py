"""Functions in a dict literal are called through a constant key and through a key held in a variable."""


def relu(x):
    return max(0.0, x)


def gelu(x):
    return 0.5 * x * (1.0 + x / (1.0 + abs(x)))


def tanh(x):
    return (2.718281828 ** (2 * x) - 1) / (2.718281828 ** (2 * x) + 1)


ACTIVATIONS = {"relu": relu, "gelu": gelu, "tanh": tanh}


def forward(x, name):
    hidden = ACTIVATIONS["relu"](x)
    return ACTIVATIONS[name](hidden)


forward(1.5, "gelu")
