"""Layer classes listed in a tuple are instantiated in a comprehension, stored in an attribute list, extended with `+=`, and run by another method."""


class Conv:
    def __init__(self, width):
        self.width = width

    def forward(self, x):
        return x * self.width


class Norm:
    def __init__(self, width):
        self.width = width

    def forward(self, x):
        return x / self.width


class Head:
    def forward(self, x):
        return round(x, 2)


class Attention:
    def __init__(self, width):
        self.width = width

    def forward(self, x):
        return x + self.width


BLOCK = (Conv, Norm)


class Network:
    def __init__(self, widths):
        self.layers = [cls(w) for w in widths for cls in BLOCK]
        self.layers += [Head()]

    def forward(self, x):
        for layer in self.layers:
            x = layer.forward(x)
        return x


Network([2, 3]).forward(1.0)
