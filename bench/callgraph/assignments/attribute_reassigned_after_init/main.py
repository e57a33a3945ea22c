"""An attribute set in __init__ is overwritten from outside before the method that calls it runs, so only the new callable is called."""


def relu(x):
    return max(0.0, x)


def silu(x):
    return x / (1.0 + 2.718281828 ** -x)


class MLP:
    def __init__(self, width):
        self.width = width
        self.act = relu

    def forward(self, x):
        return self.act(x * self.width)


def build_model():
    model = MLP(4)
    model.act = silu
    return model


build_model().forward(0.5)
