"""A function returning a class decides which class its caller instantiates; both configurations run."""


class MLP:
    def __init__(self, dim):
        self.dim = dim

    def forward(self, x):
        return x * self.dim


class Transformer:
    def __init__(self, dim):
        self.dim = dim

    def forward(self, x):
        return x + self.dim


class RNN:
    def __init__(self, dim):
        self.dim = dim

    def forward(self, x):
        return x - self.dim


def model_class(config):
    if config.get("attention"):
        return Transformer
    return MLP


def build(config):
    cls = model_class(config)
    return cls(config["dim"])


for config in ({"dim": 4}, {"dim": 8, "attention": True}):
    build(config).forward(1.0)
