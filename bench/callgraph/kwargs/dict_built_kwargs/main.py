"""Keyword arguments built with `dict(...)` and unpacked with `**` replace the defaults a layer would call."""


def gelu(x):
    return 0.5 * x * (1 + x / (1 + abs(x)))


def relu(x):
    return max(0.0, x)


def xavier_init(n):
    return [0.1] * n


def zeros_init(n):
    return [0.0] * n


class Dense:
    def __init__(self, size, activation=relu, init=zeros_init):
        self.weights = init(size)
        self.activation = activation

    def forward(self, inputs):
        return [self.activation(w * x) for w, x in zip(self.weights, inputs)]


config = dict(activation=gelu, init=xavier_init)
layer = Dense(3, **config)
layer.forward([1.0, -2.0, 3.0])
