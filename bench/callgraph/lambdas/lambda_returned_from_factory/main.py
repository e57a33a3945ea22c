"""Lambdas returned by a factory make their calls for the factory, not for the method that later calls them."""


def gelu(x):
    return 0.5 * x * (1 + x / (1 + abs(x)))


def relu(x):
    return max(0.0, x)


def swish(x):
    return x / (1 + 2.718281828 ** -x)


def make_activation(name):
    if name == "gelu":
        return lambda x: gelu(x)
    return lambda x: relu(x)


class Layer:
    def __init__(self, activation):
        self.act = make_activation(activation)

    def forward(self, x):
        return self.act(x)


for name in ("gelu", "relu"):
    Layer(name).forward(0.5)
