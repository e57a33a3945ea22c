"""super() calls reach the base class's __init__ and forward, not those of a sibling subclass."""


class Module:
    def __init__(self, name):
        self.name = name

    def forward(self, x):
        return x


class Dropout(Module):
    def __init__(self, p):
        super().__init__("dropout")
        self.p = p

    def forward(self, x):
        return super().forward(x) * (1 - self.p)


class LayerNorm(Module):
    def __init__(self, eps):
        super().__init__("layernorm")
        self.eps = eps

    def forward(self, x):
        return x / (abs(x) + self.eps)


def main():
    return Dropout(0.1).forward(2.0)


main()
