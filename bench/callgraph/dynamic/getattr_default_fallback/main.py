"""`getattr` with a default finds a layer's optional `reset_parameters` where it has one; a fallback runs where it has not."""


def default_init(layer):
    layer.weight = 0.0


class Linear:
    def reset_parameters(self):
        self.weight = 0.02


class Dropout:
    def __init__(self, p):
        self.p = p


class Conv:
    def reset_parameters(self):
        self.weight = 0.1


def initialize(layers):
    for layer in layers:
        init = getattr(layer, "reset_parameters", None)
        if init is not None:
            init()
        else:
            default_init(layer)


initialize([Linear(), Dropout(0.1)])
